"""Lesson 16's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

from attnlib import counting

#: SmolLM2-135M's sizes (its GGUF's metadata; the lesson prints them from the file): loading the
#: model only to count its cache would take seconds.
SMOLLM2 = counting.DecoderShape(
    n_layers=30, d_model=576, n_heads=9, n_kv_heads=3, d_mlp=1536, vocab=49152, tied_embeddings=True
)


def function_bodies() -> list[str]:
    """A line of each function the learner writes, as the solution cells write it (code, not numbers)."""
    return [
        "np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight",
        "(gate / (1 + np.exp(-gate)) * (x @ W_up)) @ W_down",
        "[first * cos - second * sin, first * sin + second * cos]",
        "np.repeat(K, group, axis=0), np.repeat(V, group, axis=0)",
        'x = x + attn(parts.rms_norm(x, w["attn_norm"], eps))',
    ]


def cache_per_token() -> list[str]:
    """The question of the cache per token: float32, 3 key/value heads, then 9."""
    per_token = counting.kv_cache_bytes(SMOLLM2, bytes_per_number=4)
    return [f"= {per_token:,} bytes per token", f"{per_token * 3:,} bytes per token"]
