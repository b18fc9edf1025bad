"""How alike two vectors are: the dot product, the cosine similarity and the angle."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib._validate import as_real_array

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
    """
    u = as_real_array(a, "a").astype(np.float64)
    v = as_real_array(b, "b").astype(np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"a and b must be vectors of the same length, got shapes {u.shape} and {v.shape}")
    dot = float(u @ v)
    norm_a, norm_b = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if norm_a == 0.0 or norm_b == 0.0:
        return Similarity(dot, norm_a, norm_b, None, None)
    cosine = min(1.0, max(-1.0, dot / (norm_a * norm_b)))
    return Similarity(dot, norm_a, norm_b, cosine, math.degrees(math.acos(cosine)))
