"""Checks of one number (:func:`check_value`) and of a shape (:func:`check_shape`)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from decimal import Decimal

import numpy as np

from attention_lessons.kit.checks.answers import placeholder, read_number
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import number_text, one_of, ordinal, shape_text
from attnlib.validation import as_one_line, as_positive_int, as_real, is_number

__all__ = [
    "MAX_DECIMALS",
    "SIGNIFICANT_DIGITS",
    "answer_unit",
    "check_shape",
    "check_value",
    "entry_unit",
    "known_mistakes",
    "number_verdict",
    "tolerance",
]

#: More decimals than float64 holds cannot be asked of a learner.
MAX_DECIMALS = 15

#: However few decimals are asked, an answer keeps this many significant digits of the right one.
SIGNIFICANT_DIGITS = 2


def check_value(
    answer: object,
    expected: float,
    *,
    decimals: int = 2,
    name: str = "the answer",
    mistakes: Mapping[str, float] | None = None,
) -> CheckResult:
    """Check one number, such as a count or a weight read off by hand.

    Parameters
    ----------
    answer : float
        The learner's number: a Python or NumPy number, or anything holding a single real value
        (a 0-d or one-element array, torch tensor or pandas Series).
    expected : float
        The right number.
    decimals : int
        The decimals asked for (0 to 15). Passes when ``|answer − expected|`` is less than one unit
        of the last place asked, ``10**-decimals``, so the right value rounded (or cut off) to
        ``decimals`` places passes; for a right value so small that those places keep fewer than
        two of its significant digits, the place is its second significant digit instead (see
        :func:`answer_unit`), so 0, half or double the right value never pass.
    name : str
        What the number is, for the message.
    mistakes : mapping of str to float, optional
        Known wrong answers: ``{diagnosis: wrong value}``. An answer equal to a wrong value gets
        its diagnosis.

    Returns
    -------
    CheckResult
        Passed; or the known mistake(s) the answer matches; or the answer is the right value
        rounded to too few decimals; otherwise whether the answer is too high or too low. The
        right value itself is never shown, so the learner can try again.

    Raises
    ------
    TypeError, ValueError
        If ``expected``, ``decimals`` or ``mistakes`` is not valid (``mistakes`` must be a dict of
        one-line strings to finite numbers).
    """
    right = as_real(expected, "expected")
    return number_verdict(answer, right, decimals=decimals, name=name, mistakes=known_mistakes(mistakes))


def number_verdict(
    answer: object, right: float, *, decimals: object, name: str, mistakes: Sequence[tuple[str, float]]
) -> CheckResult:
    """The verdict on one number, given the right one and ``(diagnosis, wrong value)`` pairs.

    The rule, for every numeric self-check: with ``unit, places = answer_unit(right, decimals)``,
    the answer passes when ``|answer − right| < unit``. ``unit`` is one unit of the last place
    asked, ``10**-decimals``, so the right answer rounded or cut off to ``decimals`` places passes;
    when the right answer is so small that those places would keep fewer than
    :data:`SIGNIFICANT_DIGITS` of its significant digits, the place is its second significant digit
    (``right = 0.0047`` with ``decimals=2``: give ``0.0047``; ``0.00`` is refused and told to give
    more decimals). So 0 never passes for a right answer that is not 0, and neither does a named
    mistake that differs from the right answer by a unit or more, whatever the scale. A named
    mistake is recognised within the same unit.
    """
    unit, digits = answer_unit(right, decimals)
    asked = tolerance(decimals)[1]
    value = read_number(answer, name)
    if isinstance(value, CheckResult):
        return value
    if abs(value - right) < unit:
        return passed(f"Correct: {name} = {number_text(value, digits)}.")
    shown = number_text(value, digits)
    fits = []
    for why, wrong in mistakes:
        if abs(value - wrong) < unit and abs(wrong - right) >= unit and why not in fits:
            fits.append(why)
    if fits:
        several = ". Several mistakes give this number" if len(fits) > 1 else ""
        lead = f"{shown} is not it{several}"
        return failed(one_of(lead, fits))
    for places in range(digits):
        cut = 10.0**places
        if any(
            math.isclose(value, short, rel_tol=1e-9, abs_tol=1e-12)
            for short in (round(right * cut) / cut, math.trunc(right * cut) / cut)
        ):
            plural = "" if places == 1 else "s"
            if places < asked and value != 0:
                return failed(
                    f"Close: {value:.{places}f} is rounded to {places} decimal{plural}; "
                    f"give at least {digits} decimals (the check accepts a difference of {unit:g})."
                )
            return failed(
                f"Rounded away: {value:.{places}f} is the answer rounded to {places} decimal{plural}, which "
                f"keeps fewer than {SIGNIFICANT_DIGITS} of its significant digits; give at least {digits} "
                f"decimals (the check accepts a difference of {unit:g})."
            )
    direction = "too high" if value > right else "too low"
    decimals_hint = (
        "" if right.is_integer() else f", and give at least {digits} decimal{'' if digits == 1 else 's'}"
    )
    return failed(f"Not yet: {shown} is {direction}. Check your formula step by step{decimals_hint}.")


def check_shape(
    answer: object,
    expected_shape: Sequence[int],
    *,
    name: str = "the shape",
    axes: Sequence[str] | None = None,
) -> CheckResult:
    """Check a shape: given as a tuple such as ``(2, 3)``, or as an array whose shape is checked.

    Parameters
    ----------
    answer : tuple of int, int, or array
        The learner's shape (an int ``n`` means ``(n,)``), or an array (its ``.shape``).
    expected_shape : sequence of int
        The right shape.
    name : str
        What the shape is of, for the message (``"the weights' shape"``).
    axes : sequence of str, optional
        A name for each axis (``("n_q", "n_k")``), shown in the messages.

    Returns
    -------
    CheckResult
        Passed, or: the axes in the wrong order, the wrong number of axes, or which axis differs.
        The right sizes are never shown (only the axes' names, when given).
    """
    expected = tuple(as_positive_int(s, "expected_shape entry", minimum=0) for s in _sequence(expected_shape))
    if axes is not None:
        axes = tuple(str(a) for a in axes)
        if len(axes) != len(expected):
            raise ValueError(f"axes names {axes} must have one name per axis of {shape_text(expected)}")
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    got = _as_shape(answer)
    if got is None:
        return failed(f"Give {name} as a tuple of whole numbers, such as (4, 5); got {answer!r}.")
    if got == expected:
        symbols = f"{shape_text(axes)} = " if axes else ""
        return passed(f"Correct: {name} is {symbols}{shape_text(expected)}.")
    named = f" {shape_text(axes)}" if axes else ""
    if len(got) != len(expected):
        count = f"{len(expected)} ax{'is' if len(expected) == 1 else 'es'}"
        return failed(f"Not yet: {name} has {count}{named}; you gave {len(got)}: {shape_text(got)}.")
    if len(got) >= 2 and sorted(got) == sorted(expected):
        order = f"; {name} is{named}, in that order" if axes else ""
        return failed(f"Axes swapped: the sizes are right, the order is not{order}.")
    axis = next(i for i, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e)
    called = f", {axes[axis]}" if axes else ""
    return failed(
        f"Not yet: the {ordinal(axis + 1)} axis (numpy axis {axis}{called}) of {name} is not {got[axis]}."
    )


def _sequence(value: object) -> Sequence[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"expected_shape must be a tuple of whole numbers such as (2, 3), got {value!r}")
    return list(value)


def _as_shape(answer: object) -> tuple[int, ...] | None:
    """The shape a learner means: an array's shape, a tuple/list of ints, or an int ``n``."""
    if hasattr(answer, "shape") and not isinstance(answer, numbers.Number):
        try:
            return tuple(int(s) for s in answer.shape)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            return None
    if is_number(answer, whole=True):
        return (int(answer),)
    if isinstance(answer, (tuple, list)) and all(is_number(s, whole=True) for s in answer):
        return tuple(int(s) for s in answer)
    return None


def tolerance(decimals: object) -> tuple[float, int]:
    """``(10**-decimals, decimals)`` for ``decimals`` from 0 to :data:`MAX_DECIMALS`, or raise."""
    digits = as_positive_int(decimals, "decimals", minimum=0)
    if digits > MAX_DECIMALS:
        raise ValueError(
            f"decimals must be at most {MAX_DECIMALS} (float64 holds about 16 digits), got {digits}"
        )
    return 10.0**-digits, digits


def answer_unit(right: object, decimals: object) -> tuple[float, int]:
    """``(unit, places)``: the difference an answer must stay under, and the decimals it needs.

    ``unit = 10**-places`` with ``places = decimals``, or more when the right answer is so small
    that ``decimals`` places keep fewer than :data:`SIGNIFICANT_DIGITS` of its significant digits:
    then ``places`` reaches its second significant digit. ``right`` is the right number, or for an
    array its largest entry in absolute value (entries are compared at that scale).

    >>> answer_unit(937.5, 2), answer_unit(0.41, 4), answer_unit(0.0047, 2)
    ((0.01, 2), (0.0001, 4), (0.0001, 4))
    """
    _, asked = tolerance(decimals)
    size = abs(float(right))
    places = asked
    if size > 0 and math.isfinite(size):
        first = Decimal(repr(size)).adjusted()  # the place of the first significant digit: 10**first
        places = max(asked, SIGNIFICANT_DIGITS - 1 - first)
    return 10.0**-places, places


def entry_unit(right: object, decimals: object) -> float:
    """The tolerance of an array check: each entry passes within ``answer_unit``'s unit at the scale
    of the right array's largest entry (``10**-decimals`` unless every entry is small), so an array of
    zeros or a mistake off by a factor never passes at any scale."""
    values = np.abs(np.asarray(right, dtype=np.float64))
    finite = values[np.isfinite(values)]
    return answer_unit(float(finite.max()) if finite.size else 0.0, decimals)[0]


def known_mistakes(mistakes: object) -> list[tuple[str, float]]:
    """``{diagnosis: wrong value}`` as a list of pairs, or raise saying what a mistake must be."""
    if mistakes is None:
        return []
    if not isinstance(mistakes, Mapping):
        raise TypeError(
            "mistakes must be a dict {diagnosis: wrong value}, such as {'that is 1/d_k.': 0.5}; "
            f"got {type(mistakes).__name__}"
        )
    return [
        (as_one_line(why, "each key of mistakes"), as_real(value, f"mistakes[{why!r}]"))
        for why, value in mistakes.items()
    ]
