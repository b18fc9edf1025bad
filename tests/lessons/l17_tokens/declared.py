"""What lesson 17's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import functools

from attention_lessons.l17_tokens.widgets import SAMPLES, TokensExplorer, tokens_explorer
from attnlib import tokens

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    TokensExplorer: lambda style, request: tokens_explorer(
        tokens.train("the cat sat on the mat; the dog sat on the cat", 12, rule="gpt2"), style=style
    ),
}


@functools.cache
def _lesson_inputs() -> tuple[list[tuple[int, int]], str]:
    """The merge table and the text lesson 17 shows its explorer with, made as its notebook makes them
    (section 3 trains 4,096 merges with GPT-2's cut on ``analysis.training_text()``; section 6 shows
    ``analysis.soliloquy()``)."""
    from attention_lessons.l17_tokens import analysis

    return tokens.train(analysis.training_text(), 4096, rule="gpt2"), analysis.soliloquy()


def _tokens_values(controls: dict[str, object]) -> dict[str, object]:
    """attnlib's numbers for the explorer's controls: the merges slider, and the sample picked (none:
    the lesson's own text)."""
    merges, lessons_text = _lesson_inputs()
    k = int(float(controls["n_merges"]))
    sample = controls.get("sample") or ""
    text = SAMPLES[sample] if sample else lessons_text
    ids = tokens.encode(text, merges[:k], rule="gpt2")
    n, n_bytes, n_chars = len(ids), len(text.encode("utf-8")), len(text)
    return {
        "merges": k,
        "bytes": n_bytes,
        "characters": n_chars,
        "tokens": n,
        "characters_per_token": n_chars / n if n else None,
        "bytes_per_token": n_bytes / n if n else None,
    }


#: tests/site/test_browser.py and test_book.py: the explorer a browser drives in JupyterLab,
#: Notebook 7 and the book: its kind (``div.attnlib-KIND``), the moves (``"key"``, ``"drag"`` or
#: ``"toggle"`` of a control), the quantities whose drawn numbers must change, attnlib's values.
BROWSER = {
    "kind": "tokens",
    "moves": (("key", "n_merges"), ("drag", "n_merges"), ("key", "n_merges"), ("drag", "n_merges")),
    "quantities": ("merges", "tokens", "bytes", "characters_per_token"),
    "values": _tokens_values,
}

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_pair_counts": "counts of pairs, compared exactly",
    "checks.check_merge": "lists of token ids, compared exactly",
    "checks.check_train": "lists of merged pairs, compared exactly",
    "checks.check_encode": "lists of token ids, compared exactly",
    "checks.check_decode": "text, compared exactly",
    "checks.check_function": "the runner of the five checks above, comparing what they compare",
}
