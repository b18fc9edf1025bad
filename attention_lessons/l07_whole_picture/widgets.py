"""The playground of lesson 07: the whole picture, with a slider for every embedding and for d_k."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import traitlets

from attention_lessons.kit import examples
from attention_lessons.kit.widgets.inputs import real_array
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.kit.widgets.sliders import EmbeddingExplorer, embedding_arguments
from attnlib.core import AttentionSteps, attention_steps, default_scale
from attnlib.projection import qkv
from attnlib.validation import is_number

__all__ = ["MAX_TOKENS", "Playground", "playground"]

#: The most tokens a playground shows (a heatmap cell stays big enough to read).
MAX_TOKENS = 12


class Playground(EmbeddingExplorer):
    """The four panels of :func:`attention_lessons.l07_whole_picture.plots.attention_figure`, with a slider
    for every number.

    Use :func:`playground` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them on every move):

    embeddings : list of [x, y], one per token
    d_k : int
        The d_k of the scale ``1/√d_k`` (1 … ``max_d_k``).
    causal : bool
    style_name : {"light", "dark"}
        The style (the ``style`` argument of :func:`playground`).

    Set once (synced): those of :class:`~attention_lessons.kit.widgets.sliders.EmbeddingExplorer` (``tokens``,
    ``W_q``, ``W_k``, ``W_v``, the sliders' ``value_min``, ``value_max``, ``step``, ``initial``),
    and ``max_d_k``.

    The front end computes what it draws (``attention_lessons/kit/widgets/js/mirror.js``, checked against
    attnlib in ``tests/lessons/l07_whole_picture/playground.test.mjs``); :attr:`steps` is the same
    computed by attnlib, when read.
    """

    _esm = module_text("attention_lessons.l07_whole_picture", "playground.js")
    summary = "Attention playground: sliders for every embedding and for d_k"
    colormap_names = ("viridis", "cividis")

    d_k = traitlets.Int(2).tag(sync=True)
    causal = traitlets.Bool(False).tag(sync=True)
    max_d_k = traitlets.Int(64).tag(sync=True)

    @traitlets.validate("d_k")
    def _check_d_k(self, proposal: traitlets.Bunch) -> int:
        if not 1 <= proposal["value"] <= self.max_d_k:
            raise traitlets.TraitError(
                f"d_k must be from 1 to max_d_k={self.max_d_k}, got {proposal['value']}"
            )
        return int(proposal["value"])

    @property
    def steps(self) -> AttentionSteps:
        """:func:`attnlib.attention_steps` of the current inputs (``Q = X W_q``, …, scale
        ``1/√d_k``, the causal mask if on), computed when read: ``raw_scores`` (n, n),
        ``scale``, ``weights`` (n, n), ``output`` (n, 2), …"""
        X, W_q, W_k, W_v = (np.array(m) for m in (self.embeddings, self.W_q, self.W_k, self.W_v))
        Q, K, V = qkv(X, W_q, W_k, W_v)
        return attention_steps(Q, K, V, scale=default_scale(self.d_k), causal=self.causal)


def playground(
    tokens: Sequence[str] | None = None,
    embeddings: npt.ArrayLike | None = None,
    *,
    W_q: npt.ArrayLike | None = None,
    W_k: npt.ArrayLike | None = None,
    W_v: npt.ArrayLike | None = None,
    d_k: int | None = None,
    causal: bool = False,
    style: str = "light",
    value_range: tuple[float, float] = (-2.0, 2.0),
    step: float = 0.05,
    max_d_k: int = 64,
) -> Playground:
    """The whole picture of lesson 07, with a slider for every number.

    Four panels, as :func:`attention_lessons.l07_whole_picture.plots.attention_figure` draws them: the
    embeddings, the raw scores ``Q Kᵀ``, the weights and the outputs. An x and a y slider for every
    token's embedding, a d_k slider, a causal-mask toggle, a light/dark select and a reset button.

    The d_k slider only sets the scale ``1/√d_k`` of the scores: the vectors stay 2D, so it shows
    what the scale of another d_k would do to these scores (a temperature). The real dimension
    is varied by :func:`~attention_lessons.l04_scaling.widgets.scaling_explorer`.

    Parameters
    ----------
    tokens : sequence of str, optional
        Token names (repeats allowed: each token has its own sliders); with ``embeddings``, 1 to
        12 of them. Default: the four tokens of :func:`attention_lessons.kit.examples.four_tokens_2d`.
    embeddings : array_like, shape (n, 2), optional
    W_q, W_k : array_like, shape (2, d), optional
        Query and key projections (identity by default).
    W_v : array_like, shape (2, 2), optional
        Value projection (identity by default); the values must be 2D to be drawn.
    d_k : int, optional
        Start value of the d_k slider; by default the queries' dimension (2).
    causal : bool
        Start with the causal mask on.
    style : {"light", "dark"}
    value_range : (float, float)
        Range of the embedding sliders (widened to hold the embeddings given).
    step : float
        Step of the embedding sliders (and of one arrow-key press).
    max_d_k : int
        Largest value of the d_k slider.

    Returns
    -------
    Playground
    """
    if (tokens is None) != (embeddings is None):
        raise ValueError("give both tokens and embeddings, or neither (for lesson 07's four tokens)")
    if tokens is None or embeddings is None:
        example = examples.four_tokens_2d()
        tokens, embeddings = example.tokens, example.X
    arguments = embedding_arguments(tokens, embeddings, MAX_TOKENS, value_range, step)
    X = np.array(arguments["embeddings"])
    identity = np.eye(2)
    W = {
        name: identity if given is None else real_array(given, name)
        for name, given in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))
    }
    Q, _, V = qkv(X, W["W_q"], W["W_k"], W["W_v"])
    if V.shape[1] != 2:
        raise ValueError(
            f"W_v must project to 2D values (shape (2, 2)) to draw them, got shape {W['W_v'].shape}"
        )
    if not is_number(max_d_k, whole=True) or max_d_k < 1:
        raise ValueError(f"max_d_k must be a positive integer, got {max_d_k!r}")
    start_d_k = Q.shape[1] if d_k is None else d_k
    if (
        isinstance(start_d_k, bool)
        or not isinstance(start_d_k, (int, np.integer))
        or not 1 <= start_d_k <= max_d_k
    ):
        raise ValueError(f"d_k must be an integer from 1 to max_d_k={max_d_k}, got {start_d_k!r}")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    initial = {"embeddings": X.tolist(), "d_k": int(start_d_k), "causal": bool(causal), "style_name": style}
    return Playground(
        max_d_k=int(max_d_k),
        **{name: m.tolist() for name, m in W.items()},
        initial=initial,
        **(arguments | initial),
    )
