"""Lesson 05's softmax explorer driven from Python over the whole range of every slider and mask:
after each move its ``weights`` equal attnlib's softmax; every key masked, repeated names, bad
arguments and trait values."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets
from conftest import slider_values

from attention_lessons.kit import examples
from attention_lessons.l05_softmax.widgets import SoftmaxExplorer, softmax_explorer
from attnlib import softmax

pytestmark = pytest.mark.filterwarnings("error")

EXAMPLE = examples.four_tokens_2d()


# --- the softmax explorer ------------------------------------------------------------------------


def assert_softmax_matches_attnlib(sm: SoftmaxExplorer) -> None:
    shown = np.where(sm.masks, -np.inf, sm.scores)
    expected = softmax(shown / sm.temperature)
    np.testing.assert_array_equal(sm.weights, expected)


def test_softmax_every_slider_and_mask_over_its_range() -> None:
    rng = np.random.default_rng(5)
    sm = softmax_explorer()
    assert sm.labels == ["h1", "h2", "h3"]
    assert_softmax_matches_attnlib(sm)
    for i in range(len(sm.labels)):
        for value in slider_values(sm.value_min, sm.value_max, sm.step, rng):
            scores = list(sm.scores)
            scores[i] = value
            sm.scores = scores
            assert_softmax_matches_attnlib(sm)
    for exponent in slider_values(-1.0, 1.0, 0.02, rng):  # the slider moves log10 T
        sm.temperature = 10**exponent
        assert_softmax_matches_attnlib(sm)
    for i in range(len(sm.labels)):
        masks = [False] * len(sm.labels)
        masks[i] = True
        sm.masks = masks
        assert_softmax_matches_attnlib(sm)
        assert sm.weights[i] == 0.0


def test_softmax_every_key_masked_gives_zero_weights() -> None:
    sm = softmax_explorer([1.0, -3.0, 4.0], temperature=0.1)
    sm.masks = [True, True, True]
    assert sm.weights.tolist() == [0.0, 0.0, 0.0]


def test_softmax_keys_with_the_same_name_are_separate() -> None:
    sm = softmax_explorer([1.0, 3.0], ["k", "k"])
    assert sm.weights[0] < 0.5 < sm.weights[1]
    sm.scores = [3.0, 1.0]
    assert sm.weights[0] > 0.5 > sm.weights[1]
    sm.masks = [False, True]
    assert sm.weights.tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([],), {}, "1 to 10 numbers"),
        ((np.zeros(11),), {}, "1 to 10 numbers"),
        (([[1, 2]],), {}, "one row"),
        (([1, 2], ["a"]), {}, "one label per score"),
        (([1, np.inf],), {}, "finite"),
        (([1, 2],), {"temperature": 0.05}, "temperature must be between 0.1 and 10"),
        (([1, 2],), {"temperature": "hot"}, "temperature must be a number"),
        (([1, 2],), {"style": "neon"}, "style must be one of"),
        (([1, 2],), {"value_range": (3, 3)}, "value_range"),
    ],
)
def test_softmax_bad_arguments(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        softmax_explorer(*args, **kwargs)


def test_softmax_bad_trait_values() -> None:
    sm = softmax_explorer()
    with pytest.raises(traitlets.TraitError, match=r"temperature must be from 0\.1 to 10"):
        sm.temperature = 20.0
    with pytest.raises(traitlets.TraitError, match="3 numbers"):
        sm.scores = [1.0]
    with pytest.raises(traitlets.TraitError, match="3 booleans"):
        sm.masks = [True]
    assert_softmax_matches_attnlib(sm)
