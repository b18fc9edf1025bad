"""The similarity explorer of lessons 01 and 03: two 2D vectors, their dot product, cosine and angle."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import traitlets

from attention_lessons.kit import examples, plots
from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import real_array, slider_range
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.l01_embeddings.similarity import Similarity, similarity

__all__ = ["SimilarityExplorer", "similarity_explorer"]


class SimilarityExplorer(Explorer):
    """Two 2D vectors from sliders: their dot product, cosine and angle, drawn.

    Use :func:`similarity_explorer` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them on every move):

    vectors : [[x, y], [x, y]]
        The two vectors, by position (their labels may be equal).

    Set once (synced): ``labels``, ``value_min``, ``value_max``, ``step`` (the sliders),
    ``limits`` (both axes, :func:`attention_lessons.kit.plots.similarity_limits`), ``style_name``, ``themes``.

    The front end computes what it draws (``attention_lessons/kit/widgets/js/mirror.js``, checked against
    attnlib in ``tests/lessons/l01_embeddings/similarity.test.mjs``); :attr:`measures` is the same
    computed by attnlib, when read.
    """

    _esm = module_text("attention_lessons.l01_embeddings", "similarity.js")
    summary = "Similarity explorer: two vectors, their dot product, cosine and angle"

    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    vectors = traitlets.List(traitlets.List(traitlets.Float())).tag(sync=True)
    value_min = traitlets.Float(-1.5).tag(sync=True)
    value_max = traitlets.Float(1.5).tag(sync=True)
    step = traitlets.Float(0.05).tag(sync=True)
    limits = traitlets.List(traitlets.Float()).tag(sync=True)

    @traitlets.validate("vectors")
    def _check_vectors(self, proposal: traitlets.Bunch) -> list[list[float]]:
        pair = np.asarray(proposal["value"], dtype=np.float64)
        if pair.shape != (2, 2):
            raise traitlets.TraitError(f"vectors must be two pairs [x, y]; got shape {pair.shape}")
        if not (
            np.isfinite(pair).all() and (pair >= self.value_min).all() and (pair <= self.value_max).all()
        ):
            raise traitlets.TraitError(
                f"vectors must be finite, from value_min={self.value_min} to value_max={self.value_max}; "
                f"got {pair.tolist()}"
            )
        return pair.tolist()

    @property
    def measures(self) -> Similarity:
        """:func:`attention_lessons.l01_embeddings.similarity.similarity` of the two vectors, computed when
        read: ``dot``, ``norm_a``, ``norm_b``, ``cosine`` and ``angle_degrees`` (None when a vector
        is zero)."""
        return similarity(self.vectors[0], self.vectors[1])


def similarity_explorer(
    a: npt.ArrayLike | None = None,
    b: npt.ArrayLike | None = None,
    *,
    labels: Sequence[str] = ("a", "b"),
    value_range: tuple[float, float] = (-1.5, 1.5),
    step: float = 0.05,
    style: str = "light",
) -> SimilarityExplorer:
    """Two 2D vectors from sliders: their dot product, cosine similarity and angle, drawn.

    The picture is :func:`attention_lessons.l01_embeddings.plots.similarity_figure` with the axis limits of
    :func:`attention_lessons.kit.plots.similarity_limits`, fixed so that the axes do not move while a vector
    does.

    Parameters
    ----------
    a, b : array_like, shape (2,), optional
        Start vectors. Default: ``Token-1`` and ``Token-2`` of
        :func:`attention_lessons.kit.examples.four_tokens_2d`.
    labels : (str, str)
        Names of the vectors (they may be equal).
    value_range : (float, float)
        Range of the sliders (widened to hold the vectors given).
    step : float
    style : {"light", "dark"}

    Returns
    -------
    SimilarityExplorer
    """
    if (a is None) != (b is None):
        raise ValueError("give both vectors a and b, or neither")
    if a is None or b is None:
        example = examples.four_tokens_2d()
        a, b = example.X[0], example.X[1]
    u, v = real_array(a, "a"), real_array(b, "b")
    if u.shape != (2,) or v.shape != (2,):
        raise ValueError(f"a and b must be 2D vectors of shape (2,), got shapes {u.shape} and {v.shape}")
    if isinstance(labels, str) or len(labels) != 2:
        raise ValueError(f"labels must name the two vectors, got {labels!r}")
    pair = np.stack([u, v])
    low, high = slider_range(value_range, pair)
    if not (isinstance(step, (int, float)) and 0 < step <= high - low):
        raise ValueError(f"step must be a positive number no larger than the slider range, got {step!r}")
    return SimilarityExplorer(
        labels=[str(label) for label in labels],
        value_min=low,
        value_max=high,
        step=float(step),
        limits=list(plots.similarity_limits((low, high))),
        vectors=pair.tolist(),
        style_name=style,
    )
