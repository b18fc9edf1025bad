"""The BERT encoder's forward pass in NumPy float32, its attention computed by :mod:`attnlib.multihead`.

With row vectors times matrices, as in every lesson (PyTorch stores ``nn.Linear`` weights as
(out, in); they are transposed once, when loaded)::

    x_0 = LayerNorm(word[ids] + position[0 … n−1] + token_type[type_ids])          (..., n, d)
    for every layer:
        a   = MultiHead(x, x) with W_q, W_k, W_v, W_o and their biases; padding hidden
        x   = LayerNorm(x + a)                                 # residual, then layer norm
        f   = GELU(x W_1 + b_1) W_2 + b_2                      # feed-forward, d → d_ff → d
        x   = LayerNorm(x + f)

The biases of the queries, keys and values ride along as one extra row of each weight matrix,
multiplied by a column of ones appended to ``x``: ``[x, 1] [[W], [b]] = x W + b``. So the
attention of every layer is exactly :func:`attnlib.multihead.multi_head_attention`.

:func:`float32_tolerance` bounds how far two float32 runs of it (attnlib and transformers, or
two CPUs) may differ; for all-MiniLM-L6-v2 on a dozen tokens, in float32 epsilons (2⁻²³)::

>>> minilm = BertConfig(n_layers=6, n_heads=12, d_model=384, d_ff=1536, vocab_size=30522,
...                     max_positions=512, type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0)
>>> round(float32_tolerance(minilm, 12) / 2**-23)
1113
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from attnlib.multihead import MultiHeadArguments, heads_attention
from attnlib.validation import as_positive_int, as_real, as_real_array

__all__ = [
    "BertConfig",
    "BertWeights",
    "EmbeddingWeights",
    "EncoderOutput",
    "LayerWeights",
    "embed",
    "encode",
    "encoder_layer",
    "erfc",
    "float32_tolerance",
    "gelu",
    "layer_norm",
    "self_attention",
]


@dataclass(frozen=True)
class BertConfig:
    """The sizes of a BERT encoder, from its ``config.json``.

    Lesson 13 · 2. Embeddings: the word, its position, its segment.

    Attributes
    ----------
    n_layers, n_heads, d_model, d_ff : int
        Layers, heads per layer, width of the hidden states, width of the feed-forward layer.
    vocab_size, max_positions, type_vocab_size : int
        Rows of the word, position and token-type embedding tables.
    layer_norm_eps : float
    pad_token_id : int
    """

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    pad_token_id: int

    @property
    def d_k(self) -> int:
        """The width of one head's queries and keys: ``d_model / n_heads``."""
        return self.d_model // self.n_heads

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> BertConfig:
        """Read a hub ``config.json`` of a BERT model (``gelu``, absolute positions).

        Raises
        ------
        ValueError
            The file is not JSON text holding one object, or :meth:`from_dict` refuses it.
        """
        try:
            with open(path, encoding="utf-8") as handle:
                raw = json.load(handle)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not a JSON config: {exc}") from exc
        return cls.from_dict(raw, where=str(path))

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, where: str = "the config") -> BertConfig:
        """The config from the dict of a ``config.json``; refuses what this encoder does not compute.

        Every size must be a whole number of at least 1 (``pad_token_id`` at least 0 and below
        ``vocab_size``), ``layer_norm_eps`` a positive finite number, and ``hidden_size`` a
        multiple of ``num_attention_heads``. Errors name ``where`` and the key.
        """
        if not isinstance(raw, dict):
            raise ValueError(f"{where} must hold one JSON object (a dict), got {type(raw).__name__}")
        missing = [key for key in _SIZES.values() if key not in raw]
        if missing:
            raise ValueError(f"{where} lacks {', '.join(missing)}: not a BERT config")
        for key, expected in (("hidden_act", "gelu"), ("position_embedding_type", "absolute")):
            if raw.get(key, expected) != expected:
                raise ValueError(f"{where} has {key}={raw[key]!r}; this encoder computes only {expected!r}")
        sizes = {name: as_positive_int(raw[key], f"{where}: {key}") for name, key in _SIZES.items()}
        eps = as_real(raw.get("layer_norm_eps", 1e-12), f"{where}: layer_norm_eps", example="1e-12")
        if eps <= 0:
            raise ValueError(f"{where}: layer_norm_eps must be positive, got {eps}")
        pad = as_positive_int(raw.get("pad_token_id", 0), f"{where}: pad_token_id", minimum=0)
        if pad >= sizes["vocab_size"]:
            raise ValueError(f"{where}: pad_token_id {pad} is not below vocab_size {sizes['vocab_size']}")
        if sizes["d_model"] % sizes["n_heads"]:
            raise ValueError(
                f"{where}: hidden_size {sizes['d_model']} does not divide into {sizes['n_heads']} heads "
                "(num_attention_heads)"
            )
        return cls(**sizes, layer_norm_eps=eps, pad_token_id=pad)


#: The config's sizes: field of :class:`BertConfig` → key of ``config.json``.
_SIZES = {
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "d_model": "hidden_size",
    "d_ff": "intermediate_size",
    "vocab_size": "vocab_size",
    "max_positions": "max_position_embeddings",
    "type_vocab_size": "type_vocab_size",
}


@dataclass(frozen=True)
class EmbeddingWeights:
    """Lesson 13 · 2. Embeddings: the word, its position, its segment: the tables and their layer norm."""

    word: np.ndarray  # (vocab_size, d_model)
    position: np.ndarray  # (max_positions, d_model)
    token_type: np.ndarray  # (type_vocab_size, d_model)
    gamma: np.ndarray  # (d_model,), the layer norm's scale
    beta: np.ndarray  # (d_model,), and its shift


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer, every matrix as (in, out) so that ``x W + b`` applies it.

    Lesson 13 · 3. One layer, followed by hand. ``W_q``, ``W_k``, ``W_v``, ``W_o`` are
    (d_model, d_model) and their biases (d_model,); ``gamma_1``, ``beta_1`` the layer norm after
    attention and ``gamma_2``, ``beta_2`` the one after the feed-forward layer, (d_model,).
    """

    W_q: np.ndarray
    b_q: np.ndarray
    W_k: np.ndarray
    b_k: np.ndarray
    W_v: np.ndarray
    b_v: np.ndarray
    W_o: np.ndarray
    b_o: np.ndarray
    gamma_1: np.ndarray
    beta_1: np.ndarray
    W_1: np.ndarray  # (d_model, d_ff)
    b_1: np.ndarray  # (d_ff,)
    W_2: np.ndarray  # (d_ff, d_model)
    b_2: np.ndarray  # (d_model,)
    gamma_2: np.ndarray
    beta_2: np.ndarray

    @cached_property
    def with_biases(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``W_q``, ``W_k``, ``W_v`` each with its bias as one more row: (d_model + 1, d_model)."""
        return (
            np.vstack([self.W_q, self.b_q]),
            np.vstack([self.W_k, self.b_k]),
            np.vstack([self.W_v, self.b_v]),
        )


@dataclass(frozen=True)
class BertWeights:
    """All the weights of the encoder: the embeddings and one :class:`LayerWeights` per layer.

    Lesson 13 · 3. One layer, followed by hand.
    """

    embeddings: EmbeddingWeights
    layers: tuple[LayerWeights, ...]


@dataclass(frozen=True)
class EncoderOutput:
    """What :func:`encode` returns.

    Lesson 13 · 3. One layer, followed by hand.

    Attributes
    ----------
    hidden_states : (n_layers + 1, ..., n, d_model) float32
        The embeddings (index 0), then the output of every layer.
    attentions : (n_layers, ..., n_heads, n, n) float32
        Every head's attention weights in every layer (rows: queries, columns: keys).
    """

    hidden_states: np.ndarray
    attentions: np.ndarray


def layer_norm(x: npt.ArrayLike, gamma: npt.ArrayLike, beta: npt.ArrayLike, eps: float) -> np.ndarray:
    """Normalise each row to mean 0 and variance 1, then scale by ``gamma`` and shift by ``beta``.

    Lesson 13 · 3. One layer, followed by hand.

    ``(x − mean) / √(variance + eps) · gamma + beta``: ``eps`` keeps a constant row (variance 0)
    finite, mapping it to ``beta``.

    Parameters
    ----------
    x : (..., d)
        Integers are computed in float64; float32 stays float32.
    gamma, beta : (d,)
    eps : float
        Added to the variance, positive (1e-12 in BERT).

    Returns
    -------
    (..., d), the dtype of ``x``
    """
    rows = as_real_array(x, "x")
    scale, shift = as_real_array(gamma, "gamma"), as_real_array(beta, "beta")
    for name, vector in (("gamma", scale), ("beta", shift)):
        if vector.shape != rows.shape[-1:]:
            raise ValueError(
                f"{name} must have shape ({rows.shape[-1]},) to match x {rows.shape}, got {vector.shape}"
            )
    epsilon = as_real(eps, "eps", example="1e-12")
    if epsilon <= 0:
        raise ValueError(f"eps must be positive, got {epsilon}")
    return _layer_norm(rows, scale.astype(rows.dtype), shift.astype(rows.dtype), epsilon)


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """:func:`layer_norm` of checked arguments."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + x.dtype.type(eps)) * gamma + beta


def gelu(x: npt.ArrayLike) -> np.ndarray:
    """GELU, ``x · Φ(x) = x/2 · (1 + erf(x/√2))``, the exact form BERT uses (not the tanh approximation).

    Lesson 13 · 3. One layer, followed by hand.

    Computed in float64 as ``x/2 · erfc(−x/√2)`` (no cancellation for negative ``x``), with
    :func:`erfc` exact to float64's rounding, and returned in the dtype of ``x``.

    Parameters
    ----------
    x : (...)
        Finite numbers; integers give float64.

    Returns
    -------
    (...), the dtype of ``x`` (float32 or float64)
    """
    return _gelu(as_real_array(x, "x"))


def _gelu(x: np.ndarray) -> np.ndarray:
    """:func:`gelu` of a checked float array."""
    wide = x.astype(np.float64)
    wide *= -_SQRT_HALF
    result = _erfc(wide)  # erfc(−x/√2)
    result *= 0.5  # Φ(x), at most 1: times x it cannot overflow
    result *= x
    return result.astype(x.dtype, copy=False)


def erfc(x: npt.ArrayLike) -> np.ndarray:
    """The complementary error function ``erfc(x) = 1 − erf(x)``, elementwise, in float64.

    Lesson 13 · 3. One layer, followed by hand.

    NumPy has no ``erf``. Between points ``a`` of a grid of step 1/256 the Taylor series is summed
    to 10 terms, ``erfc(a + h) = erfc(a) + Σ_k (−1)^k · 2/√π · e^{−a²} · H_{k−1}(a) · h^k / k!``
    (``H`` the Hermite polynomials, the derivatives of ``e^{−x²}``), with ``erfc(a)`` from the C
    library (:func:`math.erfc`): the result agrees with :func:`math.erfc` to float64's rounding
    (a few units in the last place). Below −6 it is 2, above 26.5 it is 0 (erfc < 1e-306 there).

    Parameters
    ----------
    x : (...)
        Finite numbers.

    Returns
    -------
    (...) float64
    """
    return _erfc(as_real_array(x, "x").astype(np.float64))


_SQRT_HALF = math.sqrt(0.5)
_ERFC_LOW, _ERFC_HIGH, _ERFC_STEP, _ERFC_TERMS = -6.0, 26.5, 1 / 256, 10


def _erfc_taylor_table(points: np.ndarray) -> np.ndarray:
    """Row ``k``: the ``k``-th Taylor coefficient of erfc at each of ``points``, ``(terms + 1, points)``."""
    table = np.empty((_ERFC_TERMS + 1, points.size))
    table[0] = [math.erfc(a) for a in points]
    slope = 2 / math.sqrt(math.pi) * np.exp(-points * points)  # −erfc′(a)
    hermite_before, hermite = np.zeros_like(points), np.ones_like(points)  # H_{−1} = 0, H_0 = 1
    for k in range(1, _ERFC_TERMS + 1):
        table[k] = (-1) ** k * slope * hermite / math.factorial(k)
        hermite_before, hermite = hermite, 2 * points * hermite - 2 * (k - 1) * hermite_before
    return table


_ERFC_GRID = _ERFC_LOW + np.arange(round((_ERFC_HIGH - _ERFC_LOW) / _ERFC_STEP) + 1) * _ERFC_STEP
_ERFC_TABLE = _erfc_taylor_table(_ERFC_GRID)


def _erfc(x: np.ndarray) -> np.ndarray:
    """:func:`erfc` of a finite float64 array (four arrays of its size allocated, the rest in place)."""
    clipped = np.clip(x, _ERFC_LOW, _ERFC_HIGH)
    h = clipped - _ERFC_LOW
    h *= 1 / _ERFC_STEP
    h += 0.5
    index = h.astype(np.intp)  # the nearest grid point (truncation of a number ≥ 0.5), in the table
    np.subtract(clipped, _ERFC_GRID.take(index, out=h, mode="clip"), out=h)  # |h| ≤ step/2, exact
    result, term = _ERFC_TABLE[_ERFC_TERMS].take(index, mode="clip"), clipped
    for k in range(_ERFC_TERMS - 1, -1, -1):  # Horner: ((c_10 h + c_9) h + …) h + c_0
        result *= h
        result += _ERFC_TABLE[k].take(index, out=term, mode="clip")
    result[x > _ERFC_HIGH] = 0.0
    return result


def embed(
    embeddings: EmbeddingWeights, input_ids: np.ndarray, token_type_ids: np.ndarray, eps: float
) -> np.ndarray:
    """Word + position + token-type embeddings, layer-normalised.

    Lesson 13 · 2. Embeddings: the word, its position, its segment.

    Parameters
    ----------
    embeddings : EmbeddingWeights
    input_ids, token_type_ids : (..., n) int
    eps : float

    Returns
    -------
    (..., n, d_model) float32
    """
    n = input_ids.shape[-1]
    summed = embeddings.word[input_ids] + embeddings.position[:n] + embeddings.token_type[token_type_ids]
    return _layer_norm(summed, embeddings.gamma, embeddings.beta, eps)


def self_attention(
    x: np.ndarray, layer: LayerWeights, n_heads: int, key_padding_mask: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """One layer's multi-head self-attention with its biases: :func:`attnlib.multihead.heads_attention`.

    Lesson 13 · 3. One layer, followed by hand.

    That is :func:`attnlib.multihead.multi_head_attention` without its argument checks: the
    weights were checked once, by :func:`weights_from_tensors`, and ``x`` is computed here.

    Parameters
    ----------
    x : (..., n, d_model)
    layer : LayerWeights
    n_heads : int
    key_padding_mask : (..., n) bool, optional
        ``True`` = a real token, ``False`` = padding.

    Returns
    -------
    output : (..., n, d_model)
        ``concat(heads) W_o + b_o``.
    weights : (..., n_heads, n, n)
    """
    ones = np.ones((*x.shape[:-1], 1), dtype=x.dtype)
    x1 = np.concatenate([x, ones], axis=-1)  # (..., n, d_model + 1): the last column picks the biases
    W_q1, W_k1, W_v1 = layer.with_biases
    W = {"W_q": W_q1, "W_k": W_k1, "W_v": W_v1, "W_o": layer.W_o}  # shapes checked by weights_from_tensors
    keys = None if key_padding_mask is None else key_padding_mask[..., None, None, :]  # (..., 1, 1, n)
    output, weights = heads_attention(MultiHeadArguments(n_heads, x1, x1, W, keys))
    return output + layer.b_o, weights


def encoder_layer(
    x: np.ndarray, layer: LayerWeights, config: BertConfig, key_padding_mask: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """One encoder layer: attention, add and norm, feed-forward, add and norm.

    Lesson 13 · 3. One layer, followed by hand.

    Parameters
    ----------
    x : (..., n, d_model)
    layer : LayerWeights
    config : BertConfig
    key_padding_mask : (..., n) bool, optional

    Returns
    -------
    hidden : (..., n, d_model)
    weights : (..., n_heads, n, n)
    """
    attended, weights = self_attention(x, layer, config.n_heads, key_padding_mask)
    x = _layer_norm(x + attended, layer.gamma_1, layer.beta_1, config.layer_norm_eps)
    fed = _gelu(x @ layer.W_1 + layer.b_1) @ layer.W_2 + layer.b_2
    return _layer_norm(x + fed, layer.gamma_2, layer.beta_2, config.layer_norm_eps), weights


def encode(
    weights: BertWeights,
    config: BertConfig,
    input_ids: npt.ArrayLike,
    *,
    attention_mask: npt.ArrayLike | None = None,
    token_type_ids: npt.ArrayLike | None = None,
) -> EncoderOutput:
    """Run the encoder on token ids: every layer's hidden states and every head's weights.

    Lesson 13 · 3. One layer, followed by hand.

    Parameters
    ----------
    weights : BertWeights
    config : BertConfig
    input_ids : (..., n) int
        Token ids, from 0 to ``vocab_size − 1``; at most ``max_positions`` tokens.
    attention_mask : (..., n) bool or 0/1, optional
        ``True``/1 = a real token, ``False``/0 = padding (the keys no query may attend to).
        Default: every token is real.
    token_type_ids : (..., n) int, optional
        Segment of each token (0 or 1 for BERT); default 0.

    Returns
    -------
    EncoderOutput

    Raises
    ------
    TypeError
        ``weights`` or ``config`` is not what :func:`weights_from_tensors` and
        :class:`BertConfig` make, or the ids are not integers.
    ValueError
        Ids out of range, too many tokens, shapes that differ, a mask that hides every token.
    """
    for name, value, kind in (("weights", weights, BertWeights), ("config", config, BertConfig)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    ids = _as_ids(input_ids, "input_ids", config.vocab_size)
    n = ids.shape[-1]
    if n > config.max_positions:
        raise ValueError(
            f"input_ids has {n} tokens; the model has positions for at most {config.max_positions}"
        )
    types = (
        np.zeros_like(ids)
        if token_type_ids is None
        else _as_ids(token_type_ids, "token_type_ids", config.type_vocab_size)
    )
    if types.shape != ids.shape:
        raise ValueError(f"token_type_ids has shape {types.shape}, input_ids has shape {ids.shape}")
    padding = None if attention_mask is None else _as_padding(attention_mask, ids.shape)

    x = embed(weights.embeddings, ids, types, config.layer_norm_eps)
    hidden, attentions = [x], []
    for layer in weights.layers:
        x, w = encoder_layer(x, layer, config, padding)
        hidden.append(x)
        attentions.append(w)
    return EncoderOutput(hidden_states=np.stack(hidden), attentions=np.stack(attentions))


def _as_ids(values: npt.ArrayLike, name: str, size: int) -> np.ndarray:
    ids = np.asarray(values)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer ids, got dtype {ids.dtype}")
    if ids.ndim < 1 or ids.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., n) with at least one token, got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= size:
        raise ValueError(f"{name} must lie in 0 … {size - 1}, got values from {ids.min()} to {ids.max()}")
    return ids.astype(np.int64)


def _as_padding(mask: npt.ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(mask)
    if arr.shape != shape:
        raise ValueError(f"attention_mask has shape {arr.shape}, input_ids has shape {shape}")
    if arr.dtype != bool:
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            raise ValueError("attention_mask must be boolean or 0/1 (1 = a real token, 0 = padding)")
        arr = arr.astype(bool)
    if not arr.any(axis=-1).all():
        raise ValueError("attention_mask hides every token of a sequence: each needs at least one real token")
    return arr


def float32_tolerance(config: BertConfig, n_tokens: int, largest: float = 1.0) -> float:
    """How far two float32 runs of a BERT encoder may differ, on an output whose largest entry is ``largest``.

    Lesson 13 · 3 (attnlib against transformers) and · 6 (a padded batch against each sentence
    alone): the bound those comparisons use, not a tolerance by habit.

    Two runs that sum in different orders (another CPU's kernels, or attnlib against transformers)
    round differently. A sum of m float32 terms whose rounding errors are independent, of mean zero,
    is within about √m·u of the exact sum, relative to the size of its terms, u = 2⁻²⁴ (Higham and
    Mary, SIAM J. Sci. Comput. 41, 2019: the worst case m·u is far too loose for m in the
    thousands). On one layer's path a value goes through sums of ``d_model`` terms seven times (a
    query, key or value projection, the output projection, the feed-forward's first product, and
    each layer norm's mean and variance), of ``d_k`` (a score), ``n_tokens`` (weights times values)
    and ``d_ff`` (the feed-forward's second product). The bound adds all of these over every layer,
    as if no error ever cancelled another or shrank, and doubles it: each run is within it of the
    exact result.

    Parameters
    ----------
    config : attnlib.model.BertConfig
    n_tokens : int
    largest : float
        The largest entry of the output compared (1, the default, for attention weights).

    Returns
    -------
    float
        For all-MiniLM-L6-v2 on a dozen tokens, 1.3e-4 · ``largest``: 1,100 float32 epsilons.
    """
    sums = [config.d_model] * 7 + [config.d_k, n_tokens, config.d_ff]
    return 2 * config.n_layers * sum(math.sqrt(m) for m in sums) * 2**-24 * largest
