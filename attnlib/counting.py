"""How many arithmetic operations scaled dot-product attention costs.

Two independent answers to the same question:

* :func:`operation_counts` gives the counts as formulas in ``n_q, n_k, d_k, d_v``;
* :func:`counted_attention` computes attention with plain Python scalar loops, counting every
  operation as it performs it.

The tests check that the two agree for many shapes, and that the counted computation gives
the same output as :func:`attnlib.core.scaled_dot_product_attention`.

For attention at scale (lesson 12) the same two kinds of answer about memory and blocks:
:func:`weights_bytes` (the n_q × n_k weights, the "n² wall"), :func:`tiled_bytes` (what
:func:`attnlib.efficient.tiled_attention` holds instead) and :func:`tile_counts` (the blocks of
scores it computes, and those a causal mask lets it skip) are formulas; :func:`peak_bytes`
measures, with :mod:`tracemalloc`, the peak memory a call allocates. And what FlashAttention
saves: :func:`hbm_traffic` (the numbers moved between a GPU's large memory and its on-chip one,
as formulas) and :func:`counted_hbm_traffic` (the same loops run, counting every move).

For generating text (lesson 15), the sizes of a decoder in a :class:`DecoderShape`:
:func:`kv_cache_bytes` (the keys and values kept per token), :func:`llama_parameter_counts` (the
parameters of a Llama-style decoder) and :func:`kv_cache_outgrows_weights` (the context at which the
cache passes the weights); :func:`decoder_pass_multiplications` and :func:`generation_multiplications`
(the attention's multiplications to generate token by token, with and without a KV cache) are
formulas, and :func:`counted_generation` measures them on an attention-only decoder.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.core import softmax
from attnlib.multihead import multi_head_arguments
from attnlib.validation import as_flag, as_positive_int, as_queries_keys, as_real_array

__all__ = [
    "GENERATION_STEPS",
    "LOOPS",
    "MULTI_HEAD_STEPS",
    "OPERATIONS",
    "STEPS",
    "DecoderShape",
    "OperationCounts",
    "TileCounts",
    "Traffic",
    "counted_attention",
    "counted_generation",
    "counted_hbm_traffic",
    "counted_multi_head_attention",
    "decoder_pass_multiplications",
    "generation_multiplications",
    "hbm_traffic",
    "kv_cache_bytes",
    "kv_cache_outgrows_weights",
    "llama_parameter_counts",
    "matmul_counts",
    "multi_head_operation_counts",
    "multi_head_parameter_counts",
    "operation_counts",
    "peak_bytes",
    "sram_blocks",
    "tile_counts",
    "tiled_bytes",
    "weights_bytes",
]

#: The kinds of scalar operation that are counted.
OPERATIONS = (
    "multiplications",
    "additions",
    "subtractions",
    "divisions",
    "exponentials",
    "square roots",
    "comparisons",
)

#: The steps of attention, in order. The row-maximum step is what makes softmax stable.
STEPS = (
    "scores Q Kᵀ",
    "scale by 1/√d_k",
    "softmax: subtract row max",
    "softmax: exp and normalise",
    "weights · V",
)


@dataclass(frozen=True)
class OperationCounts:
    """Operation counts of attention, step by step.

    Attributes
    ----------
    steps : mapping of str to mapping of str to int
        ``steps[step][operation]``; steps are those of :data:`STEPS`, operations those of
        :data:`OPERATIONS` (zero counts included).
    """

    steps: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def totals(self) -> dict[str, int]:
        """Total count of each operation over all steps."""
        return {op: sum(step[op] for step in self.steps.values()) for op in OPERATIONS}

    def table(self) -> str:
        """A plain-text table: one row per step, one column per operation that occurs."""
        totals = self.totals()
        ops = [op for op in OPERATIONS if totals[op]]
        width = max(len(step) for step in [*self.steps, "total"])
        widths = [len(op) + 2 for op in ops]

        def row(label: str, counts: Mapping[str, int]) -> str:
            return f"{label:<{width}}" + "".join(
                f"{counts[op]:>{w},}" for op, w in zip(ops, widths, strict=True)
            )

        header = " " * width + "".join(f"{op:>{w}}" for op, w in zip(ops, widths, strict=True))
        return "\n".join([header, *(row(step, c) for step, c in self.steps.items()), row("total", totals)])


def operation_counts(n_q: int, n_k: int, d_k: int, d_v: int, *, stable: bool = True) -> OperationCounts:
    """Operation counts of ``softmax(Q Kᵀ / √d_k) V`` as formulas.

    Parameters
    ----------
    n_q, n_k, d_k, d_v : int
        Number of queries, number of keys, key dimension, value dimension (all at least 1).
    stable : bool
        Include the row-maximum subtraction of the stable softmax (``n_q·(n_k−1)`` comparisons
        and ``n_q·n_k`` subtractions). The textbook count leaves it out.

    Returns
    -------
    OperationCounts
        ``Q Kᵀ``: ``n_q·n_k·d_k`` multiplications, ``n_q·n_k·(d_k−1)`` additions; scaling: one
        square root and ``n_q·n_k`` divisions; softmax: ``n_q·n_k`` exponentials,
        ``n_q·(n_k−1)`` additions, ``n_q·n_k`` divisions; ``weights · V``: ``n_q·d_v·n_k``
        multiplications, ``n_q·d_v·(n_k−1)`` additions.
    """
    n_q, n_k, d_k, d_v = (
        as_positive_int(v, name) for v, name in ((n_q, "n_q"), (n_k, "n_k"), (d_k, "d_k"), (d_v, "d_v"))
    )
    stable = as_flag(stable, "stable")
    formulas = {
        STEPS[0]: {"multiplications": n_q * n_k * d_k, "additions": n_q * n_k * (d_k - 1)},
        STEPS[1]: {"square roots": 1, "divisions": n_q * n_k},
        STEPS[2]: {"comparisons": n_q * (n_k - 1), "subtractions": n_q * n_k} if stable else {},
        STEPS[3]: {"exponentials": n_q * n_k, "additions": n_q * (n_k - 1), "divisions": n_q * n_k},
        STEPS[4]: {"multiplications": n_q * d_v * n_k, "additions": n_q * d_v * (n_k - 1)},
    }
    return OperationCounts(
        {step: {op: counts.get(op, 0) for op in OPERATIONS} for step, counts in formulas.items()}
    )


class _Tally:
    """Scalar arithmetic that counts each operation under the current step."""

    def __init__(self) -> None:
        self.steps: dict[str, dict[str, int]] = {step: dict.fromkeys(OPERATIONS, 0) for step in STEPS}
        self.step = STEPS[0]

    def _count(self, op: str) -> None:
        self.steps[self.step][op] += 1

    def mul(self, a: float, b: float) -> float:
        self._count("multiplications")
        return a * b

    def add(self, a: float, b: float) -> float:
        self._count("additions")
        return a + b

    def sub(self, a: float, b: float) -> float:
        self._count("subtractions")
        return a - b

    def div(self, a: float, b: float) -> float:
        self._count("divisions")
        return a / b

    def exp(self, a: float) -> float:
        self._count("exponentials")
        try:
            return math.exp(a)
        except OverflowError:
            raise ValueError(
                f"exp({a:.6g}) is beyond the float64 range: without subtracting the row maximum "
                f"(stable=False) a scaled score above {math.log(np.finfo(np.float64).max):.2f} "
                "cannot be exponentiated; stable=True subtracts it first"
            ) from None

    def sqrt(self, a: float) -> float:
        self._count("square roots")
        return math.sqrt(a)

    def max(self, a: float, b: float) -> float:
        self._count("comparisons")
        return a if a >= b else b


def counted_attention(
    Q: npt.ArrayLike, K: npt.ArrayLike, V: npt.ArrayLike, *, stable: bool = True
) -> tuple[np.ndarray, np.ndarray, OperationCounts]:
    """Attention with scalar loops, counting every arithmetic operation as it goes.

    Deliberately slow: it exists to *measure* the cost, one operation at a time.

    Parameters
    ----------
    Q : array_like, shape (n_q, d_k)
    K : array_like, shape (n_k, d_k)
    V : array_like, shape (n_k, d_v)
    stable : bool
        Subtract each row's maximum before ``exp`` (and count it).

    Returns
    -------
    output : numpy.ndarray, shape (n_q, d_v)
    weights : numpy.ndarray, shape (n_q, n_k)
    counts : OperationCounts
        What was actually performed; equals :func:`operation_counts` of the same shapes.
    """
    stable = as_flag(stable, "stable")
    q, k, single = as_queries_keys(Q, K)
    if single:
        raise ValueError(f"counted_attention takes a matrix of queries (n_q, d_k), got shape {np.shape(Q)}")
    v = as_real_array(V, "V")
    for name, arr, hint in (("Q", q, "(n_q, d_k)"), ("K", k, "(n_k, d_k)"), ("V", v, "(n_k, d_v)")):
        if arr.ndim != 2:
            raise ValueError(
                f"counted_attention takes matrices only: {name} must have shape {hint}, got {arr.shape}"
            )
    if q.shape[0] == 0:
        raise ValueError(f"Q has no queries (shape {q.shape}): counting needs at least one")
    if v.shape[0] != k.shape[0]:
        raise ValueError(f"K and V must have the same number of keys n_k: K {k.shape}, V {v.shape}")
    if v.shape[1] == 0:
        raise ValueError(f"V has no value dimensions (shape {v.shape})")
    qs, ks, vs = q.tolist(), k.tolist(), v.tolist()
    t = _Tally()

    t.step = STEPS[0]
    scores = [[_fold(t.add, [t.mul(a, b) for a, b in zip(qi, kj, strict=True)]) for kj in ks] for qi in qs]
    _require_finite(scores, "the raw scores Q Kᵀ", (q, k))
    t.step = STEPS[1]
    root = t.sqrt(float(q.shape[1]))
    scores = [[t.div(s, root) for s in row] for row in scores]
    if stable:
        t.step = STEPS[2]
        maxima = [_fold(t.max, row) for row in scores]
        scores = [[t.sub(s, m) for s in row] for row, m in zip(scores, maxima, strict=True)]
    t.step = STEPS[3]
    exps = [[t.exp(s) for s in row] for row in scores]
    sums = [_fold(t.add, row) for row in exps]
    for i, total in enumerate(sums):
        if not 0.0 < total < math.inf:
            raise ValueError(
                f"the sum of exp(score) for query {i} is {total}: without subtracting the row "
                "maximum (stable=False) the exponentials leave the float64 range; stable=True "
                "subtracts it first"
            )
    weights = [[t.div(e, total) for e in row] for row, total in zip(exps, sums, strict=True)]
    t.step = STEPS[4]
    columns = list(zip(*vs, strict=True))
    output = [
        [_fold(t.add, [t.mul(w, x) for w, x in zip(row, col, strict=True)]) for col in columns]
        for row in weights
    ]
    _require_finite(output, "the output weights · V", (v,))
    return np.array(output), np.array(weights), OperationCounts(t.steps)


def _require_finite(values: list[list[float]], what: str, inputs: tuple[np.ndarray, ...]) -> None:
    """Raise a clear error if a step's results left the float64 range."""
    if not all(math.isfinite(x) for row in values for x in row):
        largest = ", ".join(f"{np.abs(a).max():.3g}" for a in inputs)
        raise ValueError(f"{what} overflow float64: the inputs are too large (largest |entry| {largest})")


def _fold(combine: Callable[[float, float], float], values: list[float]) -> float:
    """Reduce ``values`` pairwise with ``combine``: ``len(values) - 1`` calls, as a sum or a max."""
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    return result


# Multi-head attention ---------------------------------------------------------------------------

#: The steps of multi-head attention, in order: the three projections, the steps of
#: :data:`STEPS` summed over the heads, and the output projection. Splitting into heads and
#: concatenating them are reshapes: no arithmetic.
MULTI_HEAD_STEPS = ("Q = X_q W_q", "K = X_kv W_k", "V = X_kv W_v", *STEPS, "concat(heads) W_o")


def matmul_counts(n: int, m: int, p: int) -> dict[str, int]:
    """Operations of a matrix product ``(n, m) @ (m, p)``: ``n·m·p`` multiplications and
    ``n·(m−1)·p`` additions (each of the ``n·p`` entries sums ``m`` products)."""
    n, m, p = (as_positive_int(v, name) for v, name in ((n, "n"), (m, "m"), (p, "p")))
    return {"multiplications": n * m * p, "additions": n * (m - 1) * p}


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
    kv = _kv_heads(heads, n_kv_heads)
    if (d_k is None or d_v is None) and d_model % heads:
        raise ValueError(
            f"d_model={d_model} does not divide into n_heads={heads} equal heads: give d_k and d_v"
        )
    d_k = d_model // heads if d_k is None else as_positive_int(d_k, "d_k")
    d_v = d_model // heads if d_v is None else as_positive_int(d_v, "d_v")
    d_kv = d_model if d_kv is None else as_positive_int(d_kv, "d_kv")
    d_out = d_model if d_out is None else as_positive_int(d_out, "d_out")
    return heads, kv, d_k, d_v, d_kv, d_out


def _kv_heads(n_heads: int, n_kv_heads: object) -> int:
    """``n_kv_heads`` checked against a checked ``n_heads`` (None: as many as ``n_heads``)."""
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
    Q = _counted_matmul(m["X_q"], m["W_q"], steps[MULTI_HEAD_STEPS[0]])
    K = _counted_matmul(m["X_kv"], m["W_k"], steps[MULTI_HEAD_STEPS[1]])
    V = _counted_matmul(m["X_kv"], m["W_v"], steps[MULTI_HEAD_STEPS[2]])
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
    output = _counted_matmul(np.concatenate(outputs, axis=1), m["W_o"], steps[MULTI_HEAD_STEPS[-1]])
    return output, np.stack(weights), OperationCounts(steps)


def _counted_matmul(A: np.ndarray, B: np.ndarray, counts: dict[str, int]) -> np.ndarray:
    """``A @ B`` with scalar loops, adding its multiplications and additions to ``counts``."""

    def mul(a: float, b: float) -> float:
        counts["multiplications"] += 1
        return a * b

    def add(a: float, b: float) -> float:
        counts["additions"] += 1
        return a + b

    columns = list(zip(*B.tolist(), strict=True))
    return np.array(
        [
            [_fold(add, [mul(a, b) for a, b in zip(row, col, strict=True)]) for col in columns]
            for row in A.tolist()
        ]
    )


# Memory and blocks at scale (lesson 12) ------------------------------------------------------------


def weights_bytes(n_q: int, n_k: int, *, batch_heads: int = 1, itemsize: int = 4) -> int:
    """Bytes of the attention weights, ``n_q × n_k`` numbers for every batch element and head.

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
    n_q, n_k, batch_heads, itemsize = _sizes(n_q=n_q, n_k=n_k, batch_heads=batch_heads, itemsize=itemsize)
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
    n_q, n_k, d_k, d_v, batch_heads, itemsize = _sizes(
        n_q=n_q, n_k=n_k, d_k=d_k, d_v=d_v, batch_heads=batch_heads, itemsize=itemsize
    )
    bq = min(as_positive_int(block_q, "block_q"), n_q)
    bk = min(as_positive_int(block_k, "block_k"), n_k)
    per_head = bq * bk + n_q * d_v + n_q * d_k + n_k * (d_v + 1) + 2 * bq * (d_v + 1) + bq
    return batch_heads * per_head * itemsize


@dataclass(frozen=True)
class TileCounts:
    """The blocks of scores of a tiled attention: how many, and how many scores they hold.

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


def _sizes(**sizes: int) -> tuple[int, ...]:
    """Each size as a positive int, or an error naming it."""
    return tuple(as_positive_int(value, name) for name, value in sizes.items())


# Memory traffic: what FlashAttention saves (lesson 12) ----------------------------------------------

#: The loops :func:`hbm_traffic` counts: the standard algorithm (Dao et al. 2022, Algorithm 0),
#: FlashAttention-1's key/value blocks outside (Algorithm 1), FlashAttention-2's query blocks outside.
LOOPS = ("standard", "kv-outer", "q-outer")


@dataclass(frozen=True)
class Traffic:
    """Numbers moved between the large slow memory (a GPU's HBM) and the small fast one (SRAM).

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
    d, sram = _sizes(d=d, sram=sram)
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
    n, d = _sizes(n=n, d=d)
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


# Generating text: the KV cache (lesson 15) ----------------------------------------------------------


@dataclass(frozen=True)
class DecoderShape:
    """The sizes of a decoder-only transformer that its costs, its cache and its size depend on.

    Attributes
    ----------
    n_layers : int
    d_model : int
        Width of the residual stream (Llama's ``hidden_size``).
    n_heads : int
        Query heads per layer.
    d_mlp : int
        Width of the MLP's hidden layer (Llama's ``intermediate_size``); 0 for attention only.
    vocab : int
        Number of tokens in the vocabulary.
    n_kv_heads : int
        Key/value heads per layer (grouped-query attention); given as None, it becomes
        ``n_heads``. It must divide ``n_heads``.
    d_head : int
        Width of each head's queries, keys and values; given as None, it becomes
        ``d_model / n_heads``.
    tied_embeddings : bool
        Whether the unembedding is the embedding matrix itself (no separate ``lm_head``).
    """

    n_layers: int
    d_model: int
    n_heads: int
    d_mlp: int
    vocab: int
    n_kv_heads: int | None = None
    d_head: int | None = None
    tied_embeddings: bool = False

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "vocab"):
            object.__setattr__(self, name, as_positive_int(getattr(self, name), name))
        object.__setattr__(self, "d_mlp", as_positive_int(self.d_mlp, "d_mlp", minimum=0))
        object.__setattr__(self, "n_kv_heads", _kv_heads(self.n_heads, self.n_kv_heads))
        if self.d_head is None:
            if self.d_model % self.n_heads:
                raise ValueError(
                    f"d_model={self.d_model} does not divide into n_heads={self.n_heads} equal heads: "
                    "give d_head"
                )
            object.__setattr__(self, "d_head", self.d_model // self.n_heads)
        else:
            object.__setattr__(self, "d_head", as_positive_int(self.d_head, "d_head"))
        object.__setattr__(self, "tied_embeddings", as_flag(self.tied_embeddings, "tied_embeddings"))


def _shape(shape: object) -> DecoderShape:
    if not isinstance(shape, DecoderShape):
        raise TypeError(f"shape must be a DecoderShape, got {type(shape).__name__}")
    return shape


def kv_cache_bytes(
    shape: DecoderShape,
    n_tokens: int = 1,
    *,
    bytes_per_number: int,
    batch: int = 1,
    window: int | None = None,
    sinks: int = 0,
) -> int:
    """Bytes of the keys and values a decoder keeps to generate the next token.

    Every layer keeps, for every token, one key and one value (the factor 2) of ``d_head``
    numbers for each of its ``n_kv_heads`` key/value heads::

        per token:  2 · n_layers · n_kv_heads · d_head · bytes_per_number
        in all:     that · tokens kept · batch

    With a sliding ``window`` (and ``sinks``, :func:`attnlib.core.causal_mask`) only the keys a
    new query can still see are kept: ``min(n_tokens, window + sinks)`` tokens (Mistral's
    rolling buffer cache keeps ``window``).

    Parameters
    ----------
    shape : DecoderShape
    n_tokens : int
        Tokens in the context (1: the cost of one token).
    bytes_per_number : int
        2 for float16 and bfloat16, 4 for float32, 8 for float64 (bytes, not bits).
    batch : int
        Sequences generated side by side, each with its own cache.
    window : int, optional
    sinks : int

    Returns
    -------
    int

    Examples
    --------
    Llama 2 7B (32 layers of 32 key/value heads of 128) in float16: half a MiB per token, 2 GiB
    at its context of 4,096 tokens.

    >>> llama = DecoderShape(n_layers=32, d_model=4096, n_heads=32, d_mlp=11008, vocab=32000)
    >>> kv_cache_bytes(llama, bytes_per_number=2)
    524288
    >>> kv_cache_bytes(llama, 4096, bytes_per_number=2) / 2**30
    2.0
    """
    shape = _shape(shape)
    tokens = as_positive_int(n_tokens, "n_tokens", minimum=0)
    itemsize, batch = as_positive_int(bytes_per_number, "bytes_per_number"), as_positive_int(batch, "batch")
    if window is not None:
        tokens = min(tokens, as_positive_int(window, "window") + as_positive_int(sinks, "sinks", minimum=0))
    per_token = 2 * shape.n_layers * shape.n_kv_heads * shape.d_head * itemsize
    return per_token * tokens * batch


def llama_parameter_counts(shape: DecoderShape) -> dict[str, int]:
    """The parameters of a Llama-style decoder (Llama 2 and 3, Mistral), part by part.

    Pre-norm layers with RMSNorm (a weight of ``d_model`` numbers, no bias), attention without
    biases (``W_q``, ``W_k``, ``W_v``, ``W_o``, with ``n_kv_heads`` key/value heads), a SwiGLU MLP
    (three matrices: gate and up ``d_model × d_mlp``, down ``d_mlp × d_model``, no biases),
    rotary positions (no parameters), a final RMSNorm, and an unembedding (``lm_head``) unless
    it is tied to the embedding.

    Parameters
    ----------
    shape : DecoderShape

    Returns
    -------
    dict
        ``"embedding"``: ``vocab·d_model``; ``"attention"``: ``n_layers·d_model·d_head·(2·n_heads
        + 2·n_kv_heads)``; ``"mlp"``: ``n_layers·3·d_model·d_mlp``; ``"norms"``:
        ``(2·n_layers + 1)·d_model``; ``"unembedding"``: ``vocab·d_model`` (0 if tied);
        ``"total"``: their sum.

    Examples
    --------
    >>> llama = DecoderShape(n_layers=32, d_model=4096, n_heads=32, d_mlp=11008, vocab=32000)
    >>> f"{llama_parameter_counts(llama)['total']:,}"
    '6,738,415,616'
    """
    s = _shape(shape)
    per_layer_attention = s.d_model * s.d_head * (2 * s.n_heads + 2 * s.n_kv_heads)
    parts = {
        "embedding": s.vocab * s.d_model,
        "attention": s.n_layers * per_layer_attention,
        "mlp": s.n_layers * 3 * s.d_model * s.d_mlp,
        "norms": (2 * s.n_layers + 1) * s.d_model,
        "unembedding": 0 if s.tied_embeddings else s.vocab * s.d_model,
    }
    return {**parts, "total": sum(parts.values())}


def kv_cache_outgrows_weights(
    shape: DecoderShape,
    *,
    parameters: int,
    bytes_per_number: int,
    weight_bytes_per_number: int | None = None,
    batch: int = 1,
    window: int | None = None,
    sinks: int = 0,
) -> int | None:
    """The shortest context whose KV cache takes more bytes than the model's weights.

    The smallest ``n`` with ``kv_cache_bytes(shape, n, ...) > parameters · weight_bytes_per_number``:
    ``floor(weights / per_token) + 1``. Both in the same dtype (the default), the bytes cancel:
    ``n = floor(parameters / (2 · n_layers · n_kv_heads · d_head · batch)) + 1``.

    Parameters
    ----------
    shape : DecoderShape
    parameters : int
        The model's parameter count (:func:`llama_parameter_counts` for a Llama-style decoder).
    bytes_per_number : int
        Of the cache.
    weight_bytes_per_number : int, optional
        Of the weights; by default the cache's.
    batch, window, sinks
        As in :func:`kv_cache_bytes`.

    Returns
    -------
    int or None
        None when a sliding window keeps the cache below the weights at every length.
    """
    shape = _shape(shape)
    weights = as_positive_int(parameters, "parameters") * as_positive_int(
        bytes_per_number if weight_bytes_per_number is None else weight_bytes_per_number,
        "weight_bytes_per_number",
    )
    per_token = kv_cache_bytes(shape, 1, bytes_per_number=bytes_per_number, batch=batch)
    length = weights // per_token + 1
    if window is None:
        return length
    kept = kv_cache_bytes(
        shape, length, bytes_per_number=bytes_per_number, batch=batch, window=window, sinks=sinks
    )
    return length if kept > weights else None


#: The matrix products of one attention layer while generating, as :func:`decoder_pass_multiplications`
#: and :func:`counted_generation` name them (summed over the layers).
GENERATION_STEPS = ("Q = x W_q", "K, V = x W_k, x W_v", "scores q Kᵀ", "weights · V", "concat(heads) W_o")


def decoder_pass_multiplications(shape: DecoderShape, n_rows: int, n_context: int) -> dict[str, int]:
    """Multiplications of the attention of one forward pass: ``n_rows`` new positions, ``n_context`` keys.

    Per layer, with ``D = d_model``, ``H = n_heads``, ``G = n_kv_heads``, ``d = d_head``, ``m =
    n_rows`` and ``t = n_context``: ``Q``: ``m·D·H·d``; ``K`` and ``V``: ``2·m·D·G·d``; scores:
    ``H·m·t·d``; weights · V: ``H·m·t·d``; ``W_o``: ``m·H·d·D``. The scores of all ``m × t``
    pairs are computed, as a plain implementation does before masking.

    Without a cache, generating at context ``t`` is a pass with ``m = t``: every projection and
    all ``t × t`` scores again, quadratic in ``t``. With a KV cache it is ``m = 1``: one row of
    scores per layer and head, linear in ``t``.

    Only the attention's matrix products are counted: not the scaling by ``1/√d``, the softmax,
    the additions, the MLP (``2`` or ``3·m·D·d_mlp`` per layer, the same per new position with or
    without a cache), the norms or the unembedding (``D·vocab`` for the one position whose next
    token is drawn, in both cases).

    Parameters
    ----------
    shape : DecoderShape
    n_rows : int
        Positions whose queries, keys and values the pass computes (``m``).
    n_context : int
        Keys each of them is scored against (``t``; at least ``n_rows``).

    Returns
    -------
    dict
        Multiplications of each step of :data:`GENERATION_STEPS`, summed over the layers and
        heads, and ``"total"``.
    """
    s = _shape(shape)
    m, t = as_positive_int(n_rows, "n_rows"), as_positive_int(n_context, "n_context")
    if t < m:
        raise ValueError(
            f"n_context={t} is smaller than n_rows={m}: the new positions are part of the context"
        )
    return _attention_multiplications(s, m, m * t)


def _attention_multiplications(s: DecoderShape, rows: int, pairs: int) -> dict[str, int]:
    """The multiplications of :data:`GENERATION_STEPS` for ``rows`` projected positions and
    ``pairs`` (query, key) scores per head, over all layers."""
    L, D, H, G, d = s.n_layers, s.d_model, s.n_heads, s.n_kv_heads, s.d_head
    steps = dict(
        zip(
            GENERATION_STEPS,
            (
                L * rows * D * H * d,
                L * 2 * rows * D * G * d,
                L * H * pairs * d,
                L * H * pairs * d,
                L * rows * H * d * D,
            ),
            strict=True,
        )
    )
    return {**steps, "total": sum(steps.values())}


def generation_multiplications(
    shape: DecoderShape, n_new: int, *, prompt: int = 1, cache: bool
) -> dict[str, int]:
    """Multiplications of the attention to generate ``n_new`` tokens one at a time after a prompt.

    Pass ``k = 1 … n_new`` reads a context of ``t_k = prompt + k − 1`` tokens and predicts the
    next one. Without a cache every pass is :func:`decoder_pass_multiplications` ``(t_k, t_k)``;
    with one the first pass reads the prompt, ``(prompt, prompt)``, and every later pass only
    its newest token, ``(1, t_k)``. Summed in closed form, with ``Σt = Σ_k t_k`` and ``Σt² =
    Σ_k t_k²``: projected rows ``Σt`` without a cache and ``prompt + n_new − 1`` with one;
    score pairs ``Σt²`` without and ``prompt² + Σt − prompt`` with one. For a prompt of 1 and
    ``n`` new tokens the scores cost ``~n³/3`` pairs without a cache and ``~n²/2`` with it.

    Parameters
    ----------
    shape : DecoderShape
    n_new : int
        Tokens generated (forward passes).
    prompt : int
        Tokens given before the first pass.
    cache : bool
        Whether the keys and values of earlier tokens are kept (a KV cache).

    Returns
    -------
    dict
        As :func:`decoder_pass_multiplications`, summed over the passes.
    """
    s = _shape(shape)
    n, p = as_positive_int(n_new, "n_new"), as_positive_int(prompt, "prompt")
    cached = as_flag(cache, "cache")
    last = p + n - 1  # the context of the last pass
    sum_t = last * (last + 1) // 2 - (p - 1) * p // 2  # Σ_{t=p}^{last} t
    sum_t2 = last * (last + 1) * (2 * last + 1) // 6 - (p - 1) * p * (2 * p - 1) // 6
    if cached:
        return _attention_multiplications(s, p + n - 1, p * p + sum_t - p)
    return _attention_multiplications(s, sum_t, sum_t2)


def counted_generation(
    X: npt.ArrayLike,
    layers: Sequence[Mapping[str, npt.ArrayLike]],
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    prompt: int = 1,
    cache: bool,
) -> tuple[np.ndarray, list[dict[str, int]]]:
    """Generate with an attention-only decoder, counting every multiplication of its matrix products.

    The decoder is lesson 14's without positions or norms: each layer adds its causal
    multi-head attention to the residual stream, ``x ← x + attention(x)``. ``X`` holds the
    embeddings of the prompt and of the tokens generated after it, in order: which token comes
    next does not change the count, so they are given rather than drawn. Pass ``k`` reads
    ``X[: prompt + k − 1]``. Without a cache it recomputes every position; with one it computes
    the prompt once, then only the newest position, scoring it against the keys and values that
    every layer has kept. Deliberately slow: scalar loops, to *measure*.

    Parameters
    ----------
    X : (n, d_model)
        ``n = prompt + n_new − 1`` rows: the last generated token is not read again.
    layers : sequence of mappings
        Each with ``W_q (d_model, n_heads·d_head)``, ``W_k`` and ``W_v (d_model, n_kv_heads·d_head)``
        and ``W_o (n_heads·d_head, d_model)``, as :func:`attnlib.multihead.multi_head_attention`.
    n_heads : int
    n_kv_heads : int, optional
    prompt : int
        Rows of ``X`` read by the first pass (at most ``n``).
    cache : bool

    Returns
    -------
    last : (n_new, d_model)
        The residual stream of each pass's newest position after the last layer: the same with
        and without a cache.
    counts : list of dict
        Per pass, the multiplications of each step of :data:`GENERATION_STEPS` (summed over the
        layers) and ``"total"``; equal to :func:`decoder_pass_multiplications`, and their sum
        to :func:`generation_multiplications`.
    """
    x, weights, heads, group, p, cached = _generation_arguments(X, layers, n_heads, n_kv_heads, prompt, cache)
    kept: list[dict[str, list[np.ndarray]]] = [{"K": [], "V": []} for _ in weights]
    last, counts = [], []
    for t in range(p, x.shape[0] + 1):  # the pass that reads a context of t tokens
        tally = {step: {"multiplications": 0, "additions": 0} for step in GENERATION_STEPS}
        start = t - 1 if cached and t > p else 0  # the first position this pass computes
        h = x[start:t]
        for W, store in zip(weights, kept, strict=True):
            Q = _counted_matmul(h, W["W_q"], tally[GENERATION_STEPS[0]])
            K = _counted_matmul(h, W["W_k"], tally[GENERATION_STEPS[1]])
            V = _counted_matmul(h, W["W_v"], tally[GENERATION_STEPS[1]])
            if cached:  # append the new keys and values; attend over all that are kept
                store["K"].append(K)
                store["V"].append(V)
                K, V = np.concatenate(store["K"]), np.concatenate(store["V"])
            z = _counted_heads(Q, K, V, heads, group, start, tally)
            h = h + _counted_matmul(z, W["W_o"], tally[GENERATION_STEPS[4]])
        last.append(h[-1])
        steps = {step: tally[step]["multiplications"] for step in GENERATION_STEPS}
        counts.append({**steps, "total": sum(steps.values())})
    return np.array(last), counts


def _counted_heads(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    heads: int,
    group: int,
    start: int,
    tally: dict[str, dict[str, int]],
) -> np.ndarray:
    """Causal attention of queries at positions ``start …`` over keys ``0 …``, head by head, counted.

    Query head ``h`` reads key/value head ``h // group``; its scores and weighted sum are counted
    matrix products; the scaling, the mask and the softmax are not multiplications counted here.
    """
    d = Q.shape[1] // heads
    rows, keys = np.arange(start, start + Q.shape[0])[:, None], np.arange(K.shape[0])[None, :]
    outputs = []
    for h in range(heads):
        q, g = slice(h * d, (h + 1) * d), slice((h // group) * d, (h // group + 1) * d)
        scores = _counted_matmul(Q[:, q], K[:, g].T, tally[GENERATION_STEPS[2]]) / math.sqrt(d)
        weights = softmax(np.where(keys <= rows, scores, -np.inf))  # query i sees keys 0 … i
        outputs.append(_counted_matmul(weights, V[:, g], tally[GENERATION_STEPS[3]]))
    return np.concatenate(outputs, axis=1)


def _generation_arguments(
    X: npt.ArrayLike,
    layers: object,
    n_heads: object,
    n_kv_heads: object,
    prompt: object,
    cache: object,
) -> tuple[np.ndarray, list[dict[str, np.ndarray]], int, int, int, bool]:
    """Every check of :func:`counted_generation`: ``(X, weights, n_heads, group, prompt, cache)``."""
    cached = as_flag(cache, "cache")
    x = as_real_array(X, "X").astype(np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(
            f"X must be the embeddings of the tokens, shape (n, d_model) with n ≥ 1, got {x.shape}"
        )
    p = as_positive_int(prompt, "prompt")
    if p > x.shape[0]:
        raise ValueError(f"prompt={p} is longer than X, which has {x.shape[0]} rows")
    if isinstance(layers, Mapping) or not isinstance(layers, Sequence) or not layers:
        raise TypeError(f"layers must be a non-empty sequence of dicts of W_q, W_k, W_v, W_o, got {layers!r}")
    weights = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Mapping) or set(layer) != {"W_q", "W_k", "W_v", "W_o"}:
            raise ValueError(f"layers[{i}] must be a dict of exactly W_q, W_k, W_v, W_o")
        checked = multi_head_arguments(x, x, **layer, n_heads=n_heads, n_kv_heads=n_kv_heads)
        if checked.W["W_o"].shape[1] != x.shape[1]:
            raise ValueError(
                f"layers[{i}]: W_o must write back to the residual stream of width d_model={x.shape[1]}, "
                f"got shape {checked.W['W_o'].shape}"
            )
        weights.append({name: w.astype(np.float64) for name, w in checked.W.items()})
    heads = checked.n_heads
    return x, weights, heads, heads // (checked.n_kv_heads or heads), p, cached
