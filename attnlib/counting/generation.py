"""What generating text costs: the KV cache's memory and the multiplications it saves (lesson 15).

A decoder generates one token per forward pass. Without a cache, the pass at context ``t``
recomputes every position: all ``t × t`` scores, so ``n`` tokens cost ``~n³/3`` score pairs. A KV
cache keeps every layer's keys and values, and each pass computes only its newest position: one
row of ``t`` scores, ``~n²/2`` in all. The cache costs memory, per token::

    2 · n_layers · n_kv_heads · d_head · bytes_per_number     (a key and a value per head)

The sizes of a decoder are a :class:`DecoderShape`. Formulas: :func:`kv_cache_bytes`,
:func:`llama_parameter_counts` (a Llama-style decoder's parameters), :func:`kv_cache_outgrows_weights`
(the context at which the cache passes the weights), :func:`decoder_pass_multiplications` and
:func:`generation_multiplications` (with and without a cache). A measurement:
:func:`counted_generation` runs an attention-only decoder and counts its multiplications.

>>> llama = DecoderShape(n_layers=32, d_model=4096, n_heads=32, d_mlp=11008, vocab=32000)  # Llama 2 7B
>>> kv_cache_outgrows_weights(llama, parameters=llama_parameter_counts(llama)["total"], bytes_per_number=2)
25706
>>> small = DecoderShape(n_layers=2, d_model=8, n_heads=2, d_mlp=0, vocab=10)
>>> [generation_multiplications(small, 100, cache=cache)["scores q Kᵀ"] for cache in (False, True)]
[5413600, 80800]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.core import softmax
from attnlib.counting.attention import counted_matmul
from attnlib.counting.heads import as_kv_heads
from attnlib.multihead import multi_head_arguments
from attnlib.validation import as_flag, as_positive_int, as_real_array

__all__ = [
    "GENERATION_STEPS",
    "DecoderShape",
    "counted_generation",
    "decoder_pass_multiplications",
    "generation_multiplications",
    "kv_cache_bytes",
    "kv_cache_outgrows_weights",
    "llama_parameter_counts",
]


@dataclass(frozen=True)
class DecoderShape:
    """The sizes of a decoder-only transformer that its costs, its cache and its size depend on.

    Lesson 15 · sections 1 and 2, the decoders whose cost and cache it counts.

    Attributes
    ----------
    n_layers : int
    d_model : int
        Width of the residual stream (Llama's ``hidden_size``).
    n_heads : int
        Query heads per layer.
    d_mlp : int
        Width of the MLP's hidden layer (Llama's ``intermediate_size``); 0 for attention only.
    vocab : int
        Number of tokens in the vocabulary.
    n_kv_heads : int
        Key/value heads per layer (grouped-query attention); given as None, it becomes
        ``n_heads``. It must divide ``n_heads``.
    d_head : int
        Width of each head's queries, keys and values; given as None, it becomes
        ``d_model / n_heads``.
    tied_embeddings : bool
        Whether the unembedding is the embedding matrix itself (no separate ``lm_head``).
    """

    n_layers: int
    d_model: int
    n_heads: int
    d_mlp: int
    vocab: int
    n_kv_heads: int | None = None
    d_head: int | None = None
    tied_embeddings: bool = False

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "vocab"):
            object.__setattr__(self, name, as_positive_int(getattr(self, name), name))
        object.__setattr__(self, "d_mlp", as_positive_int(self.d_mlp, "d_mlp", minimum=0))
        object.__setattr__(self, "n_kv_heads", as_kv_heads(self.n_heads, self.n_kv_heads))
        if self.d_head is None:
            if self.d_model % self.n_heads:
                raise ValueError(
                    f"d_model={self.d_model} does not divide into n_heads={self.n_heads} equal heads: "
                    "give d_head"
                )
            object.__setattr__(self, "d_head", self.d_model // self.n_heads)
        else:
            object.__setattr__(self, "d_head", as_positive_int(self.d_head, "d_head"))
        object.__setattr__(self, "tied_embeddings", as_flag(self.tied_embeddings, "tied_embeddings"))


def _shape(shape: object) -> DecoderShape:
    if not isinstance(shape, DecoderShape):
        raise TypeError(f"shape must be a DecoderShape, got {type(shape).__name__}")
    return shape


def _sinks(window: object, sinks: object) -> int:
    """``sinks`` checked: a count from 0, and above 0 only with a ``window`` (as the decoder's)."""
    kept = as_positive_int(sinks, "sinks", minimum=0)
    if kept and window is None:
        raise ValueError(
            f"sinks={kept} needs a window: without one every token is kept anyway (pass window=…)"
        )
    return kept


def kv_cache_bytes(
    shape: DecoderShape,
    n_tokens: int = 1,
    *,
    bytes_per_number: int,
    batch: int = 1,
    window: int | None = None,
    sinks: int = 0,
) -> int:
    """Bytes of the keys and values a decoder keeps to generate the next token.

    Lesson 15 · section 2, the cache's memory. Sections 3 and 4: fewer key/value heads, windows and sinks.

    Every layer keeps, for every token, one key and one value (the factor 2) of ``d_head``
    numbers for each of its ``n_kv_heads`` key/value heads::

        per token:  2 · n_layers · n_kv_heads · d_head · bytes_per_number
        in all:     that · tokens kept · batch

    With a sliding ``window`` (and ``sinks``, :func:`attnlib.core.causal_mask`) only the keys a
    new query can still see are kept: ``min(n_tokens, window + sinks)`` tokens (Mistral's
    rolling buffer cache keeps ``window``).

    Parameters
    ----------
    shape : DecoderShape
    n_tokens : int
        Tokens in the context (1: the cost of one token).
    bytes_per_number : int
        2 for float16 and bfloat16, 4 for float32, 8 for float64 (bytes, not bits).
    batch : int
        Sequences generated side by side, each with its own cache.
    window : int, optional
    sinks : int

    Returns
    -------
    int

    Examples
    --------
    Llama 2 7B (32 layers of 32 key/value heads of 128) in float16: half a MiB per token, 2 GiB
    at its context of 4,096 tokens.

    >>> llama = DecoderShape(n_layers=32, d_model=4096, n_heads=32, d_mlp=11008, vocab=32000)
    >>> kv_cache_bytes(llama, bytes_per_number=2)
    524288
    >>> kv_cache_bytes(llama, 4096, bytes_per_number=2) / 2**30
    2.0
    """
    shape = _shape(shape)
    tokens = as_positive_int(n_tokens, "n_tokens", minimum=0)
    itemsize, batch = as_positive_int(bytes_per_number, "bytes_per_number"), as_positive_int(batch, "batch")
    kept = _sinks(window, sinks)
    if window is not None:
        tokens = min(tokens, as_positive_int(window, "window") + kept)
    per_token = 2 * shape.n_layers * shape.n_kv_heads * shape.d_head * itemsize
    return per_token * tokens * batch


def llama_parameter_counts(shape: DecoderShape) -> dict[str, int]:
    """The parameters of a Llama-style decoder (Llama 2 and 3, Mistral), part by part.

    Lesson 15 · section 2, the cache's memory.

    Pre-norm layers with RMSNorm (a weight of ``d_model`` numbers, no bias), attention without
    biases (``W_q``, ``W_k``, ``W_v``, ``W_o``, with ``n_kv_heads`` key/value heads), a SwiGLU MLP
    (three matrices: gate and up ``d_model × d_mlp``, down ``d_mlp × d_model``, no biases),
    rotary positions (no parameters), a final RMSNorm, and an unembedding (``lm_head``) unless
    it is tied to the embedding.

    Parameters
    ----------
    shape : DecoderShape

    Returns
    -------
    dict
        ``"embedding"``: ``vocab·d_model``; ``"attention"``: ``n_layers·d_model·d_head·(2·n_heads
        + 2·n_kv_heads)``; ``"mlp"``: ``n_layers·3·d_model·d_mlp``; ``"norms"``:
        ``(2·n_layers + 1)·d_model``; ``"unembedding"``: ``vocab·d_model`` (0 if tied);
        ``"total"``: their sum.

    Examples
    --------
    >>> llama = DecoderShape(n_layers=32, d_model=4096, n_heads=32, d_mlp=11008, vocab=32000)
    >>> f"{llama_parameter_counts(llama)['total']:,}"
    '6,738,415,616'
    """
    s = _shape(shape)
    per_layer_attention = s.d_model * s.d_head * (2 * s.n_heads + 2 * s.n_kv_heads)
    parts = {
        "embedding": s.vocab * s.d_model,
        "attention": s.n_layers * per_layer_attention,
        "mlp": s.n_layers * 3 * s.d_model * s.d_mlp,
        "norms": (2 * s.n_layers + 1) * s.d_model,
        "unembedding": 0 if s.tied_embeddings else s.vocab * s.d_model,
    }
    return {**parts, "total": sum(parts.values())}


def kv_cache_outgrows_weights(
    shape: DecoderShape,
    *,
    parameters: int,
    bytes_per_number: int,
    weight_bytes_per_number: int | None = None,
    batch: int = 1,
    window: int | None = None,
    sinks: int = 0,
) -> int | None:
    """The shortest context whose KV cache takes more bytes than the model's weights.

    Lesson 15 · section 2, the cache's memory.

    The smallest ``n`` with ``kv_cache_bytes(shape, n, ...) > parameters · weight_bytes_per_number``:
    ``floor(weights / per_token) + 1``. Both in the same dtype (the default), the bytes cancel:
    ``n = floor(parameters / (2 · n_layers · n_kv_heads · d_head · batch)) + 1``.

    Parameters
    ----------
    shape : DecoderShape
    parameters : int
        The model's parameter count (:func:`llama_parameter_counts` for a Llama-style decoder).
    bytes_per_number : int
        Of the cache.
    weight_bytes_per_number : int, optional
        Of the weights; by default the cache's.
    batch, window, sinks
        As in :func:`kv_cache_bytes`.

    Returns
    -------
    int or None
        None when a sliding window keeps the cache below the weights at every length.
    """
    shape = _shape(shape)
    number = as_positive_int(bytes_per_number, "bytes_per_number")
    weight_number = number if weight_bytes_per_number is None else weight_bytes_per_number
    weight_bytes = as_positive_int(weight_number, "weight_bytes_per_number")
    weights = as_positive_int(parameters, "parameters") * weight_bytes
    per_token = kv_cache_bytes(shape, 1, bytes_per_number=bytes_per_number, batch=batch)
    length = weights // per_token + 1
    _sinks(window, sinks)
    if window is None:
        return length
    kept = kv_cache_bytes(
        shape, length, bytes_per_number=bytes_per_number, batch=batch, window=window, sinks=sinks
    )
    return length if kept > weights else None


#: The matrix products of one attention layer while generating, as :func:`decoder_pass_multiplications`
#: and :func:`counted_generation` name them (summed over the layers).
GENERATION_STEPS = ("Q = x W_q", "K, V = x W_k, x W_v", "scores q Kᵀ", "weights · V", "concat(heads) W_o")


def decoder_pass_multiplications(shape: DecoderShape, n_rows: int, n_context: int) -> dict[str, int]:
    """Multiplications of the attention of one forward pass: ``n_rows`` new positions, ``n_context`` keys.

    Lesson 15 · section 1, one token at a time.

    Per layer, with ``D = d_model``, ``H = n_heads``, ``G = n_kv_heads``, ``d = d_head``, ``m =
    n_rows`` and ``t = n_context``: ``Q``: ``m·D·H·d``; ``K`` and ``V``: ``2·m·D·G·d``; scores:
    ``H·m·t·d``; weights · V: ``H·m·t·d``; ``W_o``: ``m·H·d·D``. The scores of all ``m × t``
    pairs are computed, as a plain implementation does before masking.

    Without a cache, generating at context ``t`` is a pass with ``m = t``: every projection and
    all ``t × t`` scores again, quadratic in ``t``. With a KV cache it is ``m = 1``: one row of
    scores per layer and head, linear in ``t``.

    Only the attention's matrix products are counted: not the scaling by ``1/√d``, the softmax,
    the additions, the MLP (``2`` or ``3·m·D·d_mlp`` per layer, the same per new position with or
    without a cache), the norms or the unembedding (``D·vocab`` for the one position whose next
    token is drawn, in both cases).

    Parameters
    ----------
    shape : DecoderShape
    n_rows : int
        Positions whose queries, keys and values the pass computes (``m``).
    n_context : int
        Keys each of them is scored against (``t``; at least ``n_rows``).

    Returns
    -------
    dict
        Multiplications of each step of :data:`GENERATION_STEPS`, summed over the layers and
        heads, and ``"total"``.
    """
    s = _shape(shape)
    m, t = as_positive_int(n_rows, "n_rows"), as_positive_int(n_context, "n_context")
    if t < m:
        raise ValueError(
            f"n_context={t} is smaller than n_rows={m}: the new positions are part of the context"
        )
    return _attention_multiplications(s, m, m * t)


def _attention_multiplications(s: DecoderShape, rows: int, pairs: int) -> dict[str, int]:
    """The multiplications of :data:`GENERATION_STEPS` for ``rows`` projected positions and
    ``pairs`` (query, key) scores per head, over all layers."""
    L, D, H, G, d = s.n_layers, s.d_model, s.n_heads, s.n_kv_heads, s.d_head
    steps = dict(
        zip(
            GENERATION_STEPS,
            (
                L * rows * D * H * d,
                L * 2 * rows * D * G * d,
                L * H * pairs * d,
                L * H * pairs * d,
                L * rows * H * d * D,
            ),
            strict=True,
        )
    )
    return {**steps, "total": sum(steps.values())}


def generation_multiplications(
    shape: DecoderShape, n_new: int, *, prompt: int = 1, cache: bool
) -> dict[str, int]:
    """Multiplications of the attention to generate ``n_new`` tokens one at a time after a prompt.

    Lesson 15 · section 1, one token at a time.

    Pass ``k = 1 … n_new`` reads a context of ``t_k = prompt + k − 1`` tokens and predicts the
    next one. Without a cache every pass is :func:`decoder_pass_multiplications` ``(t_k, t_k)``;
    with one the first pass reads the prompt, ``(prompt, prompt)``, and every later pass only
    its newest token, ``(1, t_k)``. Summed in closed form, with ``Σt = Σ_k t_k`` and ``Σt² =
    Σ_k t_k²``: projected rows ``Σt`` without a cache and ``prompt + n_new − 1`` with one;
    score pairs ``Σt²`` without and ``prompt² + Σt − prompt`` with one. For a prompt of 1 and
    ``n`` new tokens the scores cost ``~n³/3`` pairs without a cache and ``~n²/2`` with it.

    Parameters
    ----------
    shape : DecoderShape
    n_new : int
        Tokens generated (forward passes).
    prompt : int
        Tokens given before the first pass.
    cache : bool
        Whether the keys and values of earlier tokens are kept (a KV cache).

    Returns
    -------
    dict
        As :func:`decoder_pass_multiplications`, summed over the passes.
    """
    s = _shape(shape)
    n, p = as_positive_int(n_new, "n_new"), as_positive_int(prompt, "prompt")
    cached = as_flag(cache, "cache")
    last = p + n - 1  # the context of the last pass
    sum_t = last * (last + 1) // 2 - (p - 1) * p // 2  # Σ_{t=p}^{last} t
    sum_t2 = last * (last + 1) * (2 * last + 1) // 6 - (p - 1) * p * (2 * p - 1) // 6
    if cached:
        return _attention_multiplications(s, p + n - 1, p * p + sum_t - p)
    return _attention_multiplications(s, sum_t, sum_t2)


def counted_generation(
    X: npt.ArrayLike,
    layers: Sequence[Mapping[str, npt.ArrayLike]],
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    prompt: int = 1,
    cache: bool,
) -> tuple[np.ndarray, list[dict[str, int]]]:
    """Generate with an attention-only decoder, counting every multiplication of its matrix products.

    Lesson 15 · section 1, one token at a time.

    The decoder is lesson 14's without positions or norms: each layer adds its causal
    multi-head attention to the residual stream, ``x ← x + attention(x)``. ``X`` holds the
    embeddings of the prompt and of the tokens generated after it, in order: which token comes
    next does not change the count, so they are given rather than drawn. Pass ``k`` reads
    ``X[: prompt + k − 1]``. Without a cache it recomputes every position; with one it computes
    the prompt once, then only the newest position, scoring it against the keys and values that
    every layer has kept. Deliberately slow: scalar loops, to *measure*.

    Parameters
    ----------
    X : (n, d_model)
        ``n = prompt + n_new − 1`` rows: the last generated token is not read again.
    layers : sequence of mappings
        Each with ``W_q (d_model, n_heads·d_head)``, ``W_k`` and ``W_v (d_model, n_kv_heads·d_head)``
        and ``W_o (n_heads·d_head, d_model)``, as :func:`attnlib.multihead.multi_head_attention`.
    n_heads : int
    n_kv_heads : int, optional
    prompt : int
        Rows of ``X`` read by the first pass (at most ``n``).
    cache : bool

    Returns
    -------
    last : (n_new, d_model)
        The residual stream of each pass's newest position after the last layer: the same with
        and without a cache.
    counts : list of dict
        Per pass, the multiplications of each step of :data:`GENERATION_STEPS` (summed over the
        layers) and ``"total"``; equal to :func:`decoder_pass_multiplications`, and their sum
        to :func:`generation_multiplications`.
    """
    x, weights, heads, group, p, cached = _generation_arguments(X, layers, n_heads, n_kv_heads, prompt, cache)
    kept: list[dict[str, list[np.ndarray]]] = [{"K": [], "V": []} for _ in weights]
    last, counts = [], []
    for t in range(p, x.shape[0] + 1):  # the pass that reads a context of t tokens
        tally = {step: {"multiplications": 0, "additions": 0} for step in GENERATION_STEPS}
        start = t - 1 if cached and t > p else 0  # the first position this pass computes
        h = x[start:t]
        for W, store in zip(weights, kept, strict=True):
            Q = counted_matmul(h, W["W_q"], tally[GENERATION_STEPS[0]])
            K = counted_matmul(h, W["W_k"], tally[GENERATION_STEPS[1]])
            V = counted_matmul(h, W["W_v"], tally[GENERATION_STEPS[1]])
            if cached:  # append the new keys and values; attend over all that are kept
                store["K"].append(K)
                store["V"].append(V)
                K, V = np.concatenate(store["K"]), np.concatenate(store["V"])
            z = _counted_heads(Q, K, V, heads, group, start, tally)
            h = h + counted_matmul(z, W["W_o"], tally[GENERATION_STEPS[4]])
        last.append(h[-1])
        steps = {step: tally[step]["multiplications"] for step in GENERATION_STEPS}
        counts.append({**steps, "total": sum(steps.values())})
    return np.array(last), counts


def _counted_heads(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    heads: int,
    group: int,
    start: int,
    tally: dict[str, dict[str, int]],
) -> np.ndarray:
    """Causal attention of queries at positions ``start …`` over keys ``0 …``, head by head, counted.

    Query head ``h`` reads key/value head ``h // group``; its scores and weighted sum are counted
    matrix products; the scaling, the mask and the softmax are not multiplications counted here.
    """
    d = Q.shape[1] // heads
    rows, keys = np.arange(start, start + Q.shape[0])[:, None], np.arange(K.shape[0])[None, :]
    outputs = []
    for h in range(heads):
        q, g = slice(h * d, (h + 1) * d), slice((h // group) * d, (h // group + 1) * d)
        scores = counted_matmul(Q[:, q], K[:, g].T, tally[GENERATION_STEPS[2]]) / math.sqrt(d)
        weights = softmax(np.where(keys <= rows, scores, -np.inf))  # query i sees keys 0 … i
        outputs.append(counted_matmul(weights, V[:, g], tally[GENERATION_STEPS[3]]))
    return np.concatenate(outputs, axis=1)


def _generation_arguments(
    X: npt.ArrayLike,
    layers: object,
    n_heads: object,
    n_kv_heads: object,
    prompt: object,
    cache: object,
) -> tuple[np.ndarray, list[dict[str, np.ndarray]], int, int, int, bool]:
    """Every check of :func:`counted_generation`: ``(X, weights, n_heads, group, prompt, cache)``."""
    cached = as_flag(cache, "cache")
    x = as_real_array(X, "X").astype(np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(
            f"X must be the embeddings of the tokens, shape (n, d_model) with n ≥ 1, got {x.shape}"
        )
    p = as_positive_int(prompt, "prompt")
    if p > x.shape[0]:
        raise ValueError(f"prompt={p} is longer than X, which has {x.shape[0]} rows")
    if isinstance(layers, Mapping) or not isinstance(layers, Sequence) or not layers:
        raise TypeError(f"layers must be a non-empty sequence of dicts of W_q, W_k, W_v, W_o, got {layers!r}")
    weights = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Mapping) or set(layer) != {"W_q", "W_k", "W_v", "W_o"}:
            raise ValueError(f"layers[{i}] must be a dict of exactly W_q, W_k, W_v, W_o")
        checked = multi_head_arguments(x, x, **layer, n_heads=n_heads, n_kv_heads=n_kv_heads)
        if checked.W["W_o"].shape[1] != x.shape[1]:
            raise ValueError(
                f"layers[{i}]: W_o must write back to the residual stream of width d_model={x.shape[1]}, "
                f"got shape {checked.W['W_o'].shape}"
            )
        weights.append({name: w.astype(np.float64) for name, w in checked.W.items()})
    heads = checked.n_heads
    return x, weights, heads, heads // (checked.n_kv_heads or heads), p, cached
