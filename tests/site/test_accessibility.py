"""The book's two editions and the decks, checked by axe-core in Chromium (WCAG 2.1 AA and more).

tests/site/axe_browser.py opens every page of build/book and build/book-student (the intro, each lesson,
the instructor's guide, the index and the search page), the decks' index page and every deck of
build/slides, and runs axe-core (npm, the version of package-lock.json) over each, in one browser:
a book page whole, a deck with every slide and sub-slide shown at once in reveal.js's print layout.
A serious or critical failure fails the test, each named with its page, rule and selector;
moderate and minor ones are counted in the tool's output, not failed on. On every page no formula
is a Tab stop (but for one too wide for its box, which a keyboard scrolls once it has the focus:
book/scrollers.js), and on a lesson page of the book and on a deck a formula becomes one when the reader
ticks *Include in Tab Order* in MathJax's menu. On every page of the book the first Tab press lands
on a link to the main content (the skip link).

The builds must be newer than their sources, as for tests/site/test_book.py and tests/site/test_slides.py;
else the test skips with a hint (under CI it fails). It needs Debian's Chromium, Playwright for
Python and ``npm ci`` (node_modules/axe-core).
"""

from __future__ import annotations

from pathlib import Path

import axe_browser
import pytest
from conftest import ROOT, require_build

EDITIONS = ("book", "book-student")
SLIDES = ROOT / "build" / "slides"
LESSONS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DECKS = [f"{lesson}.html" for lesson in LESSONS]
SOURCES = [
    *(ROOT / "notebooks").glob("*.ipynb"),
    *(ROOT / "attnlib").rglob("*.*"),
    *(ROOT / "attention_lessons").rglob("*.*"),
    *(ROOT / "book").rglob("*.*"),
    *(ROOT / "tools").glob("build_*.py"),
    ROOT / "tools" / "execute_notebooks.py",
    *(ROOT / "tools" / "nbconvert_templates").rglob("*.*"),
    ROOT / "docs" / "instructor_guide.md",
    ROOT / "package-lock.json",
]
SOURCES = [path for path in SOURCES if "__pycache__" not in path.parts]
LESSON_WITH_MATH = "05_softmax"


def stale_or_missing(built: list[Path]) -> str | None:
    """Why the files ``built`` cannot be checked (missing, or older than the sources), or None."""
    missing = [str(path.relative_to(ROOT)) for path in built if not path.exists()]
    if missing:
        return f"no {missing}"
    newest = max(path.stat().st_mtime for path in SOURCES if path.is_file())
    stale = [str(path.relative_to(ROOT)) for path in built if path.stat().st_mtime < newest]
    return f"older than their sources: {stale}" if stale else None


@pytest.fixture(scope="module")
def built() -> None:
    """Skip (fail under CI) when the book or the decks are missing or older than their sources;
    fail when axe-core is missing."""
    if not axe_browser.AXE.is_file():
        pytest.fail(f"{axe_browser.AXE} is missing: run `npm ci`")
    sites = [ROOT / "build" / edition for edition in EDITIONS]
    require_build(stale_or_missing([site / "search.html" for site in sites]), "make book")
    decks = [SLIDES / "index.html", *(SLIDES / deck for deck in DECKS)]
    require_build(stale_or_missing(decks), "make slides")


@pytest.fixture(scope="module")
def reports(built, browser) -> dict[str, axe_browser.Report]:
    """axe's report on each edition of the book, on the decks' index page and on each deck."""
    sites = [ROOT / "build" / edition for edition in EDITIONS]
    pages = {site: axe_browser.site_pages(site) for site in sites}
    found = {site.name: axe_browser.check_pages(browser, site, pages[site]) for site in sites}
    found["slides/index.html"] = axe_browser.check_pages(browser, SLIDES, ["index.html"])
    for report in axe_browser.check_decks(browser, SLIDES, DECKS):
        found[report.name] = report
    for report in found.values():
        print(report.line())
    return found


def check(report: axe_browser.Report) -> None:
    """Fail naming every serious or critical failure, and every page whose formulas are Tab stops."""
    blocking = report.blocking()
    listed = "\n".join(map(str, blocking))
    assert not blocking, f"{len(blocking)} serious or critical axe failures:\n{listed}"
    tabbed = {page: count for page, count in report.math_tab_stops.items() if count}
    assert not tabbed, f"formulas in the Tab order (MathJax's inTabOrder should be off): {tabbed}"


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_page_of_the_book_passes_axe(reports, edition):
    report = reports[edition]
    assert len(report.math_tab_stops) >= len(LESSONS) + 3, f"{edition}: only {sorted(report.math_tab_stops)}"
    check(report)


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_first_tab_stop_skips_to_the_content(reports, edition):
    first = reports[edition].first_tab_stops
    wrong = {page: stop for page, stop in first.items() if not stop["skips"]}
    assert first and not wrong, f"pages whose first Tab stop is not a skip link to the content: {wrong}"


@pytest.mark.parametrize("name", ["slides/index.html", *DECKS])
def test_every_deck_passes_axe(reports, name):
    check(reports[name])


@pytest.mark.parametrize(
    ("folder", "page"),
    [
        (ROOT / "build" / "book", f"notebooks/{LESSON_WITH_MATH}.html"),
        (SLIDES, f"{LESSON_WITH_MATH}.html{axe_browser.PRINT_LAYOUT}"),  # every slide shown
    ],
    ids=["book", "deck"],
)
def test_formulas_join_the_tab_order_when_the_reader_asks(built, browser, folder, page):
    before, after = axe_browser.math_tab_stops_on_request(browser, folder, page)
    assert before == 0, f"{page}: {before} formulas are Tab stops before the reader asks"
    assert after > 0, f"{page}: Include in Tab Order, ticked in MathJax's menu, added no Tab stop"
