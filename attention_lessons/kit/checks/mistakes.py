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

from attention_lessons.kit.checks.wording import one_of

__all__ = ["Mistake", "describe", "matching"]

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
