"""Build one reveal.js deck per lesson, and an index page, that work offline.

    .venv/bin/python tools/build_slides.py [--out build/slides] [--node-modules DIR] notebooks/*.ipynb

Each committed (saved executed) lesson becomes ``NN_name.html`` with nbconvert's SlidesExporter,
through the template ``tools/nbconvert_templates/attnlib_slides``. The slides follow the cells'
``metadata.slideshow.slide_type`` (written by ``tools/assign_slides.py``); the deck is 1280×720.

In the deck, not in the lesson:
- an explorer's cell (its widget has no state in a committed lesson) becomes one line that names
  the explorer and where to move it live; the same picture, drawn statically, sits just above it;
- the instructor's guide (``docs/instructor_guide.md``, read by ``tools/instructor_guide.py``) adds
  speaker notes (cells of slide type ``notes``): the lesson's time, idea, explorer to project and
  misconceptions on the title slide, and "where to pause" on the slide of each section it names.
  Press S in a deck for the speaker view.

Every script, style sheet and font a deck loads comes from ``static/`` next to it, copied from the
exact npm versions of package-lock.json: reveal.js 4 (with its notes plugin), require.js, jQuery
and MathJax 2. The script fails when a deck would load anything from another host.
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import sys
from pathlib import Path

import nbformat
from build_book import ROOT, Asset, external_urls
from instructor_guide import GUIDE_PATH, read_guide, speaker_notes
from nbconvert import SlidesExporter
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
from traitlets.config import Config

TEMPLATES = Path(__file__).resolve().parent / "nbconvert_templates"
MATHJAX_PARTS = (
    "MathJax.js",
    "config/TeX-AMS_CHTML-full.js",
    "config/Safe.js",
    "extensions",
    "jax/input/TeX",
    "jax/element",
    "jax/output/CommonHTML",
    "fonts/HTML-CSS/TeX/woff",
    "localization/en",
)
LESSON_LINK = re.compile(r"""href=(["'])(?![a-z][a-z0-9+.-]*:)([^"'#/]+)\.ipynb(#[^"']*)?\1""")
STATIC = "static"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDTH, HEIGHT = 1280, 720
CONTINUATIONS = {"else", "elif", "except", "finally"}
FENCES = (("```", "```"), ("~~~", "~~~"), ("$$", "$$"), ("<details", "</details>"))
THEME = "white"  # its fonts are in the package (the default, "simple", imports Google's)
ASSETS = (
    *(
        Asset("reveal.js", part, f"reveal.js/{part}")
        for part in (
            "dist/reveal.js",
            "dist/reveal.css",
            f"dist/theme/{THEME}.css",
            "dist/theme/fonts/source-sans-pro",
            "plugin/notes/notes.js",
        )
    ),
    Asset("requirejs", "require.js", "require.js"),
    Asset("jquery", "dist/jquery.min.js", "jquery.min.js"),
    *(Asset("mathjax", part, f"mathjax/{part}") for part in MATHJAX_PARTS),
)
EXPORTER_CONFIG = {
    "reveal_url_prefix": f"{STATIC}/reveal.js",
    "reveal_theme": THEME,
    "reveal_width": str(WIDTH),
    "reveal_height": str(HEIGHT),
    "reveal_number": "c/t",
    "require_js_url": f"{STATIC}/require.js",
    "jquery_url": f"{STATIC}/jquery.min.js",
    "mathjax_url": f"{STATIC}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "extra_template_basedirs": [str(TEMPLATES)],
    "template_name": "attnlib_slides",
}
LIVE = (
    "**Live:** {summary}. Move it in JupyterLab (`make lab`) or on this lesson's page of `make book`; "
    "the picture above is the same explorer, drawn statically."
)


def link_lessons(page: str) -> str:
    """Point links to other lessons (``01_embeddings.ipynb#…``) at their decks."""
    return LESSON_LINK.sub(lambda m: f"href={m[1]}{m[2]}.html{m[3] or ''}{m[1]}", page)


def title(notebook: nbformat.NotebookNode, fallback: str) -> str:
    """The first Markdown heading of the notebook."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#+\s+(.+)$", cell.source, re.MULTILINE)
            if match:
                return match[1].strip()
    return fallback


def copy_assets(node_modules: Path, static: Path) -> None:
    """Copy what the decks load from npm packages into ``static``; no style sheet imports from afar."""
    for asset in ASSETS:
        asset.copy(node_modules, static)
    for sheet in sorted(static.rglob("*.css")):
        outside = external_urls(sheet.read_text(encoding="utf-8"))
        if outside:
            raise RuntimeError(f"{sheet} would load from other hosts: {sorted(set(outside))}")


def explorer_summary(cell: nbformat.NotebookNode) -> str | None:
    """The one-line summary of the explorer that ``cell`` shows, or None if it shows none."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if WIDGET_VIEW in data:
            return data["text/plain"].split(" (interactive:")[0]
    return None


def _closer(text: str) -> str | None:
    """What ends the code fence, ``$$`` formula or HTML element that the line ``text`` opens, or None."""
    for opener, closer in FENCES:
        if text.startswith(opener):
            return None if closer in text[len(opener) :] else closer
    return None


def markdown_blocks(source: str) -> list[str]:
    """The top-level blocks of a Markdown cell, in order.

    A block ends at a blank line, unless the blank line is inside a code fence, a ``$$`` formula
    or a ``<details>`` element, or the line after it is indented (a list item's next paragraph);
    a heading always starts a block.
    """
    blocks: list[list[str]] = [[]]
    closer = None  # what ends the fence, formula or element the line is in
    lines = source.splitlines()
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        text = line.strip()
        if closer is None and text.startswith("#") and blocks[-1]:
            blocks.append([])
        blocks[-1].append(line)
        if closer is not None:
            closer = None if closer in text else closer
        else:
            closer = _closer(text)
        if closer is None and not text and following.strip() and not following[:1].isspace():
            blocks.append([])
    return ["\n".join(block).strip("\n") for block in blocks if "".join(block).strip()]


def _continues(line: str) -> bool:
    """Whether an unindented ``line`` continues the statement before it (``else:``, a bracket)."""
    return line[:1] in ")]}" or line.split(" ")[0].rstrip(":") in CONTINUATIONS


def code_chunks(source: str) -> list[tuple[int, int]]:
    """The top-level statements of a code cell, as ranges of its lines (blank lines left out).

    A statement starts at an unindented line, unless that line continues the one before (a
    closing bracket, ``else:``…) or the line before is a comment or a decorator, which belong to it.
    """
    lines = source.splitlines()
    starts = [
        i
        for i, line in enumerate(lines)
        if line.strip()
        and not line[:1].isspace()
        and not _continues(line)
        and not (i > 0 and lines[i - 1].lstrip().startswith(("#", "@")))
    ]
    starts = [0, *(i for i in starts if i > 0)]
    chunks = []
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        while end > start and not lines[end - 1].strip():
            end -= 1
        if end > start:
            chunks.append((start, end))
    return chunks


def live_line(summary: str) -> nbformat.NotebookNode:
    """A Markdown cell naming an explorer and where to use it live."""
    return nbformat.v4.new_markdown_cell(LIVE.format(summary=summary))


def input_parts(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """A code cell per top-level statement of ``cell``'s input, each knowing its lines."""
    lines = cell.source.splitlines()
    parts = []
    for start, end in code_chunks(cell.source):
        part = nbformat.v4.new_code_cell("\n".join(lines[start:end]), execution_count=cell.execution_count)
        part.metadata = {"lines": [start, end]}
        parts.append(part)
    return parts


def part_id(cell: nbformat.NotebookNode, index: int) -> str:
    """The id of the deck cell that starts with part ``index`` of ``cell``."""
    return f"{cell.id}-{index}"


def output_part(cell: nbformat.NotebookNode, outputs: list) -> nbformat.NotebookNode:
    """A code cell that shows only ``outputs`` of ``cell`` (its input removed)."""
    part = nbformat.v4.new_code_cell(cell.source, outputs=outputs, execution_count=cell.execution_count)
    part.metadata = {"transient": {"remove_source": True}}
    return part


def cell_parts(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The pieces a lesson cell can be cut into across sub-slides, each a cell of its own.

    A Markdown cell: its top-level blocks. A code cell: the top-level chunks of its input, then
    each of its outputs. An explorer's cell: one line naming the explorer (a widget without state
    shows only its repr).
    """
    summary = explorer_summary(cell)
    if summary:
        return [live_line(summary)]
    if cell.cell_type == "markdown":
        return [nbformat.v4.new_markdown_cell(block) for block in markdown_blocks(cell.source)] or [cell]
    if cell.cell_type == "code" and cell.source.strip():
        # one output per stream, however the kernel chunked print()'s text in this run
        cell, _ = CoalesceStreamsPreprocessor().preprocess_cell(copy.deepcopy(cell), {}, 0)
        return [*input_parts(cell), *(output_part(cell, [output]) for output in cell.outputs)]
    return [cell]


def part_types(cell: nbformat.NotebookNode, count: int) -> list[str]:
    """The slide type of each of the ``count`` parts of ``cell``, from its ``slideshow`` metadata.

    ``slide_type`` is the type of the first part; ``parts`` (written by tools/assign_slides.py
    where a cell is cut across sub-slides) lists the type of every part.
    """
    slideshow = cell.metadata.get("slideshow", {})
    first = slideshow.get("slide_type", "-")
    types = slideshow.get("parts", [first] + ["-"] * (count - 1))
    if len(types) != count or types[0] != first:
        raise ValueError(
            f"cell {cell.get('id')}: its slideshow metadata ({slideshow}) does not match its {count} "
            "parts: re-run tools/assign_slides.py"
        )
    return types


def merged(parts: list[nbformat.NotebookNode], source: str) -> nbformat.NotebookNode:
    """One cell showing ``parts`` (consecutive parts of the lesson cell with ``source``) together."""
    first = parts[0]
    if first.cell_type == "markdown":
        return nbformat.v4.new_markdown_cell("\n\n".join(part.source for part in parts))
    cell = nbformat.from_dict(first)
    ranges = [part.metadata["lines"] for part in parts if "lines" in part.metadata]
    if ranges:  # the input's lines from the first statement to the last, as the lesson has them
        cell.source = "\n".join(source.splitlines()[ranges[0][0] : ranges[-1][1]])
    cell.outputs = [output for part in parts for output in part.get("outputs", [])]
    return cell


def deck_cells(cell: nbformat.NotebookNode, separate: bool = False) -> list[nbformat.NotebookNode]:
    """The cells that show lesson cell ``cell`` in its deck: its parts, cut where a slide starts.

    With ``separate``, every part is a cell of its own (tools/assign_slides.py measures them).
    """
    parts = cell_parts(cell)
    types = part_types(cell, len(parts))
    starts = [i for i, kind in enumerate(types) if i == 0 or separate or kind != "-"]
    cells = []
    for start, end in zip(starts, [*starts[1:], len(parts)], strict=True):
        piece = merged(parts[start:end], cell.source)
        piece.id = part_id(cell, start)
        piece.metadata.setdefault("slideshow", {})["slide_type"] = types[start]
        cells.append(piece)
    return cells


def notes_cell(text: str) -> nbformat.NotebookNode:
    """A Markdown cell that nbconvert turns into the speaker notes of the slide it sits on."""
    return nbformat.v4.new_markdown_cell(text, metadata={"slideshow": {"slide_type": "notes"}})


def section_headings(cell: nbformat.NotebookNode) -> list[str]:
    """The text of every ``## `` heading in a Markdown cell (a deck cell starts with its one)."""
    if cell.cell_type != "markdown":
        return []
    blocks = markdown_blocks(cell.source)
    return [block.splitlines()[0].removeprefix("## ").strip() for block in blocks if block.startswith("## ")]


def with_notes(
    cells: list[nbformat.NotebookNode], title_notes: str, section_notes: dict[str, str], name: str
) -> list[nbformat.NotebookNode]:
    """``cells`` with the title notes after the first cell and each section's after its heading."""
    headings = {heading for cell in cells for heading in section_headings(cell)}
    unknown = sorted(set(section_notes) - headings)
    if unknown:
        raise ValueError(f"{name}: the instructor's guide pauses at headings the lesson lacks: {unknown}")
    result = [cells[0], notes_cell(title_notes)]
    for cell in cells[1:]:
        result.append(cell)
        result += [notes_cell(section_notes[h]) for h in section_headings(cell) if h in section_notes]
    return result


def deck_notebook(
    notebook: nbformat.NotebookNode,
    notes: tuple[str, dict[str, str]] | None = None,
    name: str = "",
    separate: bool = False,
) -> nbformat.NotebookNode:
    """A copy of the lesson as its deck shows it: cells cut into sub-slides, explorers as a line,
    speaker notes added (see :func:`deck_cells`)."""
    deck = nbformat.from_dict(notebook)
    deck.metadata.pop("widgets", None)
    cells = [piece for cell in notebook.cells for piece in deck_cells(cell, separate)]
    deck.cells = with_notes(cells, *notes, name) if notes else cells
    return deck


def convert(deck: nbformat.NotebookNode, name: str) -> str:
    """The reveal.js deck of a notebook prepared by :func:`deck_notebook`."""
    exporter = SlidesExporter(config=Config({"SlidesExporter": EXPORTER_CONFIG}))
    page, _resources = exporter.from_notebook_node(deck, resources={"metadata": {"name": name}})
    page = link_lessons(page)
    outside = external_urls(page)
    if outside:
        raise RuntimeError(f"{name}: the deck would load from other hosts: {sorted(set(outside))}")
    return page


def read_notes(guide: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """The speaker notes of every lesson in the instructor's guide, keyed by "00".."13"."""
    return {number: speaker_notes(lesson) for number, lesson in read_guide(guide).items()}


def slide_count(deck: nbformat.NotebookNode) -> int:
    """How many slides and sub-slides the deck shows (its first cell always starts a slide)."""
    kinds = [cell.metadata.get("slideshow", {}).get("slide_type", "-") for cell in deck.cells]
    return 1 + sum(kind in ("slide", "subslide") for kind in kinds[1:])


def index_page(entries: list[tuple[str, str, int]]) -> str:
    """A page that links every deck, with its number of slides and the keys a presenter needs."""
    items = "\n".join(
        f'<li><a href="{html.escape(href)}">{html.escape(text)}</a> ({count} slides)</li>'
        for href, text, count in entries
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n'
        "<title>attention-lessons: slides</title>\n</head>\n<body>\n<h1>attention-lessons: slides</h1>\n"
        "<p>One deck per lesson, 1280×720. In a deck: arrow keys or space to move, Esc for the overview, "
        "F for full screen, S for the speaker view with the instructor's notes.</p>\n"
        f'<ol start="0">\n{items}\n</ol>\n</body>\n</html>\n'
    )


def build(paths: list[Path], out: Path, node_modules: Path, guide: Path) -> list[tuple[str, str, int]]:
    """Write the decks of ``paths`` and their assets to ``out``; (file, title, slides) of each deck."""
    out.mkdir(parents=True, exist_ok=True)
    copy_assets(node_modules, out / STATIC)
    notes = read_notes(guide)
    entries = []
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        deck = deck_notebook(notebook, notes.get(path.name[:2]), path.stem)
        target = out / f"{path.stem}.html"
        target.write_text(convert(deck, path.stem), encoding="utf-8")
        entries.append((target.name, title(notebook, path.stem), slide_count(deck)))
    (out / "index.html").write_text(index_page(entries), encoding="utf-8")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "slides")
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    parser.add_argument("--guide", type=Path, default=GUIDE_PATH)
    args = parser.parse_args(argv)

    entries = build(args.notebooks, args.out, args.node_modules, args.guide)
    for name, _title, count in entries:
        print(f"{name}: {count} slides")
    print(f"wrote {len(entries)} decks and index.html to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
