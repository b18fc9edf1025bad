"""Byte-pair encoding: how text becomes the token ids a model attends over.

Lesson 17. Text is UTF-8 bytes (256 base tokens, so any text encodes); training learns merges, the
most frequent adjacent pair first, each a new token; encoding applies the learned merges to new
text in the order they were learned. One merge in plain Python, the same as :func:`train`'s first:

>>> ids = list("aaab".encode("utf-8"))                      # [97, 97, 97, 98]
>>> counts = {}
>>> for pair in pairwise(ids):
...     counts[pair] = counts.get(pair, 0) + 1
>>> top = max(counts, key=counts.get)                       # (97, 97), seen twice (they overlap)
>>> top, counts[top]
((97, 97), 2)
>>> merge(ids, top, 256)                                    # left to right, never overlapping
[256, 97, 98]
>>> train("aaab", 1)
[(97, 97)]
>>> encode("aaaa", [(97, 97)]), decode([256, 256], [(97, 97)])
([256, 256], 'aaaa')

Real tokenizers first cut text into pieces with a regular expression (:func:`pretokenize`) so that
no token spans a word and the space before the next; :meth:`Tokenizer.from_gguf` reads a model's
own merges and cut, and gives the ids its production tokenizer gives. The functions check their
arguments once; :class:`Tokenizer`'s methods trust what its constructors checked.
"""

from __future__ import annotations

import heapq
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from typing import Any

from attnlib.validation import as_positive_int, is_number

__all__ = [
    "GPT2_PATTERN",
    "RULES",
    "Tokenizer",
    "decode",
    "encode",
    "merge",
    "pair_counts",
    "pretokenize",
    "train",
    "utf8",
    "vocabulary",
]

#: GPT-2's pre-tokenizer (also SmolLM2's, Llama 2's and many more): contractions, a word with the
#: space before it, a number, other symbols with their space, whitespace. Written with Unicode's
#: classes (``\p{L}`` letters, ``\p{N}`` numbers); :func:`pretokenize` compiles it for Python's re.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

#: The pre-tokenizers :func:`pretokenize` knows: ``None`` (no cut), ``"gpt2"`` (:data:`GPT2_PATTERN`)
#: and ``"smollm"`` (llama.cpp's rule for SmolLM2: each number character alone, then GPT-2's).
RULES = (None, "gpt2", "smollm")

#: A GGUF's ``tokenizer.ggml.pre`` → the rule :func:`pretokenize` applies.
GGUF_RULES = {"gpt2": "gpt2", "gpt-2": "gpt2", "default": "gpt2", "smollm": "smollm"}

#: GGUF token types whose text is matched whole, never cut or merged (control, user-defined).
SPECIAL_TYPES = (3, 4)


# ---------------------------------------------------------------------------------------------
# The learner's four steps: bytes, pair counts, one merge, training


def utf8(text: object, name: str = "text") -> bytes:
    """The UTF-8 bytes of ``text``: a ``str`` of Unicode characters (not bytes, not a lone surrogate).

    Lesson 17 · 1. Text is bytes.
    """
    if not isinstance(text, str):
        hint = " (decode bytes first: data.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"{name} must be a str{hint}, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ValueError(
            f"{name} holds a lone surrogate U+{ord(bad):04X} at index {exc.start}: half of a UTF-16 pair, "
            "not a character, and UTF-8 cannot encode it"
        ) from None


def pair_counts(
    ids: Sequence[int], counts: Counter[tuple[int, int]] | None = None
) -> Counter[tuple[int, int]]:
    """How often each adjacent pair of ids occurs (overlapping pairs each count: ``aaa`` has two).

    Lesson 17 · 2. Write BPE: count the pairs. ``counts`` is added to when given (one count over
    many pieces).
    """
    counts = Counter() if counts is None else counts
    counts.update(pairwise(ids))
    return counts


def merge(ids: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """``ids`` with every occurrence of ``pair`` replaced by ``new_id``, left to right, never overlapping.

    Lesson 17 · 2. Write BPE: merge the pair. ``merge([97, 97, 97], (97, 97), 256)`` is ``[256, 97]``.
    """
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train(text: str, n_merges: int, *, rule: str | None = None) -> list[tuple[int, int]]:
    """Learn ``n_merges`` merges from ``text``: the most frequent adjacent pair each time.

    Lesson 17 · 2. Write BPE (``rule=None``) and 3. Train on Shakespeare (``rule="gpt2"``).

    Parameters
    ----------
    text : str
        The training text (not empty).
    n_merges : int
        How many merges to learn; fewer come back if every piece becomes one token first.
    rule : None, "gpt2" or "smollm"
        The pre-tokenizer (:func:`pretokenize`): merges never cross the pieces it cuts.

    Returns
    -------
    list of (int, int)
        The merges in the order learned: token ``256 + i`` is ``merges[i]``'s two tokens joined.
        Of pairs equally frequent, the smaller pair of ids is merged first.

    Notes
    -----
    The counts are kept up to date, not recounted: a merge changes only the pieces that hold its
    pair, so each merge costs the pieces it touches, not the whole text (a heap keeps the most
    frequent pair on top). With no cut the one piece is the whole text, and each merge costs about
    what recounting it does.
    """
    data = utf8(text)
    if not data:
        raise ValueError("text is empty: there is nothing to learn merges from")
    n_merges = as_positive_int(n_merges, "n_merges", minimum=0)
    rule = _as_rule(rule)
    pieces = Counter(pretokenize(text, rule))
    words = [list(piece.encode("utf-8")) for piece in pieces]
    freq = list(pieces.values())
    pairs = [Counter(pairwise(ids)) for ids in words]  # each piece's pairs
    counts: Counter[tuple[int, int]] = Counter()  # every pair's count in the whole text
    where: dict[tuple[int, int], set[int]] = {}  # the pieces that hold each pair
    for w, piece_pairs in enumerate(pairs):
        for pair, k in piece_pairs.items():
            counts[pair] += k * freq[w]
            where.setdefault(pair, set()).add(w)
    heap = [(-c, pair) for pair, c in counts.items()]
    heapq.heapify(heap)
    merges: list[tuple[int, int]] = []
    while len(merges) < n_merges and heap:
        negative, pair = heapq.heappop(heap)
        if counts.get(pair, 0) != -negative or negative == 0:
            continue  # a stale entry: the count changed since it was pushed
        new_id = 256 + len(merges)
        merges.append(pair)
        changed = set()
        for w in where.pop(pair):
            old = words[w]
            new = merge(old, pair, new_id)
            words[w] = new
            before, after = pairs[w], Counter(pairwise(new))
            pairs[w] = after
            for p in before.keys() | after.keys():  # each pair's count changes by the piece's change
                if after[p] != before[p]:
                    counts[p] += (after[p] - before[p]) * freq[w]
                    changed.add(p)
                if p not in after and p != pair:
                    where[p].discard(w)
                elif p not in before:
                    where.setdefault(p, set()).add(w)
        for p in changed:
            if counts[p] > 0:
                heapq.heappush(heap, (-counts[p], p))
            else:
                del counts[p]
    return merges


# ---------------------------------------------------------------------------------------------
# Encoding and decoding with learned merges


def encode(text: str, merges: Sequence[tuple[int, int]], *, rule: str | None = None) -> list[int]:
    """The token ids of ``text``: its bytes, then the merges applied in the order they were learned.

    Lesson 17 · 2. Write BPE: encode. Within each piece of ``rule``'s cut, the pair of lowest rank
    present is merged, all its occurrences left to right, until no learned pair is left.
    """
    return Tokenizer.from_merges(merges, rule=rule).encode(text)


def decode(ids: Iterable[int], merges: Sequence[tuple[int, int]]) -> str:
    """The text of token ids: their bytes joined, then read as UTF-8 once.

    Lesson 17 · 2. Write BPE: decode. A character whose bytes two tokens share comes back whole;
    bytes that are no UTF-8 (a model may generate them) become U+FFFD.
    """
    return Tokenizer.from_merges(merges).decode(ids)


def vocabulary(merges: Sequence[tuple[int, int]]) -> list[bytes]:
    """The bytes of every token: the 256 single bytes, then one token per merge.

    Lesson 17 · 2. Write BPE: the vocabulary.
    """
    return list(Tokenizer.from_merges(merges).vocab)


# ---------------------------------------------------------------------------------------------
# Pre-tokenization


def pretokenize(text: str, rule: str | None = "gpt2") -> list[str]:
    """``text`` cut into the pieces a tokenizer merges within: ``rule`` is None, "gpt2" or "smollm".

    Lesson 17 · 4. The real tokenizer: the cut before the merges.

    >>> pretokenize("Hello world's 2024!", "gpt2")
    ['Hello', ' world', "'s", ' 2024', '!']
    >>> pretokenize("Hello world's 2024!", "smollm")
    ['Hello', ' world', "'s", ' ', '2', '0', '2', '4', '!']
    """
    utf8(text)
    rule = _as_rule(rule)
    if rule is None:
        return [text] if text else []
    if rule == "smollm":
        parts = [part for part in _number().split(text) if part]
        return [piece for part in parts for piece in _gpt2().findall(part)]
    return _gpt2().findall(text)


def _as_rule(rule: object) -> str | None:
    if not (rule is None or (isinstance(rule, str) and rule in RULES)):  # not an array (compared elementwise)
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    return rule  # type: ignore[return-value]


def _ranges(keep: Any) -> str:
    """A character class's body (no brackets) of every code point ``keep`` accepts."""
    spans = []
    start = None
    for code in range(sys.maxunicode + 2):
        inside = code <= sys.maxunicode and keep(chr(code))
        if inside and start is None:
            start = code
        elif not inside and start is not None:
            spans.append(f"{_escape(start)}-{_escape(code - 1)}" if code - 1 > start else _escape(start))
            start = None
    return "".join(spans)


def _escape(code: int) -> str:
    return f"\\U{code:08x}"


#: Unicode's White_Space property (Python's ``\s`` adds the separators U+001C–U+001F; onig, which
#: the production tokenizers use, follows the property).
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


@cache
def _classes() -> tuple[str, str, str]:
    letters = _ranges(lambda c: unicodedata.category(c).startswith("L"))
    numbers = _ranges(lambda c: unicodedata.category(c).startswith("N"))
    return letters, numbers, WHITE_SPACE


@cache
def _gpt2() -> re.Pattern[str]:
    L, N, S = _classes()
    return re.compile(rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+")


@cache
def _number() -> re.Pattern[str]:
    return re.compile(f"([{_classes()[1]}])")


# ---------------------------------------------------------------------------------------------
# A tokenizer: the learner's merges, or a real model's


@dataclass(frozen=True)
class Tokenizer:
    """Byte-level BPE: bytes' ids, ranked merges, the pre-tokenizer rule and the special tokens.

    Lesson 17 · 4. The real tokenizer. Build it with :meth:`from_merges` (the learner's table:
    byte ``b`` is token ``b``) or :meth:`from_gguf` (a model's file); the methods trust them.
    """

    byte_ids: tuple[int, ...]  # each byte's token id (-1 where a model's vocabulary lacks it)
    ranks: Mapping[tuple[int, int], tuple[int, int]]
    vocab: tuple[bytes, ...]
    rule: str | None = None
    special: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_merges(cls, merges: Sequence[tuple[int, int]], *, rule: str | None = None) -> Tokenizer:
        """The tokenizer of a merge table as :func:`train` returns it (token ``256 + i`` = merge ``i``).

        Raises ``ValueError`` naming the merge that refers to a token not yet made, or repeats one.
        """
        rule = _as_rule(rule)
        if isinstance(merges, (str, bytes)) or not isinstance(merges, Sequence):
            raise TypeError(f"merges must be a list of pairs of token ids, got {type(merges).__name__}")
        vocab = [bytes([b]) for b in range(256)]
        ranks: dict[tuple[int, int], tuple[int, int]] = {}
        for i, pair in enumerate(merges):
            if not (
                isinstance(pair, Sequence) and len(pair) == 2 and all(is_number(t, whole=True) for t in pair)
            ):
                raise TypeError(f"merges[{i}] must be a pair of token ids, got {pair!r}")
            a, b = int(pair[0]), int(pair[1])
            for t in (a, b):
                if not 0 <= t < len(vocab):
                    raise ValueError(
                        f"merges[{i}] = ({a}, {b}) refers to token {t}, which does not exist when merge "
                        f"{i} makes token {256 + i} (tokens 0 … {len(vocab) - 1} do)"
                    )
            if (a, b) in ranks:
                raise ValueError(f"merges[{i}] = ({a}, {b}) repeats merges[{ranks[a, b][0]}]")
            ranks[a, b] = (i, len(vocab))
            vocab.append(vocab[a] + vocab[b])
        return cls(tuple(range(256)), ranks, tuple(vocab), rule)

    @classmethod
    def from_gguf(cls, metadata: Mapping[str, Any]) -> Tokenizer:
        """A GGUF's own tokenizer from its ``tokenizer.ggml.*`` metadata (byte-level BPE, as GPT-2's).

        Lesson 17 · 4. The real tokenizer. The file writes each token's bytes in GPT-2's printable
        alphabet (a space is ``Ġ``, a newline ``Ċ``) and each merge as two tokens and a space
        (``"Ġ t"``); ``tokenizer.ggml.pre`` names the cut. Control and user-defined tokens
        (``<|im_start|>`` …) are special: matched whole in the text, never merged.
        """
        if metadata.get("tokenizer.ggml.model") != "gpt2":
            raise ValueError(
                "attnlib reads byte-level BPE tokenizers (tokenizer.ggml.model = 'gpt2'), "
                f"got {metadata.get('tokenizer.ggml.model')!r}"
            )
        pre = metadata.get("tokenizer.ggml.pre", "default")
        if pre not in GGUF_RULES:
            raise ValueError(f"tokenizer.ggml.pre = {pre!r}: attnlib knows {sorted(GGUF_RULES)}")
        tokens = list(metadata["tokenizer.ggml.tokens"])
        kinds = list(metadata.get("tokenizer.ggml.token_type", [1] * len(tokens)))
        to_byte = {char: b for b, char in enumerate(printable_bytes())}
        ids = {token: i for i, token in enumerate(tokens)}
        vocab = []
        special = {}
        for token, kind in zip(tokens, kinds, strict=True):
            if kind in SPECIAL_TYPES:
                special[token] = ids[token]
                vocab.append(token.encode("utf-8"))
            elif all(char in to_byte for char in token):
                vocab.append(bytes(to_byte[char] for char in token))
            else:
                raise ValueError(f"token {ids[token]} ({token!r}) is not written in GPT-2's byte alphabet")
        byte_ids = tuple(ids.get(char, -1) for char in printable_bytes())  # -1: a byte it lacks
        ranks = {}
        for rank, line in enumerate(metadata["tokenizer.ggml.merges"]):
            left, _, right = line.partition(" ")
            for part in (left, right, left + right):
                if part not in ids:
                    raise ValueError(f"merge {rank} ({line!r}) refers to {part!r}, which is no token")
            ranks.setdefault((ids[left], ids[right]), (rank, ids[left + right]))
        return cls(byte_ids, ranks, tuple(vocab), GGUF_RULES[pre], special)

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``: special tokens whole, then each piece of the cut merged by rank.

        Lesson 17 · 4. The real tokenizer.
        """
        utf8(text)
        ids: list[int] = []
        cache: dict[str, list[int]] = {}
        for part, is_special in self._split_special(text):
            if is_special:
                ids.append(self.special[part])
                continue
            for piece in pretokenize(part, self.rule):
                if piece not in cache:
                    cache[piece] = self._merge_piece(piece)
                ids.extend(cache[piece])
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``: the tokens' bytes joined, read as UTF-8 once (U+FFFD where they are none).

        Lesson 17 · 2. Write BPE: decode.
        """
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a list of token ids, got {type(ids).__name__}")
        try:
            ids = list(ids)
        except TypeError:  # a 0-d array or tensor: iterable by its type, not by its value
            raise TypeError(f"ids must be a list of token ids, got one value: {ids!r}") from None
        for i, t in enumerate(ids):
            if not is_number(t, whole=True):
                raise TypeError(f"ids[{i}] must be a whole number, got {t!r}")
            if not 0 <= t < len(self.vocab):
                raise ValueError(
                    f"ids[{i}] = {t} is no token: the vocabulary has ids 0 … {len(self.vocab) - 1}"
                )
        return b"".join(self.vocab[t] for t in ids).decode("utf-8", errors="replace")

    def _split_special(self, text: str) -> list[tuple[str, bool]]:
        if not self.special:
            return [(text, False)]
        names = sorted(self.special, key=len, reverse=True)
        pattern = "(" + "|".join(re.escape(name) for name in names) + ")"
        return [(part, i % 2 == 1) for i, part in enumerate(re.split(pattern, text)) if part]

    def _merge_piece(self, piece: str) -> list[int]:
        ids = [self.byte_ids[b] for b in piece.encode("utf-8")]
        if -1 in ids:
            byte = piece.encode("utf-8")[ids.index(-1)]
            raise ValueError(f"this vocabulary has no token for the byte 0x{byte:02x} (in {piece!r})")
        while len(ids) > 1:
            ranked = [self.ranks[pair] for pair in pairwise(ids) if pair in self.ranks]
            if not ranked:
                break
            rank, new_id = min(ranked)
            pair = next(p for p in pairwise(ids) if self.ranks.get(p, (None,))[0] == rank)
            ids = merge(ids, pair, new_id)
        return ids


@cache
def printable_bytes() -> tuple[str, ...]:
    """GPT-2's printable stand-in of each byte: itself if printable, else a letter from U+0100 on.

    Lesson 17 · 4. The real tokenizer: why a file writes a space as ``Ġ`` (U+0120, byte 32 + 256).
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {}
    extra = 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return tuple(chars[b] for b in range(256))
