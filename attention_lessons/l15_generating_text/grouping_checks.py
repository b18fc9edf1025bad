"""Self-checks of lesson 15's grouped-query attention: which key/value head a query head reads,
and which query heads share one (:func:`check_kv_head_of_query_heads`,
:func:`check_query_heads_of_kv_head`, with their tables :data:`KV_HEAD_MISTAKES` and
:data:`GROUP_MISTAKES`). The lesson reads them from :mod:`attention_lessons.l15_generating_text.checks`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from attention_lessons.kit.checks.answers import as_plain, placeholder
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import shape_text
from attnlib.validation import as_positive_int

__all__ = [
    "GROUP_MISTAKES",
    "KV_HEAD_MISTAKES",
    "Grouping",
    "check_kv_head_of_query_heads",
    "check_query_heads_of_kv_head",
]


# --- what grouped-query attention shares ---------------------------------------------------------


@dataclass(frozen=True)
class Grouping:
    """The exercise: ``n_heads`` query heads share ``n_kv_heads`` key/value heads.

    ``kv_head`` is the key/value head asked about, where one is.
    """

    n_heads: int
    n_kv_heads: int
    kv_head: int = 0

    @property
    def group(self) -> int:
        """Query heads per key/value head, ``n_heads / n_kv_heads``."""
        return self.n_heads // self.n_kv_heads

    def reads(self, rule: object) -> tuple[int, ...]:
        """The key/value head of each query head under ``rule(h)``."""
        return tuple(int(rule(h)) for h in range(self.n_heads))  # type: ignore[operator]

    @property
    def right(self) -> tuple[int, ...]:
        return self.reads(lambda h: h // self.group)

    def heads_of(self, kv_of: tuple[int, ...]) -> frozenset[int]:
        """The query heads that read key/value head ``kv_head`` under the mapping ``kv_of``."""
        return frozenset(h for h, g in enumerate(kv_of) if g == self.kv_head)


#: Wrong key/value heads of each query head: ``wrong`` gives the tuple a learner would write.
KV_HEAD_MISTAKES: tuple[Mistake[Grouping], ...] = (
    Mistake(
        "Interleaved: that is h % n_kv_heads",
        "the query heads are grouped in runs of consecutive heads, not dealt out in turn: the first "
        "n_heads / n_kv_heads query heads share key/value head 0, the next ones head 1, and so on.",
        lambda ex: ex.reads(lambda h: h % ex.n_kv_heads),
    ),
    Mistake(
        "That is h // n_kv_heads",
        "divide by the size of a group, n_heads / n_kv_heads = {ex.group} query heads per key/value "
        "head, not by the number of key/value heads.",
        lambda ex: ex.reads(lambda h: h // ex.n_kv_heads),
    ),
    Mistake(
        "That is each query head's place in its group (h % group)",
        "the key/value head is the number of the group, h // (n_heads / n_kv_heads), not the place in it.",
        lambda ex: ex.reads(lambda h: h % ex.group),
    ),
    Mistake(
        "Each query head reads its own key/value head",
        "that is plain multi-head attention; here {ex.n_heads} query heads share {ex.n_kv_heads} "
        "key/value heads, {ex.group} per group.",
        lambda ex: ex.reads(lambda h: h),
    ),
    Mistake(
        "Every query head reads key/value head 0",
        "that is multi-query attention (one key/value head); here there are {ex.n_kv_heads}.",
        lambda ex: ex.reads(lambda h: 0),
    ),
    Mistake(
        "You counted the heads from 1",
        "heads count from 0 here, as numpy indexes them.",
        lambda ex: ex.reads(lambda h: h // ex.group + 1),
    ),
)

#: Wrong sets of query heads that read key/value head ``kv_head``.
GROUP_MISTAKES: tuple[Mistake[Grouping], ...] = (
    Mistake(
        "Interleaved: every n_kv_heads-th query head",
        "the query heads are grouped in runs: key/value head g serves a run of consecutive query heads "
        "(n_heads / n_kv_heads of them), not every n_kv_heads-th one.",
        lambda ex: frozenset(range(ex.kv_head, ex.n_heads, ex.n_kv_heads)),
    ),
    Mistake(
        "Groups of n_kv_heads query heads",
        "a group holds n_heads / n_kv_heads = {ex.group} query heads, not n_kv_heads of them.",
        lambda ex: frozenset(range(ex.kv_head * ex.n_kv_heads, (ex.kv_head + 1) * ex.n_kv_heads)),
    ),
    Mistake(
        "One query head too many",
        "a group holds n_heads / n_kv_heads query heads; count again where it ends.",
        lambda ex: frozenset(range(ex.kv_head * ex.group, (ex.kv_head + 1) * ex.group + 1)) - {ex.n_heads},
    ),
    Mistake(
        "You counted the heads from 1",
        "heads count from 0 here, as numpy indexes them.",
        lambda ex: frozenset(h + 1 for h in ex.heads_of(ex.right)),
    ),
    Mistake(
        "Only query head g",
        "that is plain multi-head attention; here every key/value head serves {ex.group} query heads.",
        lambda ex: frozenset({ex.kv_head}),
    ),
    Mistake(
        "Every query head",
        "that is multi-query attention (one key/value head for all); here there are {ex.n_kv_heads}.",
        lambda ex: frozenset(range(ex.n_heads)),
    ),
)


def _grouping(n_heads: object, n_kv_heads: object, kv_head: object = 0) -> Grouping:
    heads, kv = as_positive_int(n_heads, "n_heads"), as_positive_int(n_kv_heads, "n_kv_heads")
    if heads % kv:
        raise ValueError(
            f"n_kv_heads={kv} does not divide n_heads={heads}: each key/value head must serve the same "
            "number of query heads"
        )
    g = as_positive_int(kv_head, "kv_head", minimum=0)
    if g >= kv:
        raise ValueError(f"kv_head must be a key/value head from 0 to {kv - 1}, got {g}")
    return Grouping(heads, kv, g)


def _read_heads(answer: object, what: str) -> tuple[int, ...] | CheckResult:
    """A sequence of whole numbers (head numbers), or a failed result saying why the answer is not one."""
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    answer = as_plain(answer)
    if isinstance(answer, (str, bytes)) or isinstance(answer, numbers.Number):
        return failed(f"Give {what} as a list of whole numbers, such as [0, 1]; got {answer!r}.")
    try:
        arr = np.asarray(list(answer) if isinstance(answer, (set, frozenset)) else answer)
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return failed(f"Give {what} as a flat list of whole numbers; yours is ragged.")
    if arr.ndim != 1:
        return failed(
            f"Give {what} as a flat list of whole numbers; yours has shape {shape_text(arr.shape)}."
        )
    if arr.dtype.kind == "b":
        return failed(f"Give {what} as head numbers (whole numbers), not booleans.")
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            return failed(f"{what[:1].upper() + what[1:]} holds NaN; give whole numbers.")
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            return failed(f"{what[:1].upper() + what[1:]} must be whole numbers; got {arr.tolist()}.")
    elif arr.dtype.kind not in "iu":
        return failed(f"Give {what} as whole numbers; got {answer!r}.")
    return tuple(int(v) for v in arr.tolist())


def check_kv_head_of_query_heads(answer: object, n_heads: int, n_kv_heads: int) -> CheckResult:
    """Check which key/value head each query head reads in grouped-query attention.

    Parameters
    ----------
    answer : sequence of int, length n_heads
        Entry ``h``: the key/value head that query head ``h`` reads, from 0.
    n_heads, n_kv_heads : int
        ``n_kv_heads`` divides ``n_heads``.

    Returns
    -------
    CheckResult
        Passed; or the mistake of :data:`KV_HEAD_MISTAKES` (interleaved ``h % n_kv_heads``,
        ``h // n_kv_heads``, the place in the group, one each, all on head 0, counted from 1), a
        wrong length, a head that does not exist, or the first wrong query head.
    """
    ex = _grouping(n_heads, n_kv_heads)
    given = _read_heads(answer, "the key/value head of each query head")
    if isinstance(given, CheckResult):
        return given
    right = ex.right
    if given == right:
        return passed(
            f"Correct: the {ex.n_heads} query heads form {ex.n_kv_heads} group"
            f"{'s' if ex.n_kv_heads > 1 else ''} of {ex.group} consecutive heads; query head h reads "
            f"key/value head h // {ex.group}."
        )
    found = matching(KV_HEAD_MISTAKES, ex, lambda wrong: wrong == given and wrong != right)
    if found:
        return failed(describe("Not yet", found, ex))
    if len(given) != ex.n_heads:
        return failed(
            f"Give one key/value head for each of the {ex.n_heads} query heads; you gave {len(given)}."
        )
    outside = [g for g in given if not 0 <= g < ex.n_kv_heads]
    if outside:
        return failed(
            f"Key/value head {outside[0]} does not exist: there are {ex.n_kv_heads}, numbered 0 to "
            f"{ex.n_kv_heads - 1}."
        )
    h = next(h for h in range(ex.n_heads) if given[h] != right[h])
    return failed(f"Not yet: look again at query head {h} (which group of {ex.group} is it in?).")


def check_query_heads_of_kv_head(answer: object, n_heads: int, n_kv_heads: int, kv_head: int) -> CheckResult:
    """Check which query heads read key/value head ``kv_head`` in grouped-query attention.

    Parameters
    ----------
    answer : collection of int
        The query heads, from 0, in any order (a list, a set, a range, an array).
    n_heads, n_kv_heads : int
        ``n_kv_heads`` divides ``n_heads``.
    kv_head : int
        The key/value head asked about, from 0.

    Returns
    -------
    CheckResult
        Passed; or the mistake of :data:`GROUP_MISTAKES` (interleaved, groups of ``n_kv_heads``, one
        too many, counted from 1, only head ``g``, every head), a head that does not exist, a head
        named twice, or which heads are missing or extra.
    """
    ex = _grouping(n_heads, n_kv_heads, kv_head)
    read = _read_heads(answer, f"the query heads that read key/value head {ex.kv_head}")
    if isinstance(read, CheckResult):
        return read
    given = frozenset(read)
    if len(given) != len(read):
        return failed(f"You named a query head more than once: {sorted(read)}.")
    right = ex.heads_of(ex.right)
    if given == right:
        first = ex.kv_head * ex.group
        if ex.group == 1:
            return passed(
                f"Correct: with one query head per key/value head, only query head {first} reads it."
            )
        return passed(
            f"Correct: key/value head {ex.kv_head} serves the {ex.group} query heads "
            f"{first} … {first + ex.group - 1}."
        )
    found = matching(GROUP_MISTAKES, ex, lambda wrong: wrong == given and wrong != right)
    if found:
        return failed(describe("Not yet", found, ex))
    outside = sorted(h for h in given if not 0 <= h < ex.n_heads)
    if outside:
        return failed(
            f"Query head {outside[0]} does not exist: there are {ex.n_heads}, numbered 0 to {ex.n_heads - 1}."
        )
    missing, extra = len(right - given), len(given - right)
    return failed(
        f"Not yet: {missing} query head{'s' if missing != 1 else ''} missing and {extra} too many; a group "
        f"is {ex.group} consecutive query heads."
    )
