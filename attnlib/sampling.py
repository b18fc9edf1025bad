"""How the next token is chosen from a model's scores: the likeliest, or drawn with a temperature,
top-k and top-p.

Lesson 15 · 1 (its decoder writes text this way, :func:`attnlib.decoder.generate`) and lesson 16 · 4.
Sampling (SmolLM2, :func:`attnlib.model.llama.generate`): one sampler for both. A draw in NumPy,
with a temperature of 0.5, gives the same token:

>>> import numpy as np
>>> logits = np.array([2.0, 1.0, 0.5, -1.0])
>>> p = np.exp((logits - logits.max()) / 0.5)
>>> p = p / p.sum()                                       # softmax(logits / T)
>>> u = np.random.default_rng(3).random()                 # uniform in [0, 1)
>>> token = int(np.searchsorted(np.cumsum(p), u, side="right"))  # the first whose running sum passes u
>>> int(choose_tokens(logits[None], 0.5, np.random.default_rng(3))[0]) == token
True

:func:`next_token_probabilities` checks what a learner passes it; the generation loops check their
settings once and call :func:`choose_tokens`, which trusts them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_positive_int, as_real, as_real_array

__all__ = ["choose_tokens", "next_token_probabilities", "sampling_probabilities", "sampling_settings"]


def next_token_probabilities(
    logits: npt.ArrayLike, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> np.ndarray:
    """The distribution a token is drawn from: temperature, then top-k, then top-p (nucleus).

    Lesson 16 · 4. Sampling. The filters apply in turn, as transformers' logits processors and
    llama.cpp's sampler chain apply them: top-p keeps the nucleus of what top-k kept, renormalised.

    Parameters
    ----------
    logits : (vocab,)
    temperature : float
        ``0``: greedy (all the probability on the most likely token, the first if tied); above 0:
        ``softmax(logits / temperature)``, computed as ``softmax((logits − max) / temperature)``,
        so that a temperature as small as 1e-320 is the greedy choice (ties shared evenly) and
        never overflows.
    top_k : int or None
        Keep only the ``top_k`` most likely tokens (1 … vocab).
    top_p : float or None
        Keep the fewest most likely tokens whose probabilities sum to at least ``top_p`` (0 < top_p ≤ 1).

    Returns
    -------
    (vocab,) float64, summing to 1
    """
    z = as_real_array(logits, "logits").astype(np.float64, copy=False)
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"logits must be one finite row (vocab,), got shape {z.shape}")
    temperature, top_k, top_p = sampling_settings(temperature, top_k, top_p, z.size)
    if temperature == 0:
        probs = np.zeros_like(z)
        probs[np.argmax(z)] = 1.0
        return probs
    return sampling_probabilities(z, temperature, top_k, top_p)


def sampling_settings(
    temperature: object, top_k: object, top_p: object, vocab: int
) -> tuple[float, int | None, float | None]:
    """``temperature``, ``top_k`` and ``top_p`` checked: a number ≥ 0, None or 1 … vocab, None or in (0, 1].

    Lesson 16 · 4. Sampling: what :func:`next_token_probabilities` and the generation loops accept.
    """
    t = as_real(temperature, "temperature", example="0.0 (greedy) or 1.0")
    if t < 0:
        raise ValueError(f"temperature must be 0 (greedy) or a finite positive number, got {t}")
    k = None if top_k is None else as_positive_int(top_k, "top_k")
    if k is not None and k > vocab:
        raise ValueError(f"top_k must be from 1 to the vocabulary's {vocab:,}, got {k}")
    p = None if top_p is None else as_real(top_p, "top_p", example="0.9")
    if p is not None and not 0 < p <= 1:
        raise ValueError(f"top_p must be in (0, 1] (a share of the probability), got {p}")
    return t, k, p


def sampling_probabilities(
    z: np.ndarray, temperature: float, top_k: int | None = None, top_p: float | None = None
) -> np.ndarray:
    """:func:`next_token_probabilities` of checked settings, ``temperature > 0``; it trusts them.

    Lesson 16 · 4. Sampling. ``z`` is one finite float64 row of logits, ``(vocab,)``.
    """
    with np.errstate(over="ignore"):  # a difference over the temperature beyond the float range: -inf
        e = np.exp((z - z.max()) / temperature)
    probs = e / e.sum()
    if top_k is None and top_p is None:
        return probs
    order = np.argsort(-probs, kind="stable")
    keep = np.ones(z.size, dtype=bool)
    if top_k is not None:
        keep[order[top_k:]] = False
        probs = np.where(keep, probs, 0.0) / probs[order[:top_k]].sum()
    if top_p is not None:
        ranked = probs[order]
        keep[order[(np.cumsum(ranked) - ranked) >= top_p]] = False  # the mass before a token reaches p
    probs = np.where(keep, probs, 0.0)
    return probs / probs.sum()


def choose_tokens(
    logits: np.ndarray,
    temperature: float,
    rng: np.random.Generator,
    top_k: int | None = None,
    top_p: float | None = None,
) -> np.ndarray:
    """One token id per row of ``logits (B, vocab)``: the likeliest, or a draw; it trusts its arguments.

    Lesson 15 · 1 and lesson 16 · 4. ``temperature == 0`` takes the largest logit (the first if
    tied) and draws nothing; above 0, each row draws one uniform ``u`` from ``rng``, in turn, and
    takes the first token whose running sum of :func:`sampling_probabilities` passes it.

    Returns
    -------
    (B,) int64
    """
    if temperature == 0:
        return logits.argmax(axis=-1)
    tokens = np.empty(len(logits), dtype=np.int64)
    for b, row in enumerate(logits):
        probs = sampling_probabilities(row.astype(np.float64, copy=False), temperature, top_k, top_p)
        tokens[b] = min(np.searchsorted(np.cumsum(probs), rng.random(), side="right"), len(probs) - 1)
    return tokens
