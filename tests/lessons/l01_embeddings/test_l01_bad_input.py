"""Lesson 01's similarity given what it cannot compute: a ValueError naming what is wrong, and no
warning on the way (``tests/attnlib/test_bad_input.py`` holds attnlib's own cases)."""

import warnings

import pytest

from attention_lessons.l01_embeddings.similarity import similarity

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

CASES = [
    (
        "similarity-dot-beyond-float",
        lambda: similarity([1e200, 0], [1e200, 0]),
        ValueError,
        r"the dot product a · b is beyond the float64 range "
        r"\(\|a\| = 1e\+200, \|b\| = 1e\+200, cos θ = 1\.0000\)",
    ),
    (
        "similarity-length-beyond-float",
        lambda: similarity([1.7e308, 1.7e308], [1.0, 0.0]),
        ValueError,
        r"the length of a vector is beyond the float64 range",
    ),
    ("similarity-empty", lambda: similarity([], []), ValueError, r"a and b are empty"),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_clear_error(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning before the error would be a bug too
        with pytest.raises(error, match=message):
            call()
