"""Fixtures of the scaling explorer's Node tests (scaling.test.mjs): random queries and keys of every
d_k as lesson 04 draws them with what attnlib computes of them, and the table the explorer receives.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

from attention_lessons.l04_scaling.scaling import D_K_VALUES, random_queries_keys
from attention_lessons.l04_scaling.widgets import scaling_table
from attnlib.core import attention_steps, entropy, softmax


def scaling_cases() -> list[dict]:
    """Random queries and keys of every d_k from 1 to 1024, as lesson 04's explorer draws them."""
    cases = []
    for d_k in D_K_VALUES:
        Q, K = random_queries_keys(d_k, 3, 8, seed=d_k)
        steps = attention_steps(Q, K, K)
        raw_weights = softmax(steps.raw_scores)
        cases.append(
            {
                "d_k": d_k,
                "Q": Q.tolist(),
                "K": K.tolist(),
                "expected": {
                    "rawScores": steps.raw_scores.tolist(),
                    "scaledScores": steps.scaled_scores.tolist(),
                    "rawWeights": raw_weights.tolist(),
                    "scaledWeights": steps.weights.tolist(),
                    "rawEntropy": entropy(raw_weights).tolist(),
                    "scaledEntropy": entropy(steps.weights).tolist(),
                },
            }
        )
    return cases


def fixtures() -> dict:
    return {
        "scaling": scaling_cases(),
        "scalingTable": {"n_queries": 32, "n_keys": 8, "seed": 3, "table": scaling_table(32, 8, 3)},
    }
