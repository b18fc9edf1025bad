"""What lesson 15's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l15_generating_text.text_model import load_text_model
from attention_lessons.l15_generating_text.widgets import GenerationExplorer, generation_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    GenerationExplorer: lambda style, request: generation_explorer(
        load_text_model(), ["a "], n_new=2, style=style
    ),
}
