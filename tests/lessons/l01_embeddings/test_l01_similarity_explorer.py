"""Lesson 01's similarity explorer driven from Python over the whole range of every slider: after
each move its ``measures`` equal attnlib's; a repeated label, a zero vector, bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import slider_values

from attention_lessons.kit import examples
from attention_lessons.l01_embeddings.similarity import similarity
from attention_lessons.l01_embeddings.widgets import SimilarityExplorer, similarity_explorer

pytestmark = pytest.mark.filterwarnings("error")

EXAMPLE = examples.four_tokens_2d()


# --- the similarity explorer ---------------------------------------------------------------------


def assert_similarity_matches_attnlib(se: SimilarityExplorer) -> None:
    expected, measured = similarity(se.vectors[0], se.vectors[1]), se.measures
    for name in ("dot", "norm_a", "norm_b", "cosine", "angle_degrees"):
        assert getattr(measured, name) == getattr(expected, name), name


def test_similarity_every_slider_over_its_range() -> None:
    rng = np.random.default_rng(3)
    se = similarity_explorer()
    np.testing.assert_array_equal(se.vectors, EXAMPLE.X[:2])
    for i in range(2):
        for j in range(2):
            for value in slider_values(se.value_min, se.value_max, se.step, rng):
                pair = [list(v) for v in se.vectors]
                pair[i][j] = value
                se.vectors = pair
                assert_similarity_matches_attnlib(se)


def test_similarity_vectors_with_the_same_label_and_a_zero_vector() -> None:
    se = similarity_explorer([1.0, 0.0], [0.0, 1.0], labels=("v", "v"))
    assert se.measures.cosine == 0.0 and se.measures.angle_degrees == 90.0
    se.vectors = [[0.0, 0.0], [0.5, 0.5]]
    assert_similarity_matches_attnlib(se)
    assert se.measures.cosine is None and se.measures.angle_degrees is None and se.measures.dot == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": [1, 0]}, "give both vectors"),
        ({"a": [1, 0, 0], "b": [0, 1, 0]}, r"shape \(2,\)"),
        ({"a": [1, np.nan], "b": [0, 1]}, "finite"),
        ({"labels": ("a",)}, "labels must name the two vectors"),
        ({"labels": "ab"}, "labels must name the two vectors"),
        ({"step": -1}, "step must be a positive number"),
        ({"style": "bright"}, "style must be one of"),
    ],
)
def test_similarity_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        similarity_explorer(**kwargs)
