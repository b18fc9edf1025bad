"""How many arithmetic operations one scaled dot-product attention costs (lesson 08).

Two independent answers to the same question:

* :func:`operation_counts` gives the counts as formulas in ``n_q, n_k, d_k, d_v``;
* :func:`counted_attention` computes attention with plain Python scalar loops, counting every
  operation as it performs it.

The formulas, for ``Q : (n_q, d_k)``, ``K : (n_k, d_k)``, ``V : (n_k, d_v)``::

    scores Q Kᵀ     n_q·n_k·d_k multiplications    n_q·n_k·(d_k − 1) additions
    weights · V     n_q·d_v·n_k multiplications    n_q·d_v·(n_k − 1) additions
    softmax         n_q·n_k exponentials and divisions, n_q·(n_k − 1) additions
    scaling         one square root, n_q·n_k divisions

The tests check that the two agree for many shapes, and that the counted computation gives
the same output as :func:`attnlib.core.scaled_dot_product_attention`. A matrix product alone is
counted the same two ways: :func:`matmul_counts` and :func:`counted_matmul`, which the other files
of :mod:`attnlib.counting` use for the projections.

>>> import numpy as np
>>> Q = np.array([[1.0, 0.0], [0.0, 1.0]])                # n_q = 2, d_k = 2
>>> K = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])    # n_k = 3
>>> V = np.arange(6.0).reshape(3, 2)                      # d_v = 2
>>> output, weights, counted = counted_attention(Q, K, V)
>>> counted == operation_counts(2, 3, 2, 2)               # measured = formula
True
>>> counted.totals()["multiplications"]                   # 2·3·2 + 2·2·3
24
>>> bool(np.allclose(output, weights @ V))
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_flag, as_positive_int, as_queries_keys, as_real_array

__all__ = [
    "OPERATIONS",
    "STEPS",
    "OperationCounts",
    "counted_attention",
    "counted_matmul",
    "matmul_counts",
    "operation_counts",
]

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

    Lesson 08 · question 2c, in "the solutions in numbers".

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

    Lesson 08 · question 2c, in "the solutions in numbers".

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

    Lesson 08 · question 2c, in "the solutions in numbers".

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


def matmul_counts(n: int, m: int, p: int) -> dict[str, int]:
    """Operations of a matrix product ``(n, m) @ (m, p)``: ``n·m·p`` multiplications and
    ``n·(m−1)·p`` additions (each of the ``n·p`` entries sums ``m`` products).

    Lesson 09 · section 2, the cost (the projections and ``W_o``); lesson 08's ``Q Kᵀ`` is one.
    """
    n, m, p = (as_positive_int(v, name) for v, name in ((n, "n"), (m, "m"), (p, "p")))
    return {"multiplications": n * m * p, "additions": n * (m - 1) * p}


def counted_matmul(A: np.ndarray, B: np.ndarray, counts: dict[str, int]) -> np.ndarray:
    """``A @ B`` with scalar loops, adding its multiplications and additions to ``counts``.

    Lesson 09 · section 2, the cost; lesson 15 counts generation with it.
    """

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
