"""Lesson 15's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

from attention_lessons.kit import examples
from attnlib import counting


def cache_mib() -> list[str]:
    """The cache self-check: a decoder's KV cache for 20,000 tokens, in MiB."""
    exercise = counting.DecoderShape(
        n_layers=24, d_model=2048, n_heads=16, n_kv_heads=4, d_mlp=5632, vocab=32000
    )
    return [f"{counting.kv_cache_bytes(exercise, 20_000, bytes_per_number=2) / 2**20:.1f} MiB"]


def llama_batches() -> list[str]:
    """The question of 8 sequences of 4,096 tokens with Llama 2 7B and 70B: their caches in GiB."""
    published = examples.published_decoders()
    caches = [
        counting.kv_cache_bytes(published[name].shape, 4096, bytes_per_number=2, batch=8)
        for name in ("Llama 2 7B", "Llama 2 70B")
    ]
    return [f"take {size / 2**30:.1f} GiB" for size in caches]
