"""What lesson 11's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import numpy as np

from attention_lessons.l11_learning_to_attend.widgets import TrainingReplay, training_replay
from attnlib.training import Model, train

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    TrainingReplay: lambda style, request: training_replay(
        train(Model(vocab_size=4, length=3, d_model=4), steps=2), style=style
    ),
}


WEIGHTS = np.array([[0.7, 0.2, 0.1], [0.25, 0.5, 0.25]])
D_OUT = np.array([[0.4, -1.2], [2.0, 0.6]])
D_WEIGHTS = np.array([[1.5, -0.5, 2.0], [-1.0, 0.3, 0.8]])
SMALL, LARGE = 1e-5, 1e5


#: tests/contracts/test_checks_scales.py: ``module.check`` of this lesson's folder → the exercise's
#: inputs ``(args, kwargs)`` after the answer, from small to large right answers.
CHECK_CASES = {
    "checks.check_value_gradient": [
        ((WEIGHTS, D_OUT * s), {"decimals": d}) for s in (SMALL, 1e-2, 1.0, LARGE) for d in (2, 4)
    ],
    "checks.check_softmax_gradient": [
        ((WEIGHTS[0], D_WEIGHTS[0] * s), {"decimals": d}) for s in (SMALL, 1e-2, 1.0, LARGE) for d in (2, 3)
    ],
}

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_score_direction": "up or down",
}
