"""Every lesson in every place a lesson must be: each failure names the place and the step of
CONTRIBUTING.md's checklist that adds it.

The lessons are the files ``notebooks/NN_name.ipynb``; the other tests take their list from
there, so these are the places a contributor writes by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
CHECKLIST = "see CONTRIBUTING.md, 'Adding a lesson'"


def test_lessons_are_numbered_from_00_without_gaps() -> None:
    numbers = [name[:3] for name in LESSONS]
    expected = [f"{n:02d}_" for n in range(len(LESSONS))]
    assert numbers == expected, f"lesson files must be 00_name.ipynb, 01_name.ipynb, …: {LESSONS}"
    for name in LESSONS:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", name), f"{name}: name a lesson NN_words.ipynb"


@pytest.mark.parametrize("name", LESSONS)
def test_the_readme_table_lists_the_lesson(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = rf"^\| {name[:2]} \| \[[^\]]+\]\(notebooks/{re.escape(name)}\) \|"
    assert re.search(row, readme, re.MULTILINE), f"README.md's lesson table lacks {name} ({CHECKLIST})"


@pytest.mark.parametrize("name", LESSONS)
def test_the_book_lists_the_lesson(name: str) -> None:
    toc = (ROOT / "book" / "_toc.yml").read_text(encoding="utf-8")
    entry = f"- file: notebooks/{name.removesuffix('.ipynb')}\n"
    assert entry in toc, f"book/_toc.yml has no chapter for {name} ({CHECKLIST})"


@pytest.mark.parametrize("name", LESSONS)
def test_the_guide_has_a_part_for_the_lesson(name: str) -> None:
    guide = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
    assert re.search(rf"^### {name[:2]} · \S", guide, re.MULTILINE), (
        f"docs/instructor_guide.md has no part '### {name[:2]} · <title>' ({CHECKLIST})"
    )
