"""One layer's attention over its keys: which keys each query sees (causal, or a window with
sinks: lesson 15 · 4), where RoPE places the queries and keys, and the weights."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnlib.core import AttentionSteps, attention_steps, causal_mask, default_scale, softmax
from attnlib.decoder.checks import as_window
from attnlib.positions import rope

__all__ = ["Rotation", "attend", "rope_places", "visible_keys"]


def visible_keys(
    query_positions: npt.ArrayLike, key_positions: npt.ArrayLike, *, window: int | None = None, sinks: int = 0
) -> np.ndarray:
    """Which keys each query sees, by their positions in the sequence: ``(n_q, n_k)`` bool.

    Lesson 15 · 4. Past the trained context: windows and sinks.

    The rows and columns of :func:`attnlib.core.causal_mask` with that ``window`` and those
    ``sinks`` (query ``i`` sees key ``j ≤ i`` when ``j > i − window`` or ``j < sinks``): the mask
    of a pass over the whole sequence, or of new tokens over what a rolling cache still holds.

    Examples
    --------
    The token at position 6 with a window of 3 and one sink:

    >>> visible_keys([6], range(7), window=3, sinks=1).astype(int)
    array([[1, 0, 0, 0, 1, 1, 1]])
    """
    w, s = as_window(window, sinks)
    q = np.asarray(query_positions, dtype=np.int64)
    k = np.asarray(key_positions, dtype=np.int64)
    size = int(max(q.max(initial=-1), k.max(initial=-1))) + 1
    return causal_mask(size, window=w, sinks=s)[np.ix_(q, k)]


@dataclass(frozen=True)
class Rotation:
    """The RoPE angles' positions of one forward pass (``positions="rope"``)."""

    queries: np.ndarray  # (n,)
    keys: np.ndarray  # (n_k,)
    sink_queries: np.ndarray | None  # (n,): the queries' positions against the sinks, if not ``queries``
    sinks: int


def rope_places(
    query_positions: np.ndarray, key_positions: np.ndarray, window: int | None, sinks: int, cached: bool
) -> Rotation:
    """Where RoPE puts each query and key: StreamingLLM's positions within the cache.

    Lesson 15 · 4 (with sinks, RoPE counts distances within the rolling cache).

    With a rolling cache a token's place is its index in the cache: the sinks keep ``0 … sinks−1``
    and the query sits at ``min(i, sinks + window − 1)``; a key among the latest ``window`` is
    ``i − j`` before the query, as in the whole sequence. Over a whole sequence (no cache) the
    same distances are: ``i − j`` to the latest keys, ``min(i, sinks + window − 1) − j`` to the
    sinks, so the queries are rotated a second time for the sinks' columns.
    """
    if cached:  # one token at a time with a window (generate sees to it), every token without one
        places = np.arange(len(key_positions))
        return Rotation(places[len(places) - len(query_positions) :], places, None, 0)
    if window is None or not sinks or query_positions[-1] < sinks + window - 1:
        return Rotation(query_positions, key_positions, None, 0)
    return Rotation(query_positions, key_positions, np.minimum(query_positions, sinks + window - 1), sinks)


def attend(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray, rotation: Rotation | None
) -> tuple[AttentionSteps, np.ndarray, np.ndarray]:
    """The attention's steps, and the queries and keys as the scores read them (rotated by RoPE).

    Lesson 14's attention of one layer; with RoPE and sinks, lesson 15 · 4's.
    """
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
