"""The KV cache: each layer's keys and values so far, so a new token computes only its own.

Lesson 15 · 1. One token at a time (the work it saves) and · 2. The cache's memory (what it
holds). Generating with a cache, for each new token, in each layer::

    q, k, v = x W_q, x W_k, x W_v           # the new token's row x only: one query, key, value
    K, V = cache.append(layer, k, v)         # its key and value join every earlier token's
    z = softmax(q Kᵀ / √d_head) V            # its query attends over the cached keys
    cache.evict()                            # with a window (and sinks) the cache rolls

:func:`attnlib.decoder.generate` runs that loop (the layer is :func:`attnlib.decoder.block.block`).
One layer's cache with a window of 3 and one sink, after six tokens (lesson 15 · 4):

>>> cache = KVCache(n_layers=1, window=3, sinks=1)
>>> for token in range(6):
...     position = cache.add_tokens(1)
...     k = v = np.full((1, 1, 1, 2), float(token))  # (B, n_kv_heads, 1 token, d_head)
...     K, V = cache.append(0, k, v)
...     cache.evict()
>>> cache.positions  # the sink, then the last window − 1 tokens
array([0, 4, 5])
>>> cache.nbytes  # 3 tokens × (a key and a value) × 2 numbers × 8 bytes
96
"""

from __future__ import annotations

import numpy as np

from attnlib.core import window_rule
from attnlib.decoder.config import as_window
from attnlib.validation import as_positive_int, as_real_array

__all__ = ["KVCache"]


class KVCache:
    """The keys and values each layer has computed so far, so a new token computes only its own.

    Lesson 15 · 1, · 2 and · 4: the work it saves, the memory it takes, the rolling cache.

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
        self.window, self.sinks = as_window(window, sinks)
        self.keys: list[np.ndarray | None] = [None] * as_positive_int(n_layers, "n_layers", maximum=2**20)
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
        layer = as_positive_int(layer, "layer", minimum=0)
        if layer >= len(self.keys):
            raise ValueError(
                f"layer must be from 0 to {len(self.keys) - 1} (the cache's layers), got {layer}"
            )
        K, V = as_real_array(K, "K"), as_real_array(V, "V")
        if K.ndim != 4 or K.shape != V.shape:
            raise ValueError(
                f"K and V must both be (B, n_kv_heads, m, d_head), got shapes {K.shape}, {V.shape}"
            )
        held = self.keys[layer]
        if held is not None and (K.shape[:2], K.shape[3]) != (held.shape[:2], held.shape[3]):
            raise ValueError(
                f"K and V of shape {K.shape} do not fit layer {layer}'s cache, which holds keys of shape "
                f"{held.shape}: the batch B, the key/value heads and d_head must be the same"
            )
        return self.extend(layer, K, V)

    def extend(self, layer: int, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`append` of arrays already checked; it trusts them.

        Lesson 15 · 1. One token at a time: the decoder's own loop (:func:`attnlib.decoder.block.block`)
        calls it once per layer and token with the keys and values it has just made: ``layer`` one
        of the cache's, ``K`` and ``V`` float arrays of one shape ``(B, n_kv_heads, m, d_head)``, the
        batch, heads and width of what the layer holds already.
        """
        old_k, old_v = self.keys[layer], self.values[layer]
        self.keys[layer] = K if old_k is None else np.concatenate([old_k, K], axis=-2)
        self.values[layer] = V if old_v is None else np.concatenate([old_v, V], axis=-2)
        return self.keys[layer], self.values[layer]

    def evict(self) -> None:
        """Drop what the next token will not see: all but the first ``sinks`` and the last ``window − 1``."""
        if self.window is None or self.length <= self.sinks + self.window - 1:
            return
        # what the next token, at position `seen`, sees: the first sinks and the last window − 1
        keep = window_rule(np.array([self.seen]), self.positions, self.window, self.sinks)[0]
        self.positions = self.positions[keep]
        self.keys = [None if k is None else k[..., keep, :] for k in self.keys]
        self.values = [None if v is None else v[..., keep, :] for v in self.values]
