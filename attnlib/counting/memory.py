"""What attention holds in memory at scale, and what it moves (lesson 12).

**The n² wall, and tiles instead.** The weights of ``n_q`` queries over ``n_k`` keys are ``n_q ×
n_k`` numbers, for every batch element and head: in float32 that is 4 GiB per head at n = 32,768
(the "n² wall")::

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

**What FlashAttention saves: the numbers moved between a GPU's two memories.** A GPU computes out
of a small, fast on-chip memory (SRAM, ``M`` numbers) and keeps its arrays in a large, slow one
(HBM). The standard algorithm writes the ``n × n`` scores and weights to HBM and reads them back;
FlashAttention's loops keep blocks on chip and move only ``Q``, ``K``, ``V``, the output and a few
numbers per row::

    standard    reads 3nd + 2n²,          writes 2n² + nd        Θ(nd + n²)
    q-outer     reads nd + 2nd·⌈n / B_r⌉,  writes nd + n          Θ(n²d²/M)

:func:`hbm_traffic` gives the counts of each of :data:`LOOPS` as formulas (with the blocks of
:func:`sram_blocks`); :func:`counted_hbm_traffic` runs the same loops on NumPy arrays that stand in
for HBM, counting every number read and written.

>>> import numpy as np
>>> Q, K, V = np.random.default_rng(0).standard_normal((3, 256, 16))   # n = 256, d = 16
>>> output, counted = counted_hbm_traffic(Q, K, V, sram=2048, loop="q-outer")
>>> counted == hbm_traffic(256, 16, sram=2048, loop="q-outer")        # measured = formula
True
>>> hbm_traffic(1024, 64).total, hbm_traffic(1024, 64, sram=25_000, loop="q-outer").total
(4456448, 1573888)
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_flag, as_positive_int, as_real_array

__all__ = [
    "LOOPS",
    "TileCounts",
    "Traffic",
    "as_sizes",
    "counted_hbm_traffic",
    "hbm_traffic",
    "peak_bytes",
    "sram_blocks",
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

    Lesson 12 · the sizes of its formulas, of the memory and of the traffic.
    """
    return tuple(as_positive_int(value, name) for name, value in sizes.items())


#: FlashAttention-1's key/value blocks outside (Algorithm 1), FlashAttention-2's query blocks outside.
LOOPS = ("standard", "kv-outer", "q-outer")


@dataclass(frozen=True)
class Traffic:
    """Numbers moved between the large slow memory (a GPU's HBM) and the small fast one (SRAM).

    Lesson 12 · section 6, what FlashAttention adds.

    Attributes
    ----------
    reads, writes : int
        Numbers read from and written to HBM (multiply by the itemsize for bytes).
    block_q, block_k : int
        The blocks the loop used (0 for the standard algorithm, which has none).
    """

    reads: int
    writes: int
    block_q: int = 0
    block_k: int = 0

    @property
    def total(self) -> int:
        """``reads + writes``."""
        return self.reads + self.writes


def sram_blocks(d: int, sram: int, loop: str) -> tuple[int, int]:
    """The blocks ``(block_q, block_k)`` a loop takes for an SRAM of ``sram`` numbers.

    Lesson 12 · section 6, what FlashAttention adds. The blocks are derived in its optional section.

    FlashAttention-1 (key/value blocks outside) takes ``B_c = ceil(M / 4d)`` keys and
    ``B_r = min(B_c, d)`` queries per block, so that ``K_j, V_j, Q_i, O_i`` fit in ``M``
    (Dao et al. 2022, Algorithm 1). With the query blocks outside the roles swap: the block that
    stays on chip is the large one, ``B_r = ceil(M / 4d)``, ``B_c = min(B_r, d)``.

    Parameters
    ----------
    d : int
        Head size (``d_k = d_v``).
    sram : int
        ``M``, the on-chip memory in numbers; at least ``d``.
    loop : {"kv-outer", "q-outer"}

    Returns
    -------
    block_q, block_k : int
    """
    d, sram = as_sizes(d=d, sram=sram)
    if sram < d:
        raise ValueError(f"sram must hold at least one row of d = {d} numbers, got sram = {sram}")
    big = -(-sram // (4 * d))
    if loop == "kv-outer":
        return min(big, d), big
    if loop == "q-outer":
        return big, min(big, d)
    raise ValueError(f"loop must be 'kv-outer' or 'q-outer' for blocks, got {loop!r}")


def hbm_traffic(n: int, d: int, *, sram: int | None = None, loop: str = "standard") -> Traffic:
    """The numbers attention reads from and writes to HBM: the formulas.

    Lesson 12 · section 6, what FlashAttention adds.

    With ``T_r = ceil(n / B_r)`` query blocks and ``T_c = ceil(n / B_c)`` key blocks
    (:func:`sram_blocks`):

    - ``standard``: write ``S = QKᵀ``, read it for ``P = softmax(S)``, write ``P``, read it for
      ``O = PV``: reads ``3nd + 2n²``, writes ``2n² + nd``; Θ(nd + n²).
    - ``kv-outer``: for every key block, every query block's ``Q_i, O_i, l_i, m_i`` is read and
      ``O_i, l_i, m_i`` written back: reads ``2nd + T_c (2nd + 2n)``, writes
      ``(nd + 2n)(1 + T_c)`` (the first for setting them to zero); Θ(n²d²/M).
    - ``q-outer``: each query block stays on chip while every key block streams past: reads
      ``nd + 2nd · T_r``, writes ``nd + n`` (the output and one number per row); Θ(n²d²/M).

    Parameters
    ----------
    n : int
        Queries = keys.
    d : int
        ``d_k = d_v``.
    sram : int, optional
        ``M`` in numbers; needed for the tiled loops.
    loop : {"standard", "kv-outer", "q-outer"}

    Returns
    -------
    Traffic
    """
    n, d = as_sizes(n=n, d=d)
    if loop == "standard":
        return Traffic(3 * n * d + 2 * n * n, 2 * n * n + n * d)
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {LOOPS}, got {loop!r}")
    if sram is None:
        raise ValueError(f"the {loop} loop needs sram, the on-chip memory in numbers")
    bq, bk = sram_blocks(d, sram, loop)
    t_r, t_c = -(-n // bq), -(-n // bk)
    if loop == "kv-outer":
        return Traffic(2 * n * d + t_c * (2 * n * d + 2 * n), (n * d + 2 * n) * (1 + t_c), bq, bk)
    return Traffic(n * d + 2 * n * d * t_r, n * d + n, bq, bk)


class _Hbm:
    """Arrays in the slow memory; every read and write of a block is counted, in numbers."""

    def __init__(self, **arrays: np.ndarray) -> None:
        self.arrays, self.reads, self.writes = dict(arrays), 0, 0

    def read(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        block = self.arrays[name][start:stop].copy()
        self.reads += block.size
        return block

    def write(self, name: str, start: int, value: np.ndarray) -> None:
        self.arrays[name][start : start + len(value)] = value
        self.writes += value.size


def counted_hbm_traffic(
    Q: npt.ArrayLike, K: npt.ArrayLike, V: npt.ArrayLike, *, sram: int | None = None, loop: str = "standard"
) -> tuple[np.ndarray, Traffic]:
    """Attention computed by one of :data:`LOOPS`, counting every number it moves to or from HBM.

    Lesson 12 · section 6, what FlashAttention adds.

    Q, K, V and the output live in a counted "HBM"; what a loop holds between a read and a write
    is its "SRAM". The counts are measured on the loop as it runs, and the tests check them equal
    to :func:`hbm_traffic`'s formulas, and the output equal to the naive one.

    Parameters
    ----------
    Q, K, V : (n, d)
        One head, as many queries as keys, ``d_k = d_v``.
    sram : int, optional
        ``M`` in numbers; needed for the tiled loops.
    loop : {"standard", "kv-outer", "q-outer"}

    Returns
    -------
    output : (n, d)
    traffic : Traffic
    """
    q, k, v = (as_real_array(x, name).astype(np.float64) for x, name in ((Q, "Q"), (K, "K"), (V, "V")))
    if q.ndim != 2 or not q.shape == k.shape == v.shape or 0 in q.shape:
        raise ValueError(
            f"Q, K and V must all be (n, d), n, d ≥ 1, got shapes {q.shape}, {k.shape}, {v.shape}"
        )
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {LOOPS}, got {loop!r}")
    n, d = q.shape
    largest = d * float(np.abs(q).max()) * float(np.abs(k).max()), n * float(np.abs(v).max())
    if not max(largest) < np.finfo(np.float64).max / 4:  # every score and output sum stays finite
        raise ValueError(
            f"Q, K or V is too large: the scores Q Kᵀ or the sums of V overflow (bound {largest})"
        )
    scale = 1.0 / math.sqrt(d)
    hbm = _Hbm(Q=q, K=k, V=v, O=np.zeros((n, d)))
    if loop == "standard":
        hbm.arrays.update(S=np.zeros((n, n)), P=np.zeros((n, n)))
        hbm.write("S", 0, hbm.read("Q") @ hbm.read("K").T * scale)
        s = hbm.read("S")
        p = np.exp(s - s.max(axis=1, keepdims=True))
        hbm.write("P", 0, p / p.sum(axis=1, keepdims=True))
        hbm.write("O", 0, hbm.read("P") @ hbm.read("V"))
        return hbm.arrays["O"], Traffic(hbm.reads, hbm.writes)
    if sram is None:
        raise ValueError(f"the {loop} loop needs sram, the on-chip memory in numbers")
    bq, bk = sram_blocks(d, sram, loop)
    if loop == "kv-outer":
        _kv_outer(hbm, n, bq, bk, scale)
    else:
        _q_outer(hbm, n, bq, bk, scale)
    return hbm.arrays["O"], Traffic(hbm.reads, hbm.writes, bq, bk)


def _kv_outer(hbm: _Hbm, n: int, bq: int, bk: int, scale: float) -> None:
    """FlashAttention-1's loop: key/value blocks outside; O, l, m go back to HBM after each step."""
    hbm.arrays.update(l=np.zeros((n, 1)), m=np.full((n, 1), -np.inf))
    hbm.write("O", 0, np.zeros_like(hbm.arrays["O"]))
    hbm.write("l", 0, np.zeros((n, 1)))
    hbm.write("m", 0, np.full((n, 1), -np.inf))
    for j0 in range(0, n, bk):
        k_j, v_j = hbm.read("K", j0, j0 + bk), hbm.read("V", j0, j0 + bk)
        for i0 in range(0, n, bq):
            q_i, o_i = hbm.read("Q", i0, i0 + bq), hbm.read("O", i0, i0 + bq)
            l_i, m_i = hbm.read("l", i0, i0 + bq), hbm.read("m", i0, i0 + bq)
            s = q_i @ k_j.T * scale
            m_new = np.maximum(m_i, s.max(axis=1, keepdims=True))
            p = np.exp(s - m_new)
            l_new = l_i * np.exp(m_i - m_new) + p.sum(axis=1, keepdims=True)
            o_new = (o_i * l_i * np.exp(m_i - m_new) + p @ v_j) / l_new  # O kept normalised, as in the paper
            hbm.write("O", i0, o_new)
            hbm.write("l", i0, l_new)
            hbm.write("m", i0, m_new)


def _q_outer(hbm: _Hbm, n: int, bq: int, bk: int, scale: float) -> None:
    """FlashAttention-2's loop: a query block stays on chip; only O and L = m + log l are written."""
    hbm.arrays["L"] = np.zeros((n, 1))
    for i0 in range(0, n, bq):
        q_i = hbm.read("Q", i0, i0 + bq)
        m_i, l_i, acc = np.full((len(q_i), 1), -np.inf), np.zeros((len(q_i), 1)), 0.0
        for j0 in range(0, n, bk):
            k_j, v_j = hbm.read("K", j0, j0 + bk), hbm.read("V", j0, j0 + bk)
            s = q_i @ k_j.T * scale
            m_new = np.maximum(m_i, s.max(axis=1, keepdims=True))
            p = np.exp(s - m_new)
            l_i = l_i * np.exp(m_i - m_new) + p.sum(axis=1, keepdims=True)
            acc = acc * np.exp(m_i - m_new) + p @ v_j  # unnormalised until the end
            m_i = m_new
        hbm.write("O", i0, acc / l_i)
        hbm.write("L", i0, m_i + np.log(l_i))
