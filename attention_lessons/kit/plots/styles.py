"""The look of every picture: two styles, one palette, one colour per meaning, and new figures.

Everything in :mod:`attention_lessons.kit.plots` uses Matplotlib's object-oriented API
(:class:`matplotlib.figure.Figure`), never pyplot's global state. A figure made by :func:`figure`
remembers its style, so whatever is drawn into it later is drawn in that style, whatever the
global rcParams are then.

Light and dark pages: a figure is drawn on an opaque background (``savefig.facecolor``), with every
number and label at 4.5:1 or more against what is behind it inside the picture, so it reads the
same on a light page, in JupyterLab's dark theme and in the book's dark mode (which shows it on a
light card). A transparent background cannot do that: no text colour reaches 4.5:1 against both
white and a dark page such as JupyterLab's ``#111111`` (the best, a mid grey, reaches 4.35:1).
For a figure meant for a dark page, draw it in the ``"dark"`` style.

The palette, one colour per meaning in every figure and explorer, is
:mod:`attention_lessons.kit.plots.palette` (:func:`~attention_lessons.kit.plots.palette.color`);
:data:`RAW_COLOR` and :data:`SCALED_COLOR` are two of its meanings, with a second cue wherever
the two are compared (raw bars and areas hatched, ``o`` markers for raw and ``s`` for scaled);
:data:`OKABE_ITO` for arrows and categories; colour maps
viridis (weights) and cividis (scores); masked cells hatched.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from attention_lessons.kit.plots.palette import OKABE_ITO, color

__all__ = [
    "OKABE_ITO",
    "RAW_COLOR",
    "RAW_HATCH",
    "SCALED_COLOR",
    "STYLES",
    "check_style",
    "drawing_style",
    "figure",
    "style_context",
]

#: One colour per meaning (:mod:`attention_lessons.kit.plots.palette`): raw scores q·k (vermilion) ...
RAW_COLOR = color("raw score")
#: ... and scaled scores q·k/√d_k (blue).
SCALED_COLOR = color("scaled score")
#: Raw scores' bars and areas are hatched as well as coloured: told from scaled ones in greyscale.
RAW_HATCH = "//"

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

#: The style of every figure made by :func:`figure`.
_FIGURE_STYLES: weakref.WeakKeyDictionary[Figure, str] = weakref.WeakKeyDictionary()


def check_style(style: str) -> None:
    """Raise ValueError unless ``style`` is one of :data:`STYLES`."""
    if not isinstance(style, str) or style not in STYLES:
        raise ValueError(f"style must be one of {sorted(STYLES)}, got {style!r}")


@contextmanager
def style_context(style: str = "light") -> Iterator[None]:
    """Draw inside this context to use one of :data:`STYLES` (``"light"`` or ``"dark"``)."""
    check_style(style)
    with mpl.rc_context(STYLES[style]):
        yield


class _SettledLayout(ConstrainedLayoutEngine):
    """Constrained layout, run a second time when a panel places itself.

    A heatmap places its square cells and its colour bar itself, at every draw, inside the space
    the layout gives it (an axes locator); one run of the layout measures titles and tick labels
    around where the cells were before that run, and can leave a title a pixel or two outside
    the figure. The second run measures them where they are.
    """

    def execute(self, fig: Figure) -> dict[str, object]:
        result = super().execute(fig)
        if any(ax.get_axes_locator() is not None for ax in fig.axes):
            result = super().execute(fig)
        return result


def figure(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float] = (5.0, 4.0),
    style: str = "light",
    pad: float | None = None,
) -> tuple[Figure, np.ndarray]:
    """A new figure and a 2-D array of its axes, drawn in ``style``.

    The figure remembers its style: :func:`~attention_lessons.kit.plots.heatmap` and
    :func:`~attention_lessons.kit.plots.vectors` draw into it in that style (titles, colour bars, grid and
    origin lines), whatever the global rcParams are then.

    Parameters
    ----------
    nrows, ncols : int
    figsize : (float, float)
        Width and height in inches.
    style : {"light", "dark"}
    pad : float, optional
        Space around every panel in inches; by default Matplotlib's.

    Returns
    -------
    fig : matplotlib.figure.Figure
        With an Agg canvas (no pyplot).
    axes : numpy.ndarray of Axes, shape (nrows, ncols)
    """
    with style_context(style):
        layout = _SettledLayout() if pad is None else _SettledLayout(w_pad=pad, h_pad=pad)
        fig = Figure(figsize=figsize, layout=layout)
        # An Agg canvas from the start: without one, every text measurement (seaborn sizing its
        # tick labels) builds a new full-size renderer, hundreds of MiB for a large figure.
        FigureCanvasAgg(fig)
        _FIGURE_STYLES[fig] = style
        axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def drawing_style(ax: Axes) -> AbstractContextManager[object]:
    """Draw into ``ax`` in the style of its figure; in the current rcParams if it is not ours."""
    fig = ax.figure
    style = _FIGURE_STYLES.get(fig) if fig is not None else None
    if style is None and fig is not None and fig.figure is not fig:  # a subfigure: its root's style
        style = _FIGURE_STYLES.get(fig.figure)
    return nullcontext() if style is None else style_context(style)
