"""Fixtures of the similarity explorer's Node tests (similarity.test.mjs): seeded pairs of vectors and
what :func:`attention_lessons.l01_embeddings.similarity.similarity` computes of them.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

import numpy as np

from attention_lessons.l01_embeddings.similarity import similarity

#: The kit's seed (tests/kit/js/make_fixtures.py) plus the lesson's number: a stream of its own.
SEED = 20261123 + 1


def similarity_cases(rng: np.random.Generator) -> list[dict]:
    pairs = [tuple(rng.uniform(-1.5, 1.5, (2, 2))) for _ in range(20)]
    pairs += [
        (np.zeros(2), np.array([1.0, 0.5])),  # no direction: cosine and angle undefined
        (np.array([0.3, -0.4]), np.array([0.3, -0.4])),  # the same vector twice
        (np.array([1.0, 1.0]), np.array([-2.0, -2.0])),  # opposite
        (np.array([1.0, 0.0]), np.array([0.0, 1.5])),  # perpendicular
    ]
    cases = []
    for a, b in pairs:
        sim = similarity(a, b)
        cases.append(
            {
                "a": np.asarray(a).tolist(),
                "b": np.asarray(b).tolist(),
                "expected": {
                    "dot": sim.dot,
                    "normA": sim.norm_a,
                    "normB": sim.norm_b,
                    "cosine": sim.cosine,
                    "angleDegrees": sim.angle_degrees,
                },
            }
        )
    return cases


def fixtures() -> dict:
    return {"similarity": similarity_cases(np.random.default_rng(SEED))}
