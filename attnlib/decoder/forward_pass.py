"""The forward pass: tokens → residual stream → logits, every step kept for the backward pass.

Lesson 14's formula: the embedding, one :func:`~attnlib.decoder.block.block` per layer, the
unembedding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.decoder.attention import rope_places, visible_keys
from attnlib.decoder.block import LayerSteps, block
from attnlib.decoder.checks import as_ablations, as_window, check_parameters, check_tokens
from attnlib.decoder.config import DecoderConfig, as_config
from attnlib.decoder.kv_cache import KVCache
from attnlib.decoder.layers import LayerNormSteps, layer_norm

__all__ = ["DecoderOutput", "ForwardSteps", "forward", "forward_steps"]


@dataclass
class ForwardSteps:
    """What the forward pass keeps for the backward pass (and for what generate and train read)."""

    residuals: list[np.ndarray]
    layers: list[LayerSteps]
    final: np.ndarray
    final_norm: LayerNormSteps | None
    logits: np.ndarray
    key_positions: np.ndarray  # (n_k,): where each key of the attention sits in the sequence


def forward_steps(
    c: DecoderConfig,
    p: dict[str, np.ndarray],
    t: np.ndarray,
    *,
    ablate: frozenset[tuple[int, int]] = frozenset(),
    cache: KVCache | None = None,
    window: int | None = None,
    sinks: int = 0,
) -> ForwardSteps:
    """The forward pass on checked arguments; with ``cache``, ``t`` continues the cached tokens.

    Lesson 14's formula, one :func:`attnlib.decoder.block.block` per layer.

    With a window, a cache must take one token at a time and have that window (generate's loop).
    """
    n = t.shape[1]
    if cache is None:
        query_positions = key_positions = np.arange(n)
    else:
        query_positions = cache.add_tokens(n)
        key_positions = cache.positions
    mask = visible_keys(query_positions, key_positions, window=window, sinks=sinks)
    rotation = None
    if c.positions == "rope":
        rotation = rope_places(query_positions, key_positions, window, sinks, cache is not None)
    x = p["embed"][t]
    if c.positions == "residual":
        x = x + p["pos_embed"][query_positions]
    residuals, layers = [x], []
    for layer in range(c.n_layers):
        x, kept = block(
            c, p, layer, x, mask, positions=query_positions, rotation=rotation, cache=cache, ablate=ablate
        )
        residuals.append(x)
        layers.append(kept)
    final, final_norm = x, None
    if c.layer_norm:
        final, final_norm = layer_norm(x, p["ln_final.gain"], p["ln_final.bias"])
    return ForwardSteps(residuals, layers, final, final_norm, final @ p["unembed"], key_positions)


@dataclass(frozen=True)
class DecoderOutput:
    """What :func:`forward` computes for a batch of ``B`` sequences of ``n`` tokens.

    Attributes
    ----------
    logits : (B, n, vocab_size)
        Position ``i``'s scores for the token at ``i + 1``.
    weights : (n_layers, B, n_heads, n, n)
        Every head's attention weights, rows = queries (zero above the diagonal).
    residuals : (n_layers + 1, B, n, d_model)
        The residual stream after the embedding (index 0) and after each layer.
    head_outputs : (n_layers, B, n_heads, n, d_model)
        What each head writes into the residual stream: ``z_h W_o^h`` (zero for an ablated head).
        A layer's attention output is their sum over the heads.
    """

    logits: np.ndarray
    weights: np.ndarray
    residuals: np.ndarray
    head_outputs: np.ndarray


def forward(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    tokens: npt.ArrayLike,
    *,
    ablate: Iterable[tuple[int, int]] = (),
    window: int | None = None,
    sinks: int = 0,
) -> DecoderOutput:
    """Run the decoder on ``tokens``.

    Lesson 14 · 3 to · 5 read every head's weights and writes with it, and ablate heads.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
        As :func:`init_parameters` makes them.
    tokens : (B, n) or (n,) integers
        Token ids; a single sequence is a batch of one (the outputs keep ``B = 1``). ``n ≤ n_ctx``
        with learned positions. With ``positions="rope"`` any ``n`` is accepted: without a
        window, queries past ``n_ctx`` meet distances the model never trained on; with a window,
        every distance is at most ``sinks + window − 1`` (keep it below ``n_ctx``).
    ablate : iterable of (layer, head)
        Heads whose output is zeroed (they write nothing into the residual stream).
    window : int or None
        Each query sees only the last ``window`` tokens (itself included), as
        :func:`visible_keys` says; ``None``: all earlier tokens.
    sinks : int
        ... and the first ``sinks`` tokens as well (StreamingLLM's attention sinks, Xiao et
        al. 2023); needs a ``window``. With ``positions="rope"`` the sinks sit where the rolling
        cache puts them (:class:`KVCache`): a query at position ``i`` is
        ``min(i, sinks + window − 1) − j`` after sink ``j``, so this pass computes what
        :func:`generate` computes with that window and those sinks, to any length.

    Returns
    -------
    DecoderOutput
    """
    c = as_config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens, any_length=True)
    w, s = as_window(window, sinks)
    run = forward_steps(c, p, t, ablate=as_ablations(c, ablate), window=w, sinks=s)
    writes = [
        np.einsum(
            "bnhd,hdm->bhnm",
            kept.z.reshape(*kept.z.shape[:2], c.n_heads, c.d_head),
            p[f"layer{layer}.W_o"].reshape(c.n_heads, c.d_head, c.d_model),
        )
        for layer, kept in enumerate(run.layers)
    ]
    return DecoderOutput(
        run.logits,
        np.stack([kept.steps.weights for kept in run.layers]),
        np.stack(run.residuals),
        np.stack(writes),
    )
