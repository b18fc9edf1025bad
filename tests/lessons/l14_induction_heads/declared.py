"""What lesson 14's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l14_induction_heads.widgets import InductionReplay, induction_replay

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    InductionReplay: lambda style, request: induction_replay(style=style),
}
