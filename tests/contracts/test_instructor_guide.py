"""The instructor's guide, ``docs/instructor_guide.md``, against the lessons it describes.

The guide is Markdown for people; the slides take each lesson's part as speaker notes
(``build_slides.lesson_notes``). Every lesson has a part with its time, idea, explorer to project,
misconceptions and at least two pauses; every pause sits at a ``## `` heading that exists in its
lesson, word for word; every explorer the guide tells a teacher to project is one the lesson shows
(its manifest's ``explorers``, which ``tests/contracts/test_contributing.py`` checks against the lesson);
every number a part quotes appears in its lesson; the two walkthrough plans add up and name real
lessons, explorers and sections; every lesson's **Time:** is its manifest's ``minutes``, and every
total of lessons' minutes the guide states is their sum (each such sentence is found, or the test
says it is not); the nbgitpuller and Binder links point at this repository and a real notebook.
"""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest
from build_slides import lesson_notes
from conftest import ROOT
from repository import read as read_repository

from attention_lessons import manifest

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
        assert _field(part, "Time") == MANIFESTS[number].time, (
            f"lesson {number}: **Time:** is its manifest's minutes, {MANIFESTS[number].time!r}"
        )
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
            widgets = importlib.import_module(f"attention_lessons.{MANIFESTS[number].folder.name}.widgets")
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
    assert {"05", "07", "13", "16"} <= set(lessons), "the guide sizes lessons 05, 07, 13 and 16"
    for line in sizing.table() + sizing.measured():
        assert line in section.splitlines(), f"the guide's sizing section lacks the row: {line}"
    over = [lesson for lesson, found in lessons.items() if sizing.sizing(found).memory_for_class_gib >= 24]
    said = "any of these lessons" + (f" but lesson {' and '.join(over)}" if over else "")
    assert f"24 GiB holds the memory of a class of {sizing.CLASS_SIZE} on {said}" in " ".join(
        section.split()
    ), f"the guide says which lessons a class of {sizing.CLASS_SIZE} cannot hold in 24 GiB: {over}"
    assert f"at most {sizing.RUN_ALL_MAX_S:.0f} seconds" in section
    assert f"{sizing.EXPLORER_P95_MAX_MS:.0f} ms" in section


def _section(text: str, heading: str) -> str:
    """The text of the guide's ``## heading`` section, up to the next ``## ``."""
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _sentence(text: str, match: re.Match) -> str:
    """The sentence of ``text`` that holds ``match``, on one line: how a failure names it."""
    start = max(text.rfind(". ", 0, match.start()) + 2, text.rfind("\n\n", 0, match.start()) + 2, 0)
    ends = [end for end in (text.find(". ", match.end()), text.find("\n\n", match.end())) if end >= 0]
    return " ".join(text[start : min(ends, default=len(text)) + 1].split())


#: The sentences that state lessons' minutes, as this test reads them: what each states, its regex.
MINUTES_SAID = {
    "the total": r"take about (?P<said>\d+) minutes",
    "the sessions": r"\b(?P<said>\w+) 90-minute\s+sessions in all",
    "a part": r"\b[Pp]art (?P<part>I{1,3}|IV) \((?:lessons? )?(?P<first>\d\d)"
    r"(?:(?:–| to )(?P<last>\d\d))?\)?,?\s+about (?P<said>\d+)(?:\s+minutes)?",
    "two lessons": r"\b(?P<first>\d\d) and (?P<last>\d\d) \((?P<said>\d+)\s+minutes\)",
    "a lesson": r"\b[Ll]esson (?P<first>\d\d)(?: about |\s+\()(?P<said>\d+)(?:\s+minutes)?"
    r"(?:,\s+or (?P<short>\d+) with)?",
    "what two sessions leave": r"the (?P<said>\d+) and (?P<also>\d+) minutes the two sessions leave",
}
#: Where the guide states lessons' minutes, and what each place must state: (what, which), so that a
#: reworded sentence fails instead of going unchecked.
MINUTES_EXPECTED = {
    "How long the lessons take": {
        ("the total", ""),
        ("the sessions", ""),
        *(("a part", part) for part in manifest.PARTS if any(m.part == part for m in MANIFESTS.values())),
        ("a lesson", "14"),
        ("a lesson", "15"),
        ("a lesson", "16"),
    },
    "the plans for parts II and III": {
        ("a part", "II"),
        ("a part", "III"),
        ("two lessons", "09 and 10"),
        ("two lessons", "11 and 12"),
        ("two lessons", "14 and 15"),
        ("what two sessions leave", ""),
        ("a lesson", "13"),
        ("a lesson", "14"),
        ("a lesson", "15"),
        ("a lesson", "16"),
    },
}
NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
).split()
#: What the manifests give today, from which the drift test below makes its anchors.
TOTAL = sum(lesson.minutes for lesson in MANIFESTS.values())
PART_III = sum(lesson.minutes for lesson in MANIFESTS.values() if lesson.part == "III")
SESSIONS = math.ceil(TOTAL / 90)


def _places(text: str) -> dict[str, str]:
    """The places of the guide's ``text`` that state lessons' minutes, named as in MINUTES_EXPECTED:
    "How long the lessons take" and the paragraphs after the 90-minute walkthrough's table."""
    plan = _section(text, "A 90-minute walkthrough")
    return {
        "How long the lessons take": _section(text, "How long the lessons take"),
        "the plans for parts II and III": plan.split("| **90** |", 1)[1],
    }


def _minutes_problems(text: str) -> list[str]:
    """Each sentence of the guide's ``text`` whose minutes are not its lessons' manifests' (summed),
    each statement of MINUTES_EXPECTED not found, and each "N minutes" that no pattern reads."""
    minutes = {number: lesson.minutes for number, lesson in MANIFESTS.items()}
    total = sum(minutes.values())
    problems = []
    for place, said in _places(text).items():
        found, covered = set(), []
        sessions = []  # (where, the sum) of each "NN and MM (T minutes)": what is left of a session
        for what, pattern in MINUTES_SAID.items():
            for match in re.finditer(pattern, said):
                covered.append(match.span())
                sentence = f"{place}: {_sentence(said, match)!r}"
                first, last = match.groupdict().get("first"), match.groupdict().get("last")
                key = ""
                if what == "the total":
                    wanted = str(total)
                elif what == "the sessions":
                    wanted = NUMBER_WORDS[math.ceil(total / 90)]
                elif what == "a part":
                    key = match["part"]
                    ids = [number for number, lesson in MANIFESTS.items() if lesson.part == key]
                    if [first, last or first] != [ids[0], ids[-1]]:
                        problems.append(f"{sentence}: part {key} is lessons {ids[0]}–{ids[-1]}")
                    wanted = str(sum(minutes[number] for number in ids))
                elif what == "two lessons":
                    key, wanted = f"{first} and {last}", str(minutes[first] + minutes[last])
                    sessions.append((match.start(), int(wanted)))
                elif what == "a lesson":
                    key, wanted = first, str(minutes[first])
                    short = MANIFESTS[first].minutes_with_homework
                    if match["short"] and match["short"] != str(short):
                        problems.append(
                            f"{sentence}: lesson {first} with homework takes {short or 'no less'}"
                        )
                else:  # what two sessions leave: 90 less each of the two sessions before it
                    before = [summed for start, summed in sessions if start < match.start()][-2:]
                    left = [str(90 - summed) for summed in before]
                    if len(left) != 2 or [match["said"], match["also"]] != left:
                        leave = " and ".join(left) or "nothing"
                        problems.append(f"{sentence}: the two sessions before it leave {leave} minutes")
                    found.add((what, key))
                    continue
                found.add((what, key))
                if match["said"] != wanted:
                    problems.append(f"{sentence}: says {match['said']}, the manifests' minutes give {wanted}")
        for what, key in sorted(MINUTES_EXPECTED[place] - found):
            problems.append(
                f"{place}: no sentence states {what} {key} as this test reads it, {MINUTES_SAID[what]}"
            )
        for match in re.finditer(r"\b\d+\s+minutes\b", said):
            if not any(start <= match.start() and match.end() <= end for start, end in covered):
                problems.append(f"{place}: {_sentence(said, match)!r} states minutes that no check reads")
    return problems


def test_every_total_the_guide_states_is_the_manifests_sum() -> None:
    problems = _minutes_problems(TEXT)
    assert not problems, "the guide's minutes have drifted from the manifests':\n" + "\n".join(problems)


#: The words of "How long the lessons take" that state part III's minutes ("part III (14–16) about …").
PART_III_SAID = next(
    match[0]
    for match in re.finditer(MINUTES_SAID["a part"], _places(TEXT)["How long the lessons take"])
    if match["part"] == "III"
)


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (
            PART_III_SAID,
            PART_III_SAID.replace(f"about {PART_III}", f"about {PART_III - 55}"),
            f"says {PART_III - 55}, the manifests' minutes give {PART_III}",
        ),
        (
            "11 and 12 (80 minutes)",
            "11 and 12 (70 minutes)",
            "11 and 12 (70 minutes) in the second, each with its explorer.': says 70",
        ),
        (
            "the 15 and 10 minutes",
            "the 15 and 20 minutes",
            "the two sessions before it leave 15 and 10 minutes",
        ),
        ("lessons 14 and 15 (145 minutes)", "lessons 14 and 15 (90 minutes)", "says 90, the manifests'"),
        ("Lesson 14 (65 minutes)", "Lesson 14 (45 minutes)", "says 45, the manifests' minutes give 65"),
        (
            "or 45 with its sections 1 to 3 as homework) takes",
            "or 40 with its sections 1 to 3 as homework) takes",
            "lesson 16 with homework takes 45",
        ),
        (
            f"take about {TOTAL} minutes",
            f"take about {TOTAL - 55} minutes",
            f"says {TOTAL - 55}, the manifests' minutes give {TOTAL}",
        ),
        (
            f"{NUMBER_WORDS[SESSIONS]} 90-minute",
            f"{NUMBER_WORDS[SESSIONS - 1]} 90-minute",
            f"says {NUMBER_WORDS[SESSIONS - 1]}, the manifests' minutes give {NUMBER_WORDS[SESSIONS]}",
        ),
        ("(lessons 09–13, about 190", "(lessons 09–12, about 190", "part II is lessons 09–13"),
        # reworded: the check says it no longer finds the sentence, instead of passing
        ("11 and 12 (80 minutes)", "the next two lessons", "no sentence states two lessons 11 and 12"),
        (f"take about {TOTAL} minutes", f"need {TOTAL} minutes", "no sentence states the total"),
        (
            "Lesson 14 (65 minutes) takes",
            "The first (65 minutes) takes",
            "states minutes that no check reads",
        ),
    ],
)
def test_a_drifted_total_is_named_with_its_sentence(old: str, new: str, named: str) -> None:
    assert TEXT.count(old) == 1, f"the test's anchor {old!r} is not in the guide once"
    problems = "\n".join(_minutes_problems(TEXT.replace(old, new)))
    assert named in problems, f"changing {old!r} to {new!r} is not named: {problems or 'no problem found'}"


def test_a_lessons_minutes_are_checked_by_its_manifest(tmp_path: Path) -> None:
    folder = tmp_path / MANIFESTS["16"].folder.name
    folder.mkdir()
    text = (MANIFESTS["16"].folder / manifest.MANIFEST).read_text(encoding="utf-8")
    assert "minutes = 90\nminutes_with_homework = 45\nhomework = " in text
    broken = {
        text.replace(
            "minutes = 90\n", ""
        ): r"l16_real_language_model/lesson\.toml: missing fields \['minutes'\]",
        text.replace(
            "minutes = 90\n", "minutes = 0\n"
        ): r"minutes, the time lesson 16 takes a class, must be",
        text.replace("minutes = 90\n", "minutes = -5\n"): r"l16_real_language_model.*must be more than 0",
        text.replace("minutes = 90\n", 'minutes = "90"\n'): r"minutes must be a whole number",
        text.replace("minutes = 90\n", "minutes = 90.5\n"): r"minutes must be a whole number",
        text.replace(
            "minutes_with_homework = 45\n", "minutes_with_homework = 90\n"
        ): r"less than minutes \(90\)",
        text.replace("minutes_with_homework = 45\n", ""): r"minutes_with_homework and homework go together",
        text.replace(
            'homework = "sections 1 to 3"', 'homework = " "'
        ): r"homework names the part of lesson 16",
    }
    for changed, message in broken.items():
        assert changed != text
        (folder / manifest.MANIFEST).write_text(changed, encoding="utf-8")
        with pytest.raises(manifest.ManifestError, match=message):
            manifest.read(folder / manifest.MANIFEST)
