"""The heads of a multi-head layer as an exercise: :class:`HeadsExercise`, and :func:`check_head_scale`
(the scale of one head), which lesson 04 asks before lesson 09 cuts a layer into heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_lessons.kit.checks.result import CheckResult
from attention_lessons.kit.checks.scale import check_scale
from attnlib.validation import as_positive_int

__all__ = ["HeadsExercise", "check_head_scale", "heads_exercise"]


@dataclass(frozen=True)
class HeadsExercise:
    """A multi-head layer: ``n_heads`` heads of width ``d_head = d_model / n_heads``, a batch of
    ``batch`` sequences of ``n`` tokens."""

    d_model: int
    n_heads: int
    batch: int = 1
    n: int = 1

    @property
    def d_head(self) -> int:
        """The width of one head."""
        return self.d_model // self.n_heads

    @property
    def split_shape(self) -> tuple[int, int, int, int]:
        """What :func:`attnlib.multihead.split_heads` returns: ``(batch, n_heads, n, d_head)``."""
        return (self.batch, self.n_heads, self.n, self.d_head)


def heads_exercise(d_model: object, n_heads: object, batch: object = 1, n: object = 1) -> HeadsExercise:
    """The exercise of a layer of width ``d_model`` cut into ``n_heads`` heads, its sizes checked.

    Raises
    ------
    ValueError, TypeError
        A size that is not a positive whole number, or ``d_model`` that ``n_heads`` does not divide.
    """
    width, heads = as_positive_int(d_model, "d_model"), as_positive_int(n_heads, "n_heads")
    if width % heads:
        raise ValueError(f"d_model={width} does not divide into n_heads={heads} equal heads")
    return HeadsExercise(width, heads, as_positive_int(batch, "batch"), as_positive_int(n, "n"))


def check_head_scale(answer: object, d_model: int, n_heads: int, *, decimals: int = 4) -> CheckResult:
    """Check the scale of one head of a layer of width ``d_model`` cut into ``n_heads`` heads.

    Each head compares queries and keys of width ``d_k = d_model / n_heads``, so its scale is
    ``1/√d_k``; the check takes the layer's sizes, not ``d_k``, so that the exercise does not give
    the head's width away.

    Parameters
    ----------
    answer : float
        The learner's scale.
    d_model, n_heads : int
        The layer; ``d_model`` must divide into ``n_heads`` heads.
    decimals : int
        Decimals asked, compared by :func:`attention_lessons.kit.checks.values.number_verdict`'s rule.

    Returns
    -------
    CheckResult
        What :func:`attention_lessons.kit.checks.check_scale` says for ``d_k = d_model / n_heads``, naming the
        scale of the whole width (``1/√d_model``), ``1/d_k``, ``√d_k``, ... The right scale is never
        shown.
    """
    ex = heads_exercise(d_model, n_heads)
    return check_scale(answer, ex.d_head, d_model=ex.d_model, decimals=decimals, name="the scale of one head")
