"""The self-checks of lesson 14 (attention_lessons.l14_induction_heads.checks): every mistake of each table is
recognised from the answer it makes, right answers pass, and bad answers and inputs are named."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.l14_induction_heads.checks import (
    NEXT_TOKEN_MISTAKES,
    POSITION_MISTAKES,
    ROLE_MISTAKES,
    HeadScores,
    RepeatExercise,
    check_head_roles,
    check_induction_position,
    check_next_token,
)

#: Two layers of three heads: head 1 of layer 0 attends to the previous token, head 2 of layer 1
#: is the induction head; head 0 of layer 0 has a little induction score (the runner-up in layer 0).
PREVIOUS = np.array([[0.05, 0.97, 0.10], [0.08, 0.12, 0.04]])
INDUCTION = np.array([[0.20, 0.02, 0.03], [0.06, 0.01, 0.91]])
RIGHT = {"previous_token": (0, 1), "induction": (1, 2)}
SCORES = HeadScores(PREVIOUS, INDUCTION)

#: 7 3 9 2 7 3 9 2 7: position 8 holds 7, which last occurred at 4 and first at 0.
TOKENS = [7, 3, 9, 2, 7, 3, 9, 2, 7]
REPEAT = RepeatExercise(tuple(TOKENS), 8)


def test_the_right_roles_pass_and_say_why():
    result = check_head_roles(RIGHT, PREVIOUS, INDUCTION)
    assert result and "0.97" in result.message and "0.91" in result.message
    assert check_head_roles({"induction": [1, 2], "previous_token": [0, 1]}, PREVIOUS, INDUCTION)


@pytest.mark.parametrize("mistake", ROLE_MISTAKES, ids=lambda m: m.name)
def test_every_role_mistake_is_named(mistake):
    wrong = mistake.wrong(SCORES)
    assert wrong is not None and wrong != RIGHT
    result = check_head_roles(wrong, PREVIOUS, INDUCTION)
    assert not result and mistake.name in result.message


def test_an_unlisted_wrong_head_gets_its_scores():
    result = check_head_roles({"previous_token": (1, 0), "induction": (1, 2)}, PREVIOUS, INDUCTION)
    assert not result and "0.08" in result.message and "previous-token" in result.message


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (None, "No answer yet"),
        (..., "No answer yet"),
        ("layer 0 head 1", "Give a dict"),
        ({"previous_token": (0, 1)}, "Give a dict"),
        ({"previous_token": (0, 1), "induction": "1, 2"}, "pair (layer, head)"),
        ({"previous_token": (0, 1.0), "induction": (1, 2)}, "two whole numbers"),
        ({"previous_token": (0, True), "induction": (1, 2)}, "two whole numbers"),
        ({"previous_token": (0, 1), "induction": (2, 0)}, "not in this model"),
    ],
)
def test_bad_role_answers_say_what_is_wrong(answer, said):
    result = check_head_roles(answer, PREVIOUS, INDUCTION)
    assert not result and said in result.message


def test_bad_scores_are_errors():
    with pytest.raises(ValueError, match="n_layers, n_heads"):
        check_head_roles(RIGHT, PREVIOUS, INDUCTION[0])
    with pytest.raises(ValueError, match="both the highest"):
        check_head_roles(RIGHT, PREVIOUS, PREVIOUS)
    with pytest.raises(ValueError, match="non-finite"):
        check_head_roles(RIGHT, PREVIOUS * np.nan, INDUCTION)


def test_the_right_position_passes():
    assert check_induction_position(5, TOKENS, 8)
    assert check_induction_position(np.int64(5), TOKENS, 8)
    assert check_induction_position(1, [4, 6, 4], 2)


@pytest.mark.parametrize("mistake", POSITION_MISTAKES, ids=lambda m: m.name)
def test_every_position_mistake_is_named_without_the_answer(mistake):
    wrong = mistake.wrong(REPEAT)
    assert wrong != REPEAT.right
    result = check_induction_position(wrong, TOKENS, 8)
    assert not result and mistake.name in result.message
    assert "5" not in result.message


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (None, "No answer yet"),
        ("5", "whole number"),
        (5.0, "whole number"),
        (True, "whole number"),
        (9, "0 to 8"),
    ],
)
def test_bad_positions_say_what_is_wrong(answer, said):
    result = check_induction_position(answer, TOKENS, 8)
    assert not result and said in result.message


def test_a_position_with_no_earlier_copy_is_not_an_exercise():
    with pytest.raises(ValueError, match="does not occur before"):
        check_induction_position(0, TOKENS, 3)
    with pytest.raises(ValueError, match="query"):
        check_induction_position(0, TOKENS, 9)
    with pytest.raises(ValueError, match="token ids"):
        check_induction_position(0, [0.5, 1.5], 1)
    with pytest.raises(TypeError, match="token ids"):
        check_induction_position(0, "abca", 3)


def test_the_right_next_token_passes():
    assert check_next_token(3, TOKENS)
    assert check_next_token(np.int32(3), np.array(TOKENS))


@pytest.mark.parametrize("mistake", NEXT_TOKEN_MISTAKES, ids=lambda m: m.name)
def test_every_next_token_mistake_is_named(mistake):
    tokens = [7, 3, 9, 2, 7, 5, 8, 2, 7] if mistake.name.startswith("That follows the first") else TOKENS
    ex = RepeatExercise(tuple(tokens), len(tokens) - 1)
    wrong = mistake.wrong(ex)
    right = tokens[ex.earlier + 1]
    assert wrong != right
    result = check_next_token(wrong, tokens)
    assert not result and mistake.name in result.message
    assert str(right) not in result.message.replace(str(tokens[-1]), "")


def test_bad_next_tokens_say_what_is_wrong():
    assert "No answer yet" in check_next_token(None, TOKENS).message
    assert "whole number" in check_next_token("3", TOKENS).message
    assert "does not occur in the prompt" in check_next_token(11, TOKENS).message
    with pytest.raises(ValueError, match="does not occur before"):
        check_next_token(3, [1, 2, 3])


def test_the_right_heads_as_arrays_or_a_tied_head_pass() -> None:
    """Issue 44's held-out sweep: the right answer written as arrays, or naming the other of two heads
    tied for the highest score, was refused; scores of no head were numpy's error."""
    as_arrays = {role: np.array(head) for role, head in RIGHT.items()}
    assert check_head_roles(as_arrays, PREVIOUS, INDUCTION).passed
    tied = INDUCTION.copy()
    layer, head = RIGHT["induction"]
    other = (layer, (head + 1) % tied.shape[1])
    assert other != RIGHT["previous_token"]
    tied[other] = tied[layer, head]  # two heads share the highest induction score
    assert check_head_roles(RIGHT, PREVIOUS, tied).passed
    assert check_head_roles({**RIGHT, "induction": other}, PREVIOUS, tied).passed
    with pytest.raises(ValueError, match="scores of at least one head"):
        check_head_roles(RIGHT, np.zeros((0, 2)), np.zeros((0, 2)))
