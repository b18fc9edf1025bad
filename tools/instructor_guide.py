"""Read the instructor's guide, ``docs/instructor_guide.md``, and estimate how long each lesson takes.

The guide is a Markdown page for people; this module reads the parts that tools rely on. Each
lesson has a part of this shape (the slides take their speaker notes from it)::

    ### 04 · Scaling by √d_k
    - **Time:** 35 minutes
    - **One idea:** ...
    - **Project:** ...
    - **Misconceptions:** ...

    #### Where to pause
    - **At "Exact heading text"**: ask ...; listen for ...

An item may go on over several lines, each indented by two spaces. Each walkthrough plan is a
section ``## A 50-minute walkthrough`` whose first table has the minutes in its first column and the
lessons (``04``, ``04, 05``, or ``—``) in its second; a last row with the total in bold is optional.

Run it to check the guide, or to print the counts behind the time estimates::

    python tools/instructor_guide.py            # read the guide; say what is wrong, or summarise it
    python tools/instructor_guide.py counts     # the counts and the estimate of every lesson, a table
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE_PATH = ROOT / "docs" / "instructor_guide.md"
NOTEBOOKS = ROOT / "notebooks"

# The fields of a lesson's part, in the guide's order: the label in the guide -> LessonGuide's name.
FIELDS = {"Time": "minutes", "One idea": "idea", "Project": "project", "Misconceptions": "misconceptions"}
PAUSES_HEADING = "#### Where to pause"

# The time estimate (docs/instructor_guide.md, "How the times were estimated"): minutes per unit.
WORDS_PER_MINUTE = 200  # prose, summarised by the teacher while the class reads along
MINUTES_PER_CODE_CELL = 0.5  # run it, look at what it printed or drew
MINUTES_PER_ANSWER = 2.0  # one answer a self-check waits for: try, run the check, talk about it
MINUTES_PER_EXPLORER = 5.0  # project it, move what the guide says, ask

_LESSON = re.compile(r"### (?P<number>\d\d) · (?P<title>\S.*?)\s*")
_SECTION_END = re.compile(r"#{1,3} ")  # a heading of level 1 to 3 ends a lesson's part
_FIELD = re.compile(r"- \*\*(?P<name>[^*]+?):\*\*\s*(?P<value>.*)")
_PAUSE = re.compile(r'- \*\*At "(?P<heading>.+)"\*\*:\s*(?P<value>.*)')
_TIME = re.compile(r"(?P<minutes>\d+) minutes?")
_PLAN = re.compile(r"## A (?P<minutes>\d+)-minute walkthrough\s*")
_WIDGET_CALL = re.compile(r"\bwidgets\.(?P<name>[a-z_]+)\(")


class GuideError(ValueError):
    """The guide does not have the shape the tools rely on; the message says where and what."""


@dataclass(frozen=True)
class LessonGuide:
    """One lesson's part of the guide."""

    number: str  # "04"
    title: str  # "Scaling by √d_k"
    minutes: int  # the time the lesson needs in class
    idea: str  # its one idea, one sentence (Markdown)
    project: str  # which explorer to project (Markdown), or a sentence saying there is none
    misconceptions: str  # Markdown
    pauses: dict[str, str]  # exact text of a `## ` heading of the lesson (without "## ") -> what to ask there


@dataclass(frozen=True)
class PlanStep:
    """One row of a walkthrough plan."""

    minutes: int
    lessons: tuple[str, ...]  # ("04",), ("01", "02"), or () for a break or the wrap-up
    activity: str  # the rest of the row (Markdown)


@dataclass(frozen=True)
class LessonCounts:
    """What a lesson asks of a class, counted in its notebook."""

    number: str
    words: int  # in the Markdown cells
    code_cells: int
    answers: int  # answers its self-checks wait for ("No answer yet" in the saved outputs)
    explorers: tuple[str, ...]  # the attnlib.widgets functions its code cells call

    @property
    def estimate(self) -> float:
        """Minutes in class, by the rule of the guide's "How the times were estimated"."""
        return (
            self.words / WORDS_PER_MINUTE
            + self.code_cells * MINUTES_PER_CODE_CELL
            + self.answers * MINUTES_PER_ANSWER
            + len(self.explorers) * MINUTES_PER_EXPLORER
        )

    @property
    def rounded(self) -> int:
        """The estimate rounded up to whole five minutes: the guide's **Time:** for this lesson."""
        return 5 * math.ceil(self.estimate / 5)


def _outside_code(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Number and text of every line that is not inside a fenced code block."""
    fenced = False
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def _items(where: str, lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The top-level list items of ``lines``: (line number, text with continuation lines joined)."""
    items: list[tuple[int, list[str]]] = []
    for number, line in lines:
        if line.startswith("- "):
            items.append((number, [line]))
        elif line.startswith("  ") and line.strip() and items:
            items[-1][1].append(line[2:])
        elif line.strip():
            raise GuideError(f"{where}, line {number}: expected a list item '- **...**', found {line!r}")
    return [(number, "\n".join(parts)) for number, parts in items]


def _lesson(path: Path, number: str, title: str, start: int, body: list[tuple[int, str]]) -> LessonGuide:
    """Parse one lesson's part; ``body`` holds its lines after the ### heading."""
    where = f"{path.name}, lesson {number} (line {start})"
    split = next((i for i, (_, line) in enumerate(body) if line.strip() == PAUSES_HEADING), None)
    if split is None:
        raise GuideError(f"{where}: missing the section {PAUSES_HEADING!r}")
    values: dict[str, str] = {}
    for line_number, text in _items(where, body[:split]):
        match = _FIELD.fullmatch(text.split("\n", 1)[0])
        if match is None or match["name"] not in FIELDS:
            known = ", ".join(f"**{name}:**" for name in FIELDS)
            raise GuideError(f"{where}, line {line_number}: unknown field {text!r}; the fields are {known}")
        if match["name"] in values:
            raise GuideError(f"{where}, line {line_number}: field **{match['name']}:** given twice")
        values[match["name"]] = "\n".join([match["value"], *text.split("\n")[1:]]).strip()
    for name in FIELDS:
        if not values.get(name):
            raise GuideError(f"{where}: missing field **{name}:**")
    time = _TIME.match(values["Time"])
    if time is None or int(time["minutes"]) <= 0:
        raise GuideError(f"{where}: **Time:** must start with a number of minutes, like '25 minutes'")
    pauses: dict[str, str] = {}
    for line_number, text in _items(f"{where}, {PAUSES_HEADING!r}", body[split + 1 :]):
        first, *rest = text.split("\n")
        match = _PAUSE.fullmatch(first)
        if match is None:
            raise GuideError(
                f'{where}, line {line_number}: a pause reads - **At "Exact heading"**: what to ask; '
                f"found {first!r}"
            )
        if match["heading"] in pauses:
            raise GuideError(f"{where}, line {line_number}: two pauses at {match['heading']!r}")
        pauses[match["heading"]] = "\n".join([match["value"], *rest]).strip()
        if not pauses[match["heading"]]:
            raise GuideError(f"{where}, line {line_number}: the pause at {match['heading']!r} says nothing")
    if not pauses:
        raise GuideError(f"{where}: {PAUSES_HEADING!r} lists no pause")
    return LessonGuide(
        number=number,
        title=title,
        minutes=int(time["minutes"]),
        idea=values["One idea"],
        project=values["Project"],
        misconceptions=values["Misconceptions"],
        pauses=pauses,
    )


def read_guide(path: Path = GUIDE_PATH) -> dict[str, LessonGuide]:
    """Every lesson's part of the guide, keyed by its number ("00" … "13"), in the guide's order.

    Raises :class:`GuideError` naming the lesson, the line and the missing or malformed field.
    """
    lines = list(_outside_code(path.read_text(encoding="utf-8").splitlines()))
    guides: dict[str, LessonGuide] = {}
    i = 0
    while i < len(lines):
        start, line = lines[i]
        match = _LESSON.fullmatch(line)
        i += 1
        if match is None:
            continue
        end = next((j for j in range(i, len(lines)) if _SECTION_END.match(lines[j][1])), len(lines))
        if match["number"] in guides:
            raise GuideError(f"{path.name}, line {start}: lesson {match['number']} appears twice")
        guides[match["number"]] = _lesson(path, match["number"], match["title"], start, lines[i:end])
        i = end
    if not guides:
        raise GuideError(f"{path.name}: no lesson part found (a heading '### 04 · Title')")
    return guides


def speaker_notes(guide: LessonGuide) -> tuple[str, dict[str, str]]:
    """Speaker notes for a lesson's deck: (notes for its title slide, notes per ``## `` heading)."""

    def labelled(label: str, value: str) -> str:
        # a value that is a list starts on a line of its own, or it would not render as a list
        return f"**{label}:**\n\n{value}" if value.startswith("- ") else f"**{label}:** {value}"

    title = "\n\n".join(
        [
            labelled("Time", f"{guide.minutes} minutes"),
            labelled("One idea", guide.idea),
            labelled("Project", guide.project),
            labelled("Misconceptions", guide.misconceptions),
        ]
    )
    return title, {heading: f"**Pause:** {text}" for heading, text in guide.pauses.items()}


def read_plan(total: int, path: Path = GUIDE_PATH) -> list[PlanStep]:
    """The rows of the guide's ``## A <total>-minute walkthrough`` table.

    Raises :class:`GuideError` if the section or its table is missing, a row is malformed, or a
    bold total row disagrees with the sum of the rows.
    """
    lines = list(_outside_code(path.read_text(encoding="utf-8").splitlines()))
    where = f"{path.name}, the {total}-minute walkthrough"
    headings = [_PLAN.fullmatch(line) for _, line in lines]
    start = next((k for k, m in enumerate(headings) if m and int(m["minutes"]) == total), None)
    if start is None:
        raise GuideError(f"{path.name}: no section '## A {total}-minute walkthrough'")
    steps: list[PlanStep] = []
    stated_total = None
    in_table = False
    for number, line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            if in_table:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not in_table or set(cells[0]) <= set("-: "):  # the header row, then the separator row
            in_table = True
            continue
        if len(cells) < 3:
            raise GuideError(f"{where}, line {number}: a row has minutes | lessons | what happens")
        bold = re.fullmatch(r"\*\*(\d+)\*\*", cells[0])
        if bold:
            stated_total = int(bold[1])
            continue
        if not cells[0].isdigit():
            raise GuideError(
                f"{where}, line {number}: the first column holds whole minutes, not {cells[0]!r}"
            )
        lessons = tuple(re.findall(r"\b\d\d\b", cells[1]))
        if not lessons and cells[1] not in {"—", "-", ""}:
            raise GuideError(f"{where}, line {number}: the lessons column reads like '04' or '04, 05' or '—'")
        steps.append(PlanStep(minutes=int(cells[0]), lessons=lessons, activity=" | ".join(cells[2:])))
    if not steps:
        raise GuideError(f"{where}: no table rows")
    if stated_total is not None and stated_total != sum(step.minutes for step in steps):
        added = sum(step.minutes for step in steps)
        raise GuideError(f"{where}: the rows add up to {added} minutes, the total row says {stated_total}")
    return steps


def count_lesson(notebook: Path) -> LessonCounts:
    """Count what a saved lesson holds: words, code cells, self-check answers and explorers."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]

    def text(value: str | list[str]) -> str:
        return value if isinstance(value, str) else "".join(value)

    words = sum(len(text(cell["source"]).split()) for cell in cells if cell["cell_type"] == "markdown")
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    printed = [
        text(output.get("text", "") or output.get("data", {}).get("text/plain", ""))
        for cell in code
        for output in cell.get("outputs", [])
    ]
    explorers = [m["name"] for cell in code for m in _WIDGET_CALL.finditer(text(cell["source"]))]
    return LessonCounts(
        number=notebook.name[:2],
        words=words,
        code_cells=len(code),
        answers=sum(out.count("No answer yet") for out in printed),
        explorers=tuple(dict.fromkeys(explorers)),
    )


def counts_table(notebooks: Path = NOTEBOOKS) -> str:
    """The counts and the estimate of every lesson, as the Markdown table of the guide."""
    rows = [
        "| lesson | words | code cells | self-check answers | explorers | estimate | time |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    total = 0
    for notebook in sorted(notebooks.glob("[0-9][0-9]_*.ipynb")):
        c = count_lesson(notebook)
        total += c.rounded
        rows.append(
            f"| {c.number} | {c.words:,} | {c.code_cells} | {c.answers} | {len(c.explorers)} "
            f"| {c.estimate:.1f} | {c.rounded} |"
        )
    rows.append(f"| all | | | | | | **{total}** |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Check the guide (default) or print the counts table (``counts``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=["check", "counts"], default="check")
    parser.add_argument("--guide", type=Path, default=GUIDE_PATH)
    args = parser.parse_args(argv)
    if args.what == "counts":
        print(counts_table())
        return 0
    try:
        guides = read_guide(args.guide)
        plans = {total: read_plan(total, args.guide) for total in (50, 90)}
    except GuideError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for guide in guides.values():
        print(f"{guide.number} · {guide.title}: {guide.minutes} min, {len(guide.pauses)} pauses")
    for total, steps in plans.items():
        print(f"{total}-minute plan: {len(steps)} steps, {sum(s.minutes for s in steps)} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
