"""Each lesson's kernel memory, as measured by benchmarks/kernel_memory.py: every peak under the
target, and the instructor's guide quoting the measured numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = json.loads((ROOT / "benchmarks" / "results" / "kernel_memory.json").read_text(encoding="utf-8"))
PEAKS = {row["lesson"][:2]: row["peak_mib"] for row in RESULTS["lessons"]}
GUIDE = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")


def test_every_lesson_is_measured():
    lessons = {path.name[:2] for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    assert lessons == set(PEAKS)


def test_every_measured_lesson_peaks_under_the_target():
    over = {lesson: peak for lesson, peak in PEAKS.items() if peak >= RESULTS["target_mib"]}
    assert PEAKS and not over


def test_the_guide_quotes_the_measured_peaks():
    text = " ".join(GUIDE.split())  # one line, whatever the wrapping
    part_one = [PEAKS[f"{i:02d}"] for i in range(9)]
    part_two = [PEAKS[f"{i:02d}"] for i in range(9, 13)]
    expected = (
        f"lessons 00 to 08 peak between {min(part_one):.0f} and {max(part_one):.0f} MiB, "
        f"lessons 09 to 12 between {min(part_two):.0f} and {max(part_two):.0f} MiB, "
        f"lesson 13, which holds the model, at {PEAKS['13']:.0f} MiB, lesson 14 at {PEAKS['14']:.0f} MiB, "
        f"and lesson 15 at {PEAKS['15']:.0f} MiB"
    )
    assert expected in text
    plan = sum(PEAKS[f"{i:02d}"] for i in range(8)) / 1024  # the 50-minute plan: lessons 00 to 07
    assert re.search(rf"all run, hold about {plan:.1f} GiB \(the sum of their peaks\)", text)
