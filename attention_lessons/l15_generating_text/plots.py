"""The pictures of lesson 15, generating text: which scores a new token computes, how the KV cache
grows against the weights, and what a change to the cache (fewer key/value heads, a window, sinks)
costs in loss.

Each function takes the numbers it draws (computed by :mod:`attnlib.core`, :mod:`attnlib.counting`
and :mod:`attnlib.decoder`) and writes the figure's text alternative from them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attention_lessons.kit.plots.curves import running_mean_curves
from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.palette import color, ordered
from attention_lessons.kit.plots.styles import RAW_HATCH, STYLES, figure, style_context
from attnlib.validation import as_positive_int, as_real, as_real_array

__all__ = [
    "cache_growth_figure",
    "loss_bars_figure",
    "position_losses_figure",
    "score_rows_figure",
    "size_text",
    "step_weights_figure",
]

_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB")


def size_text(n_bytes: float) -> str:
    """A size in bytes with a binary unit, 3 significant digits: ``size_text(3 * 2**20) == '3 MiB'``.

    >>> size_text(512), size_text(131_072), size_text(13.5e9)
    ('512 bytes', '128 KiB', '12.6 GiB')
    """
    value = float(n_bytes)
    unit = 0
    while abs(value) >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    digits = f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{digits} {_UNITS[unit]}"


def _square_mask(mask: npt.ArrayLike) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype != bool or m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError(
            f"mask must be a square boolean (n, n) matrix with n ≥ 2 (True = may attend), "
            f"got {m.dtype} of shape {m.shape}"
        )
    if not m[-1].any():
        raise ValueError("mask's last row (the new token) must let it attend to at least one key")
    return m


def _draw_rows(ax: Axes, m: np.ndarray, computed: np.ndarray, title: str, style: str) -> None:
    """Every cell of the score matrix: computed now (filled), left alone (empty), masked (hatched)."""
    n = m.shape[0]
    rc = STYLES[style]
    for i in range(n):
        for j in range(n):
            if not m[i, j]:
                face, hatch = "none", RAW_HATCH
            elif computed[i, j]:
                face, hatch = color("scaled score"), None
            else:
                face, hatch = "none", None
            ax.add_patch(
                Rectangle(
                    (j - 0.5, i - 0.5), 1, 1, facecolor=face, hatch=hatch,
                    edgecolor=str(rc["grid.color"] if face == "none" else rc["axes.facecolor"]), linewidth=1,
                )
            )  # fmt: skip
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_aspect("equal")
    ticks = list(range(0, n, max(1, n // 6)))
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xlabel("key (a cached token)")
    ax.set_ylabel("query (a token)")
    ax.set_title(title, fontsize=10)
    ax.annotate(
        "new token", (n - 0.5, n - 1), xytext=(6, 0), textcoords="offset points", va="center", fontsize=9,
        annotation_clip=False,
    )  # fmt: skip


def score_rows_figure(mask: npt.ArrayLike, *, style: str = "light") -> Figure:
    """The scores the newest token's step computes, without a KV cache and with one.

    The last row of ``mask`` is the new token. Without a cache the step reruns the model on every
    token: it multiplies the whole ``n × n`` matrix of scores again, ``n²`` products, and the mask
    then hides those it does not allow (as ``attnlib.counting`` counts them, and as the decoder
    computes them); a kernel that skipped the hidden ones would still compute every allowed score.
    With a cache the earlier tokens' keys and values are kept, and the step computes the new
    token's row alone, against the keys the cache holds. Cells this step uses are filled, cells it
    does not compute are empty, and cells the mask hides are hatched.

    Parameters
    ----------
    mask : (n, n) bool
        ``True`` = this query may attend to this key (``attnlib.core.causal_mask``, with or
        without a window and sinks).
    style : {"light", "dark"}
    """
    m = _square_mask(mask)
    n = m.shape[0]
    last = np.zeros_like(m)
    last[-1] = m[-1]
    fig, axes = figure(1, 2, figsize=(9.0, 4.4), style=style)
    products, kept, with_cache = n * n, int(m.sum()), int(m[-1].sum())
    with style_context(style):
        _draw_rows(axes[0, 0], m, m, f"Without a cache: {products} scores ({kept} kept)", style)
        _draw_rows(axes[0, 1], m, last, f"With a cache: {with_cache} scores", style)
    seen = np.flatnonzero(m[-1])
    text = join_sentences(
        [
            f"Two {n} by {n} score grids for the step that adds token {n - 1} (the last row); filled cells "
            "are the scores this step uses, hatched cells are hidden by the mask",
            f"Without a cache the step computes the whole {n} by {n} matrix again, {products} scores, "
            f"and the mask keeps {kept} of them",
            f"With a cache it computes the new token's row only, {with_cache} scores, for keys "
            + ", ".join(str(k) for k in seen),
        ]
    )
    table = Table(
        caption="The scores one generation step computes",
        columns=("scores computed", "scores the mask keeps", "rows computed"),
        rows=("without a cache", "with a cache"),
        cells=((str(products), str(kept), str(n)), (str(with_cache), str(with_cache), "1")),
        corner="",
    )
    describe(fig, text, [table])
    return fig


def _configs(configs: Mapping[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    if not isinstance(configs, Mapping) or not configs:
        raise ValueError("configs must be a non-empty dict: name → (cache bytes per token, weight bytes)")
    checked = {}
    for name, pair in configs.items():
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"configs[{name!r}] must be (cache bytes per token, weight bytes), got {pair!r}")
        per_token = as_real(pair[0], f"configs[{name!r}] cache bytes per token")
        weights = as_real(pair[1], f"configs[{name!r}] weight bytes")
        if per_token <= 0 or weights <= 0:
            raise ValueError(f"configs[{name!r}]: both sizes must be positive, got {pair!r}")
        checked[str(name)] = (per_token, weights)
    return checked


def cache_growth_figure(
    configs: Mapping[str, tuple[float, float]],
    *,
    max_tokens: int,
    windows: Mapping[str, int] | None = None,
    style: str = "light",
) -> Figure:
    """The KV cache's bytes against the tokens of context, beside each model's weights, on log axes.

    Each configuration's cache is a solid line (it grows by the same bytes per token, and stops
    growing at its sliding window if it has one), its weights a dashed line of the same colour. The
    line's own marker, drawn at its end, shows where the cache outgrows the weights: the first
    whole number of tokens whose cache takes more bytes than the weights.

    Parameters
    ----------
    configs : dict of str to (float, float)
        Name → (cache bytes per token, weight bytes), in the order to draw them.
    max_tokens : int
        The longest context drawn (from 1 token).
    windows : dict of str to int, optional
        Name → the most tokens that model's cache keeps (a sliding window); the others keep all.
    style : {"light", "dark"}
    """
    checked = _configs(configs)
    top = as_positive_int(max_tokens, "max_tokens", minimum=2)
    kept = {str(k): as_positive_int(v, f"windows[{k!r}]") for k, v in (windows or {}).items()}
    unknown = set(kept) - set(checked)
    if unknown:
        raise ValueError(f"windows name models that are not in configs: {sorted(unknown)}")
    tokens = np.unique(np.geomspace(1, top, 200).round())
    fig, axes = figure(1, 1, figsize=(8.0, 4.4), style=style)
    ax = axes[0, 0]
    markers = ("o", "s", "D", "^", "v", "P", "X", "*")
    said, rows = [], []
    with style_context(style):
        for (name, (per_token, weights)), colour, marker in zip(
            checked.items(), ordered(len(checked)), markers * len(checked), strict=False
        ):
            most = kept.get(name, top)
            label = f"{name}: cache" + (f" (window {most})" if name in kept else "")
            ax.loglog(
                tokens, np.minimum(tokens, most) * per_token, color=colour, label=label,
                marker=marker, markevery=[len(tokens) - 1],
            )  # fmt: skip
            ax.axhline(weights, color=colour, linestyle="--", linewidth=1)
            crossing = int(weights // per_token) + 1  # the first whole token count past the weights
            if crossing <= min(top, most):
                ax.plot(crossing, weights, marker=marker, color=colour, markersize=8, linestyle="none")
                where = f"outgrows its weights ({size_text(weights)}) at {crossing} tokens"
                at = str(crossing)
            elif name in kept:
                where = (
                    f"stays under its weights ({size_text(weights)}): its window keeps at most {most} tokens"
                )
                at = f"never (window of {most})"
            else:
                where = f"stays under its weights ({size_text(weights)}) up to {top} tokens"
                at = str(crossing)
            said.append(f"{name}: {size_text(per_token)} per token, {where}")
            rows.append((name, (size_text(per_token), size_text(weights), at)))
        ax.set_xlabel("tokens of context (one sequence)")
        ax.set_ylabel("bytes (log scale)")
        ax.set_title("The KV cache grows with every token; dashed: the weights")
        ax.grid(True, which="major", alpha=0.4)
        ax.legend(fontsize=8, loc="upper left")
    text = join_sentences(
        [
            f"The KV cache's size against the tokens of context, from 1 to {top}, for {len(checked)} models",
            *said,
        ]
    )
    table = Table(
        caption="Cache per token, weights, and the context where the cache outgrows the weights",
        columns=("cache per token", "weights", "cache > weights from (tokens)"),
        rows=tuple(name for name, _ in rows),
        cells=tuple(cells for _, cells in rows),
        corner="model",
    )
    describe(fig, text, [table])
    return fig


def loss_bars_figure(
    losses: Mapping[str, float],
    *,
    title: str,
    reference: str | None = None,
    notes: Mapping[str, str] | None = None,
    style: str = "light",
) -> Figure:
    """One horizontal bar per setting of the model, its loss on held-out text written beside it.

    Parameters
    ----------
    losses : dict of str to float
        Setting → mean loss (nats per token), drawn top to bottom in this order.
    title : str
    reference : str, optional
        The setting the others are compared with (a dashed line at its loss).
    notes : dict of str to str, optional
        A note written after a setting's loss (what it saves, for instance).
    style : {"light", "dark"}
    """
    if not isinstance(losses, Mapping) or not losses:
        raise ValueError("losses must be a non-empty dict: setting → loss")
    values = {str(k): as_real(v, f"losses[{k!r}]") for k, v in losses.items()}
    if reference is not None and reference not in values:
        raise ValueError(f"reference must be one of the settings {list(values)}, got {reference!r}")
    notes = dict(notes or {})
    unknown = set(notes) - set(values)
    if unknown:
        raise ValueError(f"notes name settings that have no loss: {sorted(unknown)}")
    names = list(values)
    rc = STYLES[style]
    fig, axes = figure(1, 1, figsize=(8.0, 0.55 * len(names) + 1.4), style=style)
    ax = axes[0, 0]
    with style_context(style):
        y = np.arange(len(names))
        ax.barh(y, [values[k] for k in names], 0.6, color=color("reference"), edgecolor=str(rc["text.color"]))
        for k, name in enumerate(names):
            note = f"   {notes[name]}" if name in notes else ""
            ax.text(values[name], k, f" {values[name]:.3f}{note}", va="center", fontsize=9)
        if reference is not None:
            ax.axvline(values[reference], color=str(rc["text.color"]), linestyle="--", linewidth=1)
        ax.set_yticks(y, names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(0, max(values.values()) * (2.0 if notes else 1.3))
        ax.set_xlabel("loss on held-out text (nats per character)")
        ax.set_title(title, fontsize=10)
    said = [f"{name}: {values[name]:.3f}" + (f" ({notes[name]})" if name in notes else "") for name in names]
    text = join_sentences([f"{title}. Bars of the loss on held-out text", "; ".join(said)])
    table = Table(
        caption=title,
        columns=("loss (nats)", "note"),
        rows=tuple(names),
        cells=tuple((f"{values[name]:.3f}", notes.get(name, "")) for name in names),
        corner="setting",
    )
    describe(fig, text, [table])
    return fig


def position_losses_figure(
    curves: Mapping[str, npt.ArrayLike],
    *,
    n_ctx: int,
    reference: str | None = None,
    smooth: int = 16,
    style: str = "light",
) -> Figure:
    """The loss of the prediction at each position of a text longer than the trained context.

    Position ``i`` predicts token ``i + 1`` from the ``i + 1`` tokens up to it, so a model trained
    on sequences of ``n_ctx`` tokens made its predictions at positions ``0 … n_ctx − 2``: a dotted
    line marks the end of those, and the text gives each curve's mean within and past it. Each
    curve is drawn as the running mean of ``smooth`` positions (the loss of one character is noisy).

    Parameters
    ----------
    curves : dict of str to (m,) arrays
        Setting → the loss of the prediction made at positions ``0 … m − 1``, all the same length.
    n_ctx : int
        The context the model was trained on (``2 ≤ n_ctx ≤ m``).
    reference : str, optional
        The setting the others are compared with: drawn dashed in the reference colour.
    smooth : int
        Positions per running mean (1: none).
    style : {"light", "dark"}
    """
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError("curves must be a non-empty dict: setting → loss at each position")
    arrays = {str(k): as_real_array(v, f"curves[{k!r}]", dtype=np.float64) for k, v in curves.items()}
    lengths = {a.shape for a in arrays.values()}
    if len(lengths) != 1 or next(iter(lengths)) == () or len(next(iter(lengths))) != 1:
        raise ValueError(f"every curve must be 1-D and of the same length, got shapes {sorted(lengths)}")
    m = next(iter(arrays.values())).size
    ctx = as_positive_int(n_ctx, "n_ctx", minimum=2)
    if ctx > m:
        raise ValueError(f"n_ctx must be at most the curves' length {m} (the text runs past it), got {ctx}")
    trained = ctx - 1  # the predictions a sequence of n_ctx tokens makes
    if reference is not None and reference not in arrays:
        raise ValueError(f"reference must be one of the settings {list(arrays)}, got {reference!r}")
    k = as_positive_int(smooth, "smooth")
    if k > trained:
        raise ValueError(f"smooth must be at most n_ctx − 1 = {trained}, got {k}")
    fig, axes = figure(1, 1, figsize=(9.0, 3.8), style=style)
    ax = axes[0, 0]
    note = f"trained context: {ctx}"
    running_mean_curves(ax, arrays, reference=reference, smooth=k, mark=trained - 0.5, note=note, style=style)
    with style_context(style):
        ax.set_xlabel("position in the text (characters)")
        ax.set_ylabel(f"loss (nats), mean of {k} positions" if k > 1 else "loss (nats)")
        ax.set_title("The loss at each position, past the trained context")
        ax.legend(fontsize=8, loc="upper left")
    said = [
        f"{name}: {v[:trained].mean():.3f} within the trained context, {v[trained:].mean():.3f} past it"
        for name, v in arrays.items()
    ]
    text = join_sentences(
        [
            f"The loss of the prediction at each of {m} positions, a running mean of {k}, for "
            f"{len(arrays)} settings; a dotted line marks the end of the trained context of {ctx} tokens",
            "Mean loss " + "; ".join(said),
        ]
    )
    table = Table(
        caption="Mean loss within the trained context and past it",
        columns=(f"within (positions 0 to {trained - 1})", f"past it (positions {trained} to {m - 1})"),
        rows=tuple(arrays),
        cells=tuple((f"{v[:trained].mean():.3f}", f"{v[trained:].mean():.3f}") for v in arrays.values()),
        corner="setting",
    )
    describe(fig, text, [table])
    return fig


#: How a character is written under a column: a space, a newline and a tab made visible.
_SHOWN = {" ": "␣", "\n": "↵", "\t": "⇥"}


def step_weights_figure(
    weights: npt.ArrayLike,
    key_positions: npt.ArrayLike,
    text: str,
    *,
    sinks: int = 0,
    style: str = "light",
) -> Figure:
    """Every head's weights of one new query over the keys its cache holds, one row per head.

    Parameters
    ----------
    weights : (n_layers, n_heads, L_k)
        The new query's attention weights over the cached keys (each row sums to 1).
    key_positions : (L_k,) int
        Where each cached key sits in the text, increasing; the last is the query's own position.
    text : str
        The text so far, one character per position (the characters under the columns).
    sinks : int
        How many of the first positions are attention sinks (labelled under their columns).
    style : {"light", "dark"}
    """
    w = as_real_array(weights, "weights", dtype=np.float64)
    if w.ndim != 3 or w.shape[-1] < 1:
        raise ValueError(f"weights must have shape (n_layers, n_heads, L_k), got {w.shape}")
    keys = np.asarray(key_positions)
    if keys.shape != (w.shape[-1],) or keys.dtype.kind not in "iu" or np.any(np.diff(keys) <= 0):
        raise ValueError(
            f"key_positions must be {w.shape[-1]} increasing whole numbers, one per key, got {keys!r}"
        )
    if not isinstance(text, str) or keys[0] < 0 or keys[-1] >= len(text):
        raise ValueError(f"text must be a str holding every key position (0 … {keys[-1]}), got {text!r}")
    n_sinks = as_positive_int(sinks, "sinks", minimum=0)
    n_layers, n_heads, n_keys = w.shape
    rows = w.reshape(n_layers * n_heads, n_keys)
    labels = [f"layer {layer}, head {head}" for layer in range(n_layers) for head in range(n_heads)]
    fig, axes = figure(1, 1, figsize=(min(2.0 + 0.22 * n_keys, 12.0), 0.32 * len(labels) + 1.8), style=style)
    ax = axes[0, 0]
    query = int(keys[-1])
    with style_context(style):
        image = ax.imshow(rows, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ticks = [
            f"{_SHOWN.get(text[p], text[p])}\n{p}" + ("\nsink" if p < n_sinks else "") for p in keys.tolist()
        ]
        ax.set_xticks(range(n_keys), ticks, fontsize=7)
        ax.set_xlabel("cached key: its character and position")
        ax.set_title(f"The new query at position {query}: its weights over the {n_keys} keys in the cache")
        fig.colorbar(image, ax=ax, label="weight", fraction=0.03)
    heaviest = rows.argmax(axis=1)
    said = [
        f"{label}: most on position {int(keys[k])} ({rows[i, k]:.2f})"
        for i, (label, k) in enumerate(zip(labels, heaviest, strict=True))
    ]
    first = rows[:, 0].mean()
    text_alt = join_sentences(
        [
            f"A heatmap of {len(labels)} heads' weights of the query at position {query} over the {n_keys} "
            f"cached keys at positions {int(keys[0])} to {query}"
            + (f", the first {n_sinks} kept as sinks" if n_sinks else ""),
            f"The mean weight on position {int(keys[0])}, the first key in the cache, is {first:.2f}",
            "; ".join(said),
        ]
    )
    table = Table(
        caption=f"Weights of the query at position {query} (2 decimals)",
        columns=tuple(f"{int(p)} {_SHOWN.get(text[int(p)], text[int(p)])}" for p in keys),
        rows=tuple(labels),
        cells=tuple(tuple(f"{v:.2f}" for v in row) for row in rows),
        corner="head \\ key",
    )
    describe(fig, text_alt, [table])
    return fig
