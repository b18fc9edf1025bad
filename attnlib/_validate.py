"""Argument checks shared by every public function.

Each check turns what a learner might pass (lists, integers, float32 arrays, a typo) into a
clean floating-point array, or raises a ``ValueError`` / ``TypeError`` whose message names the
argument and what was wrong with it. Nothing here is public API.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt


def as_real_array(x: npt.ArrayLike, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
    """Return ``x`` as a finite floating-point array, or raise a clear error.

    Integers (and anything else that is not float32/float64) become float64; float32 and
    float64 keep their dtype; float16 is computed in float32.

    Parameters
    ----------
    x : array_like
        The argument as the caller gave it.
    name : str
        The argument's name, used in error messages.
    allow_neg_inf : bool
        Accept ``-inf`` entries (for scores and additive masks).
    """
    arr = _as_numeric_array(x, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} is a 0-dimensional scalar ({arr.item()!r}); expected an array")
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    elif arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    check_finite(arr, name, allow_neg_inf=allow_neg_inf)
    return arr


def _as_numeric_array(x: object, name: str) -> np.ndarray:
    """Convert to an ndarray, rejecting None, ragged nesting, strings, bool and complex."""
    if x is None:
        raise TypeError(f"{name} is None; expected an array of real numbers")
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} is ragged: its rows have different lengths, so it is not an array") from exc
    if arr.dtype == object:
        raise ValueError(
            f"{name} is ragged, mixes types, or holds integers too large for 64 bits (numpy made an "
            f"object array of shape {arr.shape}); expected a rectangular array of real numbers"
        )
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} is complex (dtype {arr.dtype}); attention needs real numbers")
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} is boolean; expected real numbers (integers or floats)")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} has dtype {arr.dtype}, which is not numeric; expected real numbers")
    return arr


def check_finite(arr: np.ndarray, name: str, *, allow_neg_inf: bool = False) -> None:
    """Raise ``ValueError`` naming the first NaN or infinite entry of ``arr``."""
    bad = np.isnan(arr) | (np.isposinf(arr)) | (np.isneginf(arr) & (not allow_neg_inf))
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        value = arr[index]
        what = "NaN" if np.isnan(value) else str(value)
        allowed = " (only -inf is allowed, to mask)" if allow_neg_inf else ""
        raise ValueError(
            f"{name} has {int(bad.sum())} non-finite entr{'y' if bad.sum() == 1 else 'ies'}"
            f"{allowed}; the first is {what} at index {index} of shape {arr.shape}"
        )


def as_scale(scale: object) -> float:
    """Return a finite real scale as a Python float (keeps float32 arithmetic float32)."""
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number such as 0.5, got {scale!r}")
    value = float(scale)
    if not math.isfinite(value):
        raise ValueError(f"scale must be a finite number, got {value}")
    return value


def as_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int at least ``minimum``, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def require_ndim(arr: np.ndarray, name: str, ndims: tuple[int, ...], shape_hint: str) -> None:
    """Raise ``ValueError`` unless ``arr.ndim`` is one of ``ndims``."""
    if arr.ndim not in ndims:
        raise ValueError(f"{name} must have shape {shape_hint}, got shape {arr.shape}")
