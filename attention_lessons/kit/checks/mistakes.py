"""A mistake as one row of a table: its name, what to say, and the wrong answer it produces.

Every check keeps its mistakes in such a table. To recognise a mistake, the check *makes* it: the
row's ``wrong`` function computes, from the exercise's inputs, the answer a learner who made that
mistake would get; when the learner's answer equals it (and it differs from the right answer),
the check names the mistake. A new mistake is one new row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from attention_lessons.kit.checks.result import CheckResult
from attention_lessons.kit.checks.wording import one_of

__all__ = ["Mistake", "describe", "matching", "named_by_every_case"]

Exercise = TypeVar("Exercise")


@dataclass(frozen=True)
class Mistake(Generic[Exercise]):
    """One row of a table of mistakes.

    Attributes
    ----------
    name : str
        What the mistake is, in a few words; the message starts with it ("Softmax over the wrong
        axis"). ``{ex.…}`` fields are filled in as in ``advice``.
    advice : str
        What to do instead. It names no number of the right answer. ``{ex.…}`` fields are filled
        in from the exercise (``"this exercise uses scale = {ex.scale:g}"``).
    wrong : callable
        ``wrong(exercise)``: the answer this mistake gives for that exercise, or ``None`` where the
        mistake cannot be made (a mask that is not there, shapes that do not fit).
    """

    name: str
    advice: str
    wrong: Callable[[Exercise], object]

    def message(self, exercise: Exercise) -> str:
        """``name: advice``, with the exercise's fields filled in."""
        return f"{self.name}: {self.advice}".format(ex=exercise)


def matching(
    table: Iterable[Mistake[Exercise]],
    exercise: Exercise,
    fits: Callable[[object], bool],
) -> list[Mistake[Exercise]]:
    """The rows whose wrong answer ``fits`` the learner's, in table order (rows giving ``None`` are skipped).

    ``fits(wrong)`` must be False when ``wrong`` is also the right answer: a mistake that changes
    nothing for this exercise cannot be told apart from a right answer.
    """
    found = []
    for mistake in table:
        wrong = mistake.wrong(exercise)
        if wrong is not None and fits(wrong):
            found.append(mistake)
    return found


def named_by_every_case(
    table: Iterable[Mistake[Exercise]],
    cases: Sequence[Exercise],
    outcomes: Sequence[object],
    failing: int,
    agree: Callable[[object, object, Exercise], bool],
) -> list[Mistake[Exercise]]:
    """The rows that give what the learner's code gave on ``cases[failing]``, narrowed by the other cases.

    A row is found when its wrong answer there agrees with the learner's and not with the right
    answer (``case.right``); of several found, those whose answers also agree with the learner's on
    every other case it answered are kept (a row that cannot be made on a case, ``wrong`` giving
    ``None``, agrees there when the learner's answer is right). Where none fits them all, every row
    found is kept.

    Parameters
    ----------
    table : iterable of Mistake
        The check's table of mistakes.
    cases : sequence
        The cases, each with its right answer as ``right``.
    outcomes : sequence
        What the learner's code gave on each case, or a failed ``CheckResult`` where it answered
        nothing that can be compared (it raised, or returned the wrong kind of thing).
    failing : int
        The case the message is about: the first whose outcome differs from its right answer.
    agree : callable
        ``agree(a, b, case)``: whether two answers are the same on ``case``, within its tolerance.
    """
    case, learner = cases[failing], outcomes[failing]
    answered = [(c, o) for c, o in zip(cases, outcomes, strict=True) if not isinstance(o, CheckResult)]

    def gives(mistake: Mistake[Exercise], c: Exercise, outcome: object) -> bool:
        wrong = mistake.wrong(c)
        return agree(outcome, c.right if wrong is None else wrong, c)  # type: ignore[attr-defined]

    with np.errstate(all="ignore"):
        found = matching(
            table,
            case,
            lambda wrong: agree(learner, wrong, case) and not agree(wrong, case.right, case),  # type: ignore[attr-defined]
        )
        narrowed = [m for m in found if all(gives(m, c, o) for c, o in answered)]
    return narrowed or found


def describe(lead: str, found: Sequence[Mistake[Exercise]], exercise: Exercise) -> str:
    """The message for one or several matching mistakes; mistakes with the same advice are said once."""
    advice_seen: set[str] = set()
    messages = []
    for mistake in found:
        advice = mistake.advice.format(ex=exercise)
        if advice not in advice_seen:
            advice_seen.add(advice)
            messages.append(mistake.message(exercise))
    if lead:
        return one_of(lead, messages)
    if len(messages) == 1:
        return messages[0]
    return one_of("Several mistakes give exactly these numbers here", messages)
