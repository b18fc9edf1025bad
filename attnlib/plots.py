"""Pictures of attention: annotated heatmaps, 2D vectors and the 2×2 overview.

Everything here uses Matplotlib's object-oriented API (:class:`matplotlib.figure.Figure`), never
pyplot's global state, so the same code can run in a widget callback on another thread.
Figures are drawn once; :func:`update_heatmap` and :func:`update_vectors` change the drawn
artists in place, which is what the interactive explorers do on every slider move.

Colour maps are readable by colour-blind readers (viridis, cividis) and the arrows use the
Okabe–Ito palette. Two styles: ``"light"`` and ``"dark"``.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.quiver import Quiver
from matplotlib.text import Text

from attnlib._validate import as_real_array
from attnlib.core import AttentionSteps

__all__ = [
    "OKABE_ITO",
    "STYLES",
    "Arrows",
    "AttentionFigure",
    "attention_figure",
    "figure",
    "format_cell",
    "heatmap",
    "png_bytes",
    "show",
    "style_context",
    "update_attention_figure",
    "update_heatmap",
    "update_vectors",
    "vectors",
]

#: Okabe–Ito colours (distinguishable with every common colour-vision deficiency), without black.
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442")

_BASE = {"font.size": 10, "axes.titlesize": 11, "axes.titleweight": "bold", "figure.dpi": 100}
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
_MASKED_TEXT = "−∞"


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise ValueError(f"style must be one of {sorted(STYLES)}, got {style!r}")


@contextmanager
def style_context(style: str = "light") -> Iterator[None]:
    """Draw inside this context to use one of :data:`STYLES` (``"light"`` or ``"dark"``)."""
    _check_style(style)
    with mpl.rc_context(STYLES[style]):
        yield


def figure(
    nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] = (5.0, 4.0), style: str = "light"
) -> tuple[Figure, np.ndarray]:
    """A new figure and a 2-D array of its axes, drawn in ``style``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray of Axes, shape (nrows, ncols)
    """
    with style_context(style):
        fig = Figure(figsize=figsize, layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def format_cell(value: float, decimals: int = 2) -> str:
    """How a heatmap cell shows a value: fixed decimals, ``−∞`` for a masked (−inf) score."""
    if np.isneginf(value):
        return _MASKED_TEXT
    return f"{value:.{decimals}f}"


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
        Draw a colour bar beside the heatmap.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, holding the heatmap mesh (``ax.collections[0]``) and one text per cell, row by row
        (``ax.texts``).
    """
    values = _matrix(matrix, row_labels, col_labels)
    lo, hi = _limits(values, vmin, vmax)
    sns.heatmap(
        np.where(np.isfinite(values), values, np.nan),
        ax=ax,
        cmap=cmap,
        vmin=lo,
        vmax=hi,
        annot=False,
        cbar=colorbar,
        square=True,
        linewidths=0.5,
        linecolor=mpl.rcParams["axes.facecolor"],
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
    _annotate(ax, values, decimals)
    return ax


def update_heatmap(
    ax: Axes,
    matrix: npt.ArrayLike,
    *,
    vmin: float | None = None,
    vmax: float | None = None,
    decimals: int = 2,
) -> None:
    """Show new values in a heatmap drawn by :func:`heatmap`, changing its artists in place.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        An axes that :func:`heatmap` drew into.
    matrix : array_like, same shape as the drawn one
    vmin, vmax : float, optional
        New colour limits; by default the range of the finite values.
    """
    mesh = ax.collections[0]
    values = as_real_array(matrix, "matrix", allow_neg_inf=True)
    drawn_shape = np.shape(mesh.get_array())
    if values.shape != drawn_shape:
        raise ValueError(f"matrix has shape {values.shape}; the heatmap shows shape {drawn_shape}")
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
        One arrow per vector; ``quiver.U`` and ``quiver.V`` hold the components, ``quiver.X`` and
        ``quiver.Y`` the tails.
    labels : list of matplotlib.text.Text
        One label per vector, beside its tip.
    """

    quiver: Quiver
    labels: list[Text]


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

    Returns
    -------
    Arrows
    """
    tips, tails = _tips_and_tails(points, origins, len(labels))
    delta = tips - tails
    palette = [colors[i % len(colors)] for i in range(len(tips))]
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
    return Arrows(quiver, texts)


def update_vectors(
    ax: Axes,
    arrows: Arrows,
    points: npt.ArrayLike,
    *,
    origins: npt.ArrayLike | None = None,
    limits: tuple[float, float] | None = None,
) -> None:
    """Move the arrows drawn by :func:`vectors` to new tips (and tails), in place."""
    tips, tails = _tips_and_tails(points, origins, len(arrows.labels))
    delta = tips - tails
    arrows.quiver.set_offsets(tails)
    arrows.quiver.set_UVC(delta[:, 0], delta[:, 1])
    for text, tip in zip(arrows.labels, tips, strict=True):
        text.set_position(tip)
    _fit(ax, tips, tails, limits)


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


def attention_figure(
    steps: AttentionSteps,
    tokens: Sequence[str],
    embeddings: npt.ArrayLike,
    *,
    style: str = "light",
    figsize: tuple[float, float] = (9.0, 8.0),
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

    Returns
    -------
    AttentionFigure
    """
    X = _check_overview(steps, tokens, embeddings)
    limits = _limits_2d(X, steps.output)
    with style_context(style):
        fig = Figure(figsize=figsize, layout="constrained")
        (ax_x, ax_s), (ax_w, ax_c) = fig.subplots(2, 2)
        embedding_arrows = vectors(ax_x, X, tokens, title="1. Embeddings X", limits=limits)
        heatmap(ax_s, steps.raw_scores, tokens, tokens, title="2. Raw scores Q Kᵀ", cmap="cividis")
        heatmap(ax_w, steps.weights, tokens, tokens, title="3. Weights softmax(Q Kᵀ/√d_k)", vmin=0, vmax=1)
        faint_arrows = vectors(ax_c, X, tokens, alpha=0.25, limits=limits)
        context_arrows = vectors(
            ax_c, steps.output, tokens, title="4. Contextualized vectors (weights · V)", limits=limits
        )
    return AttentionFigure(fig, ax_x, ax_s, ax_w, ax_c, embedding_arrows, context_arrows, faint_arrows)


def update_attention_figure(
    view: AttentionFigure, steps: AttentionSteps, embeddings: npt.ArrayLike, *, decimals: int = 2
) -> None:
    """Show new embeddings and their attention in an overview, moving its artists in place."""
    X = _check_overview(steps, view.embedding_arrows.labels, embeddings)
    limits = _limits_2d(X, steps.output)
    update_vectors(view.embeddings, view.embedding_arrows, X, limits=limits)
    update_heatmap(view.scores, steps.raw_scores, decimals=decimals)
    update_heatmap(view.weights, steps.weights, vmin=0, vmax=1, decimals=decimals)
    update_vectors(view.context, view.faint_arrows, X, limits=limits)
    update_vectors(view.context, view.context_arrows, steps.output, limits=limits)


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
