"""From embeddings to queries, keys and values: ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``.

In NumPy (lesson 02 · 3. All of Q, K and V) each is one matrix product, row ``i`` of ``Q`` being
token ``i``'s embedding times ``W_q``:

>>> import numpy as np
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])        # 3 tokens, d_model = 2
>>> W_q = np.array([[1.0, 2.0], [3.0, 4.0]])
>>> Q, K, V = qkv(X, W_q, 2 * W_q, 3 * W_q)
>>> bool(np.array_equal(Q, X @ W_q)), Q[2].tolist()           # token 2 = [1, 1]: the rows' sum
(True, [4.0, 6.0])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_real_array

__all__ = ["project", "qkv"]


def project(X: npt.ArrayLike, W: npt.ArrayLike, *, name: str = "W") -> np.ndarray:
    """Project embeddings with a weight matrix: ``X @ W``.

    Lesson 02 · 2. One element by hand.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
        One embedding per row.
    W : array_like, shape (d_model, d_out)
        Projection matrix.
    name : str
        What to call ``W`` in error messages (``"W_q"``, ``"W_k"``, ...).

    Returns
    -------
    numpy.ndarray, shape (..., n, d_out)
    """
    x = as_real_array(X, "X")
    w = as_real_array(W, name)
    if w.ndim != 2:
        raise ValueError(f"{name} must be a matrix of shape (d_model, d_out), got shape {w.shape}")
    if x.shape[-1] != w.shape[0]:
        raise ValueError(
            f"{name} has shape {w.shape} but X has shape {x.shape}: {name} needs "
            f"{x.shape[-1]} rows, one per embedding dimension d_model={x.shape[-1]}"
        )
    dtype = np.result_type(x.dtype, w.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        out = x.astype(dtype, copy=False) @ w.astype(dtype, copy=False)
    if not np.isfinite(out).all():
        raise ValueError(f"X @ {name} overflows {dtype}: the inputs are too large")
    return out


def qkv(
    X: npt.ArrayLike, W_q: npt.ArrayLike, W_k: npt.ArrayLike, W_v: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries, keys and values of the same embeddings (self-attention).

    Lesson 02 · 3. All of Q, K and V.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
    W_q : array_like, shape (d_model, d_k)
    W_k : array_like, shape (d_model, d_k)
    W_v : array_like, shape (d_model, d_v)

    Returns
    -------
    Q : numpy.ndarray, shape (..., n, d_k)
    K : numpy.ndarray, shape (..., n, d_k)
    V : numpy.ndarray, shape (..., n, d_v)
    """
    Q = project(X, W_q, name="W_q")
    K = project(X, W_k, name="W_k")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"W_q and W_k must give the same d_k: W_q has shape {np.shape(W_q)}, "
            f"W_k has shape {np.shape(W_k)}"
        )
    return Q, K, project(X, W_v, name="W_v")
