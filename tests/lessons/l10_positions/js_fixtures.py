"""Fixtures of the RoPE explorer's Node tests (rotary.test.mjs): vectors at real positions, rotated by
:func:`attnlib.positions.rope`, and the explorer's 2D query and key at every slider position.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

import numpy as np

from attention_lessons.l10_positions.plots import ROPE_KEY, ROPE_QUERY
from attnlib.positions import rope, rope_frequencies

#: The kit's seed (tests/kit/js/make_fixtures.py) plus the lesson's number: a stream of its own.
SEED = 20261123 + 10


def rope_cases() -> list[dict]:
    """RoPE (lesson 10): vectors of d = 2 … 16 at real positions from −1000 to 1000, and the RoPE
    explorer's 2D query and key at every slider position it offers, rotated by attnlib."""
    rng = np.random.default_rng(SEED)
    inputs = []
    for d in (2, 4, 8, 16):
        for base in (10000.0, 100.0):
            q, k = rng.normal(size=(2, d))
            m, n = rng.uniform(-1000, 1000, 2)
            inputs.append((q, k, 0.0, float(m), float(n), base))
    for m, n, offset in ((0, 0, 0), (2, 5, 0), (2, 5, 7), (12, 0, 12), (0, 12, 3)):
        inputs.append((np.array(ROPE_QUERY), np.array(ROPE_KEY), float(offset), float(m), float(n), 10000.0))
    cases = []
    for q, k, offset, m, n, base in inputs:
        rotated_q = rope(q, [m + offset], base=base)
        rotated_k = rope(k, [n + offset], base=base)
        cases.append(
            {
                "query": q.tolist(),
                "key": k.tolist(),
                "queryPosition": m,
                "keyPosition": n,
                "offset": offset,
                "base": base,
                "expected": {
                    "frequencies": rope_frequencies(q.size, base=base).tolist(),
                    "rotatedQuery": rotated_q.tolist(),
                    "rotatedKey": rotated_k.tolist(),
                    "score": float(rotated_q @ rotated_k),
                },
            }
        )
    return cases


def fixtures() -> dict:
    return {"rope": rope_cases()}
