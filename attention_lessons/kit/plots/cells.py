"""How a number is written on a heatmap cell or above a bar."""

from __future__ import annotations

import math

from attnlib.validation import is_number

__all__ = ["MAX_DECIMALS", "SCIENTIFIC_FROM", "check_decimals", "format_cell"]

#: The most decimals a cell shows.
MAX_DECIMALS = 10
#: From this size on, a cell shows a number in scientific form (``1.00e+300``, not 301 digits).
SCIENTIFIC_FROM = 1e5
_MINUS = "−"  # U+2212, the minus sign of "−∞" and of every negative cell


def check_decimals(decimals: object) -> int:
    """Return ``decimals`` as an int from 0 to :data:`MAX_DECIMALS`, or raise ValueError."""
    if not is_number(decimals, whole=True):
        raise ValueError(f"decimals must be a whole number from 0 to {MAX_DECIMALS}, got {decimals!r}")
    if not 0 <= int(decimals) <= MAX_DECIMALS:
        raise ValueError(f"decimals must be from 0 to {MAX_DECIMALS}, got {decimals}")
    return int(decimals)


def format_cell(value: float, decimals: int = 2) -> str:
    """How a cell shows a value: fixed decimals, ``−∞`` for a masked (−inf) score.

    Negative numbers get a real minus sign (U+2212, as in ``−∞``): ``format_cell(-0.5)`` is
    ``"−0.50"``. A value that rounds to zero is ``"0.00"``, never ``"−0.00"``. From
    :data:`SCIENTIFIC_FROM` on, the value is written in scientific form with ``decimals``
    decimals: ``format_cell(1e300)`` is ``"1.00e+300"``.

    Parameters
    ----------
    value : float
        A real number or ``±inf``; NaN is an error.
    decimals : int
        From 0 to :data:`MAX_DECIMALS`.

    Returns
    -------
    str

    Examples
    --------
    >>> format_cell(1.28844), format_cell(-0.5), format_cell(-0.001), format_cell(float("-inf"))
    ('1.29', '−0.50', '0.00', '−∞')
    >>> format_cell(1e300), format_cell(-123456.0, decimals=1)
    ('1.00e+300', '−1.2e+05')
    """
    decimals = check_decimals(decimals)
    if not is_number(value):
        raise ValueError(f"value must be a real number, got {value!r}")
    number = float(value)
    if math.isnan(number):
        raise ValueError("value is NaN, which a cell cannot show as a number")
    if math.isinf(number):
        return _MINUS + "∞" if number < 0 else "∞"
    form = "e" if abs(number) >= SCIENTIFIC_FROM else "f"
    text = f"{abs(number):.{decimals}{form}}".replace("-", _MINUS)  # the exponent's minus too
    is_zero = form == "f" and text.strip("0.") == ""
    return _MINUS + text if number < 0 and not is_zero else text
