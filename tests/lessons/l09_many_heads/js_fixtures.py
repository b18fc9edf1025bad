"""Fixtures of the multi-head explorer's Node tests (multihead.test.mjs): seeded inputs and what
:func:`attnlib.multihead.multi_head_attention` computes of them.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

import numpy as np

from attnlib.multihead import multi_head_attention

SEED = 909


def multi_head_case(X_q: np.ndarray, X_kv: np.ndarray, W: dict[str, np.ndarray], n_heads: int) -> dict:
    output, weights = multi_head_attention(X_q, X_kv, **W, n_heads=n_heads)
    identity = np.eye(W["W_v"].shape[1])
    concat, _ = multi_head_attention(X_q, X_kv, W["W_q"], W["W_k"], W["W_v"], identity, n_heads=n_heads)
    return {
        "X_q": X_q.tolist(),
        "X_kv": X_kv.tolist(),
        **{name: m.tolist() for name, m in W.items()},
        "n_heads": n_heads,
        "expected": {"weights": weights.tolist(), "concat": concat.tolist(), "output": output.tolist()},
    }


def multihead_cases() -> list[dict]:
    """Two heads in 2D as the explorer draws them, and general shapes (cross-attention, 1 to 4 heads)."""
    rng = np.random.default_rng(SEED)
    cases = []
    for n, d_k in ((1, 1), (4, 2), (6, 3), (8, 2)):
        X = np.round(rng.uniform(-2, 2, (n, 2)) / 0.05) * 0.05
        X[0] = 0.0  # an embedding at the origin
        W = {
            "W_q": rng.standard_normal((2, 2 * d_k)),
            "W_k": rng.standard_normal((2, 2 * d_k)),
            "W_v": rng.standard_normal((2, 4)),
            "W_o": rng.standard_normal((4, 2)),
        }
        cases.append(multi_head_case(X, X, W, 2))
    for n_heads, n_q, n_k, d_model, d_kv, d_k, d_v, d_out in (
        (1, 3, 5, 4, 6, 4, 2, 3),
        (3, 2, 4, 6, 5, 2, 1, 4),
        (4, 5, 5, 8, 8, 2, 2, 8),
    ):
        W = {
            "W_q": rng.standard_normal((d_model, n_heads * d_k)),
            "W_k": rng.standard_normal((d_kv, n_heads * d_k)),
            "W_v": rng.standard_normal((d_kv, n_heads * d_v)),
            "W_o": rng.standard_normal((n_heads * d_v, d_out)),
        }
        cases.append(
            multi_head_case(rng.standard_normal((n_q, d_model)), rng.standard_normal((n_k, d_kv)), W, n_heads)
        )
    return cases


def fixtures() -> dict:
    return {"multihead": multihead_cases()}
