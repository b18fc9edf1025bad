"""What lesson 10's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l10_positions.widgets import RopeExplorer, rope_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    RopeExplorer: lambda style, request: rope_explorer(style=style),
}
