"""The gradients of attention, written out step by step.

The forward pass (lessons 03–06), with ``A`` the weights and ``Z`` the output::

    S = Q Kᵀ · scale  (+ mask)      A = softmax(S) over the keys      Z = A V

Given ``dZ``, the gradient of some loss with respect to ``Z``, the chain rule runs backwards::

    dV = Aᵀ dZ                                  (n_k, d_v): each value collects the queries' pull
    dA = dZ Vᵀ                                  (n_q, n_k)
    dS = A ⊙ (dA − rowsum(dA ⊙ A))              the softmax's vector–Jacobian product (lesson 04's J)
    dQ = dS K · scale,   dK = dSᵀ Q · scale     (the scale, then the product Q Kᵀ)

A masked key has weight 0, so ``dS`` is 0 there and it gets no gradient; an additive mask is a
constant and has none; a query that sees no key contributes nothing.

The same chain rule in NumPy (lesson 11 · 1. Gradients by hand, step by step), one line a step,
gives the same gradients as :func:`attention_backward`:

>>> import numpy as np
>>> Q, K, V, dZ = np.random.default_rng(0).normal(size=(4, 3, 2))  # 3 tokens, d = 2
>>> S = Q @ K.T / np.sqrt(2)
>>> A = np.exp(S - S.max(axis=-1, keepdims=True))
>>> A = A / A.sum(axis=-1, keepdims=True)
>>> dV, dA = A.T @ dZ, dZ @ V.T
>>> dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
>>> dQ, dK = dS @ K / np.sqrt(2), dS.T @ Q / np.sqrt(2)
>>> [bool(np.allclose(a, b)) for a, b in zip(attention_backward(Q, K, V, dZ), (dQ, dK, dV))]
[True, True, True]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnlib.core import AttentionSteps, attention_steps
from attnlib.validation import as_distributions, as_real_array

__all__ = ["attention_backward", "softmax_backward", "steps_backward"]


def softmax_backward(weights: np.ndarray, d_weights: np.ndarray) -> np.ndarray:
    """The vector–Jacobian product of the softmax over the last axis.

    Lesson 11 · 1. Gradients by hand, step by step.

    Parameters
    ----------
    weights : (..., n)
        ``softmax(s)``, the forward result.
    d_weights : (..., n)
        The gradient with respect to the weights.

    Returns
    -------
    (..., n)
        The gradient with respect to the scores: ``A ⊙ (dA − Σ_j dA_j A_j)``, which is
        ``J dA`` with the softmax's Jacobian ``J = diag(A) − A Aᵀ``.

    Raises
    ------
    ValueError
        If ``weights`` are not distributions (entries in [0, 1], each row summing to 1, or all
        zero for a fully masked row): the usual slip is passing the scores instead, or if the
        shapes differ.
    """
    A = as_distributions(weights, "weights")
    dA = as_real_array(d_weights, "d_weights")
    if dA.shape != A.shape:
        raise ValueError(f"d_weights must have the weights' shape {A.shape} (..., n), got shape {dA.shape}")
    return _softmax_backward(A, dA.astype(np.result_type(A.dtype, dA.dtype), copy=False))


def _softmax_backward(A: np.ndarray, dA: np.ndarray) -> np.ndarray:
    """:func:`softmax_backward` of checked weights and gradient."""
    return A * (dA - np.sum(dA * A, axis=-1, keepdims=True))


def attention_backward(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    d_output: npt.ArrayLike,
    *,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of ``sum(output * d_output)`` with respect to ``Q``, ``K`` and ``V``.

    Lesson 11 · 1. Gradients by hand, step by step.

    ``output`` is ``scaled_dot_product_attention(Q, K, V, mask=mask, causal=causal,
    scale=scale)[0]``; the arguments mean the same as there.

    Parameters
    ----------
    Q : (..., n_q, d_k) or (d_k,)
    K : (..., n_k, d_k)
    V : (..., n_k, d_v)
    d_output : same shape as the output, (..., n_q, d_v) or (..., d_v) for a single query
        The gradient of the loss with respect to the output.
    mask, causal, scale
        As in :func:`attnlib.scaled_dot_product_attention`.

    Returns
    -------
    dQ, dK, dV : numpy.ndarray
        Shaped like ``Q``, ``K`` and ``V``. Where an input was broadcast over batch dimensions,
        its gradient is summed over them.
    """
    steps = attention_steps(Q, K, V, mask=mask, causal=causal, scale=scale)  # checks Q, K, V, mask, scale
    q, k, v = (np.asarray(x, dtype=steps.output.dtype) for x in (Q, K, V))
    dZ = as_real_array(d_output, "d_output").astype(steps.output.dtype, copy=False)
    if dZ.shape != steps.output.shape:
        raise ValueError(
            f"d_output must have the output's shape {steps.output.shape} (..., n_q, d_v), "
            f"got shape {dZ.shape}"
        )
    return steps_backward(steps, q, k, v, dZ)


def steps_backward(
    steps: AttentionSteps, Q: np.ndarray, K: np.ndarray, V: np.ndarray, d_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`attention_backward` from a forward pass already computed; it trusts its arguments.

    Lesson 11 · 1. Gradients by hand, step by step.

    Parameters
    ----------
    steps : AttentionSteps
        ``attention_steps(Q, K, V, ...)``: its weights and scale are used.
    Q, K, V : numpy.ndarray
        The arrays ``steps`` was computed from, in the dtype of ``steps.output``.
    d_output : numpy.ndarray, the shape of ``steps.output``

    Returns
    -------
    dQ, dK, dV : numpy.ndarray
        As :func:`attention_backward`'s.
    """
    single = Q.ndim == 1
    A = steps.weights[..., None, :] if single else steps.weights  # (..., n_q, n_k)
    dZ = d_output[..., None, :] if single else d_output  # (..., n_q, d_v)
    q_rows = Q[None, :] if single else Q  # (n_q = 1, d_k) for a single query

    dV = np.swapaxes(A, -1, -2) @ dZ  # Aᵀ dZ: (..., n_k, d_v)
    dA = dZ @ np.swapaxes(V, -1, -2)  # dZ Vᵀ: (..., n_q, n_k)
    dS = _softmax_backward(A, dA)  # through the softmax (masked entries: A = 0, so 0)
    d_raw = dS * steps.scale  # through the scale
    dQ = d_raw @ K  # (..., n_q, d_k)
    dK = np.swapaxes(d_raw, -1, -2) @ q_rows  # (..., n_k, d_k)

    if single:
        dQ = dQ[..., 0, :]
    return _sum_to(dQ, Q.shape), _sum_to(dK, K.shape), _sum_to(dV, V.shape)


def _sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the dimensions that broadcasting added to or stretched in ``shape``."""
    extra = grad.ndim - len(shape)
    summed = grad.sum(axis=tuple(range(extra))) if extra else grad
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and summed.shape[i] != 1)
    return summed.sum(axis=stretched, keepdims=True) if stretched else summed
