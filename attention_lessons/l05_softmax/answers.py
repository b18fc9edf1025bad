"""Lesson 05's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

import numpy as np

import attnlib
from attention_lessons.kit import examples
from attention_lessons.kit.checks.wording import as_printed


def self_check_weights() -> list[str]:
    """The self-checks' weights: the queries Q_y against K_x, and the real rows of *she likes tea*."""
    rng = np.random.default_rng(1)  # the 3 queries, 5 keys and 5 values of section 2, in that order
    _, K_x, V_x = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    Q_y = np.array([[1.0, 0.0, -1.0, 2.0], [0.5, 1.5, 0.0, -1.0]])
    emb = examples.she_likes_coffee()
    table = dict(zip(emb.tokens, emb.X, strict=True)) | {"tea": np.array([1.0, 0.1, 0.6, 0.3])}
    X = np.array([table[word] for word in ("she", "likes", "tea")] + [np.zeros(4)])  # + one padding token
    real = np.array([True, True, True, False])
    padded = attnlib.attention_steps(*attnlib.qkv(X, emb.W_q, emb.W_k, emb.W_v), mask=real).weights
    weights = [*attnlib.attention_steps(Q_y, K_x, V_x).weights.ravel(), *padded[:3, :3].ravel()]
    return [as_printed(value) for value in weights]  # the padding's row and column (1/3, 0) are everywhere
