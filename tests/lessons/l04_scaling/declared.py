"""What lesson 04's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

import inspect

from attention_lessons.l04_scaling import scaling
from attention_lessons.l04_scaling.widgets import ScalingExplorer, scaling_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    ScalingExplorer: lambda style, request: scaling_explorer(n_queries=16, style=style),
}


def _scaling_values(controls: dict[str, object]) -> dict[str, object]:
    from attention_lessons.l04_scaling import widgets

    d_k = scaling.D_K_VALUES[int(controls["d_k"])]
    # the lesson's scaling_explorer(64) draws with the function's own defaults
    defaults = inspect.signature(widgets.scaling_explorer).parameters
    stats = scaling.scaling_statistics(
        d_k,
        n_queries=defaults["n_queries"].default,
        n_keys=defaults["n_keys"].default,
        seed=defaults["seed"].default,
    )
    return {
        "raw_variance": stats.raw_variance,
        "scaled_variance": stats.scaled_variance,
        "raw_max_weight": stats.raw_max_weight,
        "scaled_max_weight": stats.scaled_max_weight,
        "raw_entropy": stats.raw_entropy,
        "scaled_entropy": stats.scaled_entropy,
        "raw_jacobian_norm": stats.raw_jacobian_norm,
        "scaled_jacobian_norm": stats.scaled_jacobian_norm,
    }


#: tests/site/test_browser.py and test_book.py: the explorer a browser drives in JupyterLab,
#: Notebook 7 and the book: its kind (``div.attnlib-KIND``), the moves (``"key"``, ``"drag"`` or
#: ``"toggle"`` of a control), the quantities whose drawn numbers must change, attnlib's values.
BROWSER = {
    "kind": "scaling",
    "moves": (("key", "d_k"), ("drag", "d_k"), ("key", "d_k")),
    "quantities": ("raw_variance", "scaled_variance", "raw_max_weight", "scaled_max_weight"),
    "values": _scaling_values,
}
