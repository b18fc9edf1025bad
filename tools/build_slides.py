"""Build one reveal.js deck per lesson, and an index page, that work offline.

    .venv/bin/python tools/build_slides.py [--out build/slides] [--guide FILE] notebooks/*.ipynb

Each committed lesson becomes ``NN_name.html`` through nbconvert's SlidesExporter and the template
``tools/nbconvert_templates/attnlib_slides``; the deck is 1280×720. A slide starts at the lesson's
first cell and at every cell that starts with a ``## `` heading. Where a section is too tall for
one slide (``tests/site/test_slides.py`` names the slide and its first cell), the lesson says where to
cut it, in the cells' ``slideshow`` metadata:
- ``"slide_type": "subslide"`` starts a sub-slide at that cell (JupyterLab: the property
  inspector's *Slide Type*);
- ``"cut_lines": [20]`` starts one at line 20 (counted from 0) of a cell too tall by itself, and
  ``"cut_outputs": [0]`` at its first output (after its code); a cut before a ``## `` line starts
  a slide.

In the deck, not in the lesson, so that a room can read it:
- a code slide shows at most ``MAX_CODE_LINES`` (12) lines of code: a longer cell is cut before a
  statement (a top-level one where it can), and a cell that would take a slide past 12 lines
  starts a sub-slide;
- every figure is a sub-slide of its own, scaled to fill it; its smallest text, the figure's
  font size (``attention_lessons.kit.plots.styles``) at the PNG's dpi, is at least ``LEGIBLE_PX`` (18 px on
  the 1280×720 slide). A figure too large for that is split into pieces where it is blank
  between its panels (a piece per sub-slide, the first carrying the text alternative); its
  folded table of numbers stays under the last piece;
- an explorer's cell (its widget has no state in a committed lesson) becomes one line that names
  the explorer and where to move it live; the same picture, drawn statically, sits just above it;
- the instructor's guide adds speaker notes (nbconvert's cells of slide type ``notes``): its part
  of the lesson up to "Where to pause" on the title slide, and each pause on the slide of the
  heading it names. Press S in a deck for the speaker view.

Every script, style sheet and font a deck loads comes from ``static/`` next to it, copied from the
exact npm versions of package-lock.json: reveal.js 4 (with its notes plugin) and MathJax 3. The
script fails when a deck would load anything from another host, or when the guide pauses at a
heading its lesson lacks.
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import html
import io
import itertools
import math
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
from build_book import MATHJAX, ROOT, WIDGET_VIEW, Asset, external_urls
from nbconvert import SlidesExporter
from PIL import Image
from traitlets.config import Config

from attention_lessons.kit.plots.styles import STYLES

GUIDE = ROOT / "docs" / "instructor_guide.md"
STATIC = "static"
WIDTH, HEIGHT = 1280, 720
MAX_CODE_LINES = 12  # lines of code on one slide
LEGIBLE_PX = 18  # px on the 1280×720 slide: the smallest a figure's text may be drawn
FONT_PT = float(STYLES["light"]["font.size"])  # the text size of the course's figures
# Where a figure's sub-slide has room for it: the slide less the output prompt's column and the
# line of its folded table (static/deck.css takes every margin off a figure's sub-slide)
FIGURE_BOX = (1180, 690)
FIGURE_TAG = "slide-figure"  # the tag of a figure's sub-slide (nbconvert's class celltag_slide-figure)
THEME = "white"  # its fonts are in the package (the default, "simple", imports Google's)
ASSETS = (
    *(
        Asset("reveal.js", part, f"reveal.js/{part}")
        for part in ("dist/reveal.js", "dist/reveal.css", f"dist/theme/{THEME}.css", "dist/theme/fonts")
    ),
    Asset("reveal.js", "plugin/notes/notes.js", "reveal.js/plugin/notes/notes.js"),
    *MATHJAX,
)
EXPORTER_CONFIG = {
    "reveal_url_prefix": f"{STATIC}/reveal.js",
    "reveal_theme": THEME,
    "reveal_width": str(WIDTH),
    "reveal_height": str(HEIGHT),
    "reveal_number": "c/t",
    "mathjax_url": f"{STATIC}/mathjax/tex-chtml.js",
    "extra_template_basedirs": [str(ROOT / "tools" / "nbconvert_templates")],
    "template_name": "attnlib_slides",
}
LIVE = (
    "**Live:** {summary}. Move it in JupyterLab (`make lab`) or on this lesson's page of the book "
    "(`make book`); the picture above is the same explorer, drawn statically."
)
LESSON_LINK = re.compile(r"""href="(?![a-z][a-z0-9+.-]*:)([^"#/]+)\.ipynb""")
PART = re.compile(r"^### (\d\d) · .*\n((?:(?!#{1,3} ).*\n)*)", re.MULTILINE)
PAUSE = re.compile(r'- \*\*At "(.+?)"\*\*:\s*(.*)', re.DOTALL)


def lesson_notes(guide: str) -> dict[str, tuple[str, dict[str, str]]]:
    """The speaker notes of every lesson part of the guide's text, keyed by "00", "01", …: the part
    up to ``#### Where to pause`` (its title slide's notes), and each pause's text by its heading.

    Raises ValueError naming the lesson and the item when a pause is not ``- **At "Heading"**: …``.
    """
    notes = {}
    for number, body in PART.findall(guide):
        title, _, pauses = body.partition("#### Where to pause\n")
        items = re.split(r"\n(?=\S)", pauses.strip()) if pauses.strip() else []
        matches = [PAUSE.fullmatch(item) for item in items]
        for item, match in zip(items, matches, strict=True):
            if match is None:
                raise ValueError(
                    f'lesson {number}: a pause reads - **At "Heading"**: what to ask; found {item!r}'
                )
        notes[number] = (title.strip(), {m[1]: re.sub(r"\n  ", "\n", m[2]) for m in matches})
    return notes


def explorer_summary(cell: nbformat.NotebookNode) -> str | None:
    """The one-line summary of the explorer that ``cell`` shows, or None if it shows none."""
    for output in cell.get("outputs", []):
        if WIDGET_VIEW in output.get("data", {}):
            return output["data"]["text/plain"].split(" (interactive:")[0]
    return None


def notes_cell(text: str, cell_id: str) -> nbformat.NotebookNode:
    """A Markdown cell that nbconvert turns into the speaker notes of the slide it sits on."""
    cell = nbformat.v4.new_markdown_cell(text, metadata={"slideshow": {"slide_type": "notes"}})
    cell.id = cell_id
    return cell


def headings(cell: nbformat.NotebookNode) -> list[str]:
    """The ``## `` headings of a Markdown cell, without the ``## ``."""
    lines = cell.source.splitlines() if cell.cell_type == "markdown" else []
    return [line[3:].strip() for line in lines if line.startswith("## ")]


def pieces(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """``cell`` cut where its ``slideshow`` metadata's ``cut_lines`` and ``cut_outputs`` say: a cell
    per piece, each but the first starting a sub-slide (a slide if it starts with a ``## `` line)."""
    slideshow = cell.metadata.get("slideshow", {})
    lines, outputs = cell.source.splitlines(), cell.get("outputs", [])
    line_cuts, output_cuts = slideshow.get("cut_lines", []), slideshow.get("cut_outputs", [])
    if line_cuts != sorted(set(line_cuts)) or not all(0 < n < len(lines) for n in line_cuts):
        raise ValueError(
            f"cell {cell.id}: cut_lines {line_cuts} must rise, each inside its {len(lines)} lines"
        )
    if output_cuts != sorted(set(output_cuts)) or not all(0 <= n < len(outputs) for n in output_cuts):
        raise ValueError(
            f"cell {cell.id}: cut_outputs {output_cuts} must rise, each below its {len(outputs)} outputs"
        )
    line_ends, output_ends = [0, *line_cuts, len(lines)], [0, *output_cuts, len(outputs)]
    result = []
    for index, (start, end) in enumerate(itertools.pairwise(line_ends)):
        piece = copy.deepcopy(cell)
        piece.source = "\n".join(lines[start:end])
        if index:
            piece.id, piece.metadata = f"{cell.id}-{index}", {"slideshow": {"slide_type": "subslide"}}
        if cell.cell_type == "code":
            piece.outputs = outputs[: output_ends[1]] if end == len(lines) else []
        result.append(piece)
    if cell.cell_type == "code":
        for index, (start, end) in enumerate(itertools.pairwise(output_ends[1:]), start=1):
            transient = {"transient": {"remove_source": True}, "slideshow": {"slide_type": "subslide"}}
            piece = nbformat.v4.new_code_cell(cell.source, metadata=transient, outputs=outputs[start:end])
            piece.id, piece.execution_count = f"{cell.id}-out{index}", cell.execution_count
            result.append(piece)
    for piece in result[1:]:
        if piece.source.startswith("## "):
            piece.metadata.slideshow.slide_type = "slide"
    return result


def statement_starts(source: str) -> tuple[set[int], set[int]]:
    """The lines (counted from 0) where the statements of ``source`` start, with the comments and
    decorators right above them: (top-level ones, all). Empty sets where it is not Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(), set()
    lines = source.splitlines()

    def start(node: ast.stmt) -> int:
        line = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while line > 0 and lines[line - 1].strip().startswith("#"):
            line -= 1
        return line

    top = {start(node) for node in tree.body}
    every = top | {start(node) for node in ast.walk(tree) if isinstance(node, ast.stmt)}
    return top, every


def code_cuts(source: str, limit: int = MAX_CODE_LINES) -> list[int]:
    """Where to cut ``source`` so that no piece has more than ``limit`` lines: before a top-level
    statement where one is in reach, else before any statement, else at the limit."""
    count = len(source.splitlines())
    top, every = statement_starts(source)
    cuts, start = [], 0
    while count - start > limit:
        reach = range(start + 1, start + limit + 1)
        cut = max((line for line in reach if line in top), default=None)
        cut = cut or max((line for line in reach if line in every), default=start + limit)
        cuts.append(cut)
        start = cut
    return cuts


def png_dpi(png: bytes) -> float:
    """The dots per inch a PNG was drawn at (its pHYs chunk).

    Raises ValueError when the PNG does not say.
    """
    dpi = Image.open(io.BytesIO(png)).info.get("dpi")
    if not dpi:
        raise ValueError("a figure's PNG has no dpi (pHYs chunk): its text size cannot be known")
    return float(dpi[0])


def blank_cuts(blank: np.ndarray, piece: float, count: int, least_gap: int) -> list[int]:
    """Where to cut a length of ``len(blank)`` pixels into pieces of at most ``piece``: in the middle
    of runs of at least ``least_gap`` blank rows or columns (``blank``: whether each is; a heatmap's
    white lines between its cells are narrower), in ``count`` pieces or up to two more where that
    finds such runs, each cut nearest an even share and no piece under half an even share; at the
    even shares of ``count`` pieces where no blank runs will do."""
    length = len(blank)
    edges = np.flatnonzero(np.diff(np.r_[0, blank.astype(int), 0]))
    runs = zip(edges[::2], edges[1::2], strict=True)
    gaps = [(a + b) // 2 for a, b in runs if 0 < a and b < length and b - a >= least_gap]
    for pieces_ in range(count, count + 3):
        cuts, previous, least = [], 0, length / pieces_ / 2
        for k in range(1, pieces_):
            low = math.ceil(max(previous + least, length - (pieces_ - k) * piece))
            high = math.floor(min(previous + piece, length - (pieces_ - k) * least))
            near = [gap for gap in gaps if low <= gap <= high]
            if not near:
                break
            previous = min(near, key=lambda gap: abs(gap - length * k / pieces_))
            cuts.append(previous)
        else:
            return cuts
    return [round(length * k / count) for k in range(1, count)]


def figure_pieces(png: bytes) -> list[tuple[bytes, int, int]]:
    """``png`` as (PNG, width, height on the slide) pieces, each filling :data:`FIGURE_BOX` with its
    text at least :data:`LEGIBLE_PX` pixels: the figure whole where it can be, else cut into rows
    and columns between its panels."""
    dpi = png_dpi(png)
    image = Image.open(io.BytesIO(png))
    least_scale = LEGIBLE_PX / (FONT_PT * dpi / 72)
    pixels = np.asarray(image.convert("RGB")).astype(int)
    background = pixels[0, 0]
    plain = (np.abs(pixels - background).sum(axis=2) < 24).mean
    counts = [math.ceil(size * least_scale / box) for size, box in zip(image.size, FIGURE_BOX, strict=True)]
    gap = round(dpi / 20)  # 0.05 inch
    columns = [0, *blank_cuts(plain(axis=0) > 0.98, FIGURE_BOX[0] / least_scale, counts[0], gap), image.width]
    rows = [0, *blank_cuts(plain(axis=1) > 0.98, FIGURE_BOX[1] / least_scale, counts[1], gap), image.height]
    whole, result = len(rows) == len(columns) == 2, []
    for top, bottom in itertools.pairwise(rows):
        for left, right in itertools.pairwise(columns):
            piece = image if whole else image.crop((left, top, right, bottom))
            scale = min(FIGURE_BOX[0] / piece.width, FIGURE_BOX[1] / piece.height)
            data = png
            if not whole:
                buffer = io.BytesIO()
                piece.save(buffer, format="PNG", dpi=(dpi, dpi))
                data = buffer.getvalue()
            result.append((data, math.floor(piece.width * scale), math.floor(piece.height * scale)))
    return result


def figure_cells(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """``cell`` with each figure among its outputs moved to sub-slides of its own (see
    :func:`figure_pieces`), the outputs after a figure to one more sub-slide."""
    outputs = cell.get("outputs", [])
    if not any("image/png" in output.get("data", {}) for output in outputs):
        return [cell]
    first = copy.deepcopy(cell)
    groups: list[list[nbformat.NotebookNode]] = [[]]
    for output in outputs:
        if "image/png" in output.get("data", {}):
            groups += [[output], []]
        else:
            groups[-1].append(output)
    first.outputs = groups[0]
    result = [first] if first.source or first.outputs else []
    for index, group in enumerate(groups[1:], start=1):
        if not group:
            continue
        output = group[0]
        if "image/png" not in output.get("data", {}):  # the outputs after a figure
            result.append(output_cell(cell, f"out{index}", group))
            continue
        alt = output.get("metadata", {}).get("image/png", {}).get("alt") or output["data"].get(
            "text/plain", ""
        )
        _, _, table = output["data"].get("text/html", "").partition("<details>")
        pieces_ = figure_pieces(base64.b64decode(output["data"]["image/png"]))
        for number, (png, width, height) in enumerate(pieces_, start=1):
            text = alt if number == 1 else f"Part {number} of {len(pieces_)} of the figure above."
            page = (
                f'<img src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}" '
                f'alt="{html.escape(text)}" style="width: {width}px; height: {height}px">'
            )
            if table and number == len(pieces_):
                page += f"<details>{table}"
            shown = nbformat.v4.new_output("display_data", data={"text/html": page, "text/plain": text})
            result.append(output_cell(cell, f"fig{index}-{number}", [shown], tags=[FIGURE_TAG]))
    return result


def output_cell(
    cell: nbformat.NotebookNode, suffix: str, outputs: list, tags: tuple[str, ...] | list[str] = ()
) -> nbformat.NotebookNode:
    """A sub-slide that shows ``outputs`` of ``cell`` without its code."""
    metadata = {
        "transient": {"remove_source": True},
        "slideshow": {"slide_type": "subslide"},
        "tags": list(tags),
    }
    piece = nbformat.v4.new_code_cell(cell.source, metadata=metadata, outputs=outputs)
    piece.id, piece.execution_count = f"{cell.id}-{suffix}", cell.execution_count
    return piece


def legible_pieces(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """``cell`` as a room reads it: code cut at :data:`MAX_CODE_LINES` lines (:func:`code_cuts`)
    where the lesson does not cut it itself, and its figures on sub-slides of their own."""
    if cell.cell_type != "code":
        return pieces(cell)
    result = []
    for piece in pieces(cell):
        cuts = code_cuts(piece.source) if not piece.metadata.get("transient", {}).get("remove_source") else []
        if cuts:
            piece = copy.deepcopy(piece)
            piece.metadata.setdefault("slideshow", {})["cut_lines"] = cuts
            piece.metadata.slideshow.pop("cut_outputs", None)
            split = pieces(piece)
            for number, part in enumerate(split[1:], start=1):
                part.id = f"{piece.id}-c{number}"  # not the -1, -2 … of the lesson's own cuts
        else:
            split = [piece]
        for part in split:
            result += figure_cells(part)
    return result


def deck_notebook(
    lesson: nbformat.NotebookNode, notes: tuple[str, dict[str, str]] | None = None, name: str = ""
) -> nbformat.NotebookNode:
    """A copy of ``lesson`` as its deck shows it: cells cut into slides, explorers as a line, notes added."""
    deck = nbformat.from_dict(lesson)
    deck.metadata.pop("widgets", None)
    title_notes, pauses = notes or ("", {})
    unknown = sorted(set(pauses) - {h for cell in deck.cells for h in headings(cell)})
    if unknown:
        raise ValueError(f"{name}: the instructor's guide pauses at headings the lesson lacks: {unknown}")
    cells = []
    code_lines, after_figure = 0, False  # on the slide so far
    for index, lesson_cell in enumerate(deck.cells):
        summary = explorer_summary(lesson_cell)
        if summary:
            live = nbformat.v4.new_markdown_cell(LIVE.format(summary=summary), metadata=lesson_cell.metadata)
            lesson_cell = nbformat.from_dict({**live, "id": lesson_cell.id})
        for cell in legible_pieces(lesson_cell):
            starts = index == 0 or cell.source.startswith("## ")
            slideshow = cell.metadata.setdefault("slideshow", {})
            slideshow.setdefault("slide_type", "slide" if starts else "-")
            if slideshow["slide_type"] == "skip":  # not shown in class (a lesson's install cell)
                continue
            shown = (
                0 if cell.metadata.get("transient", {}).get("remove_source") else cell.source.count("\n") + 1
            )
            shown *= cell.cell_type == "code"
            if slideshow["slide_type"] == "-" and (after_figure or code_lines + shown > MAX_CODE_LINES):
                slideshow["slide_type"] = "subslide"
            if slideshow["slide_type"] in ("slide", "subslide"):
                code_lines = 0
            code_lines += shown
            after_figure = FIGURE_TAG in cell.metadata.get("tags", [])
            cells.append(cell)
            notes = [title_notes] if index == 0 and title_notes else []
            notes += [f"**Pause:** {pauses[h]}" for h in headings(cell) if h in pauses]
            cells += [notes_cell(text, f"{cell.id}-notes{n}") for n, text in enumerate(notes)]
    deck.cells = cells
    return deck


def slide_count(deck: nbformat.NotebookNode) -> int:
    """How many slides and sub-slides the deck shows (its first cell always starts a slide)."""
    kinds = [cell.metadata["slideshow"]["slide_type"] for cell in deck.cells[1:]]
    return 1 + sum(kind in ("slide", "subslide") for kind in kinds)


def convert(deck: nbformat.NotebookNode, name: str) -> str:
    """The reveal.js page of a notebook prepared by :func:`deck_notebook`, lesson links pointing at decks."""
    exporter = SlidesExporter(config=Config({"SlidesExporter": EXPORTER_CONFIG}))
    page, _resources = exporter.from_notebook_node(deck, resources={"metadata": {"name": name}})
    return LESSON_LINK.sub(r'href="\1.html', page)


SPEAKER_VIEW = ", S for the speaker view with the instructor's notes"


def index_page(entries: list[tuple[str, str, int]], notes: bool = True) -> str:
    """A page that links every deck, with its number of slides and the keys a presenter needs (the
    speaker view's where the decks have ``notes``)."""
    items = "\n".join(
        f'<li><a href="{html.escape(href)}">{html.escape(text)}</a> ({count} slides)</li>'
        for href, text, count in entries
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n'
        "<title>attention-lessons: slides</title>\n</head>\n<body>\n<main>\n"
        "<h1>attention-lessons: slides</h1>\n"
        "<p>One deck per lesson, 1280×720. In a deck: arrow keys or space to move, Esc for the overview, "
        f"F for full screen{SPEAKER_VIEW if notes else ''}.</p>\n"
        f'<ol start="0">\n{items}\n</ol>\n</main>\n</body>\n</html>\n'
    )


def build(paths: list[Path], out: Path, node_modules: Path, guide: Path | None) -> list[tuple[str, str, int]]:
    """Write the decks of ``paths`` and their assets to ``out``, with the speaker notes of ``guide``
    (none without a guide); (file, title, slides) of each deck."""
    for asset in ASSETS:
        asset.copy(node_modules, out / STATIC)
    notes = lesson_notes(guide.read_text(encoding="utf-8")) if guide else {}
    pages = {sheet: sheet.read_text(encoding="utf-8") for sheet in (out / STATIC).rglob("*.css")}
    entries = []
    for path in paths:
        lesson = nbformat.read(path, as_version=4)
        deck = deck_notebook(lesson, notes.get(path.name[:2]), path.stem)
        pages[out / f"{path.stem}.html"] = convert(deck, path.stem)
        title = lesson.cells[0].source.splitlines()[0].lstrip("# ")
        entries.append((f"{path.stem}.html", title, slide_count(deck)))
    for target, page in pages.items():
        if external_urls(page):
            raise RuntimeError(f"{target.name} would load from other hosts: {external_urls(page)}")
        target.write_text(page, encoding="utf-8")
    (out / "index.html").write_text(index_page(entries, notes=bool(guide)), encoding="utf-8")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "slides")
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    parser.add_argument("--guide", type=Path, default=GUIDE)
    parser.add_argument(
        "--student",
        action="store_true",
        help="the students' decks (of the student copies): no speaker notes, which hold the answers",
    )
    args = parser.parse_args(argv)
    guide = None if args.student else args.guide
    for name, _title, count in build(args.notebooks, args.out, args.node_modules, guide):
        print(f"{name}: {count} slides")
    print(f"wrote the decks and index.html to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
