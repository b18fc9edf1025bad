"""The online softmax explorer of lesson 12: one query row read block by block."""

from __future__ import annotations

from typing import Any

import numpy as np
import traitlets

from attnlib.core import softmax
from attnlib.efficient import online_softmax
from attnlib.widgets.base import Explorer
from attnlib.widgets.modules import module_text

__all__ = [
    "BLOCK_SIZES",
    "OnlineSoftmaxExplorer",
    "online_softmax_explorer",
    "online_softmax_row",
    "steps_table",
]

#: The block sizes the explorer offers (keys per block).
BLOCK_SIZES = (1, 2, 4, 8)


def online_softmax_row(n_keys: int = 16, seed: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """One query's scores over ``n_keys`` keys and the keys' values in 2D, seeded.

    Returns
    -------
    scores : (n_keys,) float64
        Normal with standard deviation 2, plus a slow upward drift so that the running maximum
        grows in several blocks.
    values : (n_keys, 2) float64
    """
    rng = np.random.default_rng(seed)
    scores = rng.normal(scale=2.0, size=n_keys) + np.linspace(0.0, 3.0, n_keys)
    values = rng.normal(size=(n_keys, 2))
    return scores, values


def steps_table(scores: np.ndarray, values: np.ndarray, block_size: int) -> list[dict[str, Any]]:
    """Every state of :func:`attnlib.efficient.online_softmax` as plain numbers, one per block read.

    Returns
    -------
    list of dict
        ``start``, ``stop`` (the block just read), ``maximum``, ``total``, ``rescale`` and ``output``
        (a list of 2 floats) after that block.
    """
    return [
        {
            "start": state.start,
            "stop": state.stop,
            "maximum": state.maximum,
            "total": state.total,
            "rescale": float(state.rescale),
            "output": [float(x) for x in state.output],  # type: ignore[union-attr]
        }
        for state in online_softmax(scores, block_size, values)
    ]


class OnlineSoftmaxExplorer(Explorer):
    """One query row of scores read block by block: running maximum, running sum, partial output.

    Use :func:`online_softmax_explorer` to make one. Python computes every state of every block
    size with :func:`attnlib.efficient.online_softmax` and ships them; the page only selects.

    Traits
    ------
    Inputs (synced; the front end sets them):

    blocks_read : int
        How many blocks have been read, 1 … ``ceil(n_keys / block_size)``.
    block_size : int
        One of :data:`BLOCK_SIZES`.

    Set once (synced): ``scores``, ``values`` (n_keys × 2), ``tables`` (``{str(block_size):``
    :func:`steps_table` ``}``), ``exact_weights`` and ``exact_output`` (:func:`attnlib.softmax`
    of the scores, and the weights times the values), ``style_name``, ``themes``.

    Results (Python only; the table's row for ``block_size`` and ``blocks_read``):

    maximum, total, rescale : float
    output : list of float
    """

    _esm = module_text("online_softmax.js")
    summary = "Online softmax: one query row read block by block"

    blocks_read = traitlets.Int(1).tag(sync=True)
    block_size = traitlets.Int(4).tag(sync=True)
    scores = traitlets.List(traitlets.Float()).tag(sync=True)
    values = traitlets.List(traitlets.List(traitlets.Float())).tag(sync=True)
    tables = traitlets.Dict().tag(sync=True)
    exact_weights = traitlets.List(traitlets.Float()).tag(sync=True)
    exact_output = traitlets.List(traitlets.Float()).tag(sync=True)

    maximum = traitlets.Float()
    total = traitlets.Float()
    rescale = traitlets.Float()
    output = traitlets.List(traitlets.Float())

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._select()

    @traitlets.validate("block_size")
    def _check_block_size(self, proposal: traitlets.Bunch) -> int:
        if proposal["value"] not in BLOCK_SIZES:
            raise traitlets.TraitError(f"block_size must be one of {BLOCK_SIZES}, got {proposal['value']!r}")
        return int(proposal["value"])

    @traitlets.observe("blocks_read", "block_size")
    def _changed(self, _change: traitlets.Bunch) -> None:
        self._select()

    def _select(self) -> None:
        """Set the result traits to the state after ``blocks_read`` blocks of ``block_size``."""
        table = self.tables[str(self.block_size)]
        if not 1 <= self.blocks_read <= len(table):
            raise traitlets.TraitError(
                f"blocks_read must be from 1 to {len(table)} for blocks of {self.block_size}, "
                f"got {self.blocks_read}"
            )
        state = table[self.blocks_read - 1]
        self.maximum, self.total, self.rescale = state["maximum"], state["total"], state["rescale"]
        self.output = state["output"]


def online_softmax_explorer(
    *, n_keys: int = 16, seed: int = 12, block_size: int = 4, style: str = "light"
) -> OnlineSoftmaxExplorer:
    """Step through the key blocks of one query row and watch the online softmax converge.

    A slider over blocks shows, after each block, the running maximum ``m``, the running sum
    ``l = Σ exp(s_j − m)``, the factor ``exp(m_before − m)`` the block applied to what was there,
    and the partial output, beside the exact ``softmax(s) V`` it reaches at the last block.

    Parameters
    ----------
    n_keys : int
        Keys in the row, 2 to 32.
    seed : int
        Seed of the scores and values (:func:`online_softmax_row`).
    block_size : int
        Start value, one of :data:`BLOCK_SIZES`.
    style : {"light", "dark"}

    Returns
    -------
    OnlineSoftmaxExplorer
    """
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or not 2 <= n_keys <= 32:
        raise ValueError(f"n_keys must be an integer from 2 to 32, got {n_keys!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if block_size not in BLOCK_SIZES:
        raise ValueError(f"block_size must be one of {BLOCK_SIZES}, got {block_size!r}")
    scores, values = online_softmax_row(int(n_keys), int(seed))
    weights = softmax(scores)
    return OnlineSoftmaxExplorer(
        scores=scores.tolist(),
        values=values.tolist(),
        tables={str(b): steps_table(scores, values, b) for b in BLOCK_SIZES},
        exact_weights=weights.tolist(),
        exact_output=(weights @ values).tolist(),
        block_size=int(block_size),
        blocks_read=1,
        style_name=style,
    )
