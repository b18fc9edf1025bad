"""Lesson 04's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

import attnlib
from attention_lessons.kit.checks.wording import as_printed
from attention_lessons.l04_scaling import scaling


def head_scale() -> list[str]:
    """The scale of one head of a model with d_model = 4096 and 32 heads."""
    return [f"{attnlib.default_scale(4096 // 32):.4f}"]


def new_query_weights() -> list[str]:
    """The weights of the self-check's new query (d_k = 64, seed 1)."""
    Q, K = scaling.random_queries_keys(64, n_queries=1, n_keys=8, seed=1)
    return [as_printed(value) for value in attnlib.attention_steps(Q[0], K, K).weights]
