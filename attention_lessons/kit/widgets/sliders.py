"""What the explorers with a slider per embedding coordinate share (the playground of lesson 07 and
the two-head explorer of lesson 09): their traits, the check of a move, reset, and the checks of
the arguments that make one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy.typing as npt
import traitlets

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import RealNumber, embeddings_on_sliders, real_array, slider_range
from attnlib.validation import is_number

__all__ = ["EmbeddingExplorer", "embedding_arguments", "matrix_trait"]


def matrix_trait() -> traitlets.List:
    """A trait holding a matrix as a list of rows of floats."""
    return traitlets.List(traitlets.List(RealNumber()))


class EmbeddingExplorer(Explorer):
    """An explorer of 2D token embeddings, an x and a y slider for each, and their projections.

    Traits
    ------
    Input (synced; the front end sets it on every move):

    embeddings : list of [x, y], one per token

    Set once (synced): ``tokens``, ``W_q``, ``W_k``, ``W_v`` (lists of rows), ``value_min``,
    ``value_max``, ``step`` (the embedding sliders), ``initial`` (the inputs that ``reset``
    restores), ``style_name``, ``themes``, ``colormaps``.
    """

    tokens = traitlets.List(traitlets.Unicode()).tag(sync=True)
    embeddings = matrix_trait().tag(sync=True)
    W_q = matrix_trait().tag(sync=True)
    W_k = matrix_trait().tag(sync=True)
    W_v = matrix_trait().tag(sync=True)
    value_min = RealNumber(-2.0).tag(sync=True)
    value_max = RealNumber(2.0).tag(sync=True)
    step = RealNumber(0.05).tag(sync=True)
    initial = traitlets.Dict().tag(sync=True)

    @traitlets.validate("embeddings")
    def _check_embeddings(self, proposal: traitlets.Bunch) -> list[list[float]]:
        return embeddings_on_sliders(proposal["value"], len(self.tokens), self.value_min, self.value_max)

    def reset(self) -> None:
        """Put every input back to its start value (``initial``)."""
        with self.hold_sync():
            for name, value in self.initial.items():
                setattr(self, name, value)


def embedding_arguments(
    tokens: Sequence[str],
    embeddings: npt.ArrayLike,
    max_tokens: int,
    value_range: tuple[float, float],
    step: float,
) -> dict[str, Any]:
    """The checked arguments of an :class:`EmbeddingExplorer`, or an error naming what is wrong.

    Parameters
    ----------
    tokens : sequence of str
        1 to ``max_tokens`` names, one per embedding (repeats allowed).
    embeddings : array_like, shape (n, 2)
    max_tokens : int
    value_range : (float, float)
        Range of the sliders, widened to hold the embeddings.
    step : float
        Step of the sliders: positive, no larger than their range.

    Returns
    -------
    dict
        ``tokens`` (list of str), ``embeddings`` (list of [x, y]), ``value_min``, ``value_max``
        and ``step``: keyword arguments of the explorer.
    """
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of names, one per embedding, not the string {tokens!r}")
    names = [str(token) for token in tokens]
    X = real_array(embeddings, "embeddings")
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"embeddings must have shape (n, 2): one 2D vector per token, got shape {X.shape}")
    if len(names) != X.shape[0] or not 1 <= X.shape[0] <= max_tokens:
        raise ValueError(
            f"give 1 to {max_tokens} tokens, one per embedding: {len(names)} tokens, {X.shape[0]} embeddings"
        )
    low, high = slider_range(value_range, X)
    if not is_number(step) or not 0 < step <= high - low:
        raise ValueError(f"step must be a positive number no larger than the slider range, got {step!r}")
    return {
        "tokens": names,
        "embeddings": X.tolist(),
        "value_min": low,
        "value_max": high,
        "step": float(step),
    }
