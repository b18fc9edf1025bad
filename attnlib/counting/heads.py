"""What multi-head attention costs: operations and parameters (lesson 09).

Each of ``h`` heads works on ``d_k = d_model / h`` columns, so the heads' scores together take
``h · n_q·n_k·(d_model / h) = n_q·n_k·d_model`` multiplications: as many as one head of width
``d_model``. The projections and ``W_o`` do not depend on ``h`` at all, and neither do the
parameters, ``4·d_model²``. Only the softmax (and its exponentials) grows ``h``-fold.

Again two answers: :func:`multi_head_operation_counts` and :func:`multi_head_parameter_counts`
are formulas; :func:`counted_multi_head_attention` computes multi-head attention one scalar
operation at a time (the projections with :func:`attnlib.counting.attention.counted_matmul`,
each head with :func:`attnlib.counting.attention.counted_attention`) and counts them.

>>> multi_head_parameter_counts(768, n_heads=12)["total"] == 4 * 768**2   # BERT-base: 12 heads
True
>>> one = multi_head_operation_counts(10, 10, 512, n_heads=1).totals()
>>> eight = multi_head_operation_counts(10, 10, 512, n_heads=8).totals()
>>> one["multiplications"] == eight["multiplications"], eight["exponentials"] // one["exponentials"]
(True, 8)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnlib.counting.attention import (
    OPERATIONS,
    STEPS,
    OperationCounts,
    counted_attention,
    counted_matmul,
    matmul_counts,
    operation_counts,
)
from attnlib.multihead import multi_head_arguments
from attnlib.validation import as_positive_int

__all__ = [
    "MULTI_HEAD_STEPS",
    "as_kv_heads",
    "counted_multi_head_attention",
    "multi_head_operation_counts",
    "multi_head_parameter_counts",
]

#: The steps of multi-head attention, in order: the three projections, the steps of
#: :data:`STEPS` summed over the heads, and the output projection. Splitting into heads and
#: concatenating them are reshapes: no arithmetic.
MULTI_HEAD_STEPS = ("Q = X_q W_q", "K = X_kv W_k", "V = X_kv W_v", *STEPS, "concat(heads) W_o")


def multi_head_operation_counts(
    n_q: int,
    n_k: int,
    d_model: int,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    d_k: int | None = None,
    d_v: int | None = None,
    d_kv: int | None = None,
    d_out: int | None = None,
    stable: bool = True,
) -> OperationCounts:
    """Operation counts of multi-head attention (:func:`attnlib.multihead.multi_head_attention`) as formulas.

    Lesson 09 · section 2, the cost: more heads, the same multiplications.

    Parameters
    ----------
    n_q, n_k : int
        Number of queries (rows of ``X_q``) and of keys (rows of ``X_kv``).
    d_model : int
        Width of ``X_q``.
    n_heads : int
    n_kv_heads : int, optional
        Key/value heads of grouped-query attention (it must divide ``n_heads``); by default
        ``n_heads``. Only the ``K`` and ``V`` projections shrink: every query head still
        computes its own scores.
    d_k, d_v : int, optional
        Width of each head's queries/keys and values; by default ``d_model / n_heads`` (which
        must then be a whole number).
    d_kv, d_out : int, optional
        Width of ``X_kv`` and of the output; by default ``d_model``.
    stable : bool
        Count the row-maximum subtraction of the stable softmax, as :func:`operation_counts`.

    Returns
    -------
    OperationCounts
        Steps :data:`MULTI_HEAD_STEPS`: ``X_q W_q`` is a ``(n_q, d_model) @ (d_model, n_heads·d_k)``
        product (:func:`matmul_counts`), likewise ``W_o``, and ``K``, ``V`` with
        ``n_kv_heads·d_k`` and ``n_kv_heads·d_v`` columns; each attention step
        is ``n_heads`` times that of :func:`operation_counts` ``(n_q, n_k, d_k, d_v)`` (one
        square root per head).
    """
    n_q, n_k, d_model = (
        as_positive_int(v, name) for v, name in ((n_q, "n_q"), (n_k, "n_k"), (d_model, "d_model"))
    )
    heads, kv, d_k, d_v, d_kv, d_out = _head_widths(d_model, n_heads, n_kv_heads, d_k, d_v, d_kv, d_out)
    one_head = operation_counts(n_q, n_k, d_k, d_v, stable=stable).steps
    formulas = {
        MULTI_HEAD_STEPS[0]: matmul_counts(n_q, d_model, heads * d_k),
        MULTI_HEAD_STEPS[1]: matmul_counts(n_k, d_kv, kv * d_k),
        MULTI_HEAD_STEPS[2]: matmul_counts(n_k, d_kv, kv * d_v),
        **{step: {op: heads * count for op, count in one_head[step].items()} for step in STEPS},
        MULTI_HEAD_STEPS[-1]: matmul_counts(n_q, heads * d_v, d_out),
    }
    return OperationCounts(
        {step: {op: counts.get(op, 0) for op in OPERATIONS} for step, counts in formulas.items()}
    )


def multi_head_parameter_counts(
    d_model: int,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    d_k: int | None = None,
    d_v: int | None = None,
    d_kv: int | None = None,
    d_out: int | None = None,
) -> dict[str, int]:
    """The number of entries of ``W_q``, ``W_k``, ``W_v`` and ``W_o`` of a multi-head layer (no biases).

    Lesson 09 · section 2, the cost: more heads, the same multiplications.

    Parameters are as in :func:`multi_head_operation_counts`. With the defaults
    (``d_k = d_v = d_model / n_heads``) the total is ``4·d_model²`` whatever ``n_heads``; with
    ``n_kv_heads`` key/value heads it is ``2·d_model² + 2·d_model²·n_kv_heads / n_heads``.

    Returns
    -------
    dict
        ``{"W_q": d_model·n_heads·d_k, "W_k": d_kv·n_kv_heads·d_k, "W_v": d_kv·n_kv_heads·d_v,
        "W_o": n_heads·d_v·d_out, "total": their sum}``.
    """
    d_model = as_positive_int(d_model, "d_model")
    heads, kv, d_k, d_v, d_kv, d_out = _head_widths(d_model, n_heads, n_kv_heads, d_k, d_v, d_kv, d_out)
    sizes = {
        "W_q": d_model * heads * d_k,
        "W_k": d_kv * kv * d_k,
        "W_v": d_kv * kv * d_v,
        "W_o": heads * d_v * d_out,
    }
    return {**sizes, "total": sum(sizes.values())}


def _head_widths(
    d_model: int,
    n_heads: object,
    n_kv_heads: object,
    d_k: int | None,
    d_v: int | None,
    d_kv: int | None,
    d_out: int | None,
) -> tuple[int, int, int, int, int, int]:
    """``(n_heads, n_kv_heads, d_k, d_v, d_kv, d_out)`` checked, with the defaults filled in."""
    heads = as_positive_int(n_heads, "n_heads")
    kv = as_kv_heads(heads, n_kv_heads)
    if (d_k is None or d_v is None) and d_model % heads:
        raise ValueError(
            f"d_model={d_model} does not divide into n_heads={heads} equal heads: give d_k and d_v"
        )
    d_k = d_model // heads if d_k is None else as_positive_int(d_k, "d_k")
    d_v = d_model // heads if d_v is None else as_positive_int(d_v, "d_v")
    d_kv = d_model if d_kv is None else as_positive_int(d_kv, "d_kv")
    d_out = d_model if d_out is None else as_positive_int(d_out, "d_out")
    return heads, kv, d_k, d_v, d_kv, d_out


def as_kv_heads(n_heads: int, n_kv_heads: object) -> int:
    """``n_kv_heads`` checked against a checked ``n_heads`` (None: as many as ``n_heads``).

    Lesson 15 · section 3, fewer key/value heads: GQA and MQA.
    """
    if n_kv_heads is None:
        return n_heads
    kv = as_positive_int(n_kv_heads, "n_kv_heads")
    if n_heads % kv:
        raise ValueError(
            f"n_kv_heads={kv} does not divide n_heads={n_heads}: each key/value head must serve "
            "the same number of query heads"
        )
    return kv


def counted_multi_head_attention(
    X_q: npt.ArrayLike,
    X_kv: npt.ArrayLike,
    W_q: npt.ArrayLike,
    W_k: npt.ArrayLike,
    W_v: npt.ArrayLike,
    W_o: npt.ArrayLike,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    stable: bool = True,
) -> tuple[np.ndarray, np.ndarray, OperationCounts]:
    """Multi-head attention with scalar loops, counting every arithmetic operation as it goes.

    Lesson 09 · section 2, the cost: more heads, the same multiplications.

    The projections and ``W_o`` are counted one multiplication and addition at a time; each head
    is :func:`counted_attention` on its own columns (``h·d_k … (h+1)·d_k − 1``), with the keys
    and values of key/value head ``h // (n_heads // n_kv_heads)``; the heads' outputs are
    concatenated in head order. Deliberately slow: it exists to *measure*.

    Parameters
    ----------
    X_q : (n_q, d_model)
    X_kv : (n_k, d_kv)
    W_q : (d_model, n_heads·d_k)
    W_k : (d_kv, n_kv_heads·d_k)
    W_v : (d_kv, n_kv_heads·d_v)
    W_o : (n_heads·d_v, d_out)
    n_heads : int
    n_kv_heads : int, optional
        As in :func:`attnlib.multihead.multi_head_attention`; by default ``n_heads``.
    stable : bool

    Returns
    -------
    output : (n_q, d_out)
    weights : (n_heads, n_q, n_k)
    counts : OperationCounts
        What was performed, step by step (:data:`MULTI_HEAD_STEPS`); equals
        :func:`multi_head_operation_counts` of the same shapes.
    """
    checked = multi_head_arguments(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads=n_heads, n_kv_heads=n_kv_heads)
    heads, xq, xkv, W = checked.n_heads, checked.X_q, checked.X_kv, checked.W
    group = heads // (checked.n_kv_heads or heads)  # query heads per key/value head
    m = {"X_q": xq, "X_kv": xkv, **W}
    for name in ("X_q", "X_kv"):
        if m[name].ndim != 2:
            raise ValueError(
                f"counted_multi_head_attention takes matrices only: {name} has shape {m[name].shape}"
            )

    steps = {step: dict.fromkeys(OPERATIONS, 0) for step in MULTI_HEAD_STEPS}
    Q = counted_matmul(m["X_q"], m["W_q"], steps[MULTI_HEAD_STEPS[0]])
    K = counted_matmul(m["X_kv"], m["W_k"], steps[MULTI_HEAD_STEPS[1]])
    V = counted_matmul(m["X_kv"], m["W_v"], steps[MULTI_HEAD_STEPS[2]])
    d_k, d_v = Q.shape[1] // heads, V.shape[1] * group // heads
    outputs, weights = [], []
    for h in range(heads):
        g = h // group  # the key/value head that query head h reads
        queries, keys, values = (slice(i * d, (i + 1) * d) for i, d in ((h, d_k), (g, d_k), (g, d_v)))
        out, w, counted = counted_attention(Q[:, queries], K[:, keys], V[:, values], stable=stable)
        outputs.append(out)
        weights.append(w)
        for step, ops in counted.steps.items():
            for op, count in ops.items():
                steps[step][op] += count
    output = counted_matmul(np.concatenate(outputs, axis=1), m["W_o"], steps[MULTI_HEAD_STEPS[-1]])
    return output, np.stack(weights), OperationCounts(steps)
