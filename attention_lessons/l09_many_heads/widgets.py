"""The explorer of lesson 09: two attention heads in 2D, their concatenation and ``W_o``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from attention_lessons.kit.widgets.inputs import real_array
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.kit.widgets.sliders import EmbeddingExplorer, embedding_arguments, matrix_trait
from attnlib.multihead import multi_head_attention

__all__ = ["MAX_TOKENS", "N_HEADS", "MultiHeadExplorer", "TwoHeads", "multi_head_explorer"]

#: The most tokens the explorer shows.
MAX_TOKENS = 8
#: The explorer's heads; each head's values are 2D, so that its output can be drawn.
N_HEADS = 2


class TwoHeads(NamedTuple):
    """What the two-head explorer draws, as attnlib computes it.

    Attributes
    ----------
    weights : (2, n, n)
        Each head's weights.
    concat : (n, 4)
        The heads' outputs side by side: head 1's ``[x, y]``, then head 2's.
    output : (n, 2)
        ``concat · W_o``.
    """

    weights: np.ndarray
    concat: np.ndarray
    output: np.ndarray


class MultiHeadExplorer(EmbeddingExplorer):
    """Self-attention with two heads of 2D tokens: each head's weights and output, their
    concatenation, and the output ``concat · W_o``. Use :func:`multi_head_explorer` to make one.

    Traits
    ------
    Input (synced; the front end sets it on every move):

    embeddings : list of [x, y], one per token

    Set once (synced): those of :class:`~attention_lessons.kit.widgets.sliders.EmbeddingExplorer` (``tokens``,
    ``W_q``, ``W_k`` (2 × 2·d_k), ``W_v`` (2 × 4), the sliders' ``value_min``, ``value_max``,
    ``step``, ``initial``, ``style_name``), and ``W_o`` (4 × 2).

    The front end computes what it draws (``multihead.js``, checked against attnlib in
    ``tests/lessons/l09_many_heads/multihead.test.mjs``); :attr:`heads` is the same computed by attnlib,
    when read.
    """

    _esm = module_text("attention_lessons.l09_many_heads", "multihead.js")
    summary = "Multi-head explorer: two heads, their concatenation and W_o"
    colormap_names = ("viridis", "cividis")

    W_o = matrix_trait().tag(sync=True)

    @property
    def heads(self) -> TwoHeads:
        """The weights, concatenation and output of the current embeddings, computed with
        :func:`attnlib.multihead.multi_head_attention` when read."""
        X = np.array(self.embeddings)
        W = {name: np.array(getattr(self, name)) for name in ("W_q", "W_k", "W_v", "W_o")}
        output, weights = multi_head_attention(X, X, **W, n_heads=N_HEADS)
        # the same heads with W_o the identity: their concatenation itself
        identity = np.eye(2 * N_HEADS)
        concat, _ = multi_head_attention(X, X, W["W_q"], W["W_k"], W["W_v"], identity, n_heads=N_HEADS)
        return TwoHeads(weights, concat, output)


def multi_head_explorer(
    tokens: Sequence[str],
    embeddings: npt.ArrayLike,
    *,
    W_q: npt.ArrayLike,
    W_k: npt.ArrayLike,
    W_v: npt.ArrayLike,
    W_o: npt.ArrayLike,
    style: str = "light",
    value_range: tuple[float, float] = (-2.0, 2.0),
    step: float = 0.05,
) -> MultiHeadExplorer:
    """Move a token's 2D embedding and watch two heads' weights, their outputs and ``concat · W_o``.

    The picture is :func:`attention_lessons.l09_many_heads.plots.two_heads_figure`: the embeddings, each
    head's weights, each head's output, the output ``concat · W_o``, the concatenation and ``W_o``.

    Parameters
    ----------
    tokens : sequence of str
        1 to :data:`MAX_TOKENS` names (repeats allowed: each token has its own sliders).
    embeddings : array_like, shape (n, 2)
    W_q, W_k : array_like, shape (2, 2·d_k)
        Head ``h`` uses columns ``h·d_k … (h+1)·d_k − 1``.
    W_v : array_like, shape (2, 4)
        Head 1's values are columns 0–1, head 2's columns 2–3 (2D, so they can be drawn).
    W_o : array_like, shape (4, 2)
    style : {"light", "dark"}
    value_range : (float, float)
        Range of the embedding sliders (widened to hold the embeddings given).
    step : float
        Step of the embedding sliders.

    Returns
    -------
    MultiHeadExplorer
    """
    arguments = embedding_arguments(tokens, embeddings, MAX_TOKENS, value_range, step)
    X = np.array(arguments["embeddings"])
    W = {name: real_array(m, name) for name, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o))}
    for name, shape in (("W_v", (2, 2 * N_HEADS)), ("W_o", (2 * N_HEADS, 2))):
        if W[name].shape != shape:
            raise ValueError(
                f"{name} must have shape {shape} (two heads with 2D values), got {W[name].shape}"
            )
    multi_head_attention(X, X, **W, n_heads=N_HEADS)  # W_q and W_k: the errors of the library, named
    return MultiHeadExplorer(
        **{name: m.tolist() for name, m in W.items()},
        initial={"embeddings": arguments["embeddings"]},
        style_name=style,
        **arguments,
    )
