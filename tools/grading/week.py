"""A graded week with nbgrader: the teacher's steps, one command each, and all of them in order.

    .venv/bin/python tools/grading/week.py STEP [ASSIGNMENT ...] [--root DIR] [--exchange DIR]

Steps, in the order of a week (the instructor's guide, "A graded week", walks through them):

``source``    write the source notebooks from the lessons (``tools/grading/make_source.py``)
``release``   ``nbgrader generate_assignment`` (the student version: no solution, no hidden test)
              and ``nbgrader release_assignment`` (into the exchange, where students fetch it)
``collect``   ``nbgrader collect --update`` (every student's latest submission)
``autograde`` ``nbgrader autograde`` (runs each submission with the tests put back, hidden ones too)
``feedback``  ``nbgrader generate_feedback`` and ``release_feedback`` (students fetch it)
``export``    ``nbgrader export`` to ``<root>/grades.csv`` (one row per student and assignment)
``grade``     collect, autograde, feedback and export in one go

With no assignment named, every assignment of ``tools/grading/assignments.py``. nbgrader reads its
settings from ``tools/grading/nbgrader_config.py`` (put on ``JUPYTER_CONFIG_PATH`` here); the
course folder (``--root``, ``$ATTN_GRADING_ROOT``, ``~/attention-grading``) and the exchange
(``--exchange``, ``$ATTN_EXCHANGE``, ``/srv/nbgrader/exchange``) are outside ``build/``. The
students' side (``fetch``, ``submit``) is nbgrader's Assignments tab in JupyterLab, or
:func:`fetch` and :func:`submit` here, which the pipeline test uses for simulated students.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from assignments import ASSIGNMENTS
from make_source import default_root, write

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = Path(__file__).resolve().parent  # holds nbgrader_config.py
NBGRADER = Path(sys.executable).with_name("nbgrader")
STEPS = ("source", "release", "collect", "autograde", "feedback", "export", "grade")


def default_exchange() -> Path:
    """The exchange: ``$ATTN_EXCHANGE``, else nbgrader's ``/srv/nbgrader/exchange``."""
    return Path(os.environ.get("ATTN_EXCHANGE", "/srv/nbgrader/exchange"))


@dataclass(frozen=True)
class Course:
    """Where one course's grading lives: its folder and its exchange."""

    root: Path
    exchange: Path

    def env(self) -> dict[str, str]:
        """The environment nbgrader runs in: this project's config, this course's folders, and
        this checkout's attnlib and course on the kernels' path."""
        paths = [str(CONFIG_DIR), *filter(None, [os.environ.get("JUPYTER_CONFIG_PATH")])]
        python_path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        return {
            **os.environ,
            "JUPYTER_CONFIG_PATH": os.pathsep.join(paths),
            "ATTN_GRADING_ROOT": str(self.root),
            "ATTN_EXCHANGE": str(self.exchange),
            "PYTHONPATH": os.pathsep.join(python_path),
            # nbgrader runs `alembic` (its database's migrations) by name
            "PATH": os.pathsep.join([str(NBGRADER.parent), os.environ.get("PATH", "")]),
        }

    def nbgrader(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``nbgrader *args`` (in the course folder unless ``cwd``); fail with its log."""
        done = subprocess.run(
            [str(NBGRADER), *args],
            cwd=cwd or self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
        return done

    def source(self, ids: list[str]) -> None:
        """Write the source notebooks."""
        write(self.root, ids)

    def release(self, ids: list[str]) -> None:
        """Make the student versions and release them into the exchange."""
        self.exchange.mkdir(parents=True, exist_ok=True)
        for name in ids:
            self.nbgrader("generate_assignment", name, "--force")
            self.nbgrader("release_assignment", name, "--force")

    def collect(self, ids: list[str]) -> None:
        """Collect every student's latest submission."""
        for name in ids:
            self.nbgrader("collect", name, "--update")

    def autograde(self, ids: list[str]) -> None:
        """Grade the collected submissions (hidden tests put back)."""
        for name in ids:
            self.nbgrader("autograde", name, "--force")

    def feedback(self, ids: list[str]) -> None:
        """Write each student's feedback (HTML) and release it into the exchange."""
        for name in ids:
            self.nbgrader("generate_feedback", name, "--force")
            self.nbgrader("release_feedback", name)

    def export(self) -> Path:
        """The gradebook as ``<root>/grades.csv``."""
        csv = self.root / "grades.csv"
        self.nbgrader("export", "--to", str(csv))
        return csv

    def grade(self, ids: list[str]) -> Path:
        """Collect, autograde, feedback, export."""
        self.collect(ids)
        self.autograde(ids)
        self.feedback(ids)
        return self.export()

    # The students' side, as nbgrader's Assignments tab does it.
    def fetch(self, name: str, home: Path) -> Path:
        """A student fetches assignment ``name`` into ``home``; the folder it lands in."""
        home.mkdir(parents=True, exist_ok=True)
        self.nbgrader("fetch_assignment", name, cwd=home)
        return home / name

    def submit(self, name: str, home: Path, student: str) -> None:
        """Student ``student`` submits ``home/name`` (again: the newest submission counts)."""
        self.nbgrader("submit", name, f"--student={student}", cwd=home)


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
    ids = args.assignments or list(ASSIGNMENTS)
    course = Course(args.root.resolve(), args.exchange.resolve())
    course.root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if args.step == "export":
        print(course.export())
    elif args.step == "grade":
        print(course.grade(ids))
    else:
        getattr(course, args.step)(ids)
    print(f"{args.step} {' '.join(ids)}: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
