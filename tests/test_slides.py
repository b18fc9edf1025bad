"""The decks of ``make slides``, measured in Chromium, and the slide metadata they are built from.

``build/slides/`` as ``make slides`` left it (``make test`` builds it first; the decks must be newer
than the lessons, the guide and the tools, else the test skips with a hint, and fails under CI) is
served by ``http.server`` on 127.0.0.1 and each deck is opened in a 1280×720 page
(tools/slides_browser.py). Every slide and sub-slide is shown in turn, and each must fit 1280×720
at reveal's unscaled size with no scrollbar anywhere on it; no request may leave 127.0.0.1 and no
page may log a console error or throw; every formula must be typeset (no ``$`` left in the text);
the title slide and the slide of every heading where the instructor's guide pauses carry its
speaker notes.

The metadata tests need no browser: every cell of every lesson has the slide type that
tools/assign_slides.py writes (re-run it when they fail), and cutting a cell into parts loses
nothing.

The browser tests need Debian's Chromium (``apt-get install chromium``) and Playwright for Python
(requirements-test.txt); Playwright's own browser download is not needed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import require_build

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # the tools are scripts, not a package

import assign_slides  # noqa: E402
import build_slides  # noqa: E402
import slides_browser  # noqa: E402
from instructor_guide import read_guide, speaker_notes  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LESSONS = [path.stem for path in NOTEBOOKS]
DECKS = ROOT / "build" / "slides"
SOURCES = [
    *NOTEBOOKS,
    ROOT / "docs" / "instructor_guide.md",
    ROOT / "package-lock.json",
    *(ROOT / "tools").glob("*.py"),
    *(ROOT / "tools" / "nbconvert_templates" / "attnlib_slides").rglob("*.*"),
]
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}


def _stale_or_missing_decks() -> str | None:
    """Why build/slides cannot be tested as it is (missing or older than its sources), or None."""
    decks = [DECKS / f"{lesson}.html" for lesson in LESSONS]
    missing = [deck.name for deck in decks if not deck.exists()]
    if missing:
        return f"build/slides has no {missing}"
    newest = max(path.stat().st_mtime for path in SOURCES)
    stale = [deck.name for deck in decks if deck.stat().st_mtime < newest]
    return f"build/slides is older than the lessons, the guide or the tools: {stale}" if stale else None


@pytest.fixture(scope="module")
def decks() -> dict[str, slides_browser.Deck]:
    """Every deck of build/slides, opened and measured once for all the tests (skips with a hint
    without Chromium, Playwright or fresh decks)."""
    if not Path(slides_browser.CHROMIUM).exists():
        pytest.skip(
            f"Chromium is not installed at {slides_browser.CHROMIUM}: install Debian's package "
            "(sudo apt-get install chromium) to measure the slides"
        )
    pytest.importorskip("playwright", reason="no Playwright: .venv/bin/pip install -r requirements-test.txt")
    require_build(_stale_or_missing_decks(), "make slides")
    with slides_browser.serve(str(DECKS)) as base, slides_browser.chromium() as browser:
        return {lesson: slides_browser.measure(browser, f"{base}/{lesson}.html") for lesson in LESSONS}


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_every_slide_fits_1280_by_720(decks, lesson):
    deck = decks[lesson]
    assert len(deck.slides) == build_slides.slide_count(
        build_slides.deck_notebook(nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", as_version=4))
    )
    too_big = [
        f"{slide.where()}: {slide.width}×{slide.height}, scrollbars on {slide.scrollbars}"
        for slide in deck.slides
        if not slide.fits
    ]
    assert not too_big, f"{lesson}: slides that do not fit 1280×720 without scrolling:\n" + "\n".join(too_big)


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_deck_stays_on_this_machine_without_errors(decks, lesson):
    deck = decks[lesson]
    assert deck.outside == [], f"{lesson} requested from other hosts: {deck.outside}"
    assert deck.console_errors == [], f"{lesson} logged console errors: {deck.console_errors}"
    assert deck.page_errors == [], f"{lesson} threw: {deck.page_errors}"


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_math_is_typeset(decks, lesson):
    deck = decks[lesson]
    raw = [f"{slide.where()}: {slide.prose[:200]!r}" for slide in deck.slides if "$" in slide.prose]
    assert not raw, f"{lesson}: math left as TeX:\n" + "\n".join(raw)
    lesson_has_math = "$" in (ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8")
    assert sum(slide.math for slide in deck.slides) > 0 or not lesson_has_math


def _words(markdown: str) -> str:
    """Letters and digits only: Markdown and its rendered text compare equal."""
    return re.sub(r"[^0-9a-z]+", "", markdown.lower())


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_speaker_notes_from_the_guide(decks, lesson):
    title_notes, section_notes = speaker_notes(read_guide()[lesson[:2]])
    slides = decks[lesson].slides
    assert _words(title_notes)[:60] in _words(slides[0].notes), f"{lesson}: the title slide lacks its notes"
    for heading, notes in section_notes.items():
        shown = [slide for slide in slides if _words(slide.heading) == _words(heading)]
        assert shown, f"{lesson}: no slide shows the heading {heading!r}"
        assert _words(notes)[:60] in _words(shown[0].notes), f"{lesson}: no speaker notes at {heading!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=LESSONS)
def test_lessons_carry_their_slide_metadata(path):
    notebook = nbformat.read(path, as_version=4)
    hint = f"{path.name}: re-run `make slides-metadata` (tools/assign_slides.py)"
    for cell in notebook.cells:
        kind = cell.metadata.get("slideshow", {}).get("slide_type")
        assert kind in SLIDE_TYPES, f"{hint}: cell {cell.id} has slide type {kind!r}"
        parts = build_slides.cell_parts(cell)
        types = build_slides.part_types(cell, len(parts))
        starts_section = [t for p, t in zip(parts, types, strict=True) if assign_slides.starts_slide(p)]
        assert all(t == "slide" for t in starts_section), f"{hint}: a `## ` section in {cell.id} is no slide"
    assert notebook.cells[0].metadata["slideshow"]["slide_type"] == "slide", hint


@pytest.mark.parametrize("path", NOTEBOOKS, ids=LESSONS)
def test_cutting_cells_into_parts_loses_nothing(path):
    for cell in nbformat.read(path, as_version=4).cells:
        if build_slides.explorer_summary(cell):
            continue
        whole = build_slides.merged(build_slides.cell_parts(cell), cell.source)
        if cell.cell_type == "markdown":
            assert _words(whole.source) == _words(cell.source)
        else:
            assert whole.source == cell.source.rstrip("\n")
            assert whole.get("outputs", []) == cell.get("outputs", [])
