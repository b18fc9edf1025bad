"""attention_lessons.l10_positions.checks: right answers pass, each row of the tables is named, and no message
gives the right answer away."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from attention_lessons.kit.checks import CheckResult
from attention_lessons.l10_positions.checks import (
    SHIFT_MISTAKES,
    SINUSOIDAL_MISTAKES,
    VALUE_ROTATION_MISTAKES,
    EncodingExercise,
    ShiftExercise,
    check_rotated_values,
    check_shifted_score,
    check_sinusoidal,
)
from attention_lessons.l10_positions.plots import ROPE_KEY, ROPE_QUERY
from attnlib.positions import rope, sinusoidal

Q_2D = np.array([1.0, 0.5])
K_2D = np.array([0.2, 1.0])


def numbers_in(message: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", message.replace("−", "-"))]


def gives_away(message: str, right: np.ndarray, decimals: int) -> bool:
    """Whether the message shows an entry of ``right`` rounded to ``decimals`` (or more) places."""
    return any(
        math.isclose(shown, value, abs_tol=10.0**-decimals)
        for shown in numbers_in(message)
        for value in right
    )


# --- PE[p, :columns] -------------------------------------------------------------------------------


@pytest.mark.parametrize(("position", "d_model", "columns"), [(3, 8, 4), (5, 16, 6), (1, 4, None), (7, 6, 6)])
def test_sinusoidal_right_answers_pass(position, d_model, columns):
    right = sinusoidal(position + 1, d_model)[position, : columns or d_model]
    for answer in (right, right.round(3).tolist(), tuple(right.round(4))):
        result = check_sinusoidal(answer, position, d_model, columns=columns)
        assert result.passed, str(result)


def test_sinusoidal_at_a_huge_position_computes_one_row():
    p = 10**12  # the whole table up to p would be 7 TiB: the check computes only row p
    right = [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)]
    assert check_sinusoidal(right, p, 4).passed
    assert not check_sinusoidal([0.0, 1.0, 0.0, 1.0], p, 4).passed


@pytest.mark.parametrize(("position", "d_model", "columns"), [(3, 8, 4), (5, 16, 6), (2, 6, 6)])
def test_sinusoidal_every_mistake_is_named(position, d_model, columns):
    ex = EncodingExercise(position, d_model, columns, 10000.0)
    right = sinusoidal(position + 1, d_model)[position, :columns]
    named = 0
    for mistake in SINUSOIDAL_MISTAKES:
        wrong = mistake.wrong(ex)
        if wrong is None or np.allclose(wrong, right, atol=1e-3):
            continue  # this exercise cannot tell the mistake from the right answer
        result = check_sinusoidal(np.round(wrong, 3), position, d_model, columns=columns)
        assert not result.passed
        assert mistake.message(ex) in result.message, (mistake.name, result.message)
        assert not gives_away(result.message, right, 3), result.message
        named += 1
    assert named >= 7


def test_sinusoidal_the_lessons_exercise_tells_every_mistake_apart():
    ex = EncodingExercise(3, 8, 4, 10000.0)
    answers = [tuple(np.round(m.wrong(ex), 3)) for m in SINUSOIDAL_MISTAKES]
    right = tuple(np.round(sinusoidal(4, 8)[3, :4], 3))
    assert right not in answers
    # the two off-by-one rows give different numbers with the same advice; every other row is unique
    assert len(set(answers)) == len(answers)


def test_sinusoidal_an_unknown_answer_says_which_column_is_off():
    right = sinusoidal(4, 8)[3, :4]
    answer = right.copy()
    answer[2] += 0.2
    result = check_sinusoidal(answer, 3, 8, columns=4)
    assert not result.passed and "column 2" in result.message and "sin" in result.message
    assert not gives_away(result.message, right, 3)


def test_sinusoidal_the_lessons_demonstration_names_the_swap():
    """Lesson 10 shows the swap on row 2 of sinusoidal(3, 4), each pair's columns exchanged, so that
    the demonstration does not hold the code of the self-check's row (position 100, d_model = 8)."""
    exchanged = sinusoidal(3, 4)[2, [1, 0, 3, 2]]
    result = check_sinusoidal(exchanged, position=2, d_model=4)
    assert not result.passed and result.message.startswith("Sine and cosine swapped"), result.message
    ex = EncodingExercise(2, 4, 4, 10000.0)
    assert np.allclose(exchanged, ex.row(swapped=True))


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (None, "No answer yet"),
        (..., "No answer yet"),
        ("0.14, -0.99", "text"),
        ([0.1, 0.2], "Wrong shape"),
        ([[0.1, 0.2, 0.3, 0.4]], "Wrong shape"),
        ([0.1, np.nan, 0.3, 0.4], "NaN"),
        ([True, False, True, False], "boolean"),
        ([[0.1], [0.2, 0.3]], "ragged"),
    ],
)
def test_sinusoidal_answers_that_are_not_four_numbers(answer, words):
    result = check_sinusoidal(answer, 3, 8, columns=4)
    assert isinstance(result, CheckResult) and not result.passed
    assert words in result.message, result.message


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"position": -1}, ValueError, "position"),
        ({"position": 1.5}, TypeError, "position"),
        ({"position": 10**300, "d_model": 8}, ValueError, "position must be at most 2"),
        ({"d_model": 0}, ValueError, "d_model"),
        ({"columns": 9}, ValueError, "columns"),
        ({"base": "big"}, TypeError, "base"),
        ({"base": float("nan")}, ValueError, "base"),
        ({"decimals": -1}, ValueError, "decimals"),
    ],
)
def test_sinusoidal_bad_exercise_inputs_raise(kwargs, error, words):
    arguments = {"position": 3, "d_model": 8, "columns": 4} | kwargs
    with pytest.raises(error, match=words):
        check_sinusoidal([0.0] * 4, **arguments)


# --- the score after a shift -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "k", "m", "n", "shift"),
    [
        (Q_2D, K_2D, 2, 5, 7),
        (np.array(ROPE_QUERY), np.array(ROPE_KEY), 2, 5, 40),  # lesson 10's self-check
        (np.arange(1.0, 5.0), np.array([0.5, -1.0, 2.0, 0.3]), 1, 4, 100),
    ],
)
def test_shifted_score_right_and_each_mistake(q, k, m, n, shift):
    right = rope(q, [m]) @ rope(k, [n])
    assert check_shifted_score(round(float(right), 3), q, k, m, n, shift).passed
    assert check_shifted_score(np.float32(right), q, k, m, n, shift).passed
    ex = ShiftExercise(np.asarray(q, float), np.asarray(k, float), m, n, shift, 10000.0)
    for mistake in SHIFT_MISTAKES:
        wrong = mistake.wrong(ex)
        result = check_shifted_score(round(wrong, 3), q, k, m, n, shift)
        assert not result.passed
        assert mistake.name in result.message, (mistake.name, result.message)
        assert not gives_away(result.message, [right], 3), result.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [(None, "No answer yet"), ("the same", "text"), (True, "boolean"), ([1.0, 2.0], "single number")],
)
def test_shifted_score_answers_that_are_not_a_number(answer, words):
    result = check_shifted_score(answer, Q_2D, K_2D, 2, 5, 7)
    assert not result.passed and words in result.message, result.message


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"q": [1.0, 2.0, 3.0]}, ValueError, "even"),
        ({"k": [1.0, 2.0, 3.0, 4.0]}, ValueError, "same length"),
        ({"q": [[1.0, 2.0], [3.0, 4.0]]}, ValueError, "positions|single vectors"),
        ({"m": float("inf")}, ValueError, "m must be a finite number"),
        ({"shift": "seven"}, TypeError, "shift"),
        ({"base": 0.0}, ValueError, "base"),
    ],
)
def test_shifted_score_bad_exercise_inputs_raise(kwargs, error, words):
    arguments = {"q": Q_2D, "k": K_2D, "m": 2, "n": 5, "shift": 7} | kwargs
    with pytest.raises(error, match=words):
        check_shifted_score(0.0, **arguments)


# --- what rotating v would change ------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer", ["outputs", "the outputs", "Only the outputs.", "output", "z", ["outputs"], ("Outputs",)]
)
def test_rotated_values_right(answer):
    result = check_rotated_values(answer)
    assert result.passed, result.message


@pytest.mark.parametrize(
    ("answer", "name"),
    [
        ("weights", "Rotating v changes no weight"),
        ("the scores", "Rotating v changes no weight"),
        ("both", "Rotating v changes no weight"),
        ("outputs and weights", "Rotating v changes no weight"),
        (["weights", "outputs"], "Rotating v changes no weight"),
        ("neither", "Something does change"),
        ("nothing", "Something does change"),
    ],
)
def test_rotated_values_mistakes_are_named(answer, name):
    result = check_rotated_values(answer)
    assert not result.passed and result.message.startswith(name), result.message


def test_rotated_values_every_row_is_reachable_and_says_why():
    for mistake in VALUE_ROTATION_MISTAKES:
        chosen = mistake.wrong(frozenset({"outputs"}))
        result = check_rotated_values(sorted(chosen) or "neither")
        assert not result.passed and mistake.name in result.message
        assert "outputs" not in result.message.split(":")[0], "the mistake's name must not give the answer"


def test_rotated_values_is_what_attnlib_computes():
    """Rotating v as well as q and k changes the outputs and not one weight (lesson 10's claim)."""
    from attnlib import scaled_dot_product_attention

    rng = np.random.default_rng(10)
    Q, K, V = rng.normal(size=(3, 5, 4))
    out, weights = scaled_dot_product_attention(rope(Q), rope(K), V)
    out_v, weights_v = scaled_dot_product_attention(rope(Q), rope(K), rope(V))
    assert np.allclose(weights_v, weights) and not np.allclose(out_v, out)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (None, "No answer yet"),
        (..., "No answer yet"),
        ("", "Answer"),
        ("q, k", "Could not read"),
        ("v", "Could not read"),
        (3, "as text"),
        (["outputs", 1], "text"),
    ],
)
def test_rotated_values_unreadable_answers(answer, words):
    result = check_rotated_values(answer)
    assert not result.passed and words in result.message, result.message
