"""attnlib: scaled dot-product attention, ``softmax(Q Kᵀ / √d_k) V``, for teaching.

``import attnlib`` loads NumPy only. What makes it a course (each lesson's figures, explorer,
self-checks and data, and the shared kit: figure tools, explorer base, checking vocabulary, the
worked examples) lives in the ``course`` package beside it, one folder per lesson.
:mod:`attnlib.validation` holds the argument checks that every module shares.
"""

from attnlib import counting, projection
from attnlib.core import (
    AttentionSteps,
    apply_mask,
    attention_steps,
    causal_mask,
    default_scale,
    raw_scores,
    scale_scores,
    scaled_dot_product_attention,
    softmax,
    weighted_sum,
)
from attnlib.projection import project, qkv

__version__ = "1.0.0"

__all__ = [
    "AttentionSteps",
    "apply_mask",
    "attention_steps",
    "causal_mask",
    "counting",
    "default_scale",
    "project",
    "projection",
    "qkv",
    "raw_scores",
    "scale_scores",
    "scaled_dot_product_attention",
    "softmax",
    "weighted_sum",
]
