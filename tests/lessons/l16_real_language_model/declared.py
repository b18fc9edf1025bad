"""What lesson 16's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l16_real_language_model.widgets import AnswerExplorer, answer_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    AnswerExplorer: lambda style, request: answer_explorer(prompts=["Hi!"], n_new=1, style=style),
}


#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    **{
        f"checks.{name}": "a function, called on the exercise's "
        "inputs; its result is compared at the right result's scale (checks.RTOL of its largest entry)"
        for name in ("check_function", "check_rms_norm", "check_swiglu", "check_rotate", "check_attention")
    },
    "checks.check_block": "a function, as check_function",
}
