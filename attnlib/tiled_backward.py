"""The backward pass of tiled attention: the weights recomputed block by block, never stored.

The backward pass of :func:`attnlib.backward.attention_backward` needs the weights ``A``, an
``n_q × n_k`` array. FlashAttention (Dao et al. 2022; Dao 2023) keeps only one number per query
row from the forward pass, ``L = m + log l`` (:func:`attnlib.efficient.tiled_attention_with_logsumexp`),
and recomputes each block of weights from its block of scores when it needs it::

    P  = exp(S − L)                          the block of weights, recomputed
    dV_j += Pᵀ dO_i
    dP = dO_i V_jᵀ
    dS = P ⊙ (dP − D_i),  D = rowsum(dO ⊙ O)   (Σ_j dP_j P_j = dO · O for each row)
    dQ_i += scale · dS K_j,   dK_j += scale · dSᵀ Q_i

Here ``m`` (the row's largest score) and ``log l`` are kept apart and ``P = exp((S − m) − log l)``:
``L`` rounded to the dtype would lose ``u·|m|`` (u the unit roundoff, 2⁻²⁴ in float32), so weights
recomputed from it are off by 10 % at scores of 2·10⁶ in float32 and wrong at 10¹⁶ in float64,
while ``S − m`` is as exact as the scores themselves.

It does the score products twice (once forward, once backward) to hold ``O(n·d)`` memory
instead of ``O(n²)``: more arithmetic, far less memory traffic.

It gives the gradients of :func:`attnlib.backward.attention_backward`, whose NumPy twin opens
:mod:`attnlib.backward`:

>>> import numpy as np
>>> from attnlib.backward import attention_backward
>>> Q, K, V, dO = np.random.default_rng(0).normal(size=(4, 6, 3))
>>> tiled = tiled_attention_backward(Q, K, V, dO, block_q=2, block_k=4)
>>> [bool(np.allclose(a, b)) for a, b in zip(tiled, attention_backward(Q, K, V, dO))]
[True, True, True]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnlib.efficient import BLOCK_K, BLOCK_Q, tiled_attention_with_statistics
from attnlib.validation import as_flag, as_positive_int, as_real_array

__all__ = ["tiled_attention_backward"]


def tiled_attention_backward(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    d_output: npt.ArrayLike,
    *,
    causal: bool = False,
    scale: float | None = None,
    block_q: int = BLOCK_Q,
    block_k: int = BLOCK_K,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of ``sum(output * d_output)`` with respect to Q, K and V, tile by tile.

    Lesson 12 · 6. What FlashAttention adds.

    The same result as ``attnlib.backward.attention_backward(Q, K, V, d_output, causal=causal,
    scale=scale)``, holding one ``block_q × block_k`` block of weights at a time. The loop runs
    over key blocks outside and query blocks inside (each key block's ``dK_j`` and ``dV_j`` stay
    in place while the query blocks stream past), and skips the blocks a causal mask hides.

    Parameters
    ----------
    Q : (..., n_q, d_k)
    K : (..., n_k, d_k)
    V : (..., n_k, d_v)
        Q, K and V share their leading (batch, head) dimensions.
    d_output : (..., n_q, d_v)
        The gradient of the loss with respect to the output.
    causal : bool
    scale : float, optional
        Defaults to ``1/√d_k``.
    block_q, block_k : int
        Queries and keys per block.

    Returns
    -------
    dQ, dK, dV : numpy.ndarray
        Shaped like Q, K and V.
    """
    arrays = [as_real_array(x, name) for x, name in ((Q, "Q"), (K, "K"), (V, "V"), (d_output, "d_output"))]
    if any(a.ndim < 2 for a in arrays) or len({a.shape[:-2] for a in arrays}) != 1:
        shapes = ", ".join(
            f"{name} {a.shape}" for name, a in zip(("Q", "K", "V", "d_output"), arrays, strict=True)
        )
        raise ValueError(
            f"Q, K, V and d_output must be (..., n, d) with the same leading dimensions, got {shapes}"
        )
    causal = as_flag(causal, "causal")
    bq, bk = as_positive_int(block_q, "block_q"), as_positive_int(block_k, "block_k")
    output, row_max, log_l = tiled_attention_with_statistics(
        *arrays[:3], block_q=bq, block_k=bk, causal=causal, scale=scale
    )
    # checks Q, K, V and scale as the forward pass does
    q, k, v = (a.astype(output.dtype, copy=False) for a in arrays[:3])
    d_out = arrays[3].astype(output.dtype, copy=False)
    if d_out.shape != output.shape:
        raise ValueError(f"d_output must have the output's shape {output.shape}, got shape {d_out.shape}")
    factor = 1.0 / np.sqrt(q.shape[-1]) if scale is None else float(scale)
    n_q, n_k = q.shape[-2], k.shape[-2]
    row_dot = np.sum(d_out * output, axis=-1, keepdims=True)  # D = rowsum(dO ⊙ O), (..., n_q, 1)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)[..., None]  # a row with no key: P = 0
    log_l = np.where(np.isneginf(log_l), np.inf, log_l)[..., None]
    dQ, dK, dV = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for j0 in range(0, n_k, bk):
        j1 = min(j0 + bk, n_k)
        for i0, i1 in _query_blocks(n_q, bq, j0, causal):
            s = (q[..., i0:i1, :] * factor) @ np.swapaxes(k[..., j0:j1, :], -1, -2)  # the scores, again
            if causal:  # query i sees keys 0 … i
                above = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
                s[..., above] = -np.inf
            s -= row_max[..., i0:i1, :]  # s − m: as exact as the scores, however large m is
            p = np.exp(s - log_l[..., i0:i1, :])  # the weights, again
            dV[..., j0:j1, :] += np.swapaxes(p, -1, -2) @ d_out[..., i0:i1, :]
            dp = d_out[..., i0:i1, :] @ np.swapaxes(v[..., j0:j1, :], -1, -2)
            ds = p * (dp - row_dot[..., i0:i1, :]) * factor
            dQ[..., i0:i1, :] += ds @ k[..., j0:j1, :]
            dK[..., j0:j1, :] += np.swapaxes(ds, -1, -2) @ q[..., i0:i1, :]
    return dQ, dK, dV


def _query_blocks(n_q: int, bq: int, j0: int, causal: bool) -> list[tuple[int, int]]:
    """The query blocks a key block starting at ``j0`` meets; under causal, those reaching key ``j0``."""
    blocks = [(i0, min(i0 + bq, n_q)) for i0 in range(0, n_q, bq)]
    return [(i0, i1) for i0, i1 in blocks if not causal or i1 - 1 >= j0]
