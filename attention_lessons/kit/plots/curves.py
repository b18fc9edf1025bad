"""Loss curves along a text: a running mean per setting, one setting as the dashed reference, and a
dotted line where something happens (the trained context ends, the first token leaves a window).
Lessons 15 and 16 draw their losses at each position with it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes

from attention_lessons.kit.plots.palette import color, ordered
from attention_lessons.kit.plots.styles import STYLES, style_context

__all__ = ["running_mean_curves"]

#: The line of each setting after the reference, by its place among them (not colour alone).
LINE_STYLES = ("-", "-.", ":", (0, (5, 1)))


def running_mean_curves(
    ax: Axes,
    curves: Mapping[str, np.ndarray],
    *,
    reference: str | None,
    smooth: int,
    mark: float,
    note: str,
    style: str,
) -> None:
    """Draw each curve of ``curves`` as its running mean of ``smooth`` values on ``ax``.

    The reference setting is dashed in the reference colour; the others take the palette's ordered
    colours and a line style each (by their place in ``curves``). A dotted vertical line at ``mark``
    carries ``note`` at the top of the axes. Checked by the figure function that calls it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    curves : dict of str to (m,) float arrays
        Setting → a value at each position ``0 … m − 1``, all the same length ``m ≥ smooth``.
    reference : str or None
        The setting drawn as the reference (a key of ``curves``), or None.
    smooth : int
        Values per running mean; the mean of positions ``i − smooth + 1 … i`` is drawn at ``i``.
    mark : float
        Where the dotted line stands (x).
    note : str
        The text beside it.
    style : {"light", "dark"}
    """
    others = [name for name in curves if name != reference]
    colours = dict(zip(others, ordered(len(others)), strict=True))
    with style_context(style):
        for index, (name, values) in enumerate(curves.items()):
            mean = np.convolve(values, np.ones(smooth) / smooth, mode="valid")
            look = {"color": color("reference"), "linestyle": "--"} if name == reference else {
                "color": colours[name], "linestyle": LINE_STYLES[index % len(LINE_STYLES)]}  # fmt: skip
            ax.plot(np.arange(smooth - 1, smooth - 1 + mean.size), mean, label=name, **look)
        ax.axvline(mark, color=str(STYLES[style]["text.color"]), linestyle=":", linewidth=1)
        ax.annotate(
            note, (mark, 1.0), xycoords=("data", "axes fraction"),
            xytext=(4, -12), textcoords="offset points", fontsize=9,
        )  # fmt: skip
        ax.grid(True, alpha=0.4)
