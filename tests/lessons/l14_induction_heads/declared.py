"""What lesson 14's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l14_induction_heads.widgets import InductionReplay, induction_replay

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    InductionReplay: lambda style, request: induction_replay(style=style),
}


#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_head_roles": "a pair of (layer, head) indices",
    "checks.check_induction_position": "a position, a whole index",
    "checks.check_next_token": "a token id, a whole index",
}
