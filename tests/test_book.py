"""The book of ``make book`` (build/book/), served on 127.0.0.1 and opened in Chromium.

Every page of the book (the intro, each lesson, the instructor's guide, the index and the search
page) is opened in a fresh browser context, with no kernel anywhere; each must load with no
console error, no uncaught error and **no request to any other host** (such requests are
recorded and aborted). On every page every image loads, every formula is typeset by MathJax 3 (an
``mjx-container`` in each of Sphinx's ``.math`` elements) and no raw ``$…$`` is left in the text
outside code; on a lesson with explorers, each explorer shown in the lesson is drawn, and one
slider move changes its SVG; at a phone's width (390 px) the page does not scroll sideways.
Search finds the lesson on softmax. Without a browser: links between pages point to files of the
book, and each lesson has its Binder launch link.

The book must be newer than its sources (the lessons, attnlib, book/, the guide, the tools and
package-lock.json); else the test skips with a hint (under CI it fails): run ``make book``.
It needs Debian's Chromium and Playwright for Python, as tests/test_browser.py does.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from conftest import require_build
from test_browser import chromium, serve

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "build" / "book"
NOTEBOOKS = ROOT / "notebooks"
BINDER = "https://mybinder.org/v2/gh/attention-lessons/attention-lessons/main?urlpath=lab/tree/"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LOAD_TIMEOUT = 60_000  # ms: a page, its images, MathJax and its explorers ready
MOVE_TIMEOUT = 10_000  # ms: an explorer redrawn after a key press (no kernel: in the same frame)
PHONE = {"width": 390, "height": 844}
RAW_MATH = re.compile(r"\$[^$\n]+\$|\\\(|\\\[")


def toc_pages() -> list[str]:
    """The book's pages as paths in build/book: those of book/_toc.yml, the index and search."""
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [f"{name}.html" for name in files] + ["genindex.html", "search.html"]


def explorers_in(page: str) -> int:
    """How many explorers the lesson behind ``page`` shows (its widget views), 0 for other pages."""
    lesson = NOTEBOOKS / f"{Path(page).stem}.ipynb"
    if not page.startswith("notebooks/") or not lesson.exists():
        return 0
    cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
    outputs = [output for cell in cells for output in cell.get("outputs", [])]
    return sum(WIDGET_VIEW in output.get("data", {}) for output in outputs)


PAGES = toc_pages()


def _stale_or_missing_book() -> str | None:
    """Why build/book cannot be tested as it is (missing or older than its sources), or None."""
    built = [SITE / page for page in PAGES]
    missing = [str(path.relative_to(SITE)) for path in built if not path.exists()]
    if missing:
        return f"build/book has no {missing}"
    sources = [
        *NOTEBOOKS.glob("*.ipynb"),
        *(ROOT / "attnlib").rglob("*.py"),
        *(ROOT / "attnlib").rglob("*.js"),
        *(ROOT / "book").iterdir(),
        ROOT / "docs" / "instructor_guide.md",
        ROOT / "package-lock.json",
        ROOT / "tools" / "build_book.py",
        ROOT / "tools" / "execute_notebooks.py",
    ]
    newest = max(path.stat().st_mtime for path in sources if path.exists())
    oldest = min(path.stat().st_mtime for path in built)
    return "build/book is older than its sources" if oldest < newest else None


@pytest.fixture(scope="module")
def book() -> Path:
    """build/book, as ``make book`` left it (skips, or fails under CI, when stale or missing)."""
    require_build(_stale_or_missing_book(), "make book")
    return SITE


@pytest.fixture(scope="module")
def site(book: Path) -> Iterator[str]:
    """build/book served on 127.0.0.1."""
    with serve(book) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@dataclass
class Visit:
    """One page open in its own browser context, with what went wrong while it ran."""

    page: object
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def check_clean(self) -> None:
        assert not self.outside, f"requests that left 127.0.0.1: {self.outside}"
        assert not self.errors, "errors in the page:\n" + "\n".join(self.errors)


@pytest.fixture
def visit(browser, site) -> Iterator:
    """Open a page of the book; requests to other hosts are recorded and aborted."""
    contexts = []

    def open_page(path: str) -> Visit:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        seen = Visit(page)

        def keep_local(route) -> None:
            if urllib.parse.urlsplit(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                seen.outside.append(route.request.url)
                route.abort()

        context.route("**/*", keep_local)
        page.on("console", lambda m: m.type == "error" and seen.errors.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: seen.errors.append(f"uncaught: {e}"))
        page.on("response", lambda r: r.status >= 400 and seen.errors.append(f"{r.status}: {r.url}"))
        page.goto(f"{site}/{path}", wait_until="load", timeout=LOAD_TIMEOUT)
        return seen

    yield open_page
    for context in contexts:
        context.close()


# --- in the browser ------------------------------------------------------------------------------

ALL_IMAGES_LOADED = """() => [...document.images].every(img => img.complete)"""
BROKEN_IMAGES = """() => [...document.images].filter(img => img.naturalWidth === 0).map(img => img.src)"""
# Sphinx's math elements that hold no MathJax output, and the text outside code, math and scripts
UNTYPESET_MATH = """() => [...document.querySelectorAll('.math')]
    .filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80))"""
PROSE = """() => {
    const main = document.querySelector('main') || document.body;
    const copy = main.cloneNode(true);
    copy.querySelectorAll('pre, code, script, style, mjx-container, .highlight, textarea')
        .forEach(e => e.remove());
    return copy.textContent;
}"""
SVG_OF = """root => [...root.querySelectorAll('svg')].map(s => s.outerHTML).join('')"""


def wait_for_mathjax(visit: Visit) -> None:
    """Wait until MathJax 3 has typeset the page (on a page with math)."""
    visit.page.wait_for_function(
        "() => !document.querySelector('.math') || window.MathJax?.startup?.promise", timeout=LOAD_TIMEOUT
    )
    visit.page.evaluate("async () => { await window.MathJax?.startup?.promise; }")


def check_images(visit: Visit) -> None:
    """Every image of the page loads (lazy ones are told to load now)."""
    visit.page.evaluate("() => document.querySelectorAll('img').forEach(img => { img.loading = 'eager'; })")
    visit.page.wait_for_function(ALL_IMAGES_LOADED, timeout=LOAD_TIMEOUT)
    assert visit.page.evaluate(BROKEN_IMAGES) == []


def check_math(visit: Visit) -> None:
    """Every formula is typeset and no raw ``$…$``, ``\\(`` or ``\\[`` is left in the text."""
    wait_for_mathjax(visit)
    assert visit.page.evaluate(UNTYPESET_MATH) == []
    raw = RAW_MATH.findall(visit.page.evaluate(PROSE))
    assert not raw, f"math left untypeset: {raw[:5]}"


def move_slider(visit: Visit, root) -> None:
    """Press an arrow key on the explorer's first slider and wait until its SVG changes."""
    slider = root.locator('input[type="range"]').first
    slider.scroll_into_view_if_needed()
    at_max = slider.evaluate("e => Number(e.value) >= Number(e.max)")
    before = root.evaluate(SVG_OF)
    slider.focus()
    visit.page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
    visit.page.wait_for_function(
        f"([root, old]) => ({SVG_OF})(root) !== old",
        arg=[root.element_handle(), before],
        timeout=MOVE_TIMEOUT,
    )


def check_explorers(visit: Visit, expected: int) -> None:
    """The page draws as many explorers as its lesson shows, and a slider move redraws each."""
    roots = visit.page.locator(".attnlib-explorer")
    if expected:
        visit.page.wait_for_function(
            f"() => document.querySelectorAll('.attnlib-explorer svg text').length > 0"
            f" && document.querySelectorAll('.attnlib-explorer').length >= {expected}",
            timeout=LOAD_TIMEOUT,
        )
    assert roots.count() == expected
    for index in range(expected):
        move_slider(visit, roots.nth(index))


def check_fits_a_phone(visit: Visit) -> None:
    """At a phone's width the page does not scroll sideways (wide parts scroll by themselves)."""
    visit.page.set_viewport_size(PHONE)
    widths = visit.page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], f"at {PHONE['width']} px the page is {widths[0]} px wide"


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES)
def test_page_in_chromium(visit, path):
    """The page loads clean and alone: images, math and explorers work, it fits a phone, nothing
    leaves the host."""
    seen = visit(path)
    check_images(seen)
    check_math(seen)
    check_explorers(seen, explorers_in(path))
    check_fits_a_phone(seen)
    seen.check_clean()


@pytest.mark.slow
def test_search_finds_the_softmax_lesson(visit):
    seen = visit("search.html?q=softmax")
    results = seen.page.locator("ul.search li a")
    results.first.wait_for(timeout=LOAD_TIMEOUT)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("notebooks/05_softmax.html" in href for href in hrefs), hrefs
    seen.check_clean()


# --- the files -----------------------------------------------------------------------------------


def test_every_page_is_tested(book):
    """The pages in build/book are exactly those of the table of contents, the index and search."""
    built = {
        str(path.relative_to(book))
        for path in book.rglob("*.html")
        if path.relative_to(book).parts[0] not in ("_static", "_sources")
    }
    assert built == {*PAGES, "index.html"}


LINK = re.compile(r"""\b(?:href|src)=["']([^"'#?]*)[^"']*["']""")


@pytest.mark.parametrize("path", PAGES)
def test_local_links_point_to_files_of_the_book(book, path):
    """Every relative link and source of the page (lessons to lessons, images, scripts) exists."""
    page = book / path
    targets = [t for t in LINK.findall(page.read_text(encoding="utf-8")) if t and ":" not in t]
    missing = sorted({t for t in targets if not (page.parent / urllib.parse.unquote(t)).exists()})
    assert not missing, missing
    assert not [t for t in targets if t.endswith(".ipynb") and "_sources/" not in t]


@pytest.mark.parametrize("lesson", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.stem)
def test_each_lesson_launches_on_binder(book, lesson):
    page = (book / "notebooks" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    assert f'href="{BINDER}notebooks/{lesson.name}"' in page
