"""The whole picture of self-attention in one 2×2 figure (lesson 07)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attention_lessons.kit.plots.arrows import Arrows, vectors
from attention_lessons.kit.plots.artists import MAX_LISTED
from attention_lessons.kit.plots.descriptions import describe, join_sentences
from attention_lessons.kit.plots.heatmaps import Heatmap, heatmap
from attention_lessons.kit.plots.limits import square_limits
from attention_lessons.kit.plots.panel_text import largest_per_row, listed_points, value_range
from attention_lessons.kit.plots.png import show
from attention_lessons.kit.plots.styles import figure
from attnlib.core import AttentionSteps
from attnlib.validation import as_real_array

#: With the kit tools lesson 07 draws with (so the notebook reads them from one module).
__all__ = ["AttentionFigure", "attention_figure", "overview_text", "show"]


@dataclass(frozen=True)
class AttentionFigure:
    """What :func:`attention_figure` drew.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    embeddings, scores, weights, context : matplotlib.axes.Axes
        The four panels, in reading order.
    score_map, weight_map : Heatmap
        The raw scores (top right) and the weights (bottom left).
    embedding_arrows, context_arrows, faint_arrows : Arrows
        The embeddings (top left), the outputs and, faint and unlabelled behind
        them, the embeddings again (bottom right).
    """

    figure: Figure
    embeddings: Axes
    scores: Axes
    weights: Axes
    context: Axes
    score_map: Heatmap
    weight_map: Heatmap
    embedding_arrows: Arrows
    context_arrows: Arrows
    faint_arrows: Arrows


def attention_figure(
    steps: AttentionSteps,
    tokens: Sequence[str],
    embeddings: npt.ArrayLike,
    *,
    style: str = "light",
    figsize: tuple[float, float] = (9.0, 8.0),
    spread_labels: bool = True,
) -> AttentionFigure:
    """The whole picture in one 2×2 figure, from one :func:`attnlib.attention_steps` call.

    Top left: the embeddings as arrows. Top right: the raw scores ``Q Kᵀ``. Bottom left: the
    attention weights (each row sums to 1). Bottom right: the outputs (the
    output, ``weights · V``) as arrows, with the embeddings faint behind them.

    Parameters
    ----------
    steps : AttentionSteps
        Self-attention of ``n`` tokens with 2D values (``output`` of shape (n, 2)).
    tokens : sequence of str, length n
    embeddings : array_like, shape (n, 2)
    style : {"light", "dark"}
    figsize : (float, float)
    spread_labels : bool
        Place each arrow's label clear of the other arrows (:func:`~attention_lessons.kit.plots.vectors`);
        False puts every label above and right of its tip.

    Returns
    -------
    AttentionFigure
    """
    X = _check_overview(steps, tokens, embeddings)
    limits = square_limits(X, steps.output)
    fig, axes = figure(2, 2, figsize=figsize, style=style, pad=0.1)  # room for labels beside panels
    (ax_x, ax_s), (ax_w, ax_c) = axes
    embedding_arrows = vectors(
        ax_x, X, tokens, title="1. Embeddings X", limits=limits, spread_labels=spread_labels
    )
    score_map = heatmap(ax_s, steps.raw_scores, tokens, tokens, title="2. Raw scores Q Kᵀ", cmap="cividis")
    weight_map = heatmap(
        ax_w, steps.weights, tokens, tokens, title="3. Weights softmax(Q Kᵀ/√d_k)", vmin=0, vmax=1
    )
    faint_arrows = vectors(ax_c, X, [""] * len(tokens), alpha=0.25, limits=limits)
    context_arrows = vectors(
        ax_c, steps.output, tokens, title="4. Outputs (weights · V)", limits=limits,
        spread_labels=spread_labels,
    )  # fmt: skip
    describe(fig, overview_text(steps, tokens))
    return AttentionFigure(
        fig, ax_x, ax_s, ax_w, ax_c, score_map, weight_map, embedding_arrows, context_arrows, faint_arrows
    )


def overview_text(steps: AttentionSteps, tokens: Sequence[str]) -> str:
    """The text alternative of :func:`attention_figure`: the four panels and their key numbers."""
    names = [str(t) for t in tokens]
    parts = [
        f"Self-attention of {len(names)} tokens ({', '.join(names)}) in four panels: the embeddings as "
        "arrows, the raw scores Q Kᵀ, the weights softmax(Q Kᵀ/√d_k) and the outputs weights · V as arrows",
        f"Raw scores {value_range(steps.raw_scores)}",
        f"Largest weight of each query: {largest_per_row(steps.weights, names, names)}",
    ]
    if len(names) <= MAX_LISTED:
        parts.append(f"Outputs: {listed_points(names, steps.output)}")
    return join_sentences(parts)


def _check_overview(steps: AttentionSteps, tokens: Sequence[object], embeddings: npt.ArrayLike) -> np.ndarray:
    if not isinstance(steps, AttentionSteps):
        raise TypeError(f"steps must be what attnlib.attention_steps returns, got {type(steps).__name__}")
    X = as_real_array(embeddings, "embeddings")
    n = len(tokens)
    if steps.weights.shape != (n, n) or X.shape != (n, 2) or steps.output.shape != (n, 2):
        raise ValueError(
            "the overview needs self-attention of n tokens in 2D: got "
            f"{n} tokens, embeddings {X.shape}, weights {steps.weights.shape}, output {steps.output.shape}"
        )
    return X
