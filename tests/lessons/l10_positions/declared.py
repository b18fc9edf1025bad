"""What lesson 10's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import numpy as np

from attention_lessons.l10_positions.widgets import RopeExplorer, rope_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    RopeExplorer: lambda style, request: rope_explorer(style=style),
}


Q_VEC = np.array([0.9, -0.4, 1.3, 0.2])
K_VEC = np.array([-0.7, 1.1, 0.5, -0.6])


#: tests/contracts/test_checks_scales.py: ``module.check`` of this lesson's folder → the exercise's
#: inputs ``(args, kwargs)`` after the answer, from small to large right answers.
CHECK_CASES = {
    "checks.check_sinusoidal": [
        ((position, 8), {"decimals": d}) for position in (0, 3, 1000) for d in (1, 3)
    ],
    "checks.check_shifted_score": [
        ((Q_VEC * s, K_VEC * s, 2.0, 5.0, 3.0), {"decimals": d})
        for s in (1e-3, 0.1, 1.0, 30.0)
        for d in (1, 3)
    ],
}

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_rotated_values": "a choice among named options",
}

#: tests/contracts/test_checks_scales.py: this lesson's checks whose right answers are never small.
NO_SMALL_ANSWER = {
    "checks.check_sinusoidal": "sines and cosines: some entry is near 1 at every position",
}
