"""Lesson 09's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

import numpy as np

from attnlib import counting
from attnlib.multihead import split_heads


def split_shape() -> list[str]:
    """Self-check 1: the shape of a (8, 10, 64) batch split into 4 heads."""
    return [str(split_heads(np.zeros((8, 10, 64)), 4).shape)]


def parameter_count() -> list[str]:
    """Self-check 2: the parameters of one multi-head layer of d_model = 768 and 12 heads, in LaTeX."""
    return [f"{counting.multi_head_parameter_counts(768, n_heads=12)['total']:,}".replace(",", "{,}")]


def padding_row() -> list[str]:
    """Self-check 3: the padding mask's row of the sentence of length 1."""
    return ["[True, False, False, False]"]


def cross_attention_shape() -> list[str]:
    """The question on cross-attention: the weights' shape (heads, n_q, n_k)."""
    return [str((4, 7, 20))]
