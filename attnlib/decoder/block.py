"""One layer of the decoder, the transformer block: attention, then an MLP, each added to the stream.

nanoGPT's ``Block.forward`` (A. Karpathy, ``model.py``) is two lines::

    x = x + self.attn(self.ln_1(x))
    x = x + self.mlp(self.ln_2(x))

:func:`block` opens with the same two, and the rest of this file is their ``attn`` and ``mlp``.
Lesson 14 opens with this layer in its attention-only form (no MLP, no LayerNorm): every head
reads the residual stream ``x`` and adds what it writes, ``z_h W_o^h``; nothing is overwritten,
so a later layer reads what an earlier one added.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core import AttentionSteps
from attnlib.decoder.attention import Rotation, attend
from attnlib.decoder.config import DecoderConfig
from attnlib.decoder.kv_cache import KVCache
from attnlib.decoder.layers import LayerNormSteps, gelu_tanh, layer_norm
from attnlib.multihead import merge_heads, split_heads

__all__ = ["LayerSteps", "block"]


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
) -> tuple[np.ndarray, LayerSteps]:
    """Layer ``layer`` of the residual stream: nanoGPT's ``Block.forward``, lesson 14's layer.

    ``x = x + attn(LN(x))``, then ``x = x + MLP(LN(x))`` (the MLP only when ``d_mlp > 0``, the
    LayerNorms only with ``layer_norm``). :func:`attnlib.decoder.forward` runs one per layer.

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
    x = x + write  # x = x + attn(ln_1(x))
    if config.d_mlp:
        m, kept.mlp_norm = _ln(config, params, name + "ln_mlp", x)  # ln_2(x)
        # x = x + mlp(ln_2(x)); the MLP's last bias is added after the sum, (x + h W_out) + b_out
        x = x + _mlp(params, name, m, kept) + params[name + "b_out"]
    return x, kept


@dataclass
class LayerSteps:
    """What one layer's forward pass keeps for the backward pass."""

    attn_in: np.ndarray
    qk_in: np.ndarray  # attn_in, plus the positions when they enter the attention only
    attn_norm: LayerNormSteps | None
    Q: np.ndarray  # (B, H, n, d_head), rotated with positions="rope"
    K: np.ndarray  # (B, H, n_k, d_head): the key/value heads repeated for their query heads (rotated)
    V: np.ndarray
    steps: AttentionSteps
    z: np.ndarray  # (B, n, H·d_head): the heads' outputs side by side, ablated ones zero
    mlp_in: np.ndarray | None = None
    mlp_norm: LayerNormSteps | None = None
    pre_act: np.ndarray | None = None
    hidden: np.ndarray | None = None


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
    """The heads' attention over ``a = ln_1(x)`` and what they write: ``concat(z_1 … z_H) W_o``."""
    name = f"layer{layer}."
    # Shortformer: positions steer where heads look
    qk_in = a + p["pos_embed"][query_positions] if c.positions == "attention" else a
    Q = split_heads(qk_in @ p[name + "W_q"], c.n_heads)
    K = split_heads(qk_in @ p[name + "W_k"], c.kv_heads)
    V = split_heads(a @ p[name + "W_v"], c.kv_heads)
    if cache is not None:
        K, V = cache.append(layer, K, V)
    if c.group_size > 1:
        K, V = np.repeat(K, c.group_size, axis=1), np.repeat(V, c.group_size, axis=1)
    steps, Q, K = attend(Q, K, V, mask, rotation)
    heads_out = steps.output
    dropped = [head for (at, head) in ablate if at == layer]
    if dropped:
        heads_out = heads_out.copy()
        heads_out[:, dropped] = 0.0
    z = merge_heads(heads_out)
    return z @ p[name + "W_o"], LayerSteps(a, qk_in, attn_norm, Q, K, V, steps, z)


def _mlp(p: dict[str, np.ndarray], name: str, m: np.ndarray, kept: LayerSteps) -> np.ndarray:
    """``GELU(m W_in + b_in) W_out`` of ``m = ln_2(x)``, without ``b_out`` (:func:`block` adds it)."""
    kept.mlp_in, kept.pre_act = m, m @ p[name + "W_in"] + p[name + "b_in"]
    kept.hidden = gelu_tanh(kept.pre_act)
    return kept.hidden @ p[name + "W_out"]
