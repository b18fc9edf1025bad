"""What lesson 07's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import functools

import numpy as np
from conftest import indexed_controls

from attention_lessons.l07_whole_picture.widgets import Playground, playground
from attnlib import attention_steps, core
from attnlib.projection import qkv

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    Playground: lambda style, request: playground(style=style),
}


@functools.cache
def _lesson_projections() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_q, W_k, W_v of the playground that lesson 07 makes (``widgets.playground()``)."""
    from attention_lessons.l07_whole_picture import widgets

    explorer = widgets.playground()
    try:
        return tuple(np.array(W, dtype=np.float64) for W in (explorer.W_q, explorer.W_k, explorer.W_v))
    finally:
        explorer.close()


def _playground_values(controls: dict[str, object]) -> dict[str, object]:
    X = np.column_stack([np.array(indexed_controls(controls, axis), dtype=np.float64) for axis in "xy"])
    Q, K, V = qkv(X, *_lesson_projections())
    d_k = int(float(controls["d_k"]))
    steps = attention_steps(Q, K, V, scale=core.default_scale(d_k), causal=bool(controls["causal"]))
    return {
        "embeddings": X,
        "raw_scores": steps.raw_scores,
        "scale": steps.scale,
        "weights": steps.weights,
        "largest_weight": steps.weights,  # drawn at (i, j) of each row's largest weight
        "output": steps.output,
    }


#: tests/site/test_browser.py and test_book.py: the explorer a browser drives in JupyterLab,
#: Notebook 7 and the book: its kind (``div.attnlib-KIND``), the moves (``"key"``, ``"drag"`` or
#: ``"toggle"`` of a control), the quantities whose drawn numbers must change, attnlib's values.
BROWSER = {
    "kind": "playground",
    "moves": (("key", "x-0"), ("drag", "y-1"), ("drag", "d_k"), ("toggle", "causal"), ("key", "y-2")),
    "quantities": ("raw_scores", "weights", "output"),
    "values": _playground_values,
}
