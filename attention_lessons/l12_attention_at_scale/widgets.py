"""The online softmax explorer of lesson 12: one query row read block by block."""

from __future__ import annotations

from typing import Any

import numpy as np
import traitlets

from attention_lessons.kit.examples import online_softmax_row
from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import RealNumber, WholeNumber
from attention_lessons.kit.widgets.modules import module_text
from attnlib.core import softmax
from attnlib.efficient import online_softmax
from attnlib.validation import as_seed, is_number

__all__ = [
    "BLOCK_SIZES",
    "OnlineSoftmaxExplorer",
    "online_softmax_explorer",
    "steps_table",
]

#: The block sizes the explorer offers (keys per block).
BLOCK_SIZES = (1, 2, 4, 8)


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
    :func:`steps_table` ``}``), ``exact_output`` (``attnlib.softmax(scores) @ values``),
    ``style_name``, ``themes``. The front end draws the table's row for ``block_size`` and
    ``blocks_read``.
    """

    _esm = module_text("attention_lessons.l12_attention_at_scale", "online_softmax.js")
    summary = "Online softmax: one query row read block by block"

    blocks_read = WholeNumber(1).tag(sync=True)
    block_size = WholeNumber(4).tag(sync=True)
    scores = traitlets.List(RealNumber()).tag(sync=True)
    values = traitlets.List(traitlets.List(RealNumber())).tag(sync=True)
    tables = traitlets.Dict().tag(sync=True)
    exact_output = traitlets.List(RealNumber()).tag(sync=True)

    @traitlets.validate("block_size")
    def _check_block_size(self, proposal: traitlets.Bunch) -> int:
        block_size = self._checked_index(proposal, BLOCK_SIZES)
        self._check_blocks(self.blocks_read, block_size)
        return block_size

    @traitlets.validate("blocks_read")
    def _check_blocks_read(self, proposal: traitlets.Bunch) -> int:
        self._check_blocks(proposal["value"], self.block_size)
        return int(proposal["value"])

    def _check_blocks(self, blocks_read: int, block_size: int) -> None:
        blocks = len(self.tables[str(block_size)])
        if not 1 <= blocks_read <= blocks:
            raise traitlets.TraitError(
                f"blocks_read must be from 1 to {blocks} for blocks of {block_size}, got {blocks_read}"
            )


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
        Seed of the scores and values (:func:`attention_lessons.kit.examples.online_softmax_row`).
    block_size : int
        Start value, one of :data:`BLOCK_SIZES`.
    style : {"light", "dark"}

    Returns
    -------
    OnlineSoftmaxExplorer
    """
    if not is_number(n_keys, whole=True) or not 2 <= n_keys <= 32:
        raise ValueError(f"n_keys must be an integer from 2 to 32, got {n_keys!r}")
    as_seed(seed)
    if not is_number(block_size, whole=True) or block_size not in BLOCK_SIZES:
        raise ValueError(f"block_size must be one of {BLOCK_SIZES}, got {block_size!r}")
    scores, values = online_softmax_row(int(n_keys), int(seed))
    return OnlineSoftmaxExplorer(
        scores=scores.tolist(),
        values=values.tolist(),
        tables={str(b): steps_table(scores, values, b) for b in BLOCK_SIZES},
        exact_output=(softmax(scores) @ values).tolist(),
        block_size=int(block_size),
        blocks_read=1,
        style_name=style,
    )
