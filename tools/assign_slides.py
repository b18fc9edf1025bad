"""Write the lessons' slide metadata so that every slide of every deck fits 1280×720.

    PYTHONPATH=tools .venv/bin/python tools/assign_slides.py notebooks/*.ipynb

Every ``## `` section is a slide (the title and the text before the first section are the first);
a section too tall for one slide is cut into sub-slides. The tool measures instead of guessing: it
builds each deck with every cell cut into its parts (tools/build_slides.py: a Markdown cell's
blocks, a code cell's input and each output), measures each part's height in Chromium
(tools/slides_browser.py), packs the parts of each section into as few sub-slides as fit, keeping a
heading, a line that ends with ":" and the parts of one cell with what follows, then builds the decks
as they will be and measures again, tightening a section until every slide fits.

It writes ``metadata.slideshow.slide_type`` on every cell (the type of its first part), and
``metadata.slideshow.parts`` (the type of each part) on the few cells cut across sub-slides; it
changes nothing else. It starts from scratch each time, so it is deterministic and re-runnable:
run it again after a lesson's cells change. It exits 1, naming them, if some part is too tall for a
slide by itself (that needs a fix in the decks' CSS or in the lesson).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
from build_slides import HEIGHT, ROOT, STATIC, cell_parts, convert, copy_assets, deck_notebook, part_id
from slides_browser import Deck, chromium, measure, serve

ROUNDS = 6  # measure, tighten the sections that overflow, measure again


@dataclass(frozen=True)
class Part:
    """One part of a lesson cell, as the packing sees it."""

    height: int  # pixels, measured
    leads_in: bool  # keep it with the part that follows, if they fit together


def leads_in(parts: list[nbformat.NotebookNode], i: int) -> bool:
    """Whether part ``i`` of a cell belongs on the same slide as the part after it: every part but
    a cell's last (cells are cut only where they must be), a heading, a line ending in ":"."""
    text = parts[i].source.strip() if parts[i].cell_type == "markdown" else ""
    return i + 1 < len(parts) or text.startswith("#") or text.endswith(":")


def starts_slide(part: nbformat.NotebookNode) -> bool:
    """Whether a part begins a ``## `` section."""
    return part.cell_type == "markdown" and part.source.startswith("## ")


def set_types(notebook: nbformat.NotebookNode, types: list[list[str]]) -> None:
    """Write the slide type of each part of each cell into the cells' ``slideshow`` metadata."""
    for cell, cell_types in zip(notebook.cells, types, strict=True):
        slideshow = {"slide_type": cell_types[0]}
        if any(kind != "-" for kind in cell_types[1:]):
            slideshow["parts"] = cell_types
        cell.metadata["slideshow"] = slideshow


def pack(parts: list[Part], budget: int) -> list[int]:
    """Where sub-slides start (indices into ``parts``), filling each up to ``budget`` pixels.

    A break that would leave lead-in parts at the bottom of a sub-slide moves up before them, when
    they and the part that does not fit still fit together on one sub-slide and the sub-slide they
    leave stays at least half full.
    """

    def height(start: int, end: int) -> int:
        return sum(part.height for part in parts[start:end])

    starts, first, used = [], 0, 0
    for i, part in enumerate(parts):
        if used + part.height <= budget or i == first:
            used += part.height
            continue
        start = i
        while start - 1 > first and parts[start - 1].leads_in and height(first, start - 1) >= budget / 2:
            start -= 1
        if height(start, i + 1) > budget:
            start = i
        starts.append(start)
        first, used = start, height(start, i + 1)
    return starts


class Lesson:
    """One lesson: its notebook cut into parts, the parts' heights, each section's height budget."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notebook = nbformat.read(path, as_version=4)
        self.parts = [cell_parts(cell) for cell in self.notebook.cells]
        # (cell, part) positions of each section: the title's, then each `## ` section's
        self.sections: list[list[tuple[int, int]]] = [[]]
        for c, parts in enumerate(self.parts):
            for p, part in enumerate(parts):
                if starts_slide(part) and self.sections[-1]:
                    self.sections.append([])
                self.sections[-1].append((c, p))
        self.section_of = {self.id(c, p): s for s, section in enumerate(self.sections) for c, p in section}
        self.budgets = [HEIGHT] * len(self.sections)
        self.heights: dict[str, int] = {}

    def id(self, c: int, p: int) -> str:
        return part_id(self.notebook.cells[c], p)

    def types(self) -> list[list[str]]:
        """Every part's slide type: sections start slides, packed sections start sub-slides."""
        types = [["-"] * len(parts) for parts in self.parts]
        for section, budget in zip(self.sections, self.budgets, strict=True):
            c, p = section[0]
            types[c][p] = "slide"
            parts = [Part(self.heights.get(self.id(c, p), 0), leads_in(self.parts[c], p)) for c, p in section]
            for start in pack(parts, budget):
                c, p = section[start]
                types[c][p] = "subslide"
        return types

    def deck(self, separate: bool) -> str:
        """The deck's HTML with the current types; ``separate``: every part a cell of its own."""
        set_types(self.notebook, self.types())
        return convert(deck_notebook(self.notebook, separate=separate), self.path.stem)

    def learn_heights(self, deck: Deck) -> None:
        """Each part's height, from the deck built with every part separate and every section one slide."""
        for slide in deck.slides:
            heights = slide.cell_heights()
            first = str(slide.cells[0]["id"])
            heights[first] += int(slide.cells[0]["top"])  # the slide's top padding goes with its first part
            self.heights.update(heights)

    def tighten(self, deck: Deck) -> None:
        """Lower the budget of every section that has a slide taller than the deck."""
        for slide in deck.slides:
            if slide.height > HEIGHT:
                self.budgets[self.section_of[str(slide.cells[0]["id"])]] -= slide.height - HEIGHT

    def write(self) -> None:
        """Save the lesson with its slide metadata (nothing else changes)."""
        set_types(self.notebook, self.types())
        nbformat.write(self.notebook, self.path)


def measure_lessons(
    lessons: list[Lesson], folder: Path, browser, base: str, *, separate: bool
) -> dict[str, Deck]:
    """Build every lesson's deck into ``folder`` and measure it."""
    decks = {}
    for lesson in lessons:
        (folder / f"{lesson.path.stem}.html").write_text(lesson.deck(separate), encoding="utf-8")
        decks[lesson.path.stem] = measure(browser, f"{base}/{lesson.path.stem}.html")
    return decks


def assign(lessons: list[Lesson], folder: Path) -> list[str]:
    """Pack every lesson's sections until every slide fits; the slides that still do not."""
    with serve(str(folder)) as base, chromium() as browser:
        separate = measure_lessons(lessons, folder, browser, base, separate=True)
        for lesson in lessons:
            lesson.learn_heights(separate[lesson.path.stem])
        for _round in range(ROUNDS):
            decks = measure_lessons(lessons, folder, browser, base, separate=False)
            if all(slide.fits for deck in decks.values() for slide in deck.slides):
                return []
            for lesson in lessons:
                lesson.tighten(decks[lesson.path.stem])
    return [
        f"{name} {slide.where()}: {slide.width}×{slide.height}, scrollbars on {slide.scrollbars}"
        for name, deck in decks.items()
        for slide in deck.slides
        if not slide.fits
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    args = parser.parse_args(argv)

    lessons = [Lesson(path) for path in args.notebooks]
    with tempfile.TemporaryDirectory(prefix="assign-slides-") as folder:
        copy_assets(args.node_modules, Path(folder) / STATIC)
        problems = assign(lessons, Path(folder))
    for lesson in lessons:
        lesson.write()
        count = sum(kind in ("slide", "subslide") for kinds in lesson.types() for kind in kinds)
        print(f"{lesson.path.name}: {len(lesson.sections)} sections, {count} slides")
    for problem in problems:
        print(f"does not fit: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
