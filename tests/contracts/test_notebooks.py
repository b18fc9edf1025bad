"""The lessons as saved: clean, executed top to bottom, and built like lessons.

nbval (``pytest --nbval``) re-runs every notebook and compares its outputs; these tests check
what nbval does not: that the stored notebook is one clean run (its execution counts, the map
and the **Next:** links are CONTRIBUTING's steps, checked in ``tests/contracts/test_contributing.py``),
that every lesson has the parts a lesson needs, and that re-running any cell after Run All means
what it meant the first time (no cell reads a name that two cells assign).
"""

from __future__ import annotations

import re

import nbformat
import pytest
from conftest import ROOT, CellNames, readable

from attention_lessons.manifest import step

NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(
    path.name for path in NOTEBOOKS.glob("*.ipynb")
)  # tests/contracts/test_contributing.py: named 00_…
IGNORE_TAG = "nbval-ignore-output"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _read(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def _code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def _text_outputs(cell: nbformat.NotebookNode) -> list[str]:
    texts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            texts.append(out.text)
        for mime in ("text/plain", "text/html", "text/markdown"):
            if mime in out.get("data", {}):
                texts.append(readable(out.data[mime]))
    return texts


@pytest.mark.parametrize("name", LESSONS)
def test_saved_as_one_clean_run(name: str) -> None:
    nb = _read(name)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert "widgets" not in nb.metadata, "widget state is stored in the notebook metadata"
    for index, cell in enumerate(_code_cells(nb), start=1):
        for out in cell.outputs:
            assert out.output_type != "error", f"cell [{index}] has an error: {out.get('ename')}"
            is_stderr = out.output_type == "stream" and out.name == "stderr"
            assert not is_stderr, f"cell [{index}] writes to stderr"
        for text in _text_outputs(cell):
            assert "Warning" not in text, f"cell [{index}] shows a warning"
            assert not re.search(r"0x[0-9a-fA-F]{6,}", text), f"cell [{index}] shows a memory address"
            assert "<Figure size" not in text, f"cell [{index}] shows a Figure repr instead of a picture"


@pytest.mark.parametrize("name", LESSONS)
def test_only_widget_cells_skip_output_comparison(name: str) -> None:
    for cell in _code_cells(_read(name)):
        shows_widget = any(WIDGET_VIEW in out.get("data", {}) for out in cell.outputs)
        ignored = IGNORE_TAG in cell.metadata.get("tags", [])
        assert shows_widget == ignored, f"cell {cell.source[:60]!r}: only widget cells carry {IGNORE_TAG}"
        assert "NBVAL_IGNORE_OUTPUT" not in cell.source and "NBVAL_SKIP" not in cell.source
        if ignored:
            assert cell.source.lstrip().startswith("#"), "a widget cell says in a comment why it is ignored"


@pytest.mark.parametrize("name", LESSONS)
def test_built_like_a_lesson(name: str) -> None:
    nb = _read(name)
    number = name[:2]
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert re.match(rf"# {number} · \S", first.source), f"the first line is the title '# NN · …' ({step(2)})"
    assert "**Goal:**" in first.source and "**You need:**" in first.source
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    summary = markdown.split("## Summary", 1)
    assert len(summary) == 2, f"a '## Summary' section ({step(2)})"
    bullets = [line for line in summary[1].splitlines() if line.startswith("- ")]
    assert len(bullets) == 3, f"the summary has three lines, found {len(bullets)} ({step(2)})"
    assert any("image/png" in out.get("data", {}) for c in _code_cells(nb) for out in c.outputs), (
        f"a picture: a figure function's image ({step(2)})"
    )


@pytest.mark.parametrize("name", LESSONS[1:])
def test_lessons_ask_questions(name: str) -> None:
    markdown = "\n".join(c.source for c in _read(name).cells if c.cell_type == "markdown")
    assert "**Question" in markdown or "## Exercise" in markdown, (
        f"a **Question** or an ## Exercise ({step(2)})"
    )
    assert "<details>" in markdown, f"answers are hidden in <details> blocks ({step(2)})"


def _cells_reading_a_reassigned_name(sources: list[str]) -> list[str]:
    """Each cell that reads a name assigned in another cell, when two cells assign that name.

    Re-run after Run All, such a cell sees the last assignment, not the one before it; a name
    a cell assigns before reading it is that cell's own and may be reused anywhere.
    """
    cells = [CellNames().visit_source(source) for source in sources]
    assigned_in: dict[str, list[int]] = {}
    for number, cell in enumerate(cells, start=1):
        for name in cell.bound:
            assigned_in.setdefault(name, []).append(number)
    problems = []
    for number, cell in enumerate(cells, start=1):
        for name in sorted(cell.read_first):
            where = assigned_in.get(name, [])
            if len(where) > 1:
                problems.append(f"cell [{number}] reads {name!r}, which cells {where} all assign")
    return problems


def test_reassigned_names_are_found() -> None:
    sources = [
        "d_k = 64\nfrom attention_lessons.kit import plots",
        "print(d_k, plots)",  # reads d_k: the 64 of cell 1, until cell 3 runs
        "d_k = 256\nfor ax in [1]:\n    y = ax",
        "ax = 2\nprint(ax, [x for x in range(d_k)], lambda q: q + d_k)",
        "total = 0\ntotal += 1",  # its own name, bound before it is read
    ]
    assert _cells_reading_a_reassigned_name(sources) == [
        "cell [2] reads 'd_k', which cells [1, 3] all assign",
        "cell [4] reads 'd_k', which cells [1, 3] all assign",
    ]
    assert _cells_reading_a_reassigned_name(["x = 1", "x = x + 1"]) == [
        "cell [2] reads 'x', which cells [1, 2] all assign"
    ]


@pytest.mark.parametrize("name", LESSONS)
def test_no_cell_reads_a_name_another_cell_reassigns(name: str) -> None:
    problems = _cells_reading_a_reassigned_name([cell.source for cell in _code_cells(_read(name))])
    assert not problems, "re-run after Run All, these cells would see another value: " + "; ".join(problems)
