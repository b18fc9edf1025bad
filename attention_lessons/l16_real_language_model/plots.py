"""The pictures of lesson 16, a real language model: a number per head of the 30 layers (the weight
on the first token, the induction score), the loss along a long text with a window and sinks, and
the loss on a repeat with heads ablated.

Each function takes the numbers it draws (computed with :mod:`attnlib.model.llama`) and writes the
figure's text alternative from them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
from matplotlib.figure import Figure

from attention_lessons.kit.plots.curves import running_mean_curves
from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.heatmaps import heatmap
from attention_lessons.kit.plots.palette import color
from attention_lessons.kit.plots.styles import RAW_HATCH, STYLES, figure, style_context
from attnlib.validation import as_positive_int, as_real, as_real_array

__all__ = ["ablation_figure", "layer_head_figure", "window_losses_figure"]


def layer_head_figure(
    values: npt.ArrayLike, *, title: str, what: str, reference: float | None = None, style: str = "light"
) -> Figure:
    """One number per head of every layer as a heatmap: heads down, layers across, 0 to 1.

    Parameters
    ----------
    values : (n_layers, n_heads), each in [0, 1]
        A score per head (the mean weight on the first token, an induction score).
    title : str
    what : str
        What a value is, for the colour bar and the text alternative ("mean weight on position 0").
    reference : float, optional
        A level to compare with (what a uniform spread would give), named in the text alternative.
    style : {"light", "dark"}
    """
    v = as_real_array(values, "values", dtype=np.float64)
    if v.ndim != 2 or v.size == 0 or v.min() < 0 or v.max() > 1:
        raise ValueError(f"values must be (n_layers, n_heads) numbers from 0 to 1, got shape {v.shape}")
    n_layers, n_heads = v.shape
    fig, axes = figure(1, 1, figsize=(10.0, 3.6), style=style)
    heatmap(
        axes[0, 0], v.T, [f"{h}" for h in range(n_heads)], [f"{layer}" for layer in range(n_layers)],
        title=title, vmin=0.0, vmax=1.0, xlabel="layer", ylabel="head", annotate=False,
    )  # fmt: skip
    layers, over = v.mean(axis=1), v > 0.5
    top = np.unravel_index(int(np.argmax(v)), v.shape)
    said = [
        f"A heatmap of the {what} of each of the {n_heads} heads (rows) in each of the {n_layers} "
        f"layers (columns), from 0 (dark) to 1 (light)",
        f"Its mean over all heads is {v.mean():.2f}"
        + (f", against {reference:.3f} for a uniform spread" if reference is not None else ""),
        f"The largest is head {top[1]} of layer {top[0]}, {v[top]:.2f}; {int(over.sum())} are above 0.5",
        "By layer, the mean over the heads: "
        + ", ".join(f"{layer} {m:.1f}" for layer, m in enumerate(layers)),
    ]
    # one decimal and counts: a float32 model's per-head numbers differ in their last digits between
    # CPUs, and 270 of them at two decimals would round differently somewhere
    table = Table(
        caption=f"The {what} by layer (1 decimal)",
        columns=("mean over the heads", "largest", "heads above 0.5"),
        rows=tuple(f"layer {layer}" for layer in range(n_layers)),
        cells=tuple(
            (f"{m:.1f}", f"{row.max():.1f}", f"{int(n)}")
            for m, row, n in zip(layers, v, over.sum(axis=1), strict=True)
        ),
        corner="layer",
    )
    describe(fig, join_sentences(said), [table])
    return fig


def window_losses_figure(
    curves: Mapping[str, npt.ArrayLike], *, window: int, smooth: int = 32, style: str = "light"
) -> Figure:
    """The loss of each prediction along a text, one curve per way of keeping the keys.

    Parameters
    ----------
    curves : dict of str to (m,) arrays
        Setting → the loss of the prediction at positions ``0 … m − 1`` (nats), all the same length.
        The first is the reference (the full cache), drawn dashed.
    window : int
        The window's length: a dotted line marks where the first token leaves it.
    smooth : int
        Positions per running mean.
    style : {"light", "dark"}
    """
    if not isinstance(curves, Mapping) or len(curves) < 2:
        raise ValueError("curves must be a dict of at least two settings: setting → loss at each position")
    arrays = {str(k): as_real_array(c, f"curves[{k!r}]", dtype=np.float64) for k, c in curves.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise ValueError(f"every curve must be 1-D and of the same length, got shapes {sorted(shapes)}")
    m = next(iter(arrays.values())).size
    w = as_positive_int(window, "window")
    k = as_positive_int(smooth, "smooth")
    if w >= m or k > m:
        raise ValueError(f"window ({w}) and smooth ({k}) must be shorter than the curves ({m} positions)")
    fig, axes = figure(1, 1, figsize=(9.0, 3.8), style=style)
    ax = axes[0, 0]
    note, reference = f"the first token leaves a window of {w}", next(iter(arrays))
    running_mean_curves(ax, arrays, reference=reference, smooth=k, mark=w - 0.5, note=note, style=style)
    with style_context(style):
        ax.set_xlabel("position in the text (tokens)")
        ax.set_ylabel(f"loss (nats), mean of {k} positions")
        ax.set_title("The loss at each position of a long text, by what the cache keeps")
        ax.legend(fontsize=8, loc="upper right")
    past = {name: v[w:] for name, v in arrays.items()}
    said = [
        f"The loss of the prediction at each of {m} positions, a running mean of {k}, for {len(arrays)} "
        f"settings; a dotted line marks position {w}, where the first token leaves the window",
        "Past it, the perplexity (e to the mean loss) is "
        + "; ".join(f"{name}: {np.exp(v.mean()):.1f}" for name, v in past.items()),
    ]
    table = Table(
        caption=f"Mean loss and perplexity at positions {w} to {m - 1}",
        columns=("mean loss (nats)", "perplexity"),
        rows=tuple(past),
        cells=tuple((f"{v.mean():.2f}", f"{np.exp(v.mean()):.1f}") for v in past.values()),
        corner="setting",
    )
    describe(fig, join_sentences(said), [table])
    return fig


def ablation_figure(losses: Mapping[str, float], *, first_half: float, style: str = "light") -> Figure:
    """The loss on the repeated half with some heads ablated, one bar per choice of heads.

    Parameters
    ----------
    losses : dict of str to float
        Which heads were ablated → the mean loss on the repeated half (nats). The first is the model
        with every head; a name starting with "top" is hatched.
    first_half : float
        The loss on the first half, which nothing predicts (a dotted line).
    style : {"light", "dark"}
    """
    if not isinstance(losses, Mapping) or not losses:
        raise ValueError("losses must be a non-empty dict: which heads were ablated → the loss on the repeat")
    values = {str(k): as_real(v, f"losses[{k!r}]") for k, v in losses.items()}
    first = as_real(first_half, "first_half")
    rc = STYLES[style]
    fig, axes = figure(1, 1, figsize=(7.5, 3.6), style=style)
    ax = axes[0, 0]
    with style_context(style):
        for index, (name, value) in enumerate(values.items()):
            top = name.startswith("top")
            ax.bar(index, value, color=color("reference"), hatch=RAW_HATCH if top else None,
                   edgecolor=str(rc["text.color"]))  # fmt: skip
            ax.text(index, value, f"{value:.1f}", ha="center", va="bottom", fontsize=9)
        ax.axhline(first, color=str(rc["text.color"]), linestyle=":", label=f"the first half ({first:.1f})")
        ax.set_xticks(range(len(values)), list(values), fontsize=8)
        ax.set_ylabel("loss on the repeat (nats)")
        ax.set_ylim(0, max(first, *values.values()) * 1.2)
        ax.set_title("The loss on the repeated half, with heads ablated")
        ax.legend(fontsize=8, loc="upper left")
    said = [
        f"Bars of the mean loss on the repeated half of random tokens for {len(values)} settings; the first "
        f"half, which nothing predicts, has {first:.1f} nats (a dotted line)",
        "; ".join(f"{name}: {value:.1f}" for name, value in values.items()),
    ]
    describe(fig, join_sentences(said))
    return fig
