"""How many students one server holds, read from the classroom benchmark's results.

    python tools/hub/sizing.py      # the table of the instructor's guide, "Sizing"

``benchmarks/classroom.py`` writes one file per lesson and class size,
``benchmarks/results/classroom/<lesson>-n<N>.json``. A class size *holds* when every student's
lesson ran without an error, the 95th percentile of the run-all times is at most
``RUN_ALL_MAX_S``, and every student's explorer p95 is at most ``EXPLORER_P95_MAX_MS``; a lesson's
capacity is the largest class size that holds with every smaller size measured holding too.
The guide's numbers are this module's (``tests/contracts/test_instructor_guide.py`` checks them).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "classroom"

#: "Run All" at the start of a lesson: a class waits at most two minutes (the teacher's
#: introduction) before everyone's figures and explorers are there.
RUN_ALL_MAX_S = 120.0
#: An explorer "responds while dragging" when its kernel answers a move within a quarter second
#: (the front end redraws at once from its mirror; the kernel's answer is what lags).
EXPLORER_P95_MAX_MS = 250.0
#: The class the guide sizes for.
CLASS_SIZE = 40


@dataclass(frozen=True)
class Run:
    """One benchmark run: a lesson, N students at once, what they measured."""

    lesson: str
    n: int
    run_all_p95_s: float
    run_all_p50_s: float
    explorer_p95_ms: float  # the worst student's p95
    mib_per_student: float  # median of the kernel's peak plus the student's server
    errors: int
    load: float  # the machine's mean 1-minute load average during the run

    @property
    def holds(self) -> bool:
        """Whether this class size is within both thresholds, without errors."""
        return (
            self.errors == 0
            and self.run_all_p95_s <= RUN_ALL_MAX_S
            and self.explorer_p95_ms <= EXPLORER_P95_MAX_MS
        )


def read_run(path: Path) -> Run:
    """A results file of ``benchmarks/classroom.py`` as a :class:`Run`."""
    result = json.loads(path.read_text(encoding="utf-8"))
    rows = result["students"]
    errors = sum(len(row["errors"]) for row in rows)
    complete = [row for row in rows if row["run_all_s"] is not None and row["explorer_p95_ms"] is not None]
    if len(complete) < len(rows):
        errors = max(errors, 1)
    run_all = [row["run_all_s"] for row in complete] or [math.inf]
    memory = [row["kernel_mib"] + row["server_mib"] for row in complete] or [math.nan]
    samples = result["machine"]["samples"]
    return Run(
        lesson=result["lesson"],
        n=result["n"],
        run_all_p95_s=float(np.percentile(run_all, 95)),
        run_all_p50_s=float(np.percentile(run_all, 50)),
        explorer_p95_ms=max((row["explorer_p95_ms"] for row in complete), default=math.inf),
        mib_per_student=float(np.median(memory)),
        errors=errors,
        load=float(np.mean([s["load1"] for s in samples])) if samples else math.nan,
    )


def runs(folder: Path = RESULTS) -> dict[str, list[Run]]:
    """Every run, by lesson, in order of class size."""
    by_lesson: dict[str, list[Run]] = {}
    for path in sorted(folder.glob("[0-9][0-9]-n[0-9][0-9].json")):
        run = read_run(path)
        by_lesson.setdefault(run.lesson, []).append(run)
    return {lesson: sorted(found, key=lambda r: r.n) for lesson, found in by_lesson.items()}


@dataclass(frozen=True)
class Sizing:
    """What one lesson's runs say: students per server, memory, and servers for a class."""

    lesson: str
    students: int  # the largest class size that holds (0: not even one)
    first_over: int | None  # the smallest size measured that does not hold
    mib_per_student: float
    servers_for_class: int | None  # 2-core servers for CLASS_SIZE students (None: not even one holds)
    memory_for_class_gib: float  # CLASS_SIZE students' memory, GiB


def sizing(lesson_runs: list[Run]) -> Sizing:
    """The capacity of one lesson's runs (in order of class size)."""
    students, first_over = 0, None
    for run in lesson_runs:
        if not run.holds:
            first_over = run.n
            break
        students = run.n
    memory = [run.mib_per_student for run in lesson_runs if not math.isnan(run.mib_per_student)]
    mib = float(np.median(memory))
    return Sizing(
        lesson=lesson_runs[0].lesson,
        students=students,
        first_over=first_over,
        mib_per_student=mib,
        servers_for_class=math.ceil(CLASS_SIZE / students) if students else None,
        memory_for_class_gib=CLASS_SIZE * mib / 1024,
    )


def table(folder: Path = RESULTS) -> list[str]:
    """The guide's sizing table, as Markdown rows (header first)."""
    lines = [
        "| lesson | students per 2-core server | first size over | memory per student | "
        f"a class of {CLASS_SIZE}: servers | a class of {CLASS_SIZE}: memory |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for lesson, found in runs(folder).items():
        size = sizing(found)
        over = str(size.first_over) if size.first_over else f"none up to {found[-1].n}"
        servers = str(size.servers_for_class) if size.servers_for_class else "not measured: 1 is over"
        lines.append(
            f"| {lesson} | {size.students} | {over} | {size.mib_per_student:.0f} MiB | "
            f"{servers} | {size.memory_for_class_gib:.1f} GiB |"
        )
    return lines


def measured(folder: Path = RESULTS) -> list[str]:
    """Every run as a Markdown row: N, run-all p50/p95, explorer p95, memory, errors, load."""
    lines = [
        "| lesson | N | run-all p50 | run-all p95 | explorer p95 | memory per student | errors | load |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for lesson, found in runs(folder).items():
        for run in found:
            lines.append(
                f"| {lesson} | {run.n} | {run.run_all_p50_s:.0f} s | {run.run_all_p95_s:.0f} s | "
                f"{run.explorer_p95_ms:.0f} ms | {run.mib_per_student:.0f} MiB | {run.errors} | "
                f"{run.load:.1f} |"
            )
    return lines


if __name__ == "__main__":
    print("\n".join(table()))
    print()
    print("\n".join(measured()))
