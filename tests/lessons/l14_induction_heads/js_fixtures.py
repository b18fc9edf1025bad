"""Fixtures of the induction replay's Node tests (induction_replay.test.mjs): seeded causal snapshots
of two layers of three heads, as lesson 14's replay receives them.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

import numpy as np

from attention_lessons.l14_induction_heads.widgets import replay_from_snapshots
from attnlib.core import softmax


def induction_replay_case() -> dict:
    """Seeded causal snapshots of two layers of three heads, as lesson 14's replay receives them."""
    rng = np.random.default_rng(4)
    scores = rng.normal(size=(3, 2, 3, 6, 6)) * 3
    scores[..., np.triu(np.ones((6, 6), dtype=bool), k=1)] = -np.inf
    replay = replay_from_snapshots(
        [0, 5, 10],
        softmax(scores),
        rng.uniform(size=(3, 2, 3)),
        rng.uniform(size=(3, 2, 3)),
        losses=(np.arange(11), rng.uniform(1.5, 2.0, 11), np.linspace(2.0, 0.05, 11)),
        vocab_size=7,
        tokens=["a", "b", "c", "a", "b", "c"],
        repeat_start=3,
    )
    names = ("table", "loss_steps", "loss_first", "loss_second", "chance", "tokens", "repeat_start")
    state = {name: getattr(replay, name) for name in names}
    replay.close()
    return state


def fixtures() -> dict:
    return {"inductionReplay": induction_replay_case()}
