"""Fixtures of the playground's Node tests (playground.test.mjs): seeded embeddings and projections,
and the steps attnlib computes of them.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

import numpy as np

from attnlib.core import attention_steps, default_scale
from attnlib.projection import qkv

#: The kit's seed (tests/kit/js/make_fixtures.py) plus the lesson's number: a stream of its own.
SEED = 20261123 + 7


def playground_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for n in (1, 4, 6, 12):
        X = np.round(rng.uniform(-2, 2, (n, 2)) / 0.05) * 0.05
        X[0] = 0.0  # an embedding at the origin
        d = 3 if n == 6 else 2  # queries and keys of another dimension than the embeddings
        W_q, W_k, W_v = rng.standard_normal((2, d)), rng.standard_normal((2, d)), rng.standard_normal((2, 2))
        for d_k, causal in ((1, False), (2, True), (64, False)):
            Q, K, V = qkv(X, W_q, W_k, W_v)
            steps = attention_steps(Q, K, V, scale=default_scale(d_k), causal=causal)
            cases.append(
                {
                    "embeddings": X.tolist(),
                    "W_q": W_q.tolist(),
                    "W_k": W_k.tolist(),
                    "W_v": W_v.tolist(),
                    "d_k": d_k,
                    "causal": causal,
                    "expected": {
                        "rawScores": steps.raw_scores.tolist(),
                        "scale": steps.scale,
                        "weights": steps.weights.tolist(),
                        "output": steps.output.tolist(),
                    },
                }
            )
    return cases


def fixtures() -> dict:
    return {"playground": playground_cases(np.random.default_rng(SEED))}
