"""Each lesson's kernel memory: the peak and the final resident set size after a run top to bottom.

    .venv/bin/python benchmarks/kernel_memory.py                    # every lesson
    .venv/bin/python benchmarks/kernel_memory.py notebooks/13_real_model.ipynb --no-save

Runs each lesson in a fresh ``python3`` kernel (nbclient, the lesson's folder as the working
directory, as ``tools/execute_notebooks.py`` and nbval do), then asks the kernel for its
``VmHWM`` (the peak resident set size since it started) and ``VmRSS`` (what it holds at the end)
from ``/proc/self/status``: Linux only. The lesson is not changed. Writes the lessons' rows into
``results/kernel_memory.json`` unless ``--no-save`` (a run of some lessons keeps the others'
rows, each with the date and machine it was measured on); each lesson's
manifest (``attention_lessons/lNN_slug/lesson.toml``) quotes its peak (``kernel_peak_mib``) and
gives its target (``kernel_target_mib``: 300 MiB, but 1.2 GiB for lesson 16, which holds a
pretrained model's float32 weights, about 540 MB). A classroom hub's memory per student is the
sum of the open lessons' kernels (the instructor's guide, "Memory").
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results" / "kernel_memory.json"

sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))
from machine import machine_description  # noqa: E402  (tools/machine.py)

from attention_lessons.manifest import lessons  # noqa: E402

#: Each lesson's target, MiB, as its manifest gives it (``kernel_target_mib``), by notebook.
TARGETS_MIB = {lesson.notebook: lesson.kernel_target_mib for lesson in lessons()}

READ_STATUS = """
import re as _re
_status = open("/proc/self/status").read()
print(*(int(_re.search(f + r":\\s+(\\d+) kB", _status).group(1)) for f in ("VmHWM", "VmRSS")))
"""


def kernel_memory(path: Path) -> tuple[float, float]:
    """The peak and final resident memory (MiB) of a fresh kernel that ran ``path`` top to bottom."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(READ_STATUS))
    client = NotebookClient(
        notebook, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    text = "".join(o.get("text", "") for o in notebook.cells[-1].outputs if o.output_type == "stream")
    peak_kib, final_kib = (int(v) for v in text.split())
    return peak_kib / 1024, final_kib / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--no-save", action="store_true", help="print only, do not write the results")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    rows = []
    print(f"{'lesson':32s} {'peak MiB':>9s} {'final MiB':>10s}")
    for path in paths:
        peak, final = kernel_memory(path)
        rows.append({"lesson": path.name, "peak_mib": round(peak, 1), "final_mib": round(final, 1)})
        target = TARGETS_MIB[path.name]
        flag = "" if peak < target else f"  OVER {target} MiB"
        print(f"{path.name:32s} {peak:9.1f} {final:10.1f}{flag}", flush=True)
    if not args.no_save:
        # a run of some lessons keeps the others' rows, which keep the date and machine of theirs
        earlier = json.loads(RESULTS.read_text(encoding="utf-8"))
        when = {"date": date.today().isoformat(), "machine": machine_description()}
        if len(rows) < len(earlier["lessons"]):
            rows = [{**row, **when} for row in rows]
            stamp = {"date": earlier["date"], "machine": earlier["machine"]}
            measured = {row["lesson"] for row in rows}
            kept = [{**stamp, **row} for row in earlier["lessons"] if row["lesson"] not in measured]
            rows = sorted([*kept, *rows], key=lambda row: row["lesson"])
        RESULTS.write_text(
            json.dumps(
                {
                    **when,
                    "what": "kernel VmHWM (peak) and VmRSS (final) after running each lesson top to bottom",
                    "targets_mib": TARGETS_MIB,
                    "lessons": rows,
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0 if all(row["peak_mib"] < TARGETS_MIB[row["lesson"]] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
