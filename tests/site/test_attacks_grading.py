"""A student attacks the grading: each class of attack is blocked, and an honest class in the same
run is graded right.

One graded week of lesson 08's assignment (``tools/grading/week.py``, as root: the sandbox hands
each submission to the account ``attn-sandbox``), with an honest student who gets every point, and
students who each try one attack in their notebook instead of solving it:

- **tampering in the notebook**: an IPython input transformer that empties the later cells,
  rebinding the self-checks and grading helpers, a private copy of attnlib loaded from the
  repository, numpy's comparisons patched, an array whose ``==`` always says yes, a function that
  answers from the lesson's own answer names;
- **grading as the teacher**: code that, while graded, reads the course folder (solutions, hidden
  tests, gradebook, classmates' work), writes into it, plants an IPython profile, reads tokens
  from the environment, opens a network connection and leaves a process running;
- **the clock**: a notebook that never ends, and one that ignores SIGINT and forks;
- **collection**: a submission holding a link to the teacher's source folder, one made in a
  classmate's name, one with an unreadable timestamp, a partial submission newer than a complete
  one, one whose notebook is not JSON, one whose nbgrader metadata is broken, and one that nbgrader
  itself fails on after collection (grading, feedback and the export go on for everyone else).

Each attacker earns nothing for the attack (or the points of their earlier, honest submission), the
course folder is unchanged, no process of the sandbox account is left, and ``grades.csv`` says for
each refused or ungraded student why.
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT, require_build, require_nbgrader

require_nbgrader()  # the grading tools import it
from assignments import ASSIGNMENTS  # noqa: E402
from week import Course  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.slow,
]
EXERCISES = ASSIGNMENTS["a1-exercises"]  # lesson 08's
NAME = EXERCISES.id
LEAK = "/tmp/attn-leak"  # where the attacks try to drop what they stole (outside the sandbox: /tmp)
BUDGET_S = 15  # the whole-notebook budget in this test (ATTN_GRADING_BUDGET_S)

# Each attack is the source of an answer cell (exercise 3's, worth 4 points) or of the first answer
# cell (exercise 1's), the rest of the notebook left blank: what the attack earns is all it earns.
TRANSFORMER = """\
get_ipython().input_transformers_cleanup.append(lambda lines: [])  # empty every later cell
def attention_by_hand(Q, K, V):
    return 0, 0, 0, 0"""
REBIND = """\
import builtins
grading.require = lambda *args, **kwargs: None
grading.on_new_inputs = lambda *args, **kwargs: None
checks.check_attention = lambda *args, **kwargs: True
builtins.AssertionError = type("Passed", (Exception,), {})
def attention_by_hand(Q, K, V):
    return 0, 0, 0, 0"""
PRIVATE_ATTNLIB = f"""\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mine", {str(ROOT / "attnlib" / "core.py")!r})
mine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mine)
def attention_by_hand(Q, K, V):
    steps = mine.attention_steps(Q, K, V)
    return steps.scores, steps.scaled_scores, steps.weights, steps.output"""
NUMPY_PATCHED = """\
import numpy as np
np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.shape(a), dtype=bool)
np.testing.assert_allclose = lambda *args, **kwargs: None
class Always(np.ndarray):
    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)
def attention_by_hand(Q, K, V):
    fake = np.zeros((len(Q), len(K))).view(Always)
    return fake, fake, fake, np.zeros((len(Q), V.shape[1])).view(Always)"""
LESSON_NAMES = """\
def attention_by_hand(Q, K, V):
    return S, S_scaled, A, Z  # the lesson's own answers, if the notebook had them"""
AS_TEACHER = """\
import os, socket, subprocess, json
found = {}
def attempt(what, action):
    try:
        found[what] = repr(action())[:60]
    except Exception as error:
        found[what] = "refused: " + type(error).__name__
attempt("course folder", lambda: os.listdir(@course@))
attempt("source", lambda: open(@source@).read())
attempt("gradebook", lambda: open(@gradebook@, "rb").read(1))
attempt("exchange", lambda: os.listdir(@exchange@))
attempt("repository", lambda: os.listdir(@repository@))
attempt("write the course", lambda: open(@course@ + "/planted", "w").write("x"))
attempt("profile", lambda: open(os.path.expanduser("~/.ipython/profile_default/startup/x.py"), "w"))
attempt("leak", lambda: open(@leak@, "w").write("stolen"))
attempt("network", lambda: socket.create_connection(("127.0.0.1", 22), timeout=2))
attempt("linger", lambda: subprocess.Popen(["sleep", "600"], start_new_session=True).pid)
found["environment"] = sorted(os.environ)
found["user"] = os.getuid()
def plain_attention(s, H):
    return json.dumps(found), 0, 0"""
FOREVER = """\
def attention_by_hand(Q, K, V):
    while True:
        pass"""
STUBBORN = """\
import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.fork() if hasattr(os, "fork") else None
while True:
    pass"""


def _spy(course: Course) -> str:
    """The as-teacher attack, aimed at this course's folders."""
    places = {
        "course": course.root,
        "source": course.root / "source" / NAME / EXERCISES.notebook,
        "gradebook": course.root / "gradebook.db",
        "exchange": course.exchange,
        "repository": ROOT,
        "leak": LEAK,
    }
    code = AS_TEACHER
    for name, place in places.items():
        code = code.replace(f"@{name}@", repr(str(place)))
    return code


def _notebook(source: nbformat.NotebookNode, released: Path, answers: dict[str, str]) -> None:
    """The released notebook, with the model answers where ``answers`` says "right", an attack's
    cell source where it names one, blank elsewhere."""
    notebook = nbformat.read(released, as_version=4)
    model = {
        cell.metadata.nbgrader["grade_id"]: cell.source
        for cell in source.cells
        if "nbgrader" in cell.metadata
    }
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
        elif answers.get("*") == "right" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = model[grade_id]
    nbformat.write(notebook, released)


def _own(path: Path, user: str) -> None:
    uid = pwd.getpwnam(user).pw_uid
    for item in [path, *path.rglob("*")]:
        os.lchown(item, uid, -1)


def _account(name: str) -> str:
    """A system user for a simulated student (the exchange judges a submission by its owner)."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        os.system(f"useradd --system --no-create-home --shell /usr/sbin/nologin {name}")
    return name


def _submit(course: Course, homes: Path, student: str, answers: dict[str, str]) -> Path:
    """``student`` fetches, fills in and submits; their submission folder in the inbound."""
    released = homes / student / NAME / EXERCISES.notebook
    if not released.exists():
        course.fetch(NAME, homes / student)
    source = nbformat.read(course.root / "source" / NAME / EXERCISES.notebook, as_version=4)
    _notebook(source, released, answers)
    course.submit(NAME, homes / student, student)
    inbound = course.exchange / "attention-lessons" / "inbound"
    newest = max(inbound.glob(f"{student}+{NAME}+*"), key=lambda p: p.stat().st_mtime_ns)
    _own(newest, _account(student))
    time.sleep(1.05)  # nbgrader tells submissions apart by their timestamp, to the second
    return newest


STUDENTS = {  # student (a system user of that name) → (answer cells, the points the CSV must hold)
    "atk-honest": ({"*": "right"}, EXERCISES.points),
    "atk-transformer": ({"exercise3-answer": TRANSFORMER}, 0),
    "atk-rebind": ({"exercise3-answer": REBIND}, 0),
    "atk-private": ({"exercise3-answer": PRIVATE_ATTNLIB}, 0),
    "atk-numpy": ({"exercise3-answer": NUMPY_PATCHED}, 0),
    "atk-names": ({"exercise3-answer": LESSON_NAMES}, 0),
    "atk-forever": ({"*": "right", "exercise3-answer": FOREVER}, EXERCISES.points - 4),
    "atk-stubborn": ({"*": "right", "exercise1-answer": STUBBORN}, 0),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The graded week: the course, what the as-teacher attack found, the CSV's rows by student."""
    require_build(None if os.geteuid() == 0 else "grading in the sandbox needs root", "sudo")
    folder = tmp_path_factory.mktemp("attacks")
    folder.chmod(0o755)
    course = Course(folder / "course", folder / "exchange")
    course.source([NAME])
    course.release([NAME])
    homes = folder / "home"
    Path(LEAK).unlink(missing_ok=True)
    answers = dict(STUDENTS)
    teacher = _spy(course)
    answers["atk-spy"] = ({"exercise1-answer": teacher}, 0)
    for student, (cells, _) in answers.items():
        _submit(course, homes, student, cells)
    # Collection: attacks on the exchange itself.
    link = _submit(course, homes, "atk-linker", {})
    (link / EXERCISES.notebook).unlink()
    (link / EXERCISES.notebook).symlink_to(course.root / "source" / NAME / EXERCISES.notebook)
    _submit(course, homes, "atk-stamp", {"*": "right"})
    stamp = _submit(course, homes, "atk-stamp", {})
    (stamp / "timestamp.txt").write_text("the day after tomorrow")
    _submit(course, homes, "atk-partial", {"*": "right"})  # complete, then a newer partial one
    partial = _submit(course, homes, "atk-partial", {})
    (partial / EXERCISES.notebook).unlink()
    broken = _submit(course, homes, "atk-broken", {})
    (broken / EXERCISES.notebook).write_text("{ not json")
    metadata = _submit(course, homes, "atk-metadata", {"*": "right"})
    notebook = json.loads((metadata / EXERCISES.notebook).read_text())
    graded = next(cell for cell in notebook["cells"] if cell["metadata"].get("nbgrader", {}).get("grade"))
    graded["metadata"]["nbgrader"]["points"] = "all of them"
    (metadata / EXERCISES.notebook).write_text(json.dumps(notebook))
    _submit(course, homes, "atk-corrupt", {"*": "right"})
    _submit(course, homes, "atk-victim", {"*": "right"})
    forged = _submit(course, homes, "atk-forger", {})
    claimed = forged.name.replace("atk-forger", "atk-victim", 1).replace("2026", "2027", 1)
    shutil.move(forged, forged.with_name(claimed))
    before = {path: path.stat().st_mtime_ns for path in (course.root / "source").rglob("*")}
    os.environ["ATTN_GRADING_BUDGET_S"] = str(BUDGET_S)
    try:
        start = time.perf_counter()
        course.collect([NAME])
        collected = course.root / "submitted" / "atk-corrupt" / NAME / EXERCISES.notebook
        collected.write_text("{ the disk broke")  # after collection: nbgrader itself fails on it
        course.autograde([NAME])
        course.feedback([NAME])
        exported = course.export()
        seconds = time.perf_counter() - start
    finally:
        del os.environ["ATTN_GRADING_BUDGET_S"]
    with exported.open(newline="", encoding="utf-8") as file:
        rows = {row["student_id"]: row for row in csv.DictReader(file) if row["assignment"] == NAME}
    graded = course.root / "autograded" / "atk-spy" / NAME / EXERCISES.notebook
    spied = nbformat.read(graded, as_version=4)
    answer = next(c for c in spied.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "exercise1-e")
    yield {"course": course, "rows": rows, "before": before, "atk-spy": answer, "seconds": seconds}
    Path(LEAK).unlink(missing_ok=True)
    for entry in pwd.getpwall():  # the simulated students' system users
        if entry.pw_name.startswith("atk-"):
            subprocess.run(["userdel", entry.pw_name], capture_output=True, check=False)


@pytest.mark.parametrize("student", sorted(STUDENTS))
def test_tampering_earns_nothing_and_the_honest_student_everything(week: dict, student: str) -> None:
    row = week["rows"][student]
    assert float(row["score"]) == STUDENTS[student][1], row
    assert float(row["max_score"]) == EXERCISES.points


def test_code_graded_reaches_nothing_of_the_teachers_or_the_class(week: dict) -> None:
    course = week["course"]
    assert float(week["rows"]["atk-spy"]["score"]) == 0
    outputs = json.dumps([output for output in week["atk-spy"].outputs])
    assert "AssertionError" in outputs  # the check ran on what the spy's function returned
    assert not Path(LEAK).exists(), "nothing written where the class can read it"
    assert not (course.root / "planted").exists()
    after = {path: path.stat().st_mtime_ns for path in (course.root / "source").rglob("*")}
    assert after == week["before"], "the source folder is untouched"
    from sandbox import ACCOUNT, processes

    assert processes(pwd.getpwnam(ACCOUNT).pw_uid) == [], "no process of the sandbox is left"


def test_what_the_graded_code_saw(week: dict) -> None:
    """The spy's function returned what it found; the check refused it, but the grader kept it."""
    from codec import decode, encode
    from sandbox import ACCOUNT, Sandbox

    code = _spy(week["course"])
    with Sandbox(budget_s=30) as box:
        assert box.request({"op": "exec", "code": code})["error"] is None
        reply = box.request({"op": "call", "function": "plain_attention", "args": encode((0, 0))})
    found = json.loads(decode(reply["value"])[0])
    refused = {what for what, result in found.items() if str(result).startswith("refused")}
    hidden = {"course folder", "source", "gradebook", "exchange", "write the course", "network"}
    assert hidden <= refused, found
    assert found["repository"] in ("[]", "['.venv']"), found  # the Python environment, read-only
    assert found["user"] == pwd.getpwnam(ACCOUNT).pw_uid
    clean = {"HOME", "TMPDIR", "PATH", "LANG", "MPLBACKEND"} | {
        f"{name}_NUM_THREADS" for name in ("OPENBLAS", "OMP", "MKL")
    }
    assert set(found["environment"]) <= clean, found["environment"]  # no token, no teacher's HOME


def test_a_notebook_past_its_time_is_not_graded_and_the_csv_says_why(week: dict) -> None:
    rows = week["rows"]
    for student in ("atk-forever", "atk-stubborn"):
        assert rows[student]["status"].startswith("not graded after that: the notebook ran past its"), rows[
            student
        ]
    assert rows["atk-honest"]["status"] == "graded"
    assert week["seconds"] < 4 * BUDGET_S + 120, "grading went on for the others"


@pytest.mark.parametrize(
    ("student", "points", "words"),
    [
        ("atk-linker", 0, "exercises.ipynb, which is a link"),
        ("atk-stamp", EXERCISES.points, "its timestamp.txt is missing or unreadable"),
        ("atk-partial", EXERCISES.points, "it is partial: exercises.ipynb is missing"),
        ("atk-broken", 0, "exercises.ipynb is not a readable notebook"),
        ("atk-metadata", 0, "exercises.ipynb's nbgrader cell metadata is broken"),
        ("atk-corrupt", 0, "nbgrader could not autograde this submission"),
        ("atk-forger", 0, "made by atk-forger in another student's name"),
    ],
)
def test_collection_refuses_what_it_cannot_trust_and_says_so(
    week: dict, student: str, points: int, words: str
) -> None:
    row = week["rows"][student]
    assert float(row["score"]) == points, row
    assert words in row["status"], row
    assert row["status"].startswith("not graded" if points == 0 else "graded"), row


def test_the_exchange_root_is_not_writable_without_the_sticky_bit(week: dict) -> None:
    exchange = week["course"].exchange
    for folder in (exchange, exchange / "attention-lessons" / "inbound"):
        mode = folder.stat().st_mode
        assert not mode & stat.S_IWOTH or mode & stat.S_ISVTX, f"{folder}: {stat.filemode(mode)}"


def test_grading_refuses_to_start_without_root(tmp_path: Path) -> None:
    """Grading without the sandbox is impossible: as any other user, week.py says what to do, before
    it grades anyone."""
    tool = ROOT / "tools" / "grading" / "week.py"
    result = subprocess.run(
        [
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            sys.executable,
            str(tool),
            "autograde",
            "--root",
            str(tmp_path / "course"),
            "--exchange",
            str(tmp_path / "exchange"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert result.returncode != 0 and "run the grading step with sudo" in result.stderr, result.stderr[-2000:]


def test_a_submission_that_stops_reading_ends_at_its_budget() -> None:
    """A submission that closes its input and lingers: the grader's next (large) request cannot be
    written, and the sandbox still ends at its budget, not never."""
    from codec import encode
    from sandbox import Sandbox, SandboxError

    code = (
        "import os, threading, time\n"
        "def stall():\n"
        "    os.dup2(os.open('/dev/null', os.O_RDONLY), 0)\n"
        "    threading.Thread(target=time.sleep, args=(600,)).start()\n"
        "    return 0\n"
    )
    start = time.monotonic()
    with pytest.raises(SandboxError, match="ran past its 5 s"), Sandbox(budget_s=5) as box:
        assert box.request({"op": "exec", "code": code})["error"] is None
        box.request({"op": "call", "function": "stall", "args": encode(())})
        box.request({"op": "exec", "code": "#" * (1 << 20)})  # far more than a pipe holds
    assert time.monotonic() - start < 30


def test_collection_judges_a_copy_the_student_cannot_change(tmp_path: Path) -> None:
    """Between the checks and nbgrader's copy, a student swaps their notebook for a link to the
    teacher's source: what nbgrader collects is the copy that was checked."""
    from collection import SafeCollect

    course = Course(tmp_path / "course", tmp_path / "exchange")
    course.source([NAME])
    course.release([NAME])
    folder = _submit(course, tmp_path / "home", "atk-swapper", {})
    source = course.root / "source" / NAME / EXERCISES.notebook

    class Swapped(SafeCollect):
        def copy_files(self) -> None:  # the student's move, after the checks
            (folder / EXERCISES.notebook).unlink()
            (folder / EXERCISES.notebook).symlink_to(source)
            super().copy_files()

    course._exchange(Swapped, NAME, ExchangeCollect={"update": True})
    collected = course.root / "submitted" / "atk-swapper" / NAME / EXERCISES.notebook
    assert "BEGIN SOLUTION" not in collected.read_text(), "the checked copy, not the teacher's source"
    assert not collected.is_symlink()
    subprocess.run(["userdel", "atk-swapper"], capture_output=True, check=False)
