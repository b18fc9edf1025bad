"""Each lesson's kernel memory, as measured by benchmarks/kernel_memory.py: every peak under its
manifest's target, each manifest quoting its measured peak, and the instructor's guide quoting them."""

from __future__ import annotations

import json
import re

from conftest import ROOT

from attention_lessons.manifest import lessons

RESULTS = json.loads((ROOT / "benchmarks" / "results" / "kernel_memory.json").read_text(encoding="utf-8"))
MEASURED = {row["lesson"]: row["peak_mib"] for row in RESULTS["lessons"]}
PEAKS = {lesson.id: lesson.kernel_peak_mib for lesson in lessons()}
GUIDE = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
#: The guide's "Memory" paragraph, on one line whatever the wrapping.
MEMORY = " ".join(GUIDE.split("**Memory.**", 1)[1].split("\n\n", 1)[0].split())
#: A group of lessons in it: "lessons 00 to 08 [peak] between 134 and 166 MiB", "lesson 13[, …,] at 294 MiB".
GROUP = re.compile(
    r"lessons (\d\d) to (\d\d) (?:peak )?between (\d+) and (\d+) MiB|lesson (\d\d)(?:, [^,]+,)? at (\d+) MiB"
)


def test_every_manifest_quotes_the_measured_peak() -> None:
    for lesson in lessons():
        assert lesson.notebook in MEASURED, (
            f"{lesson.notebook} is not measured: benchmarks/kernel_memory.py notebooks/{lesson.notebook}"
        )
        assert lesson.kernel_peak_mib == MEASURED[lesson.notebook], (
            f"{lesson.folder / 'lesson.toml'}: kernel_peak_mib is {lesson.kernel_peak_mib}, "
            f"benchmarks/results/kernel_memory.json measured {MEASURED[lesson.notebook]}"
        )
    assert set(MEASURED) == {lesson.notebook for lesson in lessons()}, "results of lessons that are gone"


def test_every_lesson_peaks_under_its_target() -> None:
    """Each lesson's target is its manifest's ``kernel_target_mib`` (300 MiB unless it says more)."""
    over = {
        lesson.id: lesson.kernel_peak_mib
        for lesson in lessons()
        if lesson.kernel_peak_mib >= lesson.kernel_target_mib
    }
    assert PEAKS and not over, f"kernels over their manifest's kernel_target_mib: {over}"


def _groups(text: str) -> list[tuple[list[str], list[float]]]:
    """The groups of lessons that ``text`` quotes a memory for: (their numbers, the MiB it quotes)."""
    groups = []
    for match in GROUP.finditer(text):
        if match[1]:
            numbers = [f"{n:02d}" for n in range(int(match[1]), int(match[2]) + 1)]
            groups.append((numbers, [float(match[3]), float(match[4])]))
        else:
            groups.append(([match[5]], [float(match[6])]))
    return groups


def test_the_groups_of_the_guide_are_read() -> None:
    text = "lessons 00 to 02 peak between 1 and 3 MiB, lesson 03, which holds X, at 4 MiB, lesson 04 at 5 MiB"
    assert _groups(text) == [(["00", "01", "02"], [1.0, 3.0]), (["03"], [4.0]), (["04"], [5.0])]


def test_the_guide_quotes_the_measured_peaks() -> None:
    groups = _groups(MEMORY)
    quoted = [number for numbers, _ in groups for number in numbers]
    assert sorted(quoted) == sorted(PEAKS), (
        f"the Memory paragraph of docs/instructor_guide.md quotes lessons {quoted}: each lesson once"
    )
    for numbers, mib in groups:
        peaks = [PEAKS[number] for number in numbers]
        expected = [min(peaks), max(peaks)] if len(mib) == 2 else peaks
        assert mib == [round(peak) for peak in expected], (
            f"the guide quotes {mib} MiB for lessons {numbers}; their manifests say {peaks}"
        )


def test_the_guide_sums_the_peaks_of_the_50_minute_plan() -> None:
    plan = GUIDE.split("## A 50-minute walkthrough\n", 1)[1].split("\n## ", 1)[0]
    named = {
        number
        for line in plan.splitlines()
        if line.startswith("| ")
        for number in re.findall(r"\b\d\d\b", line.split("|")[2])
    }
    assert named, "the 50-minute plan names its lessons"
    total = sum(PEAKS[number] for number in named) / 1024
    assert re.search(rf"all run, hold about {total:.1f} GiB \(the sum of their peaks\)", MEMORY)
