"""attention_lessons.l01_embeddings.similarity (lesson 01): the dot product, the cosine and the angle of
two vectors, within float64's rounding, for vectors of any length."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import gamma

from attention_lessons.l01_embeddings.similarity import similarity

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def angle_rounding(n: int) -> float:
    """The most float64 rounding moves :func:`similarity`'s angle, in degrees, for vectors of n entries.

    The cosine is within δ = γ(2n + 5) (two scalings by the largest entry, a dot product and two
    norms of n terms, a product, a division); acos moves by at most acos(1 − δ) ≈ √(2δ) over an
    interval of length δ, steepest at ±1.
    """
    return math.degrees(math.acos(1 - gamma(2 * n + 5, np.float64)))


@pytest.mark.parametrize(
    ("a", "b", "dot", "cosine", "angle"),
    [
        ([1, 0], [0, 1], 0.0, 0.0, 90.0),
        ([1, 0], [1, 1], 1.0, math.sqrt(0.5), 45.0),
        ([2, 0], [-3, 0], -6.0, -1.0, 180.0),
        ([0.9, 0.1], [0.9, 0.1], 0.82, 1.0, 0.0),
    ],
)
def test_similarity_values(a: list[float], b: list[float], dot: float, cosine: float, angle: float) -> None:
    s = similarity(a, b)
    assert s.dot == pytest.approx(dot)
    assert s.cosine == pytest.approx(cosine)
    assert s.angle_degrees == pytest.approx(angle, abs=angle_rounding(2))
    assert s.dot == pytest.approx(s.norm_a * s.norm_b * s.cosine)


def test_dot_product_scales_with_length_but_cosine_does_not() -> None:
    a, b = np.array([0.2, 0.8]), np.array([0.9, 0.1])
    assert similarity(2 * a, b).dot == pytest.approx(2 * similarity(a, b).dot)
    assert similarity(2 * a, b).cosine == pytest.approx(similarity(a, b).cosine)


def test_similarity_of_a_zero_vector_has_no_angle() -> None:
    s = similarity([0, 0], [1, 2])
    assert (s.dot, s.norm_a, s.cosine, s.angle_degrees) == (0.0, 0.0, None, None)


@pytest.mark.parametrize("size", [1e-170, 1e-300, 1e150])
def test_similarity_of_very_short_and_very_long_vectors(size: float) -> None:
    """Squaring 1e-170 underflows to 0 and squaring 1e200 overflows: the cosine must not care."""
    same = similarity([size, 0], [size, 0])
    assert (same.cosine, same.angle_degrees) == (1.0, 0.0)
    assert same.norm_a == same.norm_b == size
    right_angle = similarity([size, 0], [0, 3 * size])
    assert right_angle.cosine == 0.0 and right_angle.angle_degrees == 90.0
    assert right_angle.norm_b == pytest.approx(3 * size, rel=1e-15)
    opposite = similarity([size, size], [-2 * size, -2 * size])
    assert opposite.cosine == pytest.approx(-1.0, abs=gamma(2 * 2 + 5, np.float64))
    assert opposite.angle_degrees == pytest.approx(180.0, abs=angle_rounding(2))


def test_similarity_rejects_mismatched_vectors() -> None:
    with pytest.raises(ValueError, match=r"shapes \(2,\) and \(3,\)"):
        similarity([1, 2], [1, 2, 3])
