"""The explorer of lesson 09: two attention heads in 2D, their concatenation and ``W_o``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import traitlets

from attnlib.multihead import multi_head_attention
from attnlib.widgets.base import Explorer
from attnlib.widgets.inputs import embeddings_on_sliders, real_array, slider_range
from attnlib.widgets.modules import module_text

__all__ = ["MAX_TOKENS", "N_HEADS", "MultiHeadExplorer", "multi_head_explorer"]

#: The most tokens the explorer shows.
MAX_TOKENS = 8
#: The explorer's heads; each head's values are 2D, so that its output can be drawn.
N_HEADS = 2


def _matrix_trait() -> traitlets.List:
    return traitlets.List(traitlets.List(traitlets.Float()))


class MultiHeadExplorer(Explorer):
    """Self-attention with two heads of 2D tokens: each head's weights and output, their
    concatenation, and the output ``concat · W_o``. Use :func:`multi_head_explorer` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them on every move):

    embeddings : list of [x, y], one per token

    Set once (synced): ``tokens``, ``W_q``, ``W_k`` (2 × 2·d_k), ``W_v`` (2 × 4), ``W_o``
    (4 × 2) as lists of rows, ``value_min``, ``value_max``, ``step`` (the embedding sliders),
    ``initial`` (what ``reset`` restores), ``style_name``, ``themes``, ``colormaps``.

    Results (Python only; recomputed with :func:`attnlib.multihead.multi_head_attention` on
    every change):

    weights : list, (2, n, n)
        Each head's weights.
    concat : list, (n, 4)
        The heads' outputs side by side: head 1's ``[x, y]``, then head 2's.
    output : list, (n, 2)
        ``concat · W_o``.
    """

    _esm = module_text("multihead.js")
    summary = "Multi-head explorer: two heads, their concatenation and W_o"
    colormap_names = ("viridis", "cividis")

    tokens = traitlets.List(traitlets.Unicode()).tag(sync=True)
    embeddings = _matrix_trait().tag(sync=True)
    W_q = _matrix_trait().tag(sync=True)
    W_k = _matrix_trait().tag(sync=True)
    W_v = _matrix_trait().tag(sync=True)
    W_o = _matrix_trait().tag(sync=True)
    value_min = traitlets.Float(-2.0).tag(sync=True)
    value_max = traitlets.Float(2.0).tag(sync=True)
    step = traitlets.Float(0.05).tag(sync=True)
    initial = traitlets.Dict().tag(sync=True)

    weights = traitlets.List(_matrix_trait())
    concat = _matrix_trait()
    output = _matrix_trait()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recompute()

    @traitlets.validate("embeddings")
    def _check_embeddings(self, proposal: traitlets.Bunch) -> list[list[float]]:
        return embeddings_on_sliders(proposal["value"], len(self.tokens), self.value_min, self.value_max)

    @traitlets.observe("embeddings")
    def _inputs_changed(self, _change: traitlets.Bunch) -> None:
        self._recompute()

    def _recompute(self) -> None:
        X = np.array(self.embeddings)
        W = {name: np.array(getattr(self, name)) for name in ("W_q", "W_k", "W_v", "W_o")}
        output, weights = multi_head_attention(X, X, **W, n_heads=N_HEADS)
        # the same heads with W_o the identity: their concatenation itself
        concat, _ = multi_head_attention(
            X, X, W["W_q"], W["W_k"], W["W_v"], np.eye(2 * N_HEADS), n_heads=N_HEADS
        )
        self.set_trait("weights", weights.tolist())
        self.set_trait("concat", concat.tolist())
        self.set_trait("output", output.tolist())

    def reset(self) -> None:
        """Put the embeddings back to their start values."""
        self.embeddings = self.initial["embeddings"]


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

    The picture is :func:`attnlib.plots.heads.two_heads_figure`: the embeddings, each head's
    weights, each head's output, the output ``concat · W_o``, the concatenation and ``W_o``.

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
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of names, one per embedding, not the string {tokens!r}")
    names = [str(token) for token in tokens]
    X = real_array(embeddings, "embeddings")
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"embeddings must have shape (n, 2): one 2D vector per token, got shape {X.shape}")
    if len(names) != X.shape[0] or not 1 <= X.shape[0] <= MAX_TOKENS:
        raise ValueError(
            f"give 1 to {MAX_TOKENS} tokens, one per embedding: {len(names)} tokens, {X.shape[0]} embeddings"
        )
    W = {name: real_array(m, name) for name, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o))}
    for name, shape in (("W_v", (2, 2 * N_HEADS)), ("W_o", (2 * N_HEADS, 2))):
        if W[name].shape != shape:
            raise ValueError(
                f"{name} must have shape {shape} (two heads with 2D values), got {W[name].shape}"
            )
    multi_head_attention(X, X, **W, n_heads=N_HEADS)  # W_q and W_k: the errors of the library, named
    low, high = slider_range(value_range, X)
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not 0 < step <= high - low:
        raise ValueError(f"step must be a positive number no larger than the slider range, got {step!r}")
    return MultiHeadExplorer(
        tokens=names,
        value_min=low,
        value_max=high,
        step=float(step),
        **{name: m.tolist() for name, m in W.items()},
        initial={"embeddings": X.tolist()},
        embeddings=X.tolist(),
        style_name=style,
    )
