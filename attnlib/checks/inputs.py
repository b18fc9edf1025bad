"""The exercise's own inputs (the right value, shapes, ``decimals``): validated, never guessed.

Unlike a learner's answer, these come from the lesson; a bad one raises ``TypeError`` or
``ValueError`` naming the argument.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

__all__ = ["MAX_DECIMALS", "exercise_number", "known_mistakes", "one_line", "tolerance", "whole_number"]

#: More decimals than float64 holds cannot be asked of a learner.
MAX_DECIMALS = 15


def whole_number(value: object, name: str, *, minimum: int = 1) -> int:
    """``value`` as an int at least ``minimum``, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def tolerance(decimals: object) -> tuple[float, int]:
    """``(10**-decimals, decimals)`` for ``decimals`` from 0 to :data:`MAX_DECIMALS`."""
    digits = whole_number(decimals, "decimals", minimum=0)
    if digits > MAX_DECIMALS:
        raise ValueError(
            f"decimals must be at most {MAX_DECIMALS} (float64 holds about 16 digits), got {digits}"
        )
    return 10.0**-digits, digits


def exercise_number(value: object, name: str) -> float:
    """A finite real number of the exercise, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    try:
        result = float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large for a float (over 1.8e308)") from None
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result}")
    return result


def one_line(text: object, name: str) -> str:
    """A non-empty one-line message, or raise naming ``name``."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {text!r}")
    if not text.strip() or "\n" in text:
        raise ValueError(f"{name} must be a non-empty single line, got {text!r}")
    return text


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
        (one_line(why, "each key of mistakes"), exercise_number(value, f"mistakes[{why!r}]"))
        for why, value in mistakes.items()
    ]
