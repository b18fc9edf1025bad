"""What a head's weights look like, in numbers: how much weight goes to the previous token, the
next one, the token itself, the first ([CLS]) and last ([SEP]) token, and how broad the rows are.

These describe a pattern of weights on given sentences; they are not an explanation of what the
head computes (the values it mixes, and what later layers do with them, are not looked at).

A head whose every token looks at the one before it scores 1 on ``previous``:

>>> import numpy as np
>>> previous = np.eye(4, k=-1)
>>> previous[0, 0] = 1.0                                           # the first token has no previous one
>>> float(head_patterns(previous[None]).previous[0]), float(head_patterns(previous[None]).itself[0])
(1.0, 0.25)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.core import entropy
from attnlib.validation import as_real_array

__all__ = ["PATTERNS", "HeadPatterns", "head_patterns"]

#: The patterns measured, in the order of :class:`HeadPatterns`' fields.
PATTERNS = ("previous", "next", "itself", "first", "last", "broad")


@dataclass(frozen=True)
class HeadPatterns:
    """Each pattern's score for every head, each an array of shape (..., n_heads).

    Lesson 13 · 5. A few heads, looked at closely.

    Attributes
    ----------
    previous : mean weight from token i on token i − 1 (over i = 1 … n − 1)
    next : mean weight from token i on token i + 1 (over i = 0 … n − 2)
    itself : mean weight from token i on itself
    first : mean weight on the first token ([CLS])
    last : mean weight on the last token ([SEP])
    broad : mean entropy of the rows divided by log n: 1 = uniform rows, 0 = one key each
    """

    previous: np.ndarray
    next: np.ndarray
    itself: np.ndarray
    first: np.ndarray
    last: np.ndarray
    broad: np.ndarray

    def strongest(self, pattern: str) -> tuple[tuple[int, ...], float]:
        """The head scoring highest on ``pattern`` (its index, e.g. ``(layer, head)``) and its score."""
        if pattern not in PATTERNS:
            raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
        scores = getattr(self, pattern)
        index = np.unravel_index(int(np.argmax(scores)), scores.shape)
        return tuple(int(i) for i in index), float(scores[index])


def head_patterns(attentions: npt.ArrayLike) -> HeadPatterns:
    """Score every head's weights on one sentence (no padding) for each of :data:`PATTERNS`.

    Lesson 13 · 5. A few heads, looked at closely.

    Parameters
    ----------
    attentions : (..., n, n)
        Attention weights, rows (queries) summing to 1, at least 3 tokens; e.g. a
        :class:`attnlib.model.Run`'s ``attentions`` of shape (n_layers, n_heads, n, n).

    Returns
    -------
    HeadPatterns
        Arrays of shape ``attentions.shape[:-2]``.
    """
    w = as_real_array(attentions, "attentions", dtype=np.float64)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 3:
        raise ValueError(f"attentions must have shape (..., n, n) with n ≥ 3, got {w.shape}")
    if not np.allclose(w.sum(axis=-1), 1, atol=1e-4) or (w < 0).any():
        raise ValueError("attentions must be attention weights, at least 0 with rows that sum to 1")
    n = w.shape[-1]
    return HeadPatterns(
        previous=np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=-1),
        next=np.diagonal(w, offset=1, axis1=-2, axis2=-1).mean(axis=-1),
        itself=np.diagonal(w, axis1=-2, axis2=-1).mean(axis=-1),
        first=w[..., :, 0].mean(axis=-1),
        last=w[..., :, -1].mean(axis=-1),
        broad=entropy(w).mean(axis=-1) / np.log(n),
    )
