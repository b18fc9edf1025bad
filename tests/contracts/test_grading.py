"""The graded assignments (``tools/grading/``, nbgrader 0.9.6), end to end on one machine.

A class of simulated students works on assignment 1 (lesson 08) through nbgrader's exchange in a
temporary folder: one right, one with a named mistake (the softmax down the columns), one blank,
one who asks attnlib for the weights in the question that asks them to compute the weights, and one
who submits a blank copy and then a right one. The teacher collects, autogrades (with the hidden
tests), writes and releases the feedback, and exports the gradebook: the CSV holds the points
expected for each, and each feedback page holds the words of the self-check that named the
mistake. The faster tests check what the tool writes: every self-check of the lesson becomes a
test, the solutions and the hidden tests stay out of the students' version, and attnlib switched
off is back on afterwards. A first week run as the Makefile runs it (``week.py``'s command line,
one assignment at a time) checks that only what was released is graded and exported, and that an
assignment released with no submission yet is said to have none instead of failing.
"""

from __future__ import annotations

import contextlib
import csv
import html
import io
import os
import pwd
import re
import shutil
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import ROOT, require_nbgrader

import attnlib
from attention_lessons import grading
from attention_lessons.kit import checks, examples
from attention_lessons.kit.checks.result import CheckResult
from attention_lessons.manifest import lessons

require_nbgrader()  # the grading tools import it
from assignments import ASSIGNMENTS  # noqa: E402
from make_source import SourceError, source_notebook, split_code  # noqa: E402
from week import Course, main  # noqa: E402

# nbgrader 0.9.6's gradebook, on SQLAlchemy 2, warns while it autogrades (a RuntimeWarning, an error
# in this project's tests): the submission is saved all the same.
pytestmark = pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning")
BY_NOTEBOOK = {lesson.notebook: lesson for lesson in lessons()}
EXERCISES = ASSIGNMENTS["a1-exercises"]  # lesson 08's
GRADIENTS = ASSIGNMENTS["a2-gradients"]  # lesson 11's
NAME = EXERCISES.id
# Lesson 08's exercise 3 with the softmax taken down each column (the named mistake) and with
# attnlib's softmax (the library call the question forbids), S and S_scaled right in both.
EXERCISE_3 = """\
def attention_by_hand(Q, K, V):
    S = Q @ K.T
    S_scaled = S / np.sqrt(K.shape[1])
    A = {weights}
    return S, S_scaled, A, A @ V


S, S_scaled, A, Z = attention_by_hand(Q, K, V)"""
AXIS_0 = "np.exp(S_scaled) / np.exp(S_scaled).sum(axis=0, keepdims=True)"
LIBRARY = "softmax(S_scaled)"  # with `from attnlib import softmax`: the student's namespace


def _answers(notebook: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {
        cell.metadata.nbgrader["grade_id"]: cell
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }


def _work(released: Path, source: nbformat.NotebookNode, exercise_3: str | None = None) -> None:
    """Fill in the released notebook with the model solutions, exercise 3's answer replaced."""
    notebook = nbformat.read(released, as_version=4)
    right = _answers(source)
    for grade_id, cell in _answers(notebook).items():
        cell.source = right[grade_id].source
    if exercise_3 is not None:
        _answers(notebook)["exercise3-answer"].source = exercise_3
    nbformat.write(notebook, released)


def _mistake_words() -> str:
    """What the self-check says to exercise 3's weights taken down the columns."""
    Q, K, V = examples.attention_by_hand()
    S_scaled = Q @ K.T / np.sqrt(K.shape[1])
    return checks.check_attention(attnlib.softmax(S_scaled, axis=0), Q, K, V, what="weights").message


def _forge(course: Course, author: str, victim: str) -> None:
    """A copy of ``author``'s submission named for ``victim``, newer, owned by user ``nobody``."""
    inbound = course.exchange / "attention-lessons" / "inbound"
    made = next(inbound.glob(f"{author}+{NAME}+*"))
    _, _, stamp, *rest = made.name.split("+")
    later = stamp.replace(stamp[:4], str(int(stamp[:4]) + 1), 1)  # a year later: the newest
    forged = inbound / "+".join([victim, NAME, later, *rest])
    shutil.copytree(made, forged)
    nobody = pwd.getpwnam("nobody").pw_uid
    for path in [forged, *forged.rglob("*")]:
        os.chown(path, nobody, -1)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Course, Path, dict[str, dict[str, str]]]:
    """A graded week for assignment 1: the course, the students' homes, the CSV's rows by student."""
    from conftest import require_build

    require_build(None if os.geteuid() == 0 else "grading in the sandbox needs root", "sudo")
    folder = tmp_path_factory.mktemp("grading")
    course = Course(folder / "course", folder / "exchange")
    course.source([NAME])
    course.release([NAME])
    source = nbformat.read(course.root / "source" / NAME / EXERCISES.notebook, as_version=4)
    homes = folder / "home"
    work = {
        "right": None,
        "mistake": EXERCISE_3.format(weights=AXIS_0),
        "cheat": "from attnlib import softmax\n\n\n" + EXERCISE_3.format(weights=LIBRARY),
    }
    for student in ("right", "mistake", "blank", "cheat", "again"):
        released = course.fetch(NAME, homes / student) / EXERCISES.notebook
        if student in work:
            _work(released, source, work[student])
        course.submit(NAME, homes / student, student)
    again = homes / "again" / NAME / EXERCISES.notebook
    _work(again, source)
    course.submit(NAME, homes / "again", "again")  # the second submission is the one graded
    if os.geteuid() == 0:  # another system user drops the mistake's work in "right"'s name, later
        _forge(course, "mistake", "right")
    exported = course.grade([NAME])
    with exported.open(newline="", encoding="utf-8") as file:
        rows = {row["student_id"]: row for row in csv.DictReader(file) if row["assignment"] == NAME}
    return course, homes, rows


@pytest.mark.parametrize(
    ("student", "points"),
    [
        ("right", EXERCISES.points),
        ("mistake", EXERCISES.points - 2),  # A and Z wrong: S and S_scaled keep their points
        ("blank", 0),
        ("cheat", EXERCISES.points - 4),  # exercise 3, the question it asked attnlib for: no credit
        ("again", EXERCISES.points),
    ],
)
def test_the_csv_holds_each_students_points(graded, student: str, points: int) -> None:
    _, _, rows = graded
    assert float(rows[student]["score"]) == points, rows[student]
    assert float(rows[student]["max_score"]) == EXERCISES.points


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user owns needs root")
def test_a_submission_made_in_another_students_name_is_refused(graded) -> None:
    course, _, rows = graded
    refused = [folder.name.split("+")[0] for folder in (course.root / "refused").iterdir()]
    assert refused == ["right"], refused
    assert float(rows["right"]["score"]) == EXERCISES.points  # their own work, not the forgery


def test_feedback_names_the_mistake_in_the_self_checks_words(graded) -> None:
    course, homes, _ = graded
    pages = list(course.fetch_feedback(NAME, homes / "mistake", "mistake").rglob("*.html"))
    assert len(pages) == 1, pages  # the student's own, and nobody else's
    assert _mistake_words() in html.unescape(pages[0].read_text(encoding="utf-8"))
    cheat = (course.root / "feedback" / "cheat" / NAME / EXERCISES.notebook).with_suffix(".html")
    words = "attnlib and the course are not there when grading: compute it yourself"
    assert words in html.unescape(cheat.read_text(encoding="utf-8"))


def test_the_students_version_has_no_solution_and_no_hidden_test(graded) -> None:
    course, _, _ = graded
    text = (course.root / "release" / NAME / EXERCISES.notebook).read_text(encoding="utf-8")
    assert "HIDDEN TESTS" not in text and "on_new_inputs" not in text
    assert "BEGIN SOLUTION" not in text and "S_scaled = S / np.sqrt" not in text
    assert "raise NotImplementedError()" in text


def _rows(course: Course) -> list[dict[str, str]]:
    with (course.root / "grades.csv").open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def week_one(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A term's first weeks through ``week.py``'s command line, as ``make assignments ASSIGNMENT=…``
    and ``sudo make grades [ASSIGNMENT=…]`` run it: assignment 1 alone released, one student submits
    the model answers, the class graded with assignment 2 named (refused), then with none named;
    assignment 2 released and the class graded again before anyone submitted it, with none named,
    then with it named; assignment 2 withdrawn from the exchange (``nbgrader list --remove``) and
    the grades exported. What each step printed, and the CSV's rows after it."""
    from conftest import require_build

    require_build(None if os.geteuid() == 0 else "grading in the sandbox needs root", "sudo")
    folder = tmp_path_factory.mktemp("week-one")
    course = Course(folder / "course", folder / "exchange")
    where = ["--root", str(course.root), "--exchange", str(course.exchange)]

    def week(*args: str) -> str:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            assert main([*args, *where]) == 0
        return printed.getvalue()

    week("source", NAME)
    week("release", NAME)
    seen: dict[str, object] = {"released": course.released()}
    source = nbformat.read(course.root / "source" / NAME / EXERCISES.notebook, as_version=4)
    _work(course.fetch(NAME, folder / "home" / "right") / EXERCISES.notebook, source)
    course.submit(NAME, folder / "home" / "right", "right")
    with contextlib.suppress(SystemExit), contextlib.redirect_stderr(io.StringIO()) as said:
        main(["grade", GRADIENTS.id, *where])  # refused: the test reads why
    seen["not released"] = said.getvalue()
    seen["first"] = (week("grade"), _rows(course))
    week("source", GRADIENTS.id)
    week("release", GRADIENTS.id)
    seen["no submissions"] = (week("grade"), _rows(course))
    seen["named"] = week("grade", GRADIENTS.id)
    shutil.rmtree(course.exchange / "attention-lessons" / "outbound" / GRADIENTS.id)
    seen["withdrawn"] = (week("export"), _rows(course))
    return seen


def test_release_with_an_assignment_named_releases_that_one_alone(week_one) -> None:
    assert week_one["released"] == [NAME]


def test_grading_an_assignment_not_released_says_to_release_it_first(week_one) -> None:
    said = week_one["not released"]
    assert f"{GRADIENTS.id}: not released yet" in said, said
    assert f"make assignments ASSIGNMENT={GRADIENTS.id}" in said, said


def test_grading_with_no_assignment_named_grades_those_released(week_one) -> None:
    printed, rows = week_one["first"]
    assert f"grade {NAME}:" in printed and GRADIENTS.id not in printed, printed
    assert [(row["assignment"], row["student_id"], float(row["score"])) for row in rows] == [
        (NAME, "right", EXERCISES.points)
    ]


def test_a_released_assignment_nobody_submitted_is_said_to_have_nothing_to_grade(week_one) -> None:
    printed, rows = week_one["no submissions"]
    assert f"{GRADIENTS.id}: no submissions yet, nothing to grade" in printed.splitlines(), printed
    by_assignment = {row["assignment"]: row for row in rows if row["student_id"] == "right"}
    assert by_assignment[NAME]["status"] == "graded", by_assignment
    assert float(by_assignment[NAME]["score"]) == EXERCISES.points
    assert by_assignment[GRADIENTS.id]["status"] == "not submitted", by_assignment
    assert float(by_assignment[GRADIENTS.id]["max_score"]) == GRADIENTS.points


def test_grading_the_assignment_named_grades_it_alone(week_one) -> None:
    printed = week_one["named"]
    assert f"{GRADIENTS.id}: no submissions yet, nothing to grade" in printed.splitlines(), printed
    assert f"grade {GRADIENTS.id}:" in printed and NAME not in printed, printed


def test_an_assignment_not_released_has_no_rows_in_the_csv(week_one) -> None:
    _, rows = week_one["withdrawn"]
    assert {row["assignment"] for row in rows} == {NAME}, rows


def test_grading_before_anything_is_released_says_so(tmp_path: Path, capsys) -> None:
    where = ["--root", str(tmp_path / "course"), "--exchange", str(tmp_path / "exchange")]
    with pytest.raises(SystemExit, match="2"):
        main(["collect", *where])
    said = capsys.readouterr().err
    assert "collect: nothing released in" in said and "release an assignment first" in said, said
    assert not (tmp_path / "course").exists()


@pytest.mark.parametrize("assignment", ASSIGNMENTS.values(), ids=lambda assignment: assignment.id)
def test_every_self_check_of_the_lesson_is_a_test(assignment) -> None:
    tested = [test.answer for question in assignment.questions for test in question.tests]
    assert tested == list(BY_NOTEBOOK[assignment.lesson].self_checks)
    notebook = source_notebook(assignment)
    graded_cells = [cell for cell in notebook.cells if cell.metadata.nbgrader.get("grade")]
    assert sum(cell.metadata.nbgrader["points"] for cell in graded_cells) == assignment.points
    assert all("### BEGIN HIDDEN TESTS" in cell.source for cell in graded_cells)


def _run(notebook: nbformat.NotebookNode) -> dict[str, object]:
    """Run a notebook's code cells in one namespace, in this process, as a kernel would."""
    namespace: dict[str, object] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            exec(compile(cell.source, cell.metadata.nbgrader["grade_id"], "exec"), namespace)
    return namespace


@pytest.mark.parametrize("assignment", ASSIGNMENTS.values(), ids=lambda assignment: assignment.id)
def test_the_model_solutions_pass_every_test_hidden_ones_too(assignment) -> None:
    _run(source_notebook(assignment))


def test_a_function_that_calls_attnlib_fails_the_hidden_test() -> None:
    notebook = source_notebook(EXERCISES)
    answer = _answers(notebook)["exercise3-answer"]
    answer.source = "from attnlib import softmax\n\n\n" + EXERCISE_3.format(weights=LIBRARY)
    with pytest.raises(grading.AttnlibCalledError, match=r"called attnlib\.core\.softmax"):
        _run(notebook)


def test_a_lesson_code_cell_splits_into_data_answers_and_checks() -> None:
    data, found = split_code(
        "A_check = np.eye(2)  # the weights\nmy_dv = ...  # your code\n"
        "checks.check_value_gradient(my_dv, A_check, dz_check)"
    )
    assert data == "A_check = np.eye(2)  # the weights"
    assert found == {"my_dv": "checks.check_value_gradient(my_dv, A_check, dz_check)"}


def test_a_cell_the_lesson_does_not_have_is_named() -> None:
    broken = replace(EXERCISES, questions=(replace(EXERCISES.questions[0], cells=("nope",)),))
    with pytest.raises(SourceError, match="has no cell 'nope'"):
        source_notebook(broken)


def test_attnlib_switched_off_refuses_everywhere_and_comes_back() -> None:
    namespace = {"softmax": attnlib.softmax}
    with grading.attnlib_switched_off(namespace):
        for call in (namespace["softmax"], attnlib.softmax, attnlib.core.softmax):
            with pytest.raises(grading.AttnlibCalledError, match=r"attnlib\.core\.softmax"):
                call(np.zeros(2))
    assert namespace["softmax"] is attnlib.core.softmax and attnlib.softmax is attnlib.core.softmax


def test_nbgrader_is_pinned_exactly_at_the_version_installed() -> None:
    pins = (ROOT / "requirements-grade.txt").read_text(encoding="utf-8")
    assert re.findall(r"^-r (\S+)", pins, re.MULTILINE) == ["requirements-hub.txt"]
    assert f"nbgrader=={metadata.version('nbgrader')}" in pins.splitlines()
    for line in pins.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-r "):
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", line), line


def test_require_fails_with_the_checks_words() -> None:
    grading.require(CheckResult(True, "Correct"))
    with pytest.raises(AssertionError, match=r"^on new inputs: Softmax over the wrong axis$"):
        grading.require(CheckResult(False, "Softmax over the wrong axis"), "on new inputs: ")
    with pytest.raises(TypeError, match="CheckResult"):
        grading.require(True)
