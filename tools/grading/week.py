"""A graded week with nbgrader: the teacher's steps, one command each, and all of them in order.

    .venv/bin/python tools/grading/week.py STEP [ASSIGNMENT ...] [--root DIR] [--exchange DIR]

Steps, in the order of a week (the instructor's guide, "A graded week", walks through them), each
what the nbgrader command named does, run in this process with nbgrader's classes:

``source``    write the source notebooks from the lessons (``tools/grading/make_source.py``)
``release``   ``nbgrader generate_assignment`` (the student version: no solution, no hidden test)
              and ``nbgrader release_assignment`` (into the exchange, where students fetch it)
``collect``   ``nbgrader collect --update`` (every student's latest submission that can be
              trusted: ``collection.py``)
``autograde`` ``nbgrader autograde``, each submission judged with its code in a sandbox
              (``judge.py``, ``sandbox.py``; as root: ``sudo``), the tests put back from the
              gradebook, hidden ones too
``feedback``  ``nbgrader generate_feedback`` and ``release_feedback`` (students fetch it)
``export``    ``nbgrader export`` to ``<root>/grades.csv`` (one row per student and assignment, and a
              ``status``: graded, not submitted, or why not graded)
``grade``     collect, autograde, feedback and export in one go

With no assignment named, ``source`` and ``release`` take every assignment of
``tools/grading/lessons/`` and the grading steps every one of them released (in the
exchange's ``outbound``); naming one never released is an error. An assignment released but not
yet submitted is skipped with a line that says so. The settings are
those of ``tools/grading/nbgrader_config.py`` (which the ``nbgrader`` command reads too where
``JUPYTER_CONFIG_PATH`` names this folder, as on the hub), read for this course: the course folder
(``--root``, ``$ATTN_GRADING_ROOT``, ``~/attention-grading``) and the exchange (``--exchange``,
``$ATTN_EXCHANGE``, ``/srv/nbgrader/exchange``), both outside ``build/``. The students' side
(fetch, submit, fetch the feedback) is nbgrader's Assignments tab in JupyterLab, or
:meth:`Course.fetch`, :meth:`Course.submit` and :meth:`Course.fetch_feedback` here, which the
pipeline test uses for simulated students.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sandbox
from assignments import ASSIGNMENTS
from collection import SafeCollect
from judge import REPORT, record, status
from make_source import default_root, write
from nbgrader.api import Gradebook
from nbgrader.auth import Authenticator
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default import (
    ExchangeFetchAssignment,
    ExchangeFetchFeedback,
    ExchangeReleaseAssignment,
    ExchangeReleaseFeedback,
    ExchangeSubmit,
)
from nbgrader.plugins import CsvExportPlugin
from traitlets.config import Config, PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = Path(__file__).resolve().parent
CONFIG = "nbgrader_config.py"
CACHE = Path(".local", "share", "jupyter", "nbgrader_cache")  # in a student's home, as on their server
STEPS = ("source", "release", "collect", "autograde", "feedback", "export", "grade")
GRADING = ("collect", "autograde", "feedback", "grade")  # the steps that take released assignments


def default_exchange() -> Path:
    """The exchange: ``$ATTN_EXCHANGE``, else nbgrader's ``/srv/nbgrader/exchange``."""
    return Path(os.environ.get("ATTN_EXCHANGE", "/srv/nbgrader/exchange"))


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set within the block (the kernels nbgrader starts inherit it)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass(frozen=True)
class Course:
    """One course's grading: its folder and its exchange; nbgrader's steps run in this process.

    Each step is what the ``nbgrader`` command of the same name does, with the settings of
    ``tools/grading/nbgrader_config.py`` (read with this course's folders); running nbgrader's
    classes here instead of its command spares a start of nbgrader per step and per student.
    """

    root: Path
    exchange: Path

    @contextmanager
    def _env(self) -> Iterator[None]:
        """This course's folders for the config file; this checkout's attnlib and course on the path of
        the kernels that grade; this Python's scripts first on ``PATH`` (nbgrader runs ``alembic``)."""
        python_path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        scripts = [str(Path(sys.executable).parent), os.environ.get("PATH", "")]
        values = {
            "ATTN_GRADING_ROOT": str(self.root),
            "ATTN_EXCHANGE": str(self.exchange),
            "PYTHONPATH": os.pathsep.join(python_path),
            "PATH": os.pathsep.join(scripts),
        }
        with _environment(values):
            yield

    def config(self, **settings: dict[str, object]) -> Config:
        """nbgrader's settings: the project's config file read for this course, then ``settings``
        (``{"Exchange": {"assignment_dir": ...}}``)."""
        with self._env():
            config = PyFileConfigLoader(CONFIG, path=str(CONFIG_DIR)).load_config()
        for section, values in settings.items():
            for name, value in values.items():
                setattr(config[section], name, value)
        return config

    def _coursedir(self, config: Config, assignment: str, student: str = "*") -> CourseDirectory:
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = assignment
        coursedir.student_id = student
        return coursedir

    def _convert(self, converter: type, assignment: str, student: str = "*", **traits: object) -> None:
        """Run one of nbgrader's converters on ``student``'s copy of ``assignment`` (every student's)."""
        config = self.config()
        with self._env():
            app = converter(coursedir=self._coursedir(config, assignment, student), config=config, **traits)
            app.start()

    def _each_student(self, converter: type, assignment: str, step: str, note: str, **traits: object) -> None:
        """Run ``converter`` for each student with a collected ``assignment``, one at a time: one
        whose notebook nbgrader cannot handle is reported (``grades.csv``) and the others go on."""
        folders = sorted((self.root / "submitted").glob(f"*/{assignment}"))
        for student in (folder.parent.name for folder in folders):
            try:
                self._convert(converter, assignment, student, **traits)
                if note == "feedback":
                    record(self.root, student, assignment, note, None)
            except Exception as error:  # nbgrader raises its own and others' errors alike
                reason = f"nbgrader could not {step} this submission ({type(error).__name__})"
                print(f"{student}: {reason}", file=sys.stderr)
                record(self.root, student, assignment, note, reason)

    def _in_exchange(self, folder: str) -> Path:
        """This course's ``folder`` of the exchange (``inbound``, ``outbound``)."""
        return self.exchange / self.config().CourseDirectory.course_id / folder

    def released(self) -> list[str]:
        """The assignments released into the exchange (a folder each in its ``outbound``)."""
        outbound = self._in_exchange("outbound")
        return sorted(path.name for path in outbound.iterdir() if path.is_dir()) if outbound.is_dir() else []

    def _with_submissions(self, ids: list[str], collected: bool = False) -> list[str]:
        """Those of ``ids`` that have a submission in the exchange (``collected``: in the course
        folder's ``submitted/``); for each of the others a line that says there is nothing to grade."""
        kept = []
        for name in ids:
            if collected:
                found = any((self.root / "submitted").glob(f"*/{name}"))
            else:
                found = any(self._in_exchange("inbound").glob(f"*+{name}+*"))
            if found:
                kept.append(name)
            else:
                print(f"{name}: no submissions {'collected' if collected else 'yet'}, nothing to grade")
        return kept

    def _exchange(
        self, step: type, assignment: str, student: str = "*", **settings: dict[str, object]
    ) -> None:
        """Run one of nbgrader's exchange steps for ``assignment``."""
        config = self.config(**settings)
        coursedir = self._coursedir(config, assignment, student)
        with self._env():
            step(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()

    def source(self, ids: list[str]) -> None:
        """Write the source notebooks."""
        write(self.root, ids)

    def release(self, ids: list[str]) -> None:
        """Make the student versions (``generate_assignment``) and release them into the exchange."""
        self.exchange.mkdir(parents=True, exist_ok=True)
        for name in ids:
            self._convert(GenerateAssignment, name, force=True)
            self._exchange(ExchangeReleaseAssignment, name, Exchange={"force": True})
        inbound = self._in_exchange("inbound")
        for folder in (self.exchange, inbound):  # writable by all: no one renames or deletes another's
            if folder.stat().st_uid == os.geteuid() and folder.stat().st_mode & stat.S_IWOTH:
                folder.chmod(folder.stat().st_mode | stat.S_ISVTX)

    def collect(self, ids: list[str]) -> None:
        """Collect every student's latest submission (``collect --update``) that can be trusted
        (``collection.SafeCollect``: the others are refused, and the reasons kept); an assignment
        with none is skipped, with a line that says so."""
        for name in self._with_submissions(ids):
            self._exchange(SafeCollect, name, ExchangeCollect={"update": True})

    def autograde(self, ids: list[str]) -> None:
        """Grade the collected submissions, the tests put back from the gradebook, hidden ones too,
        each in the sandbox (:class:`sandbox.SandboxError` at once where none can start)."""
        sandbox.require()
        for name in self._with_submissions(ids, collected=True):
            self._each_student(Autograde, name, "autograde", "judge", force=True, create_student=True)

    def feedback(self, ids: list[str]) -> None:
        """Write each student's feedback (HTML) and release it into the exchange."""
        for name in self._with_submissions(ids, collected=True):
            self._each_student(GenerateFeedback, name, "write the feedback of", "feedback", force=True)
            self._exchange(ExchangeReleaseFeedback, name)

    def export(self) -> Path:
        """The gradebook as ``<root>/grades.csv``: one row per student and assignment, nbgrader's
        columns and a ``status``: graded, not submitted, or "not graded: " and why (a row is added
        for a student whose every submission was refused). An assignment not released has no rows,
        not a 0 for everyone (one withdrawn from the exchange after grading keeps its rows)."""
        path = self.root / "grades.csv"
        config = self.config(ExportPlugin={"to": str(path)})
        coursedir = CourseDirectory(config=config)
        with self._env(), Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
            CsvExportPlugin(config=config).export(gradebook)
        with path.open(newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        columns = [*(rows[0] if rows else ["assignment", "student_id", "score", "max_score"]), "status"]
        given = {*self.released(), *(row["assignment"] for row in rows if row.get("timestamp"))}
        rows = [row for row in rows if row["assignment"] in given]
        seen = {(row["student_id"], row["assignment"]) for row in rows}
        report = self.root / REPORT
        for key in json.loads(report.read_text()) if report.exists() else {}:
            student, assignment = key.split("/", 1)
            if (student, assignment) not in seen:
                rows.append({"assignment": assignment, "student_id": student, "score": 0.0})
        for row in rows:
            submitted = bool(row.get("timestamp"))
            row["status"] = status(self.root, row["student_id"], row["assignment"], submitted)
        with path.open("w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, columns, restval="")
            writer.writeheader()
            writer.writerows(rows)
        return path

    def grade(self, ids: list[str]) -> Path:
        """Collect, autograde, feedback, export; an assignment with no submission is skipped, with a
        line that says so."""
        ids = self._with_submissions(ids)
        self.collect(ids)
        self.autograde(ids)
        self.feedback(ids)
        return self.export()

    # The students' side, as nbgrader's Assignments tab in JupyterLab does it.
    @staticmethod
    def _student(home: Path) -> dict[str, object]:
        """A student's exchange settings: their folder, and their own record of what they submitted
        (nbgrader's cache, where it looks for their feedback), where their server keeps it."""
        return {"assignment_dir": str(home), "cache": str(home / CACHE)}

    def fetch(self, name: str, home: Path) -> Path:
        """A student fetches assignment ``name`` into ``home``; the folder it lands in."""
        home.mkdir(parents=True, exist_ok=True)
        self._exchange(ExchangeFetchAssignment, name, Exchange=self._student(home))
        return home / name

    def submit(self, name: str, home: Path, student: str) -> None:
        """Student ``student`` submits ``home/name`` (again: the newest submission counts)."""
        self._exchange(ExchangeSubmit, name, student, Exchange=self._student(home))

    def fetch_feedback(self, name: str, home: Path, student: str) -> Path:
        """Student ``student`` fetches the feedback on ``name``; the folder it lands in."""
        self._exchange(ExchangeFetchFeedback, name, student, Exchange=self._student(home))
        return home / name / "feedback"


def give_back(root: Path) -> None:
    """After a step run as root (``sudo``: the sandbox needs it), what it wrote in a teacher's course
    folder goes back to the folder's owner, so the teacher's own notebook can read and write it."""
    owner = root.stat()
    if os.geteuid() != 0 or owner.st_uid == 0:
        return
    for path in [root, *root.rglob("*")]:
        os.lchown(path, owner.st_uid, owner.st_gid)


class NotReleasedError(Exception):
    """A grading step named an assignment not released, or found none released."""


def _chosen(course: Course, step: str, named: list[str]) -> list[str]:
    """The assignments ``step`` works on: those ``named``, else every one (``source``, ``release``)
    or every one released (the grading steps). :class:`NotReleasedError` where a grading step is
    named one not released, or finds none released."""
    if step not in GRADING:
        return named or list(ASSIGNMENTS)
    released = course.released()
    unreleased = [name for name in named if name not in released]
    if unreleased:
        raise NotReleasedError(
            f"{' '.join(unreleased)}: not released yet, nothing to grade: release it first "
            f"(make assignments ASSIGNMENT={unreleased[0]})"
        )
    ids = named or [name for name in ASSIGNMENTS if name in released]
    if not ids:
        raise NotReleasedError(f"nothing released in {course.exchange} yet: release an assignment first")
    return ids


def main(argv: list[str]) -> int:
    """Run one step (or ``grade``) for the assignments named, and say how long it took."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("assignments", nargs="*", help=f"all by default, or some of {', '.join(ASSIGNMENTS)}")
    parser.add_argument("--root", type=Path, default=default_root(), help="the course folder")
    parser.add_argument("--exchange", type=Path, default=default_exchange(), help="the exchange folder")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.assignments) - set(ASSIGNMENTS))
    if unknown:
        parser.error(f"no assignment {unknown}: there are {', '.join(ASSIGNMENTS)}")
    course = Course(args.root.resolve(), args.exchange.resolve())
    try:
        if args.step in ("autograde", "grade"):
            sandbox.require()  # before anything is collected or written
        ids = _chosen(course, args.step, args.assignments)
    except (NotReleasedError, sandbox.SandboxError) as error:
        parser.exit(2, f"{args.step}: {error}\n")
    course.root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if args.step == "export":
        print(course.export())
    elif args.step == "grade":
        print(course.grade(ids))
    else:
        getattr(course, args.step)(ids)
    give_back(course.root)
    print(f"{args.step} {' '.join(ids)}: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
