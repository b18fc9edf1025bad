"""Self-checks of lesson 12, attention at scale: the memory of the weights, the online softmax's
rescaling factor, and the blocks a causal mask lets tiled attention skip.

Each check recomputes the right answer with attnlib (:func:`attnlib.counting.weights_bytes`,
:func:`attnlib.counting.tile_counts`, the rescaling of :func:`attnlib.efficient.online_softmax`)
and names the likely mistake from its table (:data:`MEMORY_MISTAKES`, :data:`RESCALE_MISTAKES`,
:data:`SKIP_MISTAKES`), each row making its mistake on the exercise's numbers.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from attention_lessons.kit.checks.mistakes import Mistake
from attention_lessons.kit.checks.result import CheckResult
from attention_lessons.kit.checks.values import number_verdict
from attnlib.counting import tile_counts, weights_bytes
from attnlib.validation import as_positive_int, as_real

__all__ = [
    "MEMORY_MISTAKES",
    "RESCALE_MISTAKES",
    "SKIP_MISTAKES",
    "Blocks",
    "Maxima",
    "WeightsMemory",
    "check_rescale_factor",
    "check_skipped_blocks",
    "check_weights_memory",
]

GIB = 2**30
Exercise = TypeVar("Exercise")


@dataclass(frozen=True)
class WeightsMemory:
    """The exercise: the weights of ``n`` queries over ``n`` keys, per head, in GiB."""

    n: int
    batch_heads: int
    itemsize: int

    def gib(self, numbers: float, itemsize: int | None = None) -> float:
        """``numbers`` entries of ``itemsize`` bytes (the exercise's by default), in GiB."""
        return numbers * (self.itemsize if itemsize is None else itemsize) / GIB


#: The wrong answers for the memory of the weights, in GiB.
MEMORY_MISTAKES: tuple[Mistake[WeightsMemory], ...] = (
    Mistake(
        "You counted n numbers, not n × n",
        "the weights hold one number for every query and every key: n_q × n_k.",
        lambda ex: ex.gib(ex.n * ex.batch_heads),
    ),
    Mistake(
        "You counted 8 bytes per number",
        "this exercise stores float32, 4 bytes per number (float64 would take 8).",
        lambda ex: ex.gib(ex.n * ex.n * ex.batch_heads, 8) if ex.itemsize != 8 else None,
    ),
    Mistake(
        "You counted 4 bytes per number",
        "this exercise stores float64, 8 bytes per number.",
        lambda ex: ex.gib(ex.n * ex.n * ex.batch_heads, 4) if ex.itemsize != 4 else None,
    ),
    Mistake(
        "You gave the number of entries, not their bytes",
        "multiply the n × n entries by the bytes of one number, then divide by 2³⁰ for GiB.",
        lambda ex: ex.n * ex.n * ex.batch_heads / GIB,
    ),
    Mistake(
        "You divided by 10⁹ (GB) instead of 2³⁰ (GiB)",
        "a GiB is 2³⁰ = 1,073,741,824 bytes.",
        lambda ex: ex.n * ex.n * ex.batch_heads * ex.itemsize / 1e9,
    ),
    Mistake(
        "You counted bits, not bytes",
        "a number here takes {ex.itemsize} bytes, 8 bits each; give the memory in bytes, then GiB.",
        lambda ex: ex.gib(ex.n * ex.n * ex.batch_heads) * 8,
    ),
    Mistake(
        "You left out the batch and the heads",
        "every batch element and every head has its own n × n weights.",
        lambda ex: ex.gib(ex.n * ex.n) if ex.batch_heads > 1 else None,
    ),
)


def check_weights_memory(
    answer: object, n: int, *, batch_heads: int = 1, itemsize: int = 4, decimals: int = 2
) -> CheckResult:
    """Check the memory of the attention weights of ``n`` queries over ``n`` keys, in GiB.

    Parameters
    ----------
    answer : float
        The learner's memory in GiB (2³⁰ bytes).
    n : int
        Number of queries and of keys.
    batch_heads : int
        Batch size times number of heads.
    itemsize : int
        Bytes per number: 4 (float32) or 8 (float64).
    decimals : int
        Decimals asked, compared by :func:`attention_lessons.kit.checks.values.number_verdict`'s rule.

    Returns
    -------
    CheckResult
        Passed; or the mistake (``n`` instead of ``n²``, the wrong bytes per number, entries
        instead of bytes, GB instead of GiB, bits, the heads left out); the right value is never shown.
    """
    ex = WeightsMemory(
        as_positive_int(n, "n"),
        as_positive_int(batch_heads, "batch_heads"),
        as_positive_int(itemsize, "itemsize"),
    )
    if ex.itemsize not in (4, 8):
        raise ValueError(f"itemsize must be 4 (float32) or 8 (float64), got {ex.itemsize}")
    try:  # the largest number a mistake gives: the bits of 8-byte numbers, in GiB
        float(ex.n * ex.n * ex.batch_heads * 8 * 8 / GIB)
    except OverflowError:
        raise ValueError(
            f"n and batch_heads are too large: the weights would take n² · batch_heads · itemsize bytes, "
            f"a {len(str(ex.n * ex.n * ex.batch_heads * ex.itemsize))}-digit number, beyond the largest "
            "float (1.8e308)"
        ) from None
    right = weights_bytes(ex.n, ex.n, batch_heads=ex.batch_heads, itemsize=ex.itemsize) / GIB
    return _verdict(answer, right, MEMORY_MISTAKES, ex, decimals, "the memory of the weights in GiB")


@dataclass(frozen=True)
class Maxima:
    """The exercise: the running maximum grows from ``old`` to ``new``."""

    old: float
    new: float


#: The wrong rescaling factors when the maximum grows from m to m′ (the right one: exp(m − m′)).
RESCALE_MISTAKES: tuple[Mistake[Maxima], ...] = (
    Mistake(
        "Sign swapped: that is exp(m′ − m)",
        "the old terms were exp(s − m); to make them exp(s − m′) multiply by exp(m − m′), a factor ≤ 1.",
        lambda ex: _exp(ex.new - ex.old),
    ),
    Mistake(
        "You forgot the exponential",
        "the terms are exponentials, exp(s − m); changing m to m′ multiplies them by the exponential "
        "of the difference of the maxima.",
        lambda ex: ex.old - ex.new,
    ),
    Mistake(
        "You forgot the exponential (and swapped the sign)",
        "the factor is the exponential of the old maximum minus the new one.",
        lambda ex: ex.new - ex.old,
    ),
    Mistake(
        "You divided the maxima",
        "exponentials turn differences into ratios: exp(s − m′) / exp(s − m) depends on m − m′, not m / m′.",
        lambda ex: ex.old / ex.new if ex.new != 0 else None,
    ),
    Mistake(
        "You used only the new maximum",
        "what changes is the shift from m to m′: the factor depends on both.",
        lambda ex: _exp(-ex.new),
    ),
    Mistake(
        "No rescaling: a factor of 1",
        "when the maximum grows, the earlier sum and output were computed with the old m and must shrink.",
        lambda ex: 1.0,
    ),
)


def check_rescale_factor(answer: object, m: float, m_new: float, *, decimals: int = 4) -> CheckResult:
    """Check the online softmax's rescaling factor when the running maximum grows from ``m`` to ``m_new``.

    Parameters
    ----------
    answer : float
        The learner's factor, which multiplies the running sum and the running output.
    m, m_new : float
        The maximum before and after the new block (``m_new >= m``).
    decimals : int
        Decimals asked, with the kit's rule (:func:`attention_lessons.kit.checks.values.number_verdict`).

    Returns
    -------
    CheckResult
        Passed; or the mistake (sign swapped, no exponential, a ratio, only the new maximum, no
        rescaling); the right factor is never shown.
    """
    ex = Maxima(as_real(m, "m"), as_real(m_new, "m_new"))
    if ex.new < ex.old:
        raise ValueError(
            f"the running maximum never shrinks: m_new ({ex.new:g}) must be at least m ({ex.old:g})"
        )
    right = math.exp(ex.old - ex.new)
    return _verdict(answer, right, RESCALE_MISTAKES, ex, decimals, "the rescaling factor")


@dataclass(frozen=True)
class Blocks:
    """The exercise: ``n`` queries and keys in square blocks of ``block``; ``tiles = ceil(n / block)``."""

    n: int
    block: int

    @property
    def tiles(self) -> int:
        return -(-self.n // self.block)


#: The wrong counts of blocks a causal mask skips (the right one: the blocks entirely above the diagonal).
SKIP_MISTAKES: tuple[Mistake[Blocks], ...] = (
    Mistake(
        "That is the number of blocks computed, not skipped",
        "the blocks on the diagonal are computed (half of each is masked, half is not); only blocks "
        "entirely above it are skipped.",
        lambda ex: tile_counts(ex.n, ex.n, block_q=ex.block, block_k=ex.block, causal=True).computed,
    ),
    Mistake(
        "You took exactly half of the blocks",
        "the diagonal blocks are computed, so fewer than half are skipped.",
        lambda ex: ex.tiles**2 / 2,
    ),
    Mistake(
        "You counted masked scores, not blocks",
        "count the blocks (n / block of them along each side), not the single entries above the diagonal.",
        lambda ex: ex.n * (ex.n - 1) / 2,
    ),
    Mistake(
        "You counted the blocks on both sides of the diagonal",
        "a causal mask hides only keys after the query: the blocks above the diagonal, not those below.",
        lambda ex: ex.tiles * (ex.tiles - 1),
    ),
    Mistake(
        "You counted all the blocks",
        "a causal mask hides the blocks whose keys all come after their queries; those are skipped.",
        lambda ex: ex.tiles**2,
    ),
)


def check_skipped_blocks(answer: object, n: int, block: int) -> CheckResult:
    """Check how many blocks of scores a causal mask lets tiled attention skip.

    Parameters
    ----------
    answer : int
        The learner's count.
    n : int
        Number of queries and of keys.
    block : int
        Queries and keys per block (square blocks).

    Returns
    -------
    CheckResult
        Passed; or the mistake (blocks computed instead of skipped, half the blocks, entries
        instead of blocks, both triangles, all blocks); the right count is never shown.
    """
    ex = Blocks(as_positive_int(n, "n"), as_positive_int(block, "block"))
    right = tile_counts(ex.n, ex.n, block_q=ex.block, block_k=ex.block, causal=True).skipped
    if right > sys.float_info.max:
        raise ValueError(
            f"n = {ex.n} in blocks of {ex.block} skips more blocks than a float can hold; take a smaller n"
        )
    return _verdict(answer, right, SKIP_MISTAKES, ex, 1, "the number of skipped blocks")  # counts: < 0.1 off


def _exp(x: float) -> float | None:
    """``exp(x)``, or None where it overflows (no learner's answer can equal it)."""
    try:
        return math.exp(x)
    except OverflowError:
        return None


def _verdict(
    answer: object,
    right: float,
    table: Sequence[Mistake[Exercise]],
    exercise: Exercise,
    decimals: int,
    name: str,
) -> CheckResult:
    """The verdict of :func:`attention_lessons.kit.checks.values.number_verdict` with the table's mistakes."""
    mistakes = []
    for mistake in table:
        try:
            wrong = mistake.wrong(exercise)
            if wrong is not None:
                mistakes.append((mistake.message(exercise), float(wrong)))
        except OverflowError:  # beyond any float: no learner's answer can equal it
            continue
    return number_verdict(answer, float(right), decimals=decimals, name=name, mistakes=mistakes)
