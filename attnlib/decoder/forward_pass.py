"""The forward pass, tokens → residual stream → logits, and generation with it, one token at a time.

Lesson 14's formula: the embedding, one :func:`~attnlib.decoder.block.block` per layer, the
unembedding, every step kept for the backward pass. Lesson 15 · 1 to · 5: :func:`generate` writes
one token at a time, with or without a :class:`~attnlib.decoder.kv_cache.KVCache` (and
:func:`generate_with_trace` keeps what each step attended to), and
:func:`pool_kv_heads` turns a model's key/value heads into fewer by pooling.

One layer of one head, no MLP and no LayerNorm, in NumPy (lesson 14's formula) gives the same
logits:

>>> import numpy as np
>>> from attnlib.decoder import DecoderConfig, init_parameters
>>> config = DecoderConfig(vocab_size=5, n_ctx=4, d_model=8, n_heads=1, n_layers=1)
>>> p, tokens = init_parameters(config, seed=0), np.array([[1, 2, 3, 1]])
>>> x = p["embed"][tokens[0]] + p["pos_embed"][:4]                # the residual stream
>>> S = (x @ p["layer0.W_q"]) @ (x @ p["layer0.W_k"]).T / np.sqrt(8)
>>> S = np.where(np.tri(4, dtype=bool), S, -np.inf)               # causal
>>> A = np.exp(S - S.max(axis=-1, keepdims=True))
>>> A = A / A.sum(axis=-1, keepdims=True)
>>> x = x + A @ (x @ p["layer0.W_v"]) @ p["layer0.W_o"]           # the head writes to the stream
>>> bool(np.allclose(forward(config, p, tokens).logits[0], x @ p["unembed"]))
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from attnlib.core import window_rule
from attnlib.decoder.block import LayerNormSteps, LayerSteps, block, layer_norm, rope_places
from attnlib.decoder.block import dropout as drop  # nanoGPT's name for the embeddings' dropout
from attnlib.decoder.config import (
    DecoderConfig,
    as_ablations,
    as_config,
    as_window,
    check_parameters,
    check_tokens,
)
from attnlib.decoder.kv_cache import KVCache
from attnlib.sampling import choose_tokens, sampling_settings
from attnlib.validation import as_flag, as_positive_int, as_seed

#: The most tokens :func:`generate` adds in one call. Learned positions stop at ``n_ctx``; with RoPE
#: nothing else would, and each token costs a forward step (about a millisecond for lesson 15's
#: model): 100,000 take minutes, and without a window the cache grows with every one.
MAX_NEW_TOKENS = 100_000

__all__ = [
    "MAX_NEW_TOKENS",
    "DecoderOutput",
    "ForwardSteps",
    "GenerationTrace",
    "forward",
    "forward_steps",
    "generate",
    "generate_with_trace",
    "pool_kv_heads",
]


@dataclass
class ForwardSteps:
    """What the forward pass keeps for the backward pass (and for what generate and train read).

    Lesson 14 · 3. Finding the heads (every step kept).
    """

    residuals: list[np.ndarray]
    layers: list[LayerSteps]
    final: np.ndarray
    final_norm: LayerNormSteps | None
    logits: np.ndarray
    key_positions: np.ndarray  # (n_k,): where each key of the attention sits in the sequence
    dropout: float  # the rate every mask was drawn with (0: nothing dropped)
    embed_keep: np.ndarray  # (B, n, d_model) bool: dropout's mask on the embeddings


def forward_steps(
    c: DecoderConfig,
    p: dict[str, np.ndarray],
    t: np.ndarray,
    *,
    ablate: frozenset[tuple[int, int]] = frozenset(),
    cache: KVCache | None = None,
    window: int | None = None,
    sinks: int = 0,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> ForwardSteps:
    """The forward pass on checked arguments; with ``cache``, ``t`` continues the cached tokens.

    Lesson 14's formula, one :func:`attnlib.decoder.block.block` per layer.

    With a window, a cache must take one token at a time and have that window (generate's loop).
    Training may drop (lesson 18 · dropout): with ``dropout > 0`` the embeddings and every
    attention's and MLP's write go through :func:`~attnlib.decoder.block.dropout`, masks drawn
    from ``rng``, nanoGPT's places (not the attention weights).
    """
    n = t.shape[1]
    if cache is None:
        query_positions = key_positions = np.arange(n)
    else:
        query_positions = cache.add_tokens(n)
        key_positions = cache.positions
    mask = window_rule(query_positions, key_positions, window, sinks)  # which keys each query sees
    rotation = None
    if c.positions == "rope":
        rotation = rope_places(query_positions, key_positions, window, sinks, cache is not None)
    x = p["embed"][t]
    if c.positions == "residual":
        x = x + p["pos_embed"][query_positions]
    x, embed_keep = drop(x, dropout, rng)
    residuals, layers = [x], []
    for layer in range(c.n_layers):
        x, kept = block(
            c,
            p,
            layer,
            x,
            mask,
            positions=query_positions,
            rotation=rotation,
            cache=cache,
            ablate=ablate,
            rate=dropout,
            rng=rng,
        )
        residuals.append(x)
        layers.append(kept)
    final, final_norm = x, None
    if c.layer_norm:
        final, final_norm = layer_norm(x, p["ln_final.gain"], p["ln_final.bias"])
    logits = final @ p["unembed"]
    return ForwardSteps(residuals, layers, final, final_norm, logits, key_positions, dropout, embed_keep)


@dataclass(frozen=True)
class DecoderOutput:
    """What :func:`forward` computes for a batch of ``B`` sequences of ``n`` tokens.

    Lesson 14 · 3. Finding the heads.

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


@dataclass(frozen=True)
class GenerationTrace:
    """What each step of :func:`generate_with_trace` attended to.

    Lesson 15 · 1. One token at a time.

    Step ``k`` (``0 … n_new − 1``) is the query of the token at position ``n − 1 + k`` (the
    prompt's last token for ``k = 0``), whose logits chose the token at position ``n + k``.

    Attributes
    ----------
    key_positions : list of (L_k,) int64 arrays, one per step
        Where each key that step's query saw sits in the sequence, in cache order (the first
        ``sinks``, then the latest): the cache's tokens while it attended, itself included.
    weights : list of (n_layers, B, n_heads, L_k) arrays, one per step
        Each layer's and head's attention weights of that query over those keys (each row sums to 1).
    logits : (n_new, B, vocab_size)
        The logits each step chose from.
    cache_bytes : (n_new,) int64 or None
        What the cache held while each step's query attended (:attr:`KVCache.nbytes`, the new
        token's keys and values included); ``None`` with ``use_cache=False``.
    """

    key_positions: list[np.ndarray] = field(repr=False)
    weights: list[np.ndarray] = field(repr=False)
    logits: np.ndarray = field(repr=False)
    cache_bytes: np.ndarray | None = field(repr=False)

    @property
    def cache_lengths(self) -> np.ndarray:
        """(n_new,) int: how many tokens each step's query attended over (the cache with itself)."""
        return np.array([len(k) for k in self.key_positions], dtype=np.int64)


def generate(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    prompt: npt.ArrayLike,
    n_new: int,
    *,
    use_cache: bool = True,
    temperature: float = 0.0,
    seed: int = 0,
    window: int | None = None,
    sinks: int = 0,
) -> np.ndarray:
    """The prompt followed by ``n_new`` tokens, each chosen from the model's next-token scores.

    Lesson 15 · 1. One token at a time (and lesson 14 · 7, the model copies).

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    prompt : (n,) or (B, n) integers
        At least one token. With learned positions ``n + n_new`` must not exceed ``n_ctx``. With
        ``positions="rope"`` only :data:`MAX_NEW_TOKENS` a call: with a ``window`` the rolling cache
        keeps every distance at most ``sinks + window − 1``, so generation can run to any length
        (calling again with the result as the prompt); without
        one, past ``n_ctx`` the queries meet distances the model never trained on (allowed, to
        show what that does).
    n_new : int
        How many tokens to add (0 returns the prompt), at most :data:`MAX_NEW_TOKENS`.
    use_cache : bool
        Keep every layer's keys and values (:class:`KVCache`), so each new token runs the model
        on itself alone; without it, each new token reruns the whole sequence with the same mask
        and positions (:func:`forward` with ``window`` and ``sinks``). Both give the same tokens.
    temperature : float
        ``0`` picks the most likely token (greedy); above 0, a token is drawn from
        ``softmax(logits / temperature)`` (:func:`attnlib.sampling.choose_tokens`), computed as
        ``softmax((logits − max) / temperature)`` so that a temperature as small as 1e-320 is the
        greedy choice (ties drawn evenly) and never overflows.
    seed : int
        Seed of the draws (unused when greedy).
    window, sinks : int or None, int
        Each new token sees the first ``sinks`` tokens and the last ``window`` (itself
        included), as in :func:`forward`; the cache keeps only those (:meth:`KVCache.evict`).
        With a window, the cache takes the prompt one token at a time.

    Returns
    -------
    tokens : (n + n_new,) or (B, n + n_new) int64, the shape of ``prompt``'s
    """
    run = _Generation.checked(config, params, prompt, n_new, use_cache, temperature, seed, window, sinks)
    return run.shaped(run.write(None), prompt)


def generate_with_trace(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    prompt: npt.ArrayLike,
    n_new: int,
    *,
    use_cache: bool = True,
    temperature: float = 0.0,
    seed: int = 0,
    window: int | None = None,
    sinks: int = 0,
) -> tuple[np.ndarray, GenerationTrace]:
    """:func:`generate`, and what each step attended to: its keys, its weights, its logits.

    Lesson 15 · 1. One token at a time (the cache's bytes at each step) and · 4 (what a window
    and sinks keep).

    Parameters
    ----------
    config, params, prompt, n_new, use_cache, temperature, seed, window, sinks
        As :func:`generate`.

    Returns
    -------
    tokens : (n + n_new,) or (B, n + n_new) int64, the shape of ``prompt``'s
    trace : GenerationTrace
        Step ``k``'s keys ``(L_k,)`` and weights ``(n_layers, B, n_heads, L_k)``, the logits
        ``(n_new, B, vocab_size)`` and the cache's bytes ``(n_new,)`` (None without the cache).
    """
    run = _Generation.checked(config, params, prompt, n_new, use_cache, temperature, seed, window, sinks)
    steps: list[_Step] = []
    sequence = run.write(steps)
    batch, vocab = sequence.shape[0], run.config.vocab_size
    logits = np.stack([step.logits for step in steps]) if steps else np.zeros((0, batch, vocab))
    held = np.array([step.cache_bytes for step in steps], dtype=np.int64) if run.cached else None
    trace = GenerationTrace([step.keys for step in steps], [step.weights for step in steps], logits, held)
    return run.shaped(sequence, prompt), trace


class _Step(NamedTuple):
    """What one step of the generation loop attended to (:class:`GenerationTrace` collects them)."""

    keys: np.ndarray  # (L_k,)
    weights: np.ndarray  # (n_layers, B, n_heads, L_k)
    logits: np.ndarray  # (B, vocab_size)
    cache_bytes: int


@dataclass(frozen=True)
class _Generation:
    """The arguments of :func:`generate`, checked once at the door, and its loop, which trusts them."""

    config: DecoderConfig
    params: dict[str, np.ndarray]
    prompt: np.ndarray  # (B, n) int64
    n_new: int
    cached: bool
    temperature: float
    seed: int
    window: int | None
    sinks: int

    @classmethod
    def checked(
        cls,
        config: object,
        params: Mapping[str, npt.ArrayLike],
        prompt: npt.ArrayLike,
        n_new: object,
        use_cache: object,
        temperature: object,
        seed: object,
        window: object,
        sinks: object,
    ) -> _Generation:
        """Every check of :func:`generate`, before anything is computed."""
        c = as_config(config)
        p = check_parameters(c, params)
        t = check_tokens(c, prompt, "prompt", any_length=True)
        new = as_positive_int(n_new, "n_new", minimum=0)
        if new > MAX_NEW_TOKENS:
            raise ValueError(
                f"n_new={new} is more than MAX_NEW_TOKENS={MAX_NEW_TOKENS:,}, the most tokens one call adds "
                "(each costs a forward step: call generate again with the result as the prompt)"
            )
        cached = as_flag(use_cache, "use_cache")
        temp, _, _ = sampling_settings(temperature, None, None, c.vocab_size)
        w, s = as_window(window, sinks)
        if c.positions != "rope" and t.shape[1] + new > c.n_ctx:
            raise ValueError(
                f"the prompt's {t.shape[1]} tokens plus n_new={new} make {t.shape[1] + new}, more than "
                f"the model's n_ctx={c.n_ctx} (learned positions stop there; positions='rope' does not)"
            )
        return cls(c, p, t, new, cached, temp, as_seed(seed), w, s)

    def write(self, steps: list[_Step] | None) -> np.ndarray:
        """The prompt and the new tokens, ``(B, n + n_new)``; each step is appended to ``steps``
        unless it is None."""
        c, p, t, w, s = self.config, self.params, self.prompt, self.window, self.sinks
        rng = np.random.default_rng(self.seed)
        cache = KVCache(c.n_layers, window=w, sinks=s) if self.cached else None
        step_input = t
        if cache is not None and w is not None:  # a rolling cache takes one token at a time
            for i in range(t.shape[1] - 1):
                forward_steps(c, p, t[:, i : i + 1], cache=cache, window=w, sinks=s)
                cache.evict()
            step_input = t[:, -1:]
        sequence = t
        for _ in range(self.n_new):
            if cache is not None:
                run = forward_steps(c, p, step_input, cache=cache, window=w, sinks=s)
                seen, held = cache.positions.copy(), cache.nbytes
                cache.evict()
                last = [kept.steps.weights[:, :, -1] for kept in run.layers]
            else:
                run = forward_steps(c, p, sequence, window=w, sinks=s)
                n = sequence.shape[1]
                seen, held = np.flatnonzero(window_rule(np.array([n - 1]), np.arange(n), w, s)[0]), 0
                last = [kept.steps.weights[:, :, -1, seen] for kept in run.layers]
            step_logits = run.logits[:, -1]  # (B, vocab)
            chosen = choose_tokens(step_logits, self.temperature, rng)[:, None]
            sequence = np.concatenate([sequence, chosen], axis=1)
            step_input = chosen
            if steps is not None:
                steps.append(_Step(seen, np.stack(last), step_logits, held))
        return sequence

    @staticmethod
    def shaped(sequence: np.ndarray, prompt: npt.ArrayLike) -> np.ndarray:
        """``sequence`` in the shape the learner's prompt had: ``(n + n_new,)`` for a single one."""
        return sequence[0] if np.ndim(prompt) == 1 else sequence


def pool_kv_heads(
    config: DecoderConfig, params: Mapping[str, npt.ArrayLike], n_kv_heads: int
) -> tuple[DecoderConfig, dict[str, np.ndarray]]:
    """Convert a model to grouped-query attention by mean-pooling its key and value heads.

    Lesson 15 · 3. Fewer key/value heads: GQA and MQA.

    As Ainslie et al. (2023, arXiv 2305.13245) convert a multi-head checkpoint: the key/value
    heads are split into ``n_kv_heads`` groups of neighbours, and each group's columns of
    ``W_k`` and ``W_v`` are replaced by their mean, one head per group. Nothing is retrained;
    every other parameter is copied.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    n_kv_heads : int
        Must divide ``config.kv_heads``; ``config.kv_heads`` returns the same model, ``1``
        makes multi-query attention.

    Returns
    -------
    config : DecoderConfig
        ``config`` with ``n_kv_heads``.
    params : dict of str to ndarray
        ``layer{l}.W_k`` and ``.W_v`` of shape ``(d_model, n_kv_heads · d_head)``.
    """
    c = as_config(config)
    p = check_parameters(c, params)
    target = as_positive_int(n_kv_heads, "n_kv_heads")
    if c.kv_heads % target:
        raise ValueError(
            f"n_kv_heads={target} must divide the model's {c.kv_heads} key/value heads "
            "(each new head is the mean of a group of equal size)"
        )
    pooled = DecoderConfig(**{**vars(c), "n_kv_heads": target})
    merged = c.kv_heads // target
    out = {name: value.copy() for name, value in p.items()}
    for layer in range(c.n_layers):
        for w in ("W_k", "W_v"):
            heads = p[f"layer{layer}.{w}"].reshape(c.d_model, target, merged, c.d_head)
            out[f"layer{layer}.{w}"] = heads.mean(axis=2).reshape(c.d_model, target * c.d_head)
    return pooled, out
