"""Lesson 04's experiment (the entropy, the softmax Jacobian, the random queries and keys), called
with odd arguments: a right answer or a clear error.

The sweep of ``tests/attnlib/test_odd_arguments.py`` (``conftest``'s odd values and harness) on
:mod:`attention_lessons.l04_scaling.scaling`: every combination of odd values, and any finite
floats from 5e-324 to 1.8e308.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from conftest import answer_or_clear_error, every_odd_combination
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_lessons.l04_scaling import scaling

CALLS: dict[str, tuple[Callable[..., object], int]] = {
    "entropy": (scaling.entropy, 2),
    "softmax_jacobian": (scaling.softmax_jacobian, 1),
    "softmax_jacobian_norm": (scaling.softmax_jacobian_norm, 1),
    "random_queries_keys": (lambda d_k, seed: scaling.random_queries_keys(d_k, 1, 2, seed=seed), 2),
    "random_queries_keys-sizes": (lambda n_q, n_k: scaling.random_queries_keys(2, n_q, n_k), 2),
    "scaling_statistics": (lambda d_k: scaling.scaling_statistics(d_k, n_queries=2, n_keys=2), 1),
}


@pytest.mark.parametrize("name", CALLS)
def test_every_combination_of_odd_arguments(name: str) -> None:
    every_odd_combination(name, *CALLS[name])


finite_floats = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3)), elements=finite_floats),
    arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3)), elements=finite_floats),
)
def test_any_finite_floats_in_the_entropy_and_the_jacobian(Q: np.ndarray, K: np.ndarray) -> None:
    """Any finite floats: the entropy and the Jacobian's norm are finite or a clear error, never NaN."""
    answer_or_clear_error(lambda: scaling.entropy(Q))
    answer_or_clear_error(lambda: scaling.softmax_jacobian_norm(K))
