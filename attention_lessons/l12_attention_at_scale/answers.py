"""Lesson 12's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

import numpy as np

from attention_lessons.kit.checks.wording import as_printed
from attnlib import counting


def weights_memory() -> list[str]:
    """Self-check 1: the GiB of one head's float32 weights at n = 24,576, as a table would print it."""
    gib = counting.weights_bytes(24_576, 24_576) / 2**30
    return [f"{gib:{spec}}" for spec in ("", ".2f", ".3f")]


def rescale_factor() -> list[str]:
    """Self-check 2: the rescaling factor when the running maximum grows from 2 to 5."""
    return [as_printed(np.exp(2.0 - 5.0))]


def skipped_blocks() -> list[str]:
    """Self-check 3: the blocks a causal mask skips at n = 2048 with 128 × 128 tiles."""
    return [str(counting.tile_counts(2048, 2048, block_q=128, block_k=128, causal=True).skipped)]
