"""Self-checks for exercises: say what is right, or name the likely mistake.

Each check takes a learner's answer and the exercise's inputs, recomputes the right answer with
attnlib, and returns a :class:`CheckResult`. When the answer is wrong, the check also computes
the usual mistakes (softmax over the wrong axis, a forgotten scale, ``K`` used instead of ``V``,
...) and names the one the answer matches. End a notebook cell with a check to see its verdict:

>>> from attnlib import checks
>>> checks.check_value(12, 12, name="n_q · n_k")
✔ Correct: n_q · n_k = 12.

Two kinds of argument, two kinds of failure:

* the learner's *answer* is never trusted: ``None``, ``...`` (a placeholder), text, a wrong shape
  or NaN give a failed :class:`CheckResult` that says what is wrong;
* the exercise's own inputs (``Q``, ``K``, ``V``, ``n``, shapes, ``decimals``) are validated like
  everywhere in attnlib and raise ``ValueError`` or ``TypeError`` naming the argument.

Numbers computed by hand are compared with a tolerance: ``decimals=2`` accepts an answer within
``0.01`` of attnlib's, entry by entry.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib._validate import as_positive_int, as_real_array, as_scale
from attnlib.core import AttentionSteps, attention_steps, causal_mask, default_scale, softmax
from attnlib.counting import OPERATIONS, STEPS, operation_counts

__all__ = [
    "CheckResult",
    "check_attention",
    "check_causal_mask",
    "check_operation_counts",
    "check_shape",
    "check_value",
]

_PASS, _FAIL = "✔", "✘"
_MARKDOWN_SPECIAL = "\\`*_[]<>#|"


@dataclass(frozen=True, repr=False)
class CheckResult:
    """The verdict of a check: passed or not, and a one-line message for the learner.

    ``str()`` and ``repr()`` give the same friendly line (``✔ Correct: ...`` or ``✘ ...``), with
    no memory address, so a cell that ends with a check shows the same text on every run; in
    Jupyter the verdict is rendered as Markdown. ``bool(result)`` is ``result.passed``.

    Attributes
    ----------
    passed : bool
        Whether the answer is right.
    message : str
        What is right, or which mistake the answer most likely contains and how to fix it.
    """

    passed: bool
    message: str

    def __post_init__(self) -> None:
        if not isinstance(self.passed, (bool, np.bool_)):
            raise TypeError(f"passed must be True or False, got {self.passed!r}")
        if not isinstance(self.message, str):
            raise TypeError(f"message must be a string, got {self.message!r}")
        if "\n" in self.message:
            raise ValueError("message must be a single line")
        object.__setattr__(self, "passed", bool(self.passed))

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return f"{_PASS if self.passed else _FAIL} {self.message}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        escaped = "".join(f"\\{c}" if c in _MARKDOWN_SPECIAL else c for c in self.message)
        return f"**{_PASS if self.passed else _FAIL}** {escaped}"


def _ok(message: str) -> CheckResult:
    return CheckResult(True, message)


def _fail(message: str) -> CheckResult:
    return CheckResult(False, message)


# --------------------------------------------------------------------------------------------
# Reading the learner's answer


def _placeholder(answer: object, name: str) -> CheckResult | None:
    """A failed result for an answer that has not been written yet (``None`` or ``...``)."""
    if answer is None or answer is Ellipsis:
        shown = "None" if answer is None else "..."
        return _fail(f"No answer yet: {name} is {shown}; replace it with your own computation.")
    return None


def _answer_array(answer: object, name: str) -> tuple[np.ndarray | None, CheckResult | None]:
    """The answer as a float64 array, or a failed result saying why it is not one."""
    missing = _placeholder(answer, name)
    if missing is not None:
        return None, missing
    if isinstance(answer, str):
        return None, _fail(f"{name} is text ({answer!r}); give the numbers as an array, e.g. np.array(...).")
    try:
        arr = np.asarray(answer)
    except ValueError:
        return None, _fail(f"{name} is ragged: its rows have different lengths, so it is not an array.")
    if arr.dtype == object:
        return None, _fail(f"{name} is not an array of numbers (it is ragged or mixes types).")
    if arr.dtype.kind == "b":
        return None, _fail(f"{name} is boolean; expected numbers.")
    if arr.dtype.kind not in "iuf":
        return None, _fail(f"{name} has dtype {arr.dtype}; expected real numbers.")
    return arr.astype(np.float64), None


def _number(answer: object, name: str) -> tuple[float | None, CheckResult | None]:
    """The answer as one real number, or a failed result saying why it is not one."""
    missing = _placeholder(answer, name)
    if missing is not None:
        return None, missing
    if isinstance(answer, str):
        return None, _fail(f"{name} is text ({answer!r}); give a number, without quotes.")
    if isinstance(answer, (bool, np.bool_)):
        return None, _fail(f"{name} is {answer}; expected a number.")
    if isinstance(answer, np.ndarray) and answer.size == 1 and answer.dtype.kind in "iuf":
        answer = answer.item()
    if not isinstance(answer, numbers.Real):
        return None, _fail(f"{name} is not a single number (got {type(answer).__name__}).")
    value = float(answer)
    if math.isnan(value):
        return None, _fail(f"{name} is NaN; expected a number.")
    return value, None


def _real_number(value: object, name: str) -> float:
    """An exercise's own number: a finite real, or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result}")
    return result


def _tolerance(decimals: object) -> float:
    return 10.0 ** -as_positive_int(decimals, "decimals", minimum=0)


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0.0, atol=atol))


def _fmt(x: float, decimals: int, extra: int = 1) -> str:
    """A number as a learner would write it: ``decimals + extra`` decimals, no ``-0``."""
    if np.isneginf(x):
        return "−∞"
    if np.isnan(x):
        return "NaN"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x)}"
    text = f"{x:.{decimals + extra}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _numpy_index(index: Sequence[int]) -> str:
    """An index as numpy writes it: ``[1, 0]``."""
    return "[" + ", ".join(str(i) for i in index) + "]"


def _where(index: tuple[int, ...], columns: str | None = None, *, single: bool = False) -> str:
    """Where an entry is, for a learner: counted from 1, with the numpy index (counted from 0).

    ``columns`` names what the last axis holds (``"key"``, ``"dimension"``); rows are queries.
    Without it (an answer whose layout is not the expected one) rows and columns are just rows and
    columns: ``row 2, column 1 (numpy index [1, 0])``. ``single`` says a 1-D answer belongs to one
    query, so its entries are keys or dimensions rather than queries.
    """
    at = f"(numpy index {_numpy_index(index)})"
    if len(index) == 1:
        what = columns if (columns and single) else "entry"
        return f"{what} {index[0] + 1} {at}"
    row, col = ("query", columns) if columns else ("row", "column")
    text = f"{row} {index[-2] + 1}, {col} {index[-1] + 1}"
    if len(index) > 2:
        text += f" of batch entry {_numpy_index(index[:-2])}"
    return f"{text} {at}"


def _first_mismatch(answer: np.ndarray, expected: np.ndarray, atol: float) -> tuple[tuple[int, ...], int]:
    """The first entry (row by row) outside the tolerance, and how many there are."""
    bad = ~np.isclose(answer, expected, rtol=0.0, atol=atol)
    return tuple(int(i) for i in np.argwhere(bad)[0]), int(bad.sum())


def _several(lead: str, reasons: Sequence[str]) -> str:
    """Several mistakes that give the same wrong answer, all listed after ``lead``, simplest first."""
    listed = " ".join(f"({k}) {reason}" for k, reason in enumerate(reasons, start=1))
    return f"{lead}; it is probably one of these: {listed}"


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


# --------------------------------------------------------------------------------------------
# check_attention

_WHAT = {
    # what: (how to name it, its shape in symbols for a matrix of queries, for a single query)
    "scores": ("the raw scores Q Kᵀ", "(n_q, n_k)", "(n_k,)"),
    "scaled_scores": ("the scaled scores", "(n_q, n_k)", "(n_k,)"),
    "weights": ("the attention weights", "(n_q, n_k)", "(n_k,)"),
    "output": ("the output", "(n_q, d_v)", "(d_v,)"),
}
_COLUMNS = {"scores": "key", "scaled_scores": "key", "weights": "key", "output": "dimension"}


def check_attention(
    answer: object,
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    scale: float | None = None,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    what: str = "output",
    decimals: int = 2,
) -> CheckResult:
    """Check an attention result computed by hand against attnlib, and diagnose mistakes.

    Parameters
    ----------
    answer : array_like
        The learner's result: shape ``(n_q, d_v)`` for the output, ``(n_q, n_k)`` for the weights
        or scores (``(d_v,)`` / ``(n_k,)`` for a single query ``Q`` of shape ``(d_k,)``).
    Q : array_like, shape (..., n_q, d_k) or (d_k,)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
    scale, mask, causal
        As in :func:`attnlib.scaled_dot_product_attention` (``scale=None`` is ``1/√d_k``;
        ``scale=1.0`` is plain dot-product attention).
    what : {"output", "weights", "scores", "scaled_scores"}
        Which result the answer is: the output ``weights @ V``, the weights, the raw scores
        ``Q Kᵀ`` or the scaled scores (before any mask).
    decimals : int
        The answer passes when every entry is within ``10**-decimals`` of attnlib's.

    Returns
    -------
    CheckResult
        Passed, or the likely mistake: softmax over the wrong axis (``axis=0``), no scaling, a
        scale of ``1/d_k``, ``√d_k`` or ``1/√n_k`` instead of ``1/√d_k``, ``K`` or ``Vᵀ`` used
        instead of ``V``, no softmax, scores normalised without ``exp``, exponentials not
        normalised, no mask, the transpose, the weights instead of the output (or the reverse),
        weight rows that do not sum to 1, a wrong shape, NaN, rounding; otherwise the first entry
        that differs, as "query 2, key 1 (numpy index [1, 0])". When several mistakes give the
        same numbers, all of them are listed.

    Raises
    ------
    ValueError, TypeError
        If ``Q``, ``K``, ``V``, ``mask``, ``scale``, ``what`` or ``decimals`` is invalid.
    """
    if what not in _WHAT:
        raise ValueError(f"what must be one of {sorted(_WHAT)}, got {what!r}")
    atol = _tolerance(decimals)
    digits = int(decimals)
    steps = attention_steps(Q, K, V, mask=mask, causal=causal, scale=scale)
    results = {
        "scores": steps.raw_scores,
        "scaled_scores": steps.scaled_scores,
        "weights": steps.weights,
        "output": steps.output,
    }
    expected = np.asarray(results[what], dtype=np.float64)
    label, symbols, single_symbols = _WHAT[what]
    single = np.ndim(Q) == 1
    symbols = single_symbols if single else symbols
    if expected.ndim > (1 if single else 2):
        symbols = "(..., " + symbols[1:]

    arr, problem = _answer_array(answer, what)
    if arr is None:
        assert problem is not None
        return problem
    if _close(arr, expected, atol) and np.isfinite(arr).all():
        return _ok(f"Correct: every entry of {label} is within {atol:g} of attnlib's.")
    columns = _COLUMNS[what] if arr.shape == expected.shape else None
    if not np.isfinite(arr).all():
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        kind = "NaN" if np.isnan(arr[index]) else "an infinity"
        place = _where(index, columns, single=single) if arr.ndim else "the only entry"
        return _fail(
            f"Your {what} has {kind} at {place}: NaN comes from "
            "inf/inf or 0/0, usually exp of a large score overflowing (subtract each row's maximum "
            "first) or a row whose every key is masked."
        )
    fits: list[str] = []
    for message, wrong in _attention_mistakes(Q, K, V, steps, scale, mask, causal, what):
        if wrong.shape == arr.shape and not _close(wrong, expected, atol) and _close(arr, wrong, atol):
            if message not in fits:
                fits.append(message)
    if len(fits) == 1:
        return _fail(fits[0])
    if fits:
        return _fail(_several("Several mistakes give exactly these numbers here", fits))
    if arr.shape != expected.shape:
        hint = ""
        if arr.size == expected.size and np.squeeze(arr).shape == np.squeeze(expected).shape:
            hint = "; the numbers may be right, but the axes of length 1 differ (use .reshape or [0])"
        return _fail(
            f"Wrong shape: {label} should have shape {symbols} = {_shape_text(expected.shape)}, "
            f"got {_shape_text(arr.shape)}{hint}."
        )
    index, n_bad = _first_mismatch(arr, expected, atol)
    largest = float(np.max(np.abs(arr - expected)))
    if largest <= 5 * atol:
        return _fail(
            f"Very close, but {n_bad} entr{'y is' if n_bad == 1 else 'ies are'} off by more than "
            f"{atol:g} (largest difference {largest:.3f}): probably rounding; keep 3 or 4 decimals "
            "in the intermediate steps."
        )
    if what == "weights":
        sums = arr.sum(axis=-1)
        should = expected.sum(axis=-1)
        off = np.abs(sums - should) > max(atol * arr.shape[-1], 0.02)
        if off.any():
            row = tuple(int(i) for i in np.argwhere(off)[0]) if off.ndim else ()
            if not row:
                where = "your weights sum"
            else:
                batch = f" of batch entry {_numpy_index(row[:-1])}" if len(row) > 1 else ""
                where = f"the weights of query {row[-1] + 1}{batch} (numpy index {_numpy_index(row)}) sum"
            return _fail(
                f"Each row of weights must sum to 1 (a softmax over the keys); {where} to "
                f"{float(sums[row]):.3f}."
            )
    return _fail(
        f"Not yet: {n_bad} of {arr.size} entries {'is' if n_bad == 1 else 'are'} off. Compare "
        f"{_where(index, columns, single=single)}: expected "
        f"{_fmt(expected[index], digits)}, got {_fmt(arr[index], digits)}."
    )


def _attention_mistakes(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    steps: AttentionSteps,
    scale: float | None,
    mask: npt.ArrayLike | None,
    causal: bool,
    what: str,
) -> list[tuple[str, np.ndarray]]:
    """The usual wrong versions of ``what``, each with the diagnosis to show, most likely first."""
    k = as_real_array(K, "K")
    v = as_real_array(V, "V").astype(np.float64)
    n_k, d_k = k.shape[-2], k.shape[-1]
    right = default_scale(d_k)
    used = right if scale is None else as_scale(scale)
    is_default = math.isclose(used, right, rel_tol=1e-9)
    single = np.ndim(Q) == 1
    weights = np.asarray(steps.weights, dtype=np.float64)
    masked = np.asarray(steps.masked_scores, dtype=np.float64)
    scaled = np.asarray(steps.scaled_scores, dtype=np.float64)
    raw = np.asarray(steps.raw_scores, dtype=np.float64)
    output = np.asarray(steps.output, dtype=np.float64)

    def with_scale(factor: float) -> Callable[[], np.ndarray]:
        def compute() -> np.ndarray:
            alt = attention_steps(Q, K, V, mask=mask, causal=causal, scale=factor)
            return {"scaled_scores": alt.scaled_scores, "weights": alt.weights, "output": alt.output}[what]

        return compute

    def column_softmax() -> np.ndarray:
        scores = masked[..., np.newaxis, :] if single else masked
        wrong = softmax(scores, axis=-2)
        wrong = wrong[..., 0, :] if single else wrong
        return wrong if what == "weights" else wrong @ v

    def unmasked() -> np.ndarray:
        alt = attention_steps(Q, K, V, scale=used)
        return alt.weights if what == "weights" else alt.output

    def without_exp() -> np.ndarray:
        kept = np.where(np.isfinite(masked), masked, 0.0)  # hidden keys: 0 instead of exp(−∞) = 0
        wrong = kept / kept.sum(axis=-1, keepdims=True)
        return wrong if what == "weights" else wrong @ v

    sqrt_d = math.sqrt(d_k)
    candidates: list[tuple[str, Callable[[], np.ndarray]]] = []
    if what in ("weights", "output"):
        candidates.append(
            (
                "Softmax over the wrong axis: your weights sum to 1 down each column (axis=0). Each "
                "query's row must sum to 1: take the softmax over the keys, axis=-1.",
                column_softmax,
            )
        )
    if what in ("scaled_scores", "weights", "output"):
        if is_default:
            candidates += [
                (
                    f"Forgot to scale: multiply the scores Q Kᵀ by 1/√d_k = 1/√{d_k} = {right:.4f} "
                    "before the softmax.",
                    with_scale(1.0),
                ),
                (
                    f"Scaled by 1/d_k instead of 1/√d_k: divide the scores by √{d_k} = {sqrt_d:.4f}, "
                    f"not by {d_k}.",
                    with_scale(1.0 / d_k),
                ),
                (
                    f"Multiplied by √d_k instead of dividing: the scores must be divided by "
                    f"√{d_k} = {sqrt_d:.4f}.",
                    with_scale(sqrt_d),
                ),
            ]
            if n_k != d_k:
                candidates.append(
                    (
                        f"Divided by √n_k = √{n_k} (the number of keys) instead of √d_k = √{d_k} (the "
                        "length of the query and key vectors).",
                        with_scale(1.0 / math.sqrt(n_k)),
                    )
                )
        else:
            plain = " (plain dot-product attention)" if used == 1.0 else ""
            candidates.append(
                (
                    f"Used the transformer's scale 1/√d_k = {right:.4f}, but this exercise uses "
                    f"scale = {used:g}{plain}.",
                    with_scale(right),
                )
            )
    if (mask is not None or causal) and what in ("weights", "output"):
        candidates.append(
            (
                "Forgot the mask: hidden keys must get weight 0 (add −∞ to their scores, or use "
                "the boolean mask, before the softmax).",
                unmasked,
            )
        )
    if what in ("weights", "output"):
        candidates.append(
            (
                "Normalised without exp: you divided each score by its row's sum; the softmax "
                "divides exp(score) by the sum of the exponentials, exp(s) / exp(s).sum().",
                without_exp,
            )
        )
    scores_used = "scores" if math.isclose(used, 1.0) else "scaled scores"
    if what == "output":
        candidates += [
            ("Used K instead of V: the output mixes the values, weights @ V.", lambda: weights @ k),
            (
                "Transposed V: use weights @ V (V has one row per key), not weights @ V.T.",
                lambda: weights @ np.swapaxes(v, -1, -2),
            ),
            (
                f"Forgot the softmax: you multiplied the {scores_used} by V; turn each row of scores "
                "into weights with softmax first.",
                lambda: scaled @ v,
            ),
            (
                "Exponentiated but not normalised: divide each row of exp(scores) by its sum before "
                "multiplying by V.",
                lambda: np.exp(masked) @ v,
            ),
            ("These are the attention weights, not the output: multiply them by V.", lambda: weights),
        ]
    if what == "weights":
        if math.isclose(used, 1.0):  # raw and scaled scores are the same here
            candidates.append(("These are the scores Q Kᵀ: now take the softmax of each row.", lambda: raw))
        else:
            candidates += [
                (
                    "These are the raw scores Q Kᵀ: scale them and take the softmax of each row.",
                    lambda: raw,
                ),
                ("These are the scaled scores: now take the softmax of each row.", lambda: scaled),
            ]
        candidates += [
            (
                "Exponentiated but not normalised: divide each row of exp(scores) by its sum.",
                lambda: np.exp(masked),
            ),
            (
                "This is the output, not the weights: the weights come before multiplying by V.",
                lambda: output,
            ),
        ]
    if what == "scores":
        if not math.isclose(used, 1.0):
            candidates.append(
                ("These are already scaled: the raw scores are Q Kᵀ, before scaling.", lambda: scaled)
            )
        candidates.append(
            ("These are the weights: the raw scores are Q Kᵀ, before scaling and softmax.", lambda: weights)
        )
    if what == "scaled_scores":
        candidates.append(
            ("These are the weights: the scaled scores come before the softmax.", lambda: weights)
        )
    expected = {"scores": raw, "scaled_scores": scaled, "weights": weights, "output": output}[what]
    if expected.ndim >= 2:
        candidates.append(
            (
                f"Transposed: your answer is the transpose of the right one; it should have shape "
                f"{_shape_text(expected.shape)}, one row per query.",
                lambda: np.swapaxes(expected, -1, -2),
            )
        )
    computed = []
    for message, compute in candidates:
        try:
            with np.errstate(all="ignore"):
                wrong = np.asarray(compute(), dtype=np.float64)
        except ValueError:  # this mistake is impossible for these shapes (e.g. V.T does not fit)
            continue
        if np.isfinite(wrong).all():
            computed.append((message, wrong))
    return computed


# --------------------------------------------------------------------------------------------
# check_shape and check_value


def check_shape(
    answer: object,
    expected_shape: Sequence[int],
    *,
    name: str = "the shape",
    axes: Sequence[str] | None = None,
) -> CheckResult:
    """Check a shape: given as a tuple such as ``(2, 3)``, or as an array whose shape is checked.

    Parameters
    ----------
    answer : tuple of int, int, or array
        The learner's shape (an int ``n`` means ``(n,)``), or an array (its ``.shape``).
    expected_shape : sequence of int
        The right shape.
    name : str
        What the shape is of, for the message (``"the weights' shape"``).
    axes : sequence of str, optional
        A name for each axis (``("n_q", "n_k")``), shown in the messages.

    Returns
    -------
    CheckResult
        Passed, or: the axes in the wrong order, the wrong number of axes, or which axis differs.
    """
    expected = tuple(as_positive_int(s, "expected_shape entry", minimum=0) for s in _sequence(expected_shape))
    if axes is not None:
        axes = tuple(str(a) for a in axes)
        if len(axes) != len(expected):
            raise ValueError(f"axes names {axes} must have one name per axis of {_shape_text(expected)}")
    missing = _placeholder(answer, "the answer")
    if missing is not None:
        return missing
    got = _as_shape(answer)
    if got is None:
        return _fail(
            f"Give {name} as a tuple of whole numbers, such as {_shape_text(expected)}; got {answer!r}."
        )
    symbols = f"{_shape_text(axes).replace(chr(39), '')} = " if axes else ""
    if got == expected:
        return _ok(f"Correct: {name} is {symbols}{_shape_text(expected)}.")
    if len(got) != len(expected):
        return _fail(
            f"{name.capitalize()} has {len(expected)} ax{'is' if len(expected) == 1 else 'es'}, "
            f"{symbols}{_shape_text(expected)}; you gave {len(got)}: {_shape_text(got)}."
        )
    if len(got) >= 2 and sorted(got) == sorted(expected):
        return _fail(
            f"Right sizes, wrong order: {name} is {symbols}{_shape_text(expected)}, not {_shape_text(got)}."
        )
    axis = next(i for i, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e)
    called = f", {axes[axis]}" if axes else ""
    return _fail(
        f"Not yet: the {_ordinal(axis + 1)} axis (numpy axis {axis}{called}) of {name} should be "
        f"{expected[axis]}, got {got[axis]}."
    )


def _ordinal(n: int) -> str:
    """``1`` -> ``first``, ``2`` -> ``second``, ...; ``11`` -> ``11th``."""
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
    return words[n - 1] if 1 <= n <= len(words) else f"{n}th"


def _sequence(value: object) -> Sequence[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"expected_shape must be a tuple of whole numbers such as (2, 3), got {value!r}")
    return list(value)


def _as_shape(answer: object) -> tuple[int, ...] | None:
    """The shape a learner means: an array's shape, a tuple/list of ints, or an int ``n``."""
    if hasattr(answer, "shape") and not isinstance(answer, numbers.Number):
        return tuple(int(s) for s in answer.shape)  # type: ignore[attr-defined]
    if isinstance(answer, numbers.Integral) and not isinstance(answer, bool):
        return (int(answer),)
    if isinstance(answer, (tuple, list)) and all(
        isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in answer
    ):
        return tuple(int(s) for s in answer)
    return None


def check_value(
    answer: object,
    expected: float,
    *,
    decimals: int = 2,
    name: str = "the answer",
    mistakes: Mapping[str, float] | None = None,
) -> CheckResult:
    """Check one number, such as a count or a weight read off by hand.

    Parameters
    ----------
    answer : float
        The learner's number.
    expected : float
        The right number.
    decimals : int
        Passes when ``|answer − expected| <= 10**-decimals``.
    name : str
        What the number is, for the message.
    mistakes : mapping of str to float, optional
        Known wrong answers: ``{diagnosis: wrong value}``. An answer equal to a wrong value gets
        its diagnosis.

    Returns
    -------
    CheckResult
        Passed; or the known mistake(s) the answer matches; or the right value rounded to too few
        decimals; otherwise whether the answer is too high or too low, with a hint. The right
        value itself is never shown, so the learner can try again.
    """
    right = _real_number(expected, "expected")
    atol = _tolerance(decimals)
    digits = int(decimals)
    known = {str(msg): _real_number(val, f"mistakes[{msg!r}]") for msg, val in (mistakes or {}).items()}
    value, problem = _number(answer, name)
    if value is None:
        assert problem is not None
        return problem
    if abs(value - right) <= atol:
        return _ok(f"Correct: {name} = {_fmt(value, digits, 0)}.")
    shown = _fmt(value, digits, 0)
    fits = [msg for msg, wrong in known.items() if abs(value - wrong) <= atol and abs(wrong - right) > atol]
    if len(fits) == 1:
        return _fail(f"{shown} is not it: {fits[0]}")
    if fits:
        return _fail(_several(f"{shown} is not it. Several mistakes give this number", fits))
    for places in range(digits):
        cut = 10.0**places
        if any(
            math.isclose(value, short, rel_tol=1e-9, abs_tol=1e-12)
            for short in (round(right * cut) / cut, math.trunc(right * cut) / cut)
        ):
            return _fail(
                f"Close: {value:.{places}f} is rounded to {places} decimal{'' if places == 1 else 's'}; "
                f"give at least {digits} decimals (the check accepts a difference of {atol:g})."
            )
    direction = "too high" if value > right else "too low"
    decimals_hint = (
        "" if right.is_integer() else f", and give at least {digits} decimal{'' if digits == 1 else 's'}"
    )
    return _fail(f"Not yet: {shown} is {direction}. Check your formula step by step{decimals_hint}.")


# --------------------------------------------------------------------------------------------
# check_causal_mask


def check_causal_mask(answer: object, n: int) -> CheckResult:
    """Check a causal mask for ``n`` tokens: boolean (``True`` = may attend) or additive (0 / −∞).

    Parameters
    ----------
    answer : array_like, shape (n, n)
        Boolean: ``True`` on and below the diagonal. Or float, added to the scores: ``0`` on and
        below the diagonal, ``-inf`` above (a finite number so negative that ``exp`` gives
        exactly 0 is accepted too, with a note).
    n : int
        Number of tokens (queries = keys).

    Returns
    -------
    CheckResult
        Passed, or: upper-triangular (transposed), the diagonal missing, the convention inverted
        (``True`` = hidden), 1/0 instead of 0/−∞ in an additive mask, a wrong shape, or the first
        wrong entry.
    """
    size = as_positive_int(n, "n")
    missing = _placeholder(answer, "the mask")
    if missing is not None:
        return missing
    if isinstance(answer, str):
        return _fail(f"The mask is text ({answer!r}); give an array of shape ({size}, {size}).")
    try:
        arr = np.asarray(answer)
    except ValueError:
        return _fail("The mask is ragged: its rows have different lengths.")
    if arr.dtype.kind not in "biuf":
        return _fail(f"The mask has dtype {arr.dtype}; use booleans (True = may attend) or 0 / −∞.")
    if arr.shape != (size, size):
        return _fail(
            f"Wrong shape: a causal mask for n = {size} tokens is (n, n) = ({size}, {size}), one row per "
            f"query and one column per key; got {_shape_text(arr.shape)}."
        )
    allowed = causal_mask(size)
    patterns = {
        "upper": allowed.T,
        "no diagonal": np.tri(size, k=-1, dtype=bool),
        "inverted": ~allowed,
    }
    if arr.dtype == bool:
        if np.array_equal(arr, allowed):
            return _ok(
                "Correct: a boolean causal mask, True on and below the diagonal: token i may attend "
                "to tokens 1..i, itself and the earlier ones (np.tril, attnlib.causal_mask(n))."
            )
        return _fail(_mask_mistake(arr, patterns, allowed, "True", "False"))

    values = arr.astype(np.float64)
    if np.isnan(values).any():
        return _fail("The mask has NaN entries: use 0 to keep a key and −∞ (-np.inf) to hide it.")
    if np.isposinf(values).any():
        return _fail("The mask has +∞ entries: +∞ would swamp the softmax. Use 0 to keep and −∞ to hide.")
    with np.errstate(under="ignore"):
        hidden = np.exp(values) == 0  # -inf, or so negative that exp gives exactly 0
    kept = values == 0
    if (kept | hidden).all():
        if np.array_equal(kept, allowed):
            if np.isneginf(values[hidden]).all():
                return _ok(
                    "Correct: an additive causal mask, 0 on and below the diagonal (keep) and −∞ "
                    "above (hide); added to the scores, exp(−∞) = 0 removes the later tokens."
                )
            worst = float(values[hidden].max())
            return _ok(
                f"Correct: an additive causal mask. {worst:g} acts as −∞ here (exp({worst:g}) is 0 "
                "in float64); -np.inf says it exactly."
            )
        return _fail(_mask_mistake(kept, patterns, allowed, "0", "−∞"))
    if np.isin(values, (0.0, 1.0)).all():
        ones = values == 1
        if np.array_equal(ones, allowed):
            return _fail(
                "1/0 instead of 0/−∞: as an additive mask, adding 1 or 0 to the scores hides nothing. "
                "Make it boolean (answer == 1) or use 0 to keep and −∞ to hide: "
                "np.where(answer == 1, 0, -np.inf)."
            )
        if np.array_equal(ones, ~allowed):
            return _fail(
                "1 marks the hidden entries, but added to the scores 1 hides nothing: use −∞ "
                "instead of 1, np.where(answer == 1, -np.inf, 0)."
            )
        return _fail(
            "A 0/1 mask is not additive: use booleans (True = may attend) or 0 / −∞. "
            + _mask_mistake(ones, patterns, allowed, "1", "0")
        )
    i, j = (int(x) for x in np.argwhere(~(kept | hidden))[0])
    return _fail(
        f"Query token {i + 1}, key token {j + 1} (numpy index [{i}, {j}]) is {values[i, j]:g}, but "
        "an additive mask holds only 0 (keep) and −∞ "
        f"(hide): exp({values[i, j]:g}) is not 0, so that key would still get some weight."
    )


def _mask_mistake(
    keep: np.ndarray, patterns: Mapping[str, np.ndarray], allowed: np.ndarray, yes: str, no: str
) -> str:
    """Name what is wrong with the pattern of kept entries (``keep``), in the answer's own terms."""
    if np.array_equal(keep, patterns["upper"]):
        return (
            f"Upper-triangular: {yes} above the diagonal lets each token see the tokens after it. "
            f"Causal means looking back: {yes} on and below the diagonal, {no} above (np.tril)."
        )
    if np.array_equal(keep, patterns["no diagonal"]):
        return (
            f"The diagonal is missing: each token may attend to itself, so the diagonal must be {yes} "
            "too (otherwise the first token sees nothing at all)."
        )
    if np.array_equal(keep, patterns["inverted"]):
        other = (
            " Careful with PyTorch: F.scaled_dot_product_attention uses True = may attend too, but "
            "the boolean masks of nn.MultiheadAttention and nn.Transformer use the opposite "
            "convention, True = hidden (~mask turns one into the other)."
            if yes == "True"
            else ""
        )
        return (
            f"Inverted: your {yes} marks the hidden entries. In attnlib {yes} means may attend: "
            f"{yes} on and below the diagonal.{other}"
        )
    i, j = (int(x) for x in np.argwhere(keep != allowed)[0])
    should, why = (
        (yes, f"token {i + 1} may see token {j + 1}" + (", itself" if i == j else ", an earlier one"))
        if allowed[i, j]
        else (no, f"token {j + 1} comes after token {i + 1}")
    )
    return (
        f"Not yet: query token {i + 1}, key token {j + 1} (numpy index [{i}, {j}]) should be {should} "
        f"({why})."
    )


# --------------------------------------------------------------------------------------------
# check_operation_counts

#: What the exercise's counts include, said once (lessons and messages quote it).
COUNTING_CONVENTION = (
    "textbook count: the scaling by 1/√d_k and the softmax normalisation are divisions, √d_k is one "
    "square root, and the stable softmax's max subtraction is left out"
)


def check_operation_counts(
    answer: Mapping[str, object], n_q: int, n_k: int, d_k: int, d_v: int
) -> CheckResult:
    """Check the multiplications and additions of attention against :mod:`attnlib.counting`.

    The right totals are those of ``operation_counts(n_q, n_k, d_k, d_v, stable=False)``:
    ``n_q·n_k·d_k + n_q·n_k·d_v`` multiplications (``Q Kᵀ`` and ``weights · V``) and
    ``n_q·n_k·(d_k−1) + n_q·(n_k−1) + n_q·d_v·(n_k−1)`` additions (the sums in ``Q Kᵀ``, the
    softmax denominators, the sums in ``weights · V``). Scaling by ``1/√d_k`` is counted as
    ``n_q·n_k`` divisions plus one square root, and the softmax normalisation as divisions, so
    neither is a multiplication.

    Parameters
    ----------
    answer : mapping
        ``{"multiplications": ..., "additions": ...}``; other keys of
        :data:`attnlib.counting.OPERATIONS` (``"divisions"``, ``"exponentials"``,
        ``"square roots"``) are checked too if given.
    n_q, n_k, d_k, d_v : int
        The shapes: ``Q`` is ``(n_q, d_k)``, ``K`` is ``(n_k, d_k)``, ``V`` is ``(n_k, d_v)``.

    Returns
    -------
    CheckResult
        Passed, or for each wrong count its likely mistake: a step left out, one addition too many
        per sum (a sum of m numbers takes m − 1), the scaling counted as multiplications, ``d_k``
        used for ``d_v``. When several of these mistakes give the same wrong count, the message
        says "probably one of these" and lists them all, simplest first.
    """
    counts = operation_counts(n_q, n_k, d_k, d_v, stable=False)
    totals = counts.totals()
    shapes = f"n_q={n_q}, n_k={n_k}, d_k={d_k}, d_v={d_v}"
    missing = _placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if not isinstance(answer, Mapping):
        return _fail(
            'Give the counts as a dict: {"multiplications": ..., "additions": ...}; got '
            f"{type(answer).__name__}."
        )
    unknown = [key for key in answer if key not in OPERATIONS]
    if unknown:
        return _fail(
            f"Unknown key {unknown[0]!r}: use 'multiplications' and 'additions' (also allowed: "
            f"{', '.join(repr(op) for op in OPERATIONS[2:])})."
        )
    absent = [key for key in ("multiplications", "additions") if key not in answer]
    if absent:
        return _fail(f"The answer has no {absent[0]!r} entry.")

    verdicts: list[tuple[bool, str]] = []
    for op in OPERATIONS:
        if op not in answer:
            continue
        value, problem = _number(answer[op], f"answer[{op!r}]")
        if value is None:
            assert problem is not None
            return problem
        if not value.is_integer() or value < 0:
            return _fail(f"answer[{op!r}] is {value:g}; a count is a whole number, 0 or more.")
        verdicts.append(_count_verdict(op, int(value), totals[op], counts.steps, (n_q, n_k, d_k, d_v)))
    if all(ok for ok, _ in verdicts):
        listed = " and ".join(f"{totals[op]} {op}" for op in OPERATIONS if op in answer)
        return _ok(f"Correct: {listed} for {shapes} ({COUNTING_CONVENTION}).")
    return _fail(" ".join(text for _, text in verdicts))


def _count_verdict(
    op: str,
    got: int,
    right: int,
    steps: Mapping[str, Mapping[str, int]],
    dims: tuple[int, int, int, int],
) -> tuple[bool, str]:
    """Whether one count is right, and a sentence about it (the likely mistake if not)."""
    if got == right:
        return True, f"{op.capitalize()}: {got} is right."
    n_q, n_k, _, d_v = dims
    if op == "multiplications":
        qk, wv = steps[STEPS[0]][op], steps[STEPS[4]][op]
        candidates = [
            (qk, f"you counted Q Kᵀ (n_q·n_k·d_k = {qk}) but not weights · V (n_q·n_k·d_v = {wv})."),
            (wv, f"you counted weights · V (n_q·n_k·d_v = {wv}) but not Q Kᵀ (n_q·n_k·d_k = {qk})."),
            (
                right + n_q * n_k,
                "you counted the scaling as multiplications; here it is n_q·n_k divisions by √d_k "
                "(and one square root), so it is not in this total.",
            ),
            (
                right + 2 * n_q * n_k,
                "you counted the scaling and the softmax normalisation as multiplications; both "
                "are divisions here.",
            ),
            (
                2 * qk,
                "you used d_k for weights · V too: each of the n_q·d_v outputs sums n_k products, "
                "so it takes n_q·n_k·d_v multiplications.",
            ),
        ]
    elif op == "additions":
        candidates = _addition_mistakes(steps, n_q, n_k, d_v)
    else:
        candidates = []
    fits: list[str] = []
    for wrong, why in candidates:
        if got == wrong != right and why not in fits:
            fits.append(why)
    if len(fits) == 1:
        return False, f"{op.capitalize()}: {got} is not it: {fits[0]}"
    if fits:
        return False, _several(f"{op.capitalize()}: {got} is not it. Several mistakes give {got}", fits)
    direction = "too many" if got > right else "too few"
    return False, f"{op.capitalize()}: {got} is {direction}; the count is {right}."


def _addition_mistakes(
    steps: Mapping[str, Mapping[str, int]], n_q: int, n_k: int, d_v: int
) -> list[tuple[int, str]]:
    """Wrong addition totals, each with its diagnosis: a step left out, or m additions per sum."""
    parts = [
        ("Q Kᵀ", steps[STEPS[0]]["additions"], n_q * n_k),
        ("the softmax denominators", steps[STEPS[3]]["additions"], n_q),
        ("weights · V", steps[STEPS[4]]["additions"], n_q * d_v),
    ]  # (step, its additions, how many sums it has: one more addition each if counted m per sum)
    found: list[tuple[int, int, str]] = []
    for states in itertools.product(("ok", "one too many", "missing"), repeat=3):
        wrong_parts = [(part, state) for part, state in zip(parts, states, strict=True) if state != "ok"]
        if not wrong_parts:
            continue
        total = sum(
            adds + (sums if state == "one too many" else 0)
            for (_, adds, sums), state in zip(parts, states, strict=True)
            if state != "missing"
        )
        if all(state == "one too many" for state in states):
            why = "a sum of m numbers takes m − 1 additions, not m (you counted one per term)."
            rank = 1
        else:
            phrases = [
                f"you left out the additions of {name} ({adds})"
                if state == "missing"
                else f"in {name} a sum of m numbers takes m − 1 additions, not m"
                for (name, adds, _), state in wrong_parts
            ]
            why = "; ".join(phrases) + "."
            rank = len(wrong_parts) + (1 if len(wrong_parts) > 1 else 0)
        found.append((rank, total, why))
    found.sort(key=lambda item: item[0])  # stable: fewest mistakes first
    return [(total, why) for _, total, why in found]
