"""The scaling explorer of lesson 04: why divide by √d_k, over seeded random queries and keys."""

from __future__ import annotations

from typing import Any

import numpy as np
import traitlets

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.l04_scaling import plots
from attention_lessons.l04_scaling.scaling import D_K_VALUES, entropy, scaling_statistics
from attnlib.validation import as_seed, is_number

__all__ = ["ScalingExplorer", "scaling_explorer", "scaling_table"]

#: The statistics of :class:`attention_lessons.l04_scaling.scaling.ScalingStatistics` that the explorer shows.
STATISTICS = (
    "raw_variance",
    "scaled_variance",
    "raw_max_weight",
    "scaled_max_weight",
    "raw_entropy",
    "scaled_entropy",
    "raw_jacobian_norm",
    "scaled_jacobian_norm",
)


def scaling_table(n_queries: int, n_keys: int, seed: int) -> list[dict[str, Any]]:
    """Everything the explorer draws, for every d_k of
    :data:`attention_lessons.l04_scaling.scaling.D_K_VALUES`.

    Parameters
    ----------
    n_queries, n_keys : int
    seed : int
        Seed of the random queries and keys
        (:func:`attention_lessons.l04_scaling.scaling.scaling_statistics`).

    Returns
    -------
    list of dict, one per d_k
        ``d_k``; ``half_width`` and ``raw_counts``, ``scaled_counts`` (48 bins from
        ``-half_width`` to ``half_width``, :func:`attention_lessons.l04_scaling.plots.scaling_bins`; scores
        beyond counted in the end bins); ``raw_weights``, ``scaled_weights`` (the first query's weights),
        their largest weight and entropy (``first_raw_max_weight``, ``first_scaled_max_weight``,
        ``first_raw_entropy``, ``first_scaled_entropy``); and the statistics over every query
        (``raw_variance``, ``scaled_variance``, ``raw_max_weight``, … as in
        :class:`attention_lessons.l04_scaling.scaling.ScalingStatistics`).
    """
    table = []
    for d_k in D_K_VALUES:
        stats = scaling_statistics(d_k, n_queries=n_queries, n_keys=n_keys, seed=seed)
        edges = plots.scaling_bins(d_k)
        raw_w, scaled_w = stats.raw_weights[0], stats.scaled_weights[0]
        row: dict[str, Any] = {
            "d_k": d_k,
            "half_width": float(edges[-1]),
            "raw_counts": np.histogram(np.clip(stats.raw, edges[0], edges[-1]), edges)[0].tolist(),
            "scaled_counts": np.histogram(np.clip(stats.scaled, edges[0], edges[-1]), edges)[0].tolist(),
            "raw_weights": raw_w.tolist(),
            "scaled_weights": scaled_w.tolist(),
            "first_raw_max_weight": float(raw_w.max()),
            "first_scaled_max_weight": float(scaled_w.max()),
            "first_raw_entropy": float(entropy(raw_w)),
            "first_scaled_entropy": float(entropy(scaled_w)),
        }
        row.update({name: float(getattr(stats, name)) for name in STATISTICS})
        table.append(row)
    return table


class ScalingExplorer(Explorer):
    """Random queries and keys of dimension d_k: raw vs scaled scores and weights.

    Use :func:`scaling_explorer` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them):

    d_k : int
        One of ``d_k_values`` (the slider's value is its index there).
    seed : int
        Seed of the random vectors; the "new random vectors" button adds 1.

    Set by Python (synced): ``table`` (:func:`scaling_table` of ``table_seed``, recomputed when
    ``seed`` changes), ``table_seed``; set once: ``d_k_values``
    (:data:`attention_lessons.l04_scaling.scaling.D_K_VALUES`), ``n_queries``, ``n_keys``, ``style_name``,
    ``themes``.

    The front end draws the table's row for ``d_k``; a new seed is drawn, and its table
    computed, by Python.
    """

    _esm = module_text("attention_lessons.l04_scaling", "scaling.js")
    summary = "Why √d_k: a d_k slider over random queries and keys"

    d_k = traitlets.Int(64).tag(sync=True)
    seed = traitlets.Int(0).tag(sync=True)
    d_k_values = traitlets.List(traitlets.Int(), default_value=list(D_K_VALUES)).tag(sync=True)
    n_queries = traitlets.Int(256).tag(sync=True)
    n_keys = traitlets.Int(8).tag(sync=True)
    table = traitlets.List(traitlets.Dict()).tag(sync=True)
    table_seed = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        seed = int(kwargs.get("seed", 0))
        kwargs.setdefault("table", scaling_table(kwargs["n_queries"], kwargs["n_keys"], seed))
        kwargs.setdefault("table_seed", seed)
        super().__init__(**kwargs)

    @traitlets.validate("d_k")
    def _check_d_k(self, proposal: traitlets.Bunch) -> int:
        return self._checked_index(proposal, D_K_VALUES)

    @traitlets.observe("seed")
    def _new_draw(self, _change: traitlets.Bunch) -> None:
        with self.hold_sync():
            self.table = scaling_table(self.n_queries, self.n_keys, self.seed)
            self.table_seed = self.seed


def scaling_explorer(
    d_k: int = 64, *, n_queries: int = 256, n_keys: int = 8, seed: int = 0, style: str = "light"
) -> ScalingExplorer:
    """Why divide by √d_k: a d_k slider (1 … 1024) over seeded random queries and keys.

    The picture is :func:`attention_lessons.l04_scaling.plots.scaling_figure`: the spread of the raw and the
    scaled scores, one query's weights over the keys with and without scaling, and the variance against
    d_k. Below it the numbers: largest weight, entropy and the size of the softmax's gradient,
    raw and scaled.

    Parameters
    ----------
    d_k : int
        Start value, one of :data:`attention_lessons.l04_scaling.scaling.D_K_VALUES`.
    n_queries, n_keys : int
        How many random queries and keys (``n_keys`` from 1 to 16, to draw a bar for each).
    seed : int
        Seed of the random vectors (the button draws the next one).
    style : {"light", "dark"}

    Returns
    -------
    ScalingExplorer
    """
    if d_k not in D_K_VALUES:
        raise ValueError(f"d_k must be one of {D_K_VALUES}, got {d_k!r}")
    for name, value, most in (("n_queries", n_queries, 4096), ("n_keys", n_keys, 16)):
        if not (is_number(value, whole=True) and 1 <= value <= most):
            raise ValueError(f"{name} must be an integer from 1 to {most}, got {value!r}")
    as_seed(seed)
    return ScalingExplorer(
        d_k=int(d_k), n_queries=int(n_queries), n_keys=int(n_keys), seed=int(seed), style_name=style
    )
