"""What lesson 11's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l11_learning_to_attend.widgets import TrainingReplay, training_replay
from attnlib.training import Model, train

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    TrainingReplay: lambda style, request: training_replay(
        train(Model(vocab_size=4, length=3, d_model=4), steps=2), style=style
    ),
}
