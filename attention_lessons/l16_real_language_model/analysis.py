"""Lesson 16's measurements on the real model: the loss of each prediction, the weight on the first
token, the heads an experiment ranks, and the parts a learner has written.

- :func:`next_token_losses`: each position's loss (nats), from the model's logits;
- :func:`smallest_margin`, :func:`greedy_leads`: how far the chosen tokens lead the runner-up
  (printed text is stable when that is far above float32's rounding), the smallest or at each step;
- :func:`first_token_weights`: each head's mean weight on position 0;
- :func:`top_heads`, :func:`random_heads`: the heads an ablation removes;
- :func:`stored_rows`, :func:`storage_types`: a tensor's bytes as the GGUF file stores them, and
  how many tensors each storage type holds;
- :func:`learners_parts`: :class:`attnlib.model.llama.Parts` made of the learner's functions, with
  attnlib's standing in for each one not written yet.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
from gguf import GGUFReader  # requirements-model.txt, as attnlib.model.llama's loader

from attnlib.model import llama
from attnlib.validation import as_seed, is_number

__all__ = [
    "first_token_weights",
    "greedy_leads",
    "learners_parts",
    "next_token_losses",
    "random_heads",
    "smallest_margin",
    "storage_types",
    "stored_rows",
    "top_heads",
]

#: Rows of logits turned into log-probabilities at once (float64): a few MiB whatever the text.
_ROWS = 64


def next_token_losses(logits: npt.ArrayLike, ids: npt.ArrayLike) -> np.ndarray:
    """The loss of each prediction: ``−log p(ids[i + 1] | ids[: i + 1])``, in nats.

    Parameters
    ----------
    logits : (n, vocab)
        :func:`attnlib.model.llama.forward`'s logits of ``ids``.
    ids : (n,) int

    Returns
    -------
    (n − 1,) float64
        Position ``i`` predicts token ``i + 1``; computed in float64, ``_ROWS`` rows at a time.
    """
    z = np.asarray(logits)
    t = np.asarray(ids)
    if z.ndim != 2 or t.shape != z.shape[:1] or t.dtype.kind not in "iu" or len(t) < 2:
        raise ValueError(
            f"logits must be (n, vocab) and ids (n,) whole numbers, n ≥ 2; got {z.shape}, {t.shape}"
        )
    losses = np.empty(len(t) - 1)
    for start in range(0, len(t) - 1, _ROWS):
        rows = z[start : min(start + _ROWS, len(t) - 1)].astype(np.float64)
        top = rows.max(axis=1)
        log_total = np.log(np.exp(rows - top[:, None]).sum(axis=1)) + top
        chosen = rows[np.arange(len(rows)), t[start + 1 : start + 1 + len(rows)]]
        losses[start : start + len(rows)] = log_total - chosen
    return losses


def smallest_margin(logits: npt.ArrayLike) -> float:
    """The smallest gap between the largest and the second-largest logit over the rows of ``logits``.

    A greedy choice flips on another CPU only where this gap is within float32's rounding (about
    1e-5 of the logits here); the lesson prints its greedy text where the gap is far larger.
    """
    return float(greedy_leads(logits).min())


def greedy_leads(logits: npt.ArrayLike) -> np.ndarray:
    """How far the largest logit of each row leads the second-largest.

    Parameters
    ----------
    logits : (steps, vocab)
        :func:`attnlib.model.llama.generate_with_logits`' logits: row ``k``, the scores step ``k``'s
        token was chosen from.

    Returns
    -------
    (steps,) float64
        Greedy's choice at step ``k`` is the same on another CPU while ``leads[k]`` is above the
        float32 bound (:func:`attnlib.model.llama.float32_tolerance`) and the steps before it were too.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or z.shape[0] < 1 or z.shape[1] < 2:
        raise ValueError(f"logits must be (rows, vocab) with rows ≥ 1 and vocab ≥ 2, got shape {z.shape}")
    two = np.partition(z, -2, axis=1)[:, -2:]
    return two[:, 1] - two[:, 0]


def first_token_weights(weights: Sequence[npt.ArrayLike]) -> np.ndarray:
    """Each head's mean weight on position 0, over the queries at positions ``1 … n − 1``.

    Parameters
    ----------
    weights : list of n_layers arrays (n_heads, n, n)
        :func:`attnlib.model.llama.forward_with_weights`' weights.

    Returns
    -------
    (n_layers, n_heads)
    """
    w = [np.asarray(layer) for layer in weights]
    if not w or any(
        layer.ndim != 3 or layer.shape[-1] != layer.shape[-2] or layer.shape[-1] < 2 for layer in w
    ):
        raise ValueError("weights must be a list of (n_heads, n, n) arrays with n ≥ 2, one per layer")
    return np.stack([layer[:, 1:, 0].mean(axis=-1) for layer in w])


def top_heads(scores: npt.ArrayLike, k: int) -> list[tuple[int, int]]:
    """The ``k`` (layer, head) pairs of the largest ``scores`` (n_layers, n_heads), largest first."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or not np.isfinite(s).all():
        raise ValueError(f"scores must be finite numbers (n_layers, n_heads), got shape {s.shape}")
    _check_count(k, s.size)
    flat = np.argsort(-s, axis=None, kind="stable")[:k]
    return [(int(layer), int(head)) for layer, head in zip(*np.unravel_index(flat, s.shape), strict=True)]


def random_heads(
    shape: tuple[int, int], k: int, *, avoid: Sequence[tuple[int, int]] = (), seed: int = 0
) -> list[tuple[int, int]]:
    """``k`` distinct (layer, head) pairs drawn at random (seeded), none of ``avoid``, sorted."""
    if not (
        isinstance(shape, tuple)
        and len(shape) == 2
        and all(is_number(n, whole=True) and n > 0 for n in shape)
    ):
        raise ValueError(f"shape must be (n_layers, n_heads), two whole numbers above 0, got {shape!r:.60}")
    seed = as_seed(seed)
    pool = [
        (layer, head)
        for layer in range(shape[0])
        for head in range(shape[1])
        if (layer, head) not in set(avoid)
    ]
    _check_count(k, len(pool))
    chosen = np.random.default_rng(seed).choice(len(pool), size=k, replace=False)
    return sorted(pool[i] for i in chosen)


def _check_count(k: object, available: int) -> None:
    if not is_number(k, whole=True) or not 1 <= k <= available:
        raise ValueError(f"k must be a whole number from 1 to the {available} heads there are, got {k!r:.60}")


def learners_parts(**functions: Callable | None) -> tuple[llama.Parts, list[str]]:
    """:class:`attnlib.model.llama.Parts` from the learner's functions; attnlib's for those still ``None``.

    Parameters
    ----------
    **functions : callable or None
        ``rms_norm=my_rms_norm, swiglu=…, rotate=…, attention=…, block=…``
        (the lesson passes those that passed their check: the checks keep them, ``keep=your_parts``).

    Returns
    -------
    parts : Parts
    whose : list of str
        One line per part: ``"rms_norm: yours"``, or attnlib's with why.
    """
    fields = ("rms_norm", "swiglu", "rotate", "attention", "block")
    unknown = sorted(set(functions) - set(fields))
    if unknown:
        raise TypeError(f"learners_parts takes {fields}, got {unknown}")
    chosen, whose = {}, []
    for name in fields:
        fn = functions.get(name)
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} must be a function or None, got {type(fn).__name__}")
        if fn is not None:
            chosen[name] = fn
        whose.append(
            f"{name}: " + ("yours" if fn is not None else "attnlib's (yours has not passed its check)")
        )
    return llama.Parts(**chosen), whose


def _reader(path: str | os.PathLike[str]) -> GGUFReader:
    return GGUFReader(path)  # a memory map: nothing is read until a tensor is


def stored_rows(path: str | os.PathLike[str], name: str) -> np.ndarray:
    """The bytes of tensor ``name`` as the GGUF file at ``path`` stores them, one row per output.

    Returns
    -------
    (rows, bytes per row) uint8
        For a Q4_1 tensor, 20 bytes per block of 32 numbers
        (:func:`attnlib.model.gguf.dequantize_q4_1` reads them).
    """
    for tensor in _reader(path).tensors:
        if tensor.name == name:
            return np.asarray(tensor.data).view(np.uint8)
    raise KeyError(f"{name!r} is not a tensor of {os.fspath(path)}")


def storage_types(path: str | os.PathLike[str]) -> dict[str, int]:
    """How many tensors of the GGUF file at ``path`` are stored in each type (``"Q4_1"``, ``"F32"``, …)."""
    return dict(Counter(tensor.tensor_type.name for tensor in _reader(path).tensors).most_common())
