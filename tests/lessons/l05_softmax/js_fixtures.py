"""Fixtures of the softmax explorer's Node tests (softmax.test.mjs): seeded scores, masks and
temperatures, and the weights and entropy attnlib computes of them.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

import numpy as np

from attnlib.core import entropy, softmax

#: The kit's seed (tests/kit/js/make_fixtures.py) plus the lesson's number: a stream of its own.
SEED = 20261123 + 5


def softmax_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    temperatures = [0.1, 10.0, 1.0, *(10 ** rng.uniform(-1, 1, 5))]
    for n in (1, 3, 10):
        for temperature in temperatures:
            scores = rng.uniform(-10, 10, n)
            masks = rng.random(n) < 0.3
            cases.append((scores, masks, temperature))
    cases.append((np.array([2.0, 2.0]), np.array([False, False]), 1.0))  # equal keys named alike
    cases.append((np.array([1.0, -3.0, 4.0]), np.array([True, True, True]), 0.1))  # every key masked
    cases.append((np.array([10.0, -10.0, 9.9]), np.array([False, False, False]), 0.1))  # saturated
    result = []
    for scores, masks, temperature in cases:
        weights = softmax(np.where(masks, -np.inf, scores) / temperature)
        result.append(
            {
                "scores": scores.tolist(),
                "masks": masks.tolist(),
                "temperature": float(temperature),
                "expected": {"weights": weights.tolist(), "entropy": float(entropy(weights))},
            }
        )
    return result


def fixtures() -> dict:
    return {"softmax": softmax_cases(np.random.default_rng(SEED))}
