"""RoPE in 2D (lesson 10): a query and a key turned by their positions, and their score.

The left panel draws the two vectors before (faint) and after the rotation; the right panel the
score ``rope(q, m) · rope(k, n)`` as a function of the distance ``m − n``, with the current
distance marked. The RoPE explorer (:func:`attention_lessons.l10_positions.widgets.rope_explorer`) draws
the same picture.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from attention_lessons.kit.plots.arrows import Arrows, vectors
from attention_lessons.kit.plots.cells import format_cell
from attention_lessons.kit.plots.descriptions import describe, join_sentences
from attention_lessons.kit.plots.palette import color
from attention_lessons.kit.plots.panel_text import point
from attention_lessons.kit.plots.styles import figure, style_context
from attnlib.positions import rope
from attnlib.validation import as_real_array

__all__ = [
    "ROPE_COLORS",
    "ROPE_KEY",
    "ROPE_QUERY",
    "RopeFigure",
    "rope_figure",
    "rope_limits",
    "rope_score_limits",
    "rope_text",
]

#: The 2D query and key of lesson 10 and of the RoPE explorer, before rotation.
ROPE_QUERY = (1.0, 0.2)
ROPE_KEY = (0.6, 0.8)
#: The query's and the key's colours (Okabe–Ito orange and bluish green).
ROPE_COLORS = (color("query"), color("key"))


@dataclass(frozen=True)
class RopeFigure:
    """What :func:`rope_figure` drew.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    arrows_ax, curve_ax : matplotlib.axes.Axes
    before : Arrows
        q and k before rotation (faint, unlabelled).
    after : Arrows
        ``rope(q, m)`` and ``rope(k, n)``.
    curve : matplotlib.lines.Line2D
        The score against the distance ``m − n``.
    marker : matplotlib.lines.Line2D
        The current distance and score.
    readout : matplotlib.text.Text
        :func:`rope_text`.
    """

    figure: Figure
    arrows_ax: Axes
    curve_ax: Axes
    before: Arrows
    after: Arrows
    curve: Line2D
    marker: Line2D
    readout: Text


def rope_limits(query: npt.ArrayLike, key: npt.ArrayLike) -> tuple[float, float]:
    """The same (low, high) for both axes: room for either vector turned any way, and its label."""
    radius = max(float(np.linalg.norm(query)), float(np.linalg.norm(key)), 0.5)
    return -1.35 * radius, 1.35 * radius


def rope_score_limits(query: npt.ArrayLike, key: npt.ArrayLike) -> tuple[float, float]:
    """The y range of the score panel: a rotated score never leaves ``±|q| |k|``."""
    bound = max(float(np.linalg.norm(query)) * float(np.linalg.norm(key)), 0.1)
    return -1.15 * bound, 1.15 * bound


def rope_text(m: float, n: float, score: float) -> str:
    """The readout: the two positions, their distance and the score."""
    return f"m = {m:g}, n = {n:g}\nm − n = {m - n:g}\nscore = {score:+.3f}".replace("-", "−")


def rope_figure(
    query: npt.ArrayLike = ROPE_QUERY,
    key: npt.ArrayLike = ROPE_KEY,
    query_position: float = 2.0,
    key_position: float = 5.0,
    offset: float = 0.0,
    *,
    max_distance: float = 12.0,
    style: str = "light",
    figsize: tuple[float, float] = (11.0, 4.6),
) -> RopeFigure:
    """Draw a 2D query at position ``m = query_position + offset`` and a key at ``n = key_position + offset``.

    Parameters
    ----------
    query, key : array_like, shape (2,)
        The vectors before rotation (``d = 2``: one pair, turned by its position in radians).
    query_position, key_position, offset : float
        The positions, and an amount added to both.
    max_distance : float
        The score panel shows distances ``−max_distance … max_distance``.
    style : {"light", "dark"}
    figsize : (float, float)

    Returns
    -------
    RopeFigure
    """
    q = as_real_array(query, "query").astype(np.float64)
    k = as_real_array(key, "key").astype(np.float64)
    if q.shape != (2,) or k.shape != (2,):
        raise ValueError(
            f"query and key must be 2D vectors of shape (2,), got shapes {q.shape} and {k.shape}"
        )
    if not (isinstance(max_distance, (int, float)) and 0 < max_distance < np.inf):
        raise ValueError(f"max_distance must be a positive number, got {max_distance!r}")
    m, n = float(query_position) + float(offset), float(key_position) + float(offset)
    rotated_q, rotated_k = rope(q, [m]), rope(k, [n])
    score = float(rotated_q @ rotated_k)
    limits = rope_limits(q, k)

    fig, axes = figure(1, 2, figsize=figsize, style=style)
    arrows_ax, curve_ax = axes[0]
    before = vectors(arrows_ax, np.stack([q, k]), ["", ""], colors=ROPE_COLORS, alpha=0.3, limits=limits)
    after = vectors(
        arrows_ax,
        np.stack([rotated_q, rotated_k]),
        [f"q at m = {m:g}", f"k at n = {n:g}"],
        colors=ROPE_COLORS,
        limits=limits,
        title="RoPE in 2D: q turned by m, k by n",
    )
    distances = np.linspace(-max_distance, max_distance, 481)
    along = rope(np.broadcast_to(q, (distances.size, 2)), distances) @ k  # rope(q, m − n) · k, (481,)
    with style_context(style):
        arrows_ax.set_xlabel("faint: q and k before the rotation")
        readout = arrows_ax.text(
            0.03, 0.97, rope_text(m, n, score), transform=arrows_ax.transAxes, ha="left", va="top",
            family="monospace", fontsize=9,
            bbox={"boxstyle": "round", "facecolor": mpl.rcParams["axes.facecolor"],
                  "edgecolor": mpl.rcParams["grid.color"], "alpha": 0.9},
        )  # fmt: skip
        (curve,) = curve_ax.plot(distances, along, color=color("raw score"), linewidth=1.8)
        (marker,) = curve_ax.plot([m - n], [score], "o", color=color("raw score"), markersize=8)
        curve_ax.axhline(0.0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        curve_ax.set_xlim(-max_distance, max_distance)
        curve_ax.set_ylim(*rope_score_limits(q, k))
        curve_ax.grid(True, linewidth=0.6)
        curve_ax.set_xlabel("distance m − n")
        curve_ax.set_ylabel("score")
        curve_ax.set_title("score rope(q, m)·rope(k, n) against m − n")
    describe(
        fig,
        join_sentences(
            [
                f"RoPE in 2D: the query q {point(q)} is turned by its position m = {m:g} to "
                f"{point(rotated_q)}, the key k {point(k)} by n = {n:g} to {point(rotated_k)}",
                f"m − n = {m - n:g}, score {format_cell(score, 3)}",
                f"The score against m − n from {format_cell(-max_distance, 0)} to "
                f"{format_cell(max_distance, 0)} ranges from {format_cell(float(along.min()), 3)} to "
                f"{format_cell(float(along.max()), 3)}: it depends on the positions only through m − n",
            ]
        ),
    )
    return RopeFigure(fig, arrows_ax, curve_ax, before, after, curve, marker, readout)
