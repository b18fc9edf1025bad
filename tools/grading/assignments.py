"""The graded assignments: which lesson cells each one takes, the function each question asks for,
its model solution, its points and its hidden tests (``tools/grading/make_source.py`` turns them
into nbgrader source notebooks). Each lesson that has one declares it in
``tools/grading/lessons/lNN_slug.py`` (``ASSIGNMENT``; outside the lesson's folder, which the
package and the student branch ship); :data:`ASSIGNMENTS` finds them.

A question asks for a **function** (``attention_by_hand(Q, K, V)``) instead of the lesson's
``S = ...`` placeholders, so that the hidden tests can run it again on fresh random inputs and with
attnlib switched off (``attention_lessons.grading``). After the function the answer cell binds the lesson's
answer names (``S, S_scaled, A, Z = attention_by_hand(Q, K, V)``), so the lesson's own self-check
calls, taken from its check cells, are the visible tests, one test cell per answer name.

Each :class:`Test` names one of the lesson's self-checked answers, its points, the arguments of a
fresh input (``inputs``, a lambda of a ``numpy.random.Generator``) and the check on what the
function returns for them (``check``, a lambda of the answer and those arguments); both are code,
written into the hidden part of the test cell.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Test:
    """One autograded test cell: the lesson's self-check of ``answer`` and the hidden tests."""

    answer: str
    points: int
    inputs: str
    check: str


@dataclass(frozen=True)
class Question:
    """One question: the lesson cells that state it, the function it asks for, its tests.

    ``cells`` are the lesson's cell ids, in order: markdown is copied; a code cell is split into
    its data (copied, locked), its answer placeholders (replaced by the answer cell) and its
    self-check calls (turned into the tests).
    """

    id: str
    cells: tuple[str, ...]
    function: str
    solution: str
    binds: str
    tests: tuple[Test, ...]

    @property
    def name(self) -> str:
        """The name of the function the question asks for (``attention_by_hand``)."""
        return self.function.split("(")[0].removeprefix("def ")


@dataclass(frozen=True)
class Assignment:
    """An assignment made from one lesson."""

    id: str
    notebook: str
    lesson: str
    title: str
    setup: str
    questions: tuple[Question, ...]

    @property
    def points(self) -> int:
        """The assignment's total points."""
        return sum(test.points for question in self.questions for test in question.tests)


INSTRUCTIONS = """\
**How this assignment is graded.** Each question asks for a function: replace the lines
`# YOUR CODE HERE` and `raise NotImplementedError()` with your own numpy code, then run the cell.
The cells after it are the tests, worth the points they name. They run the lesson's self-checks on
your answers (✔, or ✘ and the name of the mistake your answer most likely contains); when the
assignment is graded they also run your function on new random inputs, with attnlib's functions
switched off: compute each answer yourself, because an answer that calls attnlib's function for it
gets no credit. Before you submit, restart the kernel and run every cell (*Kernel → Restart Kernel
and Run All Cells*)."""

#: Where each lesson's assignment is declared: ``lNN_slug.py``, named as the lesson's folder.
LESSONS = Path(__file__).resolve().parent / "lessons"


def _declared() -> list[Assignment]:
    """The ``ASSIGNMENT`` of every ``lessons/lNN_slug.py``, each made from that lesson's notebook."""
    found = []
    for path in sorted(LESSONS.glob("l[0-9][0-9]_*.py")):
        spec = importlib.util.spec_from_file_location(f"assignment_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assignment = module.ASSIGNMENT
        if assignment.lesson != f"{path.stem[1:]}.ipynb":
            raise ValueError(f"{path}: the assignment is made from {assignment.lesson}, not from its lesson")
        found.append(assignment)
    return found


#: Every assignment, by id.
ASSIGNMENTS = {assignment.id: assignment for assignment in _declared()}
