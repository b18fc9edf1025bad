"""Lesson 08's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

import numpy as np

import attnlib
from attention_lessons.kit import examples
from attention_lessons.kit.checks.wording import as_printed
from attnlib import counting


def exercise_1() -> list[str]:
    """Exercise 1 (plain dot-product attention): the weights, and entries a and c of the output."""
    ex1 = examples.plain_attention_exercise()
    one = attnlib.attention_steps(ex1.Q, ex1.K, ex1.K, scale=1.0)
    values = [*one.weights, one.output[0], one.output[2]]  # b, the output's 2, is everywhere
    return [as_printed(value) for value in values]


def exercise_2() -> list[str]:
    """Exercise 2: the shape of the weights, the scale for d_k = 6, the operation counts, the mask."""
    hand = examples.attention_by_hand()
    (n_q, d_k), (n_k, d_v) = hand.Q.shape, hand.V.shape
    totals = counting.operation_counts(n_q, n_k, d_k, d_v, stable=False).totals()
    with np.printoptions(precision=4, suppress=True):  # lesson 08's print options
        mask = str(attnlib.causal_mask(4))
    return [
        str((n_q, n_k)),
        as_printed(attnlib.default_scale(6)),
        f"{totals['multiplications']} multiplications and {totals['additions']} additions",
        mask,
    ]


def exercise_3() -> list[str]:
    """Exercise 3 (attention by hand): S, S / √d_k, the weights and Z (to 4 and to 2 decimals)."""
    three = attnlib.attention_steps(*examples.attention_by_hand())
    with np.printoptions(precision=4, suppress=True):  # lesson 08's print options
        scores = str(three.raw_scores)
    steps = [*three.scaled_scores.ravel(), *three.weights.ravel(), *three.output.ravel()]
    return [
        scores,
        *(as_printed(value) for value in steps),
        *(as_printed(value, 2) for value in three.output.ravel()),
    ]
