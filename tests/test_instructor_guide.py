"""The instructor's guide, ``docs/instructor_guide.md``, against the lessons it describes.

Every lesson has a complete part; every pause sits at a ``## `` heading that exists in its lesson,
word for word; every explorer the guide tells a teacher to project is one the lesson shows; the
times follow the stated estimate; the two walkthrough plans add up and name real lessons; the
nbgitpuller and Binder links point at this repository and a real notebook; and the parser of
``tools/instructor_guide.py``, which the slides rely on, says clearly what is wrong with a broken
guide.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "instructor_guide.md"
NOTEBOOKS = ROOT / "notebooks"
REPOSITORY = "https://github.com/attention-lessons/attention-lessons"
LESSONS = {path.name[:2]: path for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}


def _load_tool() -> ModuleType:
    """tools/instructor_guide.py as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("instructor_guide", ROOT / "tools" / "instructor_guide.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


tool = _load_tool()


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


def _title(path: Path) -> str:
    """A lesson's title: its ``# NN · Title`` heading without the number."""
    first = next(line for line in _markdown_lines(path) if line.startswith("# "))
    return first.split(" · ", 1)[1]


def _explorers(path: Path) -> set[str]:
    """The attnlib.widgets functions a lesson's code cells call."""
    cells = nbformat.read(path, as_version=4).cells
    return {
        match[1]
        for cell in cells
        if cell.cell_type == "code"
        for match in re.finditer(r"\bwidgets\.([a-z_]+)\(", cell.source)
    }


@pytest.fixture(scope="module")
def guides() -> dict:
    return tool.read_guide(GUIDE)


def test_every_lesson_has_a_complete_part(guides: dict) -> None:
    assert len(LESSONS) == 14
    assert list(guides) == list(LESSONS), "one part per lesson, in the lessons' order"
    for number, guide in guides.items():
        assert guide.number == number
        assert guide.title == _title(LESSONS[number]), f"lesson {number}: the title of the notebook"
        assert guide.minutes > 0
        for field in ("idea", "project", "misconceptions"):
            assert getattr(guide, field).strip(), f"lesson {number}: empty {field}"
        assert len(guide.pauses) >= 2, f"lesson {number}: at least two places to pause"


def test_every_pause_is_at_a_heading_of_its_lesson(guides: dict) -> None:
    for number, guide in guides.items():
        headings = _headings(LESSONS[number])
        for heading in guide.pauses:
            assert heading in headings, (
                f"lesson {number}: no heading '## {heading}' in {LESSONS[number].name}: {headings}"
            )


def test_the_explorer_to_project_is_the_lessons_own(guides: dict) -> None:
    from attnlib import widgets

    for number, guide in guides.items():
        named = set(re.findall(r"\bwidgets\.([a-z_]+)", guide.project))
        shown = _explorers(LESSONS[number])
        if shown:
            assert named, f"lesson {number} has an explorer ({shown}); the guide must name it"
            assert named <= shown, (
                f"lesson {number}: the guide names {named - shown}, the lesson shows {shown}"
            )
            for name in named:
                assert callable(getattr(widgets, name, None)), f"attnlib.widgets has no {name}"
        else:
            assert not named, f"lesson {number} has no explorer, but the guide names {named}"
            assert "no explorer" in guide.project, f"lesson {number}: say that there is no explorer"


def test_times_follow_the_stated_estimate(guides: dict) -> None:
    """Each time is the estimate of its counts, give or take five minutes (lessons change a little)."""
    lines = GUIDE.read_text(encoding="utf-8").splitlines()
    start = lines.index("| lesson | words | code cells | self-check answers | explorers | estimate | time |")
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[start + 2 : start + 16]]
    table = {row[0]: row for row in rows}
    for number, guide in guides.items():
        counts = tool.count_lesson(LESSONS[number])
        assert abs(guide.minutes - counts.estimate) <= 5, (
            f"lesson {number}: {guide.minutes} minutes, but its counts give {counts.estimate:.1f}"
        )
        words, _, answers, explorers, _, time = table[number][1:]
        assert int(time) == guide.minutes, f"lesson {number}: the table and the lesson's part disagree"
        assert abs(int(words.replace(",", "")) - counts.words) <= 0.05 * counts.words, (
            f"lesson {number}: words"
        )
        assert (int(answers), int(explorers)) == (counts.answers, len(counts.explorers)), number


@pytest.mark.parametrize("total", [50, 90])
def test_the_plans_add_up_and_name_real_lessons(total: int) -> None:
    steps = tool.read_plan(total, GUIDE)
    assert sum(step.minutes for step in steps) == total
    assert all(step.minutes > 0 for step in steps)
    named = [lesson for step in steps for lesson in step.lessons]
    assert named and set(named) <= set(LESSONS), f"unknown lessons in the {total}-minute plan"
    for step in steps:
        explorers = set(re.findall(r"\bwidgets\.([a-z_]+)", step.activity))
        shown = set().union(*(_explorers(LESSONS[lesson]) for lesson in step.lessons))
        assert explorers <= shown, (
            f"{total}-minute plan: {explorers - shown} is not in lessons {step.lessons}"
        )


def test_the_nbgitpuller_link_opens_the_first_lesson_of_this_repository() -> None:
    links = re.findall(r"https://[^\s<>()`]+/hub/user-redirect/git-pull\?[^\s<>()`]+", GUIDE.read_text())
    assert links, "the guide gives an nbgitpuller link"
    for link in links:
        parts = urlsplit(link)
        assert parts.path == "/hub/user-redirect/git-pull"
        query = {key: values[0] for key, values in parse_qs(parts.query, strict_parsing=True).items()}
        assert set(query) == {"repo", "urlpath", "branch"}
        assert "%2F" in parts.query, "the values are URL-encoded"
        assert query["repo"] == REPOSITORY and query["branch"] == "main"
        folder = query["repo"].rstrip("/").split("/")[-1]  # where nbgitpuller clones it
        assert query["urlpath"].startswith(f"lab/tree/{folder}/"), "opens in JupyterLab, in the clone"
        notebook = query["urlpath"].removeprefix(f"lab/tree/{folder}/")
        assert (ROOT / notebook).is_file(), f"{notebook} is not in the repository"
        assert notebook == "notebooks/00_start_here.ipynb"


def test_the_binder_link_is_the_readmes() -> None:
    guide_links = set(re.findall(r"https://mybinder\.org/v2/gh/[^\s<>()`]+", GUIDE.read_text()))
    readme_links = set(
        re.findall(r"https://mybinder\.org/v2/gh/[^\s<>()`]+", (ROOT / "README.md").read_text())
    )
    assert guide_links and guide_links <= readme_links
    assert all(
        link.startswith("https://mybinder.org/v2/gh/attention-lessons/attention-lessons/main?")
        for link in guide_links
    )


def test_the_binder_image_has_the_nbgitpuller_the_guide_names() -> None:
    pins = [line.strip() for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    assert "nbgitpuller==1.3.0" in pins
    assert "nbgitpuller==1.3.0" in GUIDE.read_text()


def test_speaker_notes_carry_the_lesson_part(guides: dict) -> None:
    guide = guides["04"]
    title, notes = tool.speaker_notes(guide)
    assert "**Time:** 35 minutes" in title and guide.idea in title and guide.misconceptions in title
    assert "**Misconceptions:**\n\n- " in title, "a list starts on its own line"
    assert set(notes) == set(guide.pauses)
    assert all(guide.pauses[heading] in note for heading, note in notes.items())


def _broken(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    text = GUIDE.read_text(encoding="utf-8")
    assert old in text, f"the test's anchor {old!r} is not in the guide"
    path = tmp_path / "instructor_guide.md"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("- **Time:** 35 minutes\n- **One idea:** For components", "- **One idea:** For components",
         r"lesson 04 \(line \d+\): missing field \*\*Time:\*\*"),
        ("- **Time:** 35 minutes", "- **Time:** a while",
         r"lesson 04 .*\*\*Time:\*\* must start with a number"),
        ("- **Project:** `widgets.scaling_explorer`", "- **Projector:** `widgets.scaling_explorer`",
         r"lesson 04 .*unknown field"),
        ("- **Misconceptions:**\n  - *\"Divide by",
         "- **Misconceptions:**\n- **Misconceptions:**\n  - *\"Divide by",
         r"lesson 04 .*given twice"),
        ("### 04 · Scaling by √d_k\n", "### 04 · Scaling by √d_k\nSome prose.\n",
         r"lesson 04 .*expected a list item"),
        ("#### Where to pause\n- **At \"1. The claim", "#### Pauses\n- **At \"1. The claim",
         r"lesson 04 .*missing the section '#### Where to pause'"),
        ("- **At \"1. The claim: Var(q · k) = d_k\"**:", "- At 1. The claim:", r"lesson 04 .*a pause reads"),
        ("### 05 · Softmax, row by row", "### 04 · Softmax, row by row", r"lesson 04 appears twice"),
    ],
)  # fmt: skip
def test_a_broken_guide_is_named_precisely(tmp_path: Path, old: str, new: str, message: str) -> None:
    with pytest.raises(tool.GuideError, match=message):
        tool.read_guide(_broken(tmp_path, old, new))


def test_a_broken_plan_is_named_precisely(tmp_path: Path) -> None:
    with pytest.raises(tool.GuideError, match=r"50-minute walkthrough: the rows add up to 51 minutes"):
        tool.read_plan(
            50, _broken(tmp_path, "| 2 | — | the summary of lesson 07", "| 3 | — | the summary of lesson 07")
        )
    with pytest.raises(tool.GuideError, match=r"no section '## A 45-minute walkthrough'"):
        tool.read_plan(45, GUIDE)
    with pytest.raises(tool.GuideError, match=r"the lessons column"):
        tool.read_plan(90, _broken(tmp_path, "| 5 | — | break |", "| 5 | a break | break |"))


def test_the_guide_checks_clean_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool.main(["--guide", str(GUIDE)]) == 0
    assert "50-minute plan" in capsys.readouterr().out


def test_the_readme_sends_teachers_to_the_guide_and_the_three_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## For instructors\n", 1)[1].split("\n## ", 1)[0]
    assert "(docs/instructor_guide.md)" in section
    for command in ("make book", "make slides", "make student"):
        assert f"`{command}`" in section, f"the README names {command}"
    assert "nbgitpuller" in section and "JupyterHub" in section
    anchors = re.findall(r"instructor_guide\.md#([a-z0-9-]+)", section)
    headings = re.findall(r"^## (.+)$", GUIDE.read_text(encoding="utf-8"), flags=re.MULTILINE)
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


def test_every_number_a_lesson_part_quotes_is_in_the_lesson(guides: dict) -> None:
    """A decimal (0.7311, 2.34e-08) or a long whole number (10,588,160) is quoted as the lesson prints it."""
    number = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?:e-?\d+)?|(?<![\w.])\d{1,3}(?:(?:,|\{,\})\d{3})+")
    for lesson, guide in guides.items():
        text = _notebook_text(LESSONS[lesson])
        quoted = number.findall(
            "\n".join([guide.idea, guide.project, guide.misconceptions, *guide.pauses.values()])
        )
        missing = [q for q in quoted if q not in text and q.replace(",", "{,}") not in text]
        assert not missing, (
            f"lesson {lesson}: the guide quotes {missing}, which {LESSONS[lesson].name} does not show"
        )
