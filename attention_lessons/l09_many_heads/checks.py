"""Check the shapes and sizes of multi-head attention: :func:`check_split_heads_shape`,
:func:`check_parameter_count`; and the kit's :func:`check_head_scale`, which lesson 04 asks first.

The key padding mask of a batch is checked by
:func:`attention_lessons.l08_exercises.masks.check_padding_mask`, whose table already names an inverted
mask (PyTorch's ``key_padding_mask`` convention).
"""

from __future__ import annotations

from attention_lessons.kit.checks.answers import read_number
from attention_lessons.kit.checks.heads import HeadsExercise, check_head_scale, heads_exercise
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.values import check_shape
from attention_lessons.l08_exercises.masks import PADDING_MISTAKES, check_padding_mask
from attnlib.counting import multi_head_parameter_counts

#: With the checks lesson 09 shares with other lessons (so the notebook reads them from one module).
__all__ = [
    "PADDING_MISTAKES",
    "PARAMETER_MISTAKES",
    "SPLIT_HEADS_MISTAKES",
    "HeadsExercise",
    "check_head_scale",
    "check_padding_mask",
    "check_parameter_count",
    "check_split_heads_shape",
]


#: The mistakes :func:`check_split_heads_shape` recognises; ``wrong`` gives the shape each leads to.
SPLIT_HEADS_MISTAKES: tuple[Mistake[HeadsExercise], ...] = (
    Mistake(
        "Heads and positions swapped",
        "that is the shape right after the reshape (batch, n, n_heads, d_head). split_heads then moves "
        "the heads before the positions, so that each head is a (n, d_head) matrix of its own tokens.",
        lambda ex: (ex.batch, ex.n, ex.n_heads, ex.d_head),
    ),
    Mistake(
        "Every head kept the whole width",
        "the d_model columns are cut into n_heads pieces; each head gets d_head = d_model / n_heads of them.",
        lambda ex: (ex.batch, ex.n_heads, ex.n, ex.d_model),
    ),
    Mistake(
        "Positions and head width swapped",
        "each head holds one row per token and one column per feature of that head: (n, d_head).",
        lambda ex: (ex.batch, ex.n_heads, ex.d_head, ex.n),
    ),
    Mistake(
        "The batch axis is missing",
        "split_heads keeps the leading (batch) axes as they are and only cuts the last one.",
        lambda ex: (ex.n_heads, ex.n, ex.d_head),
    ),
)

#: The mistakes :func:`check_parameter_count` recognises; ``wrong`` gives the count each leads to.
PARAMETER_MISTAKES: tuple[Mistake[HeadsExercise], ...] = (
    Mistake(
        "You forgot W_o",
        "after the heads are concatenated, the output projection W_o (n_heads·d_head × d_model) mixes "
        "them; it has as many parameters as W_q.",
        lambda ex: 3 * ex.d_model**2,
    ),
    Mistake(
        "You counted one head",
        "each head has its own columns of W_q, W_k and W_v (and its own rows of W_o): multiply by the "
        "number of heads.",
        lambda ex: 4 * ex.d_model * ex.d_head,
    ),
    Mistake(
        "You gave every head the whole width d_model",
        "the heads share the width: each head's queries, keys and values have d_head = d_model / "
        "n_heads columns, so W_q is still d_model × d_model in all.",
        lambda ex: 4 * ex.n_heads * ex.d_model**2,
    ),
    Mistake(
        "You counted biases",
        "this layer has none (bias=False in PyTorch): count the entries of the four weight matrices only.",
        lambda ex: 4 * ex.d_model**2 + 4 * ex.d_model,
    ),
    Mistake(
        "You counted one of the four matrices",
        "the layer has W_q, W_k, W_v and W_o.",
        lambda ex: ex.d_model**2,
    ),
)


def check_split_heads_shape(answer: object, batch: int, n: int, d_model: int, n_heads: int) -> CheckResult:
    """Check the shape of ``split_heads(X @ W_q, n_heads)`` for ``X`` of shape ``(batch, n, d_model)``.

    Parameters
    ----------
    answer : tuple of int, or an array
        The learner's shape (or an array whose shape is checked).
    batch, n, d_model, n_heads : int
        The exercise; ``d_model`` must divide into ``n_heads`` heads.

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`SPLIT_HEADS_MISTAKES` (heads and positions swapped, every
        head the whole width, ...), or what :func:`attention_lessons.kit.checks.check_shape` says. The right
        shape is never shown.
    """
    ex = heads_exercise(d_model, n_heads, batch, n)
    name = "the shape after split_heads"
    verdict = check_shape(answer, ex.split_shape, name=name, axes=("batch", "n_heads", "n", "d_head"))
    if verdict.passed:
        return verdict
    found = matching(
        SPLIT_HEADS_MISTAKES,
        ex,
        lambda wrong: wrong != ex.split_shape and check_shape(answer, wrong).passed,  # type: ignore[arg-type]
    )
    if found:
        return failed(describe("", found, ex))
    return verdict


def check_parameter_count(answer: object, d_model: int, n_heads: int) -> CheckResult:
    """Check the number of parameters of a multi-head layer with ``W_q, W_k, W_v, W_o`` and no biases.

    The right count is :func:`attnlib.counting.multi_head_parameter_counts` ``(d_model,
    n_heads=n_heads)["total"]``, heads of width ``d_model / n_heads``.

    Parameters
    ----------
    answer : int
        The learner's count.
    d_model, n_heads : int
        The layer; ``d_model`` must divide into ``n_heads`` heads.

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`PARAMETER_MISTAKES` (forgetting ``W_o``, one head only,
        every head the whole width, biases counted, ...), or a hint. The right count is never shown.
    """
    ex = heads_exercise(d_model, n_heads)
    right = multi_head_parameter_counts(ex.d_model, n_heads=ex.n_heads)["total"]
    value = read_number(answer, "the answer")
    if isinstance(value, CheckResult):
        return value
    if not value.is_integer() or value < 0:
        return failed(f"The answer is {value:g}; a number of parameters is a whole number, 0 or more.")
    if int(value) == right:
        return passed(
            f"Correct: {right:,} parameters, W_q, W_k, W_v and W_o of {ex.d_model} × {ex.d_model} each, "
            f"whatever the number of heads ({ex.n_heads} here)."
        )
    found = matching(PARAMETER_MISTAKES, ex, lambda wrong: wrong == int(value) != right)
    if found:
        return failed(describe("", found, ex))
    return failed(
        "Not yet: count the entries of W_q (d_model × n_heads·d_head), W_k, W_v and W_o "
        "(n_heads·d_head × d_model), then add them up."
    )
