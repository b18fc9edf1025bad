"""The softmax explorer of lesson 05: scores, per-key masks and a temperature → weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import traitlets

from attention_lessons.kit import examples, plots
from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import real_array, slider_range
from attention_lessons.kit.widgets.modules import module_text
from attnlib.core import raw_scores, softmax
from attnlib.validation import is_number

__all__ = ["MAX_KEYS", "TEMPERATURE_RANGE", "SoftmaxExplorer", "softmax_explorer"]

#: The most keys a softmax explorer shows.
MAX_KEYS = 10
#: The temperature slider's range (a log scale: its value is log10 T, from -1 to 1).
TEMPERATURE_RANGE = (0.1, 10.0)
_SLACK = 1e-12  # 10 ** -1 and 10 ** 1 as a browser computes them may differ by an ulp


class SoftmaxExplorer(Explorer):
    """Scores and a temperature in, ``softmax(s / T)`` out, drawn as annotated bars.

    Use :func:`softmax_explorer` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them on every move):

    scores : list of float, one per key
        The slider values (a masked key keeps its score, drawn as −∞).
    masks : list of bool, one per key
        True hides the key: its score becomes −∞ and its weight 0.
    temperature : float
        0.1 … 10 (the slider moves log10 T from -1 to 1 in steps of 0.02).

    Set once (synced): ``labels``, ``value_min``, ``value_max``, ``step`` (the score sliders),
    ``limits`` (the scores panel's y range, :func:`attention_lessons.kit.plots.score_limits`), ``style_name``,
    ``themes``.

    The front end computes what it draws (the weights and their entropy,
    ``attention_lessons/kit/widgets/js/mirror.js``, checked against attnlib in
    ``tests/lessons/l05_softmax/softmax.test.mjs``);
    :attr:`weights` is the same computed by attnlib, when read.
    """

    _esm = module_text("attention_lessons.l05_softmax", "softmax.js")
    summary = "Softmax explorer: scores, masks and a temperature"

    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    scores = traitlets.List(traitlets.Float()).tag(sync=True)
    masks = traitlets.List(traitlets.Bool()).tag(sync=True)
    temperature = traitlets.Float(1.0).tag(sync=True)
    value_min = traitlets.Float(-10.0).tag(sync=True)
    value_max = traitlets.Float(10.0).tag(sync=True)
    step = traitlets.Float(0.1).tag(sync=True)
    limits = traitlets.List(traitlets.Float()).tag(sync=True)

    @traitlets.validate("scores")
    def _check_scores(self, proposal: traitlets.Bunch) -> list[float]:
        values = np.asarray(proposal["value"], dtype=np.float64)
        if values.shape != (len(self.labels),):
            raise traitlets.TraitError(
                f"scores must be {len(self.labels)} numbers, one per key; got {values}"
            )
        if not (
            np.isfinite(values).all()
            and (values >= self.value_min).all()
            and (values <= self.value_max).all()
        ):
            raise traitlets.TraitError(
                f"scores must be finite, from value_min={self.value_min} to value_max={self.value_max}; "
                f"got {values.tolist()}"
            )
        return values.tolist()

    @traitlets.validate("masks")
    def _check_masks(self, proposal: traitlets.Bunch) -> list[bool]:
        if len(proposal["value"]) != len(self.labels):
            raise traitlets.TraitError(f"masks must be {len(self.labels)} booleans, one per key")
        return list(proposal["value"])

    @traitlets.validate("temperature")
    def _check_temperature(self, proposal: traitlets.Bunch) -> float:
        low, high = TEMPERATURE_RANGE
        value = proposal["value"]
        if not low * (1 - _SLACK) <= value <= high * (1 + _SLACK):
            raise traitlets.TraitError(f"temperature must be from {low} to {high}, got {value}")
        return float(value)

    @property
    def weights(self) -> np.ndarray:
        """``attnlib.softmax(where(masks, -inf, scores) / temperature)``, (n,), computed when read."""
        shown = np.where(self.masks, -np.inf, np.asarray(self.scores, dtype=np.float64))
        return softmax(shown / self.temperature)


def softmax_explorer(
    scores: npt.ArrayLike | None = None,
    labels: Sequence[str] | None = None,
    *,
    temperature: float = 1.0,
    value_range: tuple[float, float] = (-10.0, 10.0),
    style: str = "light",
) -> SoftmaxExplorer:
    """Move scores and a temperature T and watch ``softmax(s / T)``; mask a key to hide it.

    The picture is :func:`attention_lessons.l05_softmax.plots.softmax_figure`: the scores and the weights as
    bars.

    Parameters
    ----------
    scores : array_like, shape (n,), optional
        Start scores, 1 to 10 of them. Default: the raw scores ``s·h`` of
        :func:`attention_lessons.kit.examples.one_query_three_vectors` (lesson 03), labelled ``h1 h2 h3``.
    labels : sequence of str, optional
        One per score (repeats allowed: each key has its own slider and mask). Default ``k1``,
        ``k2``, … or ``h1 h2 h3`` for the default scores.
    temperature : float
        Start temperature, 0.1 to 10.
    value_range : (float, float)
        Range of the score sliders (widened to hold the scores given).
    style : {"light", "dark"}

    Returns
    -------
    SoftmaxExplorer
    """
    if scores is None:
        example = examples.one_query_three_vectors()
        scores = raw_scores(example.Q, example.K)
        labels = ("h1", "h2", "h3") if labels is None else labels
    values = real_array(scores, "scores")
    if values.ndim != 1 or not 1 <= values.size <= MAX_KEYS:
        raise ValueError(f"scores must be one row of 1 to {MAX_KEYS} numbers, got shape {values.shape}")
    if labels is None:
        labels = [f"k{i + 1}" for i in range(values.size)]
    if isinstance(labels, str) or len(labels) != values.size:
        raise ValueError(f"give one label per score: {values.size} scores, labels {labels!r}")
    if not is_number(temperature):
        raise TypeError(f"temperature must be a number, got {temperature!r}")
    if not TEMPERATURE_RANGE[0] <= temperature <= TEMPERATURE_RANGE[1]:
        raise ValueError(f"temperature must be between 0.1 and 10, got {temperature}")
    low, high = slider_range(value_range, values)
    return SoftmaxExplorer(
        labels=[str(label) for label in labels],
        value_min=low,
        value_max=high,
        step=0.1,
        limits=list(plots.score_limits((low, high))),
        scores=values.tolist(),
        masks=[False] * values.size,
        temperature=float(temperature),
        style_name=style,
    )
