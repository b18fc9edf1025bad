"""The checks at the door: what a learner passes (parameters, token ids, ablated heads, a window
and sinks) as the arrays the decoder computes with, or an error that names what is wrong."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from attnlib.decoder.config import DecoderConfig, as_config, parameter_shapes
from attnlib.validation import as_positive_int, as_real_array, is_number

__all__ = ["as_ablations", "as_window", "check_parameters", "check_tokens"]


def check_parameters(config: DecoderConfig, params: Mapping[str, npt.ArrayLike]) -> dict[str, np.ndarray]:
    """``params`` as float64 arrays of the shapes ``config`` needs, or an error naming what is wrong.

    Lessons 14 and 15: every decoder function they call checks its parameters with it.

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

    Lessons 14 and 15: every decoder function they call checks its tokens with it.

    A single sequence ``(n,)`` becomes a batch of one, ``(1, n)``. With ``any_length`` and
    ``positions="rope"`` (no table of positions to run out of), ``n`` may exceed ``n_ctx``.
    """
    c = as_config(config)
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


def as_ablations(config: DecoderConfig, ablate: Iterable[tuple[int, int]]) -> frozenset[tuple[int, int]]:
    """``ablate``'s (layer, head) pairs, each naming a head of the model.

    Lesson 14 · 4. Ablation: are they the mechanism?
    """
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
    w = None if window is None else as_positive_int(window, "window")
    s = as_positive_int(sinks, "sinks", minimum=0)
    if s and w is None:
        raise ValueError(f"sinks={s} needs a window: without one every token is seen already (pass window=…)")
    return w, s
