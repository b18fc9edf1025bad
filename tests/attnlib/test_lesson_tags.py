"""Every public function of attnlib names the lesson that explains it, and every lesson section it
names is one of that lesson's headings.

The design's rule (``# lesson 15 · 2. The cache's memory``): a learner who reads a docstring finds
the section by its heading. The tags are read from the source of every module of ``attnlib``
(the model's and the decoder's packages too), the headings from the notebooks' ``## `` lines; no
lesson code is imported. A tag is one of:

- ``Lesson NN · N. Title`` (or ``lesson``): lesson NN has a heading ``## N. Title…``, whose title
  the tag's text starts with (``Lesson 15 · 1. One token at a time (its model's LayerNorms)``), or a
  ``### Title`` within that section;
- ``Lesson NN · N`` without a title, and each ``· M`` or ``section(s) M`` it lists: those
  sections exist (``Lesson 15 · 1, · 2 and · 4``);
- ``Lesson NN · section N, title``: section N exists, and its title (or a ``###`` one in it) and
  ``title`` up to its first stop (``,;:.(``) start alike, ignoring case;
- ``Lesson NN · Title`` (capitalised, unnumbered): the lesson has a heading that starts with it
  (``Lesson 07 · Attention in eight lines``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from functools import cache
from pathlib import Path

import pytest
from conftest import ROOT

import attnlib

NOTEBOOKS = ROOT / "notebooks"
ATTNLIB = Path(attnlib.__file__).resolve().parent
MODULES = sorted(ATTNLIB.rglob("*.py"))
#: A tag: the lesson's number, then what follows ``·`` to the end of the line.
TAG = re.compile(r"\b[Ll]esson (\d\d) · ([^\n]*)")
NUMBERED = re.compile(r"(\d+)\. (.*)")  # "1. Open the file: its tokenizer."
SECTION = re.compile(r"sections? (\d+)(?: and (\d+))?, (.*)")  # "section 2, the cache's memory"
MORE = re.compile(r"^(?:,| and| to) · (\d+)")  # "· 1, · 2 and · 4", "· 3 to · 5"
TAG_OR_LESSON = re.compile(
    r"\b[Ll]essons? \d\d\b"
)  # "Lesson 15 · …", "lesson 14's model", "Lessons 14 and 15"


@cache
def headings(lesson: str) -> dict[str, list[str]]:
    """Lesson ``lesson``'s ``## `` headings, each with the ``### `` ones below it:
    ``{"1": ["Open the file"], …, "Questions": ["Questions"]}``."""
    [notebook] = NOTEBOOKS.glob(f"{lesson}_*.ipynb")
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found: dict[str, list[str]] = {}
    current: list[str] = []
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("## "):
                title = line[3:].strip()
                number = NUMBERED.fullmatch(title)
                current = found.setdefault(number[1] if number else title, [number[2] if number else title])
            elif line.startswith("### ") and current:
                current.append(line[4:].strip())
    return found


def _titles(heads: dict[str, list[str]]) -> list[str]:
    """The ``## `` headings' titles."""
    return [titles[0] for titles in heads.values()]


def docstrings(path: Path) -> list[str]:
    """The docstrings of a module: its own, and every function's, class's and method's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef))]
    return [doc for node in nodes if (doc := ast.get_docstring(node, clean=False))]


@cache
def tags(path: Path) -> list[tuple[str, str]]:
    """Each tag in ``path``'s docstrings: (lesson, the text after ``·``), lines joined."""
    found = []
    for doc in docstrings(path):
        text = re.sub(r"\s*\n\s*", " ", doc)  # a tag may wrap onto the next line
        found += [(m[1], m[2]) for m in TAG.finditer(text)]
    return found


def problems(lesson: str, text: str) -> list[str]:
    """What is wrong with the tag ``Lesson {lesson} · {text}``, if anything."""
    if not list(NOTEBOOKS.glob(f"{lesson}_*.ipynb")):
        return [f"there is no lesson {lesson}"]
    heads = headings(lesson)
    wrong = []

    def check(number: str, title: str | None, *, case: bool = True) -> None:
        if number not in heads:
            wrong.append(f"lesson {lesson} has no section {number} (its headings: {_titles(heads)})")
        elif title is not None:
            if case:  # "N. Title…": the tag's text starts with the heading
                fits = any(title.startswith(head) for head in heads[number])
            else:  # "section N, title": a heading and the title up to its first stop start alike
                short = re.split(r"[,;:.(]", title, maxsplit=1)[0].strip().lower()
                fits = any(
                    head.lower().startswith(short) or short.startswith(head.lower()) for head in heads[number]
                )
            if not fits:
                head = heads[number][0]
                wrong.append(f"lesson {lesson}'s section {number} is '{number}. {head}', not {title[:60]!r}")

    if numbered := NUMBERED.match(text):
        check(numbered[1], numbered[2])
        return wrong
    if section := SECTION.match(text):
        check(section[1], None if section[2] else section[3], case=False)
        if section[2]:
            check(section[2], None)
        return wrong
    if number := re.match(r"(\d+)", text):
        check(number[1], None)
        rest = text[number.end() :]
        while more := MORE.match(rest):
            check(more[1], None)
            rest = rest[more.end() :]
        return wrong
    if text[:1].isupper() and not any(text.startswith(head) for head in _titles(heads)):
        wrong.append(f"lesson {lesson} has no heading that {text[:60]!r} starts with")
    return wrong


def test_the_tags_are_read_from_every_module_the_model_included() -> None:
    read = {path.relative_to(ATTNLIB).as_posix() for path in MODULES if tags(path)}
    assert {
        "model/gguf.py",
        "model/llama.py",
        "model/llama_file.py",
        "decoder/kv_cache.py",
        "core.py",
    } <= read


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(ATTNLIB).as_posix())
def test_every_section_a_tag_names_is_a_heading_of_its_lesson(path: Path) -> None:
    wrong = [
        f"'Lesson {lesson} · {text[:50]}…': {p}"
        for lesson, text in tags(path)
        for p in problems(lesson, text)
    ]
    assert not wrong, f"{path.relative_to(ROOT)}:\n" + "\n".join(wrong)


def test_a_stale_tag_is_caught() -> None:
    assert problems("16", "1. Open the file: its tokenizer.") == []
    assert problems("16", "1. The file: its tokenizer.") == [
        "lesson 16's section 1 is '1. Open the file', not 'The file: its tokenizer.'"
    ]
    assert problems("15", "1, · 2 and · 9: the cache") == [
        "lesson 15 has no section 9 (its headings: " + str(_titles(headings("15"))) + ")"
    ]
    assert problems("12", "section 6, what FlashAttention adds.") == []
    assert problems("09", "section 2, the cost: more heads") == []  # a ### heading of section 2
    assert problems("07", "Attention in eight lines.") == []
    assert problems("07", "Attention in nine lines.") != []
    assert problems("99", "1. Nothing") == ["there is no lesson 99"]


def _public() -> list[str]:
    """Every public function and class of attnlib's modules (``__all__``), by name; not the
    argument checks of ``attnlib.validation``, which no lesson explains."""
    names = []
    for module in ["attnlib", *(m.name for m in pkgutil.walk_packages(attnlib.__path__, "attnlib."))]:
        if module == "attnlib.validation":
            continue
        loaded = importlib.import_module(module)
        for name in getattr(loaded, "__all__", []):
            obj = getattr(loaded, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module:
                names.append(f"{module}.{name}")
    return names


def test_every_public_function_names_its_lesson() -> None:
    unnamed = []
    for name in _public():
        module, attr = name.rsplit(".", 1)
        if not TAG_OR_LESSON.search(inspect.getdoc(getattr(importlib.import_module(module), attr)) or ""):
            unnamed.append(name)
    assert not unnamed, f"these docstrings name no lesson: {unnamed}"
