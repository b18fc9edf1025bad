"""2D vectors as arrows, each labelled next to its tip."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.quiver import Quiver
from matplotlib.text import Text

from attention_lessons.kit.plots.contrast import readable_color
from attention_lessons.kit.plots.descriptions import describe, is_described
from attention_lessons.kit.plots.labels import LabelPlacer
from attention_lessons.kit.plots.limits import check_limits, square_limits
from attention_lessons.kit.plots.panel_text import vectors_description
from attention_lessons.kit.plots.styles import OKABE_ITO, drawing_style
from attnlib.validation import as_real_array

__all__ = ["Arrows", "vectors"]


@dataclass(frozen=True)
class Arrows:
    """What :func:`vectors` drew.

    Attributes
    ----------
    quiver : matplotlib.quiver.Quiver
        One arrow per vector; ``quiver.get_offsets()`` holds the tails and ``quiver.U``,
        ``quiver.V`` the components, shape (n, 2) together.
    labels : list of matplotlib.text.Text
        One label per vector, placed next to its tip at every draw
        (:func:`~attention_lessons.kit.plots.place_labels`); an empty label is not drawn.
    spread_labels : bool
        Whether the labels are placed clear of the arrows (else above and right of each tip).
    """

    quiver: Quiver
    labels: list[Text]
    spread_labels: bool = True


def vectors(
    ax: Axes,
    points: npt.ArrayLike,
    labels: Sequence[str],
    *,
    origins: npt.ArrayLike | None = None,
    colors: Sequence[str] = OKABE_ITO,
    alpha: float = 1.0,
    title: str | None = None,
    limits: tuple[float, float] | None = None,
    spread_labels: bool = True,
) -> Arrows:
    """Draw 2D vectors as arrows (from the origin, or from ``origins``), each labelled at its tip.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    points : array_like, shape (n, 2)
        The arrow tips.
    labels : sequence of str, length n
        An empty string draws no label (for faint "before" arrows whose names are elsewhere).
    origins : array_like, shape (n, 2), optional
        The arrow tails; zeros by default.
    colors : sequence of str
        Colours, cycled over the vectors.
    alpha : float
        Opacity of the arrows (use a low one to show "before" vectors behind "after" ones). The
        labels are always opaque.
    title : str, optional
    limits : (float, float), optional
        The same (low, high) for both axes; by default fitted to every tip and the origin.
    spread_labels : bool
        Place each label next to its tip where it touches no arrow, no other label and stays
        inside the axes (:func:`~attention_lessons.kit.plots.place_labels`, at every draw, over every arrow of
        the axes); False puts every label above and right of its tip.

    Returns
    -------
    Arrows

    Notes
    -----
    A label has its arrow's colour, darkened or lightened until it reads on the background
    (contrast at least 4.5:1, :func:`~attention_lessons.kit.plots.readable_color`). In a figure made by
    :func:`figure`, everything is drawn in the figure's style: title, grid, the lines through the
    origin. The panel's text alternative lists the arrows and their ends
    (:func:`~attention_lessons.kit.plots.panel_text.vectors_description`); arrows without labels drawn into a
    panel that has one (faint "before" arrows) leave it as it is.
    """
    if len(colors) == 0:
        raise ValueError("colors must name at least one colour (they are cycled over the vectors)")
    tips, tails = _tips_and_tails(points, origins, len(labels))
    low, high = square_limits(tips, tails) if limits is None else check_limits(limits)
    delta = tips - tails
    palette = [colors[i % len(colors)] for i in range(len(tips))]
    with drawing_style(ax):
        quiver = ax.quiver(
            tails[:, 0], tails[:, 1], delta[:, 0], delta[:, 1],
            color=palette, angles="xy", scale_units="xy", scale=1, width=0.012, alpha=alpha,
        )  # fmt: skip
        background = ax.get_facecolor()
        texts = [
            ax.text(x, y, str(label), color=readable_color(colour, background), fontsize=9)
            for (x, y), label, colour in zip(tips, labels, palette, strict=True)
        ]
        ax.set_aspect("equal")
        ax.grid(True, linewidth=0.6)
        ax.axhline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        ax.axvline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        if title:
            ax.set_title(title)
    LabelPlacer.of(ax).add(quiver, texts, spread=spread_labels)
    if any(str(label) for label in labels) or not is_described(ax):  # faint unnamed arrows add nothing
        said = vectors_description(tips, tails, labels, title=title)
        describe(ax, said.text, said.tables, said.short)
    return Arrows(quiver, texts, bool(spread_labels))


def _tips_and_tails(
    points: npt.ArrayLike, origins: npt.ArrayLike | None, n_labels: int
) -> tuple[np.ndarray, np.ndarray]:
    tips = as_real_array(points, "points")
    if tips.ndim != 2 or tips.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2): one 2D vector per row, got shape {tips.shape}")
    if tips.shape[0] != n_labels:
        raise ValueError(f"there are {tips.shape[0]} vectors but {n_labels} labels")
    tails = np.zeros_like(tips) if origins is None else as_real_array(origins, "origins")
    if tails.shape != tips.shape:
        raise ValueError(f"origins must have the shape of points {tips.shape}, got {tails.shape}")
    return tips, tails
