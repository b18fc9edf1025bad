"""Run axe-core in Chromium over every page of the book's editions and every slide of the decks.

    PYTHONPATH=tools .venv/bin/python tests/site/axe_browser.py \\
        [--book build/book --book build/book-student] \\
        [--slides build/slides] [--axe node_modules/axe-core/axe.min.js]

A helper of ``tests/site/test_accessibility.py``; by itself it prints, for each edition and each deck, how
many elements fail a rule of each impact, then every serious or critical failure with its selector.

A folder is served by ``http.server`` on 127.0.0.1 (``slides_browser.serve``) and its pages are
opened one after the other in one browser page, at 1280×720. When a page has loaded, MathJax has
typeset it and its fonts are ready, axe-core (the npm version of package-lock.json) is injected and
run with its default rules (WCAG 2.0, 2.1 and 2.2 A and AA, and best practices). A page of the
book is checked whole; so is a deck (reveal.js), with every slide and sub-slide shown at once, one
under the other, in reveal's own print layout (``?print-pdf``), as they are printed. Each page also
reports the formulas that are Tab stops though they fit their box (there should be none unless the
reader asks for them in MathJax's menu: :func:`math_tab_stops_on_request` asks), and each page of a
book where its first Tab press lands (the theme's skip link to the main content).

It needs Debian's Chromium and Playwright for Python, as ``tools/slides_browser.py`` does.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from build_book import ROOT
from build_slides import HEIGHT, WIDTH
from slides_browser import LOAD_TIMEOUT, chromium, serve

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
IMPACTS = ("critical", "serious", "moderate", "minor")
BLOCKING = ("critical", "serious")  # the impacts that fail the test
REDIRECT = '<meta http-equiv="Refresh"'  # Sphinx's index.html that only sends on to the first page

# MathJax (where the page loads it) has typeset the page, every font is loaded, and two frames have
# been drawn (what the page's ResizeObservers do after typesetting is done).
READY = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
    await document.fonts.ready;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
# axe's violations inside `context` (a selector, or the whole document): rule, impact, help, nodes.
RUN_AXE = """async () => {
    const results = await axe.run(document, {resultTypes: ['violations']});
    return results.violations.map((v) => ({
        rule: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => ({target: n.target.join(' '), summary: n.failureSummary || ''})),
    }));
}"""
# Formulas that a Tab press reaches, but for those wider than their box: they scroll sideways, and a
# Tab stop is how a keyboard scrolls them (book/scrollers.js).
MATH_TAB_STOPS = """() => [...document.querySelectorAll('mjx-container[tabindex]:not([tabindex="-1"])')]
    .filter((math) => math.scrollWidth <= math.clientWidth + 1).length"""
# Where the first Tab press from the top of a page lands: the link's text, and whether it is a link
# within the page whose target exists (a skip link).
FIRST_TAB_STOP = """() => {
    const el = document.activeElement;
    const href = el && el.getAttribute('href');
    const inPage = href && href.startsWith('#') && href.length > 1;
    const target = inPage ? document.getElementById(href.slice(1)) : null;
    return {text: el ? el.textContent.trim() : '', skips: Boolean(target)};
}"""
# reveal.js's print layout (``?print-pdf``) puts every slide and sub-slide on a page of its own, one
# under the other, as they would be printed; it leaves them marked hidden (for the screen), which
# would make axe skip most of their content: the marks are removed.
PRINT_LAYOUT = "?print-pdf"
SHOW_EVERY_SLIDE = """() => {
    const slides = document.querySelectorAll('.reveal .slides section');
    slides.forEach((slide) => { slide.hidden = false; slide.removeAttribute('aria-hidden'); });
    return [Reveal.getSlides().length, document.querySelectorAll('.reveal .pdf-page').length];
}"""


@dataclass(frozen=True)
class Failure:
    """One element that fails one axe rule."""

    page: str
    rule: str
    impact: str
    help: str
    target: str  # the element's CSS selector, as axe gives it
    summary: str  # axe's "Fix any of the following: …"

    def __str__(self) -> str:
        summary = " ".join(self.summary.split())
        return f"{self.impact} {self.rule} on {self.page} at `{self.target}`: {self.help}. {summary}"


@dataclass
class Report:
    """axe's failures on a site or a deck, and the formulas that are Tab stops."""

    name: str
    failures: list[Failure] = field(default_factory=list)
    math_tab_stops: dict[str, int] = field(default_factory=dict)  # page → formulas reached by Tab
    first_tab_stops: dict[str, dict] = field(default_factory=dict)  # book page → FIRST_TAB_STOP's answer

    def count(self, impacts: Iterable[str]) -> int:
        return sum(failure.impact in impacts for failure in self.failures)

    def blocking(self) -> list[Failure]:
        return [failure for failure in self.failures if failure.impact in BLOCKING]

    def line(self) -> str:
        counts = Counter(failure.impact for failure in self.failures)
        by_impact = ", ".join(f"{counts[impact]} {impact}" for impact in IMPACTS)
        tabs = sum(self.math_tab_stops.values())
        return f"{self.name}: {by_impact} (elements); {tabs} formulas in the Tab order"


def site_pages(site: Path) -> list[str]:
    """The HTML pages of a built book, as paths in ``site``, without vendored files and redirects."""
    paths = sorted(path for path in site.rglob("*.html") if "_static" not in path.relative_to(site).parts)
    return [str(path.relative_to(site)) for path in paths if REDIRECT not in path.read_text(encoding="utf-8")]


def failures(page_name: str, violations: list[dict]) -> list[Failure]:
    """The elements of axe's ``violations`` on one page, one :class:`Failure` each."""
    return [
        Failure(page_name, v["rule"], v["impact"], v["help"], node["target"], node["summary"])
        for v in violations
        for node in v["nodes"]
    ]


def open_page(page, url: str, axe: Path) -> None:
    """Open ``url`` in ``page``, wait for MathJax and the fonts, and inject axe-core."""
    page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT)
    page.evaluate(READY)
    page.add_script_tag(path=str(axe))


def check_pages(browser, site: Path, names: list[str], axe: Path = AXE) -> Report:
    """axe over the pages ``names`` (paths in ``site``) of a built book or of the decks' folder."""
    report = Report(site.name)
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    with serve(site) as base:
        for name in names:
            open_page(page, f"{base}/{name}", axe)
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            report.failures += failures(name, page.evaluate(RUN_AXE))
            report.math_tab_stops[name] = page.evaluate(MATH_TAB_STOPS)
            page.keyboard.press("Tab")
            report.first_tab_stops[name] = page.evaluate(FIRST_TAB_STOP)
    page.close()
    return report


def check_decks(browser, decks: Path, names: list[str], axe: Path = AXE) -> list[Report]:
    """axe over every slide of each deck ``names`` (``NN_name.html``) in ``decks``, all slides shown
    at once in reveal.js's print layout."""
    reports = []
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    with serve(decks) as base:
        for name in names:
            report = Report(name)
            open_page(page, f"{base}/{name}{PRINT_LAYOUT}", axe)
            page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=LOAD_TIMEOUT)
            slides, shown = page.evaluate(SHOW_EVERY_SLIDE)
            if shown != slides:
                raise RuntimeError(f"{name}: reveal.js's print layout shows {shown} of its {slides} slides")
            report.failures += failures(name, page.evaluate(RUN_AXE))
            report.math_tab_stops[name] = page.evaluate(MATH_TAB_STOPS)
            reports.append(report)
    page.close()
    return reports


def math_tab_stops_on_request(browser, folder: Path, name: str) -> tuple[int, int]:
    """Formulas in the Tab order on the page ``name`` of ``folder`` before and after the reader
    ticks *Include in Tab Order* in MathJax's menu (right-click a formula, *Accessibility*)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        with serve(folder) as base:
            page.goto(f"{base}/{name}", wait_until="load", timeout=LOAD_TIMEOUT)
            page.evaluate(READY)
            before = page.evaluate(MATH_TAB_STOPS)
            tick_include_in_tab_order(page)
            return before, page.evaluate(MATH_TAB_STOPS)
    finally:
        page.close()


def tick_include_in_tab_order(page, attempts: int = 3) -> None:
    """Right-click the first formula, open *Accessibility* and tick *Include in Tab Order*.

    The submenu closes and opens again when the pointer crosses another item on its way, which
    on a busy machine can detach the item under the click; the reader then simply tries again,
    and so does this (the menu is opened afresh each time).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for attempt in range(attempts):
        page.keyboard.press("Escape")
        page.locator("mjx-container:visible").first.click(button="right")
        page.get_by_role("menuitem", name="Accessibility").hover()
        item = page.get_by_role("menuitemcheckbox", name="Include in Tab Order")
        try:
            item.click(timeout=LOAD_TIMEOUT // attempts)
            return
        except PlaywrightTimeoutError:
            if attempt == attempts - 1:
                raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=Path, action="append", help="a built edition of the book (repeatable)")
    parser.add_argument("--slides", type=Path, help="the folder of the decks")
    parser.add_argument("--axe", type=Path, default=AXE)
    args = parser.parse_args(argv)
    editions = [ROOT / "build" / "book", ROOT / "build" / "book-student"]
    books = args.book if args.book or args.slides else editions
    if not args.axe.is_file():
        raise SystemExit(f"{args.axe} is missing: run `npm ci` in {ROOT} first")
    reports = []
    with chromium() as browser:
        for site in books:
            reports.append(check_pages(browser, site, site_pages(site), args.axe))
        if args.slides:
            reports.append(check_pages(browser, args.slides, ["index.html"], args.axe))
            names = sorted(path.name for path in args.slides.glob("[0-9][0-9]_*.html"))
            reports += check_decks(browser, args.slides, names, args.axe)
    for report in reports:
        print(report.line())
    for report in reports:
        for failure in report.blocking():
            print(failure)
    return 1 if any(report.blocking() for report in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
