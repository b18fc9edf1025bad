"""Two attention heads in 2D, their concatenation and ``W_o`` (lesson 09); the static twin of
:func:`attention_lessons.l09_many_heads.widgets.multi_head_explorer`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from matplotlib.figure import Figure

from attention_lessons.kit.plots.arrows import vectors
from attention_lessons.kit.plots.descriptions import describe, join_sentences
from attention_lessons.kit.plots.heatmaps import Heatmap, heatmap
from attention_lessons.kit.plots.limits import square_limits
from attention_lessons.kit.plots.panel_text import largest_per_row, listed_points
from attention_lessons.kit.plots.styles import figure
from attnlib.multihead import multi_head_attention
from attnlib.validation import as_real_array

__all__ = ["TwoHeadsFigure", "two_heads_description", "two_heads_figure"]

#: The columns of the concatenation of two heads with 2D values.
CONCAT_COLUMNS = ("h1 x", "h1 y", "h2 x", "h2 y")


@dataclass(frozen=True)
class TwoHeadsFigure:
    """What :func:`two_heads_figure` drew, and the numbers it drew (computed with attnlib).

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    weight_maps : tuple of Heatmap
        Head 1's and head 2's weights.
    concat_map, w_o_map : Heatmap
    weights : (2, n, n)
    concat : (n, 4)
    output : (n, 2)
    """

    figure: Figure
    weight_maps: tuple[Heatmap, Heatmap]
    concat_map: Heatmap
    w_o_map: Heatmap
    weights: np.ndarray
    concat: np.ndarray
    output: np.ndarray


def two_heads_description(tokens: Sequence[str], weights: np.ndarray, output: np.ndarray) -> str:
    """The text alternative of :func:`two_heads_figure`: weights (2, n, n) and output (n, 2)."""
    names = [str(t) for t in tokens]
    return join_sentences(
        [
            f"Self-attention with two heads over {len(names)} tokens ({', '.join(names)}) in eight panels: "
            "the embeddings, each head's weights and output, the output concat · W_o, and the matrices "
            "concat and W_o",
            *(
                f"Largest weight of each query in head {h + 1}: {largest_per_row(weights[h], names, names)}"
                for h in range(2)
            ),
            f"Outputs: {listed_points(names, output)}",
        ]
    )


def two_heads_figure(
    tokens: Sequence[str],
    embeddings: npt.ArrayLike,
    *,
    W_q: npt.ArrayLike,
    W_k: npt.ArrayLike,
    W_v: npt.ArrayLike,
    W_o: npt.ArrayLike,
    style: str = "light",
    figsize: tuple[float, float] = (13.0, 12.5),
) -> TwoHeadsFigure:
    """Self-attention with two heads of 2D tokens, in eight panels.

    Row 1: the embeddings, head 1's and head 2's weights. Row 2: each head's output (its 2D
    values averaged with its weights) and the output ``concat · W_o``, the embeddings faint
    behind them. Row 3: the concatenation ``(n, 4)`` and ``W_o`` ``(4, 2)``, on one colour scale
    symmetric about 0 (so 0 has one colour in both).

    Parameters
    ----------
    tokens : sequence of str, length n
    embeddings : array_like, shape (n, 2)
    W_q, W_k : array_like, shape (2, 2·d_k)
    W_v : array_like, shape (2, 4)
    W_o : array_like, shape (4, 2)
    style : {"light", "dark"}
    figsize : (float, float)

    Returns
    -------
    TwoHeadsFigure
    """
    X = as_real_array(embeddings, "embeddings")
    Wv, Wo = as_real_array(W_v, "W_v"), as_real_array(W_o, "W_o")
    if X.ndim != 2 or X.shape != (len(tokens), 2) or Wv.shape != (2, 4) or Wo.shape != (4, 2):
        raise ValueError(
            "two heads in 2D need embeddings (n, 2) for n tokens, W_v (2, 4) and W_o (4, 2): got "
            f"{len(tokens)} tokens, embeddings {X.shape}, W_v {Wv.shape}, W_o {Wo.shape}"
        )
    output, weights = multi_head_attention(X, X, W_q, W_k, Wv, Wo, n_heads=2)
    concat, _ = multi_head_attention(
        X, X, W_q, W_k, Wv, np.eye(4), n_heads=2
    )  # W_o = I: the heads side by side
    heads = (concat[:, :2], concat[:, 2:])
    limits = square_limits(X, *heads, output)
    fig, axes = figure(3, 3, figsize=figsize, style=style, pad=0.1)
    vectors(axes[0, 0], X, tokens, title="1. Embeddings X", limits=limits)
    maps = [
        heatmap(
            axes[0, 1 + h], weights[h], tokens, tokens, title=f"{2 + h}. Head {h + 1} weights", vmin=0, vmax=1
        )
        for h in range(2)
    ]
    for h, out in enumerate(heads):
        vectors(axes[1, h], X, [""] * len(tokens), alpha=0.25, limits=limits)
        vectors(
            axes[1, h], out, tokens, title=f"{4 + h}. Head {h + 1} output (weights · V{h + 1})", limits=limits
        )
    vectors(axes[1, 2], X, [""] * len(tokens), alpha=0.25, limits=limits)
    vectors(axes[1, 2], output, tokens, title="6. Output concat · W_o", limits=limits)
    span = float(max(np.abs(concat).max(), np.abs(Wo).max(), 1e-12))  # one scale, 0 in its middle
    concat_map = heatmap(
        axes[2, 0], concat, tokens, CONCAT_COLUMNS, title=f"7. concat(head 1, head 2) ({len(tokens)} × 4)",
        cmap="cividis", vmin=-span, vmax=span, xlabel="columns", ylabel="tokens",
    )  # fmt: skip
    w_o_map = heatmap(
        axes[2, 1], Wo, CONCAT_COLUMNS, ("x", "y"), title="8. W_o (4 × 2)", cmap="cividis",
        vmin=-span, vmax=span, xlabel="output", ylabel="concat column",
    )  # fmt: skip
    axes[2, 2].set_axis_off()
    describe(fig, two_heads_description(tokens, weights, output))
    return TwoHeadsFigure(fig, (maps[0], maps[1]), concat_map, w_o_map, weights, concat, output)
