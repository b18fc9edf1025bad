"""What lesson 09's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import numpy as np

from attention_lessons.l09_many_heads.widgets import MultiHeadExplorer, multi_head_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    MultiHeadExplorer: lambda style, request: multi_head_explorer(
        ["a", "b"], np.eye(2), W_q=np.eye(2), W_k=np.eye(2), W_v=np.eye(2, 4), W_o=np.eye(4, 2), style=style
    ),
}


#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_split_heads_shape": "a shape",
    "checks.check_parameter_count": "a whole count compared exactly",
}
