"""Axis and colour limits: the ranges the pictures show, so that lessons and explorers agree."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from attnlib.validation import is_number

#: The largest ``|low| + |high|`` of a colour scale: Matplotlib's colour bar adds and scales its
#: limits, which overflows for limits near the largest float (1.8e308).
LARGEST_COLOR_VALUE = 1e300

__all__ = ["check_limits", "color_limits", "score_limits", "similarity_limits", "square_limits"]


def color_limits(
    values: np.ndarray, vmin: float | None = None, vmax: float | None = None
) -> tuple[float, float]:
    """The colour limits of a heatmap: the given ones, else the range of the finite values.

    A single value is widened to ``value ± 0.5`` (a colour scale needs a width); no finite value
    gives (0, 1).

    Parameters
    ----------
    values : numpy.ndarray
        Finite values and ``-inf`` (masked cells, left out).
    vmin, vmax : float, optional
        Finite real numbers, ``vmin < vmax`` when both are given.

    Returns
    -------
    (float, float)
        ``low < high``, with ``|low| + |high|`` at most :data:`LARGEST_COLOR_VALUE`.
    """
    for name, limit in (("vmin", vmin), ("vmax", vmax)):
        if limit is not None and not (is_number(limit) and math.isfinite(limit)):
            raise ValueError(f"{name} must be a finite real number or None, got {limit!r}")
    if vmin is not None and vmax is not None and not vmin < vmax:
        raise ValueError(f"vmin must be less than vmax, got vmin={vmin!r} and vmax={vmax!r}")
    finite = values[np.isfinite(values)]
    low = float(vmin) if vmin is not None else (float(finite.min()) if finite.size else 0.0)
    high = float(vmax) if vmax is not None else (float(finite.max()) if finite.size else 1.0)
    if high <= low:
        low, high = low - 0.5, low + 0.5
    if not abs(low) + abs(high) <= LARGEST_COLOR_VALUE or high <= low:
        raise ValueError(
            f"the colour scale from {low:.6g} to {high:.6g} is too wide to draw (|low| + |high| must "
            f"stay below {LARGEST_COLOR_VALUE:.0e}) or too narrow to split: divide the matrix by a "
            "common factor, or give vmin and vmax"
        )
    return low, high


def square_limits(*arrays: npt.ArrayLike) -> tuple[float, float]:
    """The same (low, high) for both axes, showing every point and the origin, with a margin.

    The margin is 15 % of the range (at least 0.075), room for the labels of arrows.
    """
    every = np.concatenate([np.ravel(a) for a in arrays] + [np.zeros(1)])
    low, high = float(every.min()), float(every.max())
    pad = 0.15 * max(high - low, 0.5)
    return low - pad, high + pad


def score_limits(value_range: tuple[float, float] = (-10.0, 10.0)) -> tuple[float, float]:
    """The y limits of a scores panel for scores in ``value_range``: the range and a 12 % margin.

    What :func:`~attention_lessons.l05_softmax.plots.softmax_figure` and the softmax explorer show for the
    explorer's slider range, so that the lesson's picture and the explorer match.
    """
    low, high = value_range
    return (low - 0.12 * (high - low), high + 0.12 * (high - low))


def similarity_limits(value_range: tuple[float, float] = (-1.5, 1.5)) -> tuple[float, float]:
    """The axis limits of a two-vector picture for coordinates in ``value_range``, with a margin.

    What :func:`~attention_lessons.l01_embeddings.plots.similarity_figure` and the similarity explorer show
    for the explorer's slider range.
    """
    low, high = value_range
    return (low - 0.1 * (high - low), high + 0.1 * (high - low))


def check_limits(limits: object, name: str = "limits") -> tuple[float, float]:
    """Return ``limits`` as two finite floats ``(low, high)`` with ``low < high``, or raise ValueError."""
    try:
        low, high = limits  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be (low, high), got {limits!r}") from None
    for value in (low, high):
        if not (is_number(value) and math.isfinite(value)):
            raise ValueError(f"{name} must be two finite numbers (low, high), got {limits!r}")
    if not low < high:
        raise ValueError(f"{name} must have low < high, got {limits!r}")
    return float(low), float(high)
