"""Why divide by √d_k: raw and scaled scores of random queries and keys (lesson 04)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import StepPatch
from matplotlib.text import Text
from matplotlib.ticker import PercentFormatter

from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.heatmaps import heatmap
from attention_lessons.kit.plots.png import show
from attention_lessons.kit.plots.styles import (
    OKABE_ITO,
    RAW_COLOR,
    RAW_HATCH,
    SCALED_COLOR,
    figure,
    style_context,
)
from attention_lessons.l04_scaling.scaling import D_K_VALUES, ScalingStatistics, entropy, scaling_statistics
from attnlib.validation import as_positive_int

#: With the kit tools lesson 04 draws with (so the notebook reads them from one module).
__all__ = [
    "OKABE_ITO",
    "RAW_COLOR",
    "SCALED_COLOR",
    "ScalingFigure",
    "figure",
    "heatmap",
    "scaling_bins",
    "scaling_description",
    "scaling_figure",
    "show",
]


@dataclass(frozen=True)
class ScalingFigure:
    """What :func:`scaling_figure` drew: raw and scaled scores at one d_k, in three panels.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    spread : matplotlib.axes.Axes
        Histograms of every raw score ``q·k`` and every scaled score ``q·k/√d_k``.
    weights : matplotlib.axes.Axes
        The first query's softmax weights over the keys, without and with scaling.
    variance : matplotlib.axes.Axes
        Variance of the raw and the scaled scores against d_k (log–log), the current d_k marked.
    raw_hist, scaled_hist : matplotlib.patches.StepPatch
        Share of the scores in each bin (:func:`scaling_bins`).
    raw_bars, scaled_bars : matplotlib.container.BarContainer
        One bar per key: the weights without and with scaling.
    raw_marker, scaled_marker : matplotlib.lines.Line2D
        The current d_k on the variance curves.
    weight_numbers, variance_numbers : matplotlib.text.Text
        Largest weight and entropy; d_k and both variances.
    statistics : attention_lessons.l04_scaling.scaling.ScalingStatistics
        What is drawn.
    """

    figure: Figure
    spread: Axes
    weights: Axes
    variance: Axes
    raw_hist: StepPatch
    scaled_hist: StepPatch
    raw_bars: BarContainer
    scaled_bars: BarContainer
    raw_marker: Line2D
    scaled_marker: Line2D
    weight_numbers: Text
    variance_numbers: Text
    statistics: ScalingStatistics


def scaling_bins(d_k: int) -> np.ndarray:
    """The histogram bin edges of :func:`scaling_figure`: 48 bins over ±4.5 standard deviations."""
    half = 4.5 * math.sqrt(as_positive_int(d_k, "d_k"))
    return np.linspace(-half, half, 49)


def scaling_figure(
    d_k: int,
    *,
    n_queries: int = 256,
    n_keys: int = 8,
    seed: int = 0,
    style: str = "light",
    figsize: tuple[float, float] = (13.0, 4.0),
) -> ScalingFigure:
    """Why divide by √d_k, in one figure: random queries and keys of dimension ``d_k``.

    Left: the spread of all ``n_queries × n_keys`` raw scores and of the scaled ones. Middle: the
    first query's weights over the ``n_keys`` keys, without scaling (saturated when d_k is large)
    and with it. Right: the variance of the scores against d_k
    (:data:`attention_lessons.l04_scaling.scaling.D_K_VALUES`), about ``d_k`` raw and about 1 scaled, with the
    current d_k marked. Raw scores are drawn in :data:`RAW_COLOR`, scaled ones in :data:`SCALED_COLOR`.

    Parameters
    ----------
    d_k : int
    n_queries, n_keys : int
    seed : int
        Seed of :func:`attention_lessons.l04_scaling.scaling.random_queries_keys` (the same vectors for every
        figure).
    style : {"light", "dark"}
    figsize : (float, float)

    Returns
    -------
    ScalingFigure
    """
    stats = scaling_statistics(d_k, n_queries=n_queries, n_keys=n_keys, seed=seed)
    grid = [scaling_statistics(d, n_queries=n_queries, n_keys=n_keys, seed=seed) for d in D_K_VALUES]
    fig, axes = figure(1, 3, figsize=figsize, style=style)
    ax_s, ax_w, ax_v = axes[0]
    with style_context(style):
        raw_hist, scaled_hist = _draw_spread(ax_s, stats)
        raw_bars, scaled_bars, weight_numbers = _draw_weights(ax_w, stats)
        raw_marker, scaled_marker, variance_numbers = _draw_variance(ax_v, stats, grid)
    text, tables = scaling_description(stats, grid)
    describe(fig, text, tables)
    return ScalingFigure(
        fig, ax_s, ax_w, ax_v, raw_hist, scaled_hist, raw_bars, scaled_bars, raw_marker, scaled_marker,
        weight_numbers, variance_numbers, stats,
    )  # fmt: skip


def scaling_description(stats: ScalingStatistics, grid: list[ScalingStatistics]) -> tuple[str, list[Table]]:
    """The text alternative of :func:`scaling_figure` and its tables (the weights, the variances)."""
    raw_w, scaled_w = stats.raw_weights[0], stats.scaled_weights[0]
    text = join_sentences(
        [
            f"Why divide by √d_k, at d_k = {stats.d_k}: {stats.raw.size} scores of random queries and keys "
            f"have variance {stats.raw_variance:.2f} raw and {stats.scaled_variance:.2f} scaled by 1/√d_k",
            f"One query's weights over {raw_w.size} keys: largest {raw_w.max():.3f} without scaling and "
            f"{scaled_w.max():.3f} with it (entropy {float(entropy(raw_w)):.3f} and "
            f"{float(entropy(scaled_w)):.3f} nats)",
            f"From d_k = {grid[0].d_k} to {grid[-1].d_k} the raw variance goes from "
            f"{grid[0].raw_variance:.2f} to {grid[-1].raw_variance:.2f}, the scaled one from "
            f"{grid[0].scaled_variance:.2f} to {grid[-1].scaled_variance:.2f}",
        ]
    )
    weights = Table(
        caption="One query's weights over the keys",
        columns=("without scaling", "scaled by 1/√d_k"),
        rows=tuple(f"k{j + 1}" for j in range(raw_w.size)),
        cells=tuple((f"{r:.3f}", f"{s:.3f}") for r, s in zip(raw_w, scaled_w, strict=True)),
        corner="key",
    )
    variances = Table(
        caption="Variance of the scores against d_k",
        columns=("raw", "scaled"),
        rows=tuple(str(g.d_k) for g in grid),
        cells=tuple((f"{g.raw_variance:.2f}", f"{g.scaled_variance:.2f}") for g in grid),
        corner="d_k",
    )
    return text, [weights, variances]


def _draw_spread(ax: Axes, stats: ScalingStatistics) -> tuple[StepPatch, StepPatch]:
    """Left panel: what share of the scores falls in each bin, raw and scaled."""
    edges = scaling_bins(stats.d_k)
    raw_share = np.histogram(np.clip(stats.raw, edges[0], edges[-1]), edges)[0] / stats.raw.size
    scaled_share = np.histogram(np.clip(stats.scaled, edges[0], edges[-1]), edges)[0] / stats.raw.size
    raw_hist = ax.stairs(
        raw_share, edges, fill=True, color=RAW_COLOR, alpha=0.45, hatch=RAW_HATCH, label="raw q·k"
    )
    scaled_hist = ax.stairs(
        scaled_share, edges, fill=True, color=SCALED_COLOR, alpha=0.6, label="scaled q·k / √d_k"
    )
    ax.set_xlim(edges[0], edges[-1])
    ax.set_ylim(0, 1.25 * max(raw_share.max(), scaled_share.max()))
    ax.set_title(f"All {stats.raw.size} scores at d_k = {stats.d_k}")
    ax.set_xlabel("score")
    ax.set_ylabel("share of the scores")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.legend(loc="upper right", fontsize=8)
    return raw_hist, scaled_hist


def _draw_weights(ax: Axes, stats: ScalingStatistics) -> tuple[BarContainer, BarContainer, Text]:
    """Middle panel: the first query's weights over the keys, without and with scaling."""
    raw_w, scaled_w = stats.raw_weights[0], stats.scaled_weights[0]
    keys = np.arange(raw_w.size)
    raw_bars = ax.bar(keys - 0.2, raw_w, 0.4, color=RAW_COLOR, hatch=RAW_HATCH, label="without scaling")
    scaled_bars = ax.bar(keys + 0.2, scaled_w, 0.4, color=SCALED_COLOR, label="scaled by 1/√d_k")
    ax.set_xticks(keys, [f"k{j + 1}" for j in keys])
    ax.set_ylim(0, 1.45)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("keys")
    ax.set_ylabel("weight")
    ax.set_title("One query's weights over the keys")
    ax.legend(loc="upper left", fontsize=8)
    numbers = (
        "               raw   scaled\n"
        f"largest     {raw_w.max():6.3f}   {scaled_w.max():6.3f}\n"
        f"entropy     {float(entropy(raw_w)):6.3f}   {float(entropy(scaled_w)):6.3f}"
    )
    text = ax.text(
        0.98, 0.97, numbers, transform=ax.transAxes, ha="right", va="top", family="monospace", fontsize=8
    )
    return raw_bars, scaled_bars, text


def _draw_variance(
    ax: Axes, stats: ScalingStatistics, grid: list[ScalingStatistics]
) -> tuple[Line2D, Line2D, Text]:
    """Right panel: the variance of the scores against d_k, log–log, with this d_k marked."""
    raw = [g.raw_variance for g in grid]
    scaled = [g.scaled_variance for g in grid]
    ax.loglog(D_K_VALUES, raw, "-", color=RAW_COLOR, marker="o", markersize=3, label="raw", base=2)
    ax.loglog(D_K_VALUES, scaled, "-", color=SCALED_COLOR, marker="s", markersize=3, label="scaled", base=2)
    marker = {"markersize": 9, "markeredgecolor": "black"}
    (raw_marker,) = ax.plot([stats.d_k], [max(stats.raw_variance, 1e-12)], "o", color=RAW_COLOR, **marker)
    (scaled_marker,) = ax.plot(
        [stats.d_k], [max(stats.scaled_variance, 1e-12)], "s", color=SCALED_COLOR, **marker
    )
    ax.set_xlim(0.7, 1500)
    ax.set_ylim(0.25, 4096)
    ax.set_xlabel("d_k")
    ax.set_ylabel("variance of the scores")
    ax.set_title("Variance grows like d_k; scaled stays 1")
    ax.grid(True, linewidth=0.6)
    ax.legend(loc="center right", fontsize=8)
    text = ax.text(
        0.03, 0.97,
        f"d_k = {stats.d_k}\nvariance raw    {stats.raw_variance:8.2f}\n"
        f"variance scaled {stats.scaled_variance:8.2f}",
        transform=ax.transAxes, ha="left", va="top", family="monospace", fontsize=8,
    )  # fmt: skip
    return raw_marker, scaled_marker, text
