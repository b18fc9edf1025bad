"""A Llama-architecture language model in NumPy: SmolLM2-135M-Instruct, run on attnlib's parts.

Lesson 16. The model is ``logits = rms_norm(block(… block(embed[ids]) …)) @ embed.T`` (tied
embeddings), one :func:`~attnlib.model.llama_parts.block` per layer, and generation keeps every
layer's rotated keys and values (the KV cache). Its loop in NumPy, greedy, without the cache:

>>> import numpy as np
>>> from attnlib.model.llama_file import LlamaConfig, LlamaModel
>>> config = LlamaConfig(n_layers=1, n_heads=2, n_kv_heads=1, d_head=4, d_model=8, d_mlp=16,
...                      vocab_size=11, n_ctx=32, rope_base=10000.0, norm_eps=1e-5)
>>> model = LlamaModel.random(config, seed=0)
>>> ids = [3, 1, 4]
>>> for _ in range(4):
...     ids.append(int(np.argmax(forward(model, ids)[-1])))
>>> generate(model, [3, 1, 4], 4, stop_at_eos=False).tolist() == ids[3:]
True

This module is the façade lesson 16 imports (``from attnlib.model import llama``): the parts
(:mod:`~attnlib.model.llama_parts`), the file (:mod:`~attnlib.model.llama_file`), the sampler
(:mod:`attnlib.sampling`), and here :func:`forward` (with ablations, windows and sinks),
:func:`forward_with_weights` (every layer's weights too), :func:`generate` and
:func:`generate_with_logits`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.core import window_rule
from attnlib.model.gguf import ModelFileError
from attnlib.model.llama_file import (
    LlamaConfig,
    LlamaModel,
    as_ids,
    config_from_metadata,
    load_smollm2,
    params_from_tensors,
)
from attnlib.model.llama_parts import (
    Parts,
    block,
    grouped_query_attention,
    rms_norm,
    rotate,
    swiglu,
)
from attnlib.sampling import choose_tokens, next_token_probabilities, sampling_settings
from attnlib.validation import as_flag, as_positive_int, as_seed, as_whole_array, is_number

__all__ = [
    "LlamaConfig",
    "LlamaKVCache",
    "LlamaModel",
    "ModelFileError",
    "Parts",
    "block",
    "config_from_metadata",
    "float32_tolerance",
    "forward",
    "forward_with_weights",
    "generate",
    "generate_with_logits",
    "grouped_query_attention",
    "load_smollm2",
    "next_token_probabilities",
    "params_from_tensors",
    "rms_norm",
    "rotate",
    "swiglu",
]


class LlamaKVCache:
    """Every layer's rotated keys and values, in arrays allocated once for ``capacity`` tokens.

    Lesson 16 · 7. Prefill against decode: what decode reads besides the weights. The same cache
    as lesson 15's :class:`attnlib.decoder.KVCache` (a test gives both the same keys and values and
    compares what they hold), without a batch axis or a rolling window, and written into arrays
    made for the whole answer at once: lesson 15's grows by concatenating, which for SmolLM2's
    30 layers would copy the whole cache at every token. :func:`generate` fills it; it trusts its
    arguments.

    Attributes
    ----------
    K, V : (n_layers, n_kv_heads, capacity, d_head) float32
        Rows ``0 … length − 1`` of each layer hold its keys (rotated by RoPE) and values.
    length : int
        Tokens held; :meth:`append` writes after them, and the pass that appended to every layer
        adds its tokens (``cache.length += m``).
    """

    def __init__(self, c: LlamaConfig, capacity: int) -> None:
        self.K = np.empty((c.n_layers, c.n_kv_heads, capacity, c.d_head), dtype=np.float32)
        self.V = np.empty_like(self.K)
        self.length = 0

    def append(self, layer: int, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Write ``layer``'s new keys and values ``(n_kv_heads, m, d_head)`` after the ``length``
        held; return all ``length + m`` of them (views of the arrays, not copies).

        Lesson 16 · 7. Prefill against decode.
        """
        end = self.length + K.shape[1]
        self.K[layer, :, self.length : end], self.V[layer, :, self.length : end] = K, V
        return self.K[layer, :, :end], self.V[layer, :, :end]


@dataclass
class _Pass:
    """One forward pass's settings, shared by its layers."""

    model: LlamaModel
    parts: Parts
    positions: np.ndarray  # (n,)
    mask: np.ndarray | None  # (n, n_k), or None for causal
    ablate: frozenset[tuple[int, int]]
    cache: LlamaKVCache | None = None
    sink_places: np.ndarray | None = None  # keys_at="cache" with sinks: the queries' places against the sinks
    sinks: int = 0
    weights: list[np.ndarray] | None = None

    def attention(self, layer: int, w: Mapping[str, np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        """The attention sublayer of ``layer``: ``a = rms_norm_1(x)`` → what the heads write."""
        c, rotate_ = self.model.config, self.parts.rotate

        def attn(a: np.ndarray) -> np.ndarray:
            n = a.shape[0]
            Q = (a @ w["W_q"]).reshape(n, c.n_heads, c.d_head).transpose(1, 0, 2)  # (H, n, d_head)
            K = (a @ w["W_k"]).reshape(n, c.n_kv_heads, c.d_head).transpose(1, 0, 2)
            V = (a @ w["W_v"]).reshape(n, c.n_kv_heads, c.d_head).transpose(1, 0, 2)
            Q_rot, K = rotate_(Q, self.positions, c.rope_base), rotate_(K, self.positions, c.rope_base)
            if self.cache is not None:
                K, V = self.cache.append(layer, K, V)
            if self.sink_places is None:
                out, weights = self.parts.attention(Q_rot, K, V, mask=self.mask)
            else:
                out, weights = self._with_sinks_in_place(Q, Q_rot, K, V)
            dropped = [head for (at, head) in self.ablate if at == layer]
            if dropped:
                out = out.copy()
                out[dropped] = 0.0
            if self.weights is not None:
                self.weights.append(weights)
            return out.transpose(1, 0, 2).reshape(n, c.n_heads * c.d_head) @ w["W_o"]

        return attn

    def _with_sinks_in_place(
        self, Q: np.ndarray, Q_rot: np.ndarray, K: np.ndarray, V: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Attention where a sink outside the window is seen from the query's place in a rolling cache.

        Query ``i`` sees sink ``j`` at distance ``min(i, sinks + window − 1) − j`` and the window's
        keys at ``i − j``. One attention call computes both: each query is the two rotations side
        by side (times √2, so that ``1/√(2·d_head)`` scales as ``1/√d_head``), each sink's key a
        second time, beside zeros, as extra columns before the others.
        """
        c, s = self.model.config, self.sinks
        zeros = np.zeros_like(K)
        Q2 = np.concatenate([self.parts.rotate(Q, self.sink_places, c.rope_base), Q_rot], axis=-1)
        K2 = np.concatenate(
            [np.concatenate([K[:, :s], zeros[:, :s]], axis=-1), np.concatenate([zeros, K], axis=-1)], axis=1
        )
        out, weights2 = self.parts.attention(
            Q2 * np.float32(math.sqrt(2.0)), K2, np.concatenate([V[:, :s], V], axis=1), mask=self.mask
        )
        weights = weights2[..., s:].copy()
        weights[..., :s] += weights2[..., :s]
        return out, weights


def _run(p: _Pass, ids: np.ndarray) -> np.ndarray:
    """The residual stream after the last layer and the final RMSNorm, (n, d_model)."""
    c, params = p.model.config, p.model.params
    x = params["embed"][ids]
    names = ("attn_norm", "W_q", "W_k", "W_v", "W_o", "mlp_norm", "W_gate", "W_up", "W_down")
    for layer in range(c.n_layers):
        w = {name: params[f"layer{layer}.{name}"] for name in names}
        x = p.parts.block(x, w, p.attention(layer, w), p.parts, c.norm_eps)
    return p.parts.rms_norm(x, params["norm"], c.norm_eps)


def _as_parts(parts: object) -> Parts:
    if parts is None:
        return Parts()
    if not isinstance(parts, Parts):
        raise TypeError(f"parts must be attnlib.model.llama.Parts(...) or None, got {type(parts).__name__}")
    return parts


def forward(
    model: LlamaModel,
    ids: npt.ArrayLike,
    *,
    parts: Parts | None = None,
    ablate: Iterable[tuple[int, int]] = frozenset(),
    window: int | None = None,
    sinks: int = 0,
    keys_at: str = "cache",
    positions: npt.ArrayLike | None = None,
) -> np.ndarray:
    """The model's next-token logits at every position of ``ids``.

    Lesson 16 · 2 to · 6: the model on the learner's parts, sinks, induction heads.

    Parameters
    ----------
    model : LlamaModel
    ids : (n,) int
        1 ≤ n ≤ ``n_ctx`` token ids.
    parts : Parts or None
        The functions to build it from (``None``: attnlib's).
    ablate : iterable of (layer, head)
        Query heads whose output is zeroed before ``W_o``.
    window, sinks : int or None, int
        Each query sees the latest ``window`` tokens (itself included) and the first ``sinks``
        (StreamingLLM); ``sinks`` needs a window.
    keys_at : {"cache", "original"}
        With sinks: where RoPE puts a sink that is outside the window. ``"cache"``: at its place in
        a rolling cache (the query sits at ``min(i, sinks + window − 1)``), as StreamingLLM does;
        ``"original"``: at its position in the text (distances up to ``n − 1``). With ``"cache"``
        and sinks, ``parts.attention`` receives queries and keys of width ``2·d_head`` (the two
        rotations side by side, see ``_Pass._with_sinks_in_place``): it must scale by the width
        it is given, as :func:`grouped_query_attention` does.
    positions : (n,) int or None
        Where RoPE puts each token: increasing whole numbers from 0 (``None``: ``0 … n − 1``). RoPE
        sees only distances, so moving the tokens after the sinks ``D`` places later shows the
        model distances up to ``n + D``, past its trained context (lesson 16 · 5). Windows and
        sinks still count tokens, not positions; with sinks, ``keys_at="original"`` (a rolling
        cache rotates by places in the cache, which no position changes).

    Returns
    -------
    logits : (n, vocab_size) float32
    """
    p, t = _forward_pass(model, ids, parts, ablate, window, sinks, keys_at, positions)
    return _run(p, t) @ model.params["embed"].T


def forward_with_weights(
    model: LlamaModel,
    ids: npt.ArrayLike,
    *,
    parts: Parts | None = None,
    ablate: Iterable[tuple[int, int]] = frozenset(),
    window: int | None = None,
    sinks: int = 0,
    keys_at: str = "cache",
    positions: npt.ArrayLike | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """:func:`forward`, and every layer's attention weights.

    Lesson 16 · 5 and · 6: the sinks and the induction heads, read from the weights. Memory:
    ``n_layers · n_heads · n²`` floats besides the logits.

    Parameters
    ----------
    model, ids, parts, ablate, window, sinks, keys_at, positions
        As :func:`forward`.

    Returns
    -------
    logits : (n, vocab_size) float32
    weights : list of n_layers arrays (n_heads, n, n) float32
        Layer ``l``'s weights, rows = queries; each row sums to 1 over the keys its query sees.
    """
    p, t = _forward_pass(model, ids, parts, ablate, window, sinks, keys_at, positions)
    p.weights = []
    logits = _run(p, t) @ model.params["embed"].T
    return logits, p.weights


def _forward_pass(
    model: LlamaModel,
    ids: npt.ArrayLike,
    parts: Parts | None,
    ablate: Iterable[tuple[int, int]],
    window: int | None,
    sinks: int,
    keys_at: str,
    positions: npt.ArrayLike | None,
) -> tuple[_Pass, np.ndarray]:
    """The checks of :func:`forward`, and the pass they set up with the checked ids."""
    c = model.config
    t = as_ids(model, ids, "ids")
    if len(t) > c.n_ctx:
        raise ValueError(f"ids has {len(t):,} tokens, more than the model's context of {c.n_ctx:,}")
    n = len(t)
    sinks = as_positive_int(sinks, "sinks", minimum=0)
    if window is not None:
        window = min(as_positive_int(window, "window"), n)  # a window of n or more hides nothing
    if sinks and window is None:
        raise ValueError(f"sinks={sinks} needs a window (pass window=…)")
    if not isinstance(keys_at, str) or keys_at not in ("cache", "original"):
        raise ValueError(f"keys_at must be 'cache' or 'original', got {keys_at!r:.60}")
    sinks = min(sinks, n)  # more sinks than tokens: every token is a sink
    index = np.arange(n)
    if positions is None:
        positions = index
    else:
        positions = as_whole_array(positions, "positions")
        if positions.shape != (n,):
            raise ValueError(f"positions must be ({n},) whole numbers, one per token, got {positions.shape}")
        if positions[0] < 0 or (np.diff(positions) <= 0).any():
            raise ValueError("positions must increase from 0 or more: each token after the one before")
        if sinks and keys_at == "cache":
            raise ValueError(
                "positions with sinks needs keys_at='original': with keys_at='cache' RoPE rotates by the "
                "places in a rolling cache, which do not depend on positions"
            )
    mask = window_rule(index, index, window, sinks)
    p = _Pass(model, _as_parts(parts), positions, mask, _as_ablate(c, ablate))
    if sinks and keys_at == "cache" and window is not None:
        i, j = index[:, None], index[None, :]
        outside = (j < sinks) & (j <= i - window)  # the sinks a query sees only as sinks
        p.mask = np.concatenate([outside[:, :sinks], mask & ~outside], axis=1)
        p.sink_places, p.sinks = np.minimum(index, sinks + window - 1), sinks
    return p, t


def _as_ablate(c: LlamaConfig, ablate: Iterable[tuple[int, int]]) -> frozenset[tuple[int, int]]:
    if isinstance(ablate, (str, bytes)):
        raise TypeError(f"ablate must be (layer, head) pairs of whole numbers, got {ablate!r:.80}")
    try:
        listed = [tuple(pair) for pair in ablate]
    except TypeError:
        raise TypeError(f"ablate must be (layer, head) pairs of whole numbers, got {ablate!r:.80}") from None
    if not all(
        len(pair) == 2 and is_number(pair[0], whole=True) and is_number(pair[1], whole=True)
        for pair in listed
    ):
        raise TypeError(f"ablate must be (layer, head) pairs of whole numbers, got {ablate!r:.80}")
    pairs = frozenset((int(layer), int(head)) for layer, head in listed)
    bad = [(at, h) for at, h in pairs if not (0 <= at < c.n_layers and 0 <= h < c.n_heads)]
    if bad:
        raise ValueError(
            f"ablate names heads the model does not have: {sorted(bad)} "
            f"(layers 0 … {c.n_layers - 1}, heads 0 … {c.n_heads - 1})"
        )
    return pairs


def generate(
    model: LlamaModel,
    ids: npt.ArrayLike,
    n_new: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
    stop_at_eos: bool = True,
    parts: Parts | None = None,
) -> np.ndarray:
    """Up to ``n_new`` tokens after ``ids``, one at a time, with the KV cache.

    Lesson 16 · 3 and · 4. The prompt runs first (prefill, :data:`PREFILL_BLOCK` tokens a pass)
    and fills every layer's cache; then each new token runs the model on itself alone (decode),
    its query attending over the cache.

    Parameters
    ----------
    model : LlamaModel
    ids : (n,) int
        The prompt (``model.encode(text)`` or ``model.chat(messages)``), at least one token.
    n_new : int
        At most this many new tokens; ``n + n_new ≤ n_ctx``.
    temperature, top_k, top_p
        As :func:`next_token_probabilities` (``temperature=0``: greedy).
    seed : int
        The draws' seed (unused when greedy).
    stop_at_eos : bool
        Stop after the model writes its end token (:attr:`LlamaModel.eos_id`, kept in the result).
    parts : Parts or None

    Returns
    -------
    tokens : (≤ n_new,) int64, the new tokens only
    """
    return _generate(model, ids, n_new, temperature, top_k, top_p, seed, stop_at_eos, parts, None)


def generate_with_logits(
    model: LlamaModel,
    ids: npt.ArrayLike,
    n_new: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
    stop_at_eos: bool = True,
    parts: Parts | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`generate`, and the logits each new token was chosen from.

    Lesson 16 · 3. It answers: the learner's parts against attnlib's on the decode path.

    Parameters
    ----------
    model, ids, n_new, temperature, top_k, top_p, seed, stop_at_eos, parts
        As :func:`generate`.

    Returns
    -------
    tokens : (≤ n_new,) int64, the new tokens only
    logits : (len(tokens), vocab_size) float32
        Row ``k``: the scores token ``k`` was chosen from.
    """
    chosen_from: list[np.ndarray] = []
    tokens = _generate(model, ids, n_new, temperature, top_k, top_p, seed, stop_at_eos, parts, chosen_from)
    return tokens, np.array(chosen_from, dtype=np.float32).reshape(len(tokens), model.config.vocab_size)


def _generate(
    model: LlamaModel,
    ids: npt.ArrayLike,
    n_new: int,
    temperature: object,
    top_k: object,
    top_p: object,
    seed: object,
    stop_at_eos: object,
    parts: Parts | None,
    chosen_from: list[np.ndarray] | None,
) -> np.ndarray:
    """:func:`generate`: the checks at the door, then the loop on checked settings; each new token's
    logits are appended to ``chosen_from`` unless it is None."""
    c = model.config
    t = as_ids(model, ids, "ids")
    new = as_positive_int(n_new, "n_new", minimum=0)
    if len(t) + new > c.n_ctx:
        raise ValueError(
            f"the prompt's {len(t):,} tokens plus n_new={new:,} are more than "
            f"the model's context of {c.n_ctx:,} tokens"
        )
    temp, k, p_top = sampling_settings(temperature, top_k, top_p, c.vocab_size)
    rng = np.random.default_rng(as_seed(seed))
    stop = as_flag(stop_at_eos, "stop_at_eos")
    p = _Pass(model, _as_parts(parts), np.arange(len(t)), None, frozenset(), LlamaKVCache(c, len(t) + new))
    out: list[int] = []
    for i in range(new):
        if i == 0:
            h = _prefill(p, t)
        else:  # decode: the newest token alone, at the next position, against the cache
            p.positions = np.array([p.cache.length])
            h = _run(p, np.array([out[-1]]))[-1]
            p.cache.length += 1
        logits = h @ model.params["embed"].T
        if chosen_from is not None:
            chosen_from.append(logits)
        token = int(choose_tokens(logits[None], temp, rng, k, p_top)[0])
        out.append(token)
        if stop and token == model.eos_id:
            break
    return np.array(out, dtype=np.int64)


#: The prompt's tokens that one pass of the prefill takes: each layer's scores are then at most
#: ``n_heads × PREFILL_BLOCK × n_ctx`` floats (75 MB for SmolLM2's whole context), not ``n_heads × n²``.
PREFILL_BLOCK = 256


def _prefill(p: _Pass, ids: np.ndarray) -> np.ndarray:
    """The prompt's last row after the final norm, filling the cache ``PREFILL_BLOCK`` tokens at a time.

    Lesson 16 · 7: each block's queries attend over the cache so far (the causal mask for the last
    rows of the keys, as a decode step's), so memory grows with the prompt, not with its square.
    """
    for start in range(0, len(ids), PREFILL_BLOCK):
        block = ids[start : start + PREFILL_BLOCK]
        p.positions = np.arange(start, start + len(block))
        h = _run(p, block)[-1]
        p.cache.length += len(block)
    return h


def float32_tolerance(config: LlamaConfig, n_tokens: int, largest: float = 1.0) -> float:
    """How far two float32 runs of the model may differ, on an output whose largest entry is ``largest``.

    Lesson 16 · 2 (attnlib against transformers, the KV cache against the whole pass): the bound
    those comparisons use, as :func:`attnlib.model.float32_tolerance` derives it for BERT. A sum
    of ``m`` float32 terms with independent rounding errors is within about ``√m·u`` of the exact
    sum, relative to its terms (``u = 2⁻²⁴``). On one layer's path a value goes through sums of
    ``d_model`` terms eight times (the query, key, value, gate and up projections, the two
    RMSNorms' means, the output projection's ``n_heads·d_head``), of ``d_head`` (a score),
    ``n_tokens`` (weights times values) and ``d_mlp`` (the down projection); the unembedding adds
    one more of ``d_model``. The bound adds them all over every layer, as if no error ever
    cancelled another, and doubles it: each run is within it of the exact result.

    Returns
    -------
    float
        For SmolLM2-135M on 40 tokens, 8.8e-4 · ``largest``.
    """
    sums = [config.d_model] * 8 + [config.d_head, as_positive_int(n_tokens, "n_tokens"), config.d_mlp]
    per_pass = config.n_layers * sum(math.sqrt(m) for m in sums) + math.sqrt(config.d_model)
    return 2 * per_pass * 2**-24 * largest
