"""The examples in the course's docstrings (the kit's and the lessons' modules) run and print
what they say."""

from __future__ import annotations

import pytest
from conftest import modules_with_examples, run_doctests

import attention_lessons


@pytest.mark.parametrize("module", modules_with_examples(attention_lessons))
def test_docstring_examples(module: str) -> None:
    run_doctests(module)
