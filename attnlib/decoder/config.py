"""What a decoder is, and what its functions accept.

Its shape (:class:`DecoderConfig`), its parameters' names, shapes and random start (lesson 14's
formula names them); then the checks at the door, which turn what a learner passes (parameters,
token ids, ablated heads, a window and sinks, a dropout rate) into what the decoder computes
with, or raise an error that names what is wrong.

Lesson 14's model, a two-layer attention-only decoder, and the shapes of its parameters:

>>> config = DecoderConfig(vocab_size=10, n_ctx=8, d_model=16, n_heads=2, n_layers=2)
>>> shapes = parameter_shapes(config)
>>> shapes["embed"], shapes["layer0.W_q"], shapes["unembed"], len(shapes)
((10, 16), (16, 16), (16, 10), 11)
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from attnlib.counting import DecoderShape
from attnlib.validation import (
    LARGEST,
    as_flag,
    as_positive_int,
    as_real,
    as_real_array,
    as_seed,
    as_whole_array,
    is_number,
)

__all__ = [
    "POSITIONS",
    "DecoderConfig",
    "as_ablations",
    "as_config",
    "as_dropout",
    "as_mapping",
    "as_mask_generator",
    "as_window",
    "check_parameters",
    "check_tokens",
    "init_parameters",
    "parameter_shapes",
    "read_npz",
]

T = TypeVar("T")


#: The ways a :class:`DecoderConfig` can give the model positions.
POSITIONS = ("residual", "attention", "rope")


@dataclass(frozen=True)
class DecoderConfig:
    """The shape of a decoder.

    Lesson 14 prints its model's config (attention-only, ``positions="attention"``); lesson 15's
    model has LayerNorm, an MLP and RoPE.

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
    """The name and shape of every parameter of ``config``, in the order of the forward pass.

    Lesson 14: the ``E``, ``P``, ``W``'s and ``U`` of its formula.
    """
    c = as_config(config)
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


def init_parameters(
    config: DecoderConfig, seed: int = 0, dtype: npt.DTypeLike = np.float64
) -> dict[str, np.ndarray]:
    """Random starting parameters, named as :func:`parameter_shapes` lists them.

    Lesson 14 · 1 measures a model with fresh parameters; lesson 18 trains one in float32.

    The embeddings have standard normal entries (a residual stream of entries about 1); every
    matrix has normal entries of variance ``1/fan_in`` (LeCun's initialisation, as lesson 11);
    biases start at 0 and LayerNorm gains at 1. ``dtype`` is ``np.float64`` or ``np.float32``:
    float32 gives the same draws, rounded to float32, and the decoder then computes in float32
    (:func:`check_parameters`).
    """
    kind = _float_dtype(dtype)
    rng = np.random.default_rng(as_seed(seed))
    params = {}
    for name, shape in parameter_shapes(config).items():
        try:
            if name.endswith(".gain"):
                params[name] = np.ones(shape, dtype=kind)
            elif name.endswith(".bias") or name.split(".")[-1].startswith("b_"):
                params[name] = np.zeros(shape, dtype=kind)
            elif name in ("embed", "pos_embed"):
                params[name] = rng.normal(size=shape).astype(kind, copy=False)
            else:
                params[name] = (rng.normal(size=shape) / math.sqrt(shape[0])).astype(kind, copy=False)
        except (MemoryError, ValueError) as exc:  # numpy: "Unable to allocate …", "array is too big"
            size = math.prod(shape) * kind.itemsize
            raise ValueError(
                f"the config's parameter {name} of shape {shape} would take {size:,} bytes in {kind}, "
                f"more than this machine can allocate ({type(exc).__name__}: {exc}); make the config smaller"
            ) from None
    return params


def _float_dtype(dtype: object) -> np.dtype:
    """``dtype`` as ``np.dtype(np.float32)`` or ``np.dtype(np.float64)``, or a ValueError naming it."""
    try:
        kind = np.dtype(dtype)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        kind = None
    if dtype is None or kind not in (np.float32, np.float64):
        raise ValueError(f"dtype must be np.float32 or np.float64, got {dtype!r}")
    return kind


def as_config(config: object) -> DecoderConfig:
    """``config`` itself, or a TypeError if it is not a :class:`DecoderConfig`.

    Lesson 14 · 1. The task: sequences that repeat.

    Lessons 14 and 15: every decoder function they call checks its config with it.
    """
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config must be an attnlib.decoder.DecoderConfig, got {type(config).__name__}")
    return config


def check_parameters(config: DecoderConfig, params: Mapping[str, npt.ArrayLike]) -> dict[str, np.ndarray]:
    """``params`` as arrays of the shapes ``config`` needs, or an error naming what is wrong.

    Lesson 14 · 1. The task: sequences that repeat.

    Lessons 14 and 15: every decoder function they call checks its parameters with it.

    The arrays are float32 when every parameter is float32 (or float16), so that lesson 18's model
    computes in float32 from the embeddings to the last gradient; otherwise all are float64 (float64
    parameters, integers, lists, or a mix of float32 and float64).

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
        array = as_real_array(params[name], f"params[{name!r}]")  # float32 or float64
        if array.shape != shape:
            raise ValueError(
                f"params[{name!r}] must have shape {shape} for this config, got shape {array.shape}"
            )
        checked[name] = array
    dtype = np.float32 if all(array.dtype == np.float32 for array in checked.values()) else np.float64
    return {name: array.astype(dtype, copy=False) for name, array in checked.items()}


def check_tokens(
    config: DecoderConfig, tokens: npt.ArrayLike, name: str = "tokens", *, any_length: bool = False
) -> np.ndarray:
    """``tokens`` as an integer array (B, n), 1 ≤ n ≤ n_ctx, of ids ``0 … vocab_size − 1``.

    Lesson 14 · 1. The task: sequences that repeat.

    Lessons 14 and 15: every decoder function they call checks its tokens with it.

    A single sequence ``(n,)`` becomes a batch of one, ``(1, n)``. With ``any_length`` and
    ``positions="rope"`` (no table of positions to run out of), ``n`` may exceed ``n_ctx``.
    """
    c = as_config(config)
    t = as_whole_array(tokens, name)  # None, ragged rows, tensors with gradients: refused by name
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


def as_ablations(config: DecoderConfig, ablate: Iterable[tuple[int, int]]) -> frozenset[tuple[int, int]]:
    """``ablate``'s (layer, head) pairs, each naming a head of the model.

    Lesson 14 · 4. Ablation: are they the mechanism?
    """
    if isinstance(ablate, str | bytes) or not isinstance(ablate, Iterable):
        raise TypeError(f"ablate must be a list of (layer, head) pairs of integers, got {ablate!r:.80}")
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


def as_window(window: object, sinks: object) -> tuple[int | None, int]:
    """``window`` and ``sinks`` checked: a positive int or None, and a count ≥ 0 that needs a window.

    Lesson 15 · 4. Past the trained context: windows and sinks.
    """
    # a window or a count of sinks beyond any sequence NumPy can index hides nothing more: LARGEST
    w = None if window is None else min(as_positive_int(window, "window"), LARGEST)
    s = min(as_positive_int(sinks, "sinks", minimum=0), LARGEST)
    if s and w is None:
        raise ValueError(f"sinks={s} needs a window: without one every token is seen already (pass window=…)")
    return w, s


def as_dropout(rate: object, name: str = "dropout") -> float:
    """``rate`` as a float, the chance that dropout zeroes an entry: ``0 ≤ rate < 1``.

    Lesson 18 · 7. Overfitting (dropout).

    Raises
    ------
    TypeError
        ``rate`` is not a real number.
    ValueError
        ``rate`` is NaN, negative, or 1 and above (every entry dropped).
    """
    r = as_real(rate, name, example="0.1")
    if not 0 <= r < 1:
        raise ValueError(f"{name} is the chance that an entry is dropped: at least 0 and below 1, got {r}")
    return r


def as_mask_generator(rng: object, rate: float, name: str = "dropout") -> np.random.Generator | None:
    """``rng``, the generator that draws dropout's masks: needed when ``rate`` (named ``name``) is above 0.

    Lesson 18 · 7. Overfitting (dropout).
    """
    if rate and rng is None:
        raise ValueError(f"{name}={rate} draws its masks with rng: pass rng=np.random.default_rng(seed)")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r:.80}"
        )
    return rng


def as_mapping(arrays: object, name: str = "arrays") -> Mapping[str, np.ndarray]:
    """``arrays`` if it maps names to arrays (an ``.npz`` file's contents, a dict), else ``TypeError``.

    Lesson 14 · 2 and lesson 15 · 1 read their committed runs (``.npz`` files) with it.
    """
    if not isinstance(arrays, Mapping):
        raise TypeError(
            f"{name} must map names to arrays (a dict, or numpy.load of an .npz), got {arrays!r:.80}"
        )
    return arrays


def read_npz(path: str, read: Callable[[Mapping[str, np.ndarray]], T], what: str) -> T:
    """``read`` of the arrays in the ``.npz`` file at ``path``; a file that is not ``what`` is a ValueError.

    Lesson 14 · 2 and lesson 15 · 1 read a run of their training scripts with it.

    A file cut short, not a zip, or without an array ``read`` needs names the file and the problem
    instead of zipfile's or numpy's traceback.
    """
    try:
        with open(path, "rb") as file, np.load(file) as arrays:  # closed even when np.load fails
            return read(arrays)
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        problem = f"no array {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise ValueError(f"{path} is not {what} ({problem})") from exc
