"""A whole decoder-only transformer in numpy: forward, gradients by hand, a KV cache, generation.

With row vectors times matrices, as in the other lessons, and ``x`` the residual stream::

    x = embed[tokens] + pos_embed[positions]                       (B, n, d_model)
    for each layer:
        a = LN(x) if layer_norm else x
        Q, K, V = a W_q, a W_k, a W_v, split into heads            (B, H, n, d_head), (B, H_kv, n, d_head)
                  (positions="attention": x = embed[tokens], and Q, K read a + pos_embed instead;
                   positions="rope": x = embed[tokens], and Q, K are rotated by their positions)
        z_h = attention(Q_h, K_g(h), V_g(h), mask)                 query head h reads key/value head
                                                                   g(h) = h // (H / H_kv); the mask
                                                                   is causal, or a window + sinks
        x = x + concat(z_1 … z_H) W_o                              each head writes z_h W_o^h
        if d_mlp:  x = x + GELU(LN(x) W_in + b_in) W_out + b_out   (LN only if layer_norm)
    logits = (LN(x) if layer_norm else x) unembed                  (B, n, vocab)

Generation (:func:`generate`) keeps each layer's keys and values in a :class:`KVCache`; with a
``window`` and ``sinks`` the cache rolls (StreamingLLM, Xiao et al. 2023): it keeps the first
``sinks`` tokens and the latest ones, and with RoPE each key is rotated by its place in the cache,
so a model with ``positions="rope"`` can write past ``n_ctx`` without meeting a distance longer
than ``sinks + window − 1``. :func:`forward` with the same ``window`` and ``sinks`` computes the
same thing over a whole sequence. :func:`pool_kv_heads` turns a model's key/value heads into
fewer by averaging (grouped-query attention, Ainslie et al. 2023).

The loss is the mean next-token cross-entropy: positions ``0 … n−2`` predict tokens ``1 … n−1``.
:func:`loss_and_gradients` runs the chain rule backwards through every step above, the attention
through :func:`attnlib.backward.steps_backward`; :func:`train` feeds it to
:class:`attnlib.training.Adam`. Everything is float64.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.backward import steps_backward
from attnlib.core import AttentionSteps, attention_steps, causal_mask, default_scale, softmax
from attnlib.counting import DecoderShape
from attnlib.multihead import merge_heads, split_heads
from attnlib.positions import rope
from attnlib.training import Adam, cross_entropy
from attnlib.validation import as_flag, as_positive_int, as_real, as_real_array, is_number

__all__ = [
    "LN_EPS",
    "POSITIONS",
    "DecoderConfig",
    "DecoderOutput",
    "DecoderRun",
    "GenerationTrace",
    "KVCache",
    "check_parameters",
    "check_tokens",
    "forward",
    "generate",
    "init_parameters",
    "loss_and_gradients",
    "next_token_losses",
    "parameter_shapes",
    "pool_kv_heads",
    "train",
    "visible_keys",
]

#: The ways a :class:`DecoderConfig` can give the model positions.
POSITIONS = ("residual", "attention", "rope")
#: The ε under the square root of every LayerNorm (PyTorch's default).
LN_EPS = 1e-5
_GELU_C = math.sqrt(2.0 / math.pi)


@dataclass(frozen=True)
class DecoderConfig:
    """The shape of a decoder.

    Attributes
    ----------
    vocab_size : int
        Number of different tokens (ids ``0 … vocab_size − 1``); at least 2.
    n_ctx : int
        The longest sequence the model reads (it has one learned position per slot).
    d_model : int
        Width of the residual stream.
    n_heads : int
        Query heads per layer; must divide ``d_model`` (each head has ``d_head = d_model // n_heads``).
    n_layers : int
    d_mlp : int
        Width of each layer's MLP; ``0`` (the default) means an attention-only transformer.
    layer_norm : bool
        Pre-LN: a LayerNorm before each attention and MLP block and before the unembedding.
    n_kv_heads : int or None
        Key/value heads per layer (grouped-query attention); ``None`` means ``n_heads``, ``1`` is
        multi-query attention. Must divide ``n_heads``.
    positions : {"residual", "attention", "rope"}
        How the model knows where a token is. ``"residual"`` (GPT-2's way): learned positions
        ``pos_embed`` added to the token embeddings, so they are part of the residual stream.
        ``"attention"`` (Shortformer's position-infused attention, Press et al. 2021): the learned
        positions added to every layer's input of the queries and keys only, so positions decide
        where heads look but are never copied by a head's values: what a head moves is token
        content alone. ``"rope"`` (RoFormer, Su et al. 2021): no ``pos_embed``; every head's
        queries and keys in every layer are rotated by their position with
        :func:`attnlib.positions.rope` (base 10000, RoFormer's interleaved pairing
        ``(x[2i], x[2i+1])``), so a score depends on the distance between query and key only,
        and a sequence may be longer than ``n_ctx`` (see :func:`forward`).
    """

    vocab_size: int
    n_ctx: int
    d_model: int
    n_heads: int
    n_layers: int
    d_mlp: int = 0
    layer_norm: bool = False
    n_kv_heads: int | None = None
    positions: str = "residual"

    def __post_init__(self) -> None:
        as_positive_int(self.vocab_size, "vocab_size", minimum=2)
        for name in ("n_ctx", "d_model", "n_heads", "n_layers"):
            as_positive_int(getattr(self, name), name)
        as_positive_int(self.d_mlp, "d_mlp", minimum=0)
        as_flag(self.layer_norm, "layer_norm")
        if self.positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}, got {self.positions!r}")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model={self.d_model} does not divide into n_heads={self.n_heads} heads of equal width"
            )
        if self.positions == "rope" and self.d_head % 2:
            raise ValueError(
                f"positions='rope' rotates pairs of components, so d_head = d_model // n_heads must be "
                f"even, got d_head = {self.d_head}"
            )
        if self.n_kv_heads is not None:
            as_positive_int(self.n_kv_heads, "n_kv_heads")
            if self.n_heads % self.n_kv_heads:
                raise ValueError(
                    f"n_kv_heads={self.n_kv_heads} must divide n_heads={self.n_heads} "
                    "(each key/value head serves the same number of query heads)"
                )

    @property
    def d_head(self) -> int:
        """Width of one head's queries, keys and values: ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Key/value heads per layer: ``n_kv_heads``, or ``n_heads`` when that is ``None``."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def group_size(self) -> int:
        """Query heads per key/value head."""
        return self.n_heads // self.kv_heads

    @property
    def shape(self) -> DecoderShape:
        """Its sizes as :mod:`attnlib.counting` takes them (cache bytes, operations, parameters)."""
        return DecoderShape(
            n_layers=self.n_layers,
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_mlp=self.d_mlp,
            vocab=self.vocab_size,
            n_kv_heads=self.kv_heads,
        )


def parameter_shapes(config: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """The name and shape of every parameter of ``config``, in the order of the forward pass."""
    c = _config(config)
    d, width, kv_width = c.d_model, c.n_heads * c.d_head, c.kv_heads * c.d_head
    shapes: dict[str, tuple[int, ...]] = {"embed": (c.vocab_size, d)}
    if c.positions != "rope":
        shapes["pos_embed"] = (c.n_ctx, d)
    for layer in range(c.n_layers):
        p = f"layer{layer}."
        if c.layer_norm:
            shapes |= {p + "ln_attn.gain": (d,), p + "ln_attn.bias": (d,)}
        shapes |= {p + "W_q": (d, width), p + "W_k": (d, kv_width), p + "W_v": (d, kv_width)}
        shapes[p + "W_o"] = (width, d)
        if c.d_mlp:
            if c.layer_norm:
                shapes |= {p + "ln_mlp.gain": (d,), p + "ln_mlp.bias": (d,)}
            shapes |= {p + "W_in": (d, c.d_mlp), p + "b_in": (c.d_mlp,)}
            shapes |= {p + "W_out": (c.d_mlp, d), p + "b_out": (d,)}
    if c.layer_norm:
        shapes |= {"ln_final.gain": (d,), "ln_final.bias": (d,)}
    shapes["unembed"] = (d, c.vocab_size)
    return shapes


def init_parameters(config: DecoderConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Random starting parameters, float64, named as :func:`parameter_shapes` lists them.

    The embeddings have standard normal entries (a residual stream of entries about 1); every
    matrix has normal entries of variance ``1/fan_in`` (LeCun's initialisation, as lesson 11);
    biases start at 0 and LayerNorm gains at 1.
    """
    rng = np.random.default_rng(_seed(seed))
    params = {}
    for name, shape in parameter_shapes(config).items():
        if name.endswith(".gain"):
            params[name] = np.ones(shape)
        elif name.endswith(".bias") or name.split(".")[-1].startswith("b_"):
            params[name] = np.zeros(shape)
        elif name in ("embed", "pos_embed"):
            params[name] = rng.normal(size=shape)
        else:
            params[name] = rng.normal(size=shape) / math.sqrt(shape[0])
    return params


# --- checking what a learner passes ---------------------------------------------------------


def _config(config: object) -> DecoderConfig:
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config must be an attnlib.decoder.DecoderConfig, got {type(config).__name__}")
    return config


def _seed(value: object) -> int:
    if not (is_number(value, whole=True) and value >= 0):
        raise ValueError(f"seed must be a non-negative integer, got {value!r}")
    return int(value)


def check_parameters(config: DecoderConfig, params: Mapping[str, npt.ArrayLike]) -> dict[str, np.ndarray]:
    """``params`` as float64 arrays of the shapes ``config`` needs, or an error naming what is wrong.

    Raises
    ------
    TypeError
        ``params`` is not a mapping, or a parameter is not numeric.
    ValueError
        A parameter is missing or unknown, has the wrong shape (both shapes are named), or holds
        NaN or infinite entries.
    """
    shapes = parameter_shapes(config)
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict of arrays by name, got {type(params).__name__}")
    missing = [name for name in shapes if name not in params]
    unknown = sorted(str(name) for name in params if name not in shapes)
    if missing or unknown:
        parts = [f"missing {missing}"] if missing else []
        parts += [f"unknown {unknown}"] if unknown else []
        raise ValueError(
            f"params do not match the config: {'; '.join(parts)} "
            f"(expected {list(shapes)}; see attnlib.decoder.parameter_shapes)"
        )
    checked = {}
    for name, shape in shapes.items():
        array = as_real_array(params[name], f"params[{name!r}]").astype(np.float64, copy=False)
        if array.shape != shape:
            raise ValueError(
                f"params[{name!r}] must have shape {shape} for this config, got shape {array.shape}"
            )
        checked[name] = array
    return checked


def check_tokens(
    config: DecoderConfig, tokens: npt.ArrayLike, name: str = "tokens", *, any_length: bool = False
) -> np.ndarray:
    """``tokens`` as an integer array (B, n), 1 ≤ n ≤ n_ctx, of ids ``0 … vocab_size − 1``.

    A single sequence ``(n,)`` becomes a batch of one, ``(1, n)``. With ``any_length`` and
    ``positions="rope"`` (no table of positions to run out of), ``n`` may exceed ``n_ctx``.
    """
    c = _config(config)
    t = np.asarray(tokens)
    if t.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers (token ids), got dtype {t.dtype}")
    if t.ndim == 1:
        t = t[None, :]
    if t.ndim != 2 or t.shape[1] == 0 or t.shape[0] == 0:
        raise ValueError(
            f"{name} must have shape (batch, n) or (n,) with n ≥ 1, got shape {np.shape(tokens)}"
        )
    if t.shape[1] > c.n_ctx and not (any_length and c.positions == "rope"):
        raise ValueError(f"{name} has {t.shape[1]} positions, more than the model's n_ctx={c.n_ctx}")
    if t.min() < 0 or t.max() >= c.vocab_size:
        raise ValueError(f"{name} must be ids from 0 to {c.vocab_size - 1}, got {t.min()} … {t.max()}")
    return t.astype(np.int64, copy=False)


def _ablations(config: DecoderConfig, ablate: Iterable[tuple[int, int]]) -> frozenset[tuple[int, int]]:
    pairs = set()
    for item in ablate:
        if not (
            isinstance(item, tuple | list) and len(item) == 2 and all(is_number(i, whole=True) for i in item)
        ):
            raise TypeError(f"ablate must hold (layer, head) pairs of integers, got {item!r}")
        layer, head = int(item[0]), int(item[1])
        if not (0 <= layer < config.n_layers and 0 <= head < config.n_heads):
            raise ValueError(
                f"ablate names (layer {layer}, head {head}); the model has layers 0 … {config.n_layers - 1} "
                f"and heads 0 … {config.n_heads - 1}"
            )
        pairs.add((layer, head))
    return frozenset(pairs)


# --- the pieces -------------------------------------------------------------------------------


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form: ``x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`` (PyTorch's ``approximate='tanh'``).

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


def _gelu_backward(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    """``d_out · GELU'(x)``: ``σ + 2x σ(1 − σ) u'`` with ``σ = σ(2u)``, ``u' = √(2/π)(1 + 3·0.044715 x²)``."""
    s = _sigmoid_2u(x)
    return d_out * (s + 2.0 * x * s * (1.0 - s) * _GELU_C * (1.0 + 3 * 0.044715 * (x * x)))


@dataclass
class _Norm:
    """One LayerNorm's forward pass, kept for its backward pass."""

    x_hat: np.ndarray  # (x − mean) / σ
    inv_sigma: np.ndarray  # 1/√(var + ε), (..., 1)
    gain: np.ndarray


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, _Norm]:
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_sigma = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)
    x_hat = centred * inv_sigma
    return x_hat * gain + bias, _Norm(x_hat, inv_sigma, gain)


def _layer_norm_backward(norm: _Norm, d_out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dx, d_gain, d_bias of a LayerNorm from the gradient of its output."""
    d_hat = d_out * norm.gain
    dx = norm.inv_sigma * (
        d_hat
        - d_hat.mean(axis=-1, keepdims=True)
        - norm.x_hat * (d_hat * norm.x_hat).mean(axis=-1, keepdims=True)
    )
    flat = d_out.reshape(-1, d_out.shape[-1])
    return dx, (flat * norm.x_hat.reshape(flat.shape)).sum(axis=0), flat.sum(axis=0)


def _matmul_grad(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    """The gradient of ``W`` in ``x W`` summed over every row: ``xᵀ d_out`` over batch and positions."""
    return x.reshape(-1, x.shape[-1]).T @ d_out.reshape(-1, d_out.shape[-1])


class KVCache:
    """The keys and values each layer has computed so far, so a new token computes only its own.

    ``keys[l]`` and ``values[l]`` are ``(B, n_kv_heads, t, d_head)`` for the ``t`` tokens cached,
    whose places in the whole sequence are ``positions``. Keys are stored as the projection
    makes them: with ``positions="rope"`` they are rotated when they are read, by their place in
    the cache (StreamingLLM's way, Xiao et al. 2023).

    With a ``window``, the cache rolls (StreamingLLM): :meth:`evict` keeps the first ``sinks``
    tokens and the last ``window − 1``, so between two tokens it holds at most
    ``sinks + window − 1`` tokens, and while a new token attends (itself appended) at most
    ``sinks + window``: exactly the keys that ``causal_mask(…, window=window, sinks=sinks)``
    lets that token see. Without a window it keeps every token.

    Parameters
    ----------
    n_layers : int
    window : int or None
        How many of the latest tokens (the new one included) a new token sees; ``None``: all.
    sinks : int
        How many of the first tokens are kept for ever (only with a ``window``).
    """

    def __init__(self, n_layers: int, *, window: int | None = None, sinks: int = 0) -> None:
        self.window, self.sinks = _window(window, sinks)
        self.keys: list[np.ndarray | None] = [None] * as_positive_int(n_layers, "n_layers")
        self.values: list[np.ndarray | None] = [None] * len(self.keys)
        self.positions = np.zeros(0, dtype=np.int64)  # where each cached token sits in the sequence
        self.seen = 0  # tokens added so far: the next token's position

    @property
    def length(self) -> int:
        """Tokens cached now."""
        return len(self.positions)

    @property
    def nbytes(self) -> int:
        """The memory the cached keys and values hold, in bytes.

        ``2 · n_layers · B · n_kv_heads · d_head · itemsize · length`` once every layer has its
        keys and values (:func:`attnlib.counting.kv_cache_bytes` for ``B = 1``).
        """
        return sum(a.nbytes for a in self.keys + self.values if a is not None)

    def add_tokens(self, count: int) -> np.ndarray:
        """Record ``count`` new tokens (before their layers :meth:`append`); return their positions."""
        new = self.seen + np.arange(as_positive_int(count, "count"), dtype=np.int64)
        self.positions = np.concatenate([self.positions, new])
        self.seen += len(new)
        return new

    def append(self, layer: int, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add the new tokens' keys and values ``(B, n_kv_heads, m, d_head)`` to ``layer``'s; return all."""
        old_k, old_v = self.keys[layer], self.values[layer]
        self.keys[layer] = K if old_k is None else np.concatenate([old_k, K], axis=-2)
        self.values[layer] = V if old_v is None else np.concatenate([old_v, V], axis=-2)
        return self.keys[layer], self.values[layer]

    def evict(self) -> None:
        """Drop what the next token will not see: all but the first ``sinks`` and the last ``window − 1``."""
        if self.window is None or self.length <= self.sinks + self.window - 1:
            return
        keep = np.r_[0 : self.sinks, self.length - (self.window - 1) : self.length]
        self.positions = self.positions[keep]
        self.keys = [None if k is None else k[..., keep, :] for k in self.keys]
        self.values = [None if v is None else v[..., keep, :] for v in self.values]


def _window(window: object, sinks: object) -> tuple[int | None, int]:
    """``window`` and ``sinks`` checked: a positive int or None, and a count ≥ 0 that needs a window."""
    w = None if window is None else as_positive_int(window, "window")
    s = as_positive_int(sinks, "sinks", minimum=0)
    if s and w is None:
        raise ValueError(f"sinks={s} needs a window: without one every token is seen already (pass window=…)")
    return w, s


def visible_keys(
    query_positions: npt.ArrayLike, key_positions: npt.ArrayLike, *, window: int | None = None, sinks: int = 0
) -> np.ndarray:
    """Which keys each query sees, by their positions in the sequence: ``(n_q, n_k)`` bool.

    The rows and columns of :func:`attnlib.core.causal_mask` with that ``window`` and those
    ``sinks`` (query ``i`` sees key ``j ≤ i`` when ``j > i − window`` or ``j < sinks``): the mask
    of a pass over the whole sequence, or of new tokens over what a rolling cache still holds.

    Examples
    --------
    The token at position 6 with a window of 3 and one sink:

    >>> visible_keys([6], range(7), window=3, sinks=1).astype(int)
    array([[1, 0, 0, 0, 1, 1, 1]])
    """
    w, s = _window(window, sinks)
    q = np.asarray(query_positions, dtype=np.int64)
    k = np.asarray(key_positions, dtype=np.int64)
    size = int(max(q.max(initial=-1), k.max(initial=-1))) + 1
    return causal_mask(size, window=w, sinks=s)[np.ix_(q, k)]


# --- the forward pass -------------------------------------------------------------------------


@dataclass
class _Layer:
    """What one layer's forward pass keeps for the backward pass."""

    attn_in: np.ndarray
    qk_in: np.ndarray  # attn_in, plus the positions when they enter the attention only
    attn_norm: _Norm | None
    Q: np.ndarray  # (B, H, n, d_head), rotated with positions="rope"
    K: np.ndarray  # (B, H, n_k, d_head): the key/value heads repeated for their query heads (rotated)
    V: np.ndarray
    steps: AttentionSteps
    z: np.ndarray  # (B, n, H·d_head): the heads' outputs side by side, ablated ones zero
    mlp_in: np.ndarray | None = None
    mlp_norm: _Norm | None = None
    pre_act: np.ndarray | None = None
    hidden: np.ndarray | None = None


@dataclass
class _Pass:
    residuals: list[np.ndarray]
    layers: list[_Layer]
    final: np.ndarray
    final_norm: _Norm | None
    logits: np.ndarray
    key_positions: np.ndarray  # (n_k,): where each key of the attention sits in the sequence


@dataclass(frozen=True)
class _Rotation:
    """The RoPE angles' positions of one forward pass (``positions="rope"``)."""

    queries: np.ndarray  # (n,)
    keys: np.ndarray  # (n_k,)
    sink_queries: np.ndarray | None  # (n,): the queries' positions against the sinks, if not ``queries``
    sinks: int


def _rotation(
    query_positions: np.ndarray, key_positions: np.ndarray, window: int | None, sinks: int, cached: bool
) -> _Rotation:
    """Where RoPE puts each query and key: StreamingLLM's positions within the cache.

    With a rolling cache a token's place is its index in the cache: the sinks keep ``0 … sinks−1``
    and the query sits at ``min(i, sinks + window − 1)``; a key among the latest ``window`` is
    ``i − j`` before the query, as in the whole sequence. Over a whole sequence (no cache) the
    same distances are: ``i − j`` to the latest keys, ``min(i, sinks + window − 1) − j`` to the
    sinks, so the queries are rotated a second time for the sinks' columns.
    """
    if cached:  # one token at a time with a window (generate sees to it), every token without one
        places = np.arange(len(key_positions))
        return _Rotation(places[len(places) - len(query_positions) :], places, None, 0)
    if window is None or not sinks or query_positions[-1] < sinks + window - 1:
        return _Rotation(query_positions, key_positions, None, 0)
    return _Rotation(query_positions, key_positions, np.minimum(query_positions, sinks + window - 1), sinks)


def _attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray, rotation: _Rotation | None
) -> tuple[AttentionSteps, np.ndarray, np.ndarray]:
    """The attention's steps, and the queries and keys as the scores read them (rotated by RoPE)."""
    if rotation is None:
        return attention_steps(Q, K, V, mask=mask), Q, K
    Q_rot, K_rot = rope(Q, rotation.queries), rope(K, rotation.keys)
    if rotation.sink_queries is None:
        return attention_steps(Q_rot, K_rot, V, mask=mask), Q_rot, K_rot
    # the sinks' columns: the query at its place in the rolling cache (no gradient is taken here)
    raw = Q_rot @ K_rot.swapaxes(-1, -2)
    raw[..., : rotation.sinks] = rope(Q, rotation.sink_queries) @ K_rot[..., : rotation.sinks, :].swapaxes(
        -1, -2
    )
    scale = default_scale(Q.shape[-1])
    masked = np.where(mask, raw * scale, -np.inf)
    weights = softmax(masked)
    return AttentionSteps(raw, scale, raw * scale, masked, weights, weights @ V), Q_rot, K_rot


def _run(
    c: DecoderConfig,
    p: dict[str, np.ndarray],
    t: np.ndarray,
    *,
    ablate: frozenset[tuple[int, int]] = frozenset(),
    cache: KVCache | None = None,
    window: int | None = None,
    sinks: int = 0,
) -> _Pass:
    """The forward pass on checked arguments; with ``cache``, ``t`` continues the cached tokens.

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
        rotation = _rotation(query_positions, key_positions, window, sinks, cache is not None)
    x = p["embed"][t]
    if c.positions == "residual":
        x = x + p["pos_embed"][query_positions]
    residuals, layers = [x], []
    for layer in range(c.n_layers):
        name = f"layer{layer}."
        attn_norm = None
        a = x
        if c.layer_norm:
            a, attn_norm = _layer_norm(x, p[name + "ln_attn.gain"], p[name + "ln_attn.bias"])
        # Shortformer: positions steer where heads look
        qk_in = a + p["pos_embed"][query_positions] if c.positions == "attention" else a
        Q = split_heads(qk_in @ p[name + "W_q"], c.n_heads)
        K = split_heads(qk_in @ p[name + "W_k"], c.kv_heads)
        V = split_heads(a @ p[name + "W_v"], c.kv_heads)
        if cache is not None:
            K, V = cache.append(layer, K, V)
        if c.group_size > 1:
            K, V = np.repeat(K, c.group_size, axis=1), np.repeat(V, c.group_size, axis=1)
        steps, Q, K = _attention(Q, K, V, mask, rotation)
        heads_out = steps.output
        dropped = [head for (at, head) in ablate if at == layer]
        if dropped:
            heads_out = heads_out.copy()
            heads_out[:, dropped] = 0.0
        z = merge_heads(heads_out)
        x = x + z @ p[name + "W_o"]
        kept = _Layer(a, qk_in, attn_norm, Q, K, V, steps, z)
        if c.d_mlp:
            m = x
            if c.layer_norm:
                m, kept.mlp_norm = _layer_norm(x, p[name + "ln_mlp.gain"], p[name + "ln_mlp.bias"])
            kept.mlp_in, kept.pre_act = m, m @ p[name + "W_in"] + p[name + "b_in"]
            kept.hidden = _gelu_tanh(kept.pre_act)
            x = x + kept.hidden @ p[name + "W_out"] + p[name + "b_out"]
        residuals.append(x)
        layers.append(kept)
    final, final_norm = x, None
    if c.layer_norm:
        final, final_norm = _layer_norm(x, p["ln_final.gain"], p["ln_final.bias"])
    return _Pass(residuals, layers, final, final_norm, final @ p["unembed"], key_positions)


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
    c = _config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens, any_length=True)
    w, s = _window(window, sinks)
    run = _run(c, p, t, ablate=_ablations(c, ablate), window=w, sinks=s)
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


# --- the backward pass ------------------------------------------------------------------------


def _next_token_loss(logits: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of positions 0 … n−2 against tokens 1 … n−1, and d(loss)/d(logits)."""
    d_logits = np.zeros_like(logits)  # the last position predicts nothing: no loss, no gradient
    loss, d_logits[:, :-1] = cross_entropy(logits[:, :-1], t[:, 1:])
    return loss, d_logits


def _backward(
    c: DecoderConfig, p: dict[str, np.ndarray], t: np.ndarray, run: _Pass, d_logits: np.ndarray
) -> dict[str, np.ndarray]:
    """Every parameter's gradient from ``d_logits``, the chain rule run backwards through ``run``."""
    g: dict[str, np.ndarray] = {"unembed": _matmul_grad(run.final, d_logits)}
    dx = d_logits @ p["unembed"].T  # (B, n, d_model)
    d_pos_attention = 0.0  # the positions' gradient through the queries and keys (positions="attention")
    if c.layer_norm:
        dx, g["ln_final.gain"], g["ln_final.bias"] = _layer_norm_backward(run.final_norm, dx)
    for layer in reversed(range(c.n_layers)):
        name, kept = f"layer{layer}.", run.layers[layer]
        if c.d_mlp:  # x = x + GELU(m W_in + b_in) W_out + b_out
            g[name + "W_out"], g[name + "b_out"] = _matmul_grad(kept.hidden, dx), dx.sum(axis=(0, 1))
            d_pre = _gelu_backward(kept.pre_act, dx @ p[name + "W_out"].T)
            g[name + "W_in"], g[name + "b_in"] = _matmul_grad(kept.mlp_in, d_pre), d_pre.sum(axis=(0, 1))
            dm = d_pre @ p[name + "W_in"].T
            if c.layer_norm:
                dm, g[name + "ln_mlp.gain"], g[name + "ln_mlp.bias"] = _layer_norm_backward(kept.mlp_norm, dm)
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
            da, g[name + "ln_attn.gain"], g[name + "ln_attn.bias"] = _layer_norm_backward(kept.attn_norm, da)
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

    Positions ``0 … n−2`` predict tokens ``1 … n−1`` (``n ≥ 2``); the loss is their mean over
    the batch and the positions. The gradients are the backward pass written out (the attention
    through :func:`attnlib.backward.steps_backward`), float64.

    Returns
    -------
    loss : float
    grads : dict of str to ndarray
        One entry per parameter, under its name and of its shape.
    """
    c = _config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens)
    if t.shape[1] < 2:
        raise ValueError(f"tokens need at least 2 positions for a next-token loss, got shape {t.shape}")
    return _loss_and_gradients(c, p, t)


def _loss_and_gradients(
    c: DecoderConfig, p: dict[str, np.ndarray], t: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    run = _run(c, p, t)
    loss, d_logits = _next_token_loss(run.logits, t)
    return loss, _backward(c, p, t, run, d_logits)


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

    Parameters
    ----------
    config, params, tokens, ablate, window, sinks
        As in :func:`forward`; ``n ≥ 2``.

    Returns
    -------
    (B, n − 1)
        Their mean is :func:`loss_and_gradients`'s loss (without ablation and window).
    """
    c = _config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens, any_length=True)
    if t.shape[1] < 2:
        raise ValueError(f"tokens need at least 2 positions for a next-token loss, got shape {t.shape}")
    w, s = _window(window, sinks)
    return _token_losses(_run(c, p, t, ablate=_ablations(c, ablate), window=w, sinks=s).logits, t)


# --- generation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationTrace:
    """What each step of :func:`generate` attended to (``return_trace=True``).

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
    return_trace: bool = False,
) -> np.ndarray | tuple[np.ndarray, GenerationTrace]:
    """The prompt followed by ``n_new`` tokens, each chosen from the model's next-token scores.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    prompt : (n,) or (B, n) integers
        At least one token. With learned positions ``n + n_new`` must not exceed ``n_ctx``. With
        ``positions="rope"`` there is no limit: with a ``window`` the rolling cache keeps every
        distance at most ``sinks + window − 1``, so generation can run to any length; without
        one, past ``n_ctx`` the queries meet distances the model never trained on (allowed, to
        show what that does).
    n_new : int
        How many tokens to add (0 returns the prompt).
    use_cache : bool
        Keep every layer's keys and values (:class:`KVCache`), so each new token runs the model
        on itself alone; without it, each new token reruns the whole sequence with the same mask
        and positions (:func:`forward` with ``window`` and ``sinks``). Both give the same tokens.
    temperature : float
        ``0`` picks the most likely token (greedy); above 0, a token is drawn from
        ``softmax(logits / temperature)``.
    seed : int
        Seed of the draws (unused when greedy).
    window, sinks : int or None, int
        Each new token sees the first ``sinks`` tokens and the last ``window`` (itself
        included), as in :func:`forward`; the cache keeps only those (:meth:`KVCache.evict`).
        With a window, the cache takes the prompt one token at a time.
    return_trace : bool
        Also return a :class:`GenerationTrace`: each step's keys and attention weights.

    Returns
    -------
    tokens : (n + n_new,) or (B, n + n_new) int64, the shape of ``prompt``'s
    trace : GenerationTrace
        Only with ``return_trace=True``.
    """
    c = _config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, prompt, "prompt", any_length=True)
    new = as_positive_int(n_new, "n_new", minimum=0)
    cached = as_flag(use_cache, "use_cache")
    traced = as_flag(return_trace, "return_trace")
    temp = as_real(temperature, "temperature", example="0.0 (greedy) or 1.0")
    if temp < 0:
        raise ValueError(f"temperature must be 0 (greedy) or positive, got {temp}")
    w, s = _window(window, sinks)
    if c.positions != "rope" and t.shape[1] + new > c.n_ctx:
        raise ValueError(
            f"the prompt's {t.shape[1]} tokens plus n_new={new} make {t.shape[1] + new}, "
            f"more than the model's n_ctx={c.n_ctx} (learned positions stop there; positions='rope' does not)"
        )
    rng = np.random.default_rng(_seed(seed))
    cache = KVCache(c.n_layers, window=w, sinks=s) if cached else None
    step_input = t
    if cache is not None and w is not None:  # a rolling cache takes one token at a time
        for i in range(t.shape[1] - 1):
            _run(c, p, t[:, i : i + 1], cache=cache, window=w, sinks=s)
            cache.evict()
        step_input = t[:, -1:]
    sequence, keys, weights, logits, held = t, [], [], [], []
    for _ in range(new):
        if cache is not None:
            run = _run(c, p, step_input, cache=cache, window=w, sinks=s)
            seen = cache.positions.copy()
            held.append(cache.nbytes)
            cache.evict()
            last = [kept.steps.weights[:, :, -1] for kept in run.layers]
        else:
            run = _run(c, p, sequence, window=w, sinks=s)
            n = sequence.shape[1]
            seen = np.flatnonzero(visible_keys([n - 1], np.arange(n), window=w, sinks=s)[0])
            last = [kept.steps.weights[:, :, -1, seen] for kept in run.layers]
        step_logits = run.logits[:, -1]  # (B, vocab)
        chosen = _choose(step_logits, temp, rng)[:, None]
        sequence = np.concatenate([sequence, chosen], axis=1)
        step_input = chosen
        if traced:
            keys.append(seen)
            weights.append(np.stack(last))
            logits.append(step_logits)
    tokens = sequence[0] if np.ndim(prompt) == 1 else sequence
    if not traced:
        return tokens
    stacked = np.stack(logits) if logits else np.zeros((0, t.shape[0], c.vocab_size))
    measured = np.array(held, dtype=np.int64) if cache is not None else None
    return tokens, GenerationTrace(keys, weights, stacked, measured)


def pool_kv_heads(
    config: DecoderConfig, params: Mapping[str, npt.ArrayLike], n_kv_heads: int
) -> tuple[DecoderConfig, dict[str, np.ndarray]]:
    """Convert a model to grouped-query attention by mean-pooling its key and value heads.

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
    c = _config(config)
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


def _choose(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """One token id per row: the largest logit, or a draw from ``softmax(logits / temperature)``."""
    if temperature == 0:
        return logits.argmax(axis=-1)
    scaled = logits / temperature
    probs = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    cumulative = np.cumsum(probs / probs.sum(axis=-1, keepdims=True), axis=-1)
    draws = rng.random((logits.shape[0], 1))
    return np.minimum((cumulative < draws).sum(axis=-1), logits.shape[-1] - 1)


# --- training ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecoderRun:
    """What :func:`train` recorded.

    Attributes
    ----------
    config : DecoderConfig
    losses : (steps,)
        The mean loss of each step's batch, before that step's update.
    position_losses : (steps, n − 1)
        The same loss per predicted position (position ``i`` predicts token ``i + 1``), the mean
        over the batch: the loss on any part of the sequence, step by step.
    snapshot_steps : (n_snapshots,) int
        The steps whose parameters were saved (0 = before training, the last = after training).
    snapshots : list of dict
        The parameters after that many updates.
    probe : (n,) int or None
        A fixed sequence whose attention weights were recorded at each snapshot.
    probe_weights : (n_snapshots, n_layers, n_heads, n, n) or None
        Every head's weights on ``probe`` at each snapshot.
    measurements : (steps, ...) or None
        What ``measure`` returned at each step, before that step's update.
    """

    config: DecoderConfig
    losses: np.ndarray
    position_losses: np.ndarray
    snapshot_steps: np.ndarray
    snapshots: list[dict[str, np.ndarray]] = field(repr=False)
    probe: np.ndarray | None = None
    probe_weights: np.ndarray | None = field(default=None, repr=False)
    measurements: np.ndarray | None = field(default=None, repr=False)

    @property
    def params(self) -> dict[str, np.ndarray]:
        """The parameters after the last step."""
        return self.snapshots[-1]

    def parameters_at(self, step: int) -> dict[str, np.ndarray]:
        """The saved parameters after ``step`` updates (one of ``snapshot_steps``)."""
        matches = np.flatnonzero(self.snapshot_steps == step) if is_number(step, whole=True) else []
        if len(matches) == 0:
            raise ValueError(f"step {step!r} was not saved; saved steps: {self.snapshot_steps.tolist()}")
        return self.snapshots[int(matches[0])]


Batches = Callable[[np.random.Generator], npt.ArrayLike] | Iterable[npt.ArrayLike]


def train(
    config: DecoderConfig,
    batches: Batches,
    *,
    steps: int,
    learning_rate: float = 1e-3,
    seed: int = 0,
    snapshot_every: int = 0,
    probe: npt.ArrayLike | None = None,
    params: Mapping[str, npt.ArrayLike] | None = None,
    measure: Callable[[dict[str, np.ndarray]], npt.ArrayLike] | None = None,
) -> DecoderRun:
    """Train with Adam on next-token prediction, one batch per step.

    Parameters
    ----------
    config : DecoderConfig
    batches : callable or iterable
        ``batches(rng)`` returns a token batch (B, n), drawn with the run's generator (seeded by
        ``seed``); or an iterable that yields one batch per step.
    steps : int
        Number of updates.
    learning_rate : float
        Adam's step size (:class:`attnlib.training.Adam`).
    seed : int
        Seed of the starting parameters (:func:`init_parameters`) and of ``rng``.
    snapshot_every : int
        Save the parameters every that many steps (and at step 0 and the last step); 0 saves the
        first and last only.
    probe : (n,) integers, optional
        A sequence whose attention weights are recorded at every snapshot.
    params : dict, optional
        Start from these parameters instead of :func:`init_parameters`'s.
    measure : callable, optional
        ``measure(params)`` is called before every update (with the parameters that step's loss
        was computed with), for anything else to follow along, such as the loss on a fixed
        evaluation batch; its results become ``DecoderRun.measurements``.

    Returns
    -------
    DecoderRun

    Raises
    ------
    FloatingPointError
        A step overflowed or made a NaN (the learning rate is too large); the message names the step.

    Notes
    -----
    The matrices of a small model are tiny: on a busy machine, start Python with
    ``OPENBLAS_NUM_THREADS=1``, or NumPy's BLAS threads spend far longer waiting for each other
    than multiplying (``tools/train_induction.py`` does so).
    """
    c = _config(config)
    n_steps = as_positive_int(steps, "steps")
    every = as_positive_int(snapshot_every, "snapshot_every", minimum=0)
    rng = np.random.default_rng(_seed(seed))
    p = init_parameters(c, seed) if params is None else check_parameters(c, params)
    probe_tokens = None if probe is None else check_tokens(c, probe, "probe")
    if probe_tokens is not None and probe_tokens.shape[0] != 1:
        raise ValueError(f"probe must be one sequence (n,), got shape {np.shape(probe)}")
    source = _batch_source(batches, rng)
    optimiser = Adam(learning_rate)
    losses, position_losses, measurements = [], [], []
    saved_steps, snapshots = [0], [p]
    for step in range(1, n_steps + 1):
        batch = next(source, None)
        if batch is None:
            raise ValueError(f"batches ran out after {step - 1} of {n_steps} steps")
        t = check_tokens(c, batch, "batch")
        if measure is not None:
            measurements.append(np.asarray(measure(p)))
        try:
            with np.errstate(over="raise", invalid="raise"):
                run = _run(c, p, t)
                loss, d_logits = _next_token_loss(run.logits, t)
                p = optimiser.step(p, _backward(c, p, t, run, d_logits))
        except FloatingPointError as exc:
            raise FloatingPointError(
                f"training diverged at step {step} ({exc}); try a smaller learning_rate"
            ) from None
        losses.append(loss)
        position_losses.append(_token_losses(run.logits, t).mean(axis=0))
        if (every and step % every == 0) or step == n_steps:
            saved_steps.append(step)
            snapshots.append(p)
    probe_weights = None
    if probe_tokens is not None:
        probe_weights = np.stack(
            [np.stack([k.steps.weights[0] for k in _run(c, s, probe_tokens).layers]) for s in snapshots]
        )
    return DecoderRun(
        c,
        np.array(losses),
        np.array(position_losses),
        np.array(saved_steps),
        snapshots,
        None if probe_tokens is None else probe_tokens[0],
        probe_weights,
        np.array(measurements) if measure is not None else None,
    )


def _batch_source(batches: Batches, rng: np.random.Generator) -> Iterator[npt.ArrayLike]:
    if callable(batches):
        return (batches(rng) for _ in iter(int, 1))  # without end: train takes what it needs
    if isinstance(batches, Iterable):
        return iter(batches)
    raise TypeError(
        f"batches must be a function of a random generator or an iterable of batches, got {batches!r}"
    )


def _token_losses(logits: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The next-token loss of each prediction, ``−log p(t[:, i + 1])`` at position i: (B, n − 1)."""
    shifted = logits[:, :-1] - logits[:, :-1].max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, t[:, 1:, None], axis=-1)[..., 0]
