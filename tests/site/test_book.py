"""The book of ``make book``, the one static site, served on 127.0.0.1 and opened in Chromium.

It comes in two editions: the teacher's in build/book/ (every lesson as it is, and the
instructor's guide) and the student edition in build/book-student/ (the lessons without their
solutions, no guide).

Every page of the teacher's edition (the intro, each lesson, the instructor's guide, the index and
the search page) is opened in a fresh browser context, with no kernel anywhere; each must load with
no console error, no uncaught error and **no request to any other host** (such requests are
recorded and aborted). On every page every image loads, every formula is typeset by MathJax 3 (an
``mjx-container`` in each of Sphinx's ``.math`` elements) and no raw ``$…$`` is left in the text
outside code; on a lesson with explorers, each explorer shown in the lesson is drawn, and one
slider move changes its SVG; at a phone's width (390 px) the page does not scroll sideways; and
the page with all it loads (the sum of the response bodies) weighs at most 4 MiB. Search finds the
lesson on softmax. The four explorers of tests/site/test_browser.py are driven on their lesson pages by
keyboard and drag, every number checked against attnlib after every move. In the student edition
every explorer is drawn and responds too. Without a browser: links between pages point to files
of the book, each lesson has its Binder launch link, and no solution of a lesson (no cell tagged
``solution``, no ``<details>`` answer) and no page of the guide is in the student edition.

The book must be newer than its sources (the lessons, attnlib, book/, the guide, the tools and
package-lock.json); else the test skips with a hint (under CI it fails): run ``make book``.
It needs Debian's Chromium and Playwright for Python, as tests/site/test_browser.py does.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import ROOT, hidden_answers, require_build
from slides_browser import serve
from test_browser import EXPLORERS, Page

SITE = ROOT / "build" / "book"
STUDENT_SITE = ROOT / "build" / "book-student"
GUIDE = "docs/instructor_guide.html"
NOTEBOOKS = ROOT / "notebooks"
PAGE_BUDGET = 4 * 2**20  # bytes: a page and everything it loads
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
STUDENT_PAGES = [page for page in PAGES if page != GUIDE]
LESSONS = sorted(NOTEBOOKS.glob("*.ipynb"))
LESSON_PAGES = [f"notebooks/{lesson.stem}.html" for lesson in LESSONS]
WITH_EXPLORERS = [page for page in LESSON_PAGES if explorers_in(page)]


def _stale_or_missing_book() -> str | None:
    """Why the book cannot be tested as it is (an edition missing or older than its sources), or None."""
    built = [SITE / page for page in PAGES] + [STUDENT_SITE / page for page in STUDENT_PAGES]
    missing = [str(path.relative_to(ROOT)) for path in built if not path.exists()]
    if missing:
        return f"the book has no {missing}"
    sources = [
        *NOTEBOOKS.glob("*.ipynb"),
        *(ROOT / "attnlib").rglob("*.py"),
        *(ROOT / "attention_lessons").rglob("*.py"),
        *(ROOT / "attention_lessons").rglob("*.js"),
        *(ROOT / "book").iterdir(),
        ROOT / "docs" / "instructor_guide.md",
        ROOT / "package-lock.json",
        ROOT / "tools" / "build_book.py",
        ROOT / "tools" / "build_student.py",
        ROOT / "tools" / "execute_notebooks.py",
    ]
    newest = max(path.stat().st_mtime for path in sources if path.exists())
    oldest = min(path.stat().st_mtime for path in built)
    return "the book is older than its sources" if oldest < newest else None


@pytest.fixture(scope="module")
def book() -> Path:
    """build/book, as ``make book`` left it (skips, or fails under CI, when stale or missing)."""
    require_build(_stale_or_missing_book(), "make book")
    return SITE


@pytest.fixture(scope="module")
def student_book(book: Path) -> Path:
    """build/book-student, made with build/book by ``make book``."""
    return STUDENT_SITE


@pytest.fixture(scope="module")
def site(book: Path) -> Iterator[str]:
    """build/book served on 127.0.0.1."""
    with serve(book) as url:
        yield url


@pytest.fixture(scope="module")
def student_site(student_book: Path) -> Iterator[str]:
    """build/book-student served on 127.0.0.1."""
    with serve(student_book) as url:
        yield url


@dataclass
class Visit:
    """One page open in its own browser context, with what went wrong while it ran."""

    page: object
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    loaded: list[object] = field(default_factory=list)  # the requests answered by the server

    def check_clean(self) -> None:
        assert not self.outside, f"requests that left 127.0.0.1: {self.outside}"
        assert not self.errors, "errors in the page:\n" + "\n".join(self.errors)

    def weight(self) -> int:
        """Bytes of every response body the page has loaded so far (it included)."""
        return sum(request.sizes()["responseBodySize"] for request in self.loaded)


def _opener(browser, site: str, contexts: list):
    """A function that opens a page of the book served at ``site``; requests to other hosts are
    recorded and aborted."""

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
        page.on("requestfinished", lambda r: r.url.startswith(site) and seen.loaded.append(r))
        page.goto(f"{site}/{path}", wait_until="load", timeout=LOAD_TIMEOUT)
        return seen

    return open_page


def _visits(browser, site: str) -> Iterator:
    """An opener of ``site``'s pages; the browser contexts it made are closed afterwards."""
    contexts: list = []
    yield _opener(browser, site, contexts)
    for context in contexts:
        context.close()


@pytest.fixture
def visit(browser, site) -> Iterator:
    """Open a page of the teacher's edition."""
    yield from _visits(browser, site)


@pytest.fixture
def visit_student(browser, student_site) -> Iterator:
    """Open a page of the student edition."""
    yield from _visits(browser, student_site)


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


def check_weight(visit: Visit, path: str) -> None:
    """The page and everything it has loaded weigh at most PAGE_BUDGET bytes."""
    weight = visit.weight()
    assert weight <= PAGE_BUDGET, (
        f"{path} loads {weight / 2**20:.2f} MiB, more than {PAGE_BUDGET / 2**20} MiB"
    )


@pytest.mark.parametrize("path", PAGES)
def test_page_in_chromium(visit, path):
    """The page loads clean, alone and light: images, math and explorers work, it fits a phone,
    nothing leaves the host, at most 4 MiB comes from it."""
    seen = visit(path)
    check_images(seen)
    check_math(seen)
    check_explorers(seen, explorers_in(path))
    check_fits_a_phone(seen)
    check_weight(seen, path)
    seen.check_clean()


@pytest.mark.parametrize("kind", list(EXPLORERS))
def test_explorer_on_its_lesson_page(browser, site, tmp_path, kind):
    """Keyboard and drag move the explorer, and after every move every number it draws is
    attnlib's (tests/site/test_browser.py's moves and checks, on the book's page, with no kernel)."""
    explorer = EXPLORERS[kind]
    page = Page(browser, explorer, tmp_path, f"book-{kind}")
    try:
        page.page.goto(f"{site}/notebooks/{explorer.lesson}.html", wait_until="load")
        page.wait_for_explorer(MOVE_TIMEOUT)
        page.exercise()
    finally:
        page.close()


@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_explorers_respond_in_the_student_edition(visit_student, path):
    seen = visit_student(path)
    check_explorers(seen, explorers_in(path))
    seen.check_clean()


def test_search_finds_the_softmax_lesson(visit):
    seen = visit("search.html?q=softmax")
    results = seen.page.locator("ul.search li a")
    results.first.wait_for(timeout=LOAD_TIMEOUT)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("notebooks/05_softmax.html" in href for href in hrefs), hrefs
    seen.check_clean()


# --- the files -----------------------------------------------------------------------------------


def _built_pages(site: Path) -> set[str]:
    return {
        str(path.relative_to(site))
        for path in site.rglob("*.html")
        if path.relative_to(site).parts[0] != "_static"
    }


def test_every_page_is_tested(book, student_book):
    """The pages of each edition are exactly those of its table of contents, the index and search:
    the student edition has no page of the guide."""
    assert _built_pages(book) == {*PAGES, "index.html"}
    assert _built_pages(student_book) == {*STUDENT_PAGES, "index.html"}


def test_nothing_shipped_that_no_page_loads(book, student_book):
    """No source maps, no copies of the sources, no Font Awesome script (its webfonts draw the icons)."""
    for site in (book, student_book):
        assert not [str(path) for path in site.rglob("*.map")]
        assert not (site / "_sources").exists()
        assert not list(site.rglob("fontawesome.js"))


LINK = re.compile(r"""\b(?:href|src)=["']([^"'#?]*)[^"']*["']""")
EDITION_PAGES = [("book", path) for path in PAGES] + [("student_book", path) for path in STUDENT_PAGES]


@pytest.mark.parametrize(("edition", "path"), EDITION_PAGES)
def test_local_links_point_to_files_of_the_book(request, edition, path):
    """Every relative link and source of the page (lessons to lessons, images, scripts) exists in
    its edition, and none points to a notebook file."""
    page = request.getfixturevalue(edition) / path
    targets = [t for t in LINK.findall(page.read_text(encoding="utf-8")) if t and ":" not in t]
    missing = sorted({t for t in targets if not (page.parent / urllib.parse.unquote(t)).exists()})
    assert not missing, missing
    assert not [t for t in targets if t.endswith(".ipynb")]


def test_the_student_edition_leads_to_no_guide(book, student_book):
    """No link and no search entry of the student edition leads to the instructor's guide (as
    those of the teacher's edition do)."""
    link = re.compile(r"""href=["'][^"']*instructor_guide""")
    for site, has_guide in ((book, True), (student_book, False)):
        linking = [p.name for p in site.rglob("*.html") if link.search(p.read_text(encoding="utf-8"))]
        assert bool(linking) == has_guide, (site, linking)
        index = (site / "searchindex.js").read_text(encoding="utf-8")
        assert ('"docs/instructor_guide"' in index) == has_guide, site


def page_text(page: Path) -> str:
    """The text of an HTML page: tags dropped, entities decoded, runs of white space one space."""
    markup = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.DOTALL)
    text = markup.sub("", page.read_text(encoding="utf-8"))
    return " ".join(html.unescape(text).split())


# Pieces of a Markdown cell that rendering leaves as they are: a run of plain words (no markup,
# quotes or dashes, which rendering changes), and inline math (MathJax reads it from the page's text)
PLAIN_WORDS = re.compile(r"(?<![\w'])[A-Za-z][A-Za-z ,;]{10,}[A-Za-z](?![\w'])")
INLINE_MATH = re.compile(r"(?<!\$)\$([^$\n]{8,})\$(?!\$)")


def fingerprints(cell: nbformat.NotebookNode) -> set[str]:
    """Pieces of a cell's source that its rendered page shows as they are: lines of code, and runs
    of plain words and inline math of Markdown."""
    if cell.cell_type == "code":
        pieces = [line for line in cell.source.splitlines() if len(line.strip()) >= 16]
    else:
        pieces = PLAIN_WORDS.findall(cell.source) + INLINE_MATH.findall(cell.source)
    return {" ".join(piece.split()) for piece in pieces}


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda path: path.stem)
def test_the_student_edition_holds_no_solution(book, student_book, lesson):
    """No ``<details>`` answer (a figure's folded table of numbers is not one), no solution cell's
    class, and no piece of any solution cell that the teacher's edition shows (each solution cell is
    found there by at least one piece) is in the student edition's page of the lesson."""
    name = f"notebooks/{lesson.stem}.html"
    student_html = (student_book / name).read_text(encoding="utf-8")
    assert hidden_answers(student_html) == 0
    assert "tag_solution" not in student_html
    teacher, student = page_text(book / name), page_text(student_book / name)
    cells = nbformat.read(lesson, as_version=4).cells
    solutions = [cell for cell in cells if "solution" in cell.metadata.get("tags", [])]
    kept = " ".join(" ".join(cell.source.split()) for cell in cells if cell not in solutions)
    assert solutions, f"{lesson.name} has no cell tagged solution"
    for cell in solutions:
        shown = [piece for piece in fingerprints(cell) - {""} if piece not in kept and piece in teacher]
        assert shown, f"no piece of {lesson.name}'s solution cell {cell.id} found in the teacher's edition"
        leaked = [piece for piece in shown if piece in student]
        assert not leaked, f"{lesson.name}'s solution cell {cell.id} is in the student edition: {leaked}"


def _widget_scripts(page: str, mime_type: str) -> list[dict]:
    pattern = rf'<script type="{re.escape(mime_type)}">\s*(.*?)\s*</script>'
    return [json.loads(body) for body in re.findall(pattern, page, re.DOTALL)]


@pytest.mark.parametrize("edition", ["book", "student_book"])
@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_each_explorer_has_its_state_and_module_in_its_page(request, edition, path):
    """book/explorers.js draws an explorer from its stored state, which carries its ES module; the
    cells that show explorers, and only those, take the page's full width."""
    page = (request.getfixturevalue(edition) / path).read_text(encoding="utf-8")
    cells = nbformat.read(NOTEBOOKS / f"{Path(path).stem}.ipynb", as_version=4).cells
    explorer_cells = sum(any(WIDGET_VIEW in o.get("data", {}) for o in c.get("outputs", [])) for c in cells)
    assert len(re.findall(r'<div class="cell\b[^"]*\btag_full-width\b', page)) == explorer_cells
    [state] = _widget_scripts(page, "application/vnd.jupyter.widget-state+json")
    views = _widget_scripts(page, WIDGET_VIEW)
    assert len(views) == explorers_in(path)
    for view in views:
        model = state["state"][view["model_id"]]
        assert model["model_module"] == "anywidget", model["model_module"]
        assert model["state"].get("_esm"), "the explorer's ES module is not in the stored state"


@pytest.mark.parametrize("lesson", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.stem)
def test_each_lesson_launches_on_binder(book, lesson):
    page = (book / "notebooks" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    assert f'href="{BINDER}notebooks/{lesson.name}"' in page
