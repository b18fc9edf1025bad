"""Self-checks of heads: the shape after split_heads and the parameters of a multi-head layer
(lesson 09), the scale of one head (lesson 04)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.l09_many_heads.checks import (
    PARAMETER_MISTAKES,
    SPLIT_HEADS_MISTAKES,
    check_head_scale,
    check_parameter_count,
    check_split_heads_shape,
)
from attnlib.core import default_scale
from attnlib.counting import multi_head_parameter_counts
from attnlib.multihead import split_heads


def test_the_shape_split_heads_returns_passes():
    X = np.zeros((2, 5, 12))
    shape = split_heads(X, 4).shape
    assert check_split_heads_shape(shape, 2, 5, 12, 4).passed
    assert check_split_heads_shape(split_heads(X, 4), 2, 5, 12, 4).passed  # the array itself
    assert check_split_heads_shape(list(shape), 2, 5, 12, 4).passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ((2, 5, 4, 3), "Heads and positions swapped"),
        (np.zeros((2, 5, 12)).reshape(2, 5, 4, 3), "Heads and positions swapped"),  # reshape, no transpose
        ((2, 4, 5, 12), "whole width"),
        ((2, 4, 3, 5), "Positions and head width swapped"),
        ((4, 5, 3), "batch axis is missing"),
        ((2, 4, 5, 2), "Not yet"),
        ((1, 2), "4 axes"),
        (None, "No answer yet"),
        ("batch, heads, n, d", "tuple of whole numbers"),
    ],
)
def test_split_heads_mistakes_are_named_without_the_answer(answer, words):
    result = check_split_heads_shape(answer, 2, 5, 12, 4)
    assert not result.passed
    assert words in result.message
    assert "(2, 4, 5, 3)" not in result.message


def test_a_mistake_that_gives_the_right_shape_is_not_named():
    # n = n_heads: swapping heads and positions changes nothing; the right shape passes
    assert check_split_heads_shape((1, 3, 3, 2), 1, 3, 6, 3).passed
    assert all(m.wrong is not None for m in SPLIT_HEADS_MISTAKES)


@pytest.mark.parametrize(("d_model", "n_heads"), [(12, 4), (512, 8), (6, 2)])
def test_parameter_count(d_model, n_heads):
    right = multi_head_parameter_counts(d_model, n_heads=n_heads)["total"]
    assert check_parameter_count(right, d_model, n_heads).passed
    assert check_parameter_count(np.int64(right), d_model, n_heads).passed
    result = check_parameter_count(3 * d_model**2, d_model, n_heads)
    assert not result.passed and "forgot W_o" in result.message
    assert str(right) not in result.message and f"{right:,}" not in result.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (4 * 12 * 3, "one head"),
        (4 * 4 * 144, "whole width"),
        (4 * 144 + 48, "biases"),
        (144, "one of the four"),
        (100, "Not yet"),
        (2.5, "whole number"),
        (-4, "whole number"),
        ("many", "text"),
        (None, "No answer yet"),
    ],
)
def test_parameter_mistakes_are_named(answer, words):
    result = check_parameter_count(answer, 12, 4)
    assert not result.passed and words in result.message
    assert "576" not in result.message


def test_every_parameter_mistake_differs_from_the_right_count():
    from attention_lessons.l09_many_heads.checks import HeadsExercise

    ex = HeadsExercise(d_model=12, n_heads=4)
    assert all(m.wrong(ex) != 4 * 144 for m in PARAMETER_MISTAKES)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: check_split_heads_shape((1,), 2, 5, 12, 5), ValueError),
        (lambda: check_split_heads_shape((1,), 2, 5, 12.0, 4), TypeError),
        (lambda: check_parameter_count(1, 12, 0), ValueError),
        (lambda: check_parameter_count(1, 10, 4), ValueError),
        (lambda: check_head_scale(0.1, 384, 7), ValueError),
    ],
)
def test_bad_exercises_raise(call, error):
    with pytest.raises(error, match=r"d_model|n_heads"):
        call()


@pytest.mark.parametrize(("d_model", "n_heads"), [(4096, 32), (384, 12), (512, 8), (768, 12)])
def test_head_scale(d_model, n_heads):
    d_k = d_model // n_heads
    right = default_scale(d_k)
    assert check_head_scale(right, d_model, n_heads).passed
    assert check_head_scale(np.float32(right), d_model, n_heads).passed
    for wrong, words in [
        (default_scale(d_model), "√d_model"),
        (1 / d_k, "1/d_k"),
        (np.sqrt(d_k), "Multiplied by √d_k"),
        (1.0, "Forgot to scale"),
        (round(right, 2), "decimals"),
        (..., "No answer yet"),
    ]:
        result = check_head_scale(wrong, d_model, n_heads)
        assert not result.passed and words in result.message, (wrong, result.message)
        assert f"{right:.4f}" not in result.message and f"{right:.3f}" not in result.message
