"""Why divide by √d_k: the experiment behind lesson 04, as functions.

For queries and keys whose components are independent with mean 0 and variance 1, the dot
product ``q · k`` has variance ``d_k``: its typical size grows like ``√d_k``. Without scaling
the softmax then puts almost all weight on one key (it saturates) and its gradient vanishes;
dividing by ``√d_k`` brings the scores back to variance 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.core import default_scale, entropy, raw_scores, softmax
from attnlib.validation import as_distributions, as_positive_int

__all__ = [
    "D_K_VALUES",
    "ScalingStatistics",
    "entropy",
    "random_queries_keys",
    "scaling_statistics",
    "softmax_jacobian",
    "softmax_jacobian_norm",
]

#: The d_k values of lesson 04's experiment, its figure's variance curve and its explorer's slider:
#: 1 to 1024, about two per octave.
D_K_VALUES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)


def random_queries_keys(
    d_k: int, n_queries: int = 1, n_keys: int = 8, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random queries and keys with independent standard-normal components.

    Parameters
    ----------
    d_k : int
        The key dimension.
    n_queries, n_keys : int
    seed : int
        Seed of ``numpy.random.default_rng``: the same seed gives the same vectors.

    Returns
    -------
    Q : numpy.ndarray, shape (n_queries, d_k)
    K : numpy.ndarray, shape (n_keys, d_k)
    """
    d_k = as_positive_int(d_k, "d_k")
    n_queries, n_keys = as_positive_int(n_queries, "n_queries"), as_positive_int(n_keys, "n_keys")
    rng = np.random.default_rng(as_positive_int(seed, "seed", minimum=0))
    try:
        return rng.standard_normal((n_queries, d_k)), rng.standard_normal((n_keys, d_k))
    except (ValueError, MemoryError) as exc:  # numpy: "Maximum allowed dimension exceeded"
        raise ValueError(
            f"{n_queries} queries and {n_keys} keys of d_k={d_k} are too many to draw ({exc})"
        ) from None


def softmax_jacobian(weights: npt.ArrayLike) -> np.ndarray:
    """The Jacobian of the softmax at a point, from its output: ``diag(p) - p pᵀ``.

    Entry ``[i, j]`` is ``∂p_i / ∂s_j``. When the softmax saturates (one ``p_i`` near 1) every
    entry is near 0: the scores get (almost) no gradient.

    Parameters
    ----------
    weights : array_like, shape (n,)
        One softmax output.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    p = as_distributions(weights)
    if p.ndim != 1:
        raise ValueError(f"weights must be one distribution of shape (n,), got shape {p.shape}")
    return np.diag(p) - np.outer(p, p)


def softmax_jacobian_norm(weights: npt.ArrayLike) -> np.ndarray:
    """Frobenius norm of :func:`softmax_jacobian` for each distribution, without building it.

    ``‖diag(p) − p pᵀ‖² = Σ p_i² − 2 Σ p_i³ + (Σ p_i²)²``, so rows of many keys cost ``O(n)``.
    Where one weight is near 1 the sum cancels, leaving a relative error near 1e-7.

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Softmax outputs, one distribution per row.

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    p = as_distributions(weights)
    squares = np.sum(p**2, axis=-1)
    return np.sqrt(np.maximum(squares - 2 * np.sum(p**3, axis=-1) + squares**2, 0.0))


@dataclass(frozen=True)
class ScalingStatistics:
    """Scores of random queries against random keys, unscaled and scaled, summarised.

    Attributes
    ----------
    d_k : int
    raw, scaled : numpy.ndarray, shape (n_queries, n_keys)
        ``Q Kᵀ`` and ``Q Kᵀ / √d_k``.
    raw_weights, scaled_weights : numpy.ndarray, shape (n_queries, n_keys)
        The softmax of each, row by row.
    raw_variance, scaled_variance : float
        Variance of all the scores (about ``d_k`` and about 1).
    raw_max_weight, scaled_max_weight : float
        Mean over queries of the largest weight (1 means saturated).
    raw_entropy, scaled_entropy : float
        Mean over queries of the weights' entropy in nats (0 means saturated).
    raw_jacobian_norm, scaled_jacobian_norm : float
        Mean over queries of the Frobenius norm of the softmax Jacobian (0 means no gradient).
    """

    d_k: int
    raw: np.ndarray
    scaled: np.ndarray
    raw_weights: np.ndarray
    scaled_weights: np.ndarray
    raw_variance: float
    scaled_variance: float
    raw_max_weight: float
    scaled_max_weight: float
    raw_entropy: float
    scaled_entropy: float
    raw_jacobian_norm: float
    scaled_jacobian_norm: float


def scaling_statistics(
    d_k: int, *, n_queries: int = 256, n_keys: int = 8, seed: int = 0
) -> ScalingStatistics:
    """Score ``n_queries`` random queries against ``n_keys`` random keys of dimension ``d_k``.

    Parameters
    ----------
    d_k : int
    n_queries, n_keys : int
    seed : int
        Seed of the random queries and keys (:func:`random_queries_keys`).

    Returns
    -------
    ScalingStatistics
    """
    Q, K = random_queries_keys(d_k, n_queries, n_keys, seed=seed)
    raw = raw_scores(Q, K)
    scaled = raw * default_scale(d_k)
    raw_w, scaled_w = softmax(raw), softmax(scaled)
    return ScalingStatistics(
        d_k=d_k,
        raw=raw,
        scaled=scaled,
        raw_weights=raw_w,
        scaled_weights=scaled_w,
        raw_variance=float(raw.var()),
        scaled_variance=float(scaled.var()),
        raw_max_weight=float(raw_w.max(axis=-1).mean()),
        scaled_max_weight=float(scaled_w.max(axis=-1).mean()),
        raw_entropy=float(entropy(raw_w).mean()),
        scaled_entropy=float(entropy(scaled_w).mean()),
        raw_jacobian_norm=float(softmax_jacobian_norm(raw_w).mean()),
        scaled_jacobian_norm=float(softmax_jacobian_norm(scaled_w).mean()),
    )
