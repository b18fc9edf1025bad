"""The parts of a Llama-architecture decoder, each a few lines of NumPy.

Lesson 16 · 2 builds the model from them (RMSNorm, SwiGLU, the rotation, grouped-query attention,
the block); · 4 samples with :func:`attnlib.sampling.next_token_probabilities`, which
:mod:`attnlib.model.llama` imports for the lesson. The block is nanoGPT's
``Block.forward`` with Llama's parts::

    x = x + attn(rms_norm_1(x))        grouped-query attention, RoPE on its queries and keys
    x = x + mlp(rms_norm_2(x))         SwiGLU: (silu(a W_gate) * (a W_up)) W_down

RMSNorm in NumPy, on one row and a weight ``g``:

>>> import numpy as np
>>> x, g = np.array([[3.0, 4.0]], dtype=np.float32), np.ones(2, dtype=np.float32)
>>> np.allclose(x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * g, rms_norm(x, g, 1e-5))
True
>>> rms_norm(x, g, 1e-5).dtype      # float32 stays float32
dtype('float32')

Everything stays in its input's dtype: a float64 scalar such as ``np.sqrt(64)`` in a product would
turn a float32 pass into float64 under NumPy 2's promotion rules, several times slower.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "Parts",
    "block",
    "grouped_query_attention",
    "rms_norm",
    "rotate",
    "swiglu",
]

# ---------------------------------------------------------------------------------------------
# The four building blocks and the block


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """``x / √(mean(x²) + ε) · weight`` over the last axis: LayerNorm without the mean and the bias.

    Lesson 16 · 2. Build it yourself: RMSNorm.

    Parameters
    ----------
    x : (..., d) float32
    weight : (d,)
    eps : float

    Returns
    -------
    (..., d), the dtype of ``x``
    """
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * weight


def swiglu(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray) -> np.ndarray:
    """``(silu(x W_gate) * (x W_up)) W_down`` with ``silu(a) = a · σ(a)``: Llama's MLP.

    Lesson 16 · 2. Build it yourself: SwiGLU (Shazeer 2020). A gate decides, number by number, how
    much of ``x W_up`` passes.

    Parameters
    ----------
    x : (..., d_model)
    W_gate, W_up : (d_model, d_mlp)
    W_down : (d_mlp, d_model)

    Returns
    -------
    (..., d_model)
    """
    gate = x @ W_gate
    # σ(a) = 1 / (1 + e^(−a)); a very negative a overflows e^(−a) to inf, and 1/inf = 0 is right
    with np.errstate(over="ignore"):
        silu = gate / (1.0 + np.exp(-gate))
    return (silu * (x @ W_up)) @ W_down


def rotate(x: np.ndarray, positions: npt.ArrayLike, base: float) -> np.ndarray:
    """RoPE with the ``rotate_half`` pairing: component ``i`` and ``i + d/2`` turn by ``p · base^(−2i/d)``.

    Lesson 16 · 2 (lesson 10's rotation, paired as Llama's code pairs it). Equal to
    ``attnlib.positions.rope(x, positions, base=base, pairing="half")``, computed in ``x``'s dtype.

    Parameters
    ----------
    x : (..., n, d_head)
    positions : (n,) int
    base : float

    Returns
    -------
    (..., n, d_head)
    """
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta  # (n, d/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)


def grouped_query_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Attention where each key/value head serves ``H / H_kv`` neighbouring query heads.

    Lesson 16 · 2 (lesson 15 · 3's grouped-query attention). Query head ``h`` reads key/value head
    ``h // (H / H_kv)``; the keys and values are never copied (the query heads of a group are
    stacked as more rows instead).

    Parameters
    ----------
    Q : (H, n, d_head)
    K, V : (H_kv, n_k, d_head)
    mask : (n, n_k) bool or None
        Which keys each query sees; ``None``: causal, the ``n`` queries being the last ``n`` of
        the ``n_k`` keys' tokens.

    Returns
    -------
    output : (H, n, d_head)
    weights : (H, n, n_k), each row summing to 1
    """
    H, n, d = Q.shape
    H_kv, n_k = K.shape[0], K.shape[1]
    if mask is None:
        mask = np.arange(n_k)[None, :] <= np.arange(n_k - n, n_k)[:, None]
    elif not (isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == (n, n_k)):
        raise ValueError(
            f"mask must be None (causal) or a ({n}, {n_k}) bool array, True where a query may attend; "
            f"got {mask!r:.60}"
        )
    grouped = Q.reshape(H_kv, (H // H_kv) * n, d)  # a group's query heads one after another
    scores = (grouped @ K.swapaxes(-1, -2)).reshape(H, n, n_k) * (1.0 / math.sqrt(d))  # stays float32
    scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    output = weights.reshape(H_kv, (H // H_kv) * n, n_k) @ V
    return output.reshape(H, n, V.shape[-1]), weights


def block(
    x: np.ndarray,
    w: Mapping[str, np.ndarray],
    attn: Callable[[np.ndarray], np.ndarray],
    parts: Parts,
    eps: float,
) -> np.ndarray:
    """One layer of the residual stream ``x``: attention, then the MLP, each after an RMSNorm.

    Lesson 16 · 2. Build it yourself: the block (nanoGPT's ``Block.forward``, Llama's parts).

    Parameters
    ----------
    x : (n, d_model)
    w : dict of str to array
        This layer's weights by short name: ``attn_norm``, ``mlp_norm`` (d_model,), ``W_gate``,
        ``W_up``, ``W_down`` (and the attention's, which ``attn`` reads).
    attn : callable
        The attention sublayer, ``(n, d_model) → (n, d_model)``: the queries, keys and values,
        their rotation, the attention and ``W_o`` (:func:`forward` makes it).
    parts : Parts
        Whose ``rms_norm`` and ``swiglu`` to use.
    eps : float

    Returns
    -------
    (n, d_model)
    """
    x = x + attn(parts.rms_norm(x, w["attn_norm"], eps))
    x = x + parts.swiglu(parts.rms_norm(x, w["mlp_norm"], eps), w["W_gate"], w["W_up"], w["W_down"])
    return x


@dataclass(frozen=True)
class Parts:
    """The functions the model is built from; a learner passes their own.

    Lesson 16 · 2. Build it yourself: ``forward(model, ids, parts=Parts(rms_norm=my_rms_norm))``.
    """

    rms_norm: Callable[..., np.ndarray] = rms_norm
    swiglu: Callable[..., np.ndarray] = swiglu
    rotate: Callable[..., np.ndarray] = rotate
    attention: Callable[..., tuple[np.ndarray, np.ndarray]] = grouped_query_attention
    block: Callable[..., np.ndarray] = block
