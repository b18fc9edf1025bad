"""The instructor's guide, ``docs/instructor_guide.md``, against the lessons it describes.

The guide is Markdown for people; the slides take each lesson's part as speaker notes
(``build_slides.lesson_notes``). Every lesson has a part with its time, idea, explorer to project,
misconceptions and at least two pauses; every pause sits at a ``## `` heading that exists in its
lesson, word for word; every explorer the guide tells a teacher to project is one the lesson shows
(its manifest's ``explorers``, which ``tests/lessons/test_contributing.py`` checks against the lesson);
every number a part quotes appears in its lesson; the two walkthrough plans add up and name real
lessons, explorers and sections; the nbgitpuller and Binder links point at this repository and a
real notebook.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest
from build_slides import lesson_notes
from conftest import ROOT
from repository import read as read_repository

from course import manifest

GUIDE = ROOT / "docs" / "instructor_guide.md"
TEXT = GUIDE.read_text(encoding="utf-8")
NOTEBOOKS = ROOT / "notebooks"
REPOSITORY = read_repository()  # repository.toml: the address, the teacher's and the students' branches
MANIFESTS = {lesson.id: lesson for lesson in manifest.lessons()}
LESSONS = {number: lesson.path for number, lesson in MANIFESTS.items()}
FIELDS = ("Time", "One idea", "Project", "Misconceptions")


def _markdown_lines(path: Path) -> list[str]:
    """The lines of a lesson's Markdown cells, without those inside fenced code blocks."""
    lines = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        fenced = False
        for line in cell.source.splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced:
                lines.append(line)
    return lines


def _headings(path: Path) -> list[str]:
    """The ``## `` headings of a lesson, without the ``## ``."""
    return [line[3:] for line in _markdown_lines(path) if line.startswith("## ")]


def _explorers(number: str) -> set[str]:
    """The explorers a lesson shows, as its manifest names them (the widgets.… factories)."""
    return set(MANIFESTS[number].explorers)


def _field(part: str, name: str) -> str:
    """The text of the item ``- **name:** …`` of a lesson's part (up to the next top-level item)."""
    match = re.search(rf"^- \*\*{name}:\*\*(.*?)(?=^- |\Z)", part, flags=re.MULTILINE | re.DOTALL)
    assert match, f"no field **{name}:**"
    return match[1].strip()


def _plan(total: int) -> list[tuple[int, tuple[str, ...], str]]:
    """The rows of the table of the guide's ``## A <total>-minute walkthrough``: (minutes, lessons, what)."""
    section = TEXT.split(f"## A {total}-minute walkthrough\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    return [
        (int(minutes), tuple(re.findall(r"\b\d\d\b", lessons)), what.strip())
        for minutes, lessons, what in rows[1:]  # after the header row; the separator has no "| "
        if minutes.strip().isdigit()
    ]


@pytest.fixture(scope="module")
def notes() -> dict[str, tuple[str, dict[str, str]]]:
    return lesson_notes(TEXT)


def test_every_lesson_has_a_complete_part(notes: dict) -> None:
    assert list(notes) == list(LESSONS), "one part per lesson, in the lessons' order"
    titles = dict(re.findall(r"^### (\d\d) · (.+)$", TEXT, flags=re.MULTILINE))
    for number, (part, pauses) in notes.items():
        assert titles[number] == MANIFESTS[number].title, f"lesson {number}: the title of the lesson"
        for name in FIELDS:
            assert _field(part, name), f"lesson {number}: empty **{name}:** ({manifest.step(4)})"
        assert re.fullmatch(r"\d+ minutes", _field(part, "Time")), f"lesson {number}: **Time:** N minutes"
        assert len(pauses) >= 2, f"lesson {number}: at least two places to pause ({manifest.step(4)})"


def test_every_pause_is_at_a_heading_of_its_lesson(notes: dict) -> None:
    for number, (_part, pauses) in notes.items():
        headings = _headings(LESSONS[number])
        for heading in pauses:
            assert heading in headings, (
                f"lesson {number}: no heading '## {heading}' in {LESSONS[number].name}: {headings}"
            )
        order = [headings.index(heading) for heading in pauses]
        assert order == sorted(order), f"lesson {number}: the pauses follow the lesson's order"


def test_a_pause_that_is_not_one_is_named() -> None:
    broken = TEXT.replace('- **At "1. The claim: Var(q · k) = d_k"**:', "- At 1. The claim:", 1)
    assert broken != TEXT, "the test's anchor is not in the guide"
    with pytest.raises(
        ValueError, match=r"lesson 04: a pause reads - \*\*At \"Heading\"\*\*: .*'- At 1\. The claim:"
    ):
        lesson_notes(broken)


def test_the_explorer_to_project_is_the_lessons_own(notes: dict) -> None:
    for number, (part, _pauses) in notes.items():
        project = _field(part, "Project")
        named = set(re.findall(r"\bwidgets\.([a-z_]+)", project))
        shown = _explorers(number)
        if shown:
            assert named, (
                f"lesson {number} has an explorer ({shown}); its **Project:** names it ({manifest.step(4)})"
            )
            assert named <= shown, (
                f"lesson {number}: the guide names {named - shown}, the lesson shows {shown}"
            )
            widgets = importlib.import_module(f"course.{MANIFESTS[number].folder.name}.widgets")
            for name in named:
                assert callable(getattr(widgets, name, None)), f"{widgets.__name__} has no {name}"
        else:
            assert not named, f"lesson {number} has no explorer, but the guide names {named}"
            assert "no explorer" in project, (
                f"lesson {number}: its **Project:** says 'no explorer' ({manifest.step(4)})"
            )


def test_the_times_are_called_estimates() -> None:
    section = TEXT.split("## How long the lessons take\n", 1)[1].split("\n## ", 1)[0]
    assert "**estimates**, not measurements" in section


@pytest.mark.parametrize("total", [50, 90])
def test_the_plans_add_up_and_name_real_lessons(total: int) -> None:
    steps = _plan(total)
    assert sum(minutes for minutes, _, _ in steps) == total
    assert f"| **{total}** |" in TEXT.split(f"## A {total}-minute walkthrough\n", 1)[1].split("\n## ", 1)[0]
    named = [lesson for _, lessons, _ in steps for lesson in lessons]
    assert named and set(named) <= set(LESSONS), f"unknown lessons in the {total}-minute plan"
    for _minutes, lessons, what in steps:
        explorers = set(re.findall(r"\bwidgets\.([a-z_]+)", what))
        shown = set().union(*(_explorers(lesson) for lesson in lessons))
        assert explorers <= shown, f"{total}-minute plan: {explorers - shown} is not in lessons {lessons}"
        # a section is named in italics by the start of its heading: "*1. The claim*", "*The 2×2 figure*"
        headings = [h.replace("*", "") for lesson in lessons for h in _headings(LESSONS[lesson])]
        for name in re.findall(r"\*([^*]+)\*", what):
            if name[0].isupper() or name[0].isdigit():
                assert any(h.startswith(name) for h in headings), (
                    f"{total}-minute plan: no section '{name}' in lessons {lessons}"
                )


def test_the_nbgitpuller_link_opens_the_first_lesson_of_this_repository() -> None:
    links = re.findall(r"https://[^\s<>()`]+/hub/user-redirect/git-pull\?[^\s<>()`]+", TEXT)
    assert links, "the guide gives an nbgitpuller link"
    for link in links:
        parts = urlsplit(link)
        assert parts.path == "/hub/user-redirect/git-pull"
        query = {key: values[0] for key, values in parse_qs(parts.query, strict_parsing=True).items()}
        assert set(query) == {"repo", "urlpath", "branch"}
        assert "%2F" in parts.query, "the values are URL-encoded"
        assert query["repo"] == REPOSITORY.url
        assert query["branch"] in (REPOSITORY.branch, REPOSITORY.student_branch)
        folder = query["repo"].rstrip("/").split("/")[-1]  # where nbgitpuller clones it
        assert query["urlpath"].startswith(f"lab/tree/{folder}/"), "opens in JupyterLab, in the clone"
        notebook = query["urlpath"].removeprefix(f"lab/tree/{folder}/")
        assert (ROOT / notebook).is_file(), f"{notebook} is not in the repository"
        assert notebook == "notebooks/00_start_here.ipynb"


def test_the_binder_link_is_the_readmes() -> None:
    guide_links = set(re.findall(r"https://mybinder\.org/v2/gh/[^\s<>()`]+", TEXT))
    readme_links = set(
        re.findall(r"https://mybinder\.org/v2/gh/[^\s<>()`]+", (ROOT / "README.md").read_text())
    )
    assert guide_links and guide_links <= readme_links
    branches = (REPOSITORY.branch, REPOSITORY.student_branch)
    assert all(
        any(
            link.startswith(f"{REPOSITORY.binderhub}/v2/gh/{REPOSITORY.slug}/{branch}?")
            for branch in branches
        )
        for link in guide_links
    )


def test_the_binder_image_has_the_nbgitpuller_the_guide_names() -> None:
    pins = [line.strip() for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    assert "nbgitpuller==1.3.0" in pins
    assert "nbgitpuller==1.3.0" in TEXT


def test_the_readme_sends_teachers_to_the_guide_and_the_three_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## For instructors\n", 1)[1].split("\n## ", 1)[0]
    assert "(docs/instructor_guide.md)" in section
    for command in ("make book", "make slides", "make student"):
        assert f"`{command}`" in section, f"the README names {command}"
    assert "nbgitpuller" in section and "JupyterHub" in section
    anchors = re.findall(r"instructor_guide\.md#([a-z0-9-]+)", section)
    headings = re.findall(r"^## (.+)$", TEXT, flags=re.MULTILINE)
    slugs = {re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-") for heading in headings}
    assert set(anchors) <= slugs, f"the README links to {set(anchors) - slugs}, which the guide lacks"


def _notebook_text(path: Path) -> str:
    """Everything a lesson says: its cells' sources and the text of their saved outputs."""
    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(output.get("text", "") or output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_every_number_a_lesson_part_quotes_is_in_the_lesson(notes: dict) -> None:
    """A decimal (0.7311, 2.34e-08) or a long whole number (10,588,160) is quoted as the lesson prints it."""
    number = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?:e-?\d+)?|(?<![\w.])\d{1,3}(?:(?:,|\{,\})\d{3})+")
    for lesson, (part, pauses) in notes.items():
        text = _notebook_text(LESSONS[lesson])
        quoted = number.findall("\n".join([part, *pauses.values()]))
        missing = [q for q in quoted if q not in text and q.replace(",", "{,}") not in text]
        assert not missing, (
            f"lesson {lesson}: the guide quotes {missing}, which {LESSONS[lesson].name} does not show"
        )


def test_the_sizing_section_is_the_classroom_benchmarks() -> None:
    """The guide's sizing tables are those tools/hub/sizing.py reads from benchmarks/results/classroom."""
    from hub import sizing

    section = TEXT.split("## Sizing: a class on one server\n", 1)[1].split("\n## ", 1)[0]
    lessons = sizing.runs()
    assert {"05", "07", "13"} <= set(lessons), "the guide sizes lessons 05, 07 and 13"
    for line in sizing.table() + sizing.measured():
        assert line in section.splitlines(), f"the guide's sizing section lacks the row: {line}"
    for lesson, found in lessons.items():
        size = sizing.sizing(found)
        assert size.memory_for_class_gib < 24, (
            f"lesson {lesson}: the guide says 24 GiB holds a class of {sizing.CLASS_SIZE}"
        )
    assert f"at most {sizing.RUN_ALL_MAX_S:.0f} seconds" in section
    assert f"{sizing.EXPLORER_P95_MAX_MS:.0f} ms" in section


def test_the_totals_are_the_sums_of_the_lessons_times(notes: dict) -> None:
    times = {number: int(_field(part, "Time").split()[0]) for number, (part, _pauses) in notes.items()}
    total = sum(times.values())
    said = re.search(r"take about (\d+) minutes: (.*?)\s+sessions in all", TEXT, re.DOTALL)
    assert said, "the guide gives the lessons' total time, then each part's"
    assert int(said[1]) == total, f"the total is the sum of the lessons' Times: {total}"
    for name in manifest.PARTS:
        ids = [lesson.id for lesson in MANIFESTS.values() if lesson.part == name]
        summed = sum(times[number] for number in ids)
        wanted = rf"part {name} \({ids[0]}–{ids[-1]}\)\s+about {summed}\b"
        where = f"part {name} ({ids[0]}–{ids[-1]})"
        assert re.search(wanted, said[2]), f"{where}: the guide's figure is not its lessons' Times, {summed}"
