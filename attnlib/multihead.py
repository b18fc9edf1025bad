"""Multi-head attention: several attention heads side by side, then one output projection.

With row vectors times matrices, as in the other lessons::

    Q = X_q W_q,  K = X_kv W_k,  V = X_kv W_v            (..., n, n_heads·d)
    head_h = attention(Q_h, K_h, V_h)                    Q_h = columns h·d_k … (h+1)·d_k − 1 of Q
    output = concat(head_1, …, head_H) W_o               (..., n_q, d_out)

Grouped-query attention (GQA, Ainslie et al. 2023, arXiv:2305.13245) keeps fewer key/value heads
than query heads: ``W_k`` and ``W_v`` have ``n_kv_heads·d_k`` and ``n_kv_heads·d_v`` columns, and
query head ``h`` reads key/value head ``h // (n_heads // n_kv_heads)``, so each key/value head
serves a run of consecutive query heads (as PyTorch's ``scaled_dot_product_attention(...,
enable_gqa=True)``). ``n_kv_heads = 1`` is multi-query attention (MQA, Shazeer 2019);
``n_kv_heads = n_heads`` is plain multi-head attention.

Self-attention passes the same array as ``X_q`` and ``X_kv``; cross-attention passes queries from
one sequence (a decoder) and keys and values from another (an encoder). Each head is scaled by
``1/√d_k`` of its own width. :func:`split_heads` and :func:`merge_heads` are the reshapes that
turn the columns into heads and back.

The same computation in NumPy (lesson 09 · 2. The shapes: split, attend, merge), without the
argument checks, one head at a time, gives the same numbers:

>>> import numpy as np
>>> def softmax(s):
...     e = np.exp(s - s.max(axis=-1, keepdims=True))
...     return e / e.sum(axis=-1, keepdims=True)
>>> def heads(X, W_q, W_k, W_v, W_o, n_heads):
...     Q, K, V = X @ W_q, X @ W_k, X @ W_v                    # (n, n_heads·d)
...     d = Q.shape[-1] // n_heads
...     outputs = []
...     for h in range(n_heads):                              # head h: columns h·d … (h+1)·d − 1
...         cols = slice(h * d, (h + 1) * d)
...         A = softmax(Q[:, cols] @ K[:, cols].T / np.sqrt(d))  # (n, n)
...         outputs.append(A @ V[:, cols])                    # (n, d)
...     return np.concatenate(outputs, axis=-1) @ W_o         # concat(head_1, …, head_H) W_o
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(3, 4))                               # 3 tokens, d_model = 4
>>> W_q, W_k, W_v, W_o = rng.normal(size=(4, 4, 4))
>>> output, weights = multi_head_attention(X, X, W_q, W_k, W_v, W_o, n_heads=2)
>>> bool(np.allclose(output, heads(X, W_q, W_k, W_v, W_o, 2))), weights.shape
(True, (2, 3, 3))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from attnlib.core import scaled_dot_product_attention
from attnlib.validation import as_positive_int, as_real_array, as_rows

__all__ = [
    "MultiHeadArguments",
    "heads_attention",
    "merge_heads",
    "multi_head_arguments",
    "multi_head_attention",
    "split_heads",
]


def split_heads(X: npt.ArrayLike, n_heads: int) -> np.ndarray:
    """Cut the last axis into ``n_heads`` heads and move the heads before the tokens.

    Lesson 09 · 2. The shapes: split, attend, merge.

    Parameters
    ----------
    X : (..., n, n_heads·d)
    n_heads : int

    Returns
    -------
    (..., n_heads, n, d)
        Head ``h`` holds columns ``h·d … (h+1)·d − 1`` of ``X``.
    """
    arr = as_real_array(X, "X")
    heads = as_positive_int(n_heads, "n_heads")
    if arr.ndim < 2:
        raise ValueError(f"X must have shape (..., n, n_heads·d), got shape {arr.shape}")
    width = arr.shape[-1]
    if width % heads:
        raise ValueError(f"X's last dimension {width} does not divide into n_heads={heads} equal heads")
    return _split_heads(arr, heads)


def _split_heads(X: np.ndarray, n_heads: int) -> np.ndarray:
    """:func:`split_heads` of a checked array."""
    split = X.reshape(*X.shape[:-1], n_heads, X.shape[-1] // n_heads)  # (..., n, n_heads, d)
    return np.swapaxes(split, -2, -3)  # (..., n_heads, n, d)


def merge_heads(X: npt.ArrayLike) -> np.ndarray:
    """The inverse of :func:`split_heads`: concatenate the heads along the last axis.

    Lesson 09 · 2. The shapes: split, attend, merge.

    Parameters
    ----------
    X : (..., n_heads, n, d)

    Returns
    -------
    (..., n, n_heads·d)
    """
    arr = as_real_array(X, "X")
    if arr.ndim < 3:
        raise ValueError(f"X must have shape (..., n_heads, n, d), got shape {arr.shape}")
    return _merge_heads(arr)


def _merge_heads(X: np.ndarray) -> np.ndarray:
    """:func:`merge_heads` of a checked array."""
    tokens_first = np.swapaxes(X, -2, -3)  # (..., n, n_heads, d)
    *leading, n_heads, d = tokens_first.shape
    return tokens_first.reshape(*leading, n_heads * d)  # not -1: that cannot size an empty array


def multi_head_attention(
    X_q: npt.ArrayLike,
    X_kv: npt.ArrayLike,
    W_q: npt.ArrayLike,
    W_k: npt.ArrayLike,
    W_v: npt.ArrayLike,
    W_o: npt.ArrayLike,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    key_padding_mask: npt.ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention with an output projection; grouped-query with ``n_kv_heads``.

    Lesson 09 · 1. Why several heads: two relations at once (GQA: lesson 15 · 3).

    Parameters
    ----------
    X_q : (..., n_q, d_model)
        The sequence the queries come from.
    X_kv : (..., n_k, d_kv)
        The sequence the keys and values come from (``X_q`` itself for self-attention).
    W_q : (d_model, n_heads·d_k)
    W_k : (d_kv, n_kv_heads·d_k)
    W_v : (d_kv, n_kv_heads·d_v)
    W_o : (n_heads·d_v, d_out)
    n_heads : int
        Number of query heads.
    n_kv_heads : int, optional
        Number of key/value heads; it must divide ``n_heads``. Query head ``h`` reads key/value
        head ``h // (n_heads // n_kv_heads)``. None (the default) means ``n_heads``: one key/value
        head per query head; ``1`` is multi-query attention.
    mask : optional, broadcastable to (..., n_heads, n_q, n_k)
        Boolean (``True`` = may attend) or additive, as in
        :func:`attnlib.scaled_dot_product_attention`.
    causal : bool
        Query ``i`` sees keys ``0 … i`` in every head.
    key_padding_mask : (..., n_k) bool, optional
        ``True`` = a real token, ``False`` = padding that no query may attend to.

    Returns
    -------
    output : (..., n_q, d_out)
    weights : (..., n_heads, n_q, n_k)
        Each head's weights; a query whose every key is masked gets zeros (and a zero head output).
    """
    checked = multi_head_arguments(
        X_q,
        X_kv,
        W_q,
        W_k,
        W_v,
        W_o,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        mask=mask,
        key_padding_mask=key_padding_mask,
    )
    return heads_attention(checked, causal=causal)


def heads_attention(arguments: MultiHeadArguments, *, causal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`multi_head_attention` of arguments that are already checked; it trusts them.

    Lesson 09 · 2. The shapes: split, attend, merge.

    Parameters
    ----------
    arguments : MultiHeadArguments
        From :func:`multi_head_arguments`, or built from weights checked once, such as those of
        :mod:`attnlib.model` (checked when the model is loaded).
    causal : bool

    Returns
    -------
    output : (..., n_q, d_out)
    weights : (..., n_heads, n_q, n_k)
    """
    heads, xq, xkv, w, mask, kv_heads = arguments
    kv_heads = heads if kv_heads is None else kv_heads
    Q = _split_heads(xq @ w["W_q"], heads)  # (..., n_heads, n_q, d_k)
    K = _split_heads(xkv @ w["W_k"], kv_heads)  # (..., n_kv_heads, n_k, d_k)
    V = _split_heads(xkv @ w["W_v"], kv_heads)  # (..., n_kv_heads, n_k, d_v)
    if kv_heads != heads:  # grouped: key/value head g serves query heads g·group … (g+1)·group − 1
        group = heads // kv_heads
        K, V = np.repeat(K, group, axis=-3), np.repeat(V, group, axis=-3)  # (..., n_heads, n_k, d)
    heads_out, weights = scaled_dot_product_attention(Q, K, V, mask=mask, causal=causal)
    output = _merge_heads(heads_out) @ w["W_o"]  # (..., n_q, d_out)
    return output, weights


class MultiHeadArguments(NamedTuple):
    """The arguments of a multi-head call, checked: see :func:`multi_head_arguments`.

    Lesson 09 · 2. The shapes: split, attend, merge.

    ``n_kv_heads`` None means one key/value head per query head (``n_heads``).
    """

    n_heads: int
    X_q: np.ndarray
    X_kv: np.ndarray
    W: dict[str, np.ndarray]
    mask: np.ndarray | None
    n_kv_heads: int | None = None


def multi_head_arguments(
    X_q: npt.ArrayLike,
    X_kv: npt.ArrayLike,
    W_q: npt.ArrayLike,
    W_k: npt.ArrayLike,
    W_v: npt.ArrayLike,
    W_o: npt.ArrayLike,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    mask: npt.ArrayLike | None = None,
    key_padding_mask: npt.ArrayLike | None = None,
) -> MultiHeadArguments:
    """Every shape check of :func:`multi_head_attention`, before anything is computed: the door.

    Lesson 09 · 2. The shapes: split, attend, merge. :func:`attnlib.counting.counted_multi_head_attention`
    calls it too, so both reject the same.

    Returns
    -------
    MultiHeadArguments
        ``n_heads`` as an int, ``X_q`` and ``X_kv`` as float arrays, ``W`` (``"W_q"``, ``"W_k"``,
        ``"W_v"``, ``"W_o"`` as float matrices), one mask for every head: ``mask`` with the
        padded keys hidden too (its shape is checked against the weights' by the attention), and
        ``n_kv_heads`` as an int (None when not given).
    """
    heads = as_positive_int(n_heads, "n_heads")
    kv_heads = None if n_kv_heads is None else as_positive_int(n_kv_heads, "n_kv_heads")
    if kv_heads is not None and heads % kv_heads:
        raise ValueError(
            f"n_kv_heads={kv_heads} does not divide n_heads={heads}: each key/value head must serve "
            "the same number of query heads"
        )
    xq, xkv = as_rows(X_q, "X_q"), as_rows(X_kv, "X_kv")
    if xkv.shape[-2] == 0:
        raise ValueError(f"X_kv has no tokens (shape {xkv.shape}): attention needs at least one key")
    w = {name: as_real_array(m, name) for name, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o))}
    for name, m in w.items():
        if m.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {m.shape}")
    kv_label, kv_count = ("n_heads", heads) if kv_heads is None else ("n_kv_heads", kv_heads)
    for name, x_name, x, count, label in (
        ("W_q", "X_q", xq, heads, "n_heads"),
        ("W_k", "X_kv", xkv, kv_count, kv_label),
        ("W_v", "X_kv", xkv, kv_count, kv_label),
    ):
        if w[name].shape[0] != x.shape[-1]:
            raise ValueError(
                f"{name} must have one row per feature of {x_name}: {x_name} has shape {x.shape} "
                f"({x.shape[-1]} features), {name} has shape {w[name].shape}"
            )
        if w[name].shape[1] % count:
            raise ValueError(
                f"{name} has {w[name].shape[1]} columns, which do not divide into {label}={count} "
                f"equal heads (shape {w[name].shape})"
            )
    d_k, d_v = w["W_q"].shape[1] // heads, w["W_v"].shape[1] // kv_count
    if w["W_k"].shape[1] != kv_count * d_k:
        raise ValueError(
            f"W_q and W_k must give the same d_k per head: W_q has shape {w['W_q'].shape} "
            f"(n_heads={heads} heads of d_k={d_k}), W_k has shape {w['W_k'].shape} "
            f"({kv_label}={kv_count} heads of {w['W_k'].shape[1] // kv_count})"
        )
    if w["W_o"].shape[0] != heads * d_v:
        raise ValueError(
            f"W_o must have one row per column of the concatenated heads: W_v has shape "
            f"{w['W_v'].shape} (d_v={d_v}, n_heads·d_v = {heads * d_v}), W_o has shape {w['W_o'].shape}"
        )
    try:
        batch = np.broadcast_shapes(xq.shape[:-2], xkv.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch dimensions of X_q {xq.shape} and X_kv {xkv.shape} do not broadcast"
        ) from None
    combined = _with_padding(mask, key_padding_mask, n_k=xkv.shape[-2], batch=batch)
    return MultiHeadArguments(heads, xq, xkv, w, combined, kv_heads)


def _with_padding(
    mask: npt.ArrayLike | None,
    key_padding_mask: npt.ArrayLike | None,
    *,
    n_k: int,
    batch: tuple[int, ...],
) -> np.ndarray | None:
    """One mask for ``scaled_dot_product_attention``: ``mask`` with padded keys hidden too."""
    if key_padding_mask is None:
        return None if mask is None else np.asarray(mask)
    padding = np.asarray(key_padding_mask)
    if padding.dtype != bool:
        raise TypeError(
            "key_padding_mask must be boolean (True = a real token, False = padding), "
            f"got dtype {padding.dtype}"
        )
    if padding.ndim < 1 or padding.shape[-1] != n_k:
        raise ValueError(
            f"key_padding_mask must have shape (..., n_k) with n_k = {n_k}, got shape {padding.shape}"
        )
    try:
        fits = np.broadcast_shapes(padding.shape[:-1], batch) == batch
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"key_padding_mask has shape {padding.shape}: its batch dimensions {padding.shape[:-1]} must "
            f"broadcast to the batch dimensions {batch} of X_q and X_kv (one row per sentence)"
        )
    keys = padding[..., None, None, :]  # (..., 1 head, 1 query, n_k)
    if mask is None:
        return keys
    given = np.asarray(mask)
    if given.dtype != bool and given.dtype.kind != "f":
        raise TypeError(f"mask must be boolean (True = may attend) or float (added), got dtype {given.dtype}")
    try:
        return given & keys if given.dtype == bool else np.where(keys, given, -np.inf)
    except ValueError:
        raise ValueError(
            f"mask of shape {given.shape} and key_padding_mask of shape {padding.shape} do not broadcast "
            "together to (..., n_heads, n_q, n_k)"
        ) from None
