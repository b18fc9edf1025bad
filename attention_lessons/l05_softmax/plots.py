"""One row of scores and its softmax with a temperature, as annotated bars (lesson 05)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text

from attention_lessons.kit.plots.artists import MAX_LISTED
from attention_lessons.kit.plots.cells import format_cell
from attention_lessons.kit.plots.descriptions import Table, describe
from attention_lessons.kit.plots.heatmaps import heatmap
from attention_lessons.kit.plots.limits import check_limits, score_limits
from attention_lessons.kit.plots.png import show
from attention_lessons.kit.plots.styles import OKABE_ITO, RAW_COLOR, figure, style_context
from attnlib.core import softmax
from attnlib.validation import as_real_array, is_number

#: With the kit tools lesson 05 draws with (so the notebook reads them from one module).
__all__ = [
    "OKABE_ITO",
    "SoftmaxFigure",
    "check_temperature",
    "figure",
    "heatmap",
    "score_limits",
    "show",
    "softmax_description",
    "softmax_figure",
]


@dataclass(frozen=True)
class SoftmaxFigure:
    """What :func:`softmax_figure` drew.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    scores, weights : matplotlib.axes.Axes
    score_bars, weight_bars : matplotlib.container.BarContainer
    score_texts, weight_texts : list of matplotlib.text.Text
        The value of each bar (``−∞`` for a masked score).
    weights_drawn : numpy.ndarray, shape (n,)
        ``softmax(scores / temperature)``.
    """

    figure: Figure
    scores: Axes
    weights: Axes
    score_bars: BarContainer
    weight_bars: BarContainer
    score_texts: list[Text]
    weight_texts: list[Text]
    weights_drawn: np.ndarray


def check_temperature(temperature: object, scores: np.ndarray) -> float:
    """Return ``temperature`` as a float, or raise a clear error.

    A temperature is a positive, finite real number (not a bool) small enough that every finite
    score divided by it is still a finite float.

    Parameters
    ----------
    temperature : float
    scores : numpy.ndarray
        Finite scores and ``-inf`` (masked).
    """
    if not is_number(temperature):
        raise TypeError(f"temperature must be a positive number such as 0.5, got {temperature!r}")
    t = float(temperature)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"temperature must be a positive, finite number, got {t!r}")
    finite = np.abs(scores[np.isfinite(scores)])
    largest = float(finite.max()) if finite.size else 0.0
    if largest / t > np.finfo(np.float64).max:
        raise ValueError(
            f"temperature {t:.3g} is too small for these scores: the largest, {largest:.3g}, divided "
            "by it is beyond the largest float"
        )
    return t


def softmax_figure(
    scores: npt.ArrayLike,
    labels: Sequence[str],
    *,
    temperature: float = 1.0,
    style: str = "light",
    figsize: tuple[float, float] = (9.0, 3.6),
    limits: tuple[float, float] | None = None,
) -> SoftmaxFigure:
    """Scores and ``softmax(scores / temperature)`` side by side, as annotated bars.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One row of scores; ``-inf`` marks a masked key (weight 0).
    labels : sequence of str, length n
    temperature : float
        Positive and finite (:func:`check_temperature`); large spreads the weights out, small
        makes the largest score take all.
    style : {"light", "dark"}
    figsize : (float, float)
    limits : (float, float), optional
        The y range of the scores panel; by default fitted to the finite scores and 0
        (:func:`~attention_lessons.kit.plots.score_limits` gives that of the softmax explorer).

    Returns
    -------
    SoftmaxFigure
    """
    values = as_real_array(scores, "scores", allow_neg_inf=True).astype(np.float64)
    if values.ndim != 1 or values.size != len(labels):
        raise ValueError(
            f"scores must be one row of {len(labels)} values (one per label), got shape {values.shape}"
        )
    t = check_temperature(temperature, values)
    low, high = _fitted_limits(values) if limits is None else check_limits(limits)
    weights = softmax(values / t)
    x = np.arange(len(labels))
    heights = np.where(np.isfinite(values), values, 0.0)
    fig, axes = figure(1, 2, figsize=figsize, style=style)
    ax_s, ax_w = axes[0]
    with style_context(style):
        score_bars = ax_s.bar(x, heights, 0.6, color=RAW_COLOR)
        weight_bars = ax_w.bar(x, weights, 0.6, color=OKABE_ITO[2])
        nudge = 0.02 * (high - low)
        score_texts = [
            ax_s.text(i, h + nudge if h >= 0 else h - nudge, format_cell(value), ha="center",
                      va="bottom" if h >= 0 else "top", fontsize=9)
            for i, h, value in zip(x, heights, values, strict=True)
        ]  # fmt: skip
        weight_texts = [
            ax_w.text(i, w + 0.01, f"{w:.3f}", ha="center", va="bottom", fontsize=9)
            for i, w in zip(x, weights, strict=True)
        ]
        for ax in (ax_s, ax_w):
            ax.set_xticks(x, list(labels))
            ax.axhline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
            ax.set_xlabel("keys")
        ax_s.set_ylim(low, high)
        ax_s.set_title("Scores s")
        ax_s.set_ylabel("score")
        ax_w.set_ylim(0, 1.12)
        ax_w.set_title(f"Weights softmax(s / T), T = {t:.3g}")
        ax_w.set_ylabel("weight")
    text, tables = softmax_description(values, weights, labels, t)
    describe(fig, text, tables)
    return SoftmaxFigure(fig, ax_s, ax_w, score_bars, weight_bars, score_texts, weight_texts, weights)


def softmax_description(
    scores: np.ndarray, weights: np.ndarray, labels: Sequence[str], temperature: float
) -> tuple[str, list[Table]]:
    """The text alternative of :func:`softmax_figure`: each key's score and weight (a table if many).

    >>> softmax_description(np.array([2.0, 1.0]), np.array([0.731, 0.269]), ["h1", "h2"], 1.0)[0]
    'Scores and their softmax weights at temperature T = 1 over 2 keys: h1 2.00 → 0.731, h2 1.00 → 0.269.'
    """
    names = [str(label) for label in labels]
    head = f"Scores and their softmax weights at temperature T = {temperature:.3g} over {len(names)} keys"
    pairs = [(format_cell(s), f"{w:.3f}") for s, w in zip(scores.tolist(), weights.tolist(), strict=True)]
    table = Table(
        caption=f"Scores and weights, T = {temperature:.3g}", columns=("score", "weight"),
        rows=tuple(names), cells=tuple(pairs), corner="key",
    )  # fmt: skip
    if len(names) > MAX_LISTED:
        top = int(np.argmax(weights))
        largest = f"the largest weight is {names[top]}'s, {weights[top]:.3f}"
        return f"{head}: {largest}; every key's score and weight is in the table below.", [table]
    listed = ", ".join(f"{n} {s} → {w}" for n, (s, w) in zip(names, pairs, strict=True))
    return f"{head}: {listed}.", []


def _fitted_limits(values: np.ndarray) -> tuple[float, float]:
    """The finite scores and 0, with room above (and below, for negative scores) for the numbers."""
    finite = values[np.isfinite(values)]
    low = min(0.0, float(finite.min()) if finite.size else 0.0)
    high = max(0.0, float(finite.max()) if finite.size else 1.0)
    pad = 0.18 * max(high - low, 1.0)
    limits = (low - (pad if low < 0 else 0.0), high + pad)
    if not math.isfinite(limits[1] - limits[0]):
        raise ValueError(f"the scores, from {low:.3g} to {high:.3g}, span more than the largest float")
    return limits
