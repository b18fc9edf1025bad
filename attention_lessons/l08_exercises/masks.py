"""Check masks written by hand: :func:`check_causal_mask`, :func:`check_padding_mask`.

A mask is read as the pattern of keys each query may attend to, whatever its form: boolean
(``True`` = may attend, attnlib's and ``F.scaled_dot_product_attention``'s convention) or additive
(``0`` = keep, ``−∞`` = hide). Each row of a mask table gives the pattern that a mistake produces
(transposed, inverted, the diagonal left out, padding at the wrong end, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from attention_lessons.kit.checks.answers import as_plain, placeholder
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import numpy_index, shape_text
from attnlib.core import causal_mask
from attnlib.validation import as_positive_int

__all__ = [
    "CAUSAL_MISTAKES",
    "PADDING_MISTAKES",
    "MaskExercise",
    "check_causal_mask",
    "check_padding_mask",
]

PYTORCH_NOTE = (
    " Careful with PyTorch: F.scaled_dot_product_attention uses True = may attend too, but the boolean "
    "masks of nn.MultiheadAttention and nn.Transformer (and key_padding_mask) use the opposite, "
    "True = hidden (~mask turns one into the other)."
)


@dataclass(frozen=True)
class MaskExercise:
    """A mask exercise: which keys each query may attend to, and how the learner wrote the mask.

    Attributes
    ----------
    allowed : numpy.ndarray of bool
        ``True`` where attending is allowed: ``(n, n)`` for a causal mask, ``(batch, n_k)`` for a
        key padding mask.
    lengths : tuple of int
        The real length of each sentence (padding masks only).
    yes, no : str
        How the learner's mask writes "may attend" and "hidden": ``True``/``False``, ``0``/``−∞``
        or ``1``/``0``.
    """

    allowed: np.ndarray
    lengths: tuple[int, ...] = ()
    yes: str = "True"
    no: str = "False"

    @property
    def pytorch_note(self) -> str:
        """PyTorch's two boolean conventions, for a boolean mask."""
        return PYTORCH_NOTE if self.yes == "True" else ""


@dataclass(frozen=True)
class MaskKind:
    """A kind of mask: what it is called, its axes, and what the right one means."""

    called: str
    axes: str
    rows: str
    columns: str
    meaning: str


CAUSAL = MaskKind(
    "a causal mask",
    "(n, n)",
    "query token",
    "key token",
    "each token may attend to itself and the tokens before it",
)
KEY_PADDING = MaskKind(
    "a key padding mask",
    "(batch, n_k)",
    "sentence",
    "position",
    "every query may attend to the real tokens and to none of the padding",
)


def _shifted_padding(ex: MaskExercise, by: int) -> np.ndarray | None:
    lengths = np.array(ex.lengths) + by
    if np.any(lengths < 0) or np.any(lengths > ex.allowed.shape[-1]):
        return None
    return np.arange(ex.allowed.shape[-1]) < lengths[:, np.newaxis]


def _padded_at_the_front(ex: MaskExercise) -> np.ndarray:
    n_k = ex.allowed.shape[-1]
    return np.arange(n_k) >= n_k - np.array(ex.lengths)[:, np.newaxis]


#: The mistakes :func:`check_causal_mask` recognises; ``wrong`` gives the pattern of kept entries.
CAUSAL_MISTAKES: tuple[Mistake[MaskExercise], ...] = (
    Mistake(
        "Upper-triangular",
        "your mask lets each token see the tokens after it and hides the earlier ones. Causal means "
        "looking back: each token sees itself and the tokens before it.",
        lambda ex: ex.allowed.T,
    ),
    Mistake(
        "The diagonal is missing",
        "each token may attend to itself too (otherwise the first token sees nothing at all).",
        lambda ex: np.tri(len(ex.allowed), k=-1, dtype=bool),
    ),
    Mistake(
        "Inverted",
        "your {ex.yes} marks the hidden entries, but in attnlib {ex.yes} means may attend.{ex.pytorch_note}",
        lambda ex: ~ex.allowed,
    ),
    Mistake(
        "Nothing is hidden",
        "a causal mask hides from each token the tokens that come after it.",
        lambda ex: np.ones_like(ex.allowed),
    ),
)

#: The mistakes :func:`check_padding_mask` recognises; ``wrong`` gives the pattern of kept keys.
PADDING_MISTAKES: tuple[Mistake[MaskExercise], ...] = (
    Mistake(
        "Inverted",
        "your {ex.yes} marks the padding, but in attnlib {ex.yes} "
        "means a real token, which may be attended to.{ex.pytorch_note}",
        lambda ex: ~ex.allowed,
    ),
    Mistake(
        "Transposed",
        "a key padding mask has one row per sentence and one column per key position.",
        lambda ex: ex.allowed.T,
    ),
    Mistake(
        "Padding at the front",
        "these sentences are padded at the end: the real tokens come first, then the padding.",
        _padded_at_the_front,
    ),
    Mistake(
        "One real token too few in each sentence",
        "positions count from 0, so a sentence of length L fills positions 0 … L − 1.",
        lambda ex: _shifted_padding(ex, -1),
    ),
    Mistake(
        "One position too many in each sentence",
        "positions count from 0, so a sentence of length L fills positions 0 … L − 1, and position L "
        "is already padding.",
        lambda ex: _shifted_padding(ex, +1),
    ),
    Mistake(
        "Nothing is hidden",
        "the padding positions must be hidden from every query.",
        lambda ex: np.ones_like(ex.allowed),
    ),
)


def check_causal_mask(answer: object, n: int) -> CheckResult:
    """Check a causal mask for ``n`` tokens: boolean (``True`` = may attend) or additive (0 / −∞).

    Parameters
    ----------
    answer : array_like, shape (n, n)
        Boolean: ``True`` where query token ``i`` may attend to key token ``j``. Or float, added
        to the scores: ``0`` to keep, ``-inf`` to hide (a finite number so negative that ``exp``
        gives exactly 0 is accepted too, with a note).
    n : int
        Number of tokens (queries = keys).

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`CAUSAL_MISTAKES` (upper-triangular, the diagonal missing,
        inverted, nothing hidden), 1/0 instead of 0/−∞, a wrong shape, or the first wrong entry.
        The right mask is never shown.
    """
    size = as_positive_int(n, "n")
    exercise = MaskExercise(allowed=causal_mask(size))
    return _mask_verdict(answer, exercise, CAUSAL_MISTAKES, CAUSAL)


def check_padding_mask(answer: object, lengths: Sequence[int], n_k: int | None = None) -> CheckResult:
    """Check a key padding mask for a batch of sentences of different lengths, padded at the end.

    Parameters
    ----------
    answer : array_like, shape (batch, n_k)
        Boolean: ``True`` for a real token (may be attended to), ``False`` for padding. Or
        additive: ``0`` for a real token, ``-inf`` for padding.
    lengths : sequence of int
        The real length of each sentence, ``len(lengths) = batch``.
    n_k : int, optional
        The padded length; by default the longest sentence's.

    Returns
    -------
    CheckResult
        Passed, or a mistake of :data:`PADDING_MISTAKES` (inverted, as PyTorch's
        ``key_padding_mask``; transposed; padding at the front; off by one; nothing hidden), a
        wrong shape, or the first wrong entry. The right mask is never shown.
    """
    if (
        isinstance(lengths, (str, bytes))
        or not isinstance(lengths, (Sequence, np.ndarray))
        or len(lengths) == 0
    ):
        raise TypeError(
            f"lengths must be a non-empty sequence of whole numbers, such as [3, 5], got {lengths!r}"
        )
    real = tuple(as_positive_int(length, "each entry of lengths", minimum=0) for length in lengths)
    width = max(real) if n_k is None else as_positive_int(n_k, "n_k")
    if max(real) > width:
        raise ValueError(f"every length must be at most n_k = {width}, got lengths {list(real)}")
    allowed = np.arange(width) < np.array(real)[:, np.newaxis]
    exercise = MaskExercise(allowed=allowed, lengths=real)
    return _mask_verdict(answer, exercise, PADDING_MISTAKES, KEY_PADDING)


def _mask_verdict(
    answer: object, exercise: MaskExercise, table: Sequence[Mistake[MaskExercise]], kind: MaskKind
) -> CheckResult:
    """Read the mask, then: right, a mistake of the table, a wrong shape, or the first wrong entry."""
    read = _read_mask(answer)
    if isinstance(read, CheckResult):
        return read
    keep, form, note = read
    allowed = exercise.allowed

    def fits(wrong: object) -> bool:
        assert isinstance(wrong, np.ndarray)
        return (
            wrong.shape == keep.shape
            and np.array_equal(wrong, keep)
            and not (wrong.shape == allowed.shape and np.array_equal(wrong, allowed))
        )

    if form == "1/0":
        if keep.shape == allowed.shape and np.array_equal(keep, allowed):
            return failed(
                "1/0 instead of 0/−∞: as an additive mask, adding 1 or 0 to the scores hides nothing. Make "
                "it boolean (answer == 1) or use 0 to keep and −∞ to hide: np.where(answer == 1, 0, -np.inf)."
            )
        if keep.shape == allowed.shape and np.array_equal(keep, ~allowed):
            return failed(
                "1 marks the hidden entries, but added to the scores 1 hides nothing: use −∞ instead of 1, "
                "np.where(answer == 1, -np.inf, 0)."
            )
        exercise = replace(exercise, yes="1", no="0")
        lead = "A 0/1 mask is not additive: use booleans (True = may attend) or 0 / −∞."
    elif form == "additive":
        exercise = replace(exercise, yes="0", no="−∞")
        lead = ""
    else:
        lead = ""

    if keep.shape == allowed.shape and np.array_equal(keep, allowed):
        if form == "boolean":
            return passed(f"Correct: {kind.called} as a boolean mask (True = may attend): {kind.meaning}.")
        return passed(
            f"Correct: {kind.called} as an additive mask (0 = keep, −∞ = hide): {kind.meaning}.{note}"
        )
    found = matching(table, exercise, fits)
    if found:
        text = describe("", found, exercise)
        return failed(f"{lead} {text}" if lead else text)
    if keep.shape != allowed.shape:
        return failed(
            f"Wrong shape: {kind.called} has shape {kind.axes}, one row per {kind.rows} and one column per "
            f"{kind.columns}; yours is {shape_text(keep.shape)}."
        )
    i, j = (int(x) for x in np.argwhere(keep != allowed)[0])
    prefix = f"{lead} " if lead else ""
    return failed(
        f"{prefix}Not yet: look again at {kind.rows} {i + 1}, {kind.columns} {j + 1} (numpy index "
        f"{numpy_index((i, j))})."
    )


def _read_mask(answer: object) -> tuple[np.ndarray, str, str] | CheckResult:
    """The learner's mask as ``(kept entries, form, note)``; form is boolean, additive or 1/0."""
    missing = placeholder(answer, "the mask")
    if missing is not None:
        return missing
    if isinstance(answer, (str, bytes)):
        return failed(f"The mask is text ({answer!r}); give an array.")
    try:
        arr = np.asarray(as_plain(answer))
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return failed("The mask is ragged: its rows have different lengths.")
    if arr.dtype.kind not in "biuf":
        return failed(f"The mask has dtype {arr.dtype}; use booleans (True = may attend) or 0 / −∞.")
    if arr.ndim != 2:
        axes = "axis" if arr.ndim == 1 else "axes"
        return failed(f"The mask has {arr.ndim} {axes} (shape {shape_text(arr.shape)}); a mask here has 2.")
    if arr.dtype == bool:
        return arr, "boolean", ""
    values = arr.astype(np.float64)
    if np.isnan(values).any():
        return failed("The mask has NaN entries: use 0 to keep a key and −∞ (-np.inf) to hide it.")
    if np.isposinf(values).any():
        return failed("The mask has +∞ entries: +∞ would swamp the softmax. Use 0 to keep and −∞ to hide.")
    with np.errstate(over="ignore", under="ignore"):
        hidden = np.exp(values) == 0  # -inf, or so negative that exp gives exactly 0
    kept = values == 0
    if (kept | hidden).all():
        note = ""
        if hidden.any() and not np.isneginf(values[hidden]).all():
            worst = float(values[hidden].max())
            note = f" {worst:g} acts as −∞ here (exp({worst:g}) is 0 in float64); -np.inf says it exactly."
        return kept, "additive", note
    if np.isin(values, (0.0, 1.0)).all():
        return values == 1, "1/0", ""
    i, j = (int(x) for x in np.argwhere(~(kept | hidden))[0])
    return failed(
        f"Entry {numpy_index((i, j))} of the mask is {values[i, j]:g}, but an additive mask holds only 0 "
        f"(keep) and −∞ (hide): exp({values[i, j]:g}) is not 0, so that key would still get some weight."
    )
