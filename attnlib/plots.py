"""Pictures of attention: annotated heatmaps, 2D vectors and the 2×2 overview.

Everything here uses Matplotlib's object-oriented API (:class:`matplotlib.figure.Figure`), never
pyplot's global state, so the same code can run in a widget callback on another thread.
Figures are drawn once; :func:`update_heatmap` and :func:`update_vectors` change the drawn
artists in place, which is what the interactive explorers do on every slider move. Each
explorer's picture is a figure function here (:func:`attention_figure`, :func:`similarity_figure`,
:func:`scaling_figure`, :func:`softmax_figure`) with a matching ``update_*`` function, so a
lesson's static picture and its widget are drawn by the same code. :class:`FigureRenderer` turns
such a figure into PNG bytes again and again, redrawing only the artists that change.

Colour maps are readable by colour-blind readers (viridis, cividis) and the arrows use the
Okabe–Ito palette. Two styles: ``"light"`` and ``"dark"``.
"""

from __future__ import annotations

import io
import math
import struct
import weakref
import zlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.patches import StepPatch
from matplotlib.quiver import Quiver
from matplotlib.text import Text
from matplotlib.ticker import PercentFormatter
from matplotlib.transforms import Bbox

from attnlib._validate import as_real_array
from attnlib.core import AttentionSteps, _softmax
from attnlib.scaling import D_K_VALUES, ScalingStatistics, scaling_statistics
from attnlib.similarity import similarity

__all__ = [
    "OKABE_ITO",
    "RAW_COLOR",
    "SCALED_COLOR",
    "STYLES",
    "Arrows",
    "AttentionFigure",
    "FigureRenderer",
    "ScalingFigure",
    "SimilarityFigure",
    "SoftmaxFigure",
    "attention_figure",
    "check_style",
    "encode_png",
    "figure",
    "format_cell",
    "heatmap",
    "place_labels",
    "png_bytes",
    "scaling_bins",
    "scaling_figure",
    "score_limits",
    "show",
    "similarity_figure",
    "similarity_limits",
    "similarity_text",
    "softmax_figure",
    "style_context",
    "update_attention_figure",
    "update_heatmap",
    "update_scaling_figure",
    "update_similarity_figure",
    "update_softmax_figure",
    "update_vectors",
    "vectors",
]

#: Okabe–Ito colours (distinguishable with every common colour-vision deficiency), without black.
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442")

_BASE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.titlecolor": "auto",  # the text colour of the style
    "figure.dpi": 100,
}
#: Matplotlib rc settings of the two styles.
STYLES: dict[str, dict[str, object]] = {
    "light": {
        **_BASE,
        "figure.facecolor": "white",
        "axes.facecolor": "white",
        "savefig.facecolor": "white",
        "text.color": "#222222",
        "axes.labelcolor": "#222222",
        "axes.edgecolor": "#555555",
        "xtick.color": "#333333",
        "ytick.color": "#333333",
        "grid.color": "#dddddd",
    },
    "dark": {
        **_BASE,
        "figure.facecolor": "#1e1e1e",
        "axes.facecolor": "#1e1e1e",
        "savefig.facecolor": "#1e1e1e",
        "text.color": "#eeeeee",
        "axes.labelcolor": "#eeeeee",
        "axes.edgecolor": "#bbbbbb",
        "xtick.color": "#dddddd",
        "ytick.color": "#dddddd",
        "grid.color": "#444444",
    },
}
#: One colour per meaning, in every figure and explorer: raw scores q·k (vermilion) ...
RAW_COLOR = OKABE_ITO[5]
#: ... and scaled scores q·k/√d_k (blue).
SCALED_COLOR = OKABE_ITO[4]
_MASKED_TEXT = "−∞"
_MINUS = "−"  # U+2212, the minus sign of "−∞" and of every negative cell

#: The style of every figure made here (by :func:`figure` or a figure function), so that
#: :func:`heatmap` and :func:`vectors` draw into it in its style, whatever rcParams are now.
_FIGURE_STYLES: weakref.WeakKeyDictionary[Figure, str] = weakref.WeakKeyDictionary()
#: The decimals each heatmap was drawn with, for :func:`update_heatmap`.
_HEATMAP_DECIMALS: weakref.WeakKeyDictionary[Axes, int] = weakref.WeakKeyDictionary()


def check_style(style: str) -> None:
    """Raise ValueError unless ``style`` is one of :data:`STYLES`."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {sorted(STYLES)}, got {style!r}")


@contextmanager
def style_context(style: str = "light") -> Iterator[None]:
    """Draw inside this context to use one of :data:`STYLES` (``"light"`` or ``"dark"``)."""
    check_style(style)
    with mpl.rc_context(STYLES[style]):
        yield


def _new_figure(figsize: tuple[float, float], style: str, *, pad: float | None = None) -> Figure:
    """A constrained-layout figure in ``style``, remembered as drawn in it (call inside the style).

    ``pad`` (inches) is the space around every panel, by default Matplotlib's.
    """
    layout = "constrained" if pad is None else ConstrainedLayoutEngine(w_pad=pad, h_pad=pad)
    fig = Figure(figsize=figsize, layout=layout)
    _FIGURE_STYLES[fig] = style
    return fig


def _style_of(ax: Axes) -> AbstractContextManager[object]:
    """Draw into ``ax`` in the style of its figure; in the current rcParams if it is not ours."""
    fig = ax.figure
    style = _FIGURE_STYLES.get(fig) if fig is not None else None
    if style is None and fig is not None and fig.figure is not fig:  # a subfigure: its root's style
        style = _FIGURE_STYLES.get(fig.figure)
    return nullcontext() if style is None else style_context(style)


def figure(
    nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] = (5.0, 4.0), style: str = "light"
) -> tuple[Figure, np.ndarray]:
    """A new figure and a 2-D array of its axes, drawn in ``style``.

    The figure remembers its style: :func:`heatmap` and :func:`vectors` draw into it in that
    style (titles, colour bars, grid and origin lines), whatever the global rcParams are then.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray of Axes, shape (nrows, ncols)
    """
    with style_context(style):
        fig = _new_figure(figsize, style)
        axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def format_cell(value: float, decimals: int = 2) -> str:
    """How a heatmap cell shows a value: fixed decimals, ``−∞`` for a masked (−inf) score.

    Negative numbers get a real minus sign (U+2212, as in ``−∞``): ``format_cell(-0.5)`` is
    ``"−0.50"``. A value that rounds to zero is ``"0.00"``, never ``"−0.00"``.
    """
    if np.isneginf(value):
        return _MASKED_TEXT
    text = f"{value:.{decimals}f}"
    if text.startswith("-"):
        digits = text[1:]
        return digits if digits.strip("0.") == "" else _MINUS + digits
    return text


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
) -> Axes:
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
        Decimals shown in each cell.
    colorbar : bool
        Draw a colour bar beside the heatmap, as tall as its cells.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, holding the heatmap mesh (``ax.collections[0]``) and one text per cell, row by row
        (``ax.texts``). The colour bar is ``ax.collections[0].colorbar``; its axes is a child of
        ``ax`` (``ax.child_axes``), kept beside the cells and exactly as tall as they are.

    Notes
    -----
    In a figure made by :func:`figure` (or a figure function of this module), everything is drawn
    in the figure's style: title, colour bar, the lines between the cells.
    """
    values = _matrix(matrix, row_labels, col_labels)
    lo, hi = _limits(values, vmin, vmax)
    with _style_of(ax):
        cax = None
        if colorbar:
            cax = ax.inset_axes([1.02, 0.0, 0.04, 1.0])  # a child of ax, placed at every draw
            layout = _ColorbarLayout(ax, cax)
            ax.set_axes_locator(layout.heatmap_box)
            cax.set_axes_locator(layout.colorbar_box)
        sns.heatmap(
            np.where(np.isfinite(values), values, np.nan),
            ax=ax,
            cmap=cmap,
            vmin=lo,
            vmax=hi,
            annot=False,
            cbar=colorbar,
            cbar_ax=cax,
            square=True,
            linewidths=0.5,
            linecolor=ax.get_facecolor(),
            xticklabels=list(col_labels),
            yticklabels=list(row_labels),
        )
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                ax.text(j + 0.5, i + 0.5, "", ha="center", va="center", fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.tick_params(axis="y", labelrotation=0)
        if title:
            ax.set_title(title)
    _HEATMAP_DECIMALS[ax] = decimals
    _annotate(ax, values, decimals)
    return ax


class _ColorbarLayout:
    """Where :func:`heatmap` puts its cells and its colour bar: side by side, equally tall.

    The cells are square, so the heatmap's axes shrinks inside the space a layout gives it, and a
    colour bar laid out for that space stands taller than the cells. Instead, the heatmap's axes
    keeps room on its right for the bar and the bar's tick labels (measured at every layout and
    draw), so heatmap and bar, together centred in that space, never overlap a neighbour and no
    layout engine has to move them; the bar then follows the cells' drawn box: the same bottom and
    height, ``GAP`` inches to the right, ``WIDTH`` inches wide.
    """

    GAP = 0.08
    WIDTH = 0.12

    def __init__(self, ax: Axes, cax: Axes) -> None:
        self.ax, self.cax = ax, cax

    def heatmap_box(self, ax: Axes, renderer: object = None) -> Bbox:
        """The heatmap's space without the bar's: the square cells are centred in it."""
        space = ax.get_position(original=True)
        fig = ax.figure
        assert fig is not None
        labels = self.cax.yaxis.get_tightbbox(renderer)  # its tick labels, wherever the bar is now
        label_px = max(0.0, labels.x1 - self.cax.bbox.x1) if labels is not None else 0.0
        reserve = ((self.GAP + self.WIDTH) * fig.dpi + label_px) / fig.bbox.width
        width = max(space.width - reserve, 0.1 * space.width)
        return Bbox.from_bounds(space.x0, space.y0, width, space.height)

    def colorbar_box(self, cax: Axes, renderer: object = None) -> Bbox:
        """Beside the cells as drawn, exactly as tall."""
        cells = self.ax.get_position()  # the heatmap's box, its locator and aspect applied
        fig = self.ax.figure
        assert fig is not None
        inch = fig.dpi / fig.bbox.width  # one inch, as a share of the (sub)figure's width
        return Bbox.from_bounds(cells.x1 + self.GAP * inch, cells.y0, self.WIDTH * inch, cells.height)


def update_heatmap(
    ax: Axes,
    matrix: npt.ArrayLike,
    *,
    vmin: float | None = None,
    vmax: float | None = None,
    decimals: int | None = None,
) -> None:
    """Show new values in a heatmap drawn by :func:`heatmap`, changing its artists in place.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        An axes that :func:`heatmap` drew into.
    matrix : array_like, same shape as the drawn one
    vmin, vmax : float, optional
        New colour limits; by default the range of the finite values.
    decimals : int, optional
        Decimals shown in each cell; by default those the heatmap was drawn (or last updated) with.
    """
    mesh = ax.collections[0]
    values = as_real_array(matrix, "matrix", allow_neg_inf=True)
    drawn_shape = np.shape(mesh.get_array())
    if values.shape != drawn_shape:
        raise ValueError(f"matrix has shape {values.shape}; the heatmap shows shape {drawn_shape}")
    if decimals is None:
        decimals = _HEATMAP_DECIMALS.get(ax, 2)
    _HEATMAP_DECIMALS[ax] = decimals
    mesh.set_array(np.ma.masked_invalid(values))
    mesh.set_clim(*_limits(values, vmin, vmax))
    _annotate(ax, values, decimals)


def _annotate(ax: Axes, values: np.ndarray, decimals: int) -> None:
    """Write each cell's value in a colour that reads on the cell's colour."""
    mesh = ax.collections[0]
    colours = mesh.cmap(mesh.norm(values))
    background = mpl.colors.to_rgba(ax.get_facecolor())
    texts: list[Text] = ax.texts[: values.size]
    for text, value, rgba in zip(texts, values.ravel(), colours.reshape(-1, 4), strict=True):
        cell = rgba if np.isfinite(value) else background
        text.set_text(format_cell(value, decimals))
        text.set_color("#111111" if _luminance(cell) > 0.408 else "#ffffff")


def _luminance(rgba: Sequence[float]) -> float:
    """Relative luminance of a colour (WCAG), to pick dark or light text on it."""
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


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


def _limits(values: np.ndarray, vmin: float | None, vmax: float | None) -> tuple[float, float]:
    """Colour limits: the given ones, else the finite range (widened if it is a single value)."""
    finite = values[np.isfinite(values)]
    lo = vmin if vmin is not None else (float(finite.min()) if finite.size else 0.0)
    hi = vmax if vmax is not None else (float(finite.max()) if finite.size else 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5, lo + 0.5
    return lo, hi


@dataclass(frozen=True)
class Arrows:
    """The artists of 2D vectors drawn by :func:`vectors`.

    Attributes
    ----------
    quiver : matplotlib.quiver.Quiver
        One arrow per vector; ``quiver.U`` and ``quiver.V`` hold the components and
        ``quiver.get_offsets()`` the tails, shape (n, 2). (``quiver.X`` and ``quiver.Y`` are the
        tails it was drawn with: :func:`update_vectors` does not change them.)
    labels : list of matplotlib.text.Text
        One label per vector, anchored at its tip.
    spread_labels : bool
        Whether the labels of tips that end close together are spread out (:func:`place_labels`),
        when drawn and by default when moved.
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
    origins : array_like, shape (n, 2), optional
        The arrow tails; zeros by default.
    colors : sequence of str
        Colours, cycled over the vectors.
    alpha : float
        Opacity (use a low one to show "before" vectors behind "after" ones).
    title : str, optional
    limits : (float, float), optional
        The same (low, high) for both axes; by default fitted to every tip and the origin.
    spread_labels : bool
        Put the labels of tips that end close together on either side, so that they do not
        overlap (:func:`place_labels`); False leaves every label above and right of its tip.

    Returns
    -------
    Arrows

    Notes
    -----
    In a figure made by :func:`figure` (or a figure function of this module), everything is drawn
    in the figure's style: title, grid, the lines through the origin.
    """
    if len(colors) == 0:
        raise ValueError("colors must name at least one colour (they are cycled over the vectors)")
    tips, tails = _tips_and_tails(points, origins, len(labels))
    delta = tips - tails
    palette = [colors[i % len(colors)] for i in range(len(tips))]
    with _style_of(ax):
        quiver = ax.quiver(
            tails[:, 0], tails[:, 1], delta[:, 0], delta[:, 1],
            color=palette, angles="xy", scale_units="xy", scale=1, width=0.012, alpha=alpha,
        )  # fmt: skip
        texts = [
            ax.text(x, y, f" {label}", color=colour, fontsize=9, alpha=alpha, va="bottom")
            for (x, y), label, colour in zip(tips, labels, palette, strict=True)
        ]
        ax.set_aspect("equal")
        ax.grid(True, linewidth=0.6)
        ax.axhline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        ax.axvline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        _fit(ax, tips, tails, limits)
        if title:
            ax.set_title(title)
    arrows = Arrows(quiver, texts, bool(spread_labels))
    if spread_labels:
        place_labels(arrows)
    return arrows


def update_vectors(
    ax: Axes,
    arrows: Arrows,
    points: npt.ArrayLike,
    *,
    origins: npt.ArrayLike | None = None,
    limits: tuple[float, float] | None = None,
    spread_labels: bool | None = None,
) -> None:
    """Move the arrows drawn by :func:`vectors` to new tips (and tails), in place.

    ``spread_labels`` (by default as :func:`vectors` drew them) spreads the labels of tips that
    now end close together (:func:`place_labels`); False puts every label above and right of its
    tip.
    """
    tips, tails = _tips_and_tails(points, origins, len(arrows.labels))
    delta = tips - tails
    arrows.quiver.set_offsets(tails)
    arrows.quiver.set_UVC(delta[:, 0], delta[:, 1])
    for text, tip in zip(arrows.labels, tips, strict=True):
        text.set_position(tip)
    _fit(ax, tips, tails, limits)
    if arrows.spread_labels if spread_labels is None else spread_labels:
        place_labels(arrows)
    else:
        place_labels(arrows, distance=0.0)  # every tip alone: every label in the plain place


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


def _fit(ax: Axes, tips: np.ndarray, tails: np.ndarray, limits: tuple[float, float] | None) -> None:
    """Set square axis limits: the given ones, else fitted to every tip, tail and the origin."""
    if limits is None:
        limits = _limits_2d(tips, tails)
    ax.set_xlim(*limits)
    ax.set_ylim(*limits)


@dataclass(frozen=True)
class AttentionFigure:
    """The 2×2 overview and the artists that :func:`update_attention_figure` moves.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    embeddings, scores, weights, context : matplotlib.axes.Axes
        The four panels, in reading order.
    embedding_arrows, context_arrows, faint_arrows : Arrows
        The embeddings (top left), the contextualized vectors and, faint behind them, the
        embeddings again (bottom right).
    """

    figure: Figure
    embeddings: Axes
    scores: Axes
    weights: Axes
    context: Axes
    embedding_arrows: Arrows
    context_arrows: Arrows
    faint_arrows: Arrows

    def dynamic_artists(self) -> list[Artist]:
        """What :func:`update_attention_figure` changes, in drawing order (for :class:`FigureRenderer`).

        The arrows and their labels, and both heatmap meshes with their cell texts. Axis limits
        are not included (those of the arrow panels, and of the raw scores' colour bar): when
        they change, the renderer redraws the whole figure.
        """
        artists: list[Artist] = [self.embedding_arrows.quiver, *self.embedding_arrows.labels]
        artists += [self.scores.collections[0], *self.scores.texts]
        artists += [self.weights.collections[0], *self.weights.texts]
        artists += [self.faint_arrows.quiver, self.context_arrows.quiver]
        artists += [*self.faint_arrows.labels, *self.context_arrows.labels]
        return artists


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
    attention weights (each row sums to 1). Bottom right: the contextualized vectors (the
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
        Move the labels of arrows that end close together to either side (:func:`place_labels`),
        as :func:`vectors` does by default; False leaves every label above and right of its tip.

    Returns
    -------
    AttentionFigure
    """
    X = _check_overview(steps, tokens, embeddings)
    limits = _limits_2d(X, steps.output)
    spread = bool(spread_labels)
    with style_context(style):
        fig = _new_figure(figsize, style, pad=0.1)  # room for labels beyond the arrow panels
        (ax_x, ax_s), (ax_w, ax_c) = fig.subplots(2, 2)
    embedding_arrows = vectors(ax_x, X, tokens, title="1. Embeddings X", limits=limits, spread_labels=spread)
    heatmap(ax_s, steps.raw_scores, tokens, tokens, title="2. Raw scores Q Kᵀ", cmap="cividis")
    heatmap(ax_w, steps.weights, tokens, tokens, title="3. Weights softmax(Q Kᵀ/√d_k)", vmin=0, vmax=1)
    faint_arrows = vectors(ax_c, X, tokens, alpha=0.25, limits=limits, spread_labels=spread)
    context_arrows = vectors(
        ax_c, steps.output, tokens, title="4. Contextualized vectors (weights · V)", limits=limits,
        spread_labels=spread,
    )  # fmt: skip
    return AttentionFigure(fig, ax_x, ax_s, ax_w, ax_c, embedding_arrows, context_arrows, faint_arrows)


def update_attention_figure(
    view: AttentionFigure,
    steps: AttentionSteps,
    embeddings: npt.ArrayLike,
    *,
    decimals: int | None = None,
    limits: tuple[float, float] | None = None,
    score_limits: tuple[float, float] | None = None,
    spread_labels: bool | None = None,
) -> None:
    """Show new embeddings and their attention in an overview, moving its artists in place.

    ``limits`` (the same (low, high) for both arrow panels) defaults to a fit of every vector and
    the origin, and ``score_limits`` (the colour limits of the raw scores) to their range, as
    :func:`attention_figure` draws them. ``decimals`` defaults to those the heatmaps show now,
    ``spread_labels`` to what :func:`attention_figure` was given.
    """
    X = _check_overview(steps, view.embedding_arrows.labels, embeddings)
    if limits is None:
        limits = _limits_2d(X, steps.output)
    update_vectors(view.embeddings, view.embedding_arrows, X, limits=limits, spread_labels=spread_labels)
    low, high = (None, None) if score_limits is None else score_limits
    update_heatmap(view.scores, steps.raw_scores, vmin=low, vmax=high, decimals=decimals)
    update_heatmap(view.weights, steps.weights, vmin=0, vmax=1, decimals=decimals)
    update_vectors(view.context, view.faint_arrows, X, limits=limits, spread_labels=spread_labels)
    update_vectors(
        view.context, view.context_arrows, steps.output, limits=limits, spread_labels=spread_labels
    )


def place_labels(arrows: Arrows, *, distance: float = 0.08) -> None:
    """Put the labels of arrows that end close together on either side, so they do not overlap.

    A label normally starts at its arrow's tip, above it. Tips closer than ``distance`` (a share
    of the axes' width) form a group; within a group, from the highest tip down, the labels go
    alternately to the left of and above the tip, and to the right of and below it. The labels
    stay anchored at the tips (their positions do not change), only their alignment does.

    Parameters
    ----------
    arrows : Arrows
        Drawn by :func:`vectors`, with the axes' limits already set.
    distance : float
    """
    ax = arrows.quiver.axes
    low, high = ax.get_xlim()
    reach = distance * abs(high - low)
    tips = np.array([label.get_position() for label in arrows.labels], dtype=float)
    names = [label.get_text().strip() for label in arrows.labels]
    group = list(range(len(tips)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(len(tips)):
        for j in range(i + 1, len(tips)):
            if math.dist(tips[i], tips[j]) < reach:
                group[root(j)] = root(i)
    members: dict[int, list[int]] = {}
    for i in range(len(tips)):
        members.setdefault(root(i), []).append(i)
    for indices in members.values():
        order = sorted(indices, key=lambda i: (-tips[i, 1], tips[i, 0]))
        for rank, i in enumerate(order):
            label = arrows.labels[i]
            if len(order) > 1 and rank % 2 == 0:
                label.set_text(f"{names[i]} ")
                label.set_horizontalalignment("right")
                label.set_verticalalignment("bottom")
            elif len(order) > 1:
                label.set_text(f" {names[i]}")
                label.set_horizontalalignment("left")
                label.set_verticalalignment("top")
            else:
                label.set_text(f" {names[i]}")
                label.set_horizontalalignment("left")
                label.set_verticalalignment("bottom")


def _check_overview(steps: AttentionSteps, tokens: Sequence[object], embeddings: npt.ArrayLike) -> np.ndarray:
    X = as_real_array(embeddings, "embeddings")
    n = len(tokens)
    if steps.weights.shape != (n, n) or X.shape != (n, 2) or steps.output.shape != (n, 2):
        raise ValueError(
            "the overview needs self-attention of n tokens in 2D: got "
            f"{n} tokens, embeddings {X.shape}, weights {steps.weights.shape}, output {steps.output.shape}"
        )
    return X


def _limits_2d(*arrays: np.ndarray) -> tuple[float, float]:
    """Square limits that show every point and the origin, with a margin for labels."""
    every = np.concatenate([np.ravel(a) for a in arrays] + [np.zeros(1)])
    low, high = float(every.min()), float(every.max())
    pad = 0.15 * max(high - low, 0.5)
    return low - pad, high + pad


def png_bytes(fig: Figure, *, dpi: float = 100) -> bytes:
    """Render ``fig`` to PNG bytes with the Agg renderer (no pyplot, safe in any thread)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def show(fig: Figure, *, dpi: float = 100) -> None:
    """Display ``fig`` in a notebook as a PNG image only.

    Unlike displaying the Figure object, this adds no ``<Figure size …>`` text output, so the
    notebook's stored text outputs stay stable under nbval.
    """
    from IPython.display import display

    display({"image/png": png_bytes(fig, dpi=dpi)}, raw=True)


class FigureRenderer:
    """Render one figure to PNG bytes again and again, redrawing only what changes.

    The first render draws the whole figure, which runs its layout engine once, and then
    freezes the layout (and pins every axes placed by a locator, such as a heatmap and its colour
    bar, where it is), so later renders never move a panel. It keeps a snapshot of everything
    that is not ``dynamic`` (the background) and, on every later render, restores the snapshot
    and draws only the dynamic artists on top of it (blitting). When the axis limits of a static
    panel change, or after :meth:`invalidate`, the next render draws the background again
    (and that frame is exactly what a full draw gives). The pixels are encoded by
    :func:`encode_png`.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    dynamic : sequence of Artist
        What changes between renders, in drawing order: single artists (a heatmap mesh, texts,
        arrows) or whole axes (drawn with their ticks, for panels whose limits move). Do not list
        an axes and one of its children both.
    dpi : float
        Pixels per inch of the PNG (``100`` gives the pixels of :func:`png_bytes`).
    compress_level : int
        zlib level of the PNG, 0 to 9 (see :func:`encode_png`).

    Attributes
    ----------
    full_draws : int
        How many renders drew the whole figure (the rest drew only the dynamic artists).
    """

    def __init__(
        self, fig: Figure, dynamic: Sequence[Artist] = (), *, dpi: float = 100, compress_level: int = 1
    ) -> None:
        if not 0 <= compress_level <= 9:
            raise ValueError(f"compress_level must be 0 to 9, got {compress_level}")
        self.figure = fig
        self.dynamic = list(dynamic)
        self.dpi = float(dpi)
        self.compress_level = int(compress_level)
        self.full_draws = 0
        self._background: object | None = None
        self._signature: list[tuple[tuple[float, float], tuple[float, float]]] = []
        self._laid_out = False

    def invalidate(self) -> None:
        """Draw the whole figure at the next render (call it after changing a static artist)."""
        self._background = None

    def png(self) -> bytes:
        """The figure as PNG bytes, as it is now."""
        fig = self.figure
        if not isinstance(fig.canvas, FigureCanvasAgg):
            FigureCanvasAgg(fig)
        if fig.dpi != self.dpi:
            fig.set_dpi(self.dpi)
            self._background = None
        canvas = fig.canvas
        assert isinstance(canvas, FigureCanvasAgg)
        if self._background is None or self._static_signature() != self._signature:
            self._draw_background(canvas)
            canvas.draw()  # the frame itself: exactly what a full draw (and png_bytes) gives
        else:
            canvas.restore_region(self._background)
            for artist in self.dynamic:
                fig.draw_artist(artist)
        return encode_png(np.asarray(canvas.buffer_rgba())[..., :3], compress_level=self.compress_level)

    def _draw_background(self, canvas: FigureCanvasAgg) -> None:
        fig = self.figure
        if not self._laid_out:
            canvas.draw()  # everything, with the layout engine: the same layout as a static figure
            fig.set_layout_engine("none")  # freeze it
            _pin_located_axes(fig.axes)
            self._laid_out = True
        previous = [artist.get_animated() for artist in self.dynamic]
        for artist in self.dynamic:
            artist.set_animated(True)  # left out of a full draw
        try:
            canvas.draw()
        finally:
            for artist, animated in zip(self.dynamic, previous, strict=True):
                artist.set_animated(animated)
        self._background = canvas.copy_from_bbox(fig.bbox)
        self._signature = self._static_signature()
        self.full_draws += 1

    def _static_signature(self) -> list[tuple[tuple[float, float], tuple[float, float]]]:
        """The limits of every static axes: when they change, the background is out of date.

        Child axes count too (a heatmap's colour bar is one: its limits follow the colour limits).
        """
        dynamic = {id(artist) for artist in self.dynamic}
        static: list[Axes] = []
        stack = list(self.figure.axes)
        while stack:
            ax = stack.pop(0)
            if id(ax) not in dynamic:
                static.append(ax)
                stack.extend(ax.child_axes)
        return [(tuple(ax.get_xlim()), tuple(ax.get_ylim())) for ax in static]


def _pin_located_axes(axes: Sequence[Axes]) -> None:
    """Fix every axes that a locator places (and their child axes) where it was last drawn."""
    for ax in axes:
        if ax.get_axes_locator() is not None:
            position = ax.get_position()  # where the locator put it at the last draw
            ax.set_axes_locator(None)
            ax.set_position(position)
        _pin_located_axes(ax.child_axes)


def encode_png(rgb: np.ndarray, *, compress_level: int = 1) -> bytes:
    """Encode an image as PNG bytes, fast: the "Up" row filter and a low zlib level.

    Pillow's encoder picks a filter for every row, which costs more than drawing a frame of an
    explorer; plots change little from one row to the next, so "Up" (each row minus the row
    above) compresses them about as well, in a third of the time. zlib releases the GIL.

    Parameters
    ----------
    rgb : numpy.ndarray of uint8, shape (height, width, 3)
    compress_level : int
        zlib level, 0 (none) to 9 (smallest, slowest).

    Returns
    -------
    bytes
        A PNG: 8-bit RGB, no metadata.
    """
    pixels = np.asarray(rgb)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
        raise ValueError(
            f"rgb must be a uint8 array of shape (height, width, 3), got {pixels.dtype} {pixels.shape}"
        )
    height, width = pixels.shape[:2]
    rows = pixels.reshape(height, width * 3)
    filtered = np.empty((height, width * 3 + 1), dtype=np.uint8)
    filtered[:, 0] = 2  # filter type "Up"
    filtered[0, 0] = 0  # the first row has no row above: filter "None"
    filtered[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])  # wraps modulo 256, as PNG wants

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB, no interlace
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"IDAT", zlib.compress(filtered.tobytes(), compress_level)),
            chunk(b"IEND", b""),
        ]
    )


# --- two vectors: dot product, cosine and angle (lessons 01 and 03) --------------------------


@dataclass(frozen=True)
class SimilarityFigure:
    """Two 2D vectors, the projection of the second onto the first, their angle and the numbers.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    ax : matplotlib.axes.Axes
    arrows : Arrows
        The two vectors.
    shadow : matplotlib.lines.Line2D
        The projection of ``b`` onto the direction of ``a`` (``a·b = |a| × its signed length``).
    drop : matplotlib.lines.Line2D
        The dashed line from the tip of ``b`` to that projection.
    arc : matplotlib.lines.Line2D
        The angle θ between the vectors (empty when one of them is zero).
    readout : matplotlib.text.Text
        ``a·b``, ``|a| |b|``, ``cos θ`` and ``θ``, formatted.
    """

    figure: Figure
    ax: Axes
    arrows: Arrows
    shadow: Line2D
    drop: Line2D
    arc: Line2D
    readout: Text

    def dynamic_artists(self) -> list[Artist]:
        """What :func:`update_similarity_figure` changes, in drawing order."""
        return [self.shadow, self.drop, self.arc, self.arrows.quiver, *self.arrows.labels, self.readout]


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
        The same (low, high) for both axes; by default fitted to both vectors and the origin.
    title : str

    Returns
    -------
    SimilarityFigure
    """
    u, v = _two_vectors(a, b)
    if len(labels) != 2:
        raise ValueError(f"labels must name the two vectors, got {len(labels)} labels")
    with style_context(style):
        fig = _new_figure(figsize, style)
        ax = fig.subplots()
        arrows = vectors(ax, np.stack([u, v]), labels, limits=limits or _limits_2d(u, v), title=title)
        p, q = labels
        ax.set_xlabel(f"shaded: {q} projected onto {p};  {p}·{q} = |{p}| × its length")
        (shadow,) = ax.plot([], [], color=OKABE_ITO[0], linewidth=7, alpha=0.35, solid_capstyle="butt")
        (drop,) = ax.plot([], [], color=mpl.rcParams["text.color"], linewidth=1, linestyle="--")
        (arc,) = ax.plot([], [], color=mpl.rcParams["text.color"], linewidth=1.2)
        readout = ax.text(
            0.03, 0.97, "", transform=ax.transAxes, ha="left", va="top", family="monospace", fontsize=9,
            bbox={"boxstyle": "round", "facecolor": mpl.rcParams["axes.facecolor"],
                  "edgecolor": mpl.rcParams["grid.color"], "alpha": 0.9},
        )  # fmt: skip
    view = SimilarityFigure(fig, ax, arrows, shadow, drop, arc, readout)
    _draw_similarity(view, u, v)
    return view


def update_similarity_figure(
    view: SimilarityFigure, a: npt.ArrayLike, b: npt.ArrayLike, *, limits: tuple[float, float] | None = None
) -> None:
    """Show two new vectors in a figure drawn by :func:`similarity_figure`, in place.

    ``limits`` defaults to a fit of both vectors and the origin.
    """
    u, v = _two_vectors(a, b)
    update_vectors(view.ax, view.arrows, np.stack([u, v]), limits=limits or _limits_2d(u, v))
    _draw_similarity(view, u, v)


def _two_vectors(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    u = as_real_array(a, "a").astype(np.float64)
    v = as_real_array(b, "b").astype(np.float64)
    if u.shape != (2,) or v.shape != (2,):
        raise ValueError(f"a and b must be 2D vectors of shape (2,), got shapes {u.shape} and {v.shape}")
    return u, v


def _draw_similarity(view: SimilarityFigure, u: np.ndarray, v: np.ndarray) -> None:
    place_labels(view.arrows)
    sim = similarity(u, v)
    if sim.norm_a > 0:
        foot = (sim.dot / sim.norm_a**2) * u
        view.shadow.set_data([0.0, foot[0]], [0.0, foot[1]])
        view.drop.set_data([v[0], foot[0]], [v[1], foot[1]])
    else:
        view.shadow.set_data([], [])
        view.drop.set_data([], [])
    if sim.cosine is not None:
        start = math.atan2(u[1], u[0])
        turn = (math.atan2(v[1], v[0]) - start + math.pi) % (2 * math.pi) - math.pi
        if sim.angle_degrees is not None and sim.angle_degrees >= 179.999:
            turn = math.pi  # opposite vectors: draw the half circle
        radius = 0.3 * min(sim.norm_a, sim.norm_b)
        angles = start + np.linspace(0.0, turn, 40)
        view.arc.set_data(radius * np.cos(angles), radius * np.sin(angles))
    else:
        view.arc.set_data([], [])
    view.readout.set_text(similarity_text(u, v, [label.get_text().strip() for label in view.arrows.labels]))


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


# --- why √d_k: raw vs scaled scores of random vectors (lesson 04) ----------------------------


@dataclass(frozen=True)
class ScalingFigure:
    """Raw and scaled scores of random queries and keys, at one d_k, in three panels.

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
        Share of the scores in each bin.
    raw_bars, scaled_bars : matplotlib.container.BarContainer
        One bar per key: the weights without and with scaling.
    raw_marker, scaled_marker : matplotlib.lines.Line2D
        The current d_k on the variance curves.
    weight_numbers, variance_numbers : matplotlib.text.Text
        Largest weight and entropy; d_k and both variances.
    n_queries, n_keys, seed : int
        How the random queries and keys are drawn (:func:`attnlib.scaling.random_queries_keys`).
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
    n_queries: int
    n_keys: int
    seed: int

    def dynamic_artists(self) -> list[Artist]:
        """What :func:`update_scaling_figure` changes, in drawing order (the histogram panel whole)."""
        return [
            self.spread,
            *self.raw_bars.patches,
            *self.scaled_bars.patches,
            self.weight_numbers,
            self.raw_marker,
            self.scaled_marker,
            self.variance_numbers,
        ]


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
    and with it. Right: the variance of the scores against d_k, about ``d_k`` raw and about 1
    scaled, with the current d_k marked.

    Parameters
    ----------
    d_k : int
    n_queries, n_keys : int
    seed : int
        Seed of :func:`attnlib.scaling.random_queries_keys` (the same vectors for every figure).
    style : {"light", "dark"}
    figsize : (float, float)

    Returns
    -------
    ScalingFigure
    """
    stats = scaling_statistics(d_k, n_queries=n_queries, n_keys=n_keys, seed=seed)
    grid = [scaling_statistics(d, n_queries=n_queries, n_keys=n_keys, seed=seed) for d in D_K_VALUES]
    curve = np.array([(g.raw_variance, g.scaled_variance) for g in grid])
    keys = np.arange(n_keys)
    with style_context(style):
        fig = _new_figure(figsize, style)
        ax_s, ax_w, ax_v = fig.subplots(1, 3)
        edges = np.linspace(-1.0, 1.0, 2)
        raw_hist = ax_s.stairs([0.0], edges, fill=True, color=RAW_COLOR, alpha=0.45, label="raw q·k")
        scaled_hist = ax_s.stairs(
            [0.0], edges, fill=True, color=SCALED_COLOR, alpha=0.6, label="scaled q·k / √d_k"
        )
        ax_s.set_title(" ")  # the text is set for each d_k; the font now, in the style
        ax_s.set_xlabel("score")
        ax_s.set_ylabel("share of the scores")
        ax_s.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))  # same width at every d_k
        ax_s.legend(loc="upper right", fontsize=8)

        raw_bars = ax_w.bar(keys - 0.2, np.zeros(n_keys), 0.4, color=RAW_COLOR, label="without scaling")
        scaled_bars = ax_w.bar(
            keys + 0.2, np.zeros(n_keys), 0.4, color=SCALED_COLOR, label="scaled by 1/√d_k"
        )
        ax_w.set_xticks(keys, [f"k{j + 1}" for j in keys])
        ax_w.set_ylim(0, 1.45)
        ax_w.set_yticks(np.linspace(0, 1, 6))
        ax_w.set_xlabel("keys")
        ax_w.set_ylabel("weight")
        ax_w.set_title("One query's weights over the keys")
        ax_w.legend(loc="upper left", fontsize=8)
        weight_numbers = ax_w.text(
            0.98, 0.97, "", transform=ax_w.transAxes, ha="right", va="top", family="monospace", fontsize=8
        )

        ax_v.loglog(D_K_VALUES, curve[:, 0], "-", color=RAW_COLOR, marker=".", label="raw", base=2)
        ax_v.loglog(D_K_VALUES, curve[:, 1], "-", color=SCALED_COLOR, marker=".", label="scaled", base=2)
        (raw_marker,) = ax_v.plot([], [], "o", color=RAW_COLOR, markersize=9, markeredgecolor="black")
        (scaled_marker,) = ax_v.plot([], [], "o", color=SCALED_COLOR, markersize=9, markeredgecolor="black")
        ax_v.set_xlim(0.7, 1500)
        ax_v.set_ylim(0.25, 4096)
        ax_v.set_xlabel("d_k")
        ax_v.set_ylabel("variance of the scores")
        ax_v.set_title("Variance grows like d_k; scaled stays 1")
        ax_v.grid(True, linewidth=0.6)
        ax_v.legend(loc="center right", fontsize=8)
        variance_numbers = ax_v.text(
            0.03, 0.97, "", transform=ax_v.transAxes, ha="left", va="top", family="monospace", fontsize=8
        )
    view = ScalingFigure(
        fig, ax_s, ax_w, ax_v, raw_hist, scaled_hist, raw_bars, scaled_bars, raw_marker, scaled_marker,
        weight_numbers, variance_numbers, stats.raw.shape[0], stats.raw.shape[1], seed,
    )  # fmt: skip
    _draw_scaling(view, stats)
    return view


def update_scaling_figure(view: ScalingFigure, d_k: int) -> ScalingStatistics:
    """Show dimension ``d_k`` in a figure drawn by :func:`scaling_figure`, in place.

    Returns the :class:`~attnlib.scaling.ScalingStatistics` drawn.
    """
    stats = scaling_statistics(d_k, n_queries=view.n_queries, n_keys=view.n_keys, seed=view.seed)
    _draw_scaling(view, stats)
    return stats


def scaling_bins(d_k: int) -> np.ndarray:
    """The histogram bin edges of :func:`scaling_figure`: 48 bins over ±4.5 standard deviations."""
    half = 4.5 * math.sqrt(d_k)
    return np.linspace(-half, half, 49)


def _draw_scaling(view: ScalingFigure, stats: ScalingStatistics) -> None:
    edges = scaling_bins(stats.d_k)
    total = stats.raw.size
    raw_share = np.histogram(np.clip(stats.raw, edges[0], edges[-1]), edges)[0] / total
    scaled_share = np.histogram(np.clip(stats.scaled, edges[0], edges[-1]), edges)[0] / total
    view.raw_hist.set_data(raw_share, edges)
    view.scaled_hist.set_data(scaled_share, edges)
    view.spread.set_xlim(edges[0], edges[-1])
    view.spread.set_ylim(0, 1.25 * max(raw_share.max(), scaled_share.max()))
    view.spread.title.set_text(f"All {total} scores at d_k = {stats.d_k}")
    for bar, weight in zip(view.raw_bars.patches, stats.raw_weights[0], strict=True):
        bar.set_height(weight)
    for bar, weight in zip(view.scaled_bars.patches, stats.scaled_weights[0], strict=True):
        bar.set_height(weight)
    raw_w, scaled_w = stats.raw_weights[0], stats.scaled_weights[0]
    view.weight_numbers.set_text(
        "               raw   scaled\n"
        f"largest     {raw_w.max():6.3f}   {scaled_w.max():6.3f}\n"
        f"entropy     {_entropy(raw_w):6.3f}   {_entropy(scaled_w):6.3f}"
    )
    view.raw_marker.set_data([stats.d_k], [max(stats.raw_variance, 1e-12)])
    view.scaled_marker.set_data([stats.d_k], [max(stats.scaled_variance, 1e-12)])
    view.variance_numbers.set_text(
        f"d_k = {stats.d_k}\nvariance raw    {stats.raw_variance:8.2f}\n"
        f"variance scaled {stats.scaled_variance:8.2f}"
    )


def _entropy(p: np.ndarray) -> float:
    """Entropy in nats of one distribution (0 log 0 = 0)."""
    nonzero = p[p > 0]
    return float(-(nonzero * np.log(nonzero)).sum())


# --- softmax with a temperature (lesson 05) --------------------------------------------------


@dataclass(frozen=True)
class SoftmaxFigure:
    """Scores as bars and their softmax weights as bars, each bar annotated.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    scores, weights : matplotlib.axes.Axes
    score_bars, weight_bars : matplotlib.container.BarContainer
    score_texts, weight_texts : list of matplotlib.text.Text
        The value of each bar (``−∞`` for a masked score).
    """

    figure: Figure
    scores: Axes
    weights: Axes
    score_bars: BarContainer
    weight_bars: BarContainer
    score_texts: list[Text]
    weight_texts: list[Text]

    def dynamic_artists(self) -> list[Artist]:
        """What :func:`update_softmax_figure` changes, in drawing order."""
        return [
            *self.score_bars.patches,
            *self.score_texts,
            self.weights.title,
            *self.weight_bars.patches,
            *self.weight_texts,
        ]


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
        Positive; large spreads the weights out, small makes the largest score take all.
    style : {"light", "dark"}
    figsize : (float, float)
    limits : (float, float), optional
        The y range of the scores panel; by default fitted to the finite scores and 0.

    Returns
    -------
    SoftmaxFigure
    """
    values = _score_row(scores, labels)
    x = np.arange(len(labels))
    with style_context(style):
        fig = _new_figure(figsize, style)
        ax_s, ax_w = fig.subplots(1, 2)
        score_bars = ax_s.bar(x, np.zeros(len(x)), 0.6, color=OKABE_ITO[1])
        weight_bars = ax_w.bar(x, np.zeros(len(x)), 0.6, color=OKABE_ITO[2])
        score_texts = [ax_s.text(i, 0, "", ha="center", fontsize=9) for i in x]
        weight_texts = [ax_w.text(i, 0, "", ha="center", va="bottom", fontsize=9) for i in x]
        for ax in (ax_s, ax_w):
            ax.set_xticks(x, list(labels))
            ax.axhline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
            ax.set_xlabel("keys")
        ax_s.set_title("Scores s")
        ax_s.set_ylabel("score")
        ax_w.set_title(" ")  # the text is set for each temperature; the font now, in the style
        ax_w.set_ylim(0, 1.12)
        ax_w.set_ylabel("weight")
    view = SoftmaxFigure(fig, ax_s, ax_w, score_bars, weight_bars, score_texts, weight_texts)
    _draw_softmax(view, values, temperature, limits)
    return view


def update_softmax_figure(
    view: SoftmaxFigure,
    scores: npt.ArrayLike,
    *,
    temperature: float = 1.0,
    limits: tuple[float, float] | None = None,
) -> np.ndarray:
    """Show new scores and temperature in a figure drawn by :func:`softmax_figure`, in place.

    Returns the weights drawn, ``softmax(scores / temperature)``.
    """
    values = _score_row(scores, view.score_texts)
    return _draw_softmax(view, values, temperature, limits)


def _score_row(scores: npt.ArrayLike, labels: Sequence[object]) -> np.ndarray:
    values = as_real_array(scores, "scores", allow_neg_inf=True).astype(np.float64)
    if values.ndim != 1 or values.size != len(labels):
        raise ValueError(
            f"scores must be one row of {len(labels)} values (one per label), got shape {values.shape}"
        )
    return values


def _draw_softmax(
    view: SoftmaxFigure, values: np.ndarray, temperature: float, limits: tuple[float, float] | None
) -> np.ndarray:
    if not (isinstance(temperature, (int, float, np.floating, np.integer)) and temperature > 0):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    weights = _softmax(values / float(temperature), -1)
    finite = values[np.isfinite(values)]
    if limits is None:
        low = min(0.0, float(finite.min()) if finite.size else 0.0)
        high = max(0.0, float(finite.max()) if finite.size else 1.0)
        pad = 0.18 * max(high - low, 1.0)
        limits = (low - (pad if low < 0 else 0.0), high + pad)
    view.scores.set_ylim(*limits)
    nudge = 0.02 * (limits[1] - limits[0])
    for bar, text, value in zip(view.score_bars.patches, view.score_texts, values, strict=True):
        height = float(value) if np.isfinite(value) else 0.0
        bar.set_height(height)
        text.set_text(format_cell(value))
        text.set_y(height + nudge if height >= 0 else height - nudge)
        text.set_verticalalignment("bottom" if height >= 0 else "top")
    for bar, text, weight in zip(view.weight_bars.patches, view.weight_texts, weights, strict=True):
        bar.set_height(weight)
        text.set_text(f"{weight:.3f}")
        text.set_y(weight + 0.01)
    view.weights.title.set_text(f"Weights softmax(s / T), T = {float(temperature):.2f}")
    return weights


def score_limits(value_range: tuple[float, float] = (-10.0, 10.0)) -> tuple[float, float]:
    """The y limits of :func:`softmax_explorer`'s scores panel for a slider range: with a margin."""
    low, high = value_range
    return (low - 0.12 * (high - low), high + 0.12 * (high - low))


def similarity_limits(value_range: tuple[float, float] = (-1.5, 1.5)) -> tuple[float, float]:
    """The axis limits of :func:`similarity_explorer` for a slider range: the range and a margin."""
    low, high = value_range
    return (low - 0.1 * (high - low), high + 0.1 * (high - low))
