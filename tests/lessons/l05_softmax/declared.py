"""What lesson 05's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import numpy as np
from conftest import indexed_controls

from attention_lessons.l04_scaling import scaling
from attention_lessons.l05_softmax.widgets import SoftmaxExplorer, softmax_explorer
from attnlib import core

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    SoftmaxExplorer: lambda style, request: softmax_explorer(style=style),
}


def _softmax_values(controls: dict[str, object]) -> dict[str, object]:
    masked = np.array(indexed_controls(controls, "mask"), dtype=bool)
    scores = np.where(masked, -np.inf, np.array(indexed_controls(controls, "score"), dtype=np.float64))
    temperature = 10.0 ** float(controls["temperature"])
    weights = core.softmax(scores / temperature)
    return {
        "scores": scores,
        "weights": weights,
        "temperature": temperature,
        "weight_sum": float(weights.sum()),
        "entropy": float(scaling.entropy(weights)),
    }


#: tests/site/test_browser.py and test_book.py: the explorer a browser drives in JupyterLab,
#: Notebook 7 and the book: its kind (``div.attnlib-KIND``), the moves (``"key"``, ``"drag"`` or
#: ``"toggle"`` of a control), the quantities whose drawn numbers must change, attnlib's values.
BROWSER = {
    "kind": "softmax",
    "moves": (("key", "score-0"), ("drag", "temperature"), ("toggle", "mask-1"), ("drag", "score-2")),
    "quantities": ("scores", "weights"),
    "values": _softmax_values,
}
