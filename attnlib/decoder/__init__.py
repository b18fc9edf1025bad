"""A whole decoder-only transformer in numpy: forward, gradients by hand, a KV cache, generation.

With row vectors times matrices, as in the other lessons, and ``x`` the residual stream::

    x = drop(embed[tokens] + pos_embed[positions])                 (B, n, d_model)
    for each layer:
        a = LN(x) if layer_norm else x
        Q, K, V = a W_q, a W_k, a W_v, split into heads            (B, H, n, d_head), (B, H_kv, n, d_head)
                  (positions="attention": x = drop(embed[tokens]), and Q, K read a + pos_embed instead;
                   positions="rope": x = drop(embed[tokens]), and Q, K are rotated by their positions)
        z_h = attention(Q_h, K_g(h), V_g(h), mask)                 query head h reads key/value head
                                                                   g(h) = h // (H / H_kv); the mask
                                                                   is causal, or a window + sinks
        x = x + drop(concat(z_1 … z_H) W_o)                        each head writes z_h W_o^h
        if d_mlp:  x = x + drop(GELU(LN(x) W_in + b_in) W_out + b_out)   (LN only if layer_norm)
    logits = (LN(x) if layer_norm else x) unembed                  (B, n, vocab)

``drop`` is :func:`dropout`, in training only (``loss_and_gradients(…, dropout=0.1, rng=…)``,
lesson 18): nanoGPT's places, never the attention weights; everywhere else it is the identity.

Generation (:func:`generate`; :func:`generate_with_trace` also keeps what each step attended to)
keeps each layer's keys and values in a :class:`KVCache`; with a ``window`` and ``sinks`` the cache
rolls (StreamingLLM, Xiao et al. 2023): it keeps the first ``sinks`` tokens and the latest ones,
and with RoPE each key is rotated by its place in the cache, so a model with ``positions="rope"``
can write past ``n_ctx`` without meeting a distance longer than ``sinks + window − 1``.
:func:`forward` with the same ``window`` and ``sinks`` computes the same thing over a whole
sequence. :func:`pool_kv_heads` turns a model's key/value heads into fewer by averaging
(grouped-query attention, Ainslie et al. 2023).

The loss is the mean next-token cross-entropy: positions ``0 … n−2`` predict tokens ``1 … n−1``.
:func:`loss_and_gradients` runs the chain rule backwards through every step above, the attention
through :func:`attnlib.backward.steps_backward`; :func:`train` feeds it to
:class:`attnlib.training.Adam`. Everything is float64, or float32 from the embeddings to the last
gradient when every parameter is float32 (``init_parameters(config, dtype=np.float32)``).

The parameters are a dict of arrays named for what they are (:func:`parameter_shapes` lists them
for a config)::

    embed                  (vocab_size, d_model)       one row per token
    pos_embed              (n_ctx, d_model)            one learned row per position (not with RoPE)
    layer{l}.W_q           (d_model, n_heads·d_head)   the heads' query columns, head h = columns
                                                       h·d_head … (h+1)·d_head − 1
    layer{l}.W_k, .W_v     (d_model, n_kv_heads·d_head)
    layer{l}.W_o           (n_heads·d_head, d_model)   head h's rows write its output to the stream
    layer{l}.W_in          (d_model, d_mlp)            the MLP (only when d_mlp > 0), with its
    layer{l}.b_in          (d_mlp,)                    biases
    layer{l}.W_out         (d_mlp, d_model)
    layer{l}.b_out         (d_model,)
    layer{l}.ln_attn.gain, layer{l}.ln_attn.bias, layer{l}.ln_mlp.gain, layer{l}.ln_mlp.bias,
    ln_final.gain, ln_final.bias   (d_model,)          the LayerNorms (only when layer_norm)
    unembed                (d_model, vocab_size)       residual stream → logits

One file a step: :mod:`~attnlib.decoder.config` (the config, the parameters' names and shapes,
and what the functions check), :mod:`~attnlib.decoder.block` (one layer, nanoGPT's
``Block.forward``: lesson 14; below it LayerNorm, GELU, dropout, the mask and RoPE's places),
:mod:`~attnlib.decoder.kv_cache` (the cached loop: lesson 15), :mod:`~attnlib.decoder.forward_pass`
(the forward pass and generation), :mod:`~attnlib.decoder.training` (the loss, its gradients
by hand, and Adam) and :mod:`~attnlib.decoder.gpt` (lesson 18's loop over a token stream:
batches, AdamW with its schedule and clipping, evaluation). The names below are imported from
all but the last.
"""

from attnlib.decoder.block import LN_EPS, dropout, dropout_backward, visible_keys
from attnlib.decoder.config import (
    POSITIONS,
    DecoderConfig,
    check_parameters,
    check_tokens,
    init_parameters,
    parameter_shapes,
)
from attnlib.decoder.forward_pass import (
    MAX_NEW_TOKENS,
    DecoderOutput,
    GenerationTrace,
    forward,
    generate,
    generate_with_trace,
    pool_kv_heads,
)
from attnlib.decoder.kv_cache import KVCache
from attnlib.decoder.training import DecoderRun, loss_and_gradients, next_token_losses, train

__all__ = [
    "LN_EPS",
    "MAX_NEW_TOKENS",
    "POSITIONS",
    "DecoderConfig",
    "DecoderOutput",
    "DecoderRun",
    "GenerationTrace",
    "KVCache",
    "check_parameters",
    "check_tokens",
    "dropout",
    "dropout_backward",
    "forward",
    "generate",
    "generate_with_trace",
    "init_parameters",
    "loss_and_gradients",
    "next_token_losses",
    "parameter_shapes",
    "pool_kv_heads",
    "train",
    "visible_keys",
]
