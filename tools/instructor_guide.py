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

The same rule estimates each row of a plan from the ``## `` sections the row names in italics by
the start of their heading (``*1. The claim*``) and the sections whose code shows an explorer the
row names (``widgets.scaling_explorer``); a row must give at least that many minutes.

Run it to check the guide, or to print the counts behind the time estimates::

    python tools/instructor_guide.py                # read the guide; say what is wrong, or summarise it
    python tools/instructor_guide.py counts         # the counts and the estimate of every lesson, a table
    python tools/instructor_guide.py counts --write # ... and put that table into the guide
    python tools/instructor_guide.py plans          # each plan row: its minutes, its estimate, its sections
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

# The fields of a lesson's part, as the guide labels them, in its order.
FIELDS = ("Time", "One idea", "Project", "Misconceptions")
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
_WIDGET_NAME = re.compile(r"\bwidgets\.(?P<name>[a-z_]+)")
_ITALIC = re.compile(r"\*(?P<name>[^*]+)\*")
COUNTS_HEADER = "| lesson | words | code cells | self-check answers | explorers | estimate | time |"


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


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def _counts(number: str, cells: list[dict]) -> LessonCounts:
    """The counts of some cells of lesson ``number``: all of them, or one section's."""
    words = sum(len(_text(cell["source"]).split()) for cell in cells if cell["cell_type"] == "markdown")
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    printed = [
        _text(output.get("text", "") or output.get("data", {}).get("text/plain", ""))
        for cell in code
        for output in cell.get("outputs", [])
    ]
    explorers = [m["name"] for cell in code for m in _WIDGET_CALL.finditer(_text(cell["source"]))]
    return LessonCounts(
        number=number,
        words=words,
        code_cells=len(code),
        answers=sum(out.count("No answer yet") for out in printed),
        explorers=tuple(dict.fromkeys(explorers)),
    )


def count_lesson(notebook: Path) -> LessonCounts:
    """Count what a saved lesson holds: words, code cells, self-check answers and explorers."""
    return _counts(notebook.name[:2], json.loads(notebook.read_text(encoding="utf-8"))["cells"])


def count_sections(notebook: Path) -> dict[str, LessonCounts]:
    """The counts of each ``## `` section of a lesson, keyed by its heading without ``## `` ("" for
    what comes before the first). A Markdown cell is split at its ``## `` lines (outside fenced code);
    a code cell belongs to the section above it. The sections' counts add up to the lesson's."""
    sections: dict[str, list[dict]] = {"": []}
    current = ""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "markdown":
            sections[current].append(cell)
            continue
        part: list[str] = []
        fenced = False
        for line in _text(cell["source"]).splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and line.startswith("## "):
                sections[current].append({"cell_type": "markdown", "source": "\n".join(part)})
                current, part = line[3:], []
                sections.setdefault(current, [])
            part.append(line)
        sections[current].append({"cell_type": "markdown", "source": "\n".join(part)})
    return {heading: _counts(notebook.name[:2], cells) for heading, cells in sections.items()}


def _lesson_path(number: str, notebooks: Path) -> Path:
    found = sorted(notebooks.glob(f"{number}_*.ipynb"))
    if not found:
        raise GuideError(f"no lesson {number} in {notebooks}")
    return found[0]


def step_sections(step: PlanStep, notebooks: Path = NOTEBOOKS) -> list[tuple[str, str]]:
    """The sections a plan row covers, as (lesson, heading): those it names in italics by the start
    of their heading (asterisks in a heading are ignored, as a row cannot nest italics), and those
    whose code shows an explorer it names. An italic name that starts with a small letter is a word
    of the text (*she*), not a section.

    Raises :class:`GuideError` for a section name that no heading of the row's lessons starts with.
    """
    covered: list[tuple[str, str]] = []
    sections = {lesson: count_sections(_lesson_path(lesson, notebooks)) for lesson in step.lessons}
    for match in _ITALIC.finditer(step.activity):
        name = match["name"]
        if not (name[0].isupper() or name[0].isdigit()):
            continue
        found = [
            (lesson, heading)
            for lesson in step.lessons
            for heading in sections[lesson]
            if heading and heading.replace("*", "").startswith(name)
        ]
        if not found:
            raise GuideError(f"a plan row names a section *{name}* that lessons {step.lessons} do not have")
        covered += [pair for pair in found if pair not in covered]
    named = {m["name"] for m in _WIDGET_NAME.finditer(step.activity)}
    for lesson in step.lessons:
        for heading, counts in sections[lesson].items():
            if named & set(counts.explorers) and (lesson, heading) not in covered:
                covered.append((lesson, heading))
    return covered


def step_estimate(step: PlanStep, notebooks: Path = NOTEBOOKS) -> float:
    """Minutes in class for a plan row, by the rule of the lessons' times, over the sections it covers."""
    sections = {lesson: count_sections(_lesson_path(lesson, notebooks)) for lesson in step.lessons}
    return sum(sections[lesson][heading].estimate for lesson, heading in step_sections(step, notebooks))


def counts_table(notebooks: Path = NOTEBOOKS) -> str:
    """The counts and the estimate of every lesson, as the Markdown table of the guide."""
    rows = [COUNTS_HEADER, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
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


def write_counts_table(path: Path = GUIDE_PATH, notebooks: Path = NOTEBOOKS) -> bool:
    """Put the counts table of the lessons in ``notebooks`` into the guide; whether it changed."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if COUNTS_HEADER not in lines:
        raise GuideError(f"{path.name}: no counts table (its header is {COUNTS_HEADER!r})")
    start = lines.index(COUNTS_HEADER)
    end = next(k for k in range(start, len(lines) + 1) if k == len(lines) or not lines[k].startswith("|"))
    new = "\n".join([*lines[:start], counts_table(notebooks), *lines[end:]])
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def plans_table(path: Path = GUIDE_PATH, notebooks: Path = NOTEBOOKS) -> str:
    """Each row of both plans: its minutes, the estimate of the sections it covers, and those sections."""
    rows = ["| plan | minutes | estimate | lessons | sections |", "| --- | ---: | ---: | --- | --- |"]
    for total in (50, 90):
        for step in read_plan(total, path):
            covered = "; ".join(f"{lesson} {heading}" for lesson, heading in step_sections(step, notebooks))
            rows.append(
                f"| {total} | {step.minutes} | {step_estimate(step, notebooks):.1f} "
                f"| {', '.join(step.lessons) or '—'} | {covered} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Check the guide (default), print the counts table (``counts``) or the plans' rows (``plans``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=["check", "counts", "plans"], default="check")
    parser.add_argument("--guide", type=Path, default=GUIDE_PATH)
    parser.add_argument("--write", action="store_true", help="with counts: put the table into the guide")
    args = parser.parse_args(argv)
    try:
        if args.what == "counts":
            print(counts_table())
            if args.write:
                changed = write_counts_table(args.guide)
                print(f"{args.guide}: {'table updated' if changed else 'table already up to date'}")
            return 0
        if args.what == "plans":
            print(plans_table(args.guide))
            return 0
        guides = read_guide(args.guide)
        plans = {total: read_plan(total, args.guide) for total in (50, 90)}
        short = [
            f"{total}-minute plan: a row of {step.minutes} minutes for lessons {', '.join(step.lessons)} "
            f"covers sections estimated at {step_estimate(step):.1f}"
            for total, steps in plans.items()
            for step in steps
            if step.lessons and step.minutes < step_estimate(step)
        ]
        if short:
            raise GuideError("; ".join(short))
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
