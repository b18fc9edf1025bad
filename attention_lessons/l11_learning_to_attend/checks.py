"""Self-checks of lesson 11, gradients by hand: ``dV``, the softmax's gradient, a score's direction.

- :func:`check_value_gradient`: ``dV = Aᵀ dZ`` (:data:`VALUE_GRADIENT_MISTAKES`);
- :func:`check_softmax_gradient`: ``ds = a ⊙ (da − Σ_j a_j da_j)`` for one row
  (:data:`SOFTMAX_GRADIENT_MISTAKES`);
- :func:`check_score_direction`: does gradient descent move a score up or down
  (:data:`DIRECTION_MISTAKES`)?

The right answers come from :mod:`attnlib.backward`; each table row makes its mistake on the
exercise's numbers, as everywhere in :mod:`attention_lessons.kit.checks`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attention_lessons.kit.checks.answers import placeholder, read_array, read_number
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.values import entry_unit
from attention_lessons.kit.checks.wording import numpy_index, shape_text
from attnlib.backward import softmax_backward
from attnlib.validation import as_positive_int

__all__ = [
    "DIRECTION_MISTAKES",
    "SOFTMAX_GRADIENT_MISTAKES",
    "VALUE_GRADIENT_MISTAKES",
    "GradientExercise",
    "check_score_direction",
    "check_softmax_gradient",
    "check_value_gradient",
]


@dataclass(frozen=True)
class GradientExercise:
    """The numbers of a gradient exercise.

    Attributes
    ----------
    weights : numpy.ndarray
        The attention weights ``A`` (n_q, n_k), or one row ``a`` (n,).
    upstream : numpy.ndarray
        The gradient arriving from above: ``dZ`` (n_q, d_v) for ``dV``; ``da`` (n,) for the
        softmax.
    key : int
        The key whose score moves (:func:`check_score_direction` only).
    """

    weights: np.ndarray
    upstream: np.ndarray
    key: int = 0

    @property
    def score_gradient(self) -> np.ndarray:
        """``ds = a ⊙ (da − Σ a da)``, by :func:`attnlib.backward.softmax_backward`."""
        return softmax_backward(self.weights, self.upstream)


#: The mistakes :func:`check_value_gradient` recognises; ``wrong`` gives the ``dV`` they produce.
VALUE_GRADIENT_MISTAKES: tuple[Mistake[GradientExercise], ...] = (
    Mistake(
        "Forgot the transpose",
        "dV = Aᵀ dZ: value j collects the gradient of every query i that looked at it, weighted by "
        "A[i, j]: a sum down column j of A, so A is transposed.",
        lambda ex: ex.weights @ ex.upstream if ex.weights.shape[1] == ex.weights.shape[0] else None,
    ),
    Mistake(
        "The product the other way round",
        "dV = Aᵀ dZ, shape (n_k, d_v); you computed (Aᵀ dZ)ᵀ = dZᵀ A.",
        lambda ex: ex.upstream.T @ ex.weights,
    ),
    Mistake(
        "Forgot the weights",
        "the output is Z = A V, so the gradient reaching V goes through A: dV = Aᵀ dZ, not dZ itself.",
        lambda ex: ex.upstream if ex.upstream.shape == (ex.weights.shape[1], ex.upstream.shape[1]) else None,
    ),
    Mistake(
        "Multiplied entry by entry",
        "dV = Aᵀ dZ is a matrix product (each entry a sum over the queries), not A ⊙ dZ.",
        lambda ex: ex.weights * ex.upstream if ex.weights.shape == ex.upstream.shape else None,
    ),
)

#: The mistakes :func:`check_softmax_gradient` recognises; ``wrong`` gives the ``ds`` they produce.
SOFTMAX_GRADIENT_MISTAKES: tuple[Mistake[GradientExercise], ...] = (
    Mistake(
        "Only the diagonal of the Jacobian",
        "you kept ∂a_j/∂s_j = a_j(1 − a_j) but left out ∂a_i/∂s_j = −a_i a_j: raising one score "
        "lowers every other weight. Subtract Σ_i a_i da_i inside the bracket: ds = a ⊙ (da − Σ a da).",
        lambda ex: ex.weights * (1 - ex.weights) * ex.upstream,
    ),
    Mistake(
        "Forgot the subtraction",
        "ds = a ⊙ (da − Σ_i a_i da_i): the weights share one sum, so each score's gradient is "
        "measured against the weighted mean of da.",
        lambda ex: ex.weights * ex.upstream,
    ),
    Mistake(
        "Subtracted the plain sum",
        "the sum inside the bracket is weighted: Σ_i a_i da_i, not Σ_i da_i.",
        lambda ex: ex.weights * (ex.upstream - ex.upstream.sum()),
    ),
    Mistake(
        "Forgot to multiply by the weights",
        "ds = a ⊙ (da − Σ a da): the bracket is multiplied entry by entry by the weights a.",
        lambda ex: ex.upstream - np.sum(ex.weights * ex.upstream),
    ),
    Mistake(
        "Sign flipped",
        "ds = a ⊙ (da − Σ a da), da first: a score whose da is below the weighted mean gets a negative ds.",
        lambda ex: -ex.score_gradient,
    ),
    Mistake(
        "Passed the gradient through unchanged",
        "the softmax is in the way: ds = J da with the softmax's Jacobian J = diag(a) − a aᵀ "
        "(lesson 04), which is a ⊙ (da − Σ a da).",
        lambda ex: ex.upstream,
    ),
)

UP, DOWN = "up", "down"

#: What each gradient's shape is: that of what it is the gradient of.
SHAPES = {"dV": "the shape of V, (n_k, d_v)", "ds": "the shape of the row of scores, (n,)"}


def _direction(gradient: float) -> str | None:
    """Where gradient descent (``s ← s − η ∂L/∂s``) moves a number with this gradient."""
    return DOWN if gradient > 0 else UP if gradient < 0 else None


#: The mistakes :func:`check_score_direction` recognises; ``wrong`` gives the direction they answer.
#: With two possible answers every wrong one fits the last row, so only the first row that fits is
#: named: the more specific one comes first.
DIRECTION_MISTAKES: tuple[Mistake[GradientExercise], ...] = (
    Mistake(
        "Read the weight's gradient, not the score's",
        "the weights compete: ∂L/∂s_j = a_j (da_j − Σ_i a_i da_i), so the score rises only if da_j is "
        "below the weighted mean of da, not simply below 0.",
        lambda ex: _direction(float(ex.upstream[ex.key])),
    ),
    Mistake(
        "Followed the gradient uphill",
        "gradient descent moves against the gradient, s ← s − η ∂L/∂s: a positive ∂L/∂s lowers the "
        "score, a negative one raises it.",
        lambda ex: _direction(-float(ex.score_gradient[ex.key])),
    ),
)


def check_value_gradient(
    answer: object, weights: npt.ArrayLike, d_output: npt.ArrayLike, *, decimals: int = 2
) -> CheckResult:
    """Check ``dV = Aᵀ dZ`` computed by hand.

    Parameters
    ----------
    answer : array_like, shape (n_k, d_v)
        The learner's ``dV``.
    weights : array_like, shape (n_q, n_k)
        The attention weights ``A`` (rows summing to 1).
    d_output : array_like, shape (n_q, d_v)
        ``dZ``, the gradient of the loss with respect to the output.
    decimals : int
        Decimals asked, each entry compared by :func:`attention_lessons.kit.checks.values.entry_unit`'s rule.

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`VALUE_GRADIENT_MISTAKES`, a wrong shape, or which entry is
        off. The right numbers are never shown.
    """
    A = _matrix(_distributions(weights), "weights")
    dZ = _matrix(_exercise_array(d_output, "d_output"), "d_output")
    if dZ.shape[0] != A.shape[0]:
        raise ValueError(f"d_output must have one row per query: weights {A.shape}, d_output {dZ.shape}")
    exercise = GradientExercise(A, dZ)
    return _array_verdict(answer, A.T @ dZ, exercise, VALUE_GRADIENT_MISTAKES, "dV", decimals)


def check_softmax_gradient(
    answer: object, weights: npt.ArrayLike, d_weights: npt.ArrayLike, *, decimals: int = 3
) -> CheckResult:
    """Check the gradient reaching one row of scores through the softmax, computed by hand.

    Parameters
    ----------
    answer : array_like, shape (n,)
        The learner's ``ds``.
    weights : array_like, shape (n,)
        The row's weights ``a = softmax(s)``.
    d_weights : array_like, shape (n,)
        ``da``, the gradient of the loss with respect to the weights.
    decimals : int
        Decimals asked, with the kit's rule for arrays
        (:func:`attention_lessons.kit.checks.values.entry_unit`).

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`SOFTMAX_GRADIENT_MISTAKES`, a wrong shape, or which entry is
        off.
    """
    exercise = _row_exercise(weights, d_weights)
    return _array_verdict(
        answer, exercise.score_gradient, exercise, SOFTMAX_GRADIENT_MISTAKES, "ds", decimals
    )


def check_score_direction(
    answer: object, weights: npt.ArrayLike, d_weights: npt.ArrayLike, key: int
) -> CheckResult:
    """Check which way one step of gradient descent moves score ``key``: ``"up"`` or ``"down"``.

    Parameters
    ----------
    answer : str or number
        ``"up"`` or ``"down"`` (``+1`` and ``−1`` are read the same way).
    weights : array_like, shape (n,)
        The row's weights ``a = softmax(s)``.
    d_weights : array_like, shape (n,)
        ``da``, the gradient of the loss with respect to the weights.
    key : int
        Which score, counted from 0.

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`DIRECTION_MISTAKES`.
    """
    exercise = _row_exercise(weights, d_weights)
    index = as_positive_int(key, "key", minimum=0)
    if index >= exercise.weights.size:
        raise ValueError(f"key must be an index from 0 to {exercise.weights.size - 1}, got {index}")
    exercise = GradientExercise(exercise.weights, exercise.upstream, index)
    right = _direction(float(exercise.score_gradient[index]))
    if right is None:
        raise ValueError(f"score {index} has gradient 0 here: it does not move, so there is nothing to ask")
    given = _read_direction(answer)
    if isinstance(given, CheckResult):
        return given
    if given == right:
        return passed(f"Correct: one step of gradient descent moves score {index} {right}.")
    found = matching(DIRECTION_MISTAKES, exercise, lambda wrong: wrong == given)
    return failed(describe(f"Not {given}", found[:1], exercise))


def _exercise_array(x: npt.ArrayLike, name: str) -> np.ndarray:
    """An exercise's array of finite real numbers as float64, or raise naming ``name``."""
    if x is None:
        raise TypeError(f"{name} is None; expected an array of real numbers")
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has NaN or infinite entries")
    return arr.astype(np.float64)


def _distributions(weights: npt.ArrayLike) -> np.ndarray:
    """``weights`` as attention weights (rows of probabilities summing to 1), or raise."""
    A = _exercise_array(weights, "weights")
    softmax_backward(A, np.zeros_like(A))  # raises, naming the problem, unless rows are distributions
    return A


def _matrix(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2 axes), got shape {arr.shape}")
    return arr


def _row_exercise(weights: npt.ArrayLike, d_weights: npt.ArrayLike) -> GradientExercise:
    a = _distributions(weights)
    da = _exercise_array(d_weights, "d_weights")
    if a.ndim != 1 or da.shape != a.shape:
        raise ValueError(f"weights and d_weights must be one row each, (n,): got {a.shape} and {da.shape}")
    return GradientExercise(a, da)


def _read_direction(answer: object) -> str | CheckResult:
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in (UP, DOWN):
            return word
        return failed(f"Answer “up” or “down” (or +1 / −1); got {answer!r}.")
    value = read_number(answer, "the answer")
    if isinstance(value, CheckResult):
        return value
    return UP if value > 0 else DOWN if value < 0 else failed("Answer “up” or “down” (or +1 / −1); got 0.")


def _array_verdict(
    answer: object,
    right: np.ndarray,
    exercise: GradientExercise,
    table: tuple[Mistake[GradientExercise], ...],
    name: str,
    decimals: int,
) -> CheckResult:
    atol = entry_unit(right, decimals)
    arr = read_array(answer, f"your {name}")
    if isinstance(arr, CheckResult):
        return arr
    if not np.isfinite(arr).all():
        return failed(f"{name} has NaN or infinite entries; every entry is a finite number.")

    if _close(arr, right, atol):
        return passed(f"Correct: {name} matches attnlib.backward to {decimals} decimals.")
    found = matching(
        table, exercise, lambda wrong: _close(arr, wrong, atol) and not _close(right, wrong, atol)
    )
    if found:
        return failed(describe("", found, exercise))
    if arr.shape != right.shape:
        return failed(f"Wrong shape: {name} has {SHAPES[name]}; yours is {shape_text(arr.shape)}.")
    bad = ~np.isclose(arr, right, rtol=0, atol=atol)
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    direction = "too high" if arr[index] > right[index] else "too low"
    return failed(
        f"Not yet: {int(bad.sum())} of {arr.size} entries are off; the first, {name}{numpy_index(index)}, "
        f"is {direction}. Check that step again."
    )


def _close(a: np.ndarray, b: object, atol: float) -> bool:
    """Whether ``b`` has ``a``'s shape and every entry within ``atol``."""
    other = np.asarray(b)
    return other.shape == a.shape and bool(np.allclose(a, other, rtol=0, atol=atol))
