"""attention_lessons.l04_scaling.scaling (the experiment of lesson 04): the variance of raw scores grows
like d_k and scaling removes it; the entropy and the softmax Jacobian, within float64's rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import gamma

import attnlib
from attention_lessons.l04_scaling.scaling import (
    entropy,
    random_queries_keys,
    scaling_statistics,
    softmax_jacobian,
    softmax_jacobian_norm,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def test_random_queries_keys_are_seeded_standard_normal() -> None:
    Q, K = random_queries_keys(64, n_queries=3, n_keys=8, seed=7)
    assert Q.shape == (3, 64) and K.shape == (8, 64)
    Q2, K2 = random_queries_keys(64, n_queries=3, n_keys=8, seed=7)
    np.testing.assert_array_equal(Q, Q2)
    np.testing.assert_array_equal(K, K2)
    assert not np.array_equal(Q, random_queries_keys(64, n_queries=3, n_keys=8, seed=8)[0])
    big, _ = random_queries_keys(20_000, seed=0)
    assert abs(big.mean()) < 0.03 and abs(big.var() - 1) < 0.05


@pytest.mark.parametrize("d_k", [1, 16, 256, 1024])
def test_variance_grows_like_d_k_and_scaling_removes_it(d_k: int) -> None:
    stats = scaling_statistics(d_k, n_queries=1024, n_keys=1024, seed=1)
    assert stats.raw_variance == pytest.approx(d_k, rel=0.15)
    assert stats.scaled_variance == pytest.approx(1.0, rel=0.15)
    np.testing.assert_allclose(stats.scaled, stats.raw / math.sqrt(d_k))
    np.testing.assert_allclose(stats.scaled_weights, attnlib.softmax(stats.scaled))


def test_unscaled_softmax_saturates_and_its_gradient_vanishes() -> None:
    small, large = scaling_statistics(4), scaling_statistics(1024)
    assert large.raw_max_weight > 0.9 > small.raw_max_weight
    assert large.raw_entropy < 0.2 < small.raw_entropy
    assert large.raw_jacobian_norm < 0.5 * small.raw_jacobian_norm
    assert large.scaled_max_weight == pytest.approx(small.scaled_max_weight, abs=0.05)
    assert large.scaled_entropy == pytest.approx(small.scaled_entropy, abs=0.1)
    assert large.scaled_jacobian_norm == pytest.approx(small.scaled_jacobian_norm, abs=0.05)


def test_entropy_of_uniform_and_one_hot() -> None:
    np.testing.assert_allclose(entropy(np.full((2, 8), 1 / 8)), [math.log(8)] * 2)
    assert entropy([0.0, 1.0, 0.0]) == 0.0
    with pytest.raises(ValueError, match="probabilities between 0 and 1"):
        entropy([-0.5, 1.5])


def jacobian_norm_rounding(p: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """How far the closed-form Frobenius norm of each row's softmax Jacobian can be from ``norm``.

    Both in float64. The closed form √(Σp² − 2Σp³ + (Σp²)²) cancels: its sum is within γ(n + 4) of
    its terms' size T, and the square root halves that error relative to the square: within
    γ(n + 4)·T / (2·norm). The matrix norm sums n² squares of entries rounded twice: within
    γ(n² + 4)·norm.
    """
    n = p.shape[-1]
    squares = (p**2).sum(axis=-1)
    T = squares + 2 * (p**3).sum(axis=-1) + squares**2
    return gamma(n + 4, np.float64) * T / (2 * norm) + gamma(n * n + 4, np.float64) * norm


def test_softmax_jacobian_matches_finite_differences() -> None:
    scores = np.array([0.3, -1.2, 2.0, 0.5])
    p = attnlib.softmax(scores)
    step = 1e-6
    numeric = np.column_stack(
        [
            (attnlib.softmax(scores + step * e) - attnlib.softmax(scores - step * e)) / (2 * step)
            for e in np.eye(4)
        ]
    )
    np.testing.assert_allclose(softmax_jacobian(p), numeric, atol=1e-8)
    rows = attnlib.softmax(np.random.default_rng(3).normal(scale=4, size=(5, 9)))
    for probabilities in (p[None, :], rows):
        expected = np.array([np.linalg.norm(softmax_jacobian(row)) for row in probabilities])
        bound = jacobian_norm_rounding(probabilities, expected)
        np.testing.assert_array_less(np.abs(softmax_jacobian_norm(probabilities) - expected), bound)
    with pytest.raises(ValueError, match="shape \\(n,\\)"):
        softmax_jacobian(np.eye(2))


def test_entropy_of_a_fully_masked_row_is_zero_not_minus_zero() -> None:
    weights = attnlib.attention_steps(
        np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), mask=[[True] * 4, [False] * 4]
    ).weights
    h = entropy(weights)
    assert h[0] == pytest.approx(math.log(4)) and h[1] == 0.0 and not np.signbit(h[1])
    assert not np.signbit(entropy([0.0, 1.0]))


def test_entropy_along_another_axis_and_of_float32_softmax() -> None:
    columns = np.array([[0.25, 1.0], [0.75, 0.0]])
    np.testing.assert_allclose(entropy(columns, axis=0), entropy(columns.T))
    wide = attnlib.softmax(np.random.default_rng(5).normal(size=(3, 1024)).astype(np.float32))
    assert entropy(wide).shape == (3,)  # float32 rounding in 1024 terms is still a distribution
