"""Every head of every layer of a model on one sentence, as a grid of small heatmaps (lesson 13)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences, layer_head_table
from attention_lessons.kit.plots.styles import figure, style_context

__all__ = ["HeadsGrid", "heads_grid_description", "heads_grid_figure"]


@dataclass(frozen=True)
class HeadsGrid:
    """What :func:`heads_grid_figure` drew.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    axes : numpy.ndarray of Axes, shape (n_layers, n_heads)
    images : numpy.ndarray of AxesImage, shape (n_layers, n_heads)
        ``images[l, h].get_array()`` is head ``h`` of layer ``l``'s weights.
    """

    figure: Figure
    axes: np.ndarray
    images: np.ndarray


def heads_grid_figure(
    attentions: npt.ArrayLike, tokens: Sequence[str], *, style: str = "light", panel: float = 0.95
) -> HeadsGrid:
    """One small heatmap per head: layers down, heads across, all on the colour scale 0 … 1.

    Parameters
    ----------
    attentions : (n_layers, n_heads, n, n)
        Attention weights (rows: queries, columns: keys), each row summing to 1.
    tokens : sequence of str, length n
        Named in the title; the panels are too small for tick labels.
    style : {"light", "dark"}
    panel : float
        Width of one panel in inches.

    Returns
    -------
    HeadsGrid
    """
    weights = np.asarray(attentions, dtype=np.float64)
    if weights.ndim != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"attentions must have shape (n_layers, n_heads, n, n), got {weights.shape}")
    if not np.isfinite(weights).all() or weights.min() < 0 or weights.max() > 1:
        raise ValueError("attentions must be attention weights: finite numbers from 0 to 1")
    if isinstance(tokens, str) or len(tokens) != weights.shape[-1]:
        raise ValueError(f"tokens must name the {weights.shape[-1]} tokens, got {tokens!r}")
    n_layers, n_heads = weights.shape[:2]
    fig, axes = figure(
        n_layers, n_heads, figsize=(panel * n_heads + 1.2, panel * n_layers + 0.9), style=style, pad=0.02
    )
    images = np.empty((n_layers, n_heads), dtype=object)
    with style_context(style):
        for layer in range(n_layers):
            for head in range(n_heads):
                ax: Axes = axes[layer, head]
                images[layer, head] = ax.imshow(weights[layer, head], cmap="viridis", vmin=0.0, vmax=1.0)
                ax.set_xticks([])
                ax.set_yticks([])
                if layer == 0:
                    ax.set_title(f"head {head}", fontsize=9)
                if head == 0:
                    ax.set_ylabel(f"layer {layer}", fontsize=9)
        colorbar = fig.colorbar(images[0, 0], ax=axes, shrink=0.6, pad=0.01)
        colorbar.set_label("weight")
        fig.suptitle(
            f"Every head on: {' '.join(tokens)}  (rows: queries, columns: keys, in token order)", fontsize=10
        )
    text, table = heads_grid_description(weights, tokens)
    describe(fig, text, [table])
    return HeadsGrid(figure=fig, axes=axes, images=images)


def heads_grid_description(weights: np.ndarray, tokens: Sequence[str]) -> tuple[str, Table]:
    """The text alternative of :func:`heads_grid_figure` (weights (n_layers, n_heads, n, n)).

    How focused a head is: its queries' largest weight, averaged over the queries (1: each query
    looks at one key; 1/n: evenly spread). The table gives it for every head.
    """
    n_layers, n_heads, n = weights.shape[:3]
    focus = weights.max(axis=-1).mean(axis=-1)  # (n_layers, n_heads)
    most = np.unravel_index(np.argmax(focus), focus.shape)
    least = np.unravel_index(np.argmin(focus), focus.shape)
    text = join_sentences(
        [
            f"The attention weights of every head, {n_layers} layers × {n_heads} heads, on {n} tokens: "
            f"{' '.join(str(t) for t in tokens)}",
            f"Averaged over the queries, the largest weight of a query is {focus[most]:.2f} in the most "
            f"focused head (layer {most[0]}, head {most[1]}) and {focus[least]:.2f} in the most spread out "
            f"(layer {least[0]}, head {least[1]}); 1/n is {1 / n:.2f}",
            "Every head's value is in the table below the figure",
        ]
    )
    table = layer_head_table("Mean over the queries of each query's largest weight", focus)
    return text, table
