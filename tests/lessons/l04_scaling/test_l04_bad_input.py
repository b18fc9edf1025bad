"""Lesson 04's experiment given what it cannot compute: a ValueError naming what is wrong, and no
warning on the way (``tests/attnlib/test_bad_input.py`` holds attnlib's own cases)."""

import warnings

import pytest

from attention_lessons.l04_scaling.scaling import (
    entropy,
    random_queries_keys,
    softmax_jacobian,
    softmax_jacobian_norm,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

CASES = [
    # not probabilities
    (
        "entropy-of-scores",
        lambda: entropy([[2, 2]]),
        ValueError,
        r"weights must be probabilities between 0 and 1, got values from 2 to 2 \(pass the softmax",
    ),
    (
        "entropy-rows-not-summing-to-1",
        lambda: entropy([[0.3, 0.3], [0.5, 0.5]]),
        ValueError,
        r"weights must sum to 1 along axis -1 .*the distribution at index \(0,\) sums to 0\.6",
    ),
    (
        "entropy-axis-out-of-range",
        lambda: entropy([[0.5, 0.5]], axis=2),
        ValueError,
        r"axis 2 is out of range for weights of shape \(1, 2\)",
    ),
    (
        "softmax_jacobian_norm-of-scores",
        lambda: softmax_jacobian_norm([1e200, 1.0]),
        ValueError,
        r"weights must be probabilities between 0 and 1, got values from 1 to 1e\+200",
    ),
    (
        "softmax_jacobian-of-scores",
        lambda: softmax_jacobian([3.0, -1.0]),
        ValueError,
        r"weights must be probabilities between 0 and 1",
    ),
    # the random experiment
    (
        "random_queries_keys-negative-seed",
        lambda: random_queries_keys(4, seed=-1),
        ValueError,
        r"seed must be at least 0, got -1",
    ),
    (
        "random_queries_keys-too-many",
        lambda: random_queries_keys(4, 10**30),
        ValueError,
        r"10{30} queries and 8 keys of d_k=4 are too many to draw",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_clear_error(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning before the error would be a bug too
        with pytest.raises(error, match=message):
            call()
