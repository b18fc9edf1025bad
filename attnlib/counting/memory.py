"""What attention holds in memory at scale: the n² wall, and tiles instead (lesson 12).

The weights of ``n_q`` queries over ``n_k`` keys are ``n_q × n_k`` numbers, for every batch
element and head: in float32 that is 4 GiB per head at n = 32,768 (the "n² wall")::

    weights_bytes = batch_heads · n_q · n_k · itemsize

:func:`attnlib.efficient.tiled_attention` never holds them: one block of scores at a time, plus
arrays of size ``n × d``. Formulas: :func:`weights_bytes`, :func:`tiled_bytes` (what tiled
attention allocates) and :func:`tile_counts` (the blocks of scores it computes, and those a causal
mask lets it skip). A measurement: :func:`peak_bytes`, the peak memory a call allocates, with
:mod:`tracemalloc`.

>>> weights_bytes(32_768, 32_768) / 2**30                        # GiB, one head, float32
4.0
>>> tiled_bytes(32_768, 32_768, 64, 64, block_q=128, block_k=128) / 2**20  # MiB: grows like n·d
24.25146484375
>>> tile_counts(2048, 2048, block_q=128, block_k=128, causal=True)  # T = 16: T(T+1)/2 of T² blocks
TileCounts(blocks=256, computed=136, skipped=120, scores_computed=2228224)
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

from attnlib.validation import as_flag, as_positive_int

__all__ = [
    "TileCounts",
    "as_sizes",
    "peak_bytes",
    "tile_counts",
    "tiled_bytes",
    "weights_bytes",
]


def weights_bytes(n_q: int, n_k: int, *, batch_heads: int = 1, itemsize: int = 4) -> int:
    """Bytes of the attention weights, ``n_q × n_k`` numbers for every batch element and head.

    Lesson 12 · section 1, the n² wall.

    Every implementation that forms the weights (as :func:`attnlib.core.scaled_dot_product_attention`
    does, along with as many score matrices of the same size) holds at least this much at once.

    Parameters
    ----------
    n_q, n_k : int
        Numbers of queries and keys.
    batch_heads : int
        Batch size times number of heads.
    itemsize : int
        Bytes per number: 4 for float32, 8 for float64.

    Returns
    -------
    int
        ``batch_heads · n_q · n_k · itemsize``. For n = 32,768 in float32: 4 GiB per head.
    """
    n_q, n_k, batch_heads, itemsize = as_sizes(n_q=n_q, n_k=n_k, batch_heads=batch_heads, itemsize=itemsize)
    return batch_heads * n_q * n_k * itemsize


def tiled_bytes(
    n_q: int,
    n_k: int,
    d_k: int,
    d_v: int,
    *,
    block_q: int,
    block_k: int,
    batch_heads: int = 1,
    itemsize: int = 4,
) -> int:
    """Bytes :func:`attnlib.efficient.tiled_attention` allocates at once, beyond its inputs (no mask).

    Lesson 12 · section 3, tiled attention.

    Per batch element and head: one block of scores (``block_q × block_k``), the output
    (``n_q × d_v``), the scaled queries (``n_q × d_k``), the values with a column of ones
    (``n_k × (d_v + 1)``), and per query block the running ``[o | l]`` and the product of one block
    with the values (``2 · block_q × (d_v + 1)``) and the running maxima (``block_q``).

    Parameters
    ----------
    n_q, n_k, d_k, d_v : int
    block_q, block_k : int
        Block sizes (a block is never larger than the whole).
    batch_heads : int
    itemsize : int

    Returns
    -------
    int
        Grows like ``n · d``, not like ``n²``: the only ``n × n``-like term is one block.
    """
    n_q, n_k, d_k, d_v, batch_heads, itemsize = as_sizes(
        n_q=n_q, n_k=n_k, d_k=d_k, d_v=d_v, batch_heads=batch_heads, itemsize=itemsize
    )
    bq = min(as_positive_int(block_q, "block_q"), n_q)
    bk = min(as_positive_int(block_k, "block_k"), n_k)
    per_head = bq * bk + n_q * d_v + n_q * d_k + n_k * (d_v + 1) + 2 * bq * (d_v + 1) + bq
    return batch_heads * per_head * itemsize


@dataclass(frozen=True)
class TileCounts:
    """The blocks of scores of a tiled attention: how many, and how many scores they hold.

    Lesson 12 · section 3, tiled attention.

    Attributes
    ----------
    blocks : int
        All blocks, ``ceil(n_q / block_q) · ceil(n_k / block_k)``.
    computed : int
        Blocks whose scores are computed; with a causal mask, those with at least one key that a
        query of the block may see.
    skipped : int
        ``blocks − computed``: blocks a causal mask hides entirely.
    scores_computed : int
        Scores in the computed blocks (``n_q · n_k`` without a mask).
    """

    blocks: int
    computed: int
    skipped: int
    scores_computed: int


def tile_counts(n_q: int, n_k: int, *, block_q: int, block_k: int, causal: bool = False) -> TileCounts:
    """How many blocks of scores tiled attention computes, and how many a causal mask skips.

    Lesson 12 · section 3, tiled attention.

    Query block ``i`` holds queries ``i·block_q … min((i+1)·block_q, n_q) − 1``; under a causal
    mask its last query sees keys ``0 … min((i+1)·block_q, n_q) − 1``, so it needs the first
    ``ceil(min((i+1)·block_q, n_q, n_k) / block_k)`` key blocks. With ``n`` queries and keys and
    square blocks ``b`` dividing ``n``, that is ``T(T+1)/2`` of the ``T²`` blocks, ``T = n/b``.

    Parameters
    ----------
    n_q, n_k : int
    block_q, block_k : int
    causal : bool

    Returns
    -------
    TileCounts
    """
    n_q, n_k = as_positive_int(n_q, "n_q"), as_positive_int(n_k, "n_k")
    bq, bk = as_positive_int(block_q, "block_q"), as_positive_int(block_k, "block_k")
    causal = as_flag(causal, "causal")
    rows, cols = -(-n_q // bq), -(-n_k // bk)
    if not causal:
        return TileCounts(rows * cols, rows * cols, 0, n_q * n_k)
    # Query block c − 1 (c = 1 … rows) sees keys 0 … min(c·bq, L) − 1, L = min(n_q, n_k). The first
    # `early` blocks end before L (c·bq < L, all bq rows tall) and need ceil(c·bq / bk) key blocks;
    # the rest all need ceil(L / bk). Summed in closed form, so huge sizes cost no loop.
    length = min(n_q, n_k)
    early = -(-length // bq) - 1
    early_blocks = _floor_sum(early, bk, bq, bq + bk - 1)  # Σ_{c=1}^{early} ceil(c·bq / bk)
    late_blocks = -(-length // bk)
    computed = early_blocks + (rows - early) * late_blocks
    # Scores: a block of key blocks 0 … k − 1 holds min(k·bk, n_k) keys per row; k·bk passes n_k
    # only when k = cols, which the early blocks reach for c > (cols − 1)·bk / bq.
    past_end = cols * bk - n_k
    early_full = max(0, early - ((cols - 1) * bk) // bq)
    early_scores = bq * (early_blocks * bk - early_full * past_end)
    late_scores = (n_q - early * bq) * min(late_blocks * bk, n_k)
    return TileCounts(rows * cols, computed, rows * cols - computed, early_scores + late_scores)


def _floor_sum(count: int, m: int, a: int, b: int) -> int:
    """``Σ_{i=0}^{count−1} floor((a·i + b) / m)`` for non-negative ints, by Euclid's steps (O(log))."""
    total = 0
    while count > 0:
        total += (a // m) * count * (count - 1) // 2 + (b // m) * count
        a, b = a % m, b % m
        top = a * count + b
        if top < m:
            break
        count, b, m, a = top // m, top % m, a, m
    return total


def peak_bytes(call: Callable[[], object]) -> tuple[object, int]:
    """Run ``call()`` and measure the most memory it had allocated at once, with :mod:`tracemalloc`.

    Lesson 12 · sections 3 and 4, tiled attention measured.

    NumPy reports its arrays' memory to :mod:`tracemalloc`, so this counts every array the call
    creates (and Python objects), but not memory that other libraries (BLAS, PyTorch) allocate
    on their own.

    Parameters
    ----------
    call : callable
        Called once with no arguments.

    Returns
    -------
    result : object
        What ``call()`` returned.
    peak : int
        The largest number of bytes allocated during the call and not yet freed, above what was
        allocated before it (the result's own memory included).
    """
    if not callable(call):
        raise TypeError(f"call must be a function of no arguments, got {call!r}")
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, peak


def as_sizes(**sizes: int) -> tuple[int, ...]:
    """Each size as a positive int, or an error naming it.

    Lesson 12 · the sizes of its formulas, here and in :mod:`attnlib.counting.traffic`.
    """
    return tuple(as_positive_int(value, name) for name, value in sizes.items())
