"""The pictures of lesson 14, induction heads: the phase change, every head's pattern on a repeated
sequence, what ablating each head costs, and how the two layers compose.

Each function takes the numbers it draws (computed by :mod:`attention_lessons.l14_induction_heads.induction`)
and writes the figure's text alternative from them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle

from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences, layer_head_table
from attention_lessons.kit.plots.heatmaps import heatmap
from attention_lessons.kit.plots.palette import color
from attention_lessons.kit.plots.styles import RAW_HATCH, STYLES, figure, style_context
from attention_lessons.l14_induction_heads import induction
from attnlib.validation import as_real_array

__all__ = [
    "ablation_figure",
    "composition_figure",
    "induction_patterns_figure",
    "patterns_figure",
    "phase_change_figure",
    "replay_figure",
    "token_circuit_figure",
]

Head = tuple[int, int]
#: How the two named heads are framed: by line style, in the text's colour (the palette has no
#: meaning for them; a label names each).
ROLE_MARKS = {"previous-token": "-", "induction": "--"}


def _curve(values: npt.ArrayLike, name: str, length: int) -> np.ndarray:
    array = as_real_array(values, name, dtype=np.float64)
    if array.shape != (length,):
        raise ValueError(f"{name} must have one value per step ({length}), got shape {array.shape}")
    return array


def phase_change_figure(
    steps: npt.ArrayLike,
    loss_first: npt.ArrayLike,
    loss_repeated: npt.ArrayLike,
    in_context: npt.ArrayLike,
    *,
    vocab_size: int,
    style: str = "light",
) -> Figure:
    """The loss on each half of the sequence and the in-context score, step by step.

    Parameters
    ----------
    steps : (m,) the training steps measured
    loss_first, loss_repeated : (m,) the mean loss on the first half and on the repeated half
    in_context : (m,) the in-context score (loss late in the sequence minus loss early)
    vocab_size : int
        ln(vocab_size), the loss of a uniform guess, is drawn as a line.
    style : {"light", "dark"}
    """
    x = np.asarray(steps)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"steps must be a 1-D list of at least 2 steps, got shape {x.shape}")
    first = _curve(loss_first, "loss_first", x.size)
    repeated = _curve(loss_repeated, "loss_repeated", x.size)
    score = _curve(in_context, "in_context", x.size)
    chance = float(np.log(vocab_size))
    fig, axes = figure(1, 2, figsize=(10.0, 3.6), style=style)
    ax_l, ax_s = axes[0]
    with style_context(style):
        ax_l.plot(
            x, first, color=color("reference"), linestyle="--", label="first half (cannot be predicted)"
        )
        ax_l.plot(x, repeated, color=str(STYLES[style]["text.color"]), label="repeated half")
        ax_l.axhline(
            chance, color=STYLES[style]["grid.color"], linestyle=":", label="ln(vocab): a uniform guess"
        )
        ax_l.set_title("Loss on each half of the sequence")
        ax_l.set_xlabel("training step")
        ax_l.set_ylabel("loss (nats)")
        ax_l.set_ylim(bottom=0)
        ax_l.legend(fontsize=8, loc="lower left")
        ax_s.plot(x, score, color=str(STYLES[style]["text.color"]))
        ax_s.axhline(0.0, color=STYLES[style]["grid.color"], linestyle=":")
        ax_s.set_title("In-context score (late loss − early loss)")
        ax_s.set_xlabel("training step")
        ax_s.set_ylabel("nats")
        for ax in (ax_l, ax_s):
            ax.grid(True, alpha=0.4)
    marks = np.linspace(0, x.size - 1, 5).round().astype(int)
    text = join_sentences(
        [
            f"Two panels over {x[0]} to {x[-1]} training steps. Left: the loss on the first half of the "
            f"sequence goes from {first[0]:.2f} to {first[-1]:.2f} nats, the loss on the repeated half from "
            f"{repeated[0]:.2f} to {repeated[-1]:.2f}; ln(vocab) is {chance:.2f}",
            "The repeated half's loss at steps " + ", ".join(f"{x[k]}: {repeated[k]:.2f}" for k in marks),
            f"Right: the in-context score goes from {score[0]:.2f} to {score[-1]:.2f} nats",
        ]
    )
    every = max(1, x.size // 20)
    table = Table(
        caption="Loss on each half and in-context score (every few steps)",
        columns=("loss, first half", "loss, repeated half", "in-context score"),
        rows=tuple(str(s) for s in x[::every]),
        cells=tuple(
            (f"{a:.3f}", f"{b:.3f}", f"{c:.3f}")
            for a, b, c in zip(first[::every], repeated[::every], score[::every], strict=True)
        ),
        corner="step",
    )
    describe(fig, text, [table])
    return fig


def _masked_triangle(ax: Axes, n: int, edge: str) -> None:
    """Hatch the future keys (above the diagonal): masked, not weights of 0."""
    corners = [(0.5, -0.5), (n - 0.5, -0.5), (n - 0.5, n - 1.5)]
    for i in range(n - 2, -1, -1):
        corners += [(i + 0.5, i + 0.5), (i + 0.5, i - 0.5)]
    ax.add_patch(
        Polygon(corners, closed=True, facecolor="none", edgecolor=edge, hatch=RAW_HATCH, linewidth=0)
    )


def _check_heads(marked: Mapping[str, Head], shape: tuple[int, int]) -> dict[str, Head]:
    heads = {}
    for role, head in marked.items():
        if role not in ROLE_MARKS:
            raise ValueError(f"marked roles must be among {sorted(ROLE_MARKS)}, got {role!r}")
        layer, h = (int(v) for v in head)
        if not (0 <= layer < shape[0] and 0 <= h < shape[1]):
            raise ValueError(f"marked head {head!r} is not in {shape[0]} layers of {shape[1]} heads")
        heads[role] = (layer, h)
    return heads


def induction_patterns_figure(
    weights: npt.ArrayLike,
    repeat_start: int,
    *,
    marked: Mapping[str, Head] | None = None,
    style: str = "light",
    panel: float = 2.1,
) -> Figure:
    """Every head's weights on one repeated sequence: layers down, heads across, future keys hatched.

    Parameters
    ----------
    weights : (n_layers, n_heads, n, n)
        Causal attention weights on the sequence.
    repeat_start : int
        The position where the repeat begins (dashed lines).
    marked : dict, optional
        ``{"previous-token": (layer, head), "induction": (layer, head)}``: framed and named.
    style : {"light", "dark"}
    panel : float
        Width of one panel in inches.
    """
    w = as_real_array(weights, "weights", dtype=np.float64)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must have shape (n_layers, n_heads, n, n), got {w.shape}")
    n_layers, n_heads, n = w.shape[:3]
    if not 0 < repeat_start < n:
        raise ValueError(f"repeat_start must be a position from 1 to {n - 1}, got {repeat_start!r}")
    heads = _check_heads(marked or {}, (n_layers, n_heads))
    names = {head: role for role, head in heads.items()}
    rc = STYLES[style]
    fig, axes = figure(
        n_layers, n_heads, figsize=(panel * n_heads + 1.0, panel * n_layers + 0.6), style=style, pad=0.04
    )
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    with style_context(style):
        for layer in range(n_layers):
            for head in range(n_heads):
                ax: Axes = axes[layer, head]
                image = ax.imshow(
                    np.ma.masked_array(w[layer, head], future), cmap="viridis", vmin=0.0, vmax=1.0
                )
                _masked_triangle(ax, n, str(rc["grid.color"]))
                for at in (repeat_start - 0.5,):
                    ax.axvline(at, color=str(rc["text.color"]), linestyle="--", linewidth=0.8)
                    ax.axhline(at, color=str(rc["text.color"]), linestyle="--", linewidth=0.8)
                ticks = list(range(0, n, max(1, n // 4)))
                ax.set_xticks(ticks)
                ax.set_yticks(ticks)
                ax.tick_params(labelsize=7)
                role = names.get((layer, head))
                label = f"layer {layer}, head {head}" + (f"\n{role} head" if role else "")
                ax.set_title(label, fontsize=9, fontweight="bold" if role else "normal")
                if role:
                    frame = Rectangle(
                        (-0.5, -0.5), n, n, fill=False, edgecolor=str(rc["text.color"]), linewidth=3,
                        linestyle=ROLE_MARKS[role],
                    )  # fmt: skip
                    ax.add_patch(frame)
                if layer == n_layers - 1:
                    ax.set_xlabel("key position", fontsize=8)
                if head == 0:
                    ax.set_ylabel("query position", fontsize=8)
        fig.colorbar(image, ax=axes, shrink=0.6, pad=0.01).set_label("weight")
    previous = np.array(
        [[np.diagonal(w[i, h], offset=-1).mean() for h in range(n_heads)] for i in range(n_layers)]
    )
    said = [
        f"The attention weights of {n_layers} layers × {n_heads} heads on a sequence of {n} tokens whose "
        f"repeat begins at position {repeat_start} (dashed lines); future keys are masked (hatched)"
    ]
    for role, (layer, head) in heads.items():
        said.append(f"The {role} head is head {head} of layer {layer}, framed")
    said.append("Each head's mean weight on the previous token is in the table")
    table = layer_head_table("Mean weight on the previous position (key i − 1 from query i)", previous)
    describe(fig, join_sentences(said), [table])
    return fig


def ablation_figure(
    losses: npt.ArrayLike,
    baseline: float,
    *,
    vocab_size: int,
    marked: Mapping[str, Head] | None = None,
    style: str = "light",
) -> Figure:
    """The loss on the repeated half with each head ablated (its output zeroed), one bar per head.

    Parameters
    ----------
    losses : (n_layers, n_heads)
        The loss on the repeated half with that one head ablated.
    baseline : float
        The loss with no head ablated (a line).
    vocab_size : int
        ln(vocab_size), the loss of a uniform guess (a dotted line).
    marked : dict, optional
        The named heads' roles, as in :func:`induction_patterns_figure`: their bars are hatched
        and labelled.
    style : {"light", "dark"}
    """
    loss = as_real_array(losses, "losses", dtype=np.float64)
    if loss.ndim != 2:
        raise ValueError(f"losses must have shape (n_layers, n_heads), got {loss.shape}")
    n_layers, n_heads = loss.shape
    heads = _check_heads(marked or {}, loss.shape)
    names = {head: role for role, head in heads.items()}
    chance = float(np.log(vocab_size))
    labels = [f"L{layer}H{head}" for layer in range(n_layers) for head in range(n_heads)]
    flat = loss.ravel()
    fig, axes = figure(1, 1, figsize=(7.0, 3.4), style=style)
    ax = axes[0, 0]
    rc = STYLES[style]
    with style_context(style):
        for k, value in enumerate(flat):
            role = names.get((k // n_heads, k % n_heads))
            ax.bar(
                k,
                value,
                color=color("reference"),
                hatch=RAW_HATCH if role else None,
                edgecolor=str(rc["text.color"]),
            )
            ax.text(
                k, value, f"{value:.2f}" + (f"\n{role}" if role else ""), ha="center", va="bottom", fontsize=8
            )
        ax.axhline(
            baseline, color=str(rc["text.color"]), linestyle="--", label=f"no head ablated ({baseline:.2f})"
        )
        ax.axhline(chance, color=str(rc["grid.color"]), linestyle=":", label=f"ln(vocab) ({chance:.2f})")
        ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel("head ablated (L = layer, H = head)")
        ax.set_ylabel("loss on the repeated half")
        ax.set_ylim(0, max(chance, flat.max()) * 1.25)
        ax.set_title("Zero one head's output: what the loss on the repeated half becomes")
        ax.legend(fontsize=8, loc="upper right")
    worst = np.unravel_index(np.argsort(loss, axis=None)[::-1], loss.shape)
    said = [
        f"Bars of the loss on the repeated half with one of {n_layers * n_heads} heads ablated; with none "
        f"ablated it is {baseline:.2f}, and ln(vocab) is {chance:.2f}",
        f"The largest losses come from ablating head {worst[1][0]} of layer {worst[0][0]} "
        f"({loss[worst[0][0], worst[1][0]]:.2f}) and head {worst[1][1]} of layer {worst[0][1]} "
        f"({loss[worst[0][1], worst[1][1]]:.2f})",
    ]
    table = layer_head_table("Loss on the repeated half with one head ablated", loss)
    describe(fig, join_sentences(said), [table])
    return fig


def composition_figure(scores: npt.ArrayLike, *, style: str = "light") -> Figure:
    """The K-composition score of every pair (layer-0 head, layer-1 head), as an annotated heatmap.

    Parameters
    ----------
    scores : (n_heads_layer_0, n_heads_layer_1)
        How much of each layer-1 head's keys is read from each layer-0 head's output.
    style : {"light", "dark"}
    """
    s = as_real_array(scores, "scores", dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"scores must have shape (heads of layer 0, heads of layer 1), got {s.shape}")
    fig, axes = figure(1, 1, figsize=(5.2, 4.0), style=style)
    heatmap(
        axes[0, 0],
        s,
        [f"layer 0, head {h}" for h in range(s.shape[0])],
        [f"L1 H{h}" for h in range(s.shape[1])],
        title="K-composition: layer-1 keys read from layer-0 heads",
        xlabel="layer-1 head (its keys)",
        ylabel="layer-0 head (its output)",
        cmap="cividis",
        vmin=0.0,
    )
    return fig


def _pattern_panel(
    ax: Axes, name: str, matrix: npt.ArrayLike, repeat_start: int, tokens: npt.ArrayLike, title: str, rc: dict
) -> tuple[object, str, tuple[str, str]]:
    """One head's causal weights on ``tokens``: the image, a sentence with its scores, a table row."""
    w = as_real_array(matrix, name, dtype=np.float64)
    n = w.shape[0]
    if w.shape != (n, n) or not 0 < repeat_start < n:
        raise ValueError(f"{name} must be (n, n) weights with 0 < repeat_start < n, got {w.shape}")
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    image = ax.imshow(np.ma.masked_array(w, future), cmap="viridis", vmin=0.0, vmax=1.0)
    _masked_triangle(ax, n, str(rc["grid.color"]))
    ax.axvline(repeat_start - 0.5, color=str(rc["text.color"]), linestyle="--", linewidth=0.8)
    ax.axhline(repeat_start - 0.5, color=str(rc["text.color"]), linestyle="--", linewidth=0.8)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    previous = float(induction.previous_token_scores(w[None, None])[0, 0])
    stripe = float(induction.induction_scores(w[None, None], tokens)[0, 0])
    sentence = f"{name}: previous-token score {previous:.2f}, induction score {stripe:.2f}"
    return image, sentence, (f"{previous:.3f}", f"{stripe:.3f}")


def patterns_figure(
    patterns: Mapping[str, np.ndarray],
    repeat_start: int,
    *,
    tokens: npt.ArrayLike,
    title: str,
    style: str = "light",
) -> Figure:
    """Heads' weights on one sequence side by side, such as one head intact and with another ablated.

    Parameters
    ----------
    patterns : dict of str to (n, n)
        A title per panel and its causal weights.
    repeat_start : int
        The position where the repeat begins (dashed lines).
    tokens : (n,) int
        The sequence the weights were computed on (for each panel's scores).
    title : str
        What the panels show, the text alternative's first sentence.
    style : {"light", "dark"}
    """
    if not patterns:
        raise ValueError("patterns must name at least one panel")
    rc = STYLES[style]
    fig, axes = figure(1, len(patterns), figsize=(0.6 + 3.4 * len(patterns), 3.6), style=style)
    said, scores = [title], []
    with style_context(style):
        for ax, (name, matrix) in zip(axes[0], patterns.items(), strict=True):
            image, sentence, row = _pattern_panel(ax, name, matrix, repeat_start, tokens, name, rc)
            said.append(sentence)
            scores.append(row)
        fig.colorbar(image, ax=axes[0], shrink=0.8, pad=0.02).set_label("weight")
    table = Table(
        caption="Each panel's scores on the sequence",
        columns=("previous-token score", "induction score"),
        rows=tuple(patterns),
        cells=tuple(scores),
        corner="panel",
    )
    describe(fig, join_sentences(said), [table])
    return fig


def replay_figure(
    steps: npt.ArrayLike,
    loss_first: npt.ArrayLike,
    loss_repeated: npt.ArrayLike,
    step: int,
    patterns: Mapping[str, np.ndarray],
    repeat_start: int,
    *,
    vocab_size: int,
    tokens: npt.ArrayLike,
    style: str = "light",
) -> Figure:
    """The training replay's picture at one step, drawn statically: the losses with the step marked,
    and one head of each layer on the probe (what :func:`attention_lessons.l14_induction_heads.widgets`
    shows).

    Parameters
    ----------
    steps, loss_first, loss_repeated : (m,)
        As :func:`phase_change_figure` takes them.
    step : int
        The step marked (one of ``steps``).
    patterns : dict of str to (n, n)
        A title per head (``"layer 0, head 1"``) and its causal weights at ``step``.
    repeat_start : int
        The position where the repeat begins (dashed lines).
    vocab_size : int
    tokens : (n,) int
        The probe the weights were computed on; each head's previous-token and induction scores
        (:mod:`attention_lessons.l14_induction_heads.induction`) are computed on it.
    style : {"light", "dark"}
    """
    x = np.asarray(steps)
    first = _curve(loss_first, "loss_first", x.size)
    repeated = _curve(loss_repeated, "loss_repeated", x.size)
    where = np.flatnonzero(x == step)
    if where.size == 0:
        raise ValueError(f"step must be one of the steps measured, got {step!r}")
    k = int(where[0])
    chance = float(np.log(vocab_size))
    rc = STYLES[style]
    fig, axes = figure(1, 1 + len(patterns), figsize=(4.6 + 3.4 * len(patterns), 3.6), style=style)
    ax_l = axes[0, 0]
    with style_context(style):
        ax_l.plot(x, first, color=color("reference"), linestyle="--", label="first half")
        ax_l.plot(x, repeated, color=str(rc["text.color"]), label="repeated half")
        ax_l.axhline(chance, color=str(rc["grid.color"]), linestyle=":", label="ln(vocab)")
        ax_l.axvline(step, color=str(rc["text.color"]), linewidth=1.2)
        ax_l.plot([step], [first[k]], "s", color=color("reference"), markeredgecolor=str(rc["text.color"]))
        ax_l.plot([step], [repeated[k]], "o", color=str(rc["text.color"]))
        ax_l.set_title(f"Loss on each half, step {step}")
        ax_l.set_xlabel("training step")
        ax_l.set_ylabel("loss (nats)")
        ax_l.set_ylim(bottom=0)
        ax_l.grid(True, alpha=0.4)
        ax_l.legend(fontsize=8, loc="lower left")
        scores: list[tuple[str, str]] = []
        said = [
            f"Left: the losses over training with step {step} marked: first half {first[k]:.2f}, "
            f"repeated half {repeated[k]:.2f} nats"
        ]
        for ax, (name, matrix) in zip(axes[0, 1:], patterns.items(), strict=True):
            title = f"{name}, step {step}"
            image, sentence, row = _pattern_panel(ax, name, matrix, repeat_start, tokens, title, rc)
            said.append(sentence)
            scores.append(row)
        fig.colorbar(image, ax=axes[0, 1:], shrink=0.8, pad=0.02).set_label("weight")
    table = Table(
        caption=f"Each head's scores on the probe at step {step}",
        columns=("previous-token score", "induction score"),
        rows=tuple(patterns),
        cells=tuple(scores),
        corner="head",
    )
    describe(fig, join_sentences(said), [table])
    return fig


def token_circuit_figure(matrix: npt.ArrayLike, *, style: str = "light") -> Figure:
    """A head pair's K-composition in token space
    (:func:`attention_lessons.l14_induction_heads.induction.token_k_circuit`).

    Parameters
    ----------
    matrix : (vocab, vocab)
        ``[query token, token copied into the key]``.
    style : {"light", "dark"}
    """
    m = as_real_array(matrix, "matrix", dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix must be square (query token, copied token), got shape {m.shape}")
    v = m.shape[0]
    fig, axes = figure(1, 1, figsize=(6.4, 5.4), style=style)
    heatmap(
        axes[0, 0],
        m,
        [str(t) for t in range(v)],
        [str(t) for t in range(v)],
        title="Query token × token copied into the key",
        xlabel="token the previous-token head copied (the key's previous token)",
        ylabel="query token",
        cmap="cividis",
        annotate=False,
    )
    on_diagonal = int((m.argmax(axis=1) == np.arange(v)).sum())
    diagonal, off = np.diagonal(m), m[~np.eye(v, dtype=bool)]
    text = join_sentences(
        [
            f"A {v} by {v} heatmap of the score a query token gives a key whose previous token was "
            "copied there",
            f"{on_diagonal} of the {v} rows have their largest entry on the diagonal",
            f"Diagonal entries average {diagonal.mean():.2f}, the others {off.mean():.2f}",
        ]
    )
    table = Table(
        caption="Each query token's largest entry",
        columns=("copied token with the largest entry", "its value", "diagonal value"),
        rows=tuple(str(t) for t in range(v)),
        cells=tuple((str(int(m[t].argmax())), f"{m[t].max():.2f}", f"{m[t, t]:.2f}") for t in range(v)),
        corner="query token",
    )
    describe(fig, text, [table])
    return fig
