"""The scale ``1/√d_k``: the table of wrong scales, and :func:`check_scale`.

The same table serves two checks: :func:`check_scale` compares a learner's number with each
row's wrong factor, and :func:`attention_lessons.kit.checks.check_attention` computes attention with each
row's factor to recognise a wrong scale inside a whole computation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attention_lessons.kit.checks.mistakes import Mistake
from attention_lessons.kit.checks.result import CheckResult
from attention_lessons.kit.checks.values import number_verdict
from attnlib.core import default_scale
from attnlib.validation import as_positive_int

__all__ = ["SCALE_MISTAKES", "ScaleMistake", "Sizes", "check_scale"]


@dataclass(frozen=True)
class Sizes:
    """The sizes a learner might put in the scale by mistake (``None`` where the exercise has none).

    Attributes
    ----------
    d_k : int
        Length of the queries and keys: the scale is ``1/√d_k``.
    n_k, d_v, d_model : int or None
        Number of keys, length of the values, width of the embeddings.
    """

    d_k: int
    n_k: int | None = None
    d_v: int | None = None
    d_model: int | None = None


def _inverse_root(size: int | None) -> float | None:
    return None if size is None else 1.0 / math.sqrt(size)


@dataclass(frozen=True)
class ScaleMistake(Mistake[Sizes]):
    """A wrong scale: a :class:`Mistake` whose ``wrong(sizes)`` is the factor the scores get.

    Attributes
    ----------
    did : str
        What the learner did, as the start of a sentence ("Scaled by 1/d_k"), for exercises whose
        scale is not ``1/√d_k`` (plain dot-product attention, scale 1).
    """

    did: str = ""


#: The wrong scales, most likely first. ``wrong`` gives the factor that multiplies the scores. The first
#: row is the right scale of the transformer: a mistake only in exercises that use another scale.
SCALE_MISTAKES: tuple[ScaleMistake, ...] = (
    ScaleMistake(
        "Used the transformer's scale 1/√d_k",
        "this exercise asks for another scale.",
        lambda s: default_scale(s.d_k),
        did="Scaled by 1/√d_k (the transformer's scale)",
    ),
    ScaleMistake(
        "Forgot to scale",
        "multiply the scores Q Kᵀ by 1/√d_k (that is, divide them by √d_k) before the softmax.",
        lambda s: 1.0,
        did="Left the scores unscaled",
    ),
    ScaleMistake(
        "Scaled by 1/d_k instead of 1/√d_k",
        "divide the scores by the square root of d_k, not by d_k itself.",
        lambda s: 1.0 / s.d_k,
        did="Scaled by 1/d_k",
    ),
    ScaleMistake(
        "Multiplied by √d_k instead of dividing",
        "the scores are divided by √d_k (multiplied by 1/√d_k), which makes them smaller.",
        lambda s: math.sqrt(s.d_k),
        did="Scaled by √d_k",
    ),
    ScaleMistake(
        "Divided by √n_k instead of √d_k",
        "n_k is the number of keys; the scale uses d_k, the length of the query and key vectors.",
        lambda s: _inverse_root(s.n_k),
        did="Scaled by 1/√n_k",
    ),
    ScaleMistake(
        "Divided by √d_v instead of √d_k",
        "d_v is the length of the value vectors, which take no part in the scores; the scale uses "
        "d_k, the length of the queries and keys.",
        lambda s: _inverse_root(s.d_v),
        did="Scaled by 1/√d_v",
    ),
    ScaleMistake(
        "Divided by √d_model instead of √d_k",
        "d_model is the width of the embeddings; the scale uses d_k, the width of the queries and "
        "keys after the projection (one head's width when there are several heads).",
        lambda s: _inverse_root(s.d_model),
        did="Scaled by 1/√d_model",
    ),
    ScaleMistake(
        "Used 1/8, the scale of the original Transformer",
        "1/8 = 1/√64 belongs to d_k = 64, the key width in “Attention Is All You Need”; use the d_k "
        "of this exercise.",
        lambda s: 0.125,
        did="Scaled by 1/8 (the original Transformer's 1/√64)",
    ),
)


def check_scale(
    answer: object,
    d_k: int,
    *,
    n_k: int | None = None,
    d_v: int | None = None,
    d_model: int | None = None,
    decimals: int = 4,
    name: str = "the scale 1/√d_k",
) -> CheckResult:
    """Check the scale ``1/√d_k`` computed by hand, naming a wrong size or a wrong formula.

    Parameters
    ----------
    answer : float
        The learner's scale (anything holding a single real number).
    d_k : int
        Length of the queries and keys.
    n_k, d_v, d_model : int, optional
        The exercise's other sizes: give them, and a scale computed from one of them by mistake
        is named.
    decimals : int
        Decimals asked, compared by :func:`attention_lessons.kit.checks.values.number_verdict`'s rule.
    name : str
        What the number is, for the message.

    Returns
    -------
    CheckResult
        Passed; or the mistake (``1/d_k``, ``√d_k``, ``1/√n_k``, ``1/√d_v``, ``1/√d_model``, the
        original Transformer's 1/8, no scale); or too few decimals; otherwise too high or too low.
        The right scale is never shown.
    """
    sizes = Sizes(
        d_k=as_positive_int(d_k, "d_k"),
        n_k=None if n_k is None else as_positive_int(n_k, "n_k"),
        d_v=None if d_v is None else as_positive_int(d_v, "d_v"),
        d_model=None if d_model is None else as_positive_int(d_model, "d_model"),
    )
    mistakes = []
    for mistake in SCALE_MISTAKES:
        factor = mistake.wrong(sizes)
        if isinstance(factor, float):
            mistakes.append((f"{mistake.message(sizes)}", factor))
    return number_verdict(answer, default_scale(sizes.d_k), decimals=decimals, name=name, mistakes=mistakes)
