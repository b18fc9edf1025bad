"""Checks of what a learner passes to an explorer: arrays of finite numbers and slider ranges."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["real_array", "slider_range"]


def real_array(value: npt.ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float64 array of finite numbers, or a ValueError naming ``name``."""
    if value is None or isinstance(value, str):
        raise ValueError(f"{name} must be an array of real numbers, got {value!r}")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of real numbers, got {value!r}") from error
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold finite numbers (no NaN or inf), got {array.tolist()}")
    return array


def slider_range(value_range: tuple[float, float], values: np.ndarray) -> tuple[float, float]:
    """Sliders' (low, high): ``value_range`` widened to whole numbers that hold every value.

    Parameters
    ----------
    value_range : (float, float)
        The range asked for; finite, low < high.
    values : numpy.ndarray
        The start values, which must lie on the sliders.
    """
    try:
        low, high = (float(v) for v in value_range)
    except (TypeError, ValueError) as error:
        raise ValueError(f"value_range must be two numbers (low, high), got {value_range!r}") from error
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"value_range must be finite with low < high, got {value_range!r}")
    return min(low, math.floor(float(values.min()))), max(high, math.ceil(float(values.max())))
