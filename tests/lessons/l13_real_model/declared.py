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


def _config(hidden: int, heads: int, mlp: int) -> dict[str, int]:
    return {"hidden_size": hidden, "num_attention_heads": heads, "intermediate_size": mlp}


#: tests/contracts/test_checks_scales.py: ``module.check`` of this lesson's folder → the exercise's
#: inputs ``(args, kwargs)`` after the answer, from small to large right answers.
CHECK_CASES = {
    "checks.check_attention_parameters": [
        ((_config(*sizes),), {}) for sizes in ((8, 2, 32), (768, 12, 3072), (8192, 64, 28672))
    ],
    "checks.check_d_k": [
        ((_config(*sizes),), {}) for sizes in ((8, 2, 32), (768, 12, 3072), (8192, 64, 28672))
    ],
}

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_most_attended": "a token (an index or its text)",
}
