"""The next-token loss and its gradient for every parameter: the chain rule run backwards through
the forward pass's steps (lesson 14; lesson 11 derives the attention's part)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from attnlib.backward import steps_backward
from attnlib.decoder.checks import as_ablations, as_window, check_parameters, check_tokens
from attnlib.decoder.config import DecoderConfig, as_config
from attnlib.decoder.forward_pass import ForwardSteps, forward_steps
from attnlib.decoder.layers import gelu_backward, layer_norm_backward
from attnlib.multihead import merge_heads, split_heads
from attnlib.positions import rope
from attnlib.training import cross_entropy

__all__ = ["backward_pass", "loss_and_d_logits", "loss_and_gradients", "next_token_losses", "token_losses"]


def loss_and_d_logits(logits: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of positions 0 … n−2 against tokens 1 … n−1, and d(loss)/d(logits).

    Lesson 14 · 1: the loss the model learns on.
    """
    d_logits = np.zeros_like(logits)  # the last position predicts nothing: no loss, no gradient
    loss, d_logits[:, :-1] = cross_entropy(logits[:, :-1], t[:, 1:])
    return loss, d_logits


def backward_pass(
    c: DecoderConfig, p: dict[str, np.ndarray], t: np.ndarray, run: ForwardSteps, d_logits: np.ndarray
) -> dict[str, np.ndarray]:
    """Every parameter's gradient from ``d_logits``, the chain rule run backwards through ``run``.

    Lesson 14: the model's gradients by hand (lesson 11 derives the attention's).
    """
    g: dict[str, np.ndarray] = {"unembed": _matmul_grad(run.final, d_logits)}
    dx = d_logits @ p["unembed"].T  # (B, n, d_model)
    d_pos_attention = 0.0  # the positions' gradient through the queries and keys (positions="attention")
    if c.layer_norm:
        dx, g["ln_final.gain"], g["ln_final.bias"] = layer_norm_backward(run.final_norm, dx)
    for layer in reversed(range(c.n_layers)):
        name, kept = f"layer{layer}.", run.layers[layer]
        if c.d_mlp:  # x = x + GELU(m W_in + b_in) W_out + b_out
            g[name + "W_out"], g[name + "b_out"] = _matmul_grad(kept.hidden, dx), dx.sum(axis=(0, 1))
            d_pre = gelu_backward(kept.pre_act, dx @ p[name + "W_out"].T)
            g[name + "W_in"], g[name + "b_in"] = _matmul_grad(kept.mlp_in, d_pre), d_pre.sum(axis=(0, 1))
            dm = d_pre @ p[name + "W_in"].T
            if c.layer_norm:
                dm, g[name + "ln_mlp.gain"], g[name + "ln_mlp.bias"] = layer_norm_backward(kept.mlp_norm, dm)
            dx = dx + dm
        # x = x + z W_o, z = the heads' outputs side by side
        g[name + "W_o"] = _matmul_grad(kept.z, dx)
        dz = split_heads(dx @ p[name + "W_o"].T, c.n_heads)  # (B, H, n, d_head)
        dQ, dK, dV = steps_backward(kept.steps, kept.Q, kept.K, kept.V, dz)
        if c.group_size > 1:  # a key/value head served group_size query heads: their gradients add
            dK = dK.reshape(dK.shape[0], c.kv_heads, c.group_size, *dK.shape[2:]).sum(axis=2)
            dV = dV.reshape(dV.shape[0], c.kv_heads, c.group_size, *dV.shape[2:]).sum(axis=2)
        if c.positions == "rope":  # a rotation's gradient is the inverse rotation: by −position
            back = -run.key_positions
            dQ, dK = rope(dQ, back), rope(dK, back)
        d_qk_in = 0.0
        for w, d_proj in (("W_q", dQ), ("W_k", dK)):
            d_flat = merge_heads(d_proj)  # (B, n, heads·d_head)
            g[name + w] = _matmul_grad(kept.qk_in, d_flat)
            d_qk_in = d_qk_in + d_flat @ p[name + w].T
        if c.positions == "attention":  # qk_in = a + positions
            d_pos_attention = d_pos_attention + d_qk_in.sum(axis=0)
        d_flat = merge_heads(dV)
        g[name + "W_v"] = _matmul_grad(kept.attn_in, d_flat)
        da = d_qk_in + d_flat @ p[name + "W_v"].T
        if c.layer_norm:
            da, g[name + "ln_attn.gain"], g[name + "ln_attn.bias"] = layer_norm_backward(kept.attn_norm, da)
        dx = dx + da
    d_embed = np.zeros_like(p["embed"])
    np.add.at(d_embed, t, dx)  # each occurrence of a token adds its position's gradient
    g["embed"] = d_embed
    if c.positions != "rope":
        g["pos_embed"] = np.zeros_like(p["pos_embed"])
        g["pos_embed"][: t.shape[1]] = d_pos_attention if c.positions == "attention" else dx.sum(axis=0)
    return {name: g[name] for name in p}


def loss_and_gradients(
    config: DecoderConfig, params: Mapping[str, npt.ArrayLike], tokens: npt.ArrayLike
) -> tuple[float, dict[str, np.ndarray]]:
    """The mean next-token cross-entropy on ``tokens`` and its gradient for every parameter.

    Lesson 14: its model's gradients by hand, checked against PyTorch's autograd in the tests
    (lesson 11 derives the attention's).

    Positions ``0 … n−2`` predict tokens ``1 … n−1`` (``n ≥ 2``); the loss is their mean over
    the batch and the positions. The gradients are the backward pass written out (the attention
    through :func:`attnlib.backward.steps_backward`), float64.

    Returns
    -------
    loss : float
    grads : dict of str to ndarray
        One entry per parameter, under its name and of its shape.
    """
    c = as_config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens)
    if t.shape[1] < 2:
        raise ValueError(f"tokens need at least 2 positions for a next-token loss, got shape {t.shape}")
    return _loss_and_gradients(c, p, t)


def _loss_and_gradients(
    c: DecoderConfig, p: dict[str, np.ndarray], t: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    run = forward_steps(c, p, t)
    loss, d_logits = loss_and_d_logits(run.logits, t)
    return loss, backward_pass(c, p, t, run, d_logits)


def next_token_losses(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    tokens: npt.ArrayLike,
    *,
    ablate: Iterable[tuple[int, int]] = (),
    window: int | None = None,
    sinks: int = 0,
) -> np.ndarray:
    """The loss of every prediction: ``−ln p(tokens[b, i + 1])`` from position ``i``.

    Lesson 14 · 1 and · 4 (the loss of each half, heads ablated); lesson 15 · 4 (with a window
    and sinks).

    Parameters
    ----------
    config, params, tokens, ablate, window, sinks
        As in :func:`forward`; ``n ≥ 2``.

    Returns
    -------
    (B, n − 1)
        Their mean is :func:`loss_and_gradients`'s loss (without ablation and window).
    """
    c = as_config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens, any_length=True)
    if t.shape[1] < 2:
        raise ValueError(f"tokens need at least 2 positions for a next-token loss, got shape {t.shape}")
    w, s = as_window(window, sinks)
    return token_losses(forward_steps(c, p, t, ablate=as_ablations(c, ablate), window=w, sinks=s).logits, t)


def token_losses(logits: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The next-token loss of each prediction, ``−log p(t[:, i + 1])`` at position i: (B, n − 1).

    Lesson 14 · 1.
    """
    shifted = logits[:, :-1] - logits[:, :-1].max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, t[:, 1:, None], axis=-1)[..., 0]


def _matmul_grad(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    """The gradient of ``W`` in ``x W`` summed over every row: ``xᵀ d_out`` over batch and positions."""
    return x.reshape(-1, x.shape[-1]).T @ d_out.reshape(-1, d_out.shape[-1])
