"""Fixtures of the training replay's Node tests (training.test.mjs): a short seeded run of lesson 11's
model, as the replay receives it.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

from attention_lessons.l11_learning_to_attend.widgets import replay_table
from attnlib.training import Model, token_labels, train


def training_replay_case() -> dict:
    """A short seeded run of lesson 11's model, as the training replay receives it."""
    run = train(Model(length=6), steps=30, snapshot_every=10, seed=2)
    return {"table": replay_table(run), "losses": run.losses.tolist(), "tokens": token_labels(run.probe)}


def fixtures() -> dict:
    return {"trainingReplay": training_replay_case()}
