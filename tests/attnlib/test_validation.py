"""attnlib.validation's helpers, and the promise around them: checked once at the door.

A learner who calls a step (``softmax``, ``raw_scores``, ...) directly still gets the step's own
checks; ``attention_steps`` checks its arguments once and runs the steps unchecked, and must
reject everything the checked steps would.
"""

import fractions
import warnings

import numpy as np
import pytest

from attnlib import apply_mask, attention_steps, raw_scores, scale_scores, softmax, weighted_sum
from attnlib.validation import all_finite, as_one_line, as_real, as_real_array, is_number


@pytest.mark.parametrize(
    "value", [0, 3, -2, 1.5, np.int64(4), np.uint8(2), np.float32(0.5), fractions.Fraction(1, 3)]
)
def test_is_number_accepts_real_numbers(value):
    assert is_number(value)


@pytest.mark.parametrize(
    "value", [True, False, np.True_, "1", None, 1 + 2j, [1.0], np.array(1.0), np.ones(2)]
)
def test_is_number_rejects_booleans_text_and_arrays(value):
    assert not is_number(value)
    assert not is_number(value, whole=True)


def test_is_number_whole_accepts_only_integers():
    assert is_number(3, whole=True) and is_number(np.int32(-1), whole=True)
    assert not is_number(3.0, whole=True) and not is_number(np.float64(2), whole=True)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("0.5", TypeError, r"scale must be a real number such as 0\.5, got '0\.5'"),
        (True, TypeError, r"scale must be a real number such as 0\.5, got True"),
        (float("nan"), ValueError, r"scale must be a finite number, got nan"),
        (-np.inf, ValueError, r"scale must be a finite number, got -inf"),
        (10**400, ValueError, r"scale is too large for a float \(an integer of 401 digits\)"),
    ],
)
def test_as_real_names_what_is_wrong(value, error, message):
    with pytest.raises(error, match=message):
        as_real(value, "scale", example="0.5")


def test_as_real_gives_a_python_float():
    value = as_real(np.float32(0.25), "x")
    assert value == 0.25 and type(value) is float
    with pytest.raises(TypeError, match=r"^x must be a real number, got 'a'$"):
        as_real("a", "x")


@pytest.mark.parametrize(
    "array",
    [
        np.ones((2, 3)),
        np.zeros(0),
        np.array([1.0, np.nan]),
        np.array([[np.inf, 1.0]]),
        np.array([-np.inf]),
        np.full((3, 3), 3e38, np.float32),
    ],
)
def test_all_finite_is_isfinite_all(array):
    assert all_finite(array) == bool(np.isfinite(array).all())


def test_as_real_array_dtype_gives_float64_for_the_explorers():
    arr = as_real_array(np.ones(2, np.float32), "a", dtype=np.float64)
    assert arr.dtype == np.float64
    assert as_real_array(np.ones(2, np.float32), "a").dtype == np.float32
    with pytest.raises(TypeError, match="query must be an array of real numbers"):
        as_real_array("ab", "query", dtype=np.float64)


def test_as_one_line():
    assert as_one_line("that is 1/d_k.", "why") == "that is 1/d_k."
    with pytest.raises(ValueError, match="why must be a non-empty single line"):
        as_one_line("two\nlines", "why")
    with pytest.raises(TypeError, match="why must be a string"):
        as_one_line(3, "why")


# --- a learner calling a step directly still gets its checks --------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: softmax([[1.0, np.nan]]), r"x has 1 non-finite entry .*NaN at index \(0, 1\)"),
        (lambda: softmax([[1.0, np.inf]]), r"x has 1 non-finite entry .*inf at index \(0, 1\)"),
        (lambda: softmax([[1.0, 2.0]], axis=2), r"axis 2 is out of range for x of shape \(1, 2\)"),
        (lambda: raw_scores([[np.nan, 1.0]], [[1.0, 1.0]]), r"Q has 1 non-finite entry"),
        (
            lambda: raw_scores([[1.0, 1.0]], [[1.0, 1.0, 1.0]]),
            r"Q and K must have the same last dimension",
        ),
        (lambda: scale_scores([[np.nan]], 0.5), r"scores has 1 non-finite entry"),
        (lambda: scale_scores([[1.0]], np.inf), r"scale must be a finite number, got inf"),
        (
            lambda: apply_mask([[1.0, 2.0]], [[True, False, True]]),
            r"mask of shape \(1, 3\) does not",
        ),
        (lambda: apply_mask([[1.0, 2.0]], [[0.0, np.nan]]), r"mask has NaN entries"),
        (lambda: weighted_sum([[0.5, 0.5]], [[1.0], [np.nan]]), r"V has 1 non-finite entry"),
        (lambda: weighted_sum([[0.5, 0.5]], [[1.0]]), r"weights and V must have the same number of keys"),
    ],
)
def test_a_step_called_directly_still_checks(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- attention_steps, checked once, rejects what the checked steps reject ------------------

Q = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
V = np.array([[1.0, 2.0], [3.0, 4.0]])


def with_entry(array, index, value):
    changed = np.array(array, dtype=float)
    changed[index] = value
    return changed


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"Q": with_entry(Q, (1, 2), np.nan)},
            r"Q has 1 non-finite entry; .*NaN at index \(1, 2\)",
        ),
        (
            {"K": with_entry(Q, (0, 0), -np.inf)},
            r"K has 1 non-finite entry; .*-inf at index \(0, 0\)",
        ),
        (
            {"V": with_entry(V, (1, 1), np.inf)},
            r"V has 1 non-finite entry; .*inf at index \(1, 1\)",
        ),
        ({"mask": np.array([[0.0, np.nan]] * 2)}, r"mask has NaN entries"),
        ({"mask": np.array([[0.0, np.inf]] * 2)}, r"mask has \+inf entries"),
        ({"mask": np.ones((3, 3), bool)}, r"mask of shape \(3, 3\) does not broadcast"),
        ({"V": np.ones((3, 2))}, r"K and V must have the same number of keys"),
        ({"scale": np.nan}, r"scale must be a finite number, got nan"),
        (
            {"Q": np.full((2, 4), 1e200), "K": np.full((2, 4), -1e200)},
            r"raw scores Q Kᵀ overflow float64",
        ),
        ({"scale": 1e308, "Q": np.full((2, 4), 10.0)}, r"scaling the scores by 1e\+308 overflows float64"),
        (
            {"Q": [[1e154]], "K": [[1e154], [1.0]], "V": [[1.0], [2.0]], "scale": 1.0, "mask": [1e308, 0.0]},
            r"adding the mask to the scores overflows float64",
        ),
        (  # no values to carry the NaN: the weights themselves are checked
            {"Q": [[1e154]], "K": [[1e154], [1.0]], "V": np.ones((2, 0)), "scale": 1.0, "mask": [1e308, 0.0]},
            r"adding the mask to the scores overflows float64",
        ),
    ],
)
def test_attention_steps_rejects_what_the_steps_reject(kwargs, message):
    arguments = {"Q": Q, "K": Q, "V": V} | kwargs
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # named, not warned about
        with pytest.raises(ValueError, match=message):
            attention_steps(**arguments)


def test_attention_steps_gives_what_the_checked_steps_give():
    mask = np.array([[0.0, -1.0], [-np.inf, 0.5]])
    steps = attention_steps(Q, Q, V, mask=mask, causal=True, scale=0.3)
    masked = apply_mask(apply_mask(scale_scores(raw_scores(Q, Q), 0.3), mask), np.tri(2, dtype=bool))
    np.testing.assert_array_equal(steps.masked_scores, masked)
    np.testing.assert_array_equal(steps.weights, softmax(masked))
    np.testing.assert_array_equal(steps.output, weighted_sum(softmax(masked), V))
