"""What lesson 12's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l12_attention_at_scale.widgets import OnlineSoftmaxExplorer, online_softmax_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    OnlineSoftmaxExplorer: lambda style, request: online_softmax_explorer(style=style),
}
