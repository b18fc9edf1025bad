"""Print the decks of ``make slides`` as PDF handouts, on A4 and on US Letter, offline.

    .venv/bin/python tools/build_handouts.py [--slides build/slides] [--out build/handouts] [DECK …]

Each deck (every ``NN_name.html`` of the slides folder, or those named) is opened in Chromium with
reveal.js's ``?print-pdf`` layout and printed with Playwright's ``page.pdf`` to four files:
``NN_name-student-a4.pdf``, ``NN_name-student-letter.pdf``, ``NN_name-teacher-a4.pdf`` and
``NN_name-teacher-letter.pdf``. A page is one slide, portrait: the slide across the page's width
at the top (a 1280-px slide is 174 mm wide on A4, its figures' text, 18 px or more on the slide,
about 7.5 pt or more on paper), and under it the tables of numbers of the figures on it, unfolded
(they are folded on the slide), and in the teacher's edition the slide's speaker notes from the
instructor's guide, their formulas typeset by MathJax. There is no blank page: as many pages as
slides. What does not fit under a slide is set smaller until it does.

The folder is served by ``http.server`` on 127.0.0.1 (tools/slides_browser.py), and a deck that
requests anything from another host fails the build: a deck loads reveal.js, MathJax and their
fonts from its ``static/`` folder. It needs Debian's Chromium (``/usr/bin/chromium``) and
Playwright for Python.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import slides_browser
from build_slides import HEIGHT, ROOT, WIDTH


@dataclass(frozen=True)
class Paper:
    """A paper size: its name, and its width and height in CSS pixels (96 per inch)."""

    name: str
    width: float
    height: float


PAPERS = (Paper("A4", 210 / 25.4 * 96, 297 / 25.4 * 96), Paper("Letter", 8.5 * 96, 11 * 96))
EDITIONS = ("student", "teacher")  # the teacher's handout has the speaker notes
MARGIN = 40  # CSS px (about 10.6 mm) around the slide and what is under it
GAP = 16  # CSS px between the slide and what is under it

# Typeset the speaker notes that reveal.js copied under each page (MathJax skips the notes on the
# slides themselves: the template's ignoreHtmlClass).
TYPESET_NOTES = """() => MathJax.typesetPromise([...document.querySelectorAll('.speaker-notes-pdf')])
    .then(() => document.fonts.ready).then(() => true)"""
# Lay each of reveal.js's print pages out on one sheet of paper: the slide scaled to the width
# inside the margins, under it the figures' tables unfolded and (teacher) the notes, shrunk to fit.
LAYOUT = """({width, height, margin, gap, slideWidth, slideHeight, notes}) => {
    const scale = (width - 2 * margin) / slideWidth;
    const pageHeight = Math.floor(height) - 1;  // no sliver of a page spills onto a blank one
    let style = document.getElementById('handout-style');
    if (!style) {
        style = document.createElement('style');
        style.id = 'handout-style';
        document.head.appendChild(style);
    }
    // (html.print-pdf: as specific as reveal.js's print rules, and after them)
    const P = 'html.print-pdf';
    style.textContent = `
        @page { size: ${width}px ${height}px; margin: 0; }
        ${P}, ${P} body, ${P} .reveal, ${P} .reveal .slides { width: ${width}px !important;
            height: auto !important; overflow: visible !important; }
        ${P} .reveal .slides .pdf-page { width: ${width}px !important; height: ${pageHeight}px !important;
            position: relative; overflow: hidden; break-after: page; break-inside: avoid; }
        ${P} .reveal .slides .pdf-page:last-child { break-after: auto; }
        ${P} .reveal .slides .pdf-page > section { left: ${margin}px !important; top: ${margin}px !important;
            transform: scale(${scale}) !important; transform-origin: 0 0 !important; }
        ${P} .handout-frame { position: absolute; left: ${margin}px; top: ${margin}px;
            width: ${slideWidth * scale}px; height: ${slideHeight * scale}px; border: 1px solid #999;
            box-sizing: border-box; pointer-events: none; }
        ${P} .handout-below { position: absolute; left: ${margin}px; width: ${width - 2 * margin}px;
            top: ${margin + slideHeight * scale + gap}px; font-size: 13px; line-height: 1.35;
            color: #222; text-align: left; }
        ${P} .handout-below .speaker-notes-pdf { position: static !important; display: block !important;
            width: auto !important; background: none !important; color: inherit !important;
            padding: 0 !important; margin: 0 0 8px !important; font-size: inherit !important;
            border: 0 !important; }
        ${P} .handout-below .speaker-notes-pdf :is(p, ul, ol, li, code) { font-size: 13px;
            line-height: 1.35; margin-top: 0; margin-bottom: 3px; }
        ${P} .handout-below .speaker-notes-pdf :is(ul, ol) { margin-left: 1.4em; padding: 0; }
        ${P} .handout-below .speaker-notes-pdf::before { position: static !important; display: block;
            font-weight: bold; font-size: 13px; color: inherit; opacity: 1; margin-bottom: 2px; }
        ${P} .handout-below details > summary { font-weight: bold; list-style: none; }
        ${P} .handout-below table { font-size: 11px; border-collapse: collapse; margin: 4px 0 8px; }
        ${P} .handout-below th, ${P} .handout-below td { border: 1px solid #bbb; padding: 1px 5px; }
        ${P} .reveal .slides .pdf-page .slide-number-pdf { left: auto !important;
            right: ${margin}px !important; bottom: ${margin / 2}px !important; top: auto !important; }
    `;
    const room = pageHeight - (margin + slideHeight * scale + gap) - margin;
    for (const page of document.querySelectorAll('.reveal .slides .pdf-page')) {
        page.querySelectorAll('.handout-frame, .handout-below').forEach((el) => {
            if (el.classList.contains('handout-below')) {
                el.querySelectorAll('.speaker-notes-pdf').forEach((n) => page.appendChild(n));
            }
            el.remove();
        });
        const frame = document.createElement('div');
        frame.className = 'handout-frame';
        const below = document.createElement('div');
        below.className = 'handout-below';
        for (const table of page.querySelectorAll('section details')) {
            const copy = table.cloneNode(true);
            copy.open = true;
            below.appendChild(copy);
        }
        for (const note of page.querySelectorAll(':scope > .speaker-notes-pdf')) {
            if (notes) below.appendChild(note);
            else note.style.display = 'none';
        }
        page.append(frame, below);
        below.style.zoom = below.scrollHeight > room ? String(room / below.scrollHeight) : '1';
    }
    return document.querySelectorAll('.reveal .slides .pdf-page').length;
}"""


def handout_name(deck: str, edition: str, paper: Paper) -> str:
    """The file name of a handout: ``NN_name-student-a4.pdf``."""
    return f"{deck}-{edition}-{paper.name.lower()}.pdf"


def print_deck(
    browser, base: str, deck: str, out: Path, papers: tuple[Paper, ...] = PAPERS
) -> dict[str, int]:
    """Print ``deck`` (served at ``base``) to its handouts in ``out``; the pages each has, by file name.

    Raises RuntimeError when the deck requests anything from another host or throws.
    """
    names = {}
    for edition in EDITIONS:
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        context.set_default_timeout(slides_browser.LOAD_TIMEOUT)
        outside: list[str] = []
        errors: list[str] = []
        context.on(
            "request",
            lambda r, outside=outside: slides_browser.leaves_localhost(r.url) and outside.append(r.url),
        )
        page = context.new_page()
        page.on("pageerror", lambda error, errors=errors: errors.append(error.message))
        try:
            notes = "&notes" if edition == "teacher" else ""
            page.goto(f"{base}/{deck}.html?print-pdf{notes}")
            page.wait_for_function(slides_browser.LOADED)
            page.evaluate(slides_browser.TYPESET)
            page.wait_for_function("() => document.documentElement.dataset.pdfReady === 'true'")
            if edition == "teacher":
                page.evaluate(TYPESET_NOTES)
            for paper in papers:
                size = {"width": paper.width, "height": paper.height, "margin": MARGIN, "gap": GAP}
                size |= {"slideWidth": WIDTH, "slideHeight": HEIGHT, "notes": edition == "teacher"}
                count = page.evaluate(LAYOUT, size)
                name = handout_name(deck, edition, paper)
                page.pdf(
                    path=out / name,
                    width=f"{paper.width}px",
                    height=f"{paper.height}px",
                    print_background=True,
                )
                names[name] = count
        finally:
            context.close()
        if outside or errors:
            raise RuntimeError(f"{deck}: requests to other hosts {outside}, errors {errors}")
    return names


def build(slides: Path, out: Path, decks: list[str] | None = None) -> dict[str, int]:
    """Print the decks of ``slides`` (all, or those named) to ``out``; the pages of each handout."""
    decks = decks or sorted(path.stem for path in slides.glob("[0-9][0-9]_*.html"))
    missing = [deck for deck in decks if not (slides / f"{deck}.html").is_file()]
    if not decks or missing:
        raise FileNotFoundError(f"{slides} has no decks {missing or ''}: run `make slides` first")
    out.mkdir(parents=True, exist_ok=True)
    pages = {}
    with slides_browser.chromium() as browser, slides_browser.serve(slides) as base:
        for deck in decks:
            pages |= print_deck(browser, base, deck, out)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("decks", nargs="*", help="deck names (01_embeddings …); every deck if none")
    parser.add_argument("--slides", type=Path, default=ROOT / "build" / "slides")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handouts")
    args = parser.parse_args(argv)
    for name, count in build(args.slides, args.out, args.decks).items():
        print(f"{name}: {count} pages")
    print(f"wrote the handouts to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
