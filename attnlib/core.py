"""Scaled dot-product attention, one step at a time.

    Attention(Q, K, V) = softmax(Q Kᵀ · scale + mask) V,   scale = 1 / √d_k

Shapes follow the transformer papers: ``Q : (..., n_q, d_k)``, ``K : (..., n_k, d_k)``,
``V : (..., n_k, d_v)``; the result is ``(..., n_q, d_v)`` and the weights ``(..., n_q, n_k)``.
Leading batch dimensions broadcast. A single query ``Q : (d_k,)`` gives ``(..., d_v)`` and
``(..., n_k)``.

Every step is its own function (:func:`raw_scores`, :func:`scale_scores`, :func:`apply_mask`,
:func:`softmax`, :func:`weighted_sum`) so that lessons can show each one; each checks what a
learner passes it. :func:`attention_steps` checks its arguments once, at the door, then runs the
same steps unchecked, in order, and keeps every intermediate.

The same computation in eight lines of NumPy (lesson 07), without the argument checks, gives the
same numbers:

>>> import numpy as np
>>> def attention(Q, K, V, mask=None):
...     scores = Q @ np.swapaxes(K, -1, -2)                    # (..., n_q, n_k): every query · every key
...     scores = scores / np.sqrt(Q.shape[-1])                 # scale by 1/√d_k
...     if mask is not None:
...         scores = np.where(mask, scores, -np.inf)           # mask: True = may attend
...     scores = scores - scores.max(axis=-1, keepdims=True)   # stable softmax over the keys (lesson 05)
...     weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)  # (..., n_q, n_k)
...     return weights @ V, weights                            # (..., n_q, d_v), (..., n_q, n_k)
>>> Q = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])   # two queries, d_k = 4
>>> V = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
>>> output, weights = attention(Q, Q, V)                           # the keys are the queries
>>> weights.round(4)
array([[0.7311, 0.2689],
       [0.2689, 0.7311]])
>>> output.round(4)
array([[2.0758, 3.0758, 4.0758, 5.0758],
       [3.9242, 4.9242, 5.9242, 6.9242]])
>>> steps = attention_steps(Q, Q, V)
>>> bool(np.allclose(steps.weights, weights) and np.allclose(steps.output, output))
True
>>> causal = np.tri(2, dtype=bool)                                 # query i sees keys 0..i
>>> bool(np.allclose(attention(Q, Q, V, causal)[0], attention_steps(Q, Q, V, causal=True).output))
True
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.validation import (
    AttentionArguments,
    all_finite,
    as_axis,
    as_distributions,
    as_mask,
    as_positive_int,
    as_queries_keys,
    as_real,
    as_real_array,
    as_rows,
    as_values,
    attention_arguments,
    broadcast_batch,
)

__all__ = [
    "AttentionArguments",
    "AttentionSteps",
    "apply_mask",
    "attention_arguments",
    "attention_steps",
    "attention_steps_of",
    "causal_mask",
    "default_scale",
    "entropy",
    "raw_scores",
    "scale_scores",
    "scaled_dot_product_attention",
    "softmax",
    "weighted_sum",
    "window_rule",
]


def softmax(x: npt.ArrayLike, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Lesson 05 · 3. The stability trick: subtract the row maximum.

    Subtracts each slice's maximum before ``exp`` (the result is the same, but ``exp`` never
    overflows). A slice that is entirely ``-inf`` (every key masked) gives all zeros, not NaN.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Scores. ``-inf`` means "excluded"; NaN and ``+inf`` are rejected.
    axis : int
        The axis that becomes a probability distribution (the keys axis, ``-1``, in attention).

    Returns
    -------
    numpy.ndarray, same shape as ``x``
        Non-negative values that sum to 1 along ``axis`` (or to 0 where all of ``x`` is ``-inf``).
    """
    arr = as_real_array(x, "x", allow_neg_inf=True)
    axis = as_axis(axis, arr.shape, "x")
    with np.errstate(over="ignore", invalid="ignore"):  # see _softmax
        return _softmax(arr, axis)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """:func:`softmax` of checked scores, under ``np.errstate(over="ignore", invalid="ignore")``.

    A spread beyond the float range gives ``exp(-inf) = 0``; an all ``-inf`` slice gives NaN
    (``-inf − -inf``), whose sum is not ``> 0``, so that slice is left at zero.
    """
    row_max = x.max(axis=axis, keepdims=True, initial=-np.inf)  # -inf for an empty slice
    exps = np.exp(x - row_max)
    sums = exps.sum(axis=axis, keepdims=True)
    return np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)


def entropy(weights: npt.ArrayLike, axis: int = -1) -> np.ndarray:
    """Entropy ``-Σ p log p`` (in nats) of probability distributions along ``axis``: how spread
    attention weights are (lesson 04 · 3. Big scores saturate the softmax).

    ``log(n)`` for uniform weights over ``n`` keys, 0 when all weight is on one key (and 0 for a
    row of zeros: a query whose every key is masked).

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Probabilities: entries in [0, 1] that sum to 1 along ``axis``, such as softmax outputs.
    axis : int
        The axis along which each distribution lies.

    Returns
    -------
    numpy.ndarray, shape (...)
        The weights' shape without ``axis``.

    Examples
    --------
    >>> float(entropy([0.5, 0.5]))  # log 2
    0.6931471805599453
    """
    p = as_distributions(weights, axis=axis)
    terms = np.zeros_like(p)
    np.multiply(p, np.log(p, where=p > 0, out=np.zeros_like(p)), out=terms, where=p > 0)
    return 0.0 - terms.sum(axis=axis)  # not -sum: a sum of zeros would print as -0.000


def default_scale(d_k: int) -> float:
    """The transformer's scale ``1 / √d_k``, as a Python float.

    Lesson 04 · 1. The claim: Var(q · k) = d_k.

    A Python float keeps float32 arrays float32 when multiplied (a NumPy float64 scalar would
    silently promote the whole computation to float64 under NumPy 2).
    """
    d_k = as_positive_int(d_k, "d_k")
    if d_k > sys.float_info.max:
        raise ValueError(f"d_k is too large for a float (an integer of {len(str(d_k))} digits)")
    return 1.0 / math.sqrt(d_k)


def raw_scores(Q: npt.ArrayLike, K: npt.ArrayLike) -> np.ndarray:
    """Dot product of every query with every key: ``Q Kᵀ``.

    Lesson 03 · 1. The formula.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k) or (d_k,)
    K : array_like, shape (..., n_k, d_k)

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k), or (..., n_k) for a single query
        Entry ``[i, j]`` is ``Q[i] · K[j]``.
    """
    q, k, single = as_queries_keys(Q, K)
    scores = _matmul_checked(q, np.swapaxes(k, -1, -2), "raw scores Q Kᵀ")
    return scores[..., 0, :] if single else scores


def scale_scores(scores: npt.ArrayLike, scale: float) -> np.ndarray:
    """Multiply scores by ``scale`` (``1/√d_k`` in the transformer; a temperature in general).

    Lesson 04 · 5. Scale the scores, not the weights.

    Parameters
    ----------
    scores : array_like, shape (..., n_q, n_k)
    scale : float
        Finite real number; see :func:`default_scale`. Positive when ``scores`` hold ``-inf``.

    Returns
    -------
    numpy.ndarray, same shape as ``scores``
    """
    arr = as_real_array(scores, "scores", allow_neg_inf=True)
    factor = as_real(scale, "scale", example="0.5")
    if np.isneginf(arr).any() and factor <= 0:
        raise ValueError(
            f"scale must be positive when the scores contain -inf (masked entries), got {factor}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = arr * factor
    finite = np.isfinite(arr)
    if not np.isfinite(scaled[finite]).all():
        raise _scale_overflow(arr[finite], factor, scaled.dtype)
    return scaled


def causal_mask(n_q: int, n_k: int | None = None, *, window: int | None = None, sinks: int = 0) -> np.ndarray:
    """Boolean causal mask: query ``i`` may attend to keys ``0..i`` (top-left aligned).

    Lesson 05 · 7. The causal mask (windows and sinks: lesson 15 · 4).

    With a ``window``, query ``i`` sees only the keys ``i − window + 1 … i`` (a sliding window,
    as Mistral's), plus the first ``sinks`` keys (the "attention sinks" of StreamingLLM, Xiao et
    al. 2023, arXiv:2309.17453), never a key after ``i``::

        mask[i, j] = j ≤ i  and  (window is None  or  j > i − window  or  j < sinks)

    Parameters
    ----------
    n_q : int
        Number of queries.
    n_k : int, optional
        Number of keys; defaults to ``n_q``. Rows and columns are aligned at the top left:
        query ``i`` is at position ``i``, whatever ``n_k`` is (as PyTorch's ``is_causal``). For
        queries that come after a prefix (the last ``n_q`` of ``n_k`` positions, as with a KV
        cache) take the last rows of the square mask: ``causal_mask(n_k, window=w)[-n_q:]``.
    window : int, optional
        How many of the latest positions each query sees, itself included (at least 1);
        None (the default) sees every earlier key.
    sinks : int
        How many of the first keys every query sees as well (at least 0). They only change the
        mask together with a ``window``; without one every earlier key is seen anyway.

    Returns
    -------
    numpy.ndarray of bool, shape (n_q, n_k)
        ``True`` where attending is allowed; lower-triangular without a window.

    Examples
    --------
    >>> causal_mask(5, window=2, sinks=1).astype(int)
    array([[1, 0, 0, 0, 0],
           [1, 1, 0, 0, 0],
           [1, 1, 1, 0, 0],
           [1, 0, 1, 1, 0],
           [1, 0, 0, 1, 1]])
    """
    rows = as_positive_int(n_q, "n_q", minimum=0)
    cols = rows if n_k is None else as_positive_int(n_k, "n_k", minimum=0)
    width = None if window is None else as_positive_int(window, "window")
    first = as_positive_int(sinks, "sinks", minimum=0)
    if width is not None and width >= rows:  # a window of n_q or more hides nothing
        width = None
    try:
        return window_rule(np.arange(rows), np.arange(cols), width, min(first, cols))
    except (ValueError, MemoryError) as exc:  # numpy: "Maximum allowed size exceeded"
        raise ValueError(f"a causal mask of n_q={rows} by n_k={cols} is too large to build ({exc})") from None


def window_rule(
    query_positions: np.ndarray, key_positions: np.ndarray, window: int | None, sinks: int
) -> np.ndarray:
    """The causal rule with a window and sinks, on positions; it trusts its arguments.

    Lesson 15 · 4. Past the trained context: windows and sinks.

    ``(n_q, n_k)`` bool: the query at position ``i`` sees the key at position ``j`` when
    ``j ≤ i and (window is None or j > i − window or j < sinks)``. The one place the rule is
    written: :func:`causal_mask` (positions ``0 … n − 1``), :func:`attnlib.decoder.visible_keys`,
    the rolling :class:`attnlib.decoder.KVCache` and :func:`attnlib.model.llama.forward` apply it.

    ``query_positions (n_q,)`` and ``key_positions (n_k,)`` are int arrays; ``window`` is None or
    at least 1 and ``sinks`` at least 0, both small enough that ``i − window`` is an int64.
    """
    i, j = query_positions[:, None], key_positions[None, :]
    seen = j <= i
    return seen if window is None else seen & ((j > i - window) | (j < sinks))


@functools.lru_cache(maxsize=8)
def _causal_mask(n_q: int, n_k: int) -> np.ndarray:
    """:func:`causal_mask`, built once per shape and shared, read-only (``np.tri`` takes longer
    than the rest of a small attention)."""
    mask = np.tri(n_q, n_k, dtype=bool)
    mask.flags.writeable = False
    return mask


def apply_mask(scores: npt.ArrayLike, mask: npt.ArrayLike) -> np.ndarray:
    """Apply a boolean or additive mask to (scaled) scores, before the softmax.

    Lesson 05 · 5. Masks: −∞ before the softmax.

    Parameters
    ----------
    scores : array_like, shape (..., n_q, n_k)
    mask : array_like, broadcastable to ``scores.shape``
        Boolean: ``True`` = this query may attend to this key; ``False`` entries become
        ``-inf``. Float: added to the scores (``0`` keeps, ``-inf`` removes).

    Returns
    -------
    numpy.ndarray, same shape as ``scores``
    """
    arr = as_real_array(scores, "scores", allow_neg_inf=True)
    checked = as_mask(mask, arr.shape, arr.dtype)
    with np.errstate(over="ignore"):  # a sum below the float range is -inf: hidden, as meant
        masked = _apply_mask(arr, checked)
    if np.isposinf(masked).any():
        raise _mask_overflow(arr, checked, masked.dtype)
    return masked


def _apply_mask(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:func:`apply_mask` with a checked mask."""
    if mask.dtype == bool:
        return np.where(mask, scores, -np.inf).astype(scores.dtype, copy=False)
    return scores + mask


def weighted_sum(weights: npt.ArrayLike, V: npt.ArrayLike) -> np.ndarray:
    """Each query's output: the values averaged with its weights, ``weights @ V``.

    Lesson 06 · 1. By hand: "she likes coffee".

    Parameters
    ----------
    weights : array_like, shape (..., n_q, n_k)
        One row of weights per query (the softmax of the scores).
    V : array_like, shape (..., n_k, d_v)
        One value vector per key.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, d_v)
        Row ``i`` is ``Σ_j weights[i, j] V[j]``.
    """
    w = as_rows(weights, "weights", "(..., n_q, n_k)")
    v = as_values(V, "weights", w.shape, n_k=w.shape[-1])
    broadcast_batch(("weights", w.shape), ("V", v.shape))
    dtype = np.promote_types(w.dtype, v.dtype)
    return _matmul_checked(w.astype(dtype, copy=False), v.astype(dtype, copy=False), "output weights @ V")


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of one attention computation.

    Lesson 07 · One computation, every intermediate.

    Shapes are those of a matrix of queries; a single query drops the ``n_q`` axis.

    Attributes
    ----------
    raw_scores : (..., n_q, n_k)
        ``Q Kᵀ``.
    scale : float
        The factor the scores were multiplied by (``1/√d_k`` unless given).
    scaled_scores : (..., n_q, n_k)
        ``raw_scores * scale``.
    masked_scores : (..., n_q, n_k)
        ``scaled_scores`` with the mask applied (``-inf`` where a key is hidden); equal to
        ``scaled_scores`` when there is no mask.
    weights : (..., n_q, n_k)
        ``softmax(masked_scores)`` over keys; each row sums to 1 (0 if every key is masked).
    output : (..., n_q, d_v)
        ``weights @ V``.
    """

    raw_scores: np.ndarray
    scale: float
    scaled_scores: np.ndarray
    masked_scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray


def attention_steps(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> AttentionSteps:
    """Scaled dot-product attention, keeping every intermediate.

    Lesson 07 · One computation, every intermediate.

    Same arguments as :func:`scaled_dot_product_attention`.

    Returns
    -------
    AttentionSteps
        Raw scores, the scale, scaled scores, masked scores, weights and output.
    """
    return attention_steps_of(attention_arguments(Q, K, V, mask, causal, scale), causal=bool(causal))


def attention_steps_of(arguments: AttentionArguments, *, causal: bool = False) -> AttentionSteps:
    """:func:`attention_steps` of arguments already checked; it trusts them.

    Lesson 07 · One computation, every intermediate: the body behind the door. A loop that calls
    attention many times on arrays it made itself (:func:`attnlib.decoder.generate`, one call per
    layer and token) checks once, where the learner called in, and calls this.

    Parameters
    ----------
    arguments : AttentionArguments
        From :func:`attention_arguments`, or built from arrays already checked: ``Q, K, V`` of
        one float dtype, ``(..., n_q, d_k)``, ``(..., n_k, d_k)``, ``(..., n_k, d_v)``, a boolean
        or additive mask broadcastable to ``(..., n_q, n_k)`` (or None) and the scale.
    causal : bool
        Also apply the lower-triangular mask.
    """
    Q, K, V, mask, scale, single = arguments
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below, not warned about
        raw = Q @ K.swapaxes(-1, -2)  # Q Kᵀ: every query · every key, (..., n_q, n_k)
        scaled = raw * scale  # · 1/√d_k unless another scale is given
        masked = scaled if mask is None else _apply_mask(scaled, mask)  # -inf where a key is hidden
        if causal:
            masked = _apply_mask(masked, _causal_mask(Q.shape[-2], K.shape[-2]))  # query i sees keys 0..i
        weights = _softmax(masked, axis=-1)  # over the keys: each row sums to 1
        output = weights @ V  # weights V, (..., n_q, d_v)
    _name_any_overflow(Q, K, raw, scale, scaled, masked, mask)

    if single:  # Q was one query (d_k,): drop the n_q axis again
        raw, scaled, masked, weights, output = (a[..., 0, :] for a in (raw, scaled, masked, weights, output))
    return AttentionSteps(raw, scale, scaled, masked, weights, output)


def scaled_dot_product_attention(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(Q Kᵀ · scale + mask) V``, returning the output and the attention weights.

    Lesson 07 · Attention in eight lines.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k) or (d_k,)
        Queries (a 1-D array is a single query).
    K : array_like, shape (..., n_k, d_k)
        Keys.
    V : array_like, shape (..., n_k, d_v)
        Values.
    mask : array_like, optional, broadcastable to (..., n_q, n_k)
        Boolean (``True`` = may attend, as PyTorch's boolean ``attn_mask``) or float (added to
        the scaled scores: ``0`` or ``-inf``).
    causal : bool
        Apply the lower-triangular mask: query ``i`` sees keys ``0..i``. Combines with ``mask``.
    scale : float, optional
        Multiplies the raw scores; defaults to ``1/√d_k``. ``scale=1.0`` is plain dot-product
        attention.

    Returns
    -------
    output : numpy.ndarray, shape (..., n_q, d_v), or (..., d_v) for a single query
    weights : numpy.ndarray, shape (..., n_q, n_k), or (..., n_k) for a single query
        Each row sums to 1; a query whose every key is masked gets zero weights and a zero
        output.

    Notes
    -----
    Integer inputs are computed in float64; float32 inputs stay float32.

    Examples
    --------
    >>> out, w = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1, 2], [3, 4]])
    >>> w.round(4)
    array([[0.6698, 0.3302]])
    """
    steps = attention_steps(Q, K, V, mask=mask, causal=causal, scale=scale)
    return steps.output, steps.weights


def _name_any_overflow(
    q: np.ndarray,
    k: np.ndarray,
    raw: np.ndarray,
    factor: float,
    scaled: np.ndarray,
    masked: np.ndarray,
    mask: np.ndarray | None,
) -> None:
    """Raise the error of the step of :func:`attention_steps` whose result left the float range, if any did.

    With finite inputs only three steps can: ``Q Kᵀ``, the scaling, and adding a float mask (a
    boolean mask and the softmax cannot; the weighted sum of finite values with weights that sum
    to 1 stays within them).
    """
    if not all_finite(scaled):
        if not all_finite(raw):
            raise _product_overflow("raw scores Q Kᵀ", raw, q, k)
        raise _scale_overflow(raw, factor, scaled.dtype)
    if mask is not None and mask.dtype != bool and (masked == np.inf).any():
        raise _mask_overflow(scaled, mask, scaled.dtype)


def _matmul_checked(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``a @ b`` that raises a clear error instead of warning about overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        product = a @ b
    if not all_finite(product):
        raise _product_overflow(what, product, a, b)
    return product


def _product_overflow(what: str, product: np.ndarray, a: np.ndarray, b: np.ndarray) -> ValueError:
    return ValueError(
        f"the {what} overflow {product.dtype}: the inputs are too large "
        f"(largest |entry| {np.abs(a).max():.3g} and {np.abs(b).max():.3g})"
    )


def _scale_overflow(scores: np.ndarray, factor: float, dtype: np.dtype) -> ValueError:
    return ValueError(
        f"scaling the scores by {factor} overflows {dtype} (largest |score| {np.abs(scores).max():.3g})"
    )


def _mask_overflow(scores: np.ndarray, mask: np.ndarray | None, dtype: np.dtype) -> ValueError:
    return ValueError(
        f"adding the mask to the scores overflows {dtype} (largest mask entry "
        f"{np.max(mask):.3g}, largest score {np.max(scores):.3g}); use 0 to keep and -inf to hide"
    )
