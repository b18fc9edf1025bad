"""The examples in attnlib's and course/'s docstrings run and print what they say (core's eight-line
attention first).

Only modules whose source holds an example (``>>>``) are imported, so this file loads matplotlib
only if a drawing module has an example.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import attnlib
import course

PACKAGES = [Path(package.__file__).resolve().parent for package in (attnlib, course)]


def _modules_with_examples() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(package.parent).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_core_has_the_eight_line_attention_as_an_example() -> None:
    assert "attnlib.core" in _modules_with_examples()
    finder = doctest.DocTestFinder()
    module_examples = finder.find(importlib.import_module("attnlib.core"))[0]
    assert module_examples.name == "attnlib.core" and len(module_examples.examples) >= 8


@pytest.mark.parametrize("module", _modules_with_examples())
def test_docstring_examples(module: str) -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(importlib.import_module(module), optionflags=flags, verbose=False)
    assert result.attempted > 0, f"{module} has '>>>' but doctest found no example"
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples in {module} failed (see stdout)"
    )
