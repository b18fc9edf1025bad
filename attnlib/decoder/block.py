"""One layer of the decoder, the transformer block: attention, then an MLP, each added to the stream.

nanoGPT's ``Block.forward`` (A. Karpathy, ``model.py``) is two lines::

    x = x + self.attn(self.ln_1(x))
    x = x + self.mlp(self.ln_2(x))

:func:`block` opens with the same two, and the rest of this file is their ``attn`` and ``mlp``.
Lesson 14 opens with this layer in its attention-only form (no MLP, no LayerNorm): every head
reads the residual stream ``x`` and adds what it writes, ``z_h W_o^h``; nothing is overwritten,
so a later layer reads what an earlier one added.

Below it are its parts: LayerNorm and GELU (lesson 15's model) and dropout (lesson 18's), each
with its backward pass, and which keys each query sees (causal, or a window with sinks), where RoPE
places them, the weights.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.core import (
    AttentionArguments,
    AttentionSteps,
    attention_steps_of,
    softmax,
    window_rule,
)
from attnlib.decoder.config import DecoderConfig, as_dropout, as_mask_generator, as_window
from attnlib.decoder.kv_cache import KVCache
from attnlib.positions import rope_frequencies, rotate_pairs
from attnlib.validation import as_whole_array

__all__ = [
    "LN_EPS",
    "LayerNormSteps",
    "LayerSteps",
    "Rotation",
    "attend",
    "block",
    "dropout",
    "dropout_backward",
    "gelu_backward",
    "gelu_tanh",
    "layer_norm",
    "layer_norm_backward",
    "rope_places",
    "visible_keys",
]


def block(
    config: DecoderConfig,
    params: dict[str, np.ndarray],
    layer: int,
    x: np.ndarray,
    mask: np.ndarray,
    *,
    positions: np.ndarray,
    rotation: Rotation | None = None,
    cache: KVCache | None = None,
    ablate: frozenset[tuple[int, int]] = frozenset(),
    rate: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, LayerSteps]:
    """Layer ``layer`` of the residual stream: nanoGPT's ``Block.forward``, lesson 14's layer.

    ``x = x + attn(LN(x))``, then ``x = x + MLP(LN(x))`` (the MLP only when ``d_mlp > 0``, the
    LayerNorms only with ``layer_norm``). :func:`attnlib.decoder.forward` runs one per layer.
    In training each write may go through :func:`dropout` first (lesson 18): nanoGPT's
    ``resid_dropout`` of the attention's output and ``dropout`` of the MLP's.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to ndarray
        Checked (:func:`attnlib.decoder.check_parameters`); the layer reads ``layer{layer}.*``.
    layer : int
    x : (B, n, d_model)
        The residual stream of the ``n`` tokens this pass computes.
    mask : (n, n_k) bool
        Which keys each query sees (:func:`attnlib.decoder.visible_keys`).
    positions : (n,) int
        Where those tokens sit in the sequence (with ``config.positions="attention"`` their
        learned positions are added to the queries' and keys' input).
    rotation : Rotation or None
        Where RoPE places the queries and keys (``config.positions="rope"`` only).
    cache : KVCache or None
        If given, the new keys and values are appended to this layer's, and the queries attend
        over all the cached ones (:mod:`attnlib.decoder.kv_cache`).
    ablate : frozenset of (layer, head)
        Heads whose output is zeroed.
    rate : float
        Dropout's rate on the attention's write (after ``W_o``) and the MLP's (after ``b_out``),
        ``0 ≤ rate < 1``; 0 (inference) drops nothing.
    rng : numpy.random.Generator or None
        Draws the dropout masks (needed when ``rate > 0``).

    Returns
    -------
    x : (B, n, d_model)
        The residual stream after this layer.
    steps : LayerSteps
        What the backward pass needs.
    """
    name = f"layer{layer}."
    a, attn_norm = _ln(config, params, name + "ln_attn", x)  # ln_1(x)
    write, kept = _attn(config, params, layer, a, attn_norm, positions, mask, rotation, cache, ablate)
    write, kept.attn_keep = dropout(write, rate, rng)
    x = x + write  # x = x + dropout(attn(ln_1(x)))
    if config.d_mlp:
        m, kept.mlp_norm = _ln(config, params, name + "ln_mlp", x)  # ln_2(x)
        write, kept.mlp_keep = dropout(_mlp(params, name, m, kept), rate, rng)
        # x = x + dropout(h W_out + b_out), h = GELU(m W_in + b_in): b_out, dropped with the same
        # mask, is added after the sum, (x + h W_out) + b_out, the order lesson 15's model trained in
        x = x + write + params[name + "b_out"] * kept.mlp_keep / (1 - rate)
    return x, kept


@dataclass
class LayerSteps:
    """What one layer's forward pass keeps for the backward pass.

    Lesson 14 · 1. The task: sequences that repeat (the layer it trains).
    """

    attn_in: np.ndarray
    qk_in: np.ndarray  # attn_in, plus the positions when they enter the attention only
    attn_norm: LayerNormSteps | None
    Q: np.ndarray  # (B, H, n, d_head), rotated with positions="rope"
    K: np.ndarray  # (B, H, n_k, d_head): the key/value heads repeated for their query heads (rotated)
    V: np.ndarray
    steps: AttentionSteps
    z: np.ndarray  # (B, n, H·d_head): the heads' outputs side by side, ablated ones zero
    attn_keep: np.ndarray | None = None  # (B, n, d_model) bool: dropout's mask on the attention's write
    mlp_in: np.ndarray | None = None
    mlp_norm: LayerNormSteps | None = None
    pre_act: np.ndarray | None = None
    hidden: np.ndarray | None = None
    mlp_keep: np.ndarray | None = None  # (B, n, d_model) bool: on the MLP's write


def _ln(
    c: DecoderConfig, p: dict[str, np.ndarray], name: str, x: np.ndarray
) -> tuple[np.ndarray, LayerNormSteps | None]:
    """LayerNorm ``name`` of ``x`` with ``layer_norm``; ``x`` itself without."""
    if not c.layer_norm:
        return x, None
    return layer_norm(x, p[name + ".gain"], p[name + ".bias"])


def _attn(
    c: DecoderConfig,
    p: dict[str, np.ndarray],
    layer: int,
    a: np.ndarray,
    attn_norm: LayerNormSteps | None,
    query_positions: np.ndarray,
    mask: np.ndarray,
    rotation: Rotation | None,
    cache: KVCache | None,
    ablate: frozenset[tuple[int, int]],
) -> tuple[np.ndarray, LayerSteps]:
    """The heads' attention over ``a = ln_1(x)`` and what they write: ``concat(z_1 … z_H) W_o``.

    Everything it is given is checked already (by :func:`attnlib.decoder.forward` or
    :func:`attnlib.decoder.generate`), so it calls the trusting steps: the cache's
    :meth:`~attnlib.decoder.KVCache.extend`, and :func:`attend`.
    """
    name = f"layer{layer}."
    # Shortformer: positions steer where heads look
    qk_in = a + p["pos_embed"][query_positions] if c.positions == "attention" else a
    Q = _split_heads(qk_in @ p[name + "W_q"], c.n_heads)
    K = _split_heads(qk_in @ p[name + "W_k"], c.kv_heads)
    V = _split_heads(a @ p[name + "W_v"], c.kv_heads)
    if cache is not None:
        K, V = cache.extend(layer, K, V)
    if c.group_size > 1:
        K, V = np.repeat(K, c.group_size, axis=1), np.repeat(V, c.group_size, axis=1)
    steps, Q, K = attend(Q, K, V, mask, rotation)
    heads_out = steps.output
    dropped = [head for (at, head) in ablate if at == layer]
    if dropped:
        heads_out = heads_out.copy()
        heads_out[:, dropped] = 0.0
    z = _merge_heads(heads_out)
    return z @ p[name + "W_o"], LayerSteps(a, qk_in, attn_norm, Q, K, V, steps, z)


def _split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """``(B, n, n_heads·d_head)`` → ``(B, n_heads, n, d_head)``: lesson 09's ``split_heads``, unchecked."""
    B, n, width = x.shape
    return x.reshape(B, n, n_heads, width // n_heads).swapaxes(1, 2)


def _merge_heads(x: np.ndarray) -> np.ndarray:
    """``(B, n_heads, n, d_head)`` → ``(B, n, n_heads·d_head)``: lesson 09's ``merge_heads``, unchecked."""
    B, n_heads, n, d_head = x.shape
    return x.swapaxes(1, 2).reshape(B, n, n_heads * d_head)


def _mlp(p: dict[str, np.ndarray], name: str, m: np.ndarray, kept: LayerSteps) -> np.ndarray:
    """``GELU(m W_in + b_in) W_out`` of ``m = ln_2(x)``, without ``b_out`` (:func:`block` adds it)."""
    kept.mlp_in, kept.pre_act = m, m @ p[name + "W_in"] + p[name + "b_in"]
    kept.hidden = gelu_tanh(kept.pre_act)
    return kept.hidden @ p[name + "W_out"]


#: The ε under the square root of every LayerNorm (PyTorch's default).
LN_EPS = 1e-5
_GELU_C = math.sqrt(2.0 / math.pi)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form: ``x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`` (PyTorch's ``approximate='tanh'``).

    Lesson 15's model has an MLP with this GELU in each layer.

    Computed as ``x · σ(2u)`` with ``u`` the tanh's argument (the same function: ``(1 + tanh u)/2
    = σ(2u)``), since NumPy's ``exp`` is several times faster than its ``tanh``.
    ``attnlib.model.gelu`` is the exact erf form that BERT uses.
    """
    return x * _sigmoid_2u(x)


def _sigmoid_2u(x: np.ndarray) -> np.ndarray:
    """``σ(2u) = 1 / (1 + exp(−2u))``, ``u = √(2/π) (x + 0.044715 x³)``; ``2u`` clipped to ±60 (past
    that, σ is 0 or 1 to 26 digits), so ``exp`` never overflows."""
    two_u = np.clip(2.0 * _GELU_C * x * (1.0 + 0.044715 * (x * x)), -60.0, 60.0)
    return 1.0 / (1.0 + np.exp(-two_u))


def gelu_backward(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    """``d_out · GELU'(x)``: ``σ + 2x σ(1 − σ) u'`` with ``σ = σ(2u)``, ``u' = √(2/π)(1 + 3·0.044715 x²)``.

    Lesson 15's model was trained through it.
    """
    s = _sigmoid_2u(x)
    return d_out * (s + 2.0 * x * s * (1.0 - s) * _GELU_C * (1.0 + 3 * 0.044715 * (x * x)))


@dataclass
class LayerNormSteps:
    """One LayerNorm's forward pass, kept for its backward pass.

    Lesson 15 · 1. One token at a time (its model's LayerNorms).
    """

    x_hat: np.ndarray  # (x − mean) / σ
    inv_sigma: np.ndarray  # 1/√(var + ε), (..., 1)
    gain: np.ndarray


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, LayerNormSteps]:
    """``(x − mean) / √(var + ε) · gain + bias`` over the last axis, and what its backward pass needs.

    Lesson 15's model has one before each attention and MLP, and before the unembedding.
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_sigma = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)
    x_hat = centred * inv_sigma
    return x_hat * gain + bias, LayerNormSteps(x_hat, inv_sigma, gain)


def layer_norm_backward(norm: LayerNormSteps, d_out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dx, d_gain, d_bias of a LayerNorm from the gradient of its output.

    Lesson 15's model was trained through it.
    """
    d_hat = d_out * norm.gain
    dx = norm.inv_sigma * (
        d_hat
        - d_hat.mean(axis=-1, keepdims=True)
        - norm.x_hat * (d_hat * norm.x_hat).mean(axis=-1, keepdims=True)
    )
    flat = d_out.reshape(-1, d_out.shape[-1])
    return dx, (flat * norm.x_hat.reshape(flat.shape)).sum(axis=0), flat.sum(axis=0)


def dropout(x: npt.ArrayLike, rate: float, rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray]:
    """Inverted dropout: zero each entry of ``x`` with chance ``rate``, divide the others by ``1 − rate``.

    Lesson 18 · 7. Overfitting (dropout).

    So every entry keeps its expected value, ``(1 − rate) · x / (1 − rate) = x``, and at inference,
    where nothing is dropped, the layers after it see activations of the size they trained on
    (Srivastava et al. 2014; PyTorch's ``torch.nn.functional.dropout``).

    Parameters
    ----------
    x : (...) floats
        Taken as they are: NaN and infinities pass through where kept, as in PyTorch.
    rate : float
        The chance that an entry is dropped, ``0 ≤ rate < 1``.
    rng : numpy.random.Generator or None
        Draws the mask, ``keep = rng.random(x.shape) >= rate``; not used (and may be None) when
        ``rate`` is 0.

    Returns
    -------
    out : (...), x's dtype
        ``x * keep / (1 − rate)``; ``x`` itself when ``rate`` is 0.
    keep : (...) bool
        Which entries were kept (all of them when ``rate`` is 0): what :func:`dropout_backward`
        needs.

    Examples
    --------
    >>> out, keep = dropout(np.ones(6), 0.5, np.random.default_rng(0))
    >>> out, keep
    (array([2., 0., 0., 0., 2., 2.]), array([ True, False, False, False,  True,  True]))
    """
    x, r = np.asarray(x), as_dropout(rate, "rate")
    as_mask_generator(rng, r, "rate")
    if not r:
        return x, np.ones(x.shape, dtype=bool)
    keep = rng.random(x.shape) >= r
    return x * keep / (1 - r), keep


def dropout_backward(d_out: npt.ArrayLike, keep: npt.ArrayLike, rate: float) -> np.ndarray:
    """The gradient of :func:`dropout`'s input, the mask held fixed: ``d_out * keep / (1 − rate)``.

    Lesson 18 · 7. Overfitting (dropout).

    A dropped entry passes no gradient back; a kept one passes its gradient scaled as its value was.

    Parameters
    ----------
    d_out : (...) floats
        The gradient of the loss with respect to dropout's output.
    keep : (...) bool
        The mask :func:`dropout` returned with that output.
    rate : float
        The rate it dropped with.
    """
    d, k, r = np.asarray(d_out), np.asarray(keep), as_dropout(rate, "rate")
    if k.dtype != bool or k.shape != d.shape:
        raise ValueError(
            f"keep must be dropout's boolean mask, of d_out's shape {d.shape}; got {k.dtype} {k.shape}"
        )
    return d * k / (1 - r)


def visible_keys(
    query_positions: npt.ArrayLike, key_positions: npt.ArrayLike, *, window: int | None = None, sinks: int = 0
) -> np.ndarray:
    """Which keys each query sees, by their positions in the sequence: ``(n_q, n_k)`` bool.

    Lesson 15 · 4. Past the trained context: windows and sinks.

    The rows and columns of :func:`attnlib.core.causal_mask` with that ``window`` and those
    ``sinks`` (query ``i`` sees key ``j ≤ i`` when ``j > i − window`` or ``j < sinks``): the mask
    of a pass over the whole sequence, or of new tokens over what a rolling cache still holds.

    Examples
    --------
    The token at position 6 with a window of 3 and one sink:

    >>> visible_keys([6], range(7), window=3, sinks=1).astype(int)
    array([[1, 0, 0, 0, 1, 1, 1]])
    """
    w, s = as_window(window, sinks)
    q = as_whole_array(query_positions, "query_positions", minimum=0)
    k = as_whole_array(key_positions, "key_positions", minimum=0)
    if q.ndim != 1 or k.ndim != 1:
        raise ValueError(
            f"query_positions and key_positions must be lists (1-D), got shapes {q.shape}, {k.shape}"
        )
    return window_rule(q, k, w, s)  # causal_mask's rule, for these rows and columns only


@dataclass(frozen=True)
class Rotation:
    """The RoPE angles' positions of one forward pass (``positions="rope"``).

    Lesson 15 · 4. Past the trained context: windows and sinks.
    """

    queries: np.ndarray  # (n,)
    keys: np.ndarray  # (n_k,)
    sink_queries: np.ndarray | None  # (n,): the queries' positions against the sinks, if not ``queries``
    sinks: int


def rope_places(
    query_positions: np.ndarray, key_positions: np.ndarray, window: int | None, sinks: int, cached: bool
) -> Rotation:
    """Where RoPE puts each query and key: StreamingLLM's positions within the cache.

    Lesson 15 · 4 (with sinks, RoPE counts distances within the rolling cache).

    With a rolling cache a token's place is its index in the cache: the sinks keep ``0 … sinks−1``
    and the query sits at ``min(i, sinks + window − 1)``; a key among the latest ``window`` is
    ``i − j`` before the query, as in the whole sequence. Over a whole sequence (no cache) the
    same distances are: ``i − j`` to the latest keys, ``min(i, sinks + window − 1) − j`` to the
    sinks, so the queries are rotated a second time for the sinks' columns.
    """
    if cached:  # one token at a time with a window (generate sees to it), every token without one
        places = np.arange(len(key_positions))
        return Rotation(places[len(places) - len(query_positions) :], places, None, 0)
    if window is None or not sinks or query_positions[-1] < sinks + window - 1:
        return Rotation(query_positions, key_positions, None, 0)
    return Rotation(query_positions, key_positions, np.minimum(query_positions, sinks + window - 1), sinks)


def attend(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray, rotation: Rotation | None
) -> tuple[AttentionSteps, np.ndarray, np.ndarray]:
    """The attention's steps, and the queries and keys as the scores read them (rotated by RoPE).

    Lesson 14's attention of one layer; with RoPE and sinks, lesson 15 · 4's. It trusts its
    arguments: ``Q (B, H, n, d_head)``, ``K, V (B, H, n_k, d_head)`` of one dtype (float64 or
    float32, which the steps keep), ``mask (n, n_k)`` bool, as :func:`block` has them.
    """
    scale = 1.0 / math.sqrt(Q.shape[-1])  # default_scale(d_head), here where d_head is checked already
    if rotation is None:
        return attention_steps_of(AttentionArguments(Q, K, V, mask, scale, False)), Q, K
    Q_rot, K_rot = _rope(Q, rotation.queries), _rope(K, rotation.keys)
    if rotation.sink_queries is None:
        return attention_steps_of(AttentionArguments(Q_rot, K_rot, V, mask, scale, False)), Q_rot, K_rot
    # the sinks' columns: the query at its place in the rolling cache (no gradient is taken here)
    raw = Q_rot @ K_rot.swapaxes(-1, -2)
    raw[..., : rotation.sinks] = _rope(Q, rotation.sink_queries) @ K_rot[..., : rotation.sinks, :].swapaxes(
        -1, -2
    )
    masked = np.where(mask, raw * scale, -np.inf)
    weights = softmax(masked)
    return AttentionSteps(raw, scale, raw * scale, masked, weights, weights @ V), Q_rot, K_rot


def _rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """:func:`attnlib.positions.rope` of the decoder's checked ``x (B, H, n, d_head)`` at ``positions (n,)``:
    RoFormer's interleaved pairs, base 10000, the angles made once for every batch and head;
    computed in float64 and returned in ``x``'s dtype, as :func:`~attnlib.positions.rope` does."""
    return rotate_pairs(x, positions[:, None] * _frequencies(x.shape[-1])).astype(x.dtype, copy=False)


@functools.lru_cache(maxsize=8)
def _frequencies(d_head: int) -> np.ndarray:
    """RoPE's ``θ_i = 10000^(−2i/d_head)`` for a head's width (the same few widths every pass)."""
    theta = rope_frequencies(d_head)
    theta.flags.writeable = False  # shared by every call
    return theta
