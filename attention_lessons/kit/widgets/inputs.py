"""Checks of what a learner passes to an explorer: numbers, arrays of finite numbers, slider ranges,
2D embeddings.

:class:`WholeNumber` and :class:`RealNumber` are the traits of an explorer's numbers. Unlike
traitlets' ``Int`` and ``Float`` they refuse ``True`` and ``False`` (which Python counts as 1 and
0) and take NumPy's numbers (``np.int64(2)``, ``np.float32(0.5)``); a value they refuse leaves the
trait as it was.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import traitlets

from attnlib.validation import as_real, as_real_array, is_number

__all__ = ["RealNumber", "WholeNumber", "embeddings_on_sliders", "real_array", "slider_range"]


class WholeNumber(traitlets.Int):  # type: ignore[type-arg]
    """An ``Int`` trait that takes Python's and NumPy's whole numbers, but not booleans or floats."""

    info_text = "a whole number (not True or False)"

    def validate(self, obj: object, value: object) -> int:
        if not is_number(value, whole=True):
            self.error(obj, value)
        return int(super().validate(obj, int(value)))  # type: ignore[call-overload]


class RealNumber(traitlets.Float):  # type: ignore[type-arg]
    """A ``Float`` trait that takes Python's and NumPy's finite real numbers, but not booleans,
    complex numbers or text."""

    info_text = "a finite real number (not True or False)"

    def validate(self, obj: object, value: object) -> float:
        try:
            number = as_real(value, self.name)
        except (TypeError, ValueError):  # not a real number, NaN, infinite, too large for a float
            self.error(obj, value)
        return float(super().validate(obj, number))


def real_array(value: npt.ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float64 array of finite numbers (an explorer's state), or the error of
    :func:`attnlib.validation.as_real_array` naming ``name``."""
    return as_real_array(value, name, dtype=np.float64)


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
        low, high = value_range
    except (TypeError, ValueError) as error:
        raise ValueError(f"value_range must be two numbers (low, high), got {value_range!r}") from error
    if not (is_number(low) and is_number(high)):
        raise TypeError(f"value_range must be two real numbers (low, high), got {value_range!r}")
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"value_range must be finite with low < high, got {value_range!r}")
    return min(low, math.floor(float(values.min()))), max(high, math.ceil(float(values.max())))


def embeddings_on_sliders(value: object, n_tokens: int, low: float, high: float) -> list[list[float]]:
    """An ``embeddings`` trait value checked: ``n_tokens`` pairs ``[x, y]`` of finite numbers in
    ``[low, high]`` (the sliders' range), as a list of lists; else a :class:`traitlets.TraitError`."""
    try:
        X = real_array(value, "embeddings")
    except (TypeError, ValueError) as error:  # booleans, complex numbers, text, NaN
        raise traitlets.TraitError(str(error)) from None
    if X.shape != (n_tokens, 2):
        raise traitlets.TraitError(
            f"embeddings must be {n_tokens} pairs [x, y], one per token; got shape {X.shape}"
        )
    if not (np.isfinite(X).all() and (X >= low).all() and (X <= high).all()):
        raise traitlets.TraitError(
            f"embeddings must be finite numbers from value_min={low} to value_max={high}; got {X.tolist()}"
        )
    return X.tolist()
