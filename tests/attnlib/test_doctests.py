"""The examples in attnlib's docstrings run and print what they say (core's eight-line attention
first); tests/course/test_course_doctests.py runs the course's."""

from __future__ import annotations

import doctest
import importlib

import pytest
from conftest import modules_with_examples, run_doctests

import attnlib

MODULES = modules_with_examples(attnlib)


def test_core_has_the_eight_line_attention_as_an_example() -> None:
    assert "attnlib.core" in MODULES
    module_examples = doctest.DocTestFinder().find(importlib.import_module("attnlib.core"))[0]
    assert module_examples.name == "attnlib.core" and len(module_examples.examples) >= 8


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    run_doctests(module)
