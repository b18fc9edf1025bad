"""The RoPE explorer of lesson 10: a 2D query and key turned by their positions, and their score."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import traitlets

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import RealNumber, real_array
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.l10_positions.plots import ROPE_KEY, ROPE_QUERY, rope_limits
from attnlib.positions import rope
from attnlib.validation import is_number

__all__ = ["MAX_POSITION", "RopeExplorer", "rope_explorer"]

#: The largest position (and offset) a slider reaches by default.
MAX_POSITION = 12


class RopeExplorer(Explorer):
    """A query at position m and a key at position n, rotated by RoPE (d = 2), and their score.

    Use :func:`rope_explorer` to make one. Both positions are moved by ``offset`` too: the score
    changes with ``query_position − key_position`` and never with the offset.

    Traits
    ------
    Inputs (synced; the front end sets them on every move):

    query_position, key_position : float
        0 … ``max_position``, in steps of ``step``.
    offset : float
        0 … ``max_position``, added to both positions.

    Set once (synced): ``query``, ``key`` (the 2D vectors before rotation), ``max_position``,
    ``step``, ``limits`` (both axes of the arrow panel,
    :func:`attention_lessons.l10_positions.plots.rope_limits`), ``style_name``, ``themes``.

    The front end computes what it draws (``rotary.js``, checked against attnlib in
    ``tests/lessons/l10_positions/rotary.test.mjs``); :attr:`rotated` is the same computed by attnlib,
    when read.
    """

    _esm = module_text("attention_lessons.l10_positions", "rope.js")
    summary = "RoPE explorer: a query and a key rotated by their positions, and their score"

    query = traitlets.List(RealNumber()).tag(sync=True)
    key = traitlets.List(RealNumber()).tag(sync=True)
    query_position = RealNumber(0.0).tag(sync=True)
    key_position = RealNumber(0.0).tag(sync=True)
    offset = RealNumber(0.0).tag(sync=True)
    max_position = RealNumber(float(MAX_POSITION)).tag(sync=True)
    step = RealNumber(1.0).tag(sync=True)
    limits = traitlets.List(RealNumber()).tag(sync=True)

    @traitlets.validate("query_position", "key_position", "offset")
    def _check_position(self, proposal: traitlets.Bunch) -> float:
        value = float(proposal["value"])
        if not 0.0 <= value <= self.max_position:
            raise traitlets.TraitError(
                f"{proposal['trait'].name} must be from 0 to max_position={self.max_position:g}, got {value}"
            )
        return value

    @property
    def rotated(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rope(query, [m]), rope(key, [n]))`` with ``m = query_position + offset`` and
        ``n = key_position + offset``, each (2,), computed with :func:`attnlib.positions.rope`
        when read; their dot product is the score drawn."""
        m = self.query_position + self.offset
        n = self.key_position + self.offset
        return rope(self.query, [m]), rope(self.key, [n])


def rope_explorer(
    query: npt.ArrayLike = ROPE_QUERY,
    key: npt.ArrayLike = ROPE_KEY,
    *,
    query_position: float = 2.0,
    key_position: float = 5.0,
    offset: float = 0.0,
    max_position: float = MAX_POSITION,
    step: float = 1.0,
    style: str = "light",
) -> RopeExplorer:
    """Move a query's and a key's positions (and an offset added to both) and watch RoPE turn them.

    The picture is :func:`attention_lessons.l10_positions.plots.rope_figure`: the arrows before and after the
    rotation, and the score as a function of the distance ``m − n``.

    Parameters
    ----------
    query, key : array_like, shape (2,)
        The vectors before rotation (default: those of lesson 10,
        :data:`attention_lessons.l10_positions.plots.ROPE_QUERY` and
        :data:`~attention_lessons.l10_positions.plots.ROPE_KEY`).
    query_position, key_position, offset : float
        Start values of the three sliders, from 0 to ``max_position``.
    max_position : float
        The end of every slider (positive).
    step : float
        The sliders' step (1: whole token positions).
    style : {"light", "dark"}

    Returns
    -------
    RopeExplorer
    """
    q, k = real_array(query, "query"), real_array(key, "key")
    if q.shape != (2,) or k.shape != (2,):
        raise ValueError(
            f"query and key must be 2D vectors of shape (2,), got shapes {q.shape} and {k.shape}"
        )
    top = _number(max_position, "max_position")
    if top <= 0:
        raise ValueError(f"max_position must be positive, got {max_position!r}")
    size = _number(step, "step")
    if not 0 < size <= top:
        raise ValueError(f"step must be a positive number no larger than max_position, got {step!r}")
    starts = {"query_position": query_position, "key_position": key_position, "offset": offset}
    for name, value in starts.items():
        if not 0 <= _number(value, name) <= top:
            raise ValueError(f"{name} must be from 0 to max_position={top:g}, got {value!r}")
    return RopeExplorer(
        query=q.tolist(),
        key=k.tolist(),
        max_position=top,
        step=size,
        limits=list(rope_limits(q, k)),
        query_position=float(query_position),
        key_position=float(key_position),
        offset=float(offset),
        style_name=style,
    )


def _number(value: object, name: str) -> float:
    if not is_number(value):
        raise TypeError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not np.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number
