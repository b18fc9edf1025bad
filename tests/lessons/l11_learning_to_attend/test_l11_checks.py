"""attention_lessons.l11_learning_to_attend.checks: lesson 11's self-checks recognise each mistake and never
reveal the answer."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.l11_learning_to_attend import checks
from attention_lessons.l11_learning_to_attend.checks import (
    DIRECTION_MISTAKES,
    SOFTMAX_GRADIENT_MISTAKES,
    VALUE_GRADIENT_MISTAKES,
    GradientExercise,
    check_score_direction,
    check_softmax_gradient,
    check_value_gradient,
)
from attnlib.backward import attention_backward, softmax_backward

A = np.array([[0.8, 0.2], [0.4, 0.6]])
DZ = np.array([[1.0, 0.0], [0.0, 2.0]])
ROW = np.array([0.5, 0.3, 0.2])
D_ROW = np.array([1.0, -1.0, 0.5])
ALL_NEGATIVE = np.array([-1.0, -0.2, -0.5])  # every weight should grow, but they compete


def _right_dv():
    V = np.array([[0.3, -1.0], [2.0, 0.5]])
    Q, K = np.log(A), np.eye(2)  # softmax(log A · I) = A: weights A with scale 1
    return attention_backward(Q, K, V, DZ, scale=1.0)[2]


def test_the_right_dv_passes_and_is_attention_backwards():
    np.testing.assert_allclose(_right_dv(), A.T @ DZ, atol=1e-12)
    assert check_value_gradient(_right_dv(), A, DZ).passed
    assert check_value_gradient((A.T @ DZ).round(2), A, DZ).passed
    assert checks.check_value_gradient is check_value_gradient


@pytest.mark.parametrize("mistake", VALUE_GRADIENT_MISTAKES, ids=lambda m: m.name)
def test_each_dv_mistake_is_named(mistake):
    wrong = mistake.wrong(GradientExercise(A, DZ))
    result = check_value_gradient(wrong, A, DZ)
    assert not result.passed
    assert mistake.name in result.message


@pytest.mark.parametrize("mistake", SOFTMAX_GRADIENT_MISTAKES, ids=lambda m: m.name)
def test_each_softmax_gradient_mistake_is_named(mistake):
    result = check_softmax_gradient(mistake.wrong(GradientExercise(ROW, D_ROW)), ROW, D_ROW)
    assert not result.passed
    assert mistake.name in result.message


def test_the_right_softmax_gradient_passes():
    assert check_softmax_gradient(softmax_backward(ROW, D_ROW), ROW, D_ROW).passed
    assert not check_softmax_gradient(softmax_backward(ROW, D_ROW) + 0.1, ROW, D_ROW).passed


def test_score_directions_follow_the_score_gradient_not_the_weights():
    ds = softmax_backward(ROW, ALL_NEGATIVE)
    for key in range(3):
        right = "up" if ds[key] < 0 else "down"
        wrong = "down" if right == "up" else "up"
        assert check_score_direction(right, ROW, ALL_NEGATIVE, key).passed
        assert check_score_direction(+1 if right == "up" else -1, ROW, ALL_NEGATIVE, key).passed
        message = check_score_direction(wrong, ROW, ALL_NEGATIVE, key).message
        # da < 0 for every key: a learner reading da says "up" everywhere
        expected = DIRECTION_MISTAKES[0 if wrong == "up" else 1].name
        assert expected in message


@pytest.mark.parametrize(
    "answer",
    [np.array([[9.0, 9.0], [9.0, 9.0]]), np.zeros((1, 2)), None, ..., "0.8", [[np.nan, 0], [0, 0]]],
)
def test_wrong_or_unreadable_dv_fails_without_showing_the_answer(answer):
    result = check_value_gradient(answer, A, DZ)
    assert not result.passed
    for value in (A.T @ DZ).ravel():
        if value not in (0.0, 1.0, 2.0):  # numbers that also appear in the exercise
            assert f"{value:.2f}" not in result.message


@pytest.mark.parametrize("answer", ["sideways", None, 0, "  "])
def test_unreadable_directions_fail(answer):
    assert not check_score_direction(answer, ROW, D_ROW, 1).passed


def test_bad_exercise_inputs_raise_naming_them():
    with pytest.raises(ValueError, match="softmax of the scores"):
        check_value_gradient(np.zeros((2, 2)), [[2.0, -1.0], [0.5, 0.5]], DZ)
    with pytest.raises(ValueError, match="one row per query"):
        check_value_gradient(np.zeros((2, 2)), A, np.ones((3, 2)))
    with pytest.raises(ValueError, match="d_weights"):
        check_softmax_gradient(np.zeros(3), ROW, [1.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="one row each"):
        check_softmax_gradient(np.zeros(3), ROW, [1.0, 0.0])
    with pytest.raises(ValueError, match="key must be"):
        check_score_direction("up", ROW, D_ROW, 3)
    with pytest.raises(TypeError, match="weights"):
        check_score_direction("up", None, D_ROW, 0)
    with pytest.raises(ValueError, match="does not move"):
        check_score_direction("up", ROW, np.ones(3), 0)
