"""Scaled dot-product attention, one step at a time.

    Attention(Q, K, V) = softmax(Q Kᵀ · scale + mask) V,   scale = 1 / √d_k

Shapes follow the transformer papers: ``Q : (..., n_q, d_k)``, ``K : (..., n_k, d_k)``,
``V : (..., n_k, d_v)``; the result is ``(..., n_q, d_v)`` and the weights ``(..., n_q, n_k)``.
Leading batch dimensions broadcast. A single query ``Q : (d_k,)`` gives ``(..., d_v)`` and
``(..., n_k)``.

Every step is its own function (:func:`raw_scores`, :func:`scale_scores`, :func:`apply_mask`,
:func:`softmax`) so that lessons can show each one; :func:`attention_steps` runs them all
once and keeps every intermediate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib._validate import as_positive_int, as_real_array, as_scale

__all__ = [
    "AttentionSteps",
    "apply_mask",
    "attention_steps",
    "causal_mask",
    "default_scale",
    "raw_scores",
    "scale_scores",
    "scaled_dot_product_attention",
    "softmax",
]


def softmax(x: npt.ArrayLike, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

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
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis {axis} is out of range for x of shape {arr.shape}")
    return _softmax(arr, int(axis))


def _softmax(arr: np.ndarray, axis: int) -> np.ndarray:
    """Softmax of an already validated array (no NaN, no +inf)."""
    if arr.shape[axis] == 0:
        return np.zeros_like(arr)
    row_max = np.max(arr, axis=axis, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0, row_max)  # all -inf slice: keep exp at 0
    with np.errstate(over="ignore"):  # a spread beyond the float range gives -inf, i.e. exp 0
        exps = np.exp(arr - row_max)
    sums = np.sum(exps, axis=axis, keepdims=True)
    return np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)


def default_scale(d_k: int) -> float:
    """The transformer's scale ``1 / √d_k``, as a Python float.

    A Python float keeps float32 arrays float32 when multiplied (a NumPy float64 scalar would
    silently promote the whole computation to float64 under NumPy 2).
    """
    return 1.0 / math.sqrt(as_positive_int(d_k, "d_k"))


def raw_scores(Q: npt.ArrayLike, K: npt.ArrayLike) -> np.ndarray:
    """Dot product of every query with every key: ``Q Kᵀ``.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k) or (d_k,)
    K : array_like, shape (..., n_k, d_k)

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k), or (..., n_k) for a single query
        Entry ``[i, j]`` is ``Q[i] · K[j]``.
    """
    q, k, single = _check_qk(Q, K)
    scores = _matmul_checked(q, np.swapaxes(k, -1, -2), "raw scores Q Kᵀ")
    return scores[..., 0, :] if single else scores


def scale_scores(scores: npt.ArrayLike, scale: float) -> np.ndarray:
    """Multiply scores by ``scale`` (``1/√d_k`` in the transformer; a temperature in general).

    Parameters
    ----------
    scores : array_like, shape (..., n_q, n_k)
    scale : float
        Finite real number; see :func:`default_scale`. Positive when ``scores`` hold ``-inf``.
    """
    arr = as_real_array(scores, "scores", allow_neg_inf=True)
    factor = as_scale(scale)
    if np.isneginf(arr).any() and factor <= 0:
        raise ValueError(
            f"scale must be positive when the scores contain -inf (masked entries), got {factor}"
        )
    return _scaled_checked(arr, factor)


def _scaled_checked(scores: np.ndarray, factor: float) -> np.ndarray:
    """``scores * factor`` that raises a clear error where a finite score overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = scores * factor
    finite = np.isfinite(scores)
    if not np.isfinite(scaled[finite]).all():
        largest = np.abs(scores[finite]).max()
        raise ValueError(
            f"scaling the scores by {factor} overflows {scaled.dtype} (largest |score| {largest:.3g})"
        )
    return scaled


def causal_mask(n_q: int, n_k: int | None = None) -> np.ndarray:
    """Boolean causal mask: query ``i`` may attend to keys ``0..i`` (top-left aligned).

    Parameters
    ----------
    n_q : int
        Number of queries.
    n_k : int, optional
        Number of keys; defaults to ``n_q``.

    Returns
    -------
    numpy.ndarray of bool, shape (n_q, n_k)
        Lower-triangular: ``True`` where attending is allowed, as PyTorch's ``is_causal``.
    """
    rows = as_positive_int(n_q, "n_q", minimum=0)
    cols = rows if n_k is None else as_positive_int(n_k, "n_k", minimum=0)
    return np.tri(rows, cols, dtype=bool)


def apply_mask(scores: npt.ArrayLike, mask: npt.ArrayLike) -> np.ndarray:
    """Apply a boolean or additive mask to (scaled) scores, before the softmax.

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
    return _apply_mask(arr, _check_mask(mask, arr.shape, arr.dtype))


def _apply_mask(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    if mask.dtype == bool:
        return np.where(mask, scores, -np.inf).astype(scores.dtype, copy=False)
    with np.errstate(over="ignore"):  # a sum below the float range is -inf: hidden, as meant
        masked = scores + mask
    if np.isposinf(masked).any():
        raise ValueError(
            f"adding the mask to the scores overflows {masked.dtype} (largest mask entry "
            f"{np.max(mask):.3g}, largest score {np.max(scores):.3g}); use 0 to keep and -inf to hide"
        )
    return masked


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of one attention computation.

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

    Same arguments as :func:`scaled_dot_product_attention`.

    Returns
    -------
    AttentionSteps
        Raw scores, the scale, scaled scores, masked scores, weights and output.
    """
    q, k, single = _check_qk(Q, K)
    v = as_real_array(V, "V")
    if v.ndim < 2:
        raise ValueError(f"V must have shape (..., n_k, d_v), got shape {v.shape}")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"K and V must have the same number of keys n_k: K has shape {k.shape} "
            f"(n_k={k.shape[-2]}), V has shape {v.shape} (n_k={v.shape[-2]})"
        )
    _broadcast_batch(("Q", q.shape), ("K", k.shape), ("V", v.shape))
    dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    q, k, v = q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)
    factor = default_scale(q.shape[-1]) if scale is None else as_scale(scale)

    raw = _matmul_checked(q, np.swapaxes(k, -1, -2), "raw scores Q Kᵀ")
    scaled = _scaled_checked(raw, factor)

    masked = scaled
    if mask is not None:
        masked = _apply_mask(masked, _check_mask(mask, scaled.shape, dtype, single=single))
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    if causal:
        masked = _apply_mask(masked, causal_mask(q.shape[-2], k.shape[-2]))

    weights = _softmax(masked, -1)
    output = _matmul_checked(weights, v, "output weights @ V")
    if single:
        raw, scaled, masked = raw[..., 0, :], scaled[..., 0, :], masked[..., 0, :]
        weights, output = weights[..., 0, :], output[..., 0, :]
    return AttentionSteps(raw, factor, scaled, masked, weights, output)


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


def _check_qk(Q: npt.ArrayLike, K: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate queries and keys; return them (a single query as one row) and whether it was."""
    q = as_real_array(Q, "Q")
    k = as_real_array(K, "K")
    if k.ndim < 2:
        raise ValueError(f"K must have shape (..., n_k, d_k), got shape {k.shape}")
    if k.shape[-2] == 0:
        raise ValueError(f"K has no keys (shape {k.shape}): attention needs at least one key")
    single = q.ndim == 1
    if single:
        q = q[np.newaxis, :]
    if q.shape[-1] != k.shape[-1]:
        given = q.shape[1:] if single else q.shape
        raise ValueError(
            f"Q and K must have the same last dimension d_k: Q has shape {given} "
            f"(d_k={q.shape[-1]}), K has shape {k.shape} (d_k={k.shape[-1]})"
        )
    if q.shape[-1] == 0:
        raise ValueError(f"d_k is 0 (Q has shape {q.shape}): queries and keys need at least one dimension")
    _broadcast_batch(("Q", q.shape), ("K", k.shape))
    dtype = np.result_type(q.dtype, k.dtype)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), single


def _broadcast_batch(*named_shapes: tuple[str, tuple[int, ...]]) -> tuple[int, ...]:
    """Broadcast the leading (batch) dimensions, or raise naming every shape."""
    try:
        return np.broadcast_shapes(*(shape[:-2] for _, shape in named_shapes))
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in named_shapes)
        raise ValueError(f"the batch dimensions (all but the last two) do not broadcast: {listed}") from None


def _check_mask(
    mask: npt.ArrayLike, weights_shape: tuple[int, ...], dtype: np.dtype, *, single: bool = False
) -> np.ndarray:
    """Validate a boolean or additive mask against the weights' shape."""
    if mask is None:
        raise TypeError("mask is None; pass a boolean or float array")
    try:
        arr = np.asarray(mask)
    except ValueError as exc:
        raise ValueError("mask is ragged: its rows have different lengths") from exc
    public_shape = weights_shape[:-2] + weights_shape[-1:] if single else weights_shape
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"mask has NaN entries (shape {arr.shape}); use 0 to keep and -inf to hide")
        if np.isposinf(arr).any():
            raise ValueError(f"mask has +inf entries (shape {arr.shape}); use 0 to keep and -inf to hide")
        with np.errstate(over="ignore"):  # float64 → float32: beyond the range becomes ±inf
            cast = arr.astype(dtype, copy=False)
        if np.isposinf(cast).any():
            raise ValueError(f"mask has entries too large for {np.dtype(dtype)} (largest {np.max(arr):.3g})")
        arr = cast
    elif arr.dtype != bool:
        raise TypeError(
            f"mask must be boolean (True = may attend) or float (added: 0 or -inf), got dtype {arr.dtype}"
        )
    if single and arr.ndim >= 1:  # a single query's mask is (..., n_k): give it the n_q axis
        arr = arr[..., np.newaxis, :]
    try:
        fits = np.broadcast_shapes(arr.shape, weights_shape) == weights_shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask of shape {np.shape(mask)} does not broadcast to the attention weights' shape "
            f"{public_shape} (..., n_q, n_k)"
        )
    return arr


def _matmul_checked(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``a @ b`` that raises a clear error instead of warning about overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        product = np.matmul(a, b)
    if not np.isfinite(product).all():
        raise ValueError(
            f"the {what} overflow {product.dtype}: the inputs are too large "
            f"(largest |entry| {np.abs(a).max():.3g} and {np.abs(b).max():.3g})"
        )
    return product
