"""Write the nbgrader source notebooks of the graded assignments (``tools/grading/lessons/``).

    .venv/bin/python tools/grading/make_source.py [--root ~/attention-grading] [a1-exercises ...]

Each assignment becomes ``<root>/source/<id>/<notebook>``, an nbgrader source notebook made from
its lesson: the title and how it is graded; the lesson's imports (``setup``); for each question
the lesson's cells that state it (markdown as it is; a code cell's data statements kept, its
answer placeholders ``x = ...`` replaced by the answer cell, its self-check calls turned into the
tests), then

- the **answer cell** (nbgrader ``solution``): the function the question asks for, its model
  solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader replaces it with
  ``raise NotImplementedError()`` in the student's copy), and the line that binds the lesson's
  answer names from it;
- one **test cell** per answer (nbgrader ``grade``, with its points): the lesson's own self-check
  call, ``assert result, result.message`` (a wrong answer fails with the check's words for the
  mistake), and between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` the function run on
  fresh random inputs with attnlib switched off (``attention_lessons.grading.on_new_inputs``).

Every other cell is read-only (nbgrader ``locked``). ``nbgrader generate_assignment`` then makes
the student version (``tools/grading/week.py``).
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

import nbformat
from assignments import ASSIGNMENTS, INSTRUCTIONS, Assignment, Question, Test

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SCHEMA_VERSION = 3  # nbgrader 0.9's cell metadata


class SourceError(ValueError):
    """An assignment names a lesson cell that is not there, or an answer the lesson does not check."""


def default_root() -> Path:
    """The course folder: ``$ATTN_GRADING_ROOT``, else ``~/attention-grading`` (never in build/)."""
    return Path(os.environ.get("ATTN_GRADING_ROOT", Path.home() / "attention-grading"))


def _nbgrader(cell: nbformat.NotebookNode, grade_id: str, *, solution=False, points=None) -> None:
    """Mark ``cell`` for nbgrader: read-only, an answer (``solution``) or a test worth ``points``."""
    cell.metadata["nbgrader"] = {
        "grade": points is not None,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": SCHEMA_VERSION,
        "solution": solution,
        "task": False,
        **({"points": points} if points is not None else {}),
    }


def _is_answer(node: ast.stmt) -> bool:
    """Whether a statement is an answer placeholder: ``x = ...`` or a dict of ``...``."""
    if not isinstance(node, ast.Assign):
        return False
    values = node.value.values if isinstance(node.value, ast.Dict) else [node.value]
    return any(isinstance(value, ast.Constant) and value.value is Ellipsis for value in values)


def _check_calls(node: ast.stmt) -> list[ast.Call]:
    """The self-check calls (``check…(...)``) in a statement, in order."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    named = [
        call
        for call in calls
        if (getattr(call.func, "attr", "") or getattr(call.func, "id", "")).startswith("check")
    ]
    return sorted(named, key=lambda call: (call.lineno, call.col_offset))


def split_code(source: str) -> tuple[str, dict[str, str]]:
    """A lesson code cell's data statements (whole lines, with their comments), and its self-check
    calls by the answer they check (their first argument)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    data, checks = [], {}
    for node in tree.body:
        calls = _check_calls(node)
        if _is_answer(node):
            continue
        if calls:
            for call in calls:  # a self-check takes the answer first
                if call.args and isinstance(call.args[0], ast.Name):
                    checks.setdefault(call.args[0].id, ast.get_source_segment(source, call))
            continue
        data.extend(lines[node.lineno - 1 : node.end_lineno])  # whole lines: their comments too
    return "\n".join(data), checks


def test_source(test: Test, call: str, function: str) -> str:
    """The test cell: the lesson's self-check, then the hidden tests on fresh inputs."""
    return "\n".join(
        [
            f"result = {call}",
            "print(result)",
            "assert result, result.message",
            "### BEGIN HIDDEN TESTS",
            "grading.on_new_inputs(",
            f"    {function},",
            "    globals(),",
            f"    {test.inputs},",
            f"    {test.check},",
            ")",
            "### END HIDDEN TESTS",
        ]
    )


def answer_source(question: Question) -> str:
    """The answer cell: the function with its solution region, then the line that binds the answers."""
    body = "\n".join(f"    {line}" if line else "" for line in question.solution.splitlines())
    return f"{question.function}\n    ### BEGIN SOLUTION\n{body}\n    ### END SOLUTION\n\n\n{question.binds}"


def source_notebook(assignment: Assignment, notebooks: Path = NOTEBOOKS) -> nbformat.NotebookNode:
    """The nbgrader source notebook of ``assignment``."""
    lesson = nbformat.read(notebooks / assignment.lesson, as_version=4)
    by_id = {cell.id: cell for cell in lesson.cells}
    title = nbformat.v4.new_markdown_cell(f"# {assignment.title}\n\n{INSTRUCTIONS}")
    setup = nbformat.v4.new_code_cell(assignment.setup)
    _nbgrader(title, "title")
    _nbgrader(setup, "setup")
    cells = [title, setup]
    for question in assignment.questions:
        checks: dict[str, str] = {}
        for number, cell_id in enumerate(question.cells, start=1):
            if cell_id not in by_id:
                raise SourceError(
                    f"{assignment.id}: {assignment.lesson} has no cell {cell_id!r} ({question.id})"
                )
            cell = by_id[cell_id]
            if cell.cell_type == "markdown":
                copy = nbformat.v4.new_markdown_cell(cell.source)
            else:
                data, found = split_code(cell.source)
                checks.update(found)
                if not data:
                    continue
                copy = nbformat.v4.new_code_cell(data)
            _nbgrader(copy, f"{question.id}-{number}")
            cells.append(copy)
        answer = nbformat.v4.new_code_cell(answer_source(question))
        _nbgrader(answer, f"{question.id}-answer", solution=True)
        cells.append(answer)
        function = question.name
        for test in question.tests:
            if test.answer not in checks:
                raise SourceError(
                    f"{assignment.id}: the cells of {question.id} check no answer named {test.answer!r} "
                    f"(they check {sorted(checks)})"
                )
            cell = nbformat.v4.new_code_cell(test_source(test, checks[test.answer], function))
            _nbgrader(cell, f"{question.id}-{test.answer}", points=test.points)
            cells.append(cell)
    notebook = nbformat.v4.new_notebook(cells=cells)
    kept = ("kernelspec", "language_info")
    notebook.metadata = {key: lesson.metadata[key] for key in kept if key in lesson.metadata}
    nbformat.validate(notebook)
    return notebook


def write(root: Path, ids: list[str]) -> list[Path]:
    """Write the source notebooks of the assignments ``ids`` under ``root/source``."""
    written = []
    for name in ids:
        assignment = ASSIGNMENTS[name]
        path = root / "source" / assignment.id / assignment.notebook
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(source_notebook(assignment), path)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    """Write the source notebooks named in ``argv`` (all of them by default)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=default_root(), help="the course folder")
    parser.add_argument("assignments", nargs="*", help=f"all by default, or some of {', '.join(ASSIGNMENTS)}")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.assignments) - set(ASSIGNMENTS))
    if unknown:
        parser.error(f"no assignment {unknown}: there are {', '.join(ASSIGNMENTS)}")
    for path in write(args.root, args.assignments or list(ASSIGNMENTS)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
