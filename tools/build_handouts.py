"""Print the decks of ``make slides`` as PDF handouts, on A4 and on US Letter, offline.

    .venv/bin/python tools/build_handouts.py [--slides build/slides]
        [--student-slides build/slides-student] [--out build/handouts] [DECK …]

Each deck is printed by Chromium (reveal.js's ``?print-pdf`` layout, Playwright's ``page.pdf``) to
four files: ``NN_name-student-a4.pdf`` and ``-student-letter.pdf`` from the students' deck (made
from the student copies: no solution, no hidden answer, no speaker notes), ``-teacher-a4.pdf`` and
``-teacher-letter.pdf`` from the teacher's (every answer, and the instructor's notes under each
slide, their formulas typeset by MathJax).

The slides run down the page, each :data:`SLIDE_MM` mm wide, so a figure's smallest text, 18 px
on the 1280-px slide, prints at 7.5 pt or more; each slide's frame is as tall as what the slide
shows (reveal.js centres it on the slide; here it starts at the top), so short slides take little
room, and is labelled "slide 3 of 40". Under each slide come the tables of numbers of its figures
(folded on the slide, unfolded here, side by side where they are short; one too wide for the page
is named instead) and, in the teacher's edition, its notes; they run on to the next page where
they must, but a slide is never cut, so a page is blank at most below its last slide, where the
next one would not fit. Chromium paginates: this script only styles the page.

The folders are served by ``http.server`` on 127.0.0.1 (tools/slides_browser.py), and a deck that
requests anything from another host fails the build. It needs Debian's Chromium
(``/usr/bin/chromium``) and Playwright for Python (``make handouts`` installs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import slides_browser
from build_slides import HEIGHT, LEGIBLE_PX, ROOT, WIDTH


@dataclass(frozen=True)
class Paper:
    """A paper size: its name, and its width and height in CSS pixels (96 per inch)."""

    name: str
    width: float
    height: float


PAPERS = (Paper("A4", 210 / 25.4 * 96, 297 / 25.4 * 96), Paper("Letter", 8.5 * 96, 11 * 96))
EDITIONS = ("student", "teacher")  # the teacher's handout has every answer and the speaker notes
SLIDE_MM = 189  # the printed slide's width: 18 px on the slide print at 7.53 pt
MARGIN_MM = 6  # above and below the page's content, and at its sides at least
GAP_MM = 3  # between one slide's block and the next
LEAST_PX = 160  # the least height of a printed slide, in px of the slide (a slide is 720)
PX_PER_MM = 96 / 25.4
PT_PER_PX = 72 / 96

# Typeset the speaker notes that reveal.js copied under each page (MathJax skips the notes on the
# slides themselves: the template's ignoreHtmlClass).
TYPESET_NOTES = """() => MathJax.typesetPromise([...document.querySelectorAll('.speaker-notes-pdf')])
    .then(() => document.fonts.ready).then(() => true)"""
# Each of reveal.js's print pages becomes a block in the flow of the page: a frame holding the slide
# (never cut between pages) as tall as what the slide shows, labelled "slide 3 of 40", then the
# figures' tables unfolded and (teacher) the notes.
BLOCKS = """({notes, slideHeight, least}) => {
    const pages = [...document.querySelectorAll('.reveal .slides .pdf-page')];
    for (const [index, page] of pages.entries()) {
        const frame = document.createElement('div');
        frame.className = 'handout-frame';
        const shown = page.querySelector('section').offsetHeight;  // reveal.js centres it on the slide
        frame.dataset.height = String(Math.min(slideHeight, Math.max(least, shown + 40)));
        const label = page.querySelector('.slide-number-pdf');
        if (label) label.textContent = `slide ${index + 1} of ${pages.length}`;
        frame.append(...[...page.children].filter((el) => !el.classList.contains('speaker-notes-pdf')));
        const below = document.createElement('div');
        below.className = 'handout-below';
        for (const table of frame.querySelectorAll('section details')) {
            const copy = table.cloneNode(true);
            copy.open = true;
            below.appendChild(copy);
        }
        for (const note of page.querySelectorAll(':scope > .speaker-notes-pdf')) {
            if (notes) below.appendChild(note);
            else note.remove();
        }
        page.append(frame, below);
    }
    return pages.length;
}"""
# The page's style for one paper: the slide scaled to `slide` px wide in a frame of its size.
STYLE = """({width, height, margin, side, gap, slide, slideWidth, slideHeight}) => {
    const scale = slide / slideWidth;
    let style = document.getElementById('handout-style');
    if (!style) {
        style = document.createElement('style');
        style.id = 'handout-style';
        document.head.appendChild(style);
    }
    // (html.print-pdf: as specific as reveal.js's print rules, and after them)
    const P = 'html.print-pdf';
    style.textContent = `
        @page { size: ${width}px ${height}px; margin: ${margin}px ${side}px; }
        ${P}, ${P} body, ${P} .reveal, ${P} .reveal .slides { width: ${slide}px !important;
            height: auto !important; overflow: visible !important; }
        ${P} .reveal .slides .pdf-page { width: ${slide}px !important; height: auto !important;
            overflow: visible !important; break-after: auto !important; page-break-after: auto !important;
            padding-bottom: ${gap}px; }
        ${P} .handout-frame { position: relative; width: ${slide}px; overflow: hidden;
            break-inside: avoid; border: 1px solid #999; box-sizing: border-box; }
        ${P} .reveal .slides .handout-frame > section { left: 0 !important; top: 0 !important;
            zoom: ${scale}; }
        ${P} .reveal .slides .handout-frame > .slide-background { display: none !important; }
        ${P} .reveal .slides .handout-frame > .slide-number-pdf { left: auto !important; top: auto !important;
            right: 6px !important; bottom: 4px !important; font-size: 10px; }
        ${P} .handout-below { font-size: 13px; line-height: 1.35; color: #222; text-align: left;
            padding-top: 4px; }
        ${P} .handout-below .speaker-notes-pdf { position: static !important; display: block !important;
            width: auto !important; background: none !important; color: inherit !important;
            padding: 0 !important; margin: 0 0 8px !important; font-size: inherit !important;
            border: 0 !important; }
        ${P} .handout-below .speaker-notes-pdf :is(p, ul, ol, li, code) { font-size: 13px;
            line-height: 1.35; margin-top: 0; margin-bottom: 3px; }
        ${P} .handout-below .speaker-notes-pdf :is(ul, ol) { margin-left: 1.4em; padding: 0; }
        ${P} .handout-below .speaker-notes-pdf::before { position: static !important; display: block;
            font-weight: bold; font-size: 13px; color: inherit; opacity: 1; margin-bottom: 2px; }
        ${P} .handout-below details > summary { font-weight: bold; list-style: none; font-size: 10px; }
        ${P} .handout-below details.side-by-side { display: inline-block; vertical-align: top;
            margin-right: 16px; }
        ${P} .handout-below table { font-size: 10px; border-collapse: collapse; margin: 1px 0 4px; }
        ${P} .handout-below tr { break-inside: avoid; }
        ${P} .handout-below mjx-assistive-mml { display: none !important; }
        ${P} .handout-below pre { white-space: pre-wrap; overflow-wrap: anywhere; box-sizing: border-box;
            max-width: 100%; }
        ${P} .handout-below th, ${P} .handout-below td { border: 1px solid #bbb; padding: 0 3px;
            line-height: 1.2; }
    `;
    for (const frame of document.querySelectorAll('.handout-frame')) {
        frame.style.height = `${frame.dataset.height * scale}px`;
    }
    // A table wider than the slide is set smaller, down to 3/4 of its size; one that still would not
    // fit (wider than the page, it would shrink the whole page) is named instead: it is in the lesson.
    // (text does not shrink quite in proportion: each zoom is measured); a formula is set smaller
    // until it fits
    const fit = (element, least) => {
        element.style.zoom = '';
        let zoom = Math.floor((100 * slide) / element.getBoundingClientRect().width);
        while (zoom < 100 && zoom >= least) {
            element.style.zoom = String(zoom / 100);
            if (element.getBoundingClientRect().width <= slide) break;
            zoom -= 1;
        }
        return zoom >= least;
    };
    document.querySelectorAll('.handout-below mjx-container').forEach((formula) => fit(formula, 1));
    for (const table of document.querySelectorAll('.handout-below table')) {
        if (fit(table, 75)) continue;
        const note = document.createElement('p');
        const rows = table.querySelectorAll('tbody tr').length;
        const columns = table.querySelector('tr').children.length;
        const caption = table.caption ? `${table.caption.textContent}: ` : '';
        note.textContent = `${caption}a table of ${rows} rows and ${columns} columns, too wide for `
            + 'this page; it is under the figure in the lesson and in the book.';
        table.replaceWith(note);
    }
    // tables shorter than half a page sit side by side, as words do in a line
    for (const details of document.querySelectorAll('.handout-below details')) {
        details.classList.remove('side-by-side');
        const short = details.getBoundingClientRect().height < (height - 2 * margin) / 2;
        details.classList.toggle('side-by-side', short);
    }
    return document.querySelector('.handout-frame').getBoundingClientRect().width;
}"""


def handout_name(deck: str, edition: str, paper: Paper) -> str:
    """The file name of a handout: ``NN_name-student-a4.pdf``."""
    return f"{deck}-{edition}-{paper.name.lower()}.pdf"


def figure_text_pt(slide_px: float) -> float:
    """The size in points of the smallest text a slide's figure may have (18 px on the slide,
    ``build_slides.LEGIBLE_PX``) on a slide printed ``slide_px`` CSS pixels wide."""
    return LEGIBLE_PX * slide_px / WIDTH * PT_PER_PX


def pages(pdf: Path) -> int:
    """How many pages a PDF that Chromium printed has."""
    return len(re.findall(rb"/Type /Page\b", pdf.read_bytes()))


def page_style(paper: Paper) -> dict[str, float]:
    """The arguments of :data:`STYLE` for ``paper``: the slide :data:`SLIDE_MM` wide, centred."""
    slide = SLIDE_MM * PX_PER_MM
    side = (paper.width - slide) / 2
    if side < MARGIN_MM * PX_PER_MM:
        raise ValueError(f"a slide {SLIDE_MM} mm wide leaves {paper.name} too narrow a margin")
    return {
        "width": paper.width,
        "height": paper.height,
        "margin": MARGIN_MM * PX_PER_MM,
        "side": side,
        "gap": GAP_MM * PX_PER_MM,
        "slide": slide,
        "slideWidth": WIDTH,
        "slideHeight": HEIGHT,
    }


def print_deck(
    browser, base: str, deck: str, out: Path, edition: str, papers: tuple[Paper, ...] = PAPERS
) -> dict[str, float]:
    """Print ``deck`` (served at ``base``: the teacher's or the students' deck, as ``edition`` says)
    to its handouts of that edition on ``papers`` in ``out``; the printed slide's width in CSS px,
    by file name.

    Raises RuntimeError when the deck requests anything from another host or throws.
    """
    widths = {}
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.set_default_timeout(slides_browser.LOAD_TIMEOUT)
    outside: list[str] = []
    errors: list[str] = []
    context.on(
        "request",
        lambda r: slides_browser.leaves_localhost(r.url) and outside.append(r.url),
    )
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(error.message))
    try:
        notes = edition == "teacher"
        page.goto(f"{base}/{deck}.html?print-pdf{'&notes' if notes else ''}")
        page.wait_for_function(slides_browser.LOADED)
        page.evaluate(slides_browser.TYPESET)
        page.wait_for_function("() => document.documentElement.dataset.pdfReady === 'true'")
        if notes:
            page.evaluate(TYPESET_NOTES)
        page.evaluate(BLOCKS, {"notes": notes, "slideHeight": HEIGHT, "least": LEAST_PX})
        for paper in papers:
            name = handout_name(deck, edition, paper)
            widths[name] = page.evaluate(STYLE, page_style(paper))
            page.pdf(path=out / name, prefer_css_page_size=True, print_background=True)
    finally:
        context.close()
    if outside or errors:
        raise RuntimeError(f"{deck} ({edition}): requests to other hosts {outside}, errors {errors}")
    return widths


def build(slides: Path, student_slides: Path, out: Path, decks: list[str] | None = None) -> dict[str, float]:
    """Print the decks (all, or those named) of ``slides`` (the teacher's) and ``student_slides`` to
    ``out``; the printed slide's width in CSS px, by file name."""
    folders = {"teacher": slides, "student": student_slides}
    decks = decks or sorted(path.stem for path in slides.glob("[0-9][0-9]_*.html"))
    missing = [
        f"{folder}/{deck}.html"
        for folder in folders.values()
        for deck in decks
        if not (folder / f"{deck}.html").is_file()
    ]
    if not decks or missing:
        raise FileNotFoundError(f"no decks {missing or slides}: run `make slides` first")
    out.mkdir(parents=True, exist_ok=True)
    widths = {}
    with slides_browser.chromium() as browser:
        for edition, folder in folders.items():
            with slides_browser.serve(folder) as base:
                for deck in decks:
                    widths |= print_deck(browser, base, deck, out, edition)
    return widths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("decks", nargs="*", help="deck names (01_embeddings …); every deck if none")
    parser.add_argument("--slides", type=Path, default=ROOT / "build" / "slides")
    parser.add_argument("--student-slides", type=Path, default=ROOT / "build" / "slides-student")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handouts")
    args = parser.parse_args(argv)
    widths = build(args.slides, args.student_slides, args.out, args.decks)
    for name in sorted(widths):
        print(f"{name}: {pages(args.out / name)} pages, slides {widths[name] / PX_PER_MM:.0f} mm wide")
    print(f"figure text at least {min(map(figure_text_pt, widths.values())):.2f} pt on paper")
    print(f"wrote the handouts to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
