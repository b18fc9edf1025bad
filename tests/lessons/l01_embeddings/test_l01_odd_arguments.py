"""Lesson 01's similarity, called with odd arguments: a right answer or a clear error.

The sweep of ``tests/attnlib/test_odd_arguments.py`` (``conftest``'s odd values and harness) on
:func:`attention_lessons.l01_embeddings.similarity.similarity`, every pair of odd values and any
finite floats from 5e-324 to 1.8e308.
"""

from __future__ import annotations

import numpy as np
from conftest import answer_or_clear_error, every_odd_combination
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_lessons.l01_embeddings import similarity


def test_every_combination_of_odd_arguments() -> None:
    every_odd_combination("similarity", similarity.similarity, 2)


finite_floats = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    arrays(np.float64, st.integers(1, 3), elements=finite_floats),
    arrays(np.float64, st.integers(1, 3), elements=finite_floats),
)
def test_any_finite_floats_in_the_similarity(a: np.ndarray, b: np.ndarray) -> None:
    """Two vectors of any finite floats: the similarity is finite or a clear error, never NaN."""
    answer_or_clear_error(lambda: similarity.similarity(a, np.resize(b, a.shape)))
