"""The lessons as saved: clean, executed top to bottom, and built like lessons.

nbval (``pytest --nbval``) re-runs every notebook and compares its outputs; these tests check
what nbval does not: that the stored notebook is one clean top-to-bottom run, that every
lesson has the parts a lesson needs, and that re-running any cell after Run All means what it
meant the first time (no cell reads a name that two cells assign).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from conftest import readable

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))  # tests/test_contributing.py: named 00_…
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
    counts = [c.execution_count for c in _code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), f"execution counts {counts}: re-run top to bottom"
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
    assert re.match(rf"# {number} · \S", first.source), "the first line is the title '# NN · …'"
    assert "**Goal:**" in first.source and "**You need:**" in first.source
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    summary = markdown.split("## Summary", 1)
    assert len(summary) == 2, "a '## Summary' section"
    bullets = [line for line in summary[1].splitlines() if line.startswith("- ")]
    assert len(bullets) == 3, f"the summary has three lines, found {len(bullets)}"
    following = LESSONS[(LESSONS.index(name) + 1) % len(LESSONS)]
    next_link = rf"\*\*Next:\*\* \[[^\]]+\]\({re.escape(following)}\)"
    assert re.search(next_link, summary[1]), f"the summary links to {following}"
    assert any("image/png" in out.get("data", {}) for c in _code_cells(nb) for out in c.outputs), "a picture"


@pytest.mark.parametrize("name", LESSONS[1:])
def test_lessons_ask_questions(name: str) -> None:
    markdown = "\n".join(c.source for c in _read(name).cells if c.cell_type == "markdown")
    assert "**Question" in markdown or "## Exercise" in markdown
    assert "<details>" in markdown, "answers are hidden in <details> blocks"


def test_the_map_links_every_lesson() -> None:
    markdown = "\n".join(c.source for c in _read("00_start_here.ipynb").cells if c.cell_type == "markdown")
    for name in LESSONS:
        assert f"]({name})" in markdown, f"00_start_here links {name}"


class _CellNames(ast.NodeVisitor):
    """The names one cell binds at top level, and the names it reads before binding them.

    Statements are visited in the order Python runs them (the value of an assignment before its
    targets, a loop's iterable before its variable); functions, lambdas and comprehensions have
    their own scope, and only the names they read from outside count.
    """

    def __init__(self, bound: tuple[str, ...] = ()) -> None:
        self.bound: set[str] = set(bound)
        self.read_first: set[str] = set()

    def visit_source(self, source: str) -> _CellNames:
        for statement in ast.parse(source).body:
            self.visit(statement)
        return self

    def _read(self, name: str) -> None:
        if name not in self.bound:
            self.read_first.add(name)

    def _inner_scope(self, bound: list[str], nodes: list[ast.AST]) -> None:
        inner = _CellNames(tuple(bound))
        for node in nodes:
            inner.visit(node)
        for name in inner.read_first:
            self._read(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
        else:
            self.bound.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
        self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for statement in node.body + node.orelse:
            self.visit(statement)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name)

    def _parameters(self, args: ast.arguments) -> list[str]:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        return names + [a.arg for a in (args.vararg, args.kwarg) if a is not None]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        parameters = self._parameters(node.args)
        self.bound.add(node.name)
        self._inner_scope([*parameters, node.name], list(node.body))

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._inner_scope(self._parameters(node.args), [node.body])

    def _comprehension(self, generators: list[ast.comprehension], results: list[ast.expr]) -> None:
        inner = _CellNames()
        for generator in generators:
            inner.visit(generator.iter)
            inner.visit(generator.target)
            for condition in generator.ifs:
                inner.visit(condition)
        for result in results:
            inner.visit(result)
        for name in inner.read_first:
            self._read(name)

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node.generators, [node.key, node.value])


def _cells_reading_a_reassigned_name(sources: list[str]) -> list[str]:
    """Each cell that reads a name assigned in another cell, when two cells assign that name.

    Re-run after Run All, such a cell sees the last assignment, not the one before it; a name
    a cell assigns before reading it is that cell's own and may be reused anywhere.
    """
    cells = [_CellNames().visit_source(source) for source in sources]
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
        "d_k = 64\nfrom course.kit import plots",
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
