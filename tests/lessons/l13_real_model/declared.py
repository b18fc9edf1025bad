"""What lesson 13's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l13_real_model.widgets import HeadExplorer, head_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    HeadExplorer: lambda style, request: head_explorer(
        request.getfixturevalue("model"), sentences=["The cat sat."], style=style
    ),
}
