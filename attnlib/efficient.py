"""Attention without the n × n matrix: the online softmax and tiled (flash-style) attention.

The weights of ``n`` queries over ``n`` keys take ``n²`` numbers: 4 GiB in float32 at
n = 32,768, for each head. Fused kernels (FlashAttention, PyTorch's CPU and GPU kernels) never
store them. What makes that possible is the **online softmax**: read the scores of a row block
by block, keep a running maximum ``m`` and a running sum ``l = Σ exp(s_j − m)``, and when a new
block raises the maximum from ``m`` to ``m′``, rescale what you have by ``exp(m − m′)``::

    m′ = max(m, max_j s_j)                        over the new block's scores s_j
    l′ = l · exp(m − m′) + Σ_j exp(s_j − m′)
    o′ = o · exp(m − m′) + Σ_j exp(s_j − m′) v_j  (the unnormalised output)

After the last block, ``o / l`` is exactly ``softmax(s) V``. :func:`online_softmax` shows these
steps for one row; :func:`tiled_attention` runs them for whole blocks of queries and keys.

The online softmax in NumPy (lesson 12 · 2. The online softmax), one row read in two blocks, gives
the softmax of the whole row, and tiled attention gives the same output as the whole matrix:

>>> import numpy as np
>>> from attnlib.core import scaled_dot_product_attention, softmax
>>> s = np.array([1.0, 3.0, 2.0, 5.0])
>>> m, l = -np.inf, 0.0
>>> for block in (s[:2], s[2:]):
...     m_new = max(m, block.max())                                   # the running maximum
...     l = l * np.exp(m - m_new) + np.exp(block - m_new).sum()       # rescale, then add
...     m = m_new
>>> bool(np.allclose(np.exp(s - m) / l, softmax(s)))
True
>>> Q, K, V = np.random.default_rng(0).normal(size=(3, 6, 4))
>>> output, weights = scaled_dot_product_attention(Q, K, V)
>>> bool(np.allclose(tiled_attention(Q, K, V, block_q=2, block_k=4), output))
True
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_flag, as_positive_int, as_real_array, attention_arguments

__all__ = [
    "OnlineSoftmaxState",
    "QueryBlock",
    "online_softmax",
    "online_softmax_weights",
    "tile_schedule",
    "tiled_attention",
    "tiled_attention_with_logsumexp",
    "tiled_attention_with_statistics",
]

#: The default block sizes of :func:`tiled_attention`, from ``benchmarks/attention.py --blocks`` on
#: two quiet cores (2026-11-25, ``results/attention-blocks.json``): over its 12 cases (n = 2,048 …
#: 8,192, causal or not, one thread or two), 512 × 512 had the best geometric-mean time of the nine
#: pairs of 256, 512 and 1,024 (tied with 1,024 × 1,024, whose worst case was 25% slower).
BLOCK_Q, BLOCK_K = 512, 512


@dataclass(frozen=True)
class OnlineSoftmaxState:
    """What the online softmax knows after reading the keys ``0 … stop − 1`` of one row.

    Lesson 12 · 2. The online softmax.

    Attributes
    ----------
    start, stop : int
        The block just read: keys ``start … stop − 1``.
    maximum : float
        ``m``, the largest score read so far (``-inf`` while every score read is masked).
    total : float
        ``l = Σ exp(s_j − m)`` over the keys read so far.
    rescale : float
        ``exp(m_before − m)``: the factor this block applied to the earlier total (and output);
        1 when the block did not raise the maximum.
    output : numpy.ndarray of shape (d_v,), or None
        ``Σ exp(s_j − m) v_j / l`` over the keys read so far: the attention output of those keys
        alone (zeros while nothing is read); None when no values were given.
    """

    start: int
    stop: int
    maximum: float
    total: float
    rescale: float
    output: np.ndarray | None


def online_softmax(
    scores: npt.ArrayLike, block_size: int, values: npt.ArrayLike | None = None
) -> Iterator[OnlineSoftmaxState]:
    """Read one row of scores block by block, yielding the running state after each block.

    Lesson 12 · 2. The online softmax.

    Parameters
    ----------
    scores : (n_k,)
        One query's (scaled, masked) scores; ``-inf`` marks a masked key.
    block_size : int
        Keys per block; the last block may be shorter.
    values : (n_k, d_v), optional
        The values; with them every state carries the partial output.

    Yields
    ------
    OnlineSoftmaxState
        One per block, in order. The last one's ``maximum`` and ``total`` give the softmax,
        ``exp(s − m) / l`` (see :func:`online_softmax_weights`), and its ``output`` equals
        ``softmax(scores) @ values``.
    """
    s = as_real_array(scores, "scores", allow_neg_inf=True).astype(np.float64)
    if s.ndim != 1:
        raise ValueError(f"scores must be one row of shape (n_k,), got shape {s.shape}")
    size = as_positive_int(block_size, "block_size")
    v = None
    if values is not None:
        v = as_real_array(values, "values").astype(np.float64)
        if v.ndim != 2 or v.shape[0] != s.shape[0]:
            raise ValueError(f"values must have shape (n_k, d_v) = ({s.shape[0]}, d_v), got shape {v.shape}")
    m, total = -np.inf, 0.0
    acc = None if v is None else np.zeros(v.shape[1])
    for start in range(0, s.shape[0], size):
        block = s[start : start + size]
        m_new = max(m, float(block.max()))
        rescale = _rescale(m, m_new)
        p = _exp_shifted(block, m_new)
        total = total * rescale + float(p.sum())
        if v is not None and acc is not None:
            acc = acc * rescale + p @ v[start : start + size]
        m = m_new
        output = None if acc is None else (acc / total if total > 0 else np.zeros_like(acc))
        yield OnlineSoftmaxState(start, start + block.shape[0], m, total, rescale, output)


def online_softmax_weights(scores: npt.ArrayLike, block_size: int) -> np.ndarray:
    """``softmax(scores)`` computed with the online softmax's final maximum and total.

    Lesson 12 · 2. The online softmax.

    Parameters
    ----------
    scores : (n_k,)
    block_size : int

    Returns
    -------
    (n_k,) float64
        ``exp(s − m) / l``; all zeros when every score is ``-inf``, and empty for an empty row
        (as :func:`attnlib.core.softmax`).
    """
    states = list(online_softmax(scores, block_size))
    s = np.asarray(scores, dtype=np.float64)
    if not states or states[-1].total == 0:  # no keys, or every key masked
        return np.zeros_like(s)
    return _exp_shifted(s, states[-1].maximum) / states[-1].total


def _rescale(m_old: np.ndarray | float, m_new: np.ndarray | float) -> np.ndarray:
    """``exp(m_old − m_new)``, and 1 where nothing unmasked has been read yet (both ``-inf``)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(m_new), 1.0, np.exp(np.subtract(m_old, m_new)))


def _exp_shifted(scores: np.ndarray, m: np.ndarray | float) -> np.ndarray:
    """``exp(scores − m)`` with 0 where ``m`` is ``-inf`` (a row with nothing unmasked yet).

    A spread beyond the float range (``-1e308 − 1e308``) gives ``exp(-inf) = 0``, as in
    :func:`attnlib.core.softmax`, without an overflow warning.
    """
    safe_m = np.where(np.isneginf(m), 0.0, m)
    with np.errstate(over="ignore"):
        return np.exp(scores - safe_m)


def tiled_attention(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    block_q: int = BLOCK_Q,
    block_k: int = BLOCK_K,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    """Scaled dot-product attention computed block by block, never holding the n_q × n_k weights.

    Lesson 12 · 3. Tiled attention.

    The same meaning as ``scaled_dot_product_attention(Q, K, V, mask=..., causal=..., scale=...)[0]``
    (shapes, batch broadcasting, boolean and additive masks, causal, fully masked rows → zeros,
    float32 stays float32, the same errors), computed one ``block_q × block_k`` block of scores
    at a time per batch element and head, with the online softmax. With ``causal=True`` a block
    whose keys all come after its queries is skipped, and so is a block that the mask hides
    entirely (the blocks outside a sliding window, :func:`attnlib.core.causal_mask`).

    Per block it makes two BLAS calls and three passes over the scores: ``s = (Q·scale) Kᵀ``;
    the row maxima; ``exp(s − m′)`` in place; then ``p [V | 1]``, which gives the new part of
    the output and, in its last column, the new part of the row sums ``l``.

    Parameters
    ----------
    Q : (..., n_q, d_k) or (d_k,)
    K : (..., n_k, d_k)
    V : (..., n_k, d_v)
    block_q, block_k : int
        Queries and keys per block; blocks at the end may be shorter.
    mask : optional, broadcastable to (..., n_q, n_k)
        Boolean (``True`` = may attend) or additive.
    causal : bool
    scale : float, optional
        Defaults to ``1/√d_k``.

    Returns
    -------
    output : (..., n_q, d_v), or (..., d_v) for a single query
    """
    output, _ = tiled_attention_with_logsumexp(
        Q, K, V, block_q=block_q, block_k=block_k, mask=mask, causal=causal, scale=scale
    )
    return output


def tiled_attention_with_logsumexp(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    block_q: int = BLOCK_Q,
    block_k: int = BLOCK_K,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tiled_attention`, and the one number per query row a backward pass needs.

    Lesson 12 · 6. What FlashAttention adds.

    Parameters
    ----------
    Q, K, V, block_q, block_k, mask, causal, scale
        As in :func:`tiled_attention`.

    Returns
    -------
    output : (..., n_q, d_v), or (..., d_v) for a single query
    logsumexp : (..., n_q), or (...) for a single query
        ``L = m + log l`` of each row (``-inf`` where every key is masked): the weights are
        ``exp(s_j − L)``, so a backward pass can recompute them from the scores without storing them.
        Rounded to the dtype, L is off by up to ``u·|L|`` (u the unit roundoff), and so are
        weights recomputed from it: :mod:`attnlib.tiled_backward` keeps ``m`` and ``log l`` apart.
    """
    output, m, log_l = tiled_attention_with_statistics(
        Q, K, V, block_q=block_q, block_k=block_k, mask=mask, causal=causal, scale=scale
    )
    logsumexp = np.full(m.shape, -np.inf, dtype=m.dtype)
    np.add(m, log_l, out=logsumexp, where=np.isfinite(log_l))
    return output, logsumexp


def tiled_attention_with_statistics(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    block_q: int = BLOCK_Q,
    block_k: int = BLOCK_K,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tiled_attention`, and each row's largest score ``m`` and ``log l``, kept apart.

    Lesson 12 · 6. What FlashAttention adds: the backward pass (:mod:`attnlib.tiled_backward`)
    recomputes each block of weights from them, ``exp((s − m) − log l)``.

    ``L = m + log l`` rounded to the dtype loses ``u·|m|`` (u the unit roundoff): with scores
    of size 2·10⁶ in float32, weights recomputed as ``exp(s − L)`` are off by 10 %. Kept apart,
    ``(s − m) − log l`` is exact up to rounding of numbers of size ``|s − m|``, whatever ``m`` is.

    Parameters
    ----------
    Q, K, V, block_q, block_k, mask, causal, scale
        As in :func:`tiled_attention`, and checked as it checks them.

    Returns
    -------
    output : (..., n_q, d_v), or (..., d_v) for a single query
    m : (..., n_q), or (...) for a single query
        Each row's largest scaled score (``-inf`` where every key is masked).
    log_l : (..., n_q), or (...) for a single query
        The log of each row's sum of ``exp(s − m)`` (``-inf`` where every key is masked).
    """
    checked = attention_arguments(Q, K, V, mask, causal, scale)
    q, k, v, factor = checked.Q, checked.K, checked.V, checked.scale
    visible = None if checked.mask is None else _visible(checked.mask, q.shape[-2], k.shape[-2])
    schedule = tile_schedule(
        q.shape[-2], k.shape[-2], block_q=block_q, block_k=block_k, causal=causal, visible=visible
    )
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q = np.broadcast_to(q, (*batch, *q.shape[-2:]))  # views: every block of scores has the full batch
    k = np.broadcast_to(k, (*batch, *k.shape[-2:]))
    full_mask = None  # the mask as a read-only view of shape (..., n_q, n_k): nothing is copied
    if checked.mask is not None:
        full_mask = np.broadcast_to(checked.mask, (*batch, q.shape[-2], k.shape[-2]))
    scores = _BlockScores(q, k, factor)
    v_ones = np.concatenate([v, np.ones((*v.shape[:-1], 1), dtype=v.dtype)], axis=-1)  # [V | 1]
    output = np.zeros((*batch, q.shape[-2], v.shape[-1]), dtype=q.dtype)  # 0 where every key is masked
    row_max = np.full((*batch, q.shape[-2]), -np.inf, dtype=q.dtype)
    log_l = np.full((*batch, q.shape[-2]), -np.inf, dtype=q.dtype)
    for block in schedule:
        i0, i1 = block.start, block.stop
        m = np.full((*batch, i1 - i0, 1), -np.inf, dtype=q.dtype)  # running maxima m
        acc = np.zeros((*batch, i1 - i0, v.shape[-1] + 1), dtype=q.dtype)  # [o | l], unnormalised
        for j0, j1 in block.key_blocks:
            s = scores.block(i0, i1, j0, j1)  # (..., bq, bk): the one block of scores held
            if full_mask is not None:
                _mask_in_place(s, full_mask[..., i0:i1, j0:j1])
            if causal and j1 - 1 > i0:  # part of the block lies above the diagonal
                np.copyto(s, -np.inf, where=_above_diagonal(i1 - i0, j1 - j0, j0 - i0))
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            if not np.array_equal(m_new, m):  # the maximum grew: rescale what is there
                acc *= _rescale(m, m_new).astype(q.dtype, copy=False)
                m = m_new
            with np.errstate(over="ignore"):  # a spread beyond the float range gives -inf, exp → 0
                s -= np.where(np.isneginf(m), 0, m)  # a row with nothing unmasked yet keeps exp(-inf) = 0
            np.exp(s, out=s)  # p = exp(s − m′)
            acc += s @ v_ones[..., j0:j1, :]  # [p V | Σ p]
            del s  # free this block before the next one is computed
        total = acc[..., -1:]
        np.divide(acc[..., :-1], total, out=output[..., i0:i1, :], where=total > 0)
        with np.errstate(divide="ignore"):  # log 0 = -inf where every key is masked
            np.log(total[..., 0], out=log_l[..., i0:i1], where=total[..., 0] > 0)
        row_max[..., i0:i1] = m[..., 0]
    if checked.single:
        return output[..., 0, :], row_max[..., 0], log_l[..., 0]
    return output, row_max, log_l


class _BlockScores:
    """Blocks of scaled scores ``Q Kᵀ · scale``, with the naive computation's overflow error.

    When ``d_k · max|Q| · max|K|`` (a bound on every |q · k| and on every partial sum of one)
    fits comfortably in the dtype, nothing can overflow: Q is scaled once and each block is one
    matrix product. Otherwise each block is computed as ``(Q Kᵀ) · scale`` and
    checked, as :func:`attnlib.core.scaled_dot_product_attention` does.
    """

    def __init__(self, q: np.ndarray, k: np.ndarray, factor: float) -> None:
        self.q, self.kt, self.factor = q, np.swapaxes(k, -1, -2), factor
        largest = [float(np.abs(a).max(initial=0.0)) for a in (q, k)]  # Python floats: no overflow warning
        bound = q.shape[-1] * largest[0] * largest[1] * max(1.0, abs(factor))
        self.safe = bound < float(np.finfo(q.dtype).max) / 4
        self.q_scaled = q * factor if self.safe else q

    def block(self, i0: int, i1: int, j0: int, j1: int) -> np.ndarray:
        """Scores of queries ``i0 … i1 − 1`` against keys ``j0 … j1 − 1``, a new array."""
        if self.safe:
            return self.q_scaled[..., i0:i1, :] @ self.kt[..., j0:j1]
        q_block, kt_block = self.q[..., i0:i1, :], self.kt[..., j0:j1]
        with np.errstate(over="ignore", invalid="ignore"):
            s = q_block @ kt_block
            s *= self.factor
        if not np.isfinite(s).all():
            raise ValueError(
                f"the scaled scores Q Kᵀ · scale overflow {s.dtype}: the inputs are too large "
                f"(largest |Q| entry {np.abs(q_block).max():.3g}, |K| entry {np.abs(kt_block).max():.3g})"
            )
        return s


@functools.lru_cache(maxsize=8)
def _above_diagonal(rows: int, cols: int, offset: int) -> np.ndarray:
    """``True`` where key ``offset + c`` comes after query ``r``: the causally masked entries."""
    above = ~np.tri(rows, cols, -offset, dtype=bool)
    above.flags.writeable = False
    return above


@dataclass(frozen=True)
class QueryBlock:
    """One block of queries in :func:`tile_schedule` and the key blocks it is computed against.

    Lesson 12 · 3. Tiled attention.

    Attributes
    ----------
    start, stop : int
        Queries ``start … stop − 1``.
    key_blocks : tuple of (int, int)
        ``(start, stop)`` of every key block whose scores are computed, in order.
    """

    start: int
    stop: int
    key_blocks: tuple[tuple[int, int], ...]


def tile_schedule(
    n_q: int,
    n_k: int,
    *,
    block_q: int = 128,
    block_k: int = 128,
    causal: bool = False,
    visible: npt.ArrayLike | None = None,
) -> list[QueryBlock]:
    """The blocks :func:`tiled_attention` computes, in order.

    Lesson 12 · 3. Tiled attention.

    With ``causal=True`` (query ``i`` sees keys ``0 … i``), a key block that starts after the
    last query of a query block is entirely masked and left out, and so is every later one.
    With ``visible``, so is a block in which no query sees any key.

    Parameters
    ----------
    n_q, n_k : int
        Numbers of queries and keys.
    block_q, block_k : int
        Block sizes; the last block of each may be shorter.
    causal : bool
    visible : array_like of bool, shape (n_q, n_k), optional
        ``True`` where a query may see a key (in some batch element or head), as a boolean mask:
        ``causal_mask(n, window=w, sinks=s)`` keeps only the blocks along the diagonal band and
        the first column of blocks.

    Returns
    -------
    list of QueryBlock
        ``ceil(n_q / block_q)`` query blocks, each with the key blocks it needs.
    """
    rows, cols = as_positive_int(n_q, "n_q", minimum=0), as_positive_int(n_k, "n_k")  # no query: no block
    bq, bk = as_positive_int(block_q, "block_q"), as_positive_int(block_k, "block_k")
    as_flag(causal, "causal")
    seen = None if visible is None else _as_visible(visible, rows, cols)
    schedule = []
    for i0 in range(0, rows, bq):
        i1 = min(i0 + bq, rows)
        last_key = min(i1, cols) if causal else cols  # keys at or after last_key are all masked
        keys = tuple(
            (j0, min(j0 + bk, cols))
            for j0 in range(0, last_key, bk)
            if seen is None or seen[i0:i1, j0 : j0 + bk].any()
        )
        schedule.append(QueryBlock(i0, i1, keys))
    return schedule


def _as_visible(visible: npt.ArrayLike, n_q: int, n_k: int) -> np.ndarray:
    """Check :func:`tile_schedule`'s ``visible``: a boolean array of shape (n_q, n_k)."""
    arr = np.asarray(visible)
    if arr.dtype != bool or arr.shape != (n_q, n_k):
        raise ValueError(
            f"visible must be a boolean array of shape (n_q, n_k) = ({n_q}, {n_k}), "
            f"got dtype {arr.dtype} and shape {arr.shape}"
        )
    return arr


def _visible(mask: np.ndarray, n_q: int, n_k: int) -> np.ndarray:
    """Which scores a checked boolean or additive mask leaves visible in some batch element, (n_q, n_k)."""
    shown = mask if mask.dtype == bool else ~np.isneginf(mask)
    if shown.ndim > 2:  # reduce the batch axes of the mask as given, before broadcasting
        shown = shown.any(axis=tuple(range(shown.ndim - 2)))
    return np.broadcast_to(shown, (n_q, n_k))


def _mask_in_place(s: np.ndarray, mask_block: np.ndarray) -> None:
    """Apply one block of a boolean (``False`` → ``-inf``) or additive mask to scores ``s``."""
    if mask_block.dtype == bool:
        np.copyto(s, -np.inf, where=~mask_block)
        return
    with np.errstate(over="ignore"):
        s += mask_block
    if np.isposinf(s).any():
        raise ValueError(f"adding the mask to the scores overflows {s.dtype}; use 0 to keep and -inf to hide")
