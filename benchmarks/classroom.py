"""A class on one server: N simulated students on the hub of ``make hub``, all on the same lesson.

    .venv/bin/python benchmarks/classroom.py --students 4 --lesson 05 --json results/classroom/05-n04.json
    .venv/bin/python benchmarks/classroom.py --students 1 --lesson 13 --explorer-seconds 10

Starts the classroom hub (``tools/hub/jupyterhub_config.py``) on free 127.0.0.1 ports, with the
lessons in a local bare git repository (the project's committed files, served by ``git daemon`` on
127.0.0.1), then every student, at once, in a thread of their own: logs in through the login form
with their own password, starts a server, follows the
nbgitpuller link, opens the lesson (a session and kernel, as JupyterLab does), runs it top to
bottom over the kernel's websocket, then moves the lesson's explorer once a second for
``--explorer-seconds`` (a ``comm_msg`` update, as the widget's front end sends on a move), timing
each move until the kernel is idle again. Per student: ``server_s`` (asking for the server to
ready), ``run_all_s``, ``explorer_p50_ms``/``explorer_p95_ms``, ``kernel_mib`` (the kernel's peak
resident memory, VmHWM), ``server_mib`` (the student's jupyter server), ``errors``. The machine
(CPU, memory, load average) is sampled every second. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from hub.client import HubUser, Kernel  # noqa: E402
from hub.local import GitServer, LocalHub, lessons_repository, open_folder, students_environment  # noqa: E402
from machine import floating_point_path  # noqa: E402  (tools/machine.py)

FOLDER = "attention-lessons"  # where the link clones the lessons, named after the repository


def _nudge(values: list[float], rng: random.Random, low: float, high: float, step: float) -> list[float]:
    """``values`` with one entry moved by a few slider steps, within ``[low, high]``."""
    moved = list(values)
    i = rng.randrange(len(moved))
    moved[i] = round(min(high, max(low, moved[i] + rng.choice([-3, -2, -1, 1, 2, 3]) * step)), 6)
    return moved


def _move_scores(state: dict[str, Any], rng: random.Random, count: int) -> dict[str, Any]:
    """Lesson 05's softmax explorer: drag one score's slider."""
    state["scores"] = _nudge(state["scores"], rng, state["value_min"], state["value_max"], state["step"])
    return {"scores": state["scores"]}


def _move_embedding(state: dict[str, Any], rng: random.Random, count: int) -> dict[str, Any]:
    """Lesson 07's playground: drag one token's embedding (one coordinate)."""
    rows = state["embeddings"]
    row = rng.randrange(len(rows))
    rows[row] = _nudge(rows[row], rng, state["value_min"], state["value_max"], state["step"])
    return {"embeddings": rows}


def _move_head(state: dict[str, Any], rng: random.Random, count: int) -> dict[str, Any]:
    """Lesson 13's head explorer (and lesson 16's answer explorer, the same with SmolLM2): pick a
    layer and head; every tenth move, type a sentence (a prompt, which SmolLM2 answers) and run it.

    The sentences (*run it*, a button, not a drag) are timed apart from the drags.
    """
    if count % 10 == 9:
        return {"text": f"The student moved the explorer {count + 1} times today."}
    return {"layer": rng.randrange(state["n_layers"]), "head": rng.randrange(state["n_heads"])}


#: Each lesson's explorer: a trait it has (to find it among the lesson's widgets), and a move.
EXPLORERS: dict[str, tuple[str, Callable[[dict[str, Any], random.Random, int], dict[str, Any]]]] = {
    "05": ("scores", _move_scores),
    "07": ("embeddings", _move_embedding),
    "13": ("n_heads", _move_head),
    "16": ("mark_sink", _move_head),
}


def lesson_path(number: str) -> str:
    """The lesson's path inside the students' clone, e.g. ``attention-lessons/notebooks/05_softmax.ipynb``."""
    found = sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"--lesson {number}: no lesson notebooks/{number}_*.ipynb")
    return f"{FOLDER}/notebooks/{found[0].name}"


def _kernel_process(kernel_id: str) -> psutil.Process:
    for proc in psutil.process_iter(["cmdline"]):
        if any(f"kernel-{kernel_id}.json" in part for part in proc.info["cmdline"] or []):
            return proc
    raise LookupError(f"no process for kernel {kernel_id}")


def _peak_mib(proc: psutil.Process) -> float:
    """A process's peak resident memory (VmHWM, /proc), MiB."""
    status = Path(f"/proc/{proc.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024


def _server_mib(hub: LocalHub, name: str) -> float:
    home = str(hub.state / "homes" / name)
    for proc in hub.processes():
        try:
            if "jupyterhub.singleuser" in " ".join(proc.cmdline()) and proc.environ().get("HOME") == home:
                return proc.memory_info().rss / 2**20
        except psutil.Error:
            continue
    raise LookupError(f"no server process for {name}")


def run_lesson(kernel: Kernel, notebook: dict[str, Any]) -> list[str]:
    """Run every code cell of ``notebook`` in order; the errors, one line each."""
    errors = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            reply = kernel.execute(cell["source"])
            if reply.status != "ok":
                errors.append(f"cell {index}: {reply.error}")
    return errors


def find_explorer(kernel: Kernel, trait: str) -> tuple[str, dict[str, Any]]:
    """The comm id and opening state of the lesson's explorer (the widget that has ``trait``)."""
    for comm_id, state in kernel.widgets.items():
        if trait in state:
            return comm_id, state
    raise LookupError(f"the lesson opened no widget with a trait {trait!r}")


def student(hub: LocalHub, name: str, repo: str, lesson: str, seconds: float, seed: int) -> dict[str, Any]:
    """One student's whole session; the measurements (missing ones None) and the errors."""
    row: dict[str, Any] = {"name": name, "server_s": None, "pull_s": None, "run_all_s": None}
    row |= {"explorer_p50_ms": None, "explorer_p95_ms": None, "explorer_moves": 0}
    row |= {"kernel_mib": None, "server_mib": None, "errors": []}
    path = lesson_path(lesson)
    try:
        user = HubUser(hub.url, name)
        user.log_in(hub.passwords[name])
        row["server_s"] = round(user.start_server(), 2)
        start = time.perf_counter()
        user.pull(repo, urlpath=f"lab/tree/{path}")
        row["pull_s"] = round(time.perf_counter() - start, 2)
        notebook = user.contents(path)["content"]
        kernel = user.open_notebook(path)
        start = time.perf_counter()
        row["errors"] += run_lesson(kernel, notebook)
        row["run_all_s"] = round(time.perf_counter() - start, 2)
        trait, move = EXPLORERS[lesson]
        comm_id, state = find_explorer(kernel, trait)
        rng, times, runs = random.Random(seed), [], []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            tick = time.monotonic()
            update = move(state, rng, len(times) + len(runs))
            seconds_taken = kernel.comm_update(comm_id, update).seconds
            (runs if "text" in update else times).append(seconds_taken * 1000)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
        row["explorer_moves"] = len(times)
        if times:
            row["explorer_p50_ms"] = round(float(np.percentile(times, 50)), 1)
            row["explorer_p95_ms"] = round(float(np.percentile(times, 95)), 1)
        if runs:  # lesson 13's typed sentences, a button press rather than a drag: timed apart
            row["sentence_runs"] = len(runs)
            row["sentence_max_ms"] = round(max(runs), 1)
        row["kernel_mib"] = round(_peak_mib(_kernel_process(kernel.id)), 1)
        row["server_mib"] = round(_server_mib(hub, name), 1)
        kernel.close()
    except Exception as exc:  # a student's failure is a result, recorded; the others go on
        row["errors"].append(f"{type(exc).__name__}: {exc}")
    return row


class Sampler(threading.Thread):
    """The machine's CPU, memory and load, and the hub's processes' memory, every ``interval`` s."""

    def __init__(self, hub: LocalHub, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.hub, self.interval = hub, interval
        self.samples: list[dict[str, float]] = []
        self.done = threading.Event()
        self.start_time = time.monotonic()

    def run(self) -> None:
        psutil.cpu_percent()
        while not self.done.wait(self.interval):
            rss = 0
            for proc in self.hub.processes():
                try:
                    rss += proc.memory_info().rss
                except psutil.Error:
                    continue
            self.samples.append(
                {
                    "t": round(time.monotonic() - self.start_time, 1),
                    "cpu_percent": psutil.cpu_percent(),
                    "used_mib": round(psutil.virtual_memory().used / 2**20),
                    "hub_rss_mib": round(rss / 2**20),
                    "load1": os.getloadavg()[0],
                }
            )


def classroom(students: int, lesson: str, seconds: float) -> dict[str, Any]:
    """Run the class; the results as ``--json`` writes them."""
    lesson_path(lesson)
    names = [f"student{i:02d}" for i in range(1, students + 1)]
    tmp = open_folder("classroom-")  # the students' system users reach their homes
    github = None
    try:
        bare, _work = lessons_repository(tmp / "repo")
        github = GitServer(bare.parent)  # the lessons, as a hub clones them from GitHub
        hub = LocalHub(tmp / "hub", students=students, environment=students_environment(tmp))
        load_before = os.getloadavg()
        hub.start()
        sampler = Sampler(hub)
        sampler.start()
        try:
            with ThreadPoolExecutor(max_workers=students) as pool:
                futures = [
                    pool.submit(student, hub, name, github.url(bare.name), lesson, seconds, i)
                    for i, name in enumerate(names)
                ]
                rows = [future.result() for future in futures]
        finally:
            sampler.done.set()
            sampler.join()
            hub.close()
    finally:
        if github:
            github.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "lesson": lesson,
        "n": students,
        "explorer_seconds": seconds,
        "students": rows,
        "machine": {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "cpus": psutil.cpu_count(),
            "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "platform": platform.platform(),
            **floating_point_path(),
            "python": platform.python_version(),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "samples": sampler.samples,
        },
    }


def summary(result: dict[str, Any]) -> str:
    """One line: N, run-all p50/p95, explorer p95 (worst student), memory per student, errors."""
    rows = result["students"]
    run_all = [r["run_all_s"] for r in rows if r["run_all_s"] is not None]
    p95s = [r["explorer_p95_ms"] for r in rows if r["explorer_p95_ms"] is not None]
    mib = [r["kernel_mib"] + r["server_mib"] for r in rows if r["kernel_mib"] and r["server_mib"]]
    errors = sum(len(r["errors"]) for r in rows)
    cell = lambda values, q: f"{np.percentile(values, q):8.1f}" if values else f"{'-':>8s}"  # noqa: E731
    return (
        f"{result['lesson']:>6s} {result['n']:3d} {cell(run_all, 50)} {cell(run_all, 95)} "
        f"{(f'{max(p95s):10.0f}' if p95s else f'{chr(45):>10s}')} {cell(mib, 50)} {errors:6d}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, required=True, help="how many students, at once")
    parser.add_argument("--lesson", required=True, choices=sorted(EXPLORERS), help="the lesson they all run")
    parser.add_argument(
        "--explorer-seconds", type=float, default=60.0, help="how long each moves the explorer"
    )
    parser.add_argument("--json", type=Path, help="write the results there")
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error(f"--students must be at least 1, got {args.students}")
    result = classroom(args.students, args.lesson, args.explorer_seconds)
    print("lesson   N  run-all p50  p95 s  explorer p95 ms  MiB/student  errors")
    print(summary(result))
    for row in result["students"]:
        for error in row["errors"]:
            print(f"{row['name']}: {error}", file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
