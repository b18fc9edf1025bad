"""What lesson 01's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import numpy as np

from attention_lessons.l01_embeddings.similarity import similarity
from attention_lessons.l01_embeddings.widgets import SimilarityExplorer, similarity_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    SimilarityExplorer: lambda style, request: similarity_explorer(style=style),
}


def _similarity_values(controls: dict[str, object]) -> dict[str, object]:
    a = np.array([float(controls["x-0"]), float(controls["y-0"])])
    b = np.array([float(controls["x-1"]), float(controls["y-1"])])
    sim = similarity(a, b)
    return {
        "dot": sim.dot,
        "cosine": sim.cosine,
        "angle_degrees": sim.angle_degrees,
        "norm_a": sim.norm_a,
        "norm_b": sim.norm_b,
    }


#: tests/site/test_browser.py and test_book.py: the explorer a browser drives in JupyterLab,
#: Notebook 7 and the book: its kind (``div.attnlib-KIND``), the moves (``"key"``, ``"drag"`` or
#: ``"toggle"`` of a control), the quantities whose drawn numbers must change, attnlib's values.
BROWSER = {
    "kind": "similarity",
    "moves": (("key", "x-0"), ("drag", "y-1"), ("key", "y-0"), ("drag", "x-1")),
    "quantities": ("dot", "cosine", "angle_degrees"),
    "values": _similarity_values,
}
