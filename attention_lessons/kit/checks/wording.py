"""How the checks write numbers, shapes and places in an array for a learner."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["as_printed", "number_text", "numpy_index", "one_of", "ordinal", "shape_text", "where"]

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def as_printed(value: float, decimals: int = 4) -> str:
    """A number as the lessons print it, numpy's ``precision=decimals, suppress=True`` (0.25, not 0.2500).

    >>> as_printed(0.25003), as_printed(-2.71828, 2), as_printed(8.0)
    ('0.25', '-2.72', '8')
    """
    return np.format_float_positional(round(float(value), decimals), precision=decimals, trim="-")


def number_text(x: float, decimals: int) -> str:
    """A number as a learner would write it: whole numbers without decimals, no ``-0``."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if math.isnan(x):
        return "NaN"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x)}"
    if abs(x) >= 1e15:
        return f"{x:.3g}"
    text = f"{x:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def numpy_index(index: Sequence[int]) -> str:
    """An index as numpy writes it: ``[1, 0]``."""
    return "[" + ", ".join(str(i) for i in index) + "]"


def shape_text(shape: Sequence[object]) -> str:
    """A shape as Python writes it: ``(2, 3)``, ``(3,)``; names too: ``(n_q, n_k)``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def ordinal(n: int) -> str:
    """``1`` -> ``first``, ``2`` -> ``second``, ...; ``11`` -> ``11th``."""
    return ORDINALS[n - 1] if 1 <= n <= len(ORDINALS) else f"{n}th"


def where(index: tuple[int, ...], columns: str | None = None, *, single: bool = False) -> str:
    """Where an entry is, for a learner: counted from 1, with the numpy index (counted from 0).

    ``columns`` names what the last axis holds (``"key"``, ``"dimension"``); rows are queries.
    Without it (an answer whose layout is not the expected one) rows and columns are just rows and
    columns: ``row 2, column 1 (numpy index [1, 0])``. ``single`` says a 1-D answer belongs to one
    query, so its entries are keys or dimensions rather than queries.
    """
    at = f"(numpy index {numpy_index(index)})"
    if len(index) == 1:
        what = columns if (columns and single) else "entry"
        return f"{what} {index[0] + 1} {at}"
    row, col = ("query", columns) if columns else ("row", "column")
    text = f"{row} {index[-2] + 1}, {col} {index[-1] + 1}"
    if len(index) > 2:
        text += f" of batch entry {numpy_index(index[:-2])}"
    return f"{text} {at}"


def one_of(lead: str, reasons: Sequence[str]) -> str:
    """One reason after ``lead`` (a sentence of its own if it starts with a capital), or several,
    numbered in the order given (most likely first)."""
    if len(reasons) == 1:
        reason = reasons[0]
        return f"{lead}. {reason}" if reason[:1].isupper() else f"{lead}: {reason}"
    listed = " ".join(f"({k}) {reason}" for k, reason in enumerate(reasons, start=1))
    return f"{lead}; it is probably one of these: {listed}"
