"""A graded week's steps, timed as a teacher runs them: each ``tools/grading/week.py`` step in a
fresh process (its start included), with N simulated students fetching and submitting both
assignments in between (right answers; the last student blank).

    .venv/bin/python benchmarks/grading_week.py [--students 5]

Prints each step's wall time and the grades, and writes ``results/grading_week.json`` with the
machine and its load average (the instructor's guide, *A graded week*, quotes it). One run, not a
median: each step is a command a teacher types once a week, and on a shared machine its time is
mostly the start of Python and nbgrader under the load of the moment.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "tools" / "grading")]

from assignments import ASSIGNMENTS  # noqa: E402
from machine import machine_description  # noqa: E402
from week import Course  # noqa: E402

WEEK = ROOT / "tools" / "grading" / "week.py"
RESULTS = ROOT / "benchmarks" / "results" / "grading_week.json"


def _step(course: Course, *args: str) -> float:
    """Run ``week.py *args`` in a fresh process; its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(WEEK), *args, "--root", str(course.root), "--exchange", str(course.exchange)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return time.perf_counter() - start


def _students(course: Course, folder: Path, count: int) -> float:
    """Each student fetches, fills in (the last leaves it blank) and submits each assignment;
    the mean time of one fetch and submit."""
    start, done = time.perf_counter(), 0
    for number in range(1, count + 1):
        home = folder / f"student{number:02d}"
        for assignment in ASSIGNMENTS.values():
            released = course.fetch(assignment.id, home) / assignment.notebook
            notebook = nbformat.read(released, as_version=4)
            source = nbformat.read(course.root / "source" / assignment.id / assignment.notebook, as_version=4)
            if number < count:
                for cell, model in zip(notebook.cells, source.cells, strict=True):
                    if cell.metadata.get("nbgrader", {}).get("solution"):
                        cell.source = model.source
            nbformat.write(notebook, released)
            course.submit(assignment.id, home, f"student{number:02d}")
            done += 1
    return (time.perf_counter() - start) / done


def main(argv: list[str]) -> int:
    """Time the week and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        course = Course(Path(folder, "course"), Path(folder, "exchange"))
        load = {"before": os.getloadavg()[0]}
        times = {}
        times["source"] = _step(course, "source")
        times["release"] = _step(course, "release")
        times["a student's fetch and submit"] = _students(course, Path(folder, "home"), args.students)
        for step in ("collect", "autograde", "feedback", "export"):
            times[step] = _step(course, step)
        load["after"] = os.getloadavg()[0]
        grades = (course.root / "grades.csv").read_text(encoding="utf-8")
    for name, seconds in times.items():
        print(f"{name:<32}{seconds:8.1f} s")
    print(f"load average {load['before']:.1f} before, {load['after']:.1f} after")
    print(grades)
    submissions = args.students * len(ASSIGNMENTS)
    result = {
        "machine": machine_description(),
        "students": args.students,
        "submissions": submissions,
        "seconds": {name: round(value, 2) for name, value in times.items()},
        "load_average": {name: round(value, 2) for name, value in load.items()},
        "grades_csv": grades.splitlines(),
    }
    RESULTS.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
