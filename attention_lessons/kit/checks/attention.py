"""Check attention computed by hand: :func:`check_attention` and its table of mistakes.

Each row of :data:`ATTENTION_MISTAKES` recomputes attention the way a learner who made that
mistake would (the softmax down the columns, the scale after the softmax, ``K`` for ``V``, ...)
and gives that wrong computation's scores, scaled scores, weights and output, as far as the
mistake changes them. :func:`check_attention` compares the learner's answer with the stage it
was asked for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from attention_lessons.kit.checks.answers import read_array
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.scale import SCALE_MISTAKES, ScaleMistake, Sizes
from attention_lessons.kit.checks.values import entry_unit, tolerance
from attention_lessons.kit.checks.wording import numpy_index, shape_text, where
from attnlib.core import AttentionSteps, attention_steps, default_scale, softmax
from attnlib.validation import as_positive_int

__all__ = ["ATTENTION_MISTAKES", "STAGES", "AttentionExercise", "check_attention"]

#: What an answer can be: stage -> (how to name it, its axes for queries, for one query, last axis).
STAGES = {
    "scores": ("the raw scores Q Kᵀ", "(n_q, n_k)", "(n_k,)", "key"),
    "scaled_scores": ("the scaled scores", "(n_q, n_k)", "(n_k,)", "key"),
    "weights": ("the attention weights", "(n_q, n_k)", "(n_k,)", "key"),
    "output": ("the output", "(n_q, d_v)", "(d_v,)", "dimension"),
}

Stages = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class AttentionExercise:
    """An attention exercise: its inputs, which stage the answer is, and attnlib's right steps.

    Arrays keep a query axis even for a single query (``Q`` of shape ``(d_k,)``), so that every
    mistake is computed the same way; :meth:`stage` removes it again.

    Attributes
    ----------
    steps : AttentionSteps
        attnlib's right computation.
    keys : (..., n_k, d_k)
    values : (..., n_k, d_v)
    what : str
        The stage the answer is: a key of :data:`STAGES`.
    single : bool
        The exercise has a single query ``(d_k,)``.
    default : bool
        The exercise scales by ``1/√d_k`` (not, for instance, plain dot-product attention).
    sizes : Sizes
        The sizes a wrong scale might use.
    mask_given : bool
        The exercise has a mask or is causal.
    """

    steps: AttentionSteps
    keys: np.ndarray
    values: np.ndarray
    what: str
    single: bool
    default: bool
    sizes: Sizes
    mask_given: bool

    @property
    def scale(self) -> float:
        """The scale the exercise uses."""
        return self.steps.scale

    @property
    def plain(self) -> str:
        """`` (plain dot-product attention)`` when the scale is 1, else nothing."""
        return " (plain dot-product attention)" if self.steps.scale == 1.0 else ""

    @property
    def scores_name(self) -> str:
        """What the scores are called here: scaled or not."""
        return "scores" if self.steps.scale == 1.0 else "scaled scores"

    def _matrix(self, arr: np.ndarray) -> np.ndarray:
        matrix = np.asarray(arr, dtype=np.float64)
        return matrix[..., np.newaxis, :] if self.single else matrix

    @cached_property
    def raw(self) -> np.ndarray:
        return self._matrix(self.steps.raw_scores)

    @cached_property
    def scaled(self) -> np.ndarray:
        return self._matrix(self.steps.scaled_scores)

    @cached_property
    def masked(self) -> np.ndarray:
        return self._matrix(self.steps.masked_scores)

    @cached_property
    def weights(self) -> np.ndarray:
        return self._matrix(self.steps.weights)

    @cached_property
    def output(self) -> np.ndarray:
        return self._matrix(self.steps.output)

    @cached_property
    def mask_offset(self) -> np.ndarray:
        """What the mask adds to the scaled scores: 0 where kept, −∞ where hidden."""
        return self.masked - self.scaled

    @cached_property
    def allowed(self) -> np.ndarray | None:
        """Which keys each query may attend to, if the mask only keeps (0) or hides (−∞)."""
        offset = self.mask_offset
        if not (self.mask_given and np.all((offset == 0) | np.isneginf(offset))):
            return None
        return offset == 0

    def right(self) -> np.ndarray:
        """The right answer, with a query axis."""
        return {
            "scores": self.raw,
            "scaled_scores": self.scaled,
            "weights": self.weights,
            "output": self.output,
        }[self.what]

    def attention(
        self, *, factor: float | None = None, offset: np.ndarray | None = None, axis: int = -1
    ) -> Stages:
        """Attention computed with another scale, mask offset or softmax axis."""
        factor = self.scale if factor is None else factor
        offset = self.mask_offset if offset is None else offset
        scaled = self.raw * factor
        weights = softmax(scaled + offset, axis=axis)
        return {"scaled_scores": scaled, "weights": weights, "output": weights @ self.values}

    def expected(self) -> np.ndarray:
        """The right answer, shaped as the learner's should be."""
        right = self.right()
        return right[..., 0, :] if self.single else right

    def stage(self, wrong: Stages) -> np.ndarray | None:
        """The stage the answer is, from a wrong computation (without the query axis of a single query)."""
        arr = wrong.get(self.what)
        if arr is None:
            return None
        return arr[..., 0, :] if self.single and arr.ndim >= 2 else arr


def _weights_and_output(weights: np.ndarray, ex: AttentionExercise) -> Stages:
    return {"weights": weights, "output": weights @ ex.values}


def _whole_matrix_softmax(ex: AttentionExercise) -> Stages | None:
    if ex.single:
        return None  # one query: the matrix is one row
    e = np.exp(ex.masked - ex.masked.max(axis=(-2, -1), keepdims=True))
    return _weights_and_output(e / e.sum(axis=(-2, -1), keepdims=True), ex)


def _scaled_after_softmax(ex: AttentionExercise) -> Stages | None:
    if ex.scale == 1.0:
        return None
    weights = softmax(ex.raw + ex.mask_offset, axis=-1) * ex.scale
    return _weights_and_output(weights, ex)


def _without_exp(ex: AttentionExercise) -> Stages:
    kept = np.where(np.isfinite(ex.masked), ex.masked, 0.0)  # hidden keys: 0 instead of exp(−∞) = 0
    return _weights_and_output(kept / kept.sum(axis=-1, keepdims=True), ex)


def _not_normalised(ex: AttentionExercise) -> Stages:
    return _weights_and_output(np.exp(ex.masked), ex)


def _unmasked(ex: AttentionExercise) -> Stages | None:
    return ex.attention(offset=np.zeros_like(ex.scaled)) if ex.mask_given else None


def _inverted_mask(ex: AttentionExercise) -> Stages | None:
    allowed = ex.allowed
    return None if allowed is None else ex.attention(offset=np.where(allowed, -np.inf, 0.0))


def _transposed_mask(ex: AttentionExercise) -> Stages | None:
    allowed = ex.allowed
    if allowed is None or allowed.shape[-1] != allowed.shape[-2]:
        return None
    return ex.attention(offset=np.where(np.swapaxes(allowed, -1, -2), 0.0, -np.inf))


def _transposed_v(ex: AttentionExercise) -> Stages | None:
    if ex.values.shape[-1] != ex.values.shape[-2]:
        return None  # weights @ V.T needs as many keys as value dimensions
    return {"output": ex.weights @ np.swapaxes(ex.values, -1, -2)}


def _with_scale(mistake: ScaleMistake, *, default: bool) -> Callable[[AttentionExercise], Stages | None]:
    """The computation with a wrong scale, for exercises that use ``1/√d_k`` (or not)."""

    def wrong(ex: AttentionExercise) -> Stages | None:
        factor = mistake.wrong(ex.sizes)
        if ex.default != default or not isinstance(factor, float):
            return None
        return ex.attention(factor=factor)

    return wrong


def _scale_rows() -> tuple[Mistake[AttentionExercise], ...]:
    """Each wrong scale twice: for exercises that scale by 1/√d_k, and for those that do not."""
    usual = tuple(Mistake(m.name, m.advice, _with_scale(m, default=True)) for m in SCALE_MISTAKES)
    other = tuple(
        Mistake(m.did, "this exercise uses scale = {ex.scale:g}{ex.plain}.", _with_scale(m, default=False))
        for m in SCALE_MISTAKES
    )
    return usual + other


#: The mistakes :func:`check_attention` recognises, most likely first.
ATTENTION_MISTAKES: tuple[Mistake[AttentionExercise], ...] = (
    Mistake(
        "Softmax over the wrong axis",
        "your weights sum to 1 down each column (axis=0), one per key. Each query's row must sum to "
        "1: take the softmax over the keys, axis=-1.",
        lambda ex: ex.attention(axis=-2),
    ),
    Mistake(
        "Softmax over the whole matrix",
        "all the weights together sum to 1. Each query gets its own distribution: take the softmax "
        "of each row separately (axis=-1).",
        _whole_matrix_softmax,
    ),
    Mistake(
        "Scaled after the softmax",
        "you multiplied the weights by the scale, so the rows no longer sum to 1. Scale the scores "
        "first, then take the softmax of the scaled scores.",
        _scaled_after_softmax,
    ),
    *_scale_rows(),
    Mistake(
        "Forgot the mask",
        "hidden keys must get weight 0, so add −∞ to their scores (or apply the boolean mask) before "
        "the softmax.",
        _unmasked,
    ),
    Mistake(
        "Mask inverted",
        "you hid the keys that may be seen and kept the hidden ones. In attnlib, True (or 0) means "
        "may attend; the boolean masks of PyTorch's nn.MultiheadAttention and nn.Transformer mean "
        "the opposite (~mask turns one into the other).",
        _inverted_mask,
    ),
    Mistake(
        "Mask transposed",
        "the mask has one row per query and one column per key; yours hides queries instead of keys "
        "(for a causal mask: it lets each token see the later ones).",
        _transposed_mask,
    ),
    Mistake(
        "Normalised without exp",
        "you divided each score by its row's sum; the softmax divides exp(score) by the sum of the "
        "exponentials, exp(s) / exp(s).sum().",
        _without_exp,
    ),
    Mistake(
        "Exponentiated but not normalised",
        "divide each row of exp(scores) by its sum, so that the weights sum to 1, before using them.",
        _not_normalised,
    ),
    Mistake(
        "Used K instead of V",
        "the output mixes the values: weights @ V.",
        lambda ex: {"output": ex.weights @ ex.keys},
    ),
    Mistake(
        "Transposed V",
        "use weights @ V (V has one row per key), not weights @ V.T.",
        _transposed_v,
    ),
    Mistake(
        "Forgot the softmax",
        "you multiplied the {ex.scores_name} by V; turn each row of scores into weights with the "
        "softmax first.",
        lambda ex: {"output": ex.scaled @ ex.values},
    ),
    Mistake(
        "These are the weights, not the output",
        "multiply them by V.",
        lambda ex: {"output": ex.weights},
    ),
    Mistake(
        "This is the output, not the weights",
        "the weights come before multiplying by V.",
        lambda ex: {"weights": ex.output},
    ),
    Mistake(
        "These are the raw scores Q Kᵀ, not the weights",
        "scale them, then take the softmax of each row.",
        lambda ex: None if ex.scale == 1.0 else {"weights": ex.raw},
    ),
    Mistake(
        "These are the {ex.scores_name}, not the weights",
        "now take the softmax of each row.",
        lambda ex: {"weights": ex.scaled},
    ),
    Mistake(
        "These are already scaled",
        "the raw scores are Q Kᵀ, before scaling.",
        lambda ex: None if ex.scale == 1.0 else {"scores": ex.scaled},
    ),
    Mistake(
        "These are the weights, not the scores",
        "the scores come before the softmax.",
        lambda ex: {"scores": ex.weights, "scaled_scores": ex.weights},
    ),
    Mistake(
        "Transposed",
        "your answer is the transpose of the right one; it has one row per query.",
        lambda ex: None if ex.single else {ex.what: np.swapaxes(ex.right(), -1, -2)},
    ),
)


def check_attention(
    answer: object,
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    scale: float | None = None,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    what: str = "output",
    decimals: int = 2,
    d_model: int | None = None,
) -> CheckResult:
    """Check an attention result computed by hand against attnlib, and name the mistake.

    Parameters
    ----------
    answer : array_like
        The learner's result: shape ``(n_q, d_v)`` for the output, ``(n_q, n_k)`` for the weights
        or scores (``(d_v,)`` / ``(n_k,)`` for a single query ``Q`` of shape ``(d_k,)``).
    Q : array_like, shape (..., n_q, d_k) or (d_k,)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
    scale, mask, causal
        As in :func:`attnlib.scaled_dot_product_attention` (``scale=None`` is ``1/√d_k``;
        ``scale=1.0`` is plain dot-product attention).
    what : {"output", "weights", "scores", "scaled_scores"}
        Which result the answer is: the output ``weights @ V``, the weights, the raw scores
        ``Q Kᵀ`` or the scaled scores (before any mask).
    decimals : int
        Decimals asked, each entry compared by :func:`attention_lessons.kit.checks.values.entry_unit`'s rule.
    d_model : int, optional
        The width of the embeddings ``Q``, ``K`` and ``V`` were projected from; given, a scale of
        ``1/√d_model`` is recognised.

    Returns
    -------
    CheckResult
        Passed, or the mistake of :data:`ATTENTION_MISTAKES` that gives exactly the answer (all of
        them, most likely first, when several do); otherwise a wrong shape, NaN, rounding, weight
        rows that do not sum to 1, or the first entry that is off. No message shows a number of
        the right answer.

    Raises
    ------
    ValueError, TypeError
        If ``Q``, ``K``, ``V``, ``mask``, ``scale``, ``what``, ``decimals`` or ``d_model`` is
        invalid.
    """
    if what not in STAGES:
        raise ValueError(f"what must be one of {sorted(STAGES)}, got {what!r}")
    tolerance(decimals)  # validates decimals before the exercise is computed
    if d_model is not None:
        d_model = as_positive_int(d_model, "d_model")
    steps = attention_steps(Q, K, V, mask=mask, causal=causal, scale=scale)
    exercise = _exercise(
        steps,
        K,
        V,
        what=what,
        single=np.ndim(Q) == 1,
        masked=mask is not None or bool(causal),
        d_model=d_model,
    )
    expected = exercise.expected()
    atol = entry_unit(expected, decimals)

    arr = read_array(answer, what)
    if isinstance(arr, CheckResult):
        return arr
    label, _, _, column = STAGES[what]
    if _close(arr, expected, atol):
        return passed(f"Correct: every entry of {label} is within {atol:g} of attnlib's.")
    columns = column if arr.shape == expected.shape else None
    if not np.isfinite(arr).all():
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        kind = "NaN" if np.isnan(arr[index]) else "an infinity"
        place = where(index, columns, single=exercise.single) if arr.ndim else "the only entry"
        return failed(
            f"Your answer has {kind} at {place}: NaN comes from inf/inf or 0/0, usually exp of a large "
            "score overflowing (subtract each row's maximum first) or a row whose every key is masked."
        )

    def fits(wrong: object) -> bool:
        assert isinstance(wrong, Mapping)
        candidate = exercise.stage(wrong)
        return (
            candidate is not None and _close(arr, candidate, atol) and not _close(candidate, expected, atol)
        )

    with np.errstate(all="ignore"):  # a mistake may overflow (exp of unscaled scores): it then fits nothing
        found = matching(ATTENTION_MISTAKES, exercise, fits)
    if found:
        return failed(describe("", found, exercise))
    return failed(_other_mistake(arr, expected, exercise, atol))


def _exercise(
    steps: AttentionSteps,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    what: str,
    single: bool,
    masked: bool,
    d_model: int | None,
) -> AttentionExercise:
    """The exercise, from inputs that :func:`attnlib.attention_steps` has already accepted."""
    keys = np.asarray(K, dtype=np.float64)
    values = np.asarray(V, dtype=np.float64)
    d_k, n_k, d_v = keys.shape[-1], keys.shape[-2], values.shape[-1]
    return AttentionExercise(
        steps=steps,
        keys=keys,
        values=values,
        what=what,
        single=single,
        default=math.isclose(steps.scale, default_scale(d_k), rel_tol=1e-12),
        sizes=Sizes(d_k=d_k, n_k=n_k, d_v=d_v, d_model=d_model),
        mask_given=masked,
    )


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """Same shape, finite, and every entry within ``atol``."""
    return a.shape == b.shape and bool(np.isfinite(a).all()) and bool(np.allclose(a, b, rtol=0.0, atol=atol))


def _other_mistake(arr: np.ndarray, expected: np.ndarray, ex: AttentionExercise, atol: float) -> str:
    """No known mistake fits: a wrong shape, rounding, rows that do not sum to 1, or an entry off."""
    label, symbols, single_symbols, column = STAGES[ex.what]
    symbols = single_symbols if ex.single else symbols
    if expected.ndim > (1 if ex.single else 2):
        symbols = "(..., " + symbols[1:]
    if arr.shape != expected.shape:
        hint = ""
        if arr.size == expected.size and np.squeeze(arr).shape == np.squeeze(expected).shape:
            hint = "; the numbers may be right, but the axes of length 1 differ (use .reshape or [0])"
        return f"Wrong shape: {label} has shape {symbols}; yours is {shape_text(arr.shape)}{hint}."
    bad = ~np.isclose(arr, expected, rtol=0.0, atol=atol)
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    n_bad = int(bad.sum())
    if float(np.max(np.abs(arr - expected))) <= 5 * atol:
        return (
            f"Very close, but {n_bad} entr{'y is' if n_bad == 1 else 'ies are'} off by a little more than "
            f"{atol:g}: probably rounding; keep 3 or 4 decimals in the intermediate steps."
        )
    if ex.what == "weights":
        sums = arr.sum(axis=-1)
        off = np.abs(sums - expected.sum(axis=-1)) > max(atol * arr.shape[-1], 0.02)
        if off.any():
            row = tuple(int(i) for i in np.argwhere(off)[0]) if off.ndim else ()
            if not row:
                place = "your weights sum"
            else:
                batch = f" of batch entry {numpy_index(row[:-1])}" if len(row) > 1 else ""
                place = f"the weights of query {row[-1] + 1}{batch} (numpy index {numpy_index(row)}) sum"
            return (
                f"Each row of weights must sum to 1 (a softmax over the keys); {place} to "
                f"{float(sums[row]):.3f}."
            )
    direction = "too high" if arr[index] > expected[index] else "too low"
    return (
        f"Not yet: {n_bad} of {arr.size} entries {'is' if n_bad == 1 else 'are'} off. The first is "
        f"{where(index, column, single=ex.single)}, which is {direction}: check that step again."
    )
