"""The decks of ``make slides``, measured in Chromium, and the slide metadata they are built from.

``build/slides/`` as ``make slides`` left it (``make test`` builds it first; the decks must be newer
than the lessons, the guide and the tools, else the test skips with a hint, and fails under CI) is
served by ``http.server`` on 127.0.0.1 and each deck is opened in a 1280×720 page
(tools/slides_browser.py). Every slide and sub-slide is shown in turn, and each must fit 1280×720
at reveal's unscaled size with nothing on it that scrolls or clips what overflows; no request may
leave 127.0.0.1 and no page may log a console error or throw; every formula must be typeset (no
``$`` left in the text); the title slide and the slide of every heading where the instructor's
guide pauses carry its speaker notes. A room must be able to read every slide: no slide shows more
than ``build_slides.MAX_CODE_LINES`` (12) lines of code as drawn, and every figure's text is drawn
at ``build_slides.LEGIBLE_PX`` (18) px or more on the 1280×720 slide (the figures' font size at the
PNG's dpi, times the figure's drawn over its natural width).

The metadata tests need no browser: every cell's ``slideshow`` metadata is one that
tools/build_slides.py reads, and cutting a cell where it says loses nothing; nor do those of the
build's cuts of long code and large figures. The lessons are those the manifests list
(attention_lessons/manifest.py).

The browser tests need Debian's Chromium (``apt-get install chromium``) and Playwright for Python
(requirements-test.txt); Playwright's own browser download is not needed.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import build_slides
import nbformat
import numpy as np
import pytest
import slides_browser
from conftest import ROOT, require_build
from PIL import Image

from attention_lessons import manifest

NOTEBOOKS = [lesson.path for lesson in manifest.lessons()]
LESSONS = [path.stem for path in NOTEBOOKS]
DECKS = ROOT / "build" / "slides"
STUDENT_DECKS = ROOT / "build" / "slides-student"
SOURCES = [
    *NOTEBOOKS,
    ROOT / "docs" / "instructor_guide.md",
    ROOT / "package-lock.json",
    *(ROOT / "tools").glob("*.py"),
    *(ROOT / "tools" / "nbconvert_templates" / "attnlib_slides").rglob("*.*"),
]
SLIDESHOW_KEYS = {"slide_type", "cut_lines", "cut_outputs"}
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}
HOW_TO_FIX = (
    "cut the section in the lesson's metadata (see tools/build_slides.py): a sub-slide at a cell "
    '("slideshow": {"slide_type": "subslide"}), or inside a cell too tall by itself '
    '("cut_lines": [n] or "cut_outputs": [0]); then `make slides` and this test again'
)


def stale_or_missing_decks(folder: Path = DECKS) -> str | None:
    """Why the decks of ``folder`` (build/slides, build/slides-student) cannot be tested as they are
    (missing or older than their sources), or None."""
    decks = [folder / f"{lesson}.html" for lesson in LESSONS]
    where = folder.relative_to(ROOT)
    missing = [deck.name for deck in decks if not deck.exists()]
    if missing:
        return f"{where} has no {missing}"
    newest = max(path.stat().st_mtime for path in SOURCES)
    stale = [deck.name for deck in decks if deck.stat().st_mtime < newest]
    return f"{where} is older than the lessons, the guide or the tools: {stale}" if stale else None


@pytest.fixture(scope="module")
def decks(browser) -> dict[str, slides_browser.Deck]:
    """Every deck of build/slides, opened and measured once for all the tests (skips with a hint
    without Chromium, Playwright or fresh decks)."""
    require_build(stale_or_missing_decks(), "make slides")
    with slides_browser.serve(str(DECKS)) as base:
        return {lesson: slides_browser.measure(browser, f"{base}/{lesson}.html") for lesson in LESSONS}


@pytest.fixture(scope="module")
def notes() -> dict[str, tuple[str, dict[str, str]]]:
    return build_slides.lesson_notes((ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def student_decks(browser) -> dict[str, slides_browser.Deck]:
    """Every deck of build/slides-student (the student copies' decks), opened and measured."""
    require_build(stale_or_missing_decks(STUDENT_DECKS), "make slides")
    with slides_browser.serve(str(STUDENT_DECKS)) as base:
        return {lesson: slides_browser.measure(browser, f"{base}/{lesson}.html") for lesson in LESSONS}


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_students_slide_fits_1280_by_720(student_decks, lesson):
    """The students' decks lose the solution cells and gain the student copy's note: each of
    their slides fits too (the note has a sub-slide of its own)."""
    too_big = [
        f"{slide.where()}: {slide.width}×{slide.height}"
        for slide in student_decks[lesson].slides
        if not slide.fits
    ]
    assert not too_big, f"{lesson}'s students' deck: slides that do not fit 1280×720: {too_big}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_slide_fits_1280_by_720(decks, lesson):
    deck = decks[lesson]
    lesson_notebook = nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", as_version=4)
    assert len(deck.slides) == build_slides.slide_count(build_slides.deck_notebook(lesson_notebook))
    too_big = [
        f"{slide.where()}: {slide.width}×{slide.height}, scrolling or clipped: {slide.scrollbars}"
        for slide in deck.slides
        if not slide.fits
    ]
    assert not too_big, (
        f"{lesson}: slides that do not fit 1280×720:\n" + "\n".join(too_big) + f"\n{HOW_TO_FIX}"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_figures_are_drawn_large_enough_to_read(decks, lesson):
    figures = [(slide, figure) for slide in decks[lesson].slides for figure in slide.figures]
    unknown = [slide.where() for slide, figure in figures if not figure["dpi"]]
    assert not unknown, f"{lesson}: figures whose PNG gives no dpi (pHYs): {unknown}"
    small = [
        f"{slide.where()}: text at {slide.text_px(figure):.1f} px "
        f"({figure['width']} px wide, drawn {figure['natural_width']} px at {figure['dpi']:.0f} dpi)"
        for slide, figure in figures
        if slide.text_px(figure) < build_slides.LEGIBLE_PX
    ]
    assert not small, (
        f"{lesson}: figures drawn below {build_slides.LEGIBLE_PX} px text on a 1280×720 slide:\n"
        + "\n".join(small)
        + "\n(tools/build_slides.py's figure_pieces sizes and splits them; FIGURE_BOX is the room it assumes)"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_code_slides_are_short(decks, lesson):
    long = [
        f"{slide.where()}: {slide.code_lines} lines of code"
        for slide in decks[lesson].slides
        if slide.code_lines > build_slides.MAX_CODE_LINES
    ]
    assert not long, (
        f"{lesson}: slides with more than {build_slides.MAX_CODE_LINES} lines of code:\n"
        + "\n".join(long)
        + f"\n{HOW_TO_FIX}"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_deck_stays_on_this_machine_without_errors(decks, lesson):
    deck = decks[lesson]
    assert deck.outside == [], f"{lesson} requested from other hosts: {deck.outside}"
    assert deck.console_errors == [], f"{lesson} logged console errors: {deck.console_errors}"
    assert deck.page_errors == [], f"{lesson} threw: {deck.page_errors}"


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


@pytest.mark.parametrize("lesson", LESSONS)
def test_speaker_notes_from_the_guide(decks, notes, lesson):
    title_notes, pauses = notes[lesson[:2]]
    slides = decks[lesson].slides
    assert _words(title_notes)[:60] in _words(slides[0].notes), f"{lesson}: the title slide lacks its notes"
    for heading, text in pauses.items():
        # the slide's heading without its typeset math, which keeps no TeX
        shown = [
            slide for slide in slides if _words(slide.heading) == _words(re.sub(r"\$[^$]+\$", "", heading))
        ]
        assert shown, f"{lesson}: no slide shows the heading {heading!r}"
        assert _words(text)[:60] in _words(shown[0].notes), f"{lesson}: no speaker notes at {heading!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=LESSONS)
def test_slide_metadata_is_what_the_build_reads(path):
    for cell in nbformat.read(path, as_version=4).cells:
        slideshow = cell.metadata.get("slideshow", {})
        assert set(slideshow) <= SLIDESHOW_KEYS, f"{path.name}, cell {cell.id}: unknown keys in {slideshow}"
        assert slideshow.get("slide_type", "-") in SLIDE_TYPES, f"{path.name}, cell {cell.id}: {slideshow}"
        assert cell.cell_type == "code" or "cut_outputs" not in slideshow, f"{path.name}, cell {cell.id}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=LESSONS)
def test_cutting_cells_loses_nothing(path):
    for cell in nbformat.read(path, as_version=4).cells:
        pieces = build_slides.pieces(cell)
        shown = [piece for piece in pieces if not piece.metadata.get("transient", {}).get("remove_source")]
        assert "\n".join(piece.source for piece in shown) == cell.source.rstrip("\n")
        assert [output for piece in pieces for output in piece.get("outputs", [])] == cell.get("outputs", [])
        assert all(piece.metadata["slideshow"]["slide_type"] != "-" for piece in pieces[1:])


def test_a_cut_outside_the_cell_is_named():
    cell = nbformat.v4.new_code_cell("a = 1\nb = 2", metadata={"slideshow": {"cut_lines": [2]}})
    with pytest.raises(
        ValueError, match=rf"cell {cell.id}: cut_lines \[2\] must rise, each inside its 2 lines"
    ):
        build_slides.pieces(cell)
    cell.metadata.slideshow = {"cut_outputs": [0]}
    with pytest.raises(ValueError, match=r"cut_outputs \[0\] must rise, each below its 0 outputs"):
        build_slides.pieces(cell)


def test_a_section_starts_a_slide_and_a_pause_its_notes():
    lesson = nbformat.v4.new_notebook()
    lesson.cells = [
        nbformat.v4.new_markdown_cell("# 99 · A lesson"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell(
            "Text.\n\n## 1. A section\n\nMore.", metadata={"slideshow": {"cut_lines": [2]}}
        ),
    ]
    deck = build_slides.deck_notebook(lesson, ("**Time:** 5 minutes", {"1. A section": "ask."}))
    types = [(cell.source[:12], cell.metadata["slideshow"]["slide_type"]) for cell in deck.cells]
    assert types == [
        ("# 99 · A les", "slide"),
        ("**Time:** 5 ", "notes"),
        ("x = 1", "-"),
        ("Text.\n", "-"),
        ("## 1. A sect", "slide"),
        ("**Pause:** a", "notes"),
    ]
    with pytest.raises(ValueError, match=r"pauses at headings the lesson lacks: \['2. Another'\]"):
        build_slides.deck_notebook(lesson, ("", {"2. Another": "ask."}), "99_a_lesson")


def test_a_page_that_loads_from_another_host_is_caught():
    page = '<script src="static/reveal.js/dist/reveal.js"></script><link href="//cdn.example/a.css">'
    assert build_slides.external_urls(
        page + "<style>b { background: url('https://x.example/i.png') }</style>"
    ) == [
        "//cdn.example/a.css",
        "https://x.example/i.png",
    ]
    assert build_slides.external_urls(page.split("<link")[0]) == []


def test_long_code_is_cut_before_a_statement():
    source = "\n".join([*(f"a{n} = {n}" for n in range(8)), "# the loop", "for i in range(3):"])
    source += "\n" + "\n".join(f"    b{n} = i" for n in range(6))
    assert build_slides.code_cuts(source) == [8]  # before the comment above the loop
    body = "def f():\n" + "\n".join(f"    x{n} = {n}" for n in range(30))
    assert build_slides.code_cuts(body) == [12, 24]  # inside the one statement, before its lines
    assert build_slides.code_cuts("%time x = 1\n" * 13) == [12]  # not Python: at the limit
    assert build_slides.code_cuts("x = 1\n" * 12) == []


def _png(width: int, height: int, panels: int, dpi: float = 100) -> bytes:
    """A white figure of ``panels`` dark panels side by side, blank columns between them."""
    pixels = np.full((height, width, 3), 255, np.uint8)
    share = width // panels
    for k in range(panels):
        pixels[10 : height - 10, k * share + 10 : (k + 1) * share - 10] = 40
        pixels[10 : height - 10 : 7, k * share + 10 : (k + 1) * share - 10] = 255  # white lines inside
        pixels[10 : height - 10, k * share + 10 : (k + 1) * share - 10 : 7] = 255
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", dpi=(dpi, dpi))
    return buffer.getvalue()


def _text_px(png: bytes, width: int) -> float:
    return build_slides.FONT_PT * build_slides.png_dpi(png) / 72 * width / Image.open(io.BytesIO(png)).width


def test_a_large_figure_is_split_between_its_panels():
    whole = build_slides.figure_pieces(_png(600, 300, 2))
    assert len(whole) == 1 and _text_px(whole[0][0], whole[0][1]) >= build_slides.LEGIBLE_PX
    assert max(whole[0][1] / build_slides.FIGURE_BOX[0], whole[0][2] / build_slides.FIGURE_BOX[1]) > 0.99
    pieces = build_slides.figure_pieces(_png(1800, 300, 3))
    widths = [Image.open(io.BytesIO(png)).width for png, _, _ in pieces]
    assert widths == [600, 600, 600]  # two pieces would cut a panel: three, between the panels
    assert all(_text_px(png, width) >= build_slides.LEGIBLE_PX for png, width, _ in pieces)
    assert all(
        width <= build_slides.FIGURE_BOX[0] and height <= build_slides.FIGURE_BOX[1]
        for _, width, height in pieces
    )
    assert len(build_slides.figure_pieces(_png(600, 1200, 1))) == 3  # too tall: rows


def test_a_figure_without_its_dpi_is_named():
    buffer = io.BytesIO()
    Image.new("RGB", (10, 10), "white").save(buffer, format="PNG")
    with pytest.raises(ValueError, match="has no dpi"):
        build_slides.figure_pieces(buffer.getvalue())


def test_a_figure_gets_slides_of_its_own_its_table_under_the_last():
    png = base64.b64encode(_png(1800, 300, 3)).decode("ascii")
    figure = nbformat.v4.new_output(
        "display_data",
        data={
            "image/png": png,
            "text/html": "<img><details><summary>t</summary>T</details>",
            "text/plain": "alt",
        },
    )
    text = nbformat.v4.new_output("stream", name="stdout", text="done\n")
    cell = nbformat.v4.new_code_cell("show()", outputs=[text, figure, text])
    cells = build_slides.legible_pieces(cell)
    assert [len(c.outputs) for c in cells] == [1, 1, 1, 1, 1]  # code and text, 3 pieces, text
    assert cells[0].source == "show()" and cells[0].outputs == [text] and cells[-1].outputs == [text]
    shown = [c.outputs[0].data["text/html"] for c in cells[1:4]]
    assert 'alt="alt"' in shown[0] and "Part 3 of 3" in shown[2]
    assert "<details>" not in shown[0] + shown[1]
    assert shown[2].endswith("<details><summary>t</summary>T</details>")
    assert all(c.metadata["slideshow"]["slide_type"] == "subslide" for c in cells[1:])
