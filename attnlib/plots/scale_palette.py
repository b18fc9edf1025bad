"""The colours of lesson 12's meanings (attention at scale), kept in one place for the palette.

Each meaning has its own colour, none of them one of :mod:`attnlib.plots.styles`' raw/scaled
colours or the Okabe–Ito set, each at 3:1 or more against the light style's white, and always
with a second cue (a marker or line style, and a label) so that colour is never the only one.
Paul Tol's colour-blind-safe "muted" and "vibrant" schemes.
"""

from __future__ import annotations

__all__ = [
    "BACKEND_COLORS",
    "BACKEND_MARKERS",
    "NAIVE_COLOR",
    "RUNNING_MAX_COLOR",
    "TILED_COLOR",
    "TORCH_COLOR",
]

#: Attention that forms the n × n weights (attnlib's naive version, the standard algorithm): rose.
NAIVE_COLOR = "#CC6677"
#: Attention computed block by block (tiled_attention, FlashAttention's loops): teal.
TILED_COLOR = "#009988"
#: PyTorch's fused CPU kernel: olive.
TORCH_COLOR = "#999933"
#: The online softmax's running maximum m: purple.
RUNNING_MAX_COLOR = "#AA4499"
#: PyTorch's GPU backends of ``scaled_dot_product_attention``: one colour each ...
BACKEND_COLORS = {"math": "#EE3377", "flash": "#117733", "efficient": "#EE7733", "cudnn": "#332288"}
#: ... and one marker each.
BACKEND_MARKERS = {"math": "o", "flash": "s", "efficient": "D", "cudnn": "^"}
