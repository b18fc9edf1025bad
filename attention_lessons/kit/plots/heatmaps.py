"""Annotated heatmaps: a matrix as coloured cells, each with its value, and a colour bar."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.colorbar import Colorbar
from matplotlib.colors import to_rgba
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from attention_lessons.kit.plots.cells import check_decimals, format_cell
from attention_lessons.kit.plots.contrast import text_color_on
from attention_lessons.kit.plots.descriptions import describe
from attention_lessons.kit.plots.limits import color_limits
from attention_lessons.kit.plots.panel_text import heatmap_description
from attention_lessons.kit.plots.styles import drawing_style
from attnlib.validation import as_real_array

__all__ = ["MAX_ANNOTATED_SIDE", "Heatmap", "heatmap"]

#: A heatmap with more rows or columns than this writes no numbers on its cells (they would not
#: fit) and says so in its title; it labels every k-th row and column only.
MAX_ANNOTATED_SIDE = 12


@dataclass(frozen=True)
class Heatmap:
    """What :func:`heatmap` drew.

    Attributes
    ----------
    ax : matplotlib.axes.Axes
    mesh : matplotlib.collections.QuadMesh
        The cells; ``mesh.get_array()`` holds the matrix, masked cells (``-inf``) masked.
    texts : list of matplotlib.text.Text
        The number on each cell, row by row; empty when the numbers are left out.
    colorbar : matplotlib.colorbar.Colorbar or None
        Its axes is a child of ``ax`` (``ax.child_axes``), beside the cells and exactly as tall.
    decimals : int
        Decimals of the numbers on the cells.
    """

    ax: Axes
    mesh: QuadMesh
    texts: list[Text]
    colorbar: Colorbar | None
    decimals: int


def heatmap(
    ax: Axes,
    matrix: npt.ArrayLike,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str | None = None,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    decimals: int = 2,
    colorbar: bool = True,
    xlabel: str = "keys",
    ylabel: str = "queries",
    annotate: bool | None = None,
    masked: npt.ArrayLike | None = None,
) -> Heatmap:
    """Draw ``matrix`` as a heatmap with every cell annotated with its value.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    matrix : array_like, shape (n_rows, n_cols)
        Finite values, or ``-inf`` for masked cells (drawn blank and annotated ``−∞``).
    row_labels : sequence of str, length n_rows
    col_labels : sequence of str, length n_cols
    title : str, optional
    cmap : str
        A colour map readable by colour-blind readers (``"viridis"``, ``"cividis"``, ...).
    vmin, vmax : float, optional
        Colour limits; by default the range of the finite values.
    decimals : int
        Decimals shown in each cell, 0 to 10 (:func:`format_cell`).
    colorbar : bool
        Draw a colour bar beside the heatmap, as tall as its cells.
    xlabel, ylabel : str
    annotate : bool, optional
        Write each cell's value on it. By default only when there are at most
        :data:`MAX_ANNOTATED_SIDE` rows and columns; otherwise the numbers are left out and the
        title says so (and only every k-th row and column is labelled).
    masked : array_like of bool, shape (n_rows, n_cols), optional
        ``True`` where a mask hides the cell (a padded key, a future token): drawn hatched on the
        background, not in the colour map, with its value still written (a weight of 0).

    Returns
    -------
    Heatmap

    Notes
    -----
    Each number is black or white, whichever has the higher contrast with its cell (at least
    4.5:1, :func:`~attention_lessons.kit.plots.text_color_on`). In a figure made by :func:`figure`,
    everything is drawn in the figure's style: title, colour bar, the lines between the cells. Masked cells
    (``-inf``, or marked by ``masked``) are hatched. The panel's text alternative names the shape
    and the key numbers, and its table holds every value
    (:func:`~attention_lessons.kit.plots.panel_text.heatmap_description`).
    """
    values = _matrix(matrix, row_labels, col_labels)
    hidden = _hidden(masked, values.shape)
    decimals = check_decimals(decimals)
    low, high = color_limits(values, vmin, vmax)
    too_many = max(values.shape) > MAX_ANNOTATED_SIDE
    write_numbers = not too_many if annotate is None else bool(annotate)
    with drawing_style(ax):
        cax = None
        if colorbar:
            cax = ax.inset_axes([1.02, 0.0, 0.04, 1.0])  # a child of ax, placed at every draw
            layout = _ColorbarLayout(ax, cax)
            ax.set_axes_locator(layout.heatmap_box)
            cax.set_axes_locator(layout.colorbar_box)
        sns.heatmap(
            np.where(np.isfinite(values) & ~hidden, values, np.nan),
            ax=ax,
            cmap=cmap,
            vmin=low,
            vmax=high,
            annot=False,
            cbar=colorbar,
            cbar_ax=cax,
            square=True,
            linewidths=0.5 if not too_many else 0.0,
            linecolor=ax.get_facecolor(),
            xticklabels=list(col_labels),
            yticklabels=list(row_labels),
        )
        mesh = ax.collections[-1]  # what seaborn has just drawn
        assert isinstance(mesh, QuadMesh)
        texts = _annotate(ax, mesh, values, decimals, hidden) if write_numbers else []
        if too_many:
            _thin_tick_labels(ax, row_labels, col_labels)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.tick_params(axis="y", labelrotation=0)
        left_out = annotate is None and too_many
        note = f"{values.shape[0]} × {values.shape[1]} cells: values not written" if left_out else None
        heading = "\n".join(line for line in (title, note) if line)
        if heading:
            ax.set_title(heading)
        if np.isneginf(values).any() or hidden.any():
            _hatch_masked(ax)
    said = heatmap_description(
        values,
        row_labels,
        col_labels,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        decimals=decimals,
        hidden=hidden,
    )
    describe(ax, said.text, said.tables, said.short)
    return Heatmap(ax, mesh, texts, mesh.colorbar, decimals)


def _matrix(matrix: npt.ArrayLike, row_labels: Sequence[str], col_labels: Sequence[str]) -> np.ndarray:
    values = as_real_array(matrix, "matrix", allow_neg_inf=True)
    if values.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n_rows, n_cols), got shape {values.shape}")
    if (len(row_labels), len(col_labels)) != values.shape:
        raise ValueError(
            f"matrix has shape {values.shape} but there are {len(row_labels)} row labels "
            f"and {len(col_labels)} column labels"
        )
    return values


def _hidden(masked: npt.ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray:
    """``masked`` as a boolean array of ``shape`` (all False when None), or a clear error."""
    if masked is None:
        return np.zeros(shape, dtype=bool)
    hidden = np.asarray(masked)
    if hidden.dtype != bool or hidden.shape != shape:
        raise ValueError(
            f"masked must be a boolean array of the matrix's shape {shape}, "
            f"got {hidden.dtype} of shape {hidden.shape}"
        )
    return hidden


def _hatch_masked(ax: Axes) -> None:
    """Hatch what shows through the masked cells (the axes' background), so that they are told
    from the others by more than their colour."""
    ax.patch.set_hatch("//")
    ax.patch.set_edgecolor(mpl.rcParams["axes.edgecolor"])
    ax.patch.set_linewidth(0.0)


def _annotate(ax: Axes, mesh: QuadMesh, values: np.ndarray, decimals: int, hidden: np.ndarray) -> list[Text]:
    """Write each cell's value, in black or white, whichever reads better on the cell's colour
    (the background's, for a masked cell)."""
    cell_colors = mesh.cmap(mesh.norm(values))  # what the mesh draws, under/over colours included
    background = to_rgba(ax.get_facecolor())  # what a masked cell shows
    texts = []
    for (i, j), value in np.ndenumerate(values):
        cell = cell_colors[i, j] if np.isfinite(value) and not hidden[i, j] else background
        text = format_cell(value, decimals)
        texts.append(
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=9, color=text_color_on(cell))
        )
    return texts


def _thin_tick_labels(ax: Axes, row_labels: Sequence[str], col_labels: Sequence[str]) -> None:
    """Label every k-th row and column, so that at most about MAX_ANNOTATED_SIDE labels show."""
    for labels, set_ticks in ((col_labels, ax.set_xticks), (row_labels, ax.set_yticks)):
        step = math.ceil(len(labels) / MAX_ANNOTATED_SIDE)
        shown = range(0, len(labels), step)
        set_ticks([k + 0.5 for k in shown], [labels[k] for k in shown])


class _ColorbarLayout:
    """Where :func:`heatmap` puts its cells and its colour bar: side by side, equally tall.

    The cells are square, so the heatmap's axes shrinks inside the space a layout gives it, and a
    colour bar laid out for that space stands taller than the cells. Instead, the heatmap's axes
    keeps room on its right for the bar, the bar's tick labels (measured at every layout and
    draw) and ``AFTER`` inches of space before whatever is to the right (the next panel's
    labels must not read as this bar's), so heatmap and bar, together centred in that space,
    never overlap a neighbour and no layout engine has to move them; the bar then follows the
    cells' drawn box: the same bottom and height, ``GAP`` inches to the right, ``WIDTH`` inches
    wide. (A heatmap in the last column of its grid keeps no ``AFTER`` space.)
    """

    GAP = 0.08
    WIDTH = 0.12
    AFTER = 0.25

    def __init__(self, ax: Axes, cax: Axes) -> None:
        self.ax, self.cax = ax, cax

    def heatmap_box(self, ax: Axes, renderer: object = None) -> Bbox:
        """The heatmap's space without the bar's: the square cells are centred in it."""
        space = ax.get_position(original=True)
        fig = ax.figure
        assert fig is not None
        labels = self.cax.yaxis.get_tightbbox(renderer)  # its tick labels, wherever the bar is now
        label_px = max(0.0, labels.x1 - self.cax.bbox.x1) if labels is not None else 0.0
        after = self.AFTER if _has_right_neighbour(ax) else 0.0
        reserve = ((self.GAP + self.WIDTH + after) * fig.dpi + label_px) / fig.bbox.width
        width = max(space.width - reserve, 0.1 * space.width)
        return Bbox.from_bounds(space.x0, space.y0, width, space.height)

    def colorbar_box(self, cax: Axes, renderer: object = None) -> Bbox:
        """Beside the cells as drawn, exactly as tall."""
        cells = self.ax.get_position()  # the heatmap's box, its locator and aspect applied
        fig = self.ax.figure
        assert fig is not None
        inch = fig.dpi / fig.bbox.width  # one inch, as a share of the (sub)figure's width
        return Bbox.from_bounds(cells.x1 + self.GAP * inch, cells.y0, self.WIDTH * inch, cells.height)


def _has_right_neighbour(ax: Axes) -> bool:
    """Whether ``ax`` is in a grid of panels with another column to its right."""
    spec = ax.get_subplotspec()
    return spec is not None and spec.colspan.stop < spec.get_gridspec().ncols
