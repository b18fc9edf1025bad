"""Reading a learner's answer, which is never trusted.

Each reader returns the answer in a form the checks can compare, or a failed
:class:`~attention_lessons.kit.checks.result.CheckResult` that says what is wrong with it: a placeholder not
yet replaced (``None``, ``...``), text, a boolean, a ragged list, NaN, an infinity, more than one
number where one was asked for. A torch tensor or a pandas object is read through NumPy (neither
library is imported here).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from attention_lessons.kit.checks.result import CheckResult, failed

__all__ = ["as_plain", "placeholder", "read_array", "read_number"]


def placeholder(answer: object, name: str) -> CheckResult | None:
    """A failed result for an answer that has not been written yet (``None`` or ``...``)."""
    if answer is None or answer is Ellipsis:
        shown = "None" if answer is None else "..."
        return failed(f"No answer yet: {name} is {shown}; replace it with your own computation.")
    return None


def as_plain(answer: object) -> object:
    """A torch tensor detached and on the CPU, so that NumPy can read it; anything else as it is."""
    for method in ("detach", "cpu"):
        convert = getattr(answer, method, None)
        if callable(convert) and not isinstance(answer, np.ndarray):
            answer = convert()
    return answer


def _as_numpy(answer: object) -> np.ndarray | None:
    """``np.asarray`` of the answer, or None if NumPy cannot make an array of it."""
    try:
        return np.asarray(as_plain(answer))
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return None


def read_array(answer: object, name: str) -> np.ndarray | CheckResult:
    """The answer as a float64 array, or a failed result saying why it is not one."""
    missing = placeholder(answer, name)
    if missing is not None:
        return missing
    if isinstance(answer, (str, bytes)):
        return failed(f"{name} is text ({answer!r}); give the numbers as an array, e.g. np.array(...).")
    arr = _as_numpy(answer)
    if arr is None:
        return failed(f"{name} is ragged or not made of numbers, so it is not an array.")
    if arr.dtype == object:
        return failed(
            f"{name} is not an array of numbers: it is ragged, mixes types, or holds numbers too large "
            "for a float."
        )
    if arr.dtype.kind == "b":
        return failed(f"{name} is boolean; expected numbers.")
    if arr.dtype.kind not in "iuf":
        return failed(f"{name} has dtype {arr.dtype}; expected real numbers.")
    return arr.astype(np.float64)


def read_number(answer: object, name: str) -> float | CheckResult:
    """The answer as one finite real number, or a failed result saying why it is not one.

    Anything holding a single real value is accepted: a Python or NumPy number, a 0-d or
    one-element array, a one-element list, torch tensor or pandas Series.
    """
    missing = placeholder(answer, name)
    if missing is not None:
        return missing
    if isinstance(answer, (str, bytes)):
        return failed(f"{name} is text ({answer!r}); give a number, without quotes.")
    if isinstance(answer, (bool, np.bool_)):
        return failed(f"{name} is {answer}, a boolean; expected a number.")
    if isinstance(answer, numbers.Real):
        value = _real_as_float(answer)
        if value is None:
            return failed(f"{name} is too large to be a float (over 1.8e308); expected a number.")
        return _finite(value, name)
    arr = _as_numpy(answer)
    if arr is None:
        return failed(f"{name} is not a single number (got {type(answer).__name__}).")
    if arr.size != 1:
        return failed(f"{name} is not a single number: it holds {arr.size} values.")
    if arr.dtype == object:
        item = arr.reshape(()).item()
        if item is answer or not isinstance(item, numbers.Number):
            return failed(f"{name} is not a single number (got {type(answer).__name__}).")
        return read_number(item, name)
    if arr.dtype.kind == "b":
        return failed(f"{name} is a boolean; expected a number.")
    if arr.dtype.kind not in "iuf":
        return failed(f"{name} has dtype {arr.dtype}; expected a real number.")
    return read_number(arr.reshape(()).item(), name)


def _real_as_float(value: numbers.Real) -> float | None:
    """``float(value)``, or None for an integer or fraction too large for a float."""
    try:
        return float(value)
    except OverflowError:
        return None


def _finite(value: float, name: str) -> float | CheckResult:
    if math.isnan(value):
        return failed(f"{name} is NaN; expected a number. NaN comes from 0/0 or ∞ − ∞ somewhere before.")
    if math.isinf(value):
        return failed(f"{name} is infinite; expected a finite number (did something overflow?).")
    return value
