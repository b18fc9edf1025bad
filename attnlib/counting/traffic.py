"""What FlashAttention saves: the numbers moved between a GPU's two memories (lesson 12).

A GPU computes out of a small, fast on-chip memory (SRAM, ``M`` numbers) and keeps its arrays in a
large, slow one (HBM). The standard algorithm writes the ``n × n`` scores and weights to HBM and
reads them back; FlashAttention's loops keep blocks on chip and move only ``Q``, ``K``, ``V``, the
output and a few numbers per row::

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
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.counting.memory import as_sizes
from attnlib.validation import as_real_array

__all__ = [
    "LOOPS",
    "Traffic",
    "counted_hbm_traffic",
    "hbm_traffic",
    "sram_blocks",
]

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
    if q.ndim != 2 or not q.shape == k.shape == v.shape:
        raise ValueError(f"Q, K and V must all be (n, d), got shapes {q.shape}, {k.shape}, {v.shape}")
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {LOOPS}, got {loop!r}")
    n, d = q.shape
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
