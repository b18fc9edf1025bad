"""Self-checks of lesson 15, generating text: the KV cache's size, the scores a new token computes
with a cache, and what grouped-query attention shares.

- :func:`check_kv_cache_bytes` and its table :data:`CACHE_MISTAKES`;
- :func:`check_cached_scores` and its table :data:`CACHED_SCORES_MISTAKES`;
- :func:`check_kv_head_of_query_heads` and :func:`check_query_heads_of_kv_head`, with their tables
  :data:`KV_HEAD_MISTAKES` and :data:`GROUP_MISTAKES` (in
  :mod:`~attention_lessons.l15_generating_text.grouping_checks`, read from here).

Each check recomputes the right answer with attnlib (:func:`attnlib.counting.kv_cache_bytes`,
:func:`attnlib.core.causal_mask`, the grouping of :func:`attnlib.multihead.multi_head_attention`)
and names the likely mistake, each row of a table making its mistake on the exercise's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_lessons.kit.checks.answers import as_plain, placeholder
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.values import number_verdict
from attention_lessons.kit.checks.wording import numpy_index, shape_text
from attention_lessons.l15_generating_text.grouping_checks import (
    GROUP_MISTAKES,
    KV_HEAD_MISTAKES,
    Grouping,
    check_kv_head_of_query_heads,
    check_query_heads_of_kv_head,
)
from attnlib.core import causal_mask
from attnlib.counting import DecoderShape, kv_cache_bytes
from attnlib.validation import as_positive_int

__all__ = [
    "CACHED_SCORES_MISTAKES",
    "CACHE_MISTAKES",
    "GROUP_MISTAKES",
    "KV_HEAD_MISTAKES",
    "UNITS",
    "CacheExercise",
    "CachedScores",
    "Grouping",
    "check_cached_scores",
    "check_kv_cache_bytes",
    "check_kv_head_of_query_heads",
    "check_query_heads_of_kv_head",
]

#: The units :func:`check_kv_cache_bytes` asks in, and the power of 1024 of each.
UNITS = {"bytes": 0, "KiB": 1, "MiB": 2, "GiB": 3}
_DECIMAL_UNITS = {"KiB": "kB", "MiB": "MB", "GiB": "GB"}


# --- the KV cache's size ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CacheExercise:
    """The exercise: the keys and values a decoder of ``shape`` keeps for ``n_tokens`` tokens."""

    shape: DecoderShape
    n_tokens: int
    bytes_per_number: int
    batch: int
    unit: str

    def size(
        self, *, factor: int = 2, heads: int | None = None, layers: int | None = None, **change: int
    ) -> float:
        """The cache in the exercise's unit, with one part of the formula changed (a mistake).

        ``factor`` replaces the 2 of keys and values, ``heads`` the number of key/value heads,
        ``layers`` the number of layers; ``tokens``, ``itemsize``, ``batch`` and ``per`` (the
        divisor of the unit) the rest.
        """
        s = self.shape
        numbers_ = (
            factor
            * (s.n_layers if layers is None else layers)
            * (s.n_kv_heads if heads is None else heads)
            * s.d_head
            * change.get("tokens", self.n_tokens)
            * change.get("batch", self.batch)
        )
        return (
            numbers_
            * change.get("itemsize", self.bytes_per_number)
            / change.get("per", 1024 ** UNITS[self.unit])
        )

    @property
    def dtype(self) -> str:
        return {1: "int8", 2: "float16 or bfloat16", 4: "float32", 8: "float64"}.get(
            self.bytes_per_number, f"{self.bytes_per_number}-byte numbers"
        )

    @property
    def decimal_unit(self) -> str:
        return _DECIMAL_UNITS.get(self.unit, "")


def _other_itemsize(itemsize: int) -> Mistake[CacheExercise]:
    return Mistake(
        f"You counted {itemsize} bytes per number",
        "this cache stores {ex.dtype}, {ex.bytes_per_number} bytes per number.",
        lambda ex: ex.size(itemsize=itemsize) if ex.bytes_per_number != itemsize else None,
    )


#: The wrong sizes of the KV cache, in the exercise's unit.
CACHE_MISTAKES: tuple[Mistake[CacheExercise], ...] = (
    Mistake(
        "You forgot the factor 2",
        "the cache keeps a key *and* a value for every token, layer and key/value head.",
        lambda ex: ex.size(factor=1),
    ),
    Mistake(
        "You used n_heads instead of n_kv_heads",
        "with grouped-query attention only the key/value heads are cached: {ex.shape.n_kv_heads} per "
        "layer here, shared by {ex.shape.n_heads} query heads.",
        lambda ex: ex.size(heads=ex.shape.n_heads) if ex.shape.n_heads != ex.shape.n_kv_heads else None,
    ),
    Mistake(
        "You multiplied by d_model instead of n_kv_heads · d_head",
        "each key/value head keeps d_head numbers per token for keys and as many for values; there "
        "are n_kv_heads of them per layer.",
        lambda ex: (
            ex.size(heads=ex.shape.d_model / ex.shape.d_head)
            if ex.shape.d_model != ex.shape.n_kv_heads * ex.shape.d_head
            else None
        ),
    ),
    Mistake(
        "You forgot the heads",
        "d_head is the width of one key/value head; every layer keeps n_kv_heads of them.",
        lambda ex: ex.size(heads=1) if ex.shape.n_kv_heads > 1 else None,
    ),
    Mistake(
        "You forgot the layers",
        "every layer has its own keys and values, so the cache grows with n_layers.",
        lambda ex: ex.size(layers=1) if ex.shape.n_layers > 1 else None,
    ),
    Mistake(
        "You gave the cache of one token, not of the whole context",
        "multiply by the number of tokens kept: every token in the context has its keys and values.",
        lambda ex: ex.size(tokens=1) if ex.n_tokens > 1 else None,
    ),
    Mistake(
        "You left out the batch",
        "every sequence of the batch keeps its own cache.",
        lambda ex: ex.size(batch=1) if ex.batch > 1 else None,
    ),
    Mistake(
        "You counted bits, not bytes",
        "a number here takes {ex.bytes_per_number} bytes (8 bits each); count bytes.",
        lambda ex: ex.size() * 8,
    ),
    _other_itemsize(2),
    _other_itemsize(4),
    _other_itemsize(8),
    Mistake(
        "You gave bytes, not {ex.unit}",
        "divide the bytes by 1024 for each step from bytes to {ex.unit}.",
        lambda ex: ex.size(per=1) if ex.unit != "bytes" else None,
    ),
    Mistake(
        "You divided by powers of 1000 ({ex.decimal_unit}) instead of 1024 ({ex.unit})",
        "a KiB is 1024 bytes, a MiB 1024² and a GiB 1024³ = 1,073,741,824 bytes.",
        lambda ex: ex.size(per=1000 ** UNITS[ex.unit]) if ex.unit != "bytes" else None,
    ),
)


def check_kv_cache_bytes(
    answer: object,
    shape: DecoderShape,
    n_tokens: int,
    *,
    bytes_per_number: int,
    batch: int = 1,
    unit: str = "bytes",
    decimals: int = 2,
) -> CheckResult:
    """Check the size of the KV cache a decoder keeps for ``n_tokens`` tokens.

    Parameters
    ----------
    answer : float
        The learner's size, in ``unit``.
    shape : attnlib.counting.DecoderShape
        The decoder (``n_layers``, ``n_kv_heads``, ``d_head`` matter; ``n_heads`` and ``d_model``
        give mistakes).
    n_tokens : int
        Tokens in the context.
    bytes_per_number : int
        2 for float16/bfloat16, 4 for float32, 8 for float64.
    batch : int
    unit : {"bytes", "KiB", "MiB", "GiB"}
    decimals : int
        Decimals asked, compared by :func:`attention_lessons.kit.checks.values.number_verdict`'s rule.

    Returns
    -------
    CheckResult
        Passed; or the mistake of :data:`CACHE_MISTAKES` (the factor 2, n_heads for n_kv_heads,
        d_model, the heads, the layers, one token, the batch, bits, the bytes per number, the unit);
        the right size is never shown.
    """
    if not isinstance(shape, DecoderShape):
        raise TypeError(f"shape must be a DecoderShape, got {type(shape).__name__}")
    if not isinstance(unit, str) or unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    ex = CacheExercise(
        shape,
        as_positive_int(n_tokens, "n_tokens"),
        as_positive_int(bytes_per_number, "bytes_per_number"),
        as_positive_int(batch, "batch"),
        unit,
    )
    right_bytes = kv_cache_bytes(shape, ex.n_tokens, bytes_per_number=ex.bytes_per_number, batch=ex.batch)
    try:
        right = right_bytes / 1024 ** UNITS[unit]
        mistakes = []
        for mistake in CACHE_MISTAKES:
            wrong = mistake.wrong(ex)
            if wrong is not None:
                mistakes.append((mistake.message(ex), float(wrong)))
    except OverflowError:
        raise ValueError(
            f"this cache takes {right_bytes:,} bytes, more than a float can hold: take a smaller exercise"
        ) from None
    return number_verdict(answer, right, decimals=decimals, name=f"the KV cache in {unit}", mistakes=mistakes)


# --- the scores a new token computes with a cache ----------------------------------------------------


@dataclass(frozen=True)
class CachedScores:
    """The exercise: token ``t`` arrives, the last of ``t``; which of the ``t × t`` scores does it compute?

    ``window`` and ``sinks`` as in :func:`attnlib.core.causal_mask`.
    """

    t: int
    window: int | None
    sinks: int

    @property
    def visible(self) -> np.ndarray:
        """The causal mask of the ``t`` tokens, with the window and sinks, ``(t, t)``."""
        return causal_mask(self.t, window=self.window, sinks=self.sinks)

    def last_row(self, row: np.ndarray) -> np.ndarray:
        """A ``(t, t)`` pattern with ``row`` as its last row and nothing else."""
        grid = np.zeros((self.t, self.t), dtype=bool)
        grid[-1] = row
        return grid

    @property
    def right(self) -> np.ndarray:
        return self.last_row(self.visible[-1])


def _last_column(ex: CachedScores) -> np.ndarray:
    grid = np.zeros((ex.t, ex.t), dtype=bool)
    grid[:, -1] = True
    return grid


def _first_row(ex: CachedScores) -> np.ndarray:
    grid = np.zeros((ex.t, ex.t), dtype=bool)
    grid[0] = ex.visible[-1]
    return grid


def _without_itself(ex: CachedScores) -> np.ndarray:
    grid = ex.right.copy()
    grid[-1, -1] = False
    return grid


def _only_itself(ex: CachedScores) -> np.ndarray:
    grid = np.zeros((ex.t, ex.t), dtype=bool)
    grid[-1, -1] = True
    return grid


def _windowed(ex: CachedScores, window: int | None, sinks: int) -> np.ndarray | None:
    if window is not None and window < 1:
        return None
    return ex.last_row(causal_mask(ex.t, window=window, sinks=sinks)[-1])


#: The wrong sets of scores a new token computes with a cache; ``wrong`` gives a (t, t) pattern.
CACHED_SCORES_MISTAKES: tuple[Mistake[CachedScores], ...] = (
    Mistake(
        "That is the whole t × t matrix",
        "the earlier tokens' scores were computed at their own steps and are never needed again; "
        "with a cache only the new token's query is scored.",
        lambda ex: np.ones((ex.t, ex.t), dtype=bool),
    ),
    Mistake(
        "That is the whole causal pass",
        "without a cache every step recomputes all t rows of the triangle; with one, the earlier "
        "queries are done, and only the new query's row is computed.",
        lambda ex: ex.visible,
    ),
    Mistake(
        "That is a column, the new key against every query",
        "the earlier queries were answered at their own steps; the new token's *query* is scored "
        "against the keys in the cache, which makes a row.",
        _last_column,
    ),
    Mistake(
        "That adds the last column",
        "the earlier queries do not come back to look at the new key (they cannot see the future "
        "and were answered already); only the new query's row is computed.",
        lambda ex: ex.right | _last_column(ex),
    ),
    Mistake(
        "The new token's own score is missing",
        "its key and value are added to the cache before it attends, and a query sees its own key: "
        "the last score of the row is computed too.",
        _without_itself,
    ),
    Mistake(
        "Only the new token's own score",
        "the new query is scored against every key it may see in the cache, not only its own.",
        _only_itself,
    ),
    Mistake(
        "That is the first row",
        "rows are queries in order: the new token is the last one, row t − 1 (numpy index -1).",
        _first_row,
    ),
    Mistake(
        "The window is ignored",
        "with a sliding window of {ex.window} the new query sees only its {ex.window} latest keys "
        "(and the sinks); the older scores are not computed.",
        lambda ex: _windowed(ex, None, 0) if ex.window is not None else None,
    ),
    Mistake(
        "The sinks are missing",
        "the first {ex.sinks} keys stay visible to every query, whatever the window.",
        lambda ex: _windowed(ex, ex.window, 0) if ex.sinks else None,
    ),
    Mistake(
        "The window is one key too wide",
        "a window of {ex.window} counts the new token itself: keys t − {ex.window} … t − 1.",
        lambda ex: _windowed(ex, ex.window + 1, ex.sinks) if ex.window is not None else None,
    ),
    Mistake(
        "The window is one key too narrow",
        "a window of {ex.window} holds {ex.window} keys, the new token's own included.",
        lambda ex: _windowed(ex, ex.window - 1, ex.sinks) if ex.window is not None else None,
    ),
)


def check_cached_scores(
    answer: object, n_tokens: int, *, window: int | None = None, sinks: int = 0
) -> CheckResult:
    """Check which scores the newest of ``n_tokens`` tokens computes when a KV cache holds the others.

    Parameters
    ----------
    answer : array_like of bool (or 0/1), shape (n_tokens, n_tokens)
        The score matrix of all the tokens, rows = queries, columns = keys, in order: ``True``
        (or 1) for each score computed at the new token's step, ``False`` (or 0) elsewhere.
    n_tokens : int
        ``t``: the tokens so far, the new one included.
    window, sinks : optional
        A sliding window and attention sinks, as in :func:`attnlib.core.causal_mask`.

    Returns
    -------
    CheckResult
        Passed; or the mistake of :data:`CACHED_SCORES_MISTAKES` (the whole matrix, the causal
        triangle, a column, row and column, its own score missing or alone, the first row, the
        window or sinks ignored, the window off by one), a wrong shape, or the first wrong entry.
    """
    t = as_positive_int(n_tokens, "n_tokens")
    width = None if window is None else as_positive_int(window, "window")
    ex = CachedScores(t, width, as_positive_int(sinks, "sinks", minimum=0))
    read = _read_pattern(answer, "the answer")
    if isinstance(read, CheckResult):
        return read
    right = ex.right
    if read.shape == right.shape and np.array_equal(read, right):
        seen = int(right.sum())
        return passed(
            f"Correct: with a cache the new token computes one row, its query against the {seen} "
            f"key{'s' if seen > 1 else ''} it may see, in every layer and head."
        )
    found = matching(
        CACHED_SCORES_MISTAKES,
        ex,
        lambda wrong: (
            isinstance(wrong, np.ndarray)
            and wrong.shape == read.shape
            and np.array_equal(wrong, read)
            and not np.array_equal(wrong, right)
        ),
    )
    if found:
        return failed(describe("Not yet", found, ex))
    if read.shape != right.shape:
        return failed(
            f"Wrong shape: mark the scores in the t × t matrix of all t = {t} tokens, one row per query "
            f"and one column per key; yours is {shape_text(read.shape)}."
        )
    i, j = (int(x) for x in np.argwhere(read != right)[0])
    return failed(f"Not yet: look again at query {i + 1}, key {j + 1} (numpy index {numpy_index((i, j))}).")


def _read_pattern(answer: object, name: str) -> np.ndarray | CheckResult:
    """A 2-D answer of booleans or 0/1 as a boolean array, or a failed result saying why it is not one."""
    missing = placeholder(answer, name)
    if missing is not None:
        return missing
    if isinstance(answer, (str, bytes)):
        return failed(
            f"{name} is text ({answer!r}); give a boolean array, e.g. np.zeros((t, t), dtype=bool)."
        )
    try:
        arr = np.asarray(as_plain(answer))
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return failed(f"{name} is ragged: its rows have different lengths.")
    if arr.dtype.kind not in "biuf":
        return failed(f"{name} has dtype {arr.dtype}; give booleans (True = computed) or 0 and 1.")
    if arr.ndim != 2:
        return failed(
            f"{name} has {arr.ndim} ax{'is' if arr.ndim == 1 else 'es'} (shape {shape_text(arr.shape)}); "
            "mark them in the 2-D score matrix, one row per query and one column per key."
        )
    if arr.dtype == bool:
        return arr
    values = arr.astype(np.float64)
    if np.isnan(values).any():
        return failed(f"{name} has NaN entries; give booleans (True = computed) or 0 and 1.")
    if not np.isin(values, (0.0, 1.0)).all():
        i, j = (int(x) for x in np.argwhere(~np.isin(values, (0.0, 1.0)))[0])
        return failed(
            f"Entry {numpy_index((i, j))} of {name} is {values[i, j]:g}; mark each score with True or 1 "
            "(computed) and False or 0 (not computed)."
        )
    return values == 1
