"""Every lesson in every place a lesson must be: each failure names the step of CONTRIBUTING.md's
checklist, "Adding a lesson", that was missed.

The lessons are the files ``notebooks/NN_name.ipynb``, each with its folder ``attention_lessons/lNN_name/``
and manifest ``lesson.toml`` (``attention_lessons/manifest.py``); the other tests take their list of lessons
from the manifests, so these are the places a contributor writes by hand. None runs a lesson.
"""

from __future__ import annotations

import doctest
import re
import tomllib
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from attention_lessons import manifest

LESSONS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
TEMPLATE = ROOT / "attention_lessons" / "template"
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
#: The checklist's steps, as CONTRIBUTING.md names them in bold; each failure names its step.


def _folder(name: str) -> Path:
    """The course folder of the lesson ``NN_slug.ipynb``: ``attention_lessons/lNN_slug``."""
    return ROOT / "attention_lessons" / f"l{name.removesuffix('.ipynb')}"


def _manifest(name: str) -> manifest.Lesson:
    return manifest.read(_folder(name) / manifest.MANIFEST)


def test_the_checklist_has_five_steps_each_checked_here() -> None:
    section = CONTRIBUTING.split("## Adding a lesson\n", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d)\. \*\*([^*:]+):\*\*", section, flags=re.MULTILINE)
    assert steps == [(str(n), step) for n, step in enumerate(manifest.STEPS, start=1)], (
        f"CONTRIBUTING.md's 'Adding a lesson' has the steps {steps}; this test names {manifest.STEPS}"
    )


# --- step 1: the folder, copied from attention_lessons/template -------------------------------------------


@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_has_its_folder_and_manifest(name: str) -> None:
    folder = _folder(name)
    assert (folder / manifest.MANIFEST).is_file(), (
        f"{name} has no {folder.relative_to(ROOT)}/{manifest.MANIFEST}: "
        f"copy attention_lessons/template ({manifest.step(1)})"
    )


def test_every_lesson_folder_says_which_lesson_it_is() -> None:
    for lesson in manifest.lessons():
        init = lesson.folder / "__init__.py"
        said = init.read_text(encoding="utf-8") if init.is_file() else ""
        assert said.startswith(f'"""Lesson {lesson.id} · {lesson.title}'), (
            f"{init.relative_to(ROOT)}: its docstring names the lesson, "
            f'"""Lesson {lesson.id} · {lesson.title}: … ({manifest.step(1)})'
        )


def test_the_manifests_are_read_and_every_one_has_its_notebook() -> None:
    try:
        found = manifest.lessons()
    except manifest.ManifestError as error:
        pytest.fail(str(error))
    assert [lesson.notebook for lesson in found] == LESSONS


def test_the_readers_examples_run() -> None:
    result = doctest.testmod(manifest)
    assert result.attempted and not result.failed, (
        "the examples in attention_lessons/manifest.py read the lessons' manifests: see the output above"
    )


def test_the_template_is_no_lesson_and_names_every_field() -> None:
    fields = tomllib.loads((TEMPLATE / manifest.MANIFEST).read_text(encoding="utf-8"))
    required = {name for name, (_kind, default) in manifest.FIELDS.items() if default is None}
    assert set(fields) == required, (
        "attention_lessons/template/lesson.toml gives every field a lesson must fill"
    )
    for name in set(manifest.FIELDS) - required:
        assert name in (TEMPLATE / manifest.MANIFEST).read_text(encoding="utf-8"), (
            f"the template explains {name}"
        )
    assert all(lesson.folder != TEMPLATE for lesson in manifest.lessons())


def test_a_broken_manifest_is_named_with_its_field(tmp_path: Path) -> None:
    notebooks, course = tmp_path / "notebooks", tmp_path / "course"
    notebooks.mkdir()
    (course / "l00_first").mkdir(parents=True)
    template = (TEMPLATE / manifest.MANIFEST).read_text(encoding="utf-8")
    lesson = template.replace("number = 99", "number = 0").replace("99_template", "00_first")
    (course / "l00_first" / manifest.MANIFEST).write_text(lesson, encoding="utf-8")
    with pytest.raises(manifest.ManifestError, match=r"manifests of no notebook .*'00_first\.ipynb'"):
        manifest.lessons(course, notebooks)
    (notebooks / "00_first.ipynb").touch()
    (notebooks / "01_second.ipynb").touch()
    with pytest.raises(
        manifest.ManifestError,
        match=r"no manifest for \['01_second\.ipynb'\]: copy attention_lessons/template",
    ):
        manifest.lessons(course, notebooks)
    (notebooks / "01_second.ipynb").unlink()
    assert [found.notebook for found in manifest.lessons(course, notebooks)] == ["00_first.ipynb"]
    broken = {
        lesson.replace('part = "III"', 'part = "V"'): r"l00_first/lesson\.toml: part must be one of",
        lesson.replace(
            "kernel_peak_mib = 0.0", 'kernel_peak_mib = "low"'
        ): r"kernel_peak_mib must be a number",
        lesson.replace("explorers = []\n", ""): r"l00_first/lesson\.toml: missing fields \['explorers'\]",
        lesson + "explorer = []\n": r"unknown fields \['explorer'\]",
        lesson + 'extra = "[model]"\n': r"extra names an extra of attention-lessons, like 'model'",
        lesson.replace("number = 0", "number = 1"): r"number is 1, but the folder is lesson 00",
        lesson + '[[hidden]]\nwhat = "x"\nrecipe = "y"\n': r"hidden\[0\] must be a table with exactly",
    }
    for text, message in broken.items():
        (course / "l00_first" / manifest.MANIFEST).write_text(text, encoding="utf-8")
        with pytest.raises(manifest.ManifestError, match=message):
            manifest.lessons(course, notebooks)


# --- step 2: the notebook ----------------------------------------------------------------------


def test_lessons_are_numbered_from_00_without_gaps() -> None:
    numbers = [name[:3] for name in LESSONS]
    expected = [f"{n:02d}_" for n in range(len(LESSONS))]
    assert numbers == expected, (
        f"lesson files must be 00_name.ipynb, 01_name.ipynb, … ({manifest.step(2)}): {LESSONS}"
    )
    for name in LESSONS:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", name), (
            f"{name}: name a lesson NN_words.ipynb ({manifest.step(2)})"
        )


# --- step 3: the manifest, filled --------------------------------------------------------------


@pytest.mark.parametrize("name", LESSONS)
def test_the_manifest_says_what_the_lesson_is(name: str) -> None:
    lesson, cells = _manifest(name), nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
    where = f"{lesson.folder.relative_to(ROOT)}/{manifest.MANIFEST} ({manifest.step(3)})"
    assert cells[0].source.splitlines()[0] == f"# {lesson.id} · {lesson.title}", f"{where}: title"
    code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
    shown = sorted(set(re.findall(r"\bwidgets\.([a-z_]+)\(", code)))
    assert sorted(lesson.explorers) == shown, f"{where}: explorers, the lesson shows {shown}"
    for path in lesson.data:
        assert (ROOT / path).is_file(), f"{where}: data, {path} is not in the repository"


def test_the_parts_follow_each_other() -> None:
    parts = [lesson.part for lesson in manifest.lessons()]
    assert parts == sorted(parts, key=manifest.PARTS.index), (
        f"part I, then II, then III ({manifest.step(3)}): {parts}"
    )


# --- step 4: the guide and the lists -----------------------------------------------------------


@pytest.mark.parametrize("name", LESSONS)
def test_the_readme_table_lists_the_lesson(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = rf"^\| {name[:2]} \| \[[^\]]+\]\(notebooks/{re.escape(name)}\) \|"
    assert re.search(row, readme, re.MULTILINE), f"README.md's lesson table lacks {name} ({manifest.step(4)})"


@pytest.mark.parametrize("name", LESSONS)
def test_the_book_lists_the_lesson(name: str) -> None:
    toc = (ROOT / "book" / "_toc.yml").read_text(encoding="utf-8")
    entry = f"- file: notebooks/{name.removesuffix('.ipynb')}\n"
    assert entry in toc, f"book/_toc.yml has no chapter for {name} ({manifest.step(4)})"
    captions = re.findall(r'^  - caption: "?([^"\n]*)"?$', toc[: toc.index(entry)], flags=re.MULTILINE)
    part = _manifest(name).part
    assert captions and captions[-1].startswith(f"Part {part}:"), (
        f"book/_toc.yml lists {name} under {captions[-1:]}, not under its part's caption "
        f'("Part {part}: …"; a new part gets a caption of its own) ({manifest.step(4)})'
    )


@pytest.mark.parametrize("name", LESSONS)
def test_the_guide_has_a_part_for_the_lesson(name: str) -> None:
    guide = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
    assert re.search(rf"^### {name[:2]} · \S", guide, re.MULTILINE), (
        f"docs/instructor_guide.md has no part '### {name[:2]} · <title>' ({manifest.step(4)})"
    )


def _markdown(name: str) -> str:
    cells = nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
    return "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")


@pytest.mark.parametrize("name", LESSONS)
def test_the_map_of_lesson_00_links_the_lesson(name: str) -> None:
    assert f"]({name})" in _markdown(LESSONS[0]), (
        f"{LESSONS[0]}'s map does not link {name} ({manifest.step(4)})"
    )


@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_before_links_to_the_lesson(name: str) -> None:
    """Each summary ends with **Next:** the following lesson; the last one's, lesson 00."""
    before = LESSONS[LESSONS.index(name) - 1]
    summary = _markdown(before).split("## Summary", 1)[-1]
    assert re.search(rf"\*\*Next:\*\* \[[^\]]+\]\({re.escape(name)}\)", summary), (
        f"the summary of {before} does not end with **Next:** [...]({name}) ({manifest.step(4)})"
    )


# --- step 5: make execute ----------------------------------------------------------------------


@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_is_saved_run_top_to_bottom(name: str) -> None:
    cells = nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
    counts = [cell.execution_count for cell in cells if cell.cell_type == "code" and cell.source.strip()]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{name}: execution counts {counts}: run make execute ({manifest.step(5)})"
    )
