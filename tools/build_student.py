"""Build the student copies of the lessons: every cell tagged ``solution`` left out.

    .venv/bin/python tools/build_student.py [--out build/student] notebooks/*.ipynb

Each lesson is written to ``<out>/notebooks/`` under its own name, so the links between lessons
still work, without the cells tagged ``solution`` (the hidden answers, and the cells that print or
draw a right answer). A cell tagged ``learners-output`` keeps its code but not its output, which
the lesson's run made from the solutions (lesson 16's "rms_norm: yours"): a copy never says a
student's answer was used before the student wrote one. Everything else stays as the lesson was
saved, outputs included: the copy reads like the lesson, and its self-checks already say "No answer
yet", because their answer cells hold ``...``. The execution counts of the remaining cells are
renumbered 1, 2, 3, …, as a fresh run of the copy numbers them. A short note after the title tells
the learner that the solutions are left out (and not where they are); the title's Colab link opens
the copy on the students' branch. The files each lesson reads
from the repository (its manifest's ``data``, ``attention_lessons/lNN_slug/lesson.toml``) are copied beside
them, at the same relative paths.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat
from repository import read as read_repository

from attention_lessons.manifest import lessons

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_TAG = "solution"
LEARNERS_OUTPUT_TAG = "learners-output"
NOTE_ID = "student-copy"
NOTE = (
    "> **Student copy:** the answers and solutions of this lesson's questions and exercises are left "
    "out, so that you can work them out first; the self-checks are kept and say whether your answer "
    "is right."
)


def is_solution(cell: nbformat.NotebookNode) -> bool:
    """Whether a cell is tagged ``solution``."""
    return SOLUTION_TAG in cell.metadata.get("tags", [])


def student_copy(lesson: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``lesson`` without its solution cells, with the note after the title."""
    copy = nbformat.from_dict(lesson)
    cells = [cell for cell in copy.cells if not is_solution(cell)]
    # a sub-slide of its own in the students' deck (make slides): the title slide is full
    note = nbformat.v4.new_markdown_cell(NOTE, metadata={"slideshow": {"slide_type": "subslide"}})
    note.id = NOTE_ID
    copy.cells = [cells[0], note, *cells[1:]]
    repository = read_repository()  # the Colab link and the licence line's address: the students' branch
    for link in (lambda branch: repository.colab(branch, "notebooks/"), repository.tree):
        teachers, students = link(repository.branch), link(repository.student_branch)
        for cell in (cells[0], cells[-1]):
            cell.source = cell.source.replace(teachers, students)
    for cell in copy.cells:
        if LEARNERS_OUTPUT_TAG in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
    count = 0
    for cell in copy.cells:
        if cell.cell_type == "code" and cell.execution_count is not None:
            count += 1
            cell.execution_count = count
            for output in cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = count
    nbformat.validate(copy)
    return copy


def build(paths: list[Path], out: Path) -> dict[str, int]:
    """Write the student copy of each lesson and the files they read; how many cells each lost."""
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    removed = {}
    for path in paths:
        lesson = nbformat.read(path, as_version=4)
        nbformat.write(student_copy(lesson), out / "notebooks" / path.name)
        removed[path.name] = sum(is_solution(cell) for cell in lesson.cells)
    names = {path.name for path in paths}
    for name in sorted({name for lesson in lessons() if lesson.notebook in names for name in lesson.data}):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, out / name)
    return removed


def main(argv: list[str]) -> int:
    """Build the copies of the lessons named in ``argv`` and say how many cells each lost."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "student")
    parser.add_argument("lessons", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for name, count in build(args.lessons, args.out).items():
        print(f"{name}: {count} solution cells left out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
