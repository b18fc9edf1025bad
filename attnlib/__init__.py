"""attnlib: scaled dot-product attention, ``softmax(Q Kᵀ / √d_k) V``, for teaching.

``import attnlib`` loads NumPy only. Plotting lives in :mod:`attnlib.plots` (matplotlib,
seaborn) and the interactive explorers in :mod:`attnlib.widgets`; import those where they are
used. :mod:`attnlib.validation` holds the argument checks that every module shares.
"""

from attnlib import counting, examples, projection
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

__version__ = "0.1.0"

__all__ = [
    "AttentionSteps",
    "apply_mask",
    "attention_steps",
    "causal_mask",
    "counting",
    "default_scale",
    "examples",
    "project",
    "projection",
    "qkv",
    "raw_scores",
    "scale_scores",
    "scaled_dot_product_attention",
    "softmax",
    "weighted_sum",
]
