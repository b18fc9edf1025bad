"""A panel's text alternative read from what is drawn in it: lines, bars, points and images.

For panels that no figure function described (a lesson's own ``ax.plot`` or ``ax.bar``): every
number comes from the artists' data, the words from the title, the axis labels and the legend
labels.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D

__all__ = ["MAX_LISTED", "describe_artists", "number"]

#: At most this many bars are listed one by one; more are summed up by their range.
MAX_LISTED = 8


def number(value: float) -> str:
    """A number as an alt text writes it: 3 significant digits (whole from 1000 to a million), a
    real minus sign.

    >>> number(0.61803), number(-2.5), number(1024.0), number(12345.6), number(2.5e7), number(float("-inf"))
    ('0.618', '−2.5', '1024', '12346', '2.5e+07', '−∞')
    """
    value = float(value)
    if np.isinf(value):
        return "−∞" if value < 0 else "∞"
    whole = 1000 <= abs(value) < 1e6 or (value.is_integer() and abs(value) < 1e6)
    return (f"{value:.0f}" if whole else f"{value:.3g}").replace("-", "−")


def describe_artists(ax: Axes) -> str:
    """What ``ax`` shows, in a sentence or a few, from its title, labels and data."""
    parts = [ax.get_title() or "A panel"]
    labels = (("x", ax.get_xlabel()), ("y", ax.get_ylabel()))
    axes_words = [f"{axis}: {label}" for axis, label in labels if label]
    if axes_words:
        parts[0] += f" ({'; '.join(axes_words)})"
    parts += [_bars(ax, c) for c in ax.containers if isinstance(c, BarContainer)]
    parts += [_line(line) for line in ax.get_lines() if _is_data_line(ax, line)]
    parts += [_points(c) for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    parts += [_image(image) for image in ax.get_images()]
    if len(parts) == 1:
        parts.append("nothing is plotted in it")
    return ". ".join(p.rstrip(".") for p in parts) + "."


def _name(label: object, fallback: str) -> str:
    text = str(label or "")
    return fallback if not text or text.startswith("_") else text


def _is_data_line(ax: Axes, line: Line2D) -> bool:
    return line.get_transform() == ax.transData and len(np.atleast_1d(line.get_xdata())) > 0


def _line(line: Line2D) -> str:
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    name = _name(line.get_label(), "a line")
    if x.size == 0:
        return f"{name}: no finite points"
    if x.size == 1:
        return f"{name}: one point at x = {number(x[0])}, y = {number(y[0])}"
    low, high = int(np.argmin(y)), int(np.argmax(y))
    return (
        f"{name}: {x.size} points, x from {number(x[0])} to {number(x[-1])}, y from {number(y[0])} to "
        f"{number(y[-1])} (lowest {number(y[low])} at x = {number(x[low])}, highest {number(y[high])} at "
        f"x = {number(x[high])})"
    )


def _bars(ax: Axes, bars: BarContainer) -> str:
    centres = [p.get_x() + p.get_width() / 2 for p in bars.patches]
    heights = [p.get_height() for p in bars.patches]
    names = [_bar_name(ax, c) for c in centres]
    name = _name(bars.get_label(), "bars")
    if len(heights) <= MAX_LISTED:
        return f"{name}: " + ", ".join(f"{n}: {number(h)}" for n, h in zip(names, heights, strict=True))
    low, high = int(np.argmin(heights)), int(np.argmax(heights))
    return (
        f"{name}: {len(heights)} bars from {number(heights[low])} ({names[low]}) to "
        f"{number(heights[high])} ({names[high]})"
    )


def _bar_name(ax: Axes, centre: float) -> str:
    """A bar's name: the label of the nearest tick (within half the ticks' spacing) if that is a
    word (bars side by side sit beside their tick), else its position."""
    ticks = np.asarray(ax.get_xticks(), dtype=float)
    if ticks.size:
        spacing = float(np.min(np.diff(ticks))) if ticks.size > 1 else 1.0
        nearest = int(np.argmin(np.abs(ticks - centre)))
        tick = ax.get_xticklabels()[nearest].get_text()
        if abs(ticks[nearest] - centre) < spacing / 2 and tick.strip() and not _is_number(tick):
            return " ".join(tick.split())
    return f"x = {number(centre)}"


def _is_number(text: str) -> bool:
    try:
        float(text.replace("−", "-"))
    except ValueError:
        return False
    return True


def _points(points: PathCollection) -> str:
    xy = np.asarray(points.get_offsets(), dtype=float)
    name = _name(points.get_label(), "points")
    return (
        f"{name}: {len(xy)} points, x from {number(xy[:, 0].min())} to {number(xy[:, 0].max())}, "
        f"y from {number(xy[:, 1].min())} to {number(xy[:, 1].max())}"
    )


def _image(image: AxesImage) -> str:
    values = np.ma.masked_invalid(np.asarray(image.get_array(), dtype=float))
    rows, cols = values.shape[:2]
    if values.count() == 0:
        return f"an image of {rows} × {cols} cells, none finite"
    return f"an image of {rows} × {cols} cells, values from {number(values.min())} to {number(values.max())}"
