"""Argument checks shared by attnlib's functions.

Each check turns what a learner might pass (lists, integers, float32 arrays, a typo) into a clean
floating-point array or number, or raises a ``ValueError`` / ``TypeError`` whose message names the
argument and what was wrong with it. Every module of attnlib checks its arguments with these, so
that the same mistake gets the same message everywhere.

Examples
--------
>>> as_real_array([[1, 2], [3, 4]], "Q").dtype
dtype('float64')
>>> as_real_array([1.0, float("nan")], "V")
Traceback (most recent call last):
...
ValueError: V has 1 non-finite entry; the first is NaN at index (1,) of shape (2,)
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "AttentionArguments",
    "all_finite",
    "as_axis",
    "as_distributions",
    "as_flag",
    "as_mask",
    "as_one_line",
    "as_positive_int",
    "as_queries_keys",
    "as_real",
    "as_real_array",
    "as_rows",
    "as_seed",
    "as_values",
    "attention_arguments",
    "broadcast_batch",
    "check_finite",
    "is_number",
]


def as_real_array(
    x: npt.ArrayLike, name: str, *, allow_neg_inf: bool = False, dtype: npt.DTypeLike = None
) -> np.ndarray:
    """Return ``x`` as a finite floating-point array, or raise a clear error.

    Integers (and anything else that is not float32/float64) become float64; float32 and
    float64 keep their dtype; float16 is computed in float32.

    Parameters
    ----------
    x : array_like, shape (...) with at least one dimension
        The argument as the caller gave it: a list, a NumPy array, a tensor without gradient.
    name : str
        The argument's name, used in error messages.
    allow_neg_inf : bool
        Accept ``-inf`` entries (for scores and additive masks).
    dtype : numpy dtype, optional
        Return this dtype (``np.float64`` for an explorer's state) instead of float32/float64.

    Returns
    -------
    numpy.ndarray of float32 or float64 (or ``dtype``), same shape as ``x``

    Raises
    ------
    TypeError
        ``x`` is None, not numeric (strings, booleans, complex numbers), or cannot be read as an
        array (for example a PyTorch tensor that requires grad).
    ValueError
        ``x`` is ragged, a 0-dimensional scalar, too large for float64, or has NaN or infinite
        entries.
    """
    arr = _as_numeric_array(x, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} is a 0-dimensional scalar ({arr.item()!r}); expected an array")
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    elif arr.dtype.itemsize == 2:  # float16
        arr = arr.astype(np.float32)
    elif arr.dtype.itemsize > 8:  # longdouble: may not fit in float64
        with np.errstate(over="ignore"):
            cast = arr.astype(np.float64)
        if (np.isinf(cast) & np.isfinite(arr)).any():
            raise ValueError(f"{name} has entries too large for float64 (dtype {arr.dtype})")
        arr = cast
    check_finite(arr, name, allow_neg_inf=allow_neg_inf)
    return arr if dtype is None else arr.astype(dtype, copy=False)


def _as_numeric_array(x: object, name: str) -> np.ndarray:
    """Convert to an ndarray, rejecting None, ragged nesting, strings, bool and complex."""
    if x is None:
        raise TypeError(f"{name} is None; expected an array of real numbers")
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} is ragged: its rows have different lengths, so it is not an array") from exc
    except MemoryError:
        raise
    except Exception as exc:  # e.g. torch: "Can't call numpy() on Tensor that requires grad"
        raise TypeError(
            f"{name} ({type(x).__name__}) cannot be read as a NumPy array ({exc}); attnlib computes "
            f"with NumPy and keeps no gradients: pass a NumPy array, or {name}.detach() for a tensor"
        ) from exc
    kind = arr.dtype.kind
    if kind in "iuf":
        return arr
    if kind == "O":
        raise ValueError(
            f"{name} is ragged, mixes types, or holds integers too large for 64 bits (numpy made an "
            f"object array of shape {arr.shape}); expected a rectangular array of real numbers"
        )
    if kind == "c":
        raise TypeError(f"{name} is complex (dtype {arr.dtype}); attention needs real numbers")
    if kind == "b":
        raise TypeError(f"{name} is boolean; expected real numbers (integers or floats)")
    raise TypeError(
        f"{name} has dtype {arr.dtype}, which is not numeric; {name} must be an array of real numbers"
    )


def as_whole_array(x: object, name: str, *, minimum: int | None = None) -> np.ndarray:
    """``x`` as an int64 array of whole numbers (ids, positions), each at least ``minimum``, or raise.

    Floats are refused even when whole (``2.0``): a position or an id is counted, not measured.
    """
    arr = _as_numeric_array(x, name)
    if arr.dtype.kind not in "iu" and arr.size:  # [] is no numbers, not floats
        raise TypeError(f"{name} must be integers (whole numbers), got dtype {arr.dtype}")
    if minimum is not None and arr.size and arr.min() < minimum:
        raise ValueError(f"{name} must be whole numbers of at least {minimum}, got {arr.min()}")
    return arr.astype(np.int64, copy=False)


def all_finite(arr: np.ndarray) -> bool:
    """Whether every entry of ``arr`` is finite (``np.isfinite(arr).all()``, in half the time)."""
    return np.count_nonzero(np.isfinite(arr)) == arr.size


def check_finite(arr: np.ndarray, name: str, *, allow_neg_inf: bool = False) -> None:
    """Raise ``ValueError`` naming the first NaN or infinite entry of ``arr``.

    Parameters
    ----------
    arr : numpy.ndarray of float, shape (...)
    name : str
        The argument's name, used in the message.
    allow_neg_inf : bool
        Accept ``-inf`` entries (a masked score).
    """
    if all_finite(arr):
        return
    bad = np.isnan(arr) | np.isposinf(arr) | (np.isneginf(arr) & (not allow_neg_inf))
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        value = arr[index]
        what = "NaN" if np.isnan(value) else str(value)
        allowed = " (only -inf is allowed, to mask)" if allow_neg_inf else ""
        raise ValueError(
            f"{name} has {int(bad.sum())} non-finite entr{'y' if bad.sum() == 1 else 'ies'}"
            f"{allowed}; the first is {what} at index {index} of shape {arr.shape}"
        )


def is_number(value: object, *, whole: bool = False) -> bool:
    """Whether ``value`` is a real number (a whole number if ``whole``), Python's or NumPy's.

    Booleans are not numbers here, although Python counts ``True`` as the integer 1.
    """
    kind = numbers.Integral if whole else numbers.Real
    return isinstance(value, kind) and not isinstance(value, (bool, np.bool_))


def as_real(value: object, name: str, *, example: str = "") -> float:
    """Return a finite real number as a Python float (which keeps float32 arithmetic float32).

    Parameters
    ----------
    value : int or float
        Python or NumPy real number (not a boolean, a string or an array).
    name : str
        The argument's name, used in error messages.
    example : str
        A typical value, shown in the message when ``value`` is not a number (``"0.5"``).

    Raises
    ------
    TypeError
        ``value`` is not a real number.
    ValueError
        ``value`` is NaN, infinite, or an integer too large for a float.
    """
    if not is_number(value):
        such_as = f" such as {example}" if example else ""
        raise TypeError(f"{name} must be a real number{such_as}, got {value!r}")
    try:
        result = float(value)  # type: ignore[arg-type]
    except OverflowError:
        digits = len(str(abs(int(value))))  # type: ignore[call-overload]
        raise ValueError(f"{name} is too large for a float (an integer of {digits} digits)") from None
    if not math.isfinite(result):
        raise ValueError(f"{name} must be a finite number, got {result}")
    return result


#: The largest count, size or position that part III's functions take: NumPy's int64 indices and
#: sums of two of them stay exact below it.
LARGEST = 2**62


def as_positive_int(value: object, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as a Python int of at least ``minimum``, or raise naming ``name``.

    Parameters
    ----------
    value : int
        A whole number (``numpy.int64`` too; not ``True``, not ``4.0``).
    name : str
        The argument's name, used in error messages.
    minimum : int
        The smallest value allowed (``0`` for counts that may be empty).
    maximum : int, optional
        The largest (a size NumPy's 64-bit indices can hold, say).
    """
    if not is_number(value, whole=True):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(
            f"{name} must be at most {maximum:,}, got an integer of {len(str(int(value)))} digits"
        )
    return int(value)


def as_seed(value: object) -> int:
    """A seed of NumPy's generator as a Python int: a non-negative whole number, or a ValueError."""
    if not (is_number(value, whole=True) and value >= 0):
        raise ValueError(f"seed must be a non-negative integer, got {value!r}")
    return int(value)


def as_flag(value: object, name: str) -> bool:
    """Return ``value`` as a bool if it is ``True`` or ``False``, else raise ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def as_axis(axis: object, shape: tuple[int, ...], of: str) -> int:
    """Return ``axis`` as an int that indexes an array of ``shape`` (negative counts from the end).

    Parameters
    ----------
    axis : int
    shape : tuple of int
        The shape of the array the axis belongs to.
    of : str
        That array's name, used in error messages.
    """
    if not is_number(axis, whole=True):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -len(shape) <= int(axis) < len(shape):
        raise ValueError(f"axis {axis} is out of range for {of} of shape {shape}")
    return int(axis)


def as_distributions(weights: npt.ArrayLike, name: str = "weights", *, axis: int = -1) -> np.ndarray:
    """Return ``weights`` as probability distributions along ``axis``, or raise.

    Every entry must lie in [0, 1] and every distribution must sum to 1, or be all zeros: the
    weights of a query whose every key is masked. The tolerance follows the dtype: the rounding of a
    sum of ``n`` numbers in the dtype computed in, and the rounding of each entry in the dtype
    given, which moves a sum by up to about that dtype's epsilon (2⁻¹⁰ for float16, computed in
    float32).

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Softmax outputs, one distribution per row (along ``axis``).
    name : str
        The argument's name, used in error messages.
    axis : int
        The axis along which each distribution lies.

    Returns
    -------
    numpy.ndarray of float, same shape as ``weights``
    """
    p = as_real_array(weights, name)
    given = np.asarray(weights).dtype  # float16 is computed in float32, but was rounded to float16
    rounding = float(np.finfo(given).eps) if given.kind == "f" else 0.0
    axis = as_axis(axis, p.shape, name)
    if ((p < 0) | (p > 1)).any():
        raise ValueError(
            f"{name} must be probabilities between 0 and 1, got values from {p.min():.3g} to "
            f"{p.max():.3g} (pass the softmax of the scores, not the scores)"
        )
    sums = p.sum(axis=axis)
    tolerance = max(1e-6, 8 * p.shape[axis] * float(np.finfo(p.dtype).eps), 4 * rounding)
    bad = ~(np.isclose(sums, 1.0, rtol=0, atol=tolerance) | (sums == 0))
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must sum to 1 along axis {axis} (a probability distribution over the keys), "
            f"but the distribution at index {index} sums to {float(sums[index]):.6g}"
        )
    return p


def as_queries_keys(Q: npt.ArrayLike, K: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, bool]:
    """Check queries against keys; return both in one dtype, a single query as one row.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k) or (d_k,)
    K : array_like, shape (..., n_k, d_k)

    Returns
    -------
    Q : numpy.ndarray, shape (..., n_q, d_k); a single query becomes (1, d_k)
    K : numpy.ndarray, shape (..., n_k, d_k)
    single : bool
        Whether ``Q`` was a single query (callers drop the ``n_q`` axis again).
    """
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
    broadcast_batch(("Q", q.shape), ("K", k.shape))
    dtype = np.promote_types(q.dtype, k.dtype)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), single


def as_rows(x: npt.ArrayLike, name: str, shape: str = "(..., n, d)") -> np.ndarray:
    """Return ``x`` as a float array of rows (at least two dimensions), or raise naming ``shape``.

    >>> as_rows([1.0, 2.0], "V", "(..., n_k, d_v)")
    Traceback (most recent call last):
    ...
    ValueError: V must have shape (..., n_k, d_v), got shape (2,)
    """
    arr = as_real_array(x, name)
    if arr.ndim < 2:
        raise ValueError(f"{name} must have shape {shape}, got shape {arr.shape}")
    return arr


def as_values(V: npt.ArrayLike, keys: str, keys_shape: tuple[int, ...], n_k: int) -> np.ndarray:
    """Return ``V`` as ``(..., n_k, d_v)`` values, one per key of ``keys`` (of shape ``keys_shape``)."""
    v = as_rows(V, "V", "(..., n_k, d_v)")
    if v.shape[-2] != n_k:
        raise ValueError(
            f"{keys} and V must have the same number of keys n_k: {keys} has shape {keys_shape} "
            f"(n_k={n_k}), V has shape {v.shape} (n_k={v.shape[-2]})"
        )
    return v


def broadcast_batch(*named_shapes: tuple[str, tuple[int, ...]]) -> tuple[int, ...]:
    """Broadcast the leading (batch) dimensions of matrices, or raise naming every shape.

    Parameters
    ----------
    *named_shapes : (str, tuple of int)
        Each argument's name and shape ``(..., rows, columns)``.

    Returns
    -------
    tuple of int
        The broadcast batch shape (all but the last two dimensions).
    """
    if all(len(shape) <= 2 for _, shape in named_shapes):
        return ()
    try:
        return np.broadcast_shapes(*(shape[:-2] for _, shape in named_shapes))
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in named_shapes)
        raise ValueError(f"the batch dimensions (all but the last two) do not broadcast: {listed}") from None


def as_mask(
    mask: npt.ArrayLike, weights_shape: tuple[int, ...], dtype: npt.DTypeLike, *, single: bool = False
) -> np.ndarray:
    """Check a boolean or additive mask against the shape of the attention weights.

    Parameters
    ----------
    mask : array_like, broadcastable to ``weights_shape``
        Boolean (``True`` = may attend) or float (added to the scores: ``0`` keeps, ``-inf`` hides).
    weights_shape : tuple of int
        ``(..., n_q, n_k)``: the shape of the scores the mask applies to.
    dtype : numpy dtype
        The scores' dtype; a float mask is cast to it.
    single : bool
        The scores belong to a single query, given as one row: a mask of shape ``(..., n_k)``
        gets the ``n_q`` axis.

    Returns
    -------
    numpy.ndarray of bool or of ``dtype``
    """
    if mask is None:
        raise TypeError("mask is None; pass a boolean or float array")
    try:
        arr = np.asarray(mask)
    except ValueError as exc:
        raise ValueError("mask is ragged: its rows have different lengths") from exc
    except Exception as exc:
        raise TypeError(f"mask ({type(mask).__name__}) cannot be read as a NumPy array: {exc}") from exc
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


def as_one_line(text: object, name: str) -> str:
    """A non-empty one-line message, or raise naming ``name``."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {text!r}")
    if not text.strip() or "\n" in text:
        raise ValueError(f"{name} must be a non-empty single line, got {text!r}")
    return text


class AttentionArguments(NamedTuple):
    """The arguments of an attention call, checked: see :func:`attention_arguments`.

    Lesson 07 · One computation, every intermediate.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    mask: np.ndarray | None
    scale: float
    single: bool


def attention_arguments(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    mask: npt.ArrayLike | None = None,
    causal: object = False,
    scale: object = None,
) -> AttentionArguments:
    """Every check of :func:`attnlib.core.attention_steps`, before anything is computed.

    Lesson 07 · One computation, every intermediate: the door of
    :func:`attnlib.scaled_dot_product_attention`. Other ways of computing attention
    (:mod:`attnlib.efficient`) call it too, so that they reject exactly what it rejects.

    Returns
    -------
    AttentionArguments
        ``Q, K, V`` in one dtype (a single query as one row, ``(..., 1, d_k)``), the mask ready
        for :func:`attnlib.core.apply_mask` (or None), the scale as a float, and whether ``Q`` was a
        single query.
    """
    as_flag(causal, "causal")
    q, k, single = as_queries_keys(Q, K)
    v = as_values(V, "K", k.shape, n_k=k.shape[-2])
    broadcast_batch(("Q", q.shape), ("K", k.shape), ("V", v.shape))
    dtype = np.promote_types(q.dtype, v.dtype)
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else as_real(scale, "scale", example="0.5")
    checked_mask = None
    if mask is not None:
        weights_shape = (*broadcast_batch(("Q", q.shape), ("K", k.shape)), q.shape[-2], k.shape[-2])
        checked_mask = as_mask(mask, weights_shape, dtype, single=single)
    q, k, v = q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)
    return AttentionArguments(q, k, v, checked_mask, factor, single)
