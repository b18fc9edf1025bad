"""The student copies (``make student``, ``build/student/``): no solution left, and nothing missing.

The lessons tag ``solution`` every cell that holds or prints a right answer (the ``<details>``
answers, lesson 08's "The solutions in numbers", the cells that compute a question's answer);
``tools/build_student.py`` leaves those cells out. These tests check the copies that
``make student`` wrote, without running them: no solution cell; none of the hidden answers that
each lesson's manifest lists (``attention_lessons/lNN_slug/lesson.toml``, computed by its recipes) anywhere
in their text, each one first found in the full lesson's solution cells, so that the search can
fail; no kept cell that reads a name only a left-out solution cell defines (read from the cells'
code with ``ast``); every self-check the manifest names saying "No answer yet" to its empty answer
in the stored outputs; and the files the lesson reads beside the copy.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from build_student import student_copy
from conftest import ROOT, CellNames, hidden_answers, readable, require_build

from attention_lessons.kit.checks.wording import as_printed
from attention_lessons.manifest import Lesson, lessons, step

NOTEBOOKS = ROOT / "notebooks"
COPIES = ROOT / "build" / "student" / "notebooks"
MANIFESTS = lessons()
LESSONS = [lesson.notebook for lesson in MANIFESTS]
BY_NAME = {lesson.notebook: lesson for lesson in MANIFESTS}
SOLUTION_TAG = "solution"
NO_ANSWER = "No answer yet"
NOTE_ID = "student-copy"  # the note build_student.py puts after the title


def _lesson(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def _copy(name: str) -> nbformat.NotebookNode:
    return nbformat.read(COPIES / name, as_version=4)


def _is_solution(cell: nbformat.NotebookNode) -> bool:
    return SOLUTION_TAG in cell.metadata.get("tags", [])


def _learners_output(cell: nbformat.NotebookNode) -> bool:
    """A cell whose output the lesson's run made from its solutions (``learners-output``)."""
    return "learners-output" in cell.metadata.get("tags", [])


def _output_texts(cell: nbformat.NotebookNode) -> list[str]:
    """The text outputs of a cell, one string per output (a widget's view shows as its text)."""
    texts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            texts.append(output.text)
        texts.extend(
            readable(output.get("data", {}).get(mime, ""))
            for mime in ("text/plain", "text/markdown", "text/html")
        )
    return texts


def _text(cells: list[nbformat.NotebookNode]) -> str:
    """Everything a reader can read in ``cells``: sources and text outputs, with ASCII minus signs."""
    return "\n".join(text for cell in cells for text in [cell.source, *_output_texts(cell)]).replace("−", "-")


def _shows(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as a whole number or phrase (not inside a longer number)."""
    return re.search(rf"(?<![\d.]){re.escape(value)}(?!\d)", text) is not None


def _with(shown: str) -> list[Lesson]:
    """The lessons whose manifest lists hidden answers shown ``shown`` ("solutions" or "nowhere")."""
    return [lesson for lesson in MANIFESTS if any(answer.shown == shown for answer in lesson.hidden)]


def _stale_or_missing() -> str | None:
    """Why build/student cannot be tested (missing, or older than the lessons, their manifests or the
    tool), or None."""
    copies = [COPIES / name for name in LESSONS]
    missing = [path.name for path in copies if not path.exists()]
    if missing:
        return f"build/student has no {missing}"
    sources = [ROOT / "tools" / "build_student.py", *(lesson.path for lesson in MANIFESTS)]
    newest = max(
        path.stat().st_mtime for path in [*sources, *(lesson.folder / "lesson.toml" for lesson in MANIFESTS)]
    )
    stale = [path.name for path in copies if path.stat().st_mtime < newest]
    return f"build/student is older than the lessons, their manifests or the tool: {stale}" if stale else None


@pytest.fixture(scope="module")
def built() -> None:
    """Skip (fail under CI) when build/student is missing or stale."""
    require_build(_stale_or_missing(), "make student")


def _answer_names(source: str) -> set[str]:
    """The names a cell assigns an empty answer: ``...`` (or a dict of them), or ``None  # your answer``."""
    names = set()
    lines = source.splitlines()
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign):
            continue
        values = (
            node.value.values if isinstance(node.value, ast.Dict) else [node.value]
        )  # or a dict of answers
        empty = any(isinstance(value, ast.Constant) and value.value is Ellipsis for value in values)
        none = isinstance(node.value, ast.Constant) and node.value.value is None
        if empty or (none and "# your" in lines[node.lineno - 1]):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def _self_checks(source: str, answers: set[str]) -> list[str]:
    """The answers among ``answers`` that ``source`` gives a ``check…`` function, in call order."""
    calls = sorted(
        (node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)),
        key=lambda call: (call.lineno, call.col_offset),
    )
    return [
        arg.id
        for call in calls
        if (getattr(call.func, "id", "") or getattr(call.func, "attr", "")).startswith("check")
        for arg in call.args
        if isinstance(arg, ast.Name) and arg.id in answers
    ]


def _needs_a_solution(copy: nbformat.NotebookNode, solutions: list[nbformat.NotebookNode]) -> list[str]:
    """Each code cell of ``copy`` that reads a name which only the left-out ``solutions`` define.

    A name counts as defined for a kept cell when an earlier kept cell binds it (assigns, imports,
    defines); one that no kept cell before it binds but a solution cell does is a ``NameError``
    for the learner who runs the copy top to bottom.
    """
    only_there = set().union(*(CellNames().visit_source(cell.source).bound for cell in solutions))
    bound: set[str] = set()
    problems = []
    code = [cell for cell in copy.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code, start=1):
        names = CellNames().visit_source(cell.source)
        missing = sorted((names.read_first & only_there) - bound)
        problems += [f"cell [{number}] {cell.source[:40]!r} reads {name!r}" for name in missing]
        bound |= names.bound
    return problems


def test_the_number_formats_match_how_numpy_prints() -> None:
    assert as_printed(0.57603, 4) == "0.576" and as_printed(-1.56464, 2) == "-1.56" and as_printed(8.0) == "8"
    assert _shows("A = [[0.576  0.284  0.14  ]", "0.14")
    assert not _shows("0.1411", "0.14") and not _shows("10.14", "0.14") and not _shows("1120 blocks", "120")


@pytest.mark.usefixtures("built")
def test_every_lesson_has_a_copy_with_the_same_name() -> None:
    assert sorted(path.name for path in COPIES.glob("*.ipynb")) == LESSONS


@pytest.mark.parametrize("name", LESSONS)
def test_every_answer_block_of_a_lesson_is_a_solution_cell_of_its_own(name: str) -> None:
    for cell in _lesson(name).cells:
        if "<details" in cell.source:
            assert _is_solution(cell), (
                f"a <details> block in an untagged cell: {cell.source[:80]!r}: an answer is a markdown "
                f"cell of its own, tagged solution ({step(2)})"
            )
            source = cell.source.strip()
            assert source.startswith("<details") and source.endswith("</details>"), (
                f"a solution cell holds more than its <details> block: {cell.source[:80]!r}"
            )


@pytest.mark.parametrize("name", LESSONS)
def test_a_lesson_with_solutions_lists_their_values_or_says_why_not(name: str) -> None:
    lesson, manifest = _lesson(name), BY_NAME[name].folder / "lesson.toml"
    listed = [answer for answer in BY_NAME[name].hidden if answer.shown == "solutions"]
    if any(_is_solution(cell) for cell in lesson.cells):
        assert listed or BY_NAME[name].no_solution_values, (
            f"{name} has solution cells, but {manifest} lists no [[hidden]] answer shown in "
            "solutions: list the values they print, or say in no_solution_values why there is none"
        )
    else:
        assert not listed and not BY_NAME[name].no_solution_values, (
            f"{name} has no solution cell: {manifest} lists none of its answers"
        )


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("name", LESSONS)
def test_a_copy_has_no_solution_cell_and_no_answer_block(name: str) -> None:
    copy, lesson = _copy(name), _lesson(name)
    assert not [cell for cell in copy.cells if _is_solution(cell)]
    assert hidden_answers(_text(copy.cells)) == 0
    kept = [cell.id for cell in lesson.cells if not _is_solution(cell)]
    assert [cell.id for cell in copy.cells if cell.id != NOTE_ID] == kept, "only the solutions are left out"
    run = [cell for cell in copy.cells if cell.cell_type == "code" and not _learners_output(cell)]
    counts = [cell.execution_count for cell in run]
    assert counts == list(range(1, len(counts) + 1)), "numbered as a fresh run of the copy numbers them"
    for cell in copy.cells:  # its output was made from the solutions: the student's run makes it anew
        assert not _learners_output(cell) or (cell.outputs == [] and cell.execution_count is None)


@pytest.mark.usefixtures("built")
def test_lesson_16s_copy_never_says_the_students_functions_ran() -> None:
    copy = _copy("16_real_language_model.ipynb")
    assert "yours" in _text([c for c in _lesson("16_real_language_model.ipynb").cells if _learners_output(c)])
    assert ": yours" not in "".join(text for cell in copy.cells for text in _output_texts(cell))


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("name", LESSONS)
def test_no_kept_cell_needs_a_name_only_a_solution_cell_defines(name: str) -> None:
    solutions = [cell for cell in _lesson(name).cells if _is_solution(cell) and cell.cell_type == "code"]
    problems = _needs_a_solution(_copy(name), solutions)
    assert not problems, f"the student copy of {name} stops with a NameError: " + "; ".join(problems)


def test_a_kept_cell_that_needs_a_solution_is_named() -> None:
    """The check above can fail: lesson 03 with a kept cell that prints what only a solution cell made."""
    lesson = _lesson("03_raw_scores.ipynb")
    solution = next(cell for cell in lesson.cells if _is_solution(cell) and cell.cell_type == "code")
    kept = set().union(
        *(
            CellNames().visit_source(c.source).bound
            for c in lesson.cells
            if c.cell_type == "code" and not _is_solution(c)
        )
    )
    name = sorted(CellNames().visit_source(solution.source).bound - kept)[0]
    reader = nbformat.v4.new_code_cell(f"print({name})")
    lesson.cells.insert(lesson.cells.index(solution) + 1, reader)
    copy = student_copy(lesson)
    number = [cell.id for cell in copy.cells if cell.cell_type == "code"].index(reader.id) + 1
    assert _needs_a_solution(copy, [solution]) == [f"cell [{number}] {reader.source!r} reads {name!r}"]


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("lesson", _with("solutions"), ids=lambda lesson: lesson.id)
def test_no_solution_value_is_in_a_copy(lesson: Lesson) -> None:
    solutions = _text([cell for cell in _lesson(lesson.notebook).cells if _is_solution(cell)])
    copy = _text(_copy(lesson.notebook).cells)
    for value in lesson.hidden_values("solutions"):
        assert _shows(solutions, value), (
            f"{value!r} is not in the solutions of {lesson.notebook}: the search would find nothing"
        )
        assert not _shows(copy, value), f"the student copy of {lesson.notebook} gives away {value!r}"


def _distinctive(values: list[str]) -> list[str]:
    """The hidden answers with at least three decimals (short ones like 0.14 are everywhere)."""
    return [value for value in values if re.fullmatch(r"-?\d+\.\d{3,}", value)]


@pytest.mark.parametrize(
    "lesson", [lesson for lesson in MANIFESTS if lesson.answers_nowhere_else], ids=lambda lesson: lesson.id
)
def test_no_other_lesson_prints_a_hidden_answer(lesson: Lesson) -> None:
    """Given to 4 decimals, a hidden answer met in another lesson's outputs is the answer given away."""
    hidden = _distinctive([*lesson.hidden_values("solutions"), *lesson.hidden_values("nowhere")])
    searched = [value for value in hidden if value not in lesson.answers_shared]
    assert searched, f"lesson {lesson.id} has no hidden answer with three decimals to search for"
    others = {name: _text(_lesson(name).cells) for name in LESSONS if name != lesson.notebook}
    for value in searched:
        shown = [name for name, text in others.items() if _shows(text, value)]
        assert not shown, f"lesson {lesson.id}'s hidden answer {value} is printed in {shown}"


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("lesson", _with("nowhere"), ids=lambda lesson: lesson.id)
def test_no_self_check_answer_is_printed(lesson: Lesson) -> None:
    text, copy = _text(_lesson(lesson.notebook).cells), _text(_copy(lesson.notebook).cells)
    for value in lesson.hidden_values("nowhere"):
        assert not _shows(text, value), f"{lesson.notebook} prints {value!r}, a self-check's answer"
        assert not _shows(copy, value), f"the student copy of {lesson.notebook} gives away {value!r}"


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("name", LESSONS)
def test_every_self_check_of_a_copy_says_no_answer_yet(name: str) -> None:
    """The copies keep the lessons' stored outputs: each check given an empty answer said so when it ran."""
    cells = [cell for cell in _copy(name).cells if cell.cell_type == "code"]
    answers = set().union(*(_answer_names(cell.source) for cell in cells))
    checked = []
    for cell in cells:
        calls = _self_checks(cell.source, answers)
        said = sum(
            text.count(NO_ANSWER)
            for output in cell.outputs
            for text in [output.get("text", ""), output.get("data", {}).get("text/plain", "")]
        )
        assert said == len(calls), (
            f"{name}: {cell.source[:60]!r} checks {len(calls)} empty answers, says {NO_ANSWER!r} {said}×"
        )
        checked += calls
    manifest = BY_NAME[name].folder / "lesson.toml"
    assert checked == list(BY_NAME[name].self_checks), f"{name} checks {checked}: {manifest} says otherwise"


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize(
    "lesson", [lesson for lesson in MANIFESTS if lesson.data], ids=lambda lesson: lesson.id
)
def test_the_files_a_lesson_reads_are_beside_its_copy(lesson: Lesson) -> None:
    code = "\n".join(cell.source for cell in _lesson(lesson.notebook).cells if cell.cell_type == "code")
    for path in lesson.data:
        assert Path(path).name in code, f"{lesson.notebook} does not read {path}, which its manifest lists"
        assert (COPIES.parent / path).is_file(), f"build/student has no {path}, which {lesson.notebook} reads"
