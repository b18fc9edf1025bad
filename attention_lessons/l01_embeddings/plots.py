"""Two vectors: their dot product, cosine and angle, drawn and written out (lessons 01 and 03)."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
from attention_lessons.kit.plots.heatmaps import heatmap
from attention_lessons.kit.plots.limits import similarity_limits, square_limits
from attention_lessons.kit.plots.panel_text import listed_points
from attention_lessons.kit.plots.png import show
from attention_lessons.kit.plots.styles import OKABE_ITO, figure, style_context
from attention_lessons.l01_embeddings.similarity import Similarity, similarity
from attnlib.validation import as_real_array

#: With the kit tools lesson 01 draws with (so the notebook reads them from one module).
__all__ = [
    "SimilarityFigure",
    "figure",
    "heatmap",
    "show",
    "similarity_description",
    "similarity_figure",
    "similarity_limits",
    "similarity_text",
    "vectors",
]


@dataclass(frozen=True)
class SimilarityFigure:
    """What :func:`similarity_figure` drew.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    ax : matplotlib.axes.Axes
    arrows : Arrows
        The two vectors.
    shadow : matplotlib.lines.Line2D
        The projection of ``b`` onto the direction of ``a`` (``a·b = |a| × its signed length``);
        empty when ``a`` is zero.
    drop : matplotlib.lines.Line2D
        The dashed line from the tip of ``b`` to that projection.
    arc : matplotlib.lines.Line2D
        The angle θ between the vectors (empty when one of them is zero).
    readout : matplotlib.text.Text
        ``a·b``, ``|a| |b|``, ``cos θ`` and ``θ``, formatted (:func:`similarity_text`).
    """

    figure: Figure
    ax: Axes
    arrows: Arrows
    shadow: Line2D
    drop: Line2D
    arc: Line2D
    readout: Text


def similarity_figure(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    labels: Sequence[str] = ("a", "b"),
    style: str = "light",
    figsize: tuple[float, float] = (5.0, 5.0),
    limits: tuple[float, float] | None = None,
    title: str = "Dot product, cosine and angle",
) -> SimilarityFigure:
    """Draw two 2D vectors with what their dot product is made of.

    The shaded segment is ``b`` projected onto the direction of ``a``: the dot product is
    ``|a|`` times its signed length, ``a·b = |a| |b| cos θ``. The box gives the numbers.

    Parameters
    ----------
    a, b : array_like, shape (2,)
    labels : (str, str)
    style : {"light", "dark"}
    figsize : (float, float)
    limits : (float, float), optional
        The same (low, high) for both axes; by default fitted to both vectors and the origin
        (:func:`~attention_lessons.kit.plots.similarity_limits` gives those of the similarity explorer).
    title : str

    Returns
    -------
    SimilarityFigure
    """
    u, v = _two_vectors(a, b)
    if len(labels) != 2:
        raise ValueError(f"labels must name the two vectors, got {len(labels)} labels")
    sim = similarity(u, v)
    fig, axes = figure(1, 1, figsize=figsize, style=style)
    ax = axes[0, 0]
    arrows = vectors(ax, np.stack([u, v]), labels, limits=limits or square_limits(u, v), title=title)
    p, q = labels
    with style_context(style):
        ax.set_xlabel(f"shaded: {q} projected onto {p};  {p}·{q} = |{p}| × its length")
        foot = (sim.dot / sim.norm_a**2) * u if sim.norm_a > 0 else None
        shadow_xy = ([0.0, foot[0]], [0.0, foot[1]]) if foot is not None else ([], [])
        drop_xy = ([v[0], foot[0]], [v[1], foot[1]]) if foot is not None else ([], [])
        (shadow,) = ax.plot(*shadow_xy, color=OKABE_ITO[0], linewidth=7, alpha=0.35, solid_capstyle="butt")
        (drop,) = ax.plot(*drop_xy, color=mpl.rcParams["text.color"], linewidth=1, linestyle="--")
        (arc,) = ax.plot(*_arc(u, v, sim), color=mpl.rcParams["text.color"], linewidth=1.2)
        readout = ax.text(
            0.03, 0.97, similarity_text(u, v, labels), transform=ax.transAxes, ha="left", va="top",
            family="monospace", fontsize=9,
            bbox={"boxstyle": "round", "facecolor": mpl.rcParams["axes.facecolor"],
                  "edgecolor": mpl.rcParams["grid.color"], "alpha": 0.9},
        )  # fmt: skip
    describe(fig, similarity_description(u, v, labels, title))
    return SimilarityFigure(fig, ax, arrows, shadow, drop, arc, readout)


def similarity_description(a: np.ndarray, b: np.ndarray, labels: Sequence[str], title: str) -> str:
    """The text alternative of :func:`similarity_figure`: both vectors and the numbers in the box."""
    sim = similarity(a, b)
    p, q = labels
    numbers = f"{p}·{q} = {format_cell(sim.dot)}, |{p}| |{q}| = {format_cell(sim.norm_a * sim.norm_b)}"
    if sim.cosine is None or sim.angle_degrees is None:
        numbers += ", cos θ undefined (a zero vector has no direction)"
    else:
        numbers += f", cos θ = {format_cell(sim.cosine, 3)}, θ = {format_cell(sim.angle_degrees, 1)}°"
    return join_sentences(
        [
            f"{title}: arrows {listed_points([p, q], np.stack([a, b]))} from the origin, "
            f"{q} projected onto {p}",
            numbers,
        ]
    )


def similarity_text(a: npt.ArrayLike, b: npt.ArrayLike, labels: Sequence[str] = ("a", "b")) -> str:
    """The numbers of two vectors, as the figure prints them: dot product, lengths, cosine, angle."""
    u, v = _two_vectors(a, b)
    sim = similarity(u, v)
    p, q = labels
    lines = [f"{p}·{q}     = {sim.dot:+.2f}", f"|{p}| |{q}| = {sim.norm_a * sim.norm_b:.2f}"]
    if sim.cosine is None or sim.angle_degrees is None:
        lines += ["cos θ   : undefined", "(a zero vector has", " no direction)"]
    else:
        lines += [f"cos θ   = {sim.cosine:+.3f}", f"θ       = {sim.angle_degrees:.1f}°"]
    return "\n".join(lines)


def _two_vectors(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    u = as_real_array(a, "a").astype(np.float64)
    v = as_real_array(b, "b").astype(np.float64)
    if u.shape != (2,) or v.shape != (2,):
        raise ValueError(f"a and b must be 2D vectors of shape (2,), got shapes {u.shape} and {v.shape}")
    return u, v


def _arc(u: np.ndarray, v: np.ndarray, sim: Similarity) -> tuple[np.ndarray, np.ndarray]:
    """The arc of the angle from ``u`` to ``v`` (the shorter way round), at 0.3 × the shorter length."""
    if sim.cosine is None or sim.angle_degrees is None:
        return np.array([]), np.array([])
    start = math.atan2(u[1], u[0])
    turn = (math.atan2(v[1], v[0]) - start + math.pi) % (2 * math.pi) - math.pi
    if sim.angle_degrees >= 179.999:
        turn = math.pi  # opposite vectors: draw the half circle
    radius = 0.3 * min(sim.norm_a, sim.norm_b)
    angles = start + np.linspace(0.0, turn, 40)
    return radius * np.cos(angles), radius * np.sin(angles)
