"""Self-checks of lesson 17, tokens: the learner writes byte-pair encoding as five plain Python
functions over lists of ints, and each check calls the learner's function on several cases of
real text and compares what it returns with :mod:`attnlib.tokens`'.

- :func:`check_pair_counts` and its table :data:`PAIR_COUNTS_MISTAKES`;
- :func:`check_merge` and :data:`MERGE_MISTAKES`;
- :func:`check_train` and :data:`TRAIN_MISTAKES`;
- :func:`check_encode` and :data:`ENCODE_MISTAKES`;
- :func:`check_decode` and :data:`DECODE_MISTAKES`;
- each check keeps the learner's function, when it passes, in the lesson's own dictionary
  (``keep=your_bpe``) under its name without ``my_`` (``"train"``), and takes it out when a later
  check of it fails: what the lesson then runs on the corpus.

The cases are short lines of Shakespeare, words whose characters take several bytes (``café``, an
emoji), runs of one letter (``aaaaa``, where pairs overlap), a training text where two pairs tie
and one where a merged pair must be counted again, and ids a model may generate that are no UTF-8.
Each row of a table *makes* its mistake on a case's inputs
(:class:`~attention_lessons.kit.checks.mistakes.Mistake`); when the learner's function returns what a
row returns, the check names that mistake. The right answers are never shown; a function that
raises, returns nothing, returns the wrong kind of thing or takes other arguments is told so in
one line.
"""

from __future__ import annotations

import numbers
import reprlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from functools import cache
from itertools import pairwise

import numpy as np

from attention_lessons.kit.checks.functions import FunctionExercise, Returns, a_type, judge_function
from attention_lessons.kit.checks.mistakes import Mistake
from attention_lessons.kit.checks.result import CheckResult, failed
from attnlib import tokens

__all__ = [
    "DECODE_MISTAKES",
    "ENCODE_MISTAKES",
    "MERGE_MISTAKES",
    "PAIR_COUNTS_MISTAKES",
    "TRAIN_MISTAKES",
    "FunctionExercise",
    "check_decode",
    "check_encode",
    "check_function",
    "check_merge",
    "check_pair_counts",
    "check_train",
]

Pair = tuple[int, int]

#: The cases' texts: public-domain lines (Shakespeare's Sonnet 18, Hamlet), multi-byte characters,
#: runs of one letter, and the text of Wikipedia's example of byte-pair encoding.
SONNET = "Shall I compare thee to a summer's day? Thou art more lovely and more temperate:"
HAMLET = "To be, or not to be, that is the question:"
MAY = "Rough winds do shake the darling buds of May,"
CAFE = "café crème, café noir, un café"
SMILE = "hi 🙂 🙂 hi 🙂🙂"
WIKIPEDIA = "aaabdaaabac"


#: What each kind of exercise returns, in words (:class:`FunctionExercise`'s ``kind``).
WHAT = {"counts": "pair counts", "ids": "token ids", "merges": "merges", "text": "text"}


# --- reading what the learner's function returned -------------------------------------------------


def _shown(value: object) -> str:
    return reprlib.repr(value)


def _whole(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_pair(value: object) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2 and all(_whole(t) for t in value)


def _as_list(returned: object, ex: FunctionExercise, fix: str) -> list | CheckResult:
    """``returned`` as a list when it is a list or tuple (or a 1-D array), else why not."""
    if isinstance(returned, (list, tuple)):
        return list(returned)
    if isinstance(returned, np.ndarray) and returned.ndim == 1:
        return returned.tolist()
    if isinstance(returned, Iterator):
        return failed(
            f"Not a list: {ex.name} returned {a_type(returned)} (an iterator, read once); "
            f"wrap it in list(...) and return {fix}."
        )
    return failed(f"Not a list: {ex.name} returned {a_type(returned)}; return {fix}.")


def _read_ids(returned: object, ex: FunctionExercise) -> list[int] | CheckResult:
    if isinstance(returned, str):
        return failed(
            f"Not token ids: {ex.name} returned text (a str); return a list of ints, one per token."
        )
    if isinstance(returned, (bytes, bytearray)):
        return failed(
            f"Not token ids: {ex.name} returned bytes; return a list of ints (list(data) gives a bytes "
            "object's ids), for tokens from 256 on are no single byte."
        )
    ids = _as_list(returned, ex, "a list of ints, one per token")
    if isinstance(ids, CheckResult):
        return ids
    for i, t in enumerate(ids):
        if not _whole(t):
            return failed(
                f"Not token ids: item {i} of what {ex.name} returned is {_shown(t)} "
                f"({type(t).__name__}); each token is one whole number."
            )
    return [int(t) for t in ids]


def _read_merges(returned: object, ex: FunctionExercise) -> list[Pair] | CheckResult:
    if isinstance(returned, Mapping):
        return failed(
            f"Not a list: {ex.name} returned a dict; the lesson's merges are a list of pairs in the "
            "order they were learned (token 256 + i is merges[i]): return list(merges) if the dict's "
            "keys are the pairs."
        )
    if isinstance(returned, (str, bytes, bytearray)):
        return failed(f"Not merges: {ex.name} returned {a_type(returned)}; return a list of pairs.")
    merges = _as_list(returned, ex, "a list of pairs (a, b), in the order learned")
    if isinstance(merges, CheckResult):
        return merges
    for i, pair in enumerate(merges):
        if _whole(pair):
            return failed(
                f"Not merges: {ex.name} returned a list of numbers; return the merges, each a pair "
                "(a, b) of the two token ids it joins, in the order learned."
            )
        if not _is_pair(pair):
            return failed(
                f"Not merges: item {i} of what {ex.name} returned is {_shown(pair)}, not a pair (a, b) "
                "of token ids."
            )
    return [(int(a), int(b)) for a, b in merges]


def _read_counts(returned: object, ex: FunctionExercise) -> dict[Pair, int] | CheckResult:
    if not isinstance(returned, Mapping):
        if isinstance(returned, (list, tuple)) and returned and all(_is_pair(p) for p in returned):
            return failed(
                f"Not counts: {ex.name} returned {a_type(returned)} of pairs; count them and "
                "return a dict from each pair to how often it occurs (a collections.Counter is a dict, "
                "and fine)."
            )
        if (
            isinstance(returned, (list, tuple)) and returned
            and all(isinstance(p, (tuple, list)) and len(p) == 2 and _is_pair(p[0]) for p in returned)
        ):  # fmt: skip
            return failed(
                f"Not a dict: {ex.name} returned {a_type(returned)} of (pair, count), as "
                "Counter.most_common() gives; return the dict (or the Counter) itself."
            )
        return failed(
            f"Not a dict: {ex.name} returned {a_type(returned)}; return a dict from each pair "
            "(a, b) to how often it occurs (a collections.Counter is fine)."
        )
    counts = {}
    for pair, count in returned.items():
        if not (isinstance(pair, tuple) and _is_pair(pair)):
            return failed(
                f"Not pair counts: {ex.name}'s dict has the key {_shown(pair)}; each key is a pair "
                "(a, b) of adjacent ids, a tuple."
            )
        if not _whole(count):
            return failed(
                f"Not pair counts: {ex.name}'s dict gives the pair {pair} the count {_shown(count)}; "
                "each count is a whole number."
            )
        counts[int(pair[0]), int(pair[1])] = int(count)
    return counts


def _read_text(returned: object, ex: FunctionExercise) -> str | CheckResult:
    if isinstance(returned, str):
        return returned
    if isinstance(returned, (bytes, bytearray)):
        return failed(
            f"Not text: {ex.name} returned bytes; return a str: decode the joined bytes once, "
            'data.decode("utf-8", errors="replace").'
        )
    if isinstance(returned, (list, tuple)):
        return failed(
            f"Not text: {ex.name} returned {a_type(returned)}; return one str: join the "
            'tokens\' bytes into one bytes object, then decode it once, errors="replace".'
        )
    return failed(f"Not text: {ex.name} returned {a_type(returned)}; return a str.")


READERS: dict[str, Callable[[object, FunctionExercise], object]] = {
    "counts": _read_counts,
    "ids": _read_ids,
    "merges": _read_merges,
    "text": _read_text,
}


# --- calling the learner's function and comparing ---------------------------------------------------


def _hint(error: Exception) -> str:
    """A hint for an error a learner's BPE commonly raises, or ``""``."""
    text = str(error)
    if isinstance(error, UnicodeDecodeError):
        return (
            "; a token's bytes need not be UTF-8 on their own (a character's bytes may be split "
            "between tokens, a model may generate any byte): join all the bytes, then decode once with "
            'errors="replace"'
        )
    if isinstance(error, KeyError) and len(error.args) == 1:
        return f"; a dict of yours has no key {_shown(error.args[0])}"
    if isinstance(error, ValueError) and "empty" in text and ("min(" in text or "max(" in text):
        return "; a text of fewer than two tokens has no pairs: stop when fewer than two tokens are left"
    return ""


def _difference(learner: object, ex: FunctionExercise) -> str:
    """Where the learner's answer first differs from attnlib's, without showing attnlib's."""
    if ex.kind == "counts":
        right: dict = ex.right  # type: ignore[assignment]
        for pair in sorted(set(right) | set(learner)):  # type: ignore[arg-type]
            if pair not in learner:
                return f"the pair {pair} is missing from {ex.name}'s counts"
            if pair not in right:
                return f"{ex.name} counts the pair {pair}, which is no adjacent pair of these ids"
            if learner[pair] != right[pair]:  # type: ignore[index]
                return f"{ex.name}'s count of the pair {pair} is off"
        return f"{ex.name}'s counts differ from attnlib's"
    if ex.kind == "merges" and len(learner) != ex.args[1]:  # type: ignore[arg-type]
        return f"{ex.args[1]} merges were asked for; {ex.name} returned {len(learner)}"  # type: ignore[arg-type]
    first = next(
        (i for i, (a, b) in enumerate(zip(learner, ex.right, strict=False)) if a != b),  # type: ignore[call-overload]
        min(len(learner), len(ex.right)),  # type: ignore[arg-type]
    )
    unit = {"ids": "token", "merges": "merge", "text": "character"}[ex.kind]
    return f"{ex.name}'s {WHAT[ex.kind]} differ from attnlib's from {unit} {first} on (counted from 0)"


#: How each kind of answer is read, compared (exactly) and told apart.
RETURNS = {kind: Returns(kind, WHAT[kind], read, differ=_difference) for kind, read in READERS.items()}


def check_function(
    answer: object,
    cases: Sequence[FunctionExercise],
    mistakes: Sequence[Mistake[FunctionExercise]],
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Call the learner's function on each case and compare what it returns with ``case.right``.

    The kit's :func:`~attention_lessons.kit.checks.functions.judge_function`, with this lesson's
    readers (:data:`READERS`), comparing exactly, and its hints for the errors a BPE raises.

    Parameters
    ----------
    answer : callable
        The learner's function.
    cases : sequence of FunctionExercise
        The inputs and attnlib's answers.
    mistakes : sequence of Mistake
        The table whose rows make the likely mistakes on a case.
    keep : dict, optional
        The lesson's record of the learner's functions that passed: the function is put in it
        under its name without ``my_`` (``my_train`` under ``"train"``) when it passes, and taken
        out when it fails (the learner has changed it since), so that the lesson never runs a
        function whose last check failed.

    Returns
    -------
    CheckResult
        Passed when the function returns attnlib's answer, exactly, on every case; otherwise, for
        the first case that fails: the arguments it does not take, the error it raised, what is
        wrong with the kind of thing it returned, the mistake of the table that returns the same,
        or where its answer first differs.
    """
    return judge_function(answer, cases, mistakes, RETURNS[cases[0].kind], keep=keep, hint=_hint)


# --- the steps, made right and wrong ---------------------------------------------------------------


def _bytes(text: str) -> list[int]:
    return list(text.encode("utf-8"))


def _chars(text: str) -> list[int]:
    """The mistake of working on characters: one id per code point, ``ord(c)``."""
    return [ord(c) for c in text]


def _counts(ids: Sequence[int], how: str = "right") -> dict[Pair, int]:
    """Adjacent pair counts, in the order each pair is first seen: right, or with a mistake."""
    pairs = list(pairwise(ids))
    if how == "non-overlapping":  # each pair's occurrences counted as bytes.count counts: no overlaps
        return {p: len(ids) - len(tokens.merge(ids, p, -1)) for p in dict.fromkeys(pairs)}
    if how == "step 2":
        return dict(Counter(pairs[0::2]))
    if how == "last missing":
        return dict(Counter(pairs[:-1]))
    if how == "presence":
        return dict.fromkeys(pairs, 1)
    return dict(Counter(pairs))


def _merge(ids: Sequence[int], pair: Pair, new_id: int, how: str = "right") -> list[int]:
    """``ids`` with ``pair`` replaced by ``new_id``: right (left to right, never overlapping), or with
    a mistake."""
    match = lambda i: i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]  # noqa: E731
    if how == "no skip":  # a for loop: the pair's second token is read again, and kept
        return [new_id if match(i) else t for i, t in enumerate(ids)]
    if how == "overlapping":  # every match found first, then replaced from the end
        out = list(ids)
        for i in reversed([i for i in range(len(ids)) if match(i)]):
            out[i : i + 2] = [new_id]
        return out
    if how == "from the right":
        return tokens.merge(list(ids)[::-1], pair[::-1], new_id)[::-1]
    if how == "first only":
        at = next((i for i in range(len(ids)) if match(i)), None)
        return list(ids) if at is None else [*ids[:at], new_id, *ids[at + 2 :]]
    out, i = [], 0
    while i < len(ids) - (how == "drop last"):
        if match(i) or (how == "first token" and ids[i] == pair[0] and i + 1 < len(ids)):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _train(
    ids: list[int],
    n_merges: int,
    *,
    recount: bool = True,
    tie: str = "smaller",
    base: int = 256,
    counting: str = "right",
    merging: str = "right",
) -> list[Pair]:
    """Training by recounting after each merge (as the learner writes it), right or with a mistake."""
    if not recount:  # the n most frequent pairs of the first count
        counts = _counts(ids, counting)
        if tie == "first":
            return sorted(counts, key=counts.__getitem__, reverse=True)[:n_merges]  # stable: first seen first
        return sorted(counts, key=lambda p: (-counts[p], p))[:n_merges]
    merges: list[Pair] = []
    for i in range(n_merges):
        counts = _counts(ids, counting)
        if not counts:
            break
        if tie == "first":
            pair = max(counts, key=counts.__getitem__)
        elif tie == "larger":
            pair = max(counts, key=lambda p: (counts[p], p))
        else:
            pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        ids = _merge(ids, pair, base + i, merging)
    return merges


def _encode(
    ids: list[int], merges: Sequence[Pair], *, order: str = "rank", base: int = 256, merging: str = "right"
) -> list[int]:
    """Encoding with learned merges: the lowest-rank pair present first, or with a mistake."""
    rank = {pair: i for i, pair in enumerate(merges)}
    if order in ("reverse", "list"):
        for i in reversed(range(len(merges))) if order == "reverse" else range(len(merges)):
            ids = _merge(ids, merges[i], base + i, merging)
        return ids
    if order == "stop at absent":  # in list order, stopping at the first merge whose pair is not there
        for i, pair in enumerate(merges):
            if pair not in set(pairwise(ids)):
                break
            ids = _merge(ids, pair, base + i, merging)
        return ids
    for _ in range(len(merges) + 1):
        counts = Counter(pairwise(ids))
        present = [pair for pair in counts if pair in rank]
        if not present:
            break
        pair = (
            max(present, key=counts.__getitem__)
            if order == "frequent"
            else min(present, key=rank.__getitem__)
        )
        ids = _merge(ids, pair, base + rank[pair], merging)
        if order == "once":
            break
    return ids


def _longest_match(text: str, merges: Sequence[Pair]) -> list[int]:
    """The mistake of matching, at each place, the longest token of the vocabulary (not BPE)."""
    vocab = tokens.vocabulary(merges)
    index: dict[bytes, int] = {}
    for t, piece in enumerate(vocab):
        index.setdefault(piece, t)
    data = text.encode("utf-8")
    longest = max(len(piece) for piece in vocab)
    out, i = [], 0
    while i < len(data):
        size = next(k for k in range(min(longest, len(data) - i), 0, -1) if data[i : i + k] in index)
        out.append(index[data[i : i + size]])
        i += size
    return out


def _decode(ids: Sequence[int], merges: Sequence[Pair], how: str) -> str:
    """Decoding with a mistake: each token alone, bytes as characters, bad bytes dropped, ids as
    characters."""
    vocab = tokens.vocabulary(merges)
    if how == "ids as characters":
        return "".join(chr(t) for t in ids if 0 <= t <= 0x10FFFF)
    if how == "each token":
        return "".join(vocab[t].decode("utf-8", errors="replace") for t in ids)
    data = b"".join(vocab[t] for t in ids)
    return data.decode("latin-1") if how == "latin-1" else data.decode("utf-8", errors="ignore")


# --- count the pairs ---------------------------------------------------------------------------------

#: What a learner's pair counts may be instead of every adjacent pair, overlapping ones too.
PAIR_COUNTS_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You counted only non-overlapping occurrences of each pair",
        "count every adjacent pair, (ids[i], ids[i + 1]) for each i: overlapping pairs each count "
        '("aaa" holds the pair (a, a) twice), as zip(ids, ids[1:]) gives them.',
        lambda ex: _counts(ex.args[0], "non-overlapping"),
    ),
    Mistake(
        "You stepped two at a time, counting (ids[0], ids[1]), (ids[2], ids[3]), …",
        "every position starts a pair: (ids[i], ids[i + 1]) for i = 0, 1, 2, …, as zip(ids, ids[1:]) "
        "gives them.",
        lambda ex: _counts(ex.args[0], "step 2"),
    ),
    Mistake(
        "You left out the last pair",
        "n ids hold n − 1 adjacent pairs: i runs over range(len(ids) - 1), the last pair being "
        "(ids[-2], ids[-1]).",
        lambda ex: _counts(ex.args[0], "last missing"),
    ),
    Mistake(
        "You recorded which pairs occur, not how often",
        "add 1 to a pair's count each time it occurs: counts[pair] = counts.get(pair, 0) + 1.",
        lambda ex: _counts(ex.args[0], "presence"),
    ),
)


def check_pair_counts(answer: object, *, keep: MutableMapping[str, Callable] | None = None) -> CheckResult:
    """Check the learner's ``pair_counts(ids)`` against :func:`attnlib.tokens.pair_counts`.

    Parameters
    ----------
    answer : callable
        ``answer(ids)`` → a dict (a ``Counter`` is one) from each adjacent pair ``(a, b)`` of the
        list of ints ``ids`` to how often it occurs.
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    return check_function(answer, _pair_counts_cases(), PAIR_COUNTS_MISTAKES, keep)


@cache
def _pair_counts_cases() -> tuple[FunctionExercise, ...]:
    inputs = [
        (_bytes(WIKIPEDIA), f'the bytes of "{WIKIPEDIA}"', f'"{WIKIPEDIA}"'),
        (_bytes(SONNET), f'the bytes of a line of Shakespeare ("{SONNET[:39]}")', "Shakespeare"),
        (_bytes("café"), 'the bytes of "café" (é is two bytes)', '"café"'),
        ([256, 97, 256, 256, 256, 98], "ids after a merge, [256, 97, 256, 256, 256, 98]", "ids from 256 on"),
        ([104], "a single id, [104]", "a single id"),
    ]
    return tuple(
        FunctionExercise(
            "my_pair_counts", "ids", "counts", (ids,), dict(tokens.pair_counts(ids)), case, label
        )
        for ids, case, label in inputs
    )


# --- merge a pair ------------------------------------------------------------------------------------


def _merge_wrong(how: str) -> Callable[[FunctionExercise], list[int]]:
    return lambda ex: _merge(*ex.args, how=how)


#: What a learner's merge may return instead of every occurrence replaced, left to right, without overlaps.
MERGE_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "After a match you did not skip the pair's second token",
        "when ids[i], ids[i + 1] is the pair, append new_id and move on by two (i += 2): both tokens "
        "become the one new token; a for loop over i cannot skip, a while loop can.",
        _merge_wrong("no skip"),
    ),
    Mistake(
        "You merged overlapping pairs twice",
        'occurrences of the pair never overlap: in "aaa" the pair (a, a) is merged once, the first two '
        "a's, and the third a stays; replace them left to right, moving on by two after each.",
        _merge_wrong("overlapping"),
    ),
    Mistake(
        "You merged from right to left",
        'where occurrences overlap ("aaa"), the leftmost is merged: go from the start of the list.',
        _merge_wrong("from the right"),
    ),
    Mistake(
        "You replaced only the first occurrence",
        "replace every occurrence of the pair, going on through the list after each.",
        _merge_wrong("first only"),
    ),
    Mistake(
        "You checked only the pair's first token",
        "merge only where ids[i] == pair[0] and ids[i + 1] == pair[1].",
        _merge_wrong("first token"),
    ),
    Mistake(
        "You dropped the last token",
        "a loop while i < len(ids) - 1 never reaches the last token when it is not part of a pair: "
        "loop while i < len(ids), and test i + 1 < len(ids) before reading ids[i + 1].",
        _merge_wrong("drop last"),
    ),
)


def check_merge(answer: object, *, keep: MutableMapping[str, Callable] | None = None) -> CheckResult:
    """Check the learner's ``merge(ids, pair, new_id)`` against :func:`attnlib.tokens.merge`.

    Parameters
    ----------
    answer : callable
        ``answer(ids, pair, new_id)`` → a new list of ints, every occurrence of ``pair`` replaced by
        ``new_id``, left to right, never overlapping.
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    return check_function(answer, _merge_cases(), MERGE_MISTAKES, keep)


@cache
def _merge_cases() -> tuple[FunctionExercise, ...]:
    inputs = [
        (_bytes(WIKIPEDIA), (97, 97), 256, f'"{WIKIPEDIA}" with the pair (97, 97), "aa"', f'"{WIKIPEDIA}"'),
        (_bytes("aaaaa"), (97, 97), 256, '"aaaaa" with the pair (97, 97)', '"aaaaa"'),
        (_bytes(HAMLET), (101, 32), 256,
         f'a line of Shakespeare ("{HAMLET}") with the pair (101, 32), "e "', "Shakespeare"),
        ([256, 97, 98, 256, 97, 99], (256, 97), 257,
         "the ids [256, 97, 98, 256, 97, 99] with the pair (256, 97)", "ids from 256 on"),
        (_bytes("café au lait"), (101, 32), 256,
         '"café au lait", which does not hold the pair (101, 32)', "a pair that is not there"),
    ]  # fmt: skip
    return tuple(
        FunctionExercise(
            "my_merge", "ids, pair, new_id", "ids", (ids, pair, new_id), tokens.merge(ids, pair, new_id),
            f"{case}, new_id {new_id}", label,
        )
        for ids, pair, new_id, case, label in inputs
    )  # fmt: skip


# --- train -------------------------------------------------------------------------------------------


def _train_wrong(*, chars: bool = False, **how: object) -> Callable[[FunctionExercise], list[Pair]]:
    def wrong(ex: FunctionExercise) -> list[Pair]:
        text, n_merges = ex.args
        return _train((_chars if chars else _bytes)(text), n_merges, **how)  # type: ignore[arg-type]

    return wrong


_RECOUNT = (
    "after each merge the list of ids has changed (the merged pairs are gone, new pairs with the new "
    "token appeared): count the pairs again, and take the most frequent of the new count."
)
_TIE = (
    "of pairs equally frequent, take the smaller pair, min(counts, key=lambda p: (-counts[p], p)), as "
    "attnlib does."
)
_NEW_ID = "the first merge makes token 256 (bytes are 0 … 255), merge i makes token 256 + i."

#: What a learner's training may return instead of attnlib's merges (no pre-tokenization).
TRAIN_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You did not count the pairs again after each merge (these are the top pairs of the first count)",
        _RECOUNT,
        _train_wrong(recount=False),
    ),
    Mistake(
        "You did not count the pairs again after each merge (these are the top pairs of the first count)",
        _RECOUNT,
        _train_wrong(recount=False, tie="first"),
    ),
    Mistake(
        "Where two pairs tie, you took the one seen first (max(counts, key=counts.get))",
        _TIE,
        _train_wrong(tie="first"),
    ),
    Mistake("Where two pairs tie, you took the larger pair", _TIE, _train_wrong(tie="larger")),
    Mistake(
        "You trained on characters (ord(c)), not on UTF-8 bytes",
        'start from list(text.encode("utf-8")): a character such as é or an emoji is several bytes, and '
        "a code point over 255 collides with the new tokens' ids.",
        _train_wrong(chars=True),
    ),
    Mistake("Your new tokens are numbered from 257", _NEW_ID, _train_wrong(base=257)),
    Mistake("Your new tokens are numbered from 255", _NEW_ID, _train_wrong(base=255)),
    Mistake(
        "Your merge did not skip the pair's second token after a match",
        "merging turns both tokens of the pair into one: move on by two after a match (check my_merge "
        "with check_merge).",
        _train_wrong(merging="no skip"),
    ),
    Mistake(
        "Your merge merged overlapping pairs twice",
        'in "aaa" the pair (a, a) is merged once: replace left to right, moving on by two after each '
        "match (check my_merge with check_merge).",
        _train_wrong(merging="overlapping"),
    ),
    Mistake(
        "You counted only non-overlapping pairs",
        'overlapping pairs each count ("aaaa" holds (a, a) three times): count every (ids[i], ids[i + 1]).',
        _train_wrong(counting="non-overlapping"),
    ),
)


def check_train(answer: object, *, keep: MutableMapping[str, Callable] | None = None) -> CheckResult:
    """Check the learner's ``train(text, n_merges)`` against :func:`attnlib.tokens.train` (no cut).

    Parameters
    ----------
    answer : callable
        ``answer(text, n_merges)`` → the list of ``n_merges`` merges ``(a, b)`` in the order
        learned, from the UTF-8 bytes of the whole text, counting the pairs again after each merge
        and taking the most frequent (of pairs equally frequent, the smaller).
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    return check_function(answer, _train_cases(), TRAIN_MISTAKES, keep)


@cache
def _train_cases() -> tuple[FunctionExercise, ...]:
    inputs = [
        (WIKIPEDIA, 3, f'"{WIKIPEDIA}", 3 merges (pairs tie, and a merged pair is counted again)',
         "a tie and a pair counted again"),
        (SONNET, 12, f'a line of Shakespeare ("{SONNET[:39]} …"), 12 merges', "Shakespeare"),
        (CAFE, 8, f'"{CAFE}", 8 merges (é is two bytes)', "é's two bytes"),
        (SMILE, 5, f'"{SMILE}", 5 merges (the emoji is four bytes)', "an emoji's four"),
        ("Ahhh, ah ah", 2, '"Ahhh, ah ah", 2 merges (pairs overlap in "hhh")', "overlapping pairs"),
    ]  # fmt: skip
    return tuple(
        FunctionExercise(
            "my_train", "text, n_merges", "merges", (text, n), tokens.train(text, n), case, label
        )
        for text, n, case, label in inputs
    )


# --- encode ------------------------------------------------------------------------------------------


def _encode_wrong(*, chars: bool = False, **how: object) -> Callable[[FunctionExercise], list[int]]:
    def wrong(ex: FunctionExercise) -> list[int]:
        text, merges = ex.args
        return _encode((_chars if chars else _bytes)(text), merges, **how)  # type: ignore[arg-type]

    return wrong


_BY_RANK = (
    "Repeatedly merge, of the pairs present that have a merge, the one learned first (the lowest "
    "index in merges), until no pair present has one."
)
_by_rank = _BY_RANK[:1].lower() + _BY_RANK[1:]

#: What a learner's encoding may return instead of attnlib's (no pre-tokenization).
ENCODE_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You encoded characters (ord(c)), not UTF-8 bytes",
        'start from list(text.encode("utf-8")), the ids the merges were learned on: é is two bytes, '
        "an emoji four.",
        _encode_wrong(chars=True),
    ),
    Mistake(
        "You applied the merges in reverse order",
        "a merge may join tokens that earlier merges made: apply them in the order learned. " + _BY_RANK,
        _encode_wrong(order="reverse"),
    ),
    Mistake(
        "You merged the pair most frequent in this text first",
        "the order is training's, not this text's: " + _by_rank,
        _encode_wrong(order="frequent"),
    ),
    Mistake("You applied one merge and stopped", _by_rank, _encode_wrong(order="once")),
    Mistake(
        "You stopped at the first merge whose pair is not in the text",
        "a later merge may still apply: skip a merge whose pair is absent and go on. " + _BY_RANK,
        _encode_wrong(order="stop at absent"),
    ),
    Mistake(
        "You matched the longest token at each place (that is not BPE)",
        "BPE does not search the vocabulary: it replays the merges on the bytes. " + _BY_RANK,
        lambda ex: _longest_match(*ex.args),
    ),
    Mistake("Your new tokens are numbered from 257", _NEW_ID, _encode_wrong(base=257)),
    Mistake("Your new tokens are numbered from 255", _NEW_ID, _encode_wrong(base=255)),
    Mistake(
        "Your merge did not skip the pair's second token after a match",
        "merging turns both tokens of the pair into one: move on by two after a match (check my_merge "
        "with check_merge).",
        _encode_wrong(merging="no skip"),
    ),
    Mistake(
        "Your merge merged overlapping pairs twice",
        'in "aaa" the pair (a, a) is merged once: replace left to right, moving on by two after each '
        "match (check my_merge with check_merge).",
        _encode_wrong(merging="overlapping"),
    ),
)


def check_encode(answer: object, *, keep: MutableMapping[str, Callable] | None = None) -> CheckResult:
    """Check the learner's ``encode(text, merges)`` against :func:`attnlib.tokens.encode` (no cut).

    Parameters
    ----------
    answer : callable
        ``answer(text, merges)`` → the list of token ids: the text's UTF-8 bytes, then, again and
        again, the pair present of lowest rank merged, until no pair present has a merge.
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    return check_function(answer, _encode_cases(), ENCODE_MISTAKES, keep)


@cache
def _encode_cases() -> tuple[FunctionExercise, ...]:
    sonnet = tokens.train(SONNET, 30)
    inputs = [
        (SONNET[:39], sonnet,
         f'a line of Shakespeare ("{SONNET[:39]}") with 30 merges learned from its sonnet', "Shakespeare"),
        (MAY, sonnet, f'a line not trained on ("{MAY}") with the same merges', "a line not trained on"),
        ("un café noir", tokens.train(CAFE, 8),
         f'"un café noir" with 8 merges learned from "{CAFE}"', '"un café noir"'),
        ("hi 🙂🙂", tokens.train(SMILE, 5), f'"hi 🙂🙂" with 5 merges learned from "{SMILE}"', "an emoji"),
        ("aaaa", tokens.train("aaaaaaaa", 2),
         '"aaaa" with 2 merges learned from "aaaaaaaa"', '"aaaa"'),
        ("ab ab abcab", [(98, 99), (97, 98)],
         '"ab ab abcab" with the merges [(98, 99), (97, 98)], "bc" then "ab"', "merges that compete"),
    ]  # fmt: skip
    return tuple(
        FunctionExercise(
            "my_encode", "text, merges", "ids", (text, merges), tokens.encode(text, merges), case, label
        )
        for text, merges, case, label in inputs
    )


# --- decode ------------------------------------------------------------------------------------------


def _decode_wrong(how: str) -> Callable[[FunctionExercise], str]:
    return lambda ex: _decode(*ex.args, how=how)


#: What a learner's decoding may return instead of the tokens' bytes joined and read as UTF-8 once.
DECODE_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You decoded each token on its own",
        "a character's bytes may be split between two tokens, and neither half is UTF-8 alone: join "
        'all the tokens\' bytes first, then decode once, errors="replace".',
        _decode_wrong("each token"),
    ),
    Mistake(
        "You turned each byte into a character (chr(b), Latin-1), not read the bytes as UTF-8",
        'é is two bytes and one character: b"".join(...).decode("utf-8", errors="replace").',
        _decode_wrong("latin-1"),
    ),
    Mistake(
        'You dropped the bytes that are no UTF-8 (errors="ignore")',
        'a model may generate bytes that are no UTF-8: errors="replace" shows each as U+FFFD (�), so '
        "the reader sees that something is there.",
        _decode_wrong("ignore"),
    ),
    Mistake(
        "You turned each id into a character (chr(id))",
        "an id names a token whose bytes the merges give: build the vocabulary (256 single bytes, then "
        "merges[i]'s two tokens' bytes joined as token 256 + i), join the ids' bytes, decode once.",
        _decode_wrong("ids as characters"),
    ),
)


def check_decode(answer: object, *, keep: MutableMapping[str, Callable] | None = None) -> CheckResult:
    """Check the learner's ``decode(ids, merges)`` against :func:`attnlib.tokens.decode`.

    Parameters
    ----------
    answer : callable
        ``answer(ids, merges)`` → the text (a ``str``): the tokens' bytes joined, then read as UTF-8
        once with ``errors="replace"``.
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    return check_function(answer, _decode_cases(), DECODE_MISTAKES, keep)


@cache
def _decode_cases() -> tuple[FunctionExercise, ...]:
    sonnet = tokens.train(SONNET, 30)
    split_e = [(99, 97), (256, 102), (257, 195)]  # "ca", "caf", "caf" + é's first byte
    split_smile = [(104, 105), (240, 159)]  # "hi", the emoji's first two bytes
    inputs = [
        (tokens.encode(HAMLET, sonnet), sonnet, f'the ids of "{HAMLET}" with 30 merges learned from a sonnet',
         "Shakespeare"),
        (tokens.encode("café", split_e), split_e, 'the ids of "café" with the merges [(99, 97), (256, 102), '
         "(257, 195)]: é's two bytes in two tokens", "é split between tokens"),
        (tokens.encode("hi 🙂", split_smile), split_smile, 'the ids of "hi 🙂" with the merges [(104, 105), '
         "(240, 159)]: the emoji's four bytes in three tokens", "an emoji split"),
        ([104, 105, 32, 169], [], "the ids [104, 105, 32, 169], no merges: the last byte is no UTF-8, "
         "as a model may generate", "a byte that is no UTF-8"),
    ]  # fmt: skip
    return tuple(
        FunctionExercise(
            "my_decode", "ids, merges", "text", (ids, merges), tokens.decode(ids, merges), case, label
        )
        for ids, merges, case, label in inputs
    )
