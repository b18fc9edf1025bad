"""Open the decks of ``make slides`` in Chromium and measure every slide, as a presenter shows it.

Used by ``tests/site/test_slides.py``. A folder of decks is served by ``http.server`` on 127.0.0.1; each
deck is opened in a 1280×720 page, MathJax is let finish, then every slide and sub-slide is shown
in turn through reveal.js's API and its content box is measured at reveal's unscaled size
(``scrollWidth``, ``scrollHeight``), along with every element inside it that shows a scrollbar or
hides what overflows it, the lines of code it shows, and each image's natural and drawn width and
dpi (the PNG's pHYs chunk), from which :meth:`Slide.text_px` gives the size of its text. The
page's console errors, uncaught errors and every request that leaves 127.0.0.1 are recorded.

It needs Debian's Chromium (``/usr/bin/chromium``) and Playwright for Python (requirements-test.txt).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from build_slides import FONT_PT, HEIGHT, WIDTH

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOAD_TIMEOUT = 60_000  # ms: a deck loaded, reveal.js ready, MathJax done

# reveal.js ready, MathJax's first typesetting done, every font loaded.
LOADED = "() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.startup?.promise"
TYPESET = "() => MathJax.startup.promise.then(() => document.fonts.ready).then(() => true)"
# Every slide in turn: its place, its size, what scrolls or clips, its heading, notes and math.
MEASURE = """async () => {
    // (MathJax clips parts of its formulas on purpose: stretched delimiters, the copy for screen readers)
    const overflows = (el) => {
        if (el.closest('mjx-container')) return false;
        const style = getComputedStyle(el);
        const x = style.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1;
        const y = style.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1;
        return x || y;
    };
    const describe = (el) => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className)
        .trim().split(/\\s+/).join('.') : '');
    // the text of an element without the nodes that match `drop`
    const textOf = (el, drop) => {
        const copy = el.cloneNode(true);
        copy.querySelectorAll(drop).forEach((node) => node.remove());
        return copy.textContent;
    };
    // the slide's Markdown without code, speaker notes and typeset math (TeX left over shows)
    const prose = (slide) => [...slide.querySelectorAll('.jp-RenderedMarkdown')]
        .filter((el) => !el.closest('aside'))
        .map((el) => textOf(el, 'code, pre, script, mjx-container')).join('\\n');
    // the dots per inch of a PNG given as a data: URL (its pHYs chunk, before the image data)
    const dpiOf = (src) => {
        const prefix = 'data:image/png;base64,';
        if (!src.startsWith(prefix)) return null;
        const bytes = atob(src.slice(prefix.length, prefix.length + 4096));
        const word = (at) => ((bytes.charCodeAt(at) << 24) | (bytes.charCodeAt(at + 1) << 16)
            | (bytes.charCodeAt(at + 2) << 8) | bytes.charCodeAt(at + 3)) >>> 0;
        for (let at = 8; at + 8 <= bytes.length; at += 12 + word(at)) {
            const type = bytes.slice(at + 4, at + 8);
            if (type === 'pHYs') return bytes.charCodeAt(at + 16) === 1 ? word(at + 8) * 0.0254 : null;
            if (type === 'IDAT') return null;
        }
        return null;
    };
    const shown = (el) => !el.closest('aside') && el.offsetWidth > 0;
    // lines of code as drawn, long lines wrapped
    const codeLines = (slide) => [...slide.querySelectorAll('.jp-InputArea-editor pre')].filter(shown)
        .map((pre) => {
            const style = getComputedStyle(pre);
            const inner = pre.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
            return Math.round(inner / parseFloat(style.lineHeight));
        }).reduce((a, b) => a + b, 0);
    const slides = [];
    const horizontal = Reveal.getHorizontalSlides();
    for (let h = 0; h < horizontal.length; h++) {
        const count = Math.max(horizontal[h].querySelectorAll(':scope > section').length, 1);
        for (let v = 0; v < count; v++) {
            Reveal.slide(h, v);
            await document.fonts.ready;
            const slide = Reveal.getCurrentSlide();
            const heading = slide.querySelector('h1, h2');
            const cell = slide.querySelector('.jp-Cell');
            slides.push({
                h, v,
                cell: cell ? cell.id.replace('cell-id=', '') : '',
                width: slide.scrollWidth,
                height: slide.scrollHeight,
                scrollbars: [...slide.querySelectorAll('*')].filter(overflows).map(describe),
                heading: heading ? textOf(heading, 'a.anchor-link, mjx-container').trim() : '',
                notes: [...slide.querySelectorAll('aside.notes')].map((el) => el.textContent).join('\\n'),
                prose: prose(slide),
                math: slide.querySelectorAll('mjx-container').length,
                figures: [...slide.querySelectorAll('img')].filter(shown).map((img) => ({
                    natural_width: img.naturalWidth, width: img.offsetWidth, dpi: dpiOf(img.src),
                })),
                code_lines: codeLines(slide),
            });
        }
    }
    return slides;
}"""


@dataclass(frozen=True)
class Slide:
    """One slide or sub-slide of a deck, measured."""

    h: int
    v: int
    cell: str  # the id of its first cell (a piece of a cut cell: the lesson cell's id, a suffix added)
    width: int
    height: int
    scrollbars: list[str]  # elements on it that scroll or clip what overflows them
    heading: str
    notes: str
    prose: str  # the slide's Markdown text, without code, notes and typeset math
    math: int  # how many formulas MathJax typeset on it
    figures: list[dict]  # each image on it: natural_width, width (as drawn, unscaled px), dpi (None: unknown)
    code_lines: int  # lines of code on it as drawn (a long line wrapped counts as its lines)

    def text_px(self, figure: dict) -> float:
        """The size in slide pixels at which ``figure``'s text is drawn: the figures' font size
        (``build_slides.FONT_PT`` points at the PNG's dpi) times its scale on the slide."""
        return FONT_PT * figure["dpi"] / 72 * figure["width"] / figure["natural_width"]

    @property
    def fits(self) -> bool:
        """Whether the slide fits 1280×720 with nothing on it that scrolls or clips."""
        return self.width <= WIDTH and self.height <= HEIGHT and not self.scrollbars

    def where(self) -> str:
        return f"slide {self.h + 1}.{self.v + 1} ({self.heading or 'no heading'}), from cell {self.cell}"


@dataclass
class Deck:
    """A deck opened in a page: its slides, and what went wrong while it loaded and was shown."""

    slides: list[Slide]
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # requests to anywhere but 127.0.0.1


@contextlib.contextmanager
def serve(folder: str | Path) -> Iterator[str]:
    """``folder`` served by http.server on a free port on 127.0.0.1; yields its base URL."""

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    class QuietServer(http.server.ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            if not isinstance(sys.exc_info()[1], ConnectionError):  # not a page closed mid-load
                super().handle_error(request, client_address)

    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Debian's Chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def leaves_localhost(url: str) -> bool:
    """Whether a request to ``url`` would leave this machine (data: and blob: URLs do not)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme not in ("data", "blob") and parts.hostname != "127.0.0.1"


def measure(browser, url: str) -> Deck:
    """Open the deck at ``url`` in a 1280×720 page and measure every slide of it."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.set_default_timeout(LOAD_TIMEOUT)
    deck = Deck(slides=[])
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and deck.console_errors.append(f"{m.text} ({m.location})"))
    page.on("pageerror", lambda error: deck.page_errors.append(error.message))
    context.on("request", lambda r: leaves_localhost(r.url) and deck.outside.append(r.url))
    try:
        page.goto(url)
        page.wait_for_function(LOADED, timeout=LOAD_TIMEOUT)
        page.evaluate(TYPESET)
        deck.slides = [Slide(**slide) for slide in page.evaluate(MEASURE)]
    finally:
        context.close()
    return deck
