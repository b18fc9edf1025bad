"""How alike two vectors are: the dot product, the cosine similarity and the angle."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_real_array

__all__ = ["Similarity", "similarity"]


@dataclass(frozen=True)
class Similarity:
    """The dot product of two vectors and what it is made of.

    Attributes
    ----------
    dot : float
        ``a · b = |a| |b| cos θ``: grows with both lengths and with alignment.
    norm_a, norm_b : float
        The lengths ``|a|`` and ``|b|``.
    cosine : float or None
        ``cos θ = a · b / (|a| |b|)``, in [-1, 1]: alignment only; None when a vector is zero.
    angle_degrees : float or None
        ``θ`` in degrees, in [0, 180]; None when a vector is zero.
    """

    dot: float
    norm_a: float
    norm_b: float
    cosine: float | None
    angle_degrees: float | None


def similarity(a: npt.ArrayLike, b: npt.ArrayLike) -> Similarity:
    """Dot product, lengths, cosine similarity and angle of two vectors.

    Parameters
    ----------
    a, b : array_like, shape (d,)

    Returns
    -------
    Similarity

    Raises
    ------
    ValueError
        The vectors are empty or of different lengths, or their dot product or a length is
        beyond the float64 range (about 1.8e308).

    Notes
    -----
    The cosine is computed from the vectors divided by their largest entry, so that it is right
    for very long and very short vectors alike (``1e-170`` squared would underflow to 0).
    """
    u = as_real_array(a, "a").astype(np.float64)
    v = as_real_array(b, "b").astype(np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"a and b must be vectors of the same length, got shapes {u.shape} and {v.shape}")
    if u.size == 0:
        raise ValueError("a and b are empty: a vector needs at least one component")
    with np.errstate(over="ignore", invalid="ignore"):
        dot = float(u @ v)
    largest_a, largest_b = float(np.abs(u).max()), float(np.abs(v).max())
    if largest_a == 0.0 or largest_b == 0.0:
        return Similarity(dot, _length(u, largest_a), _length(v, largest_b), None, None)
    unit_a, unit_b = u / largest_a, v / largest_b  # largest entry ±1: no overflow, no underflow
    cosine = float(unit_a @ unit_b) / float(np.linalg.norm(unit_a) * np.linalg.norm(unit_b))
    cosine = min(1.0, max(-1.0, cosine))
    norm_a, norm_b = _length(u, largest_a), _length(v, largest_b)
    if not math.isfinite(dot):
        raise ValueError(
            f"the dot product a · b is beyond the float64 range (|a| = {norm_a:.3g}, |b| = {norm_b:.3g}, "
            f"cos θ = {cosine:.4f}): scale the vectors down"
        )
    return Similarity(dot, norm_a, norm_b, cosine, math.degrees(math.acos(cosine)))


def _length(x: np.ndarray, largest: float) -> float:
    """``|x|``, computed as ``largest · |x / largest|`` so that it neither overflows nor underflows."""
    if largest == 0.0:
        return 0.0
    length = largest * float(np.linalg.norm(x / largest))  # a Python float: inf, no warning
    if not math.isfinite(length):
        raise ValueError(f"the length of a vector is beyond the float64 range (largest entry {largest:.3g})")
    return length
