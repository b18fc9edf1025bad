"""The palette: one colour per meaning, in every figure of every lesson.

A colour that means something in one picture means the same in every other: vermilion is always a
raw score, never a tiled algorithm or a training step. Figure functions and lessons take colours
from here by meaning (:func:`color`), never as literals; ``tests/kit/test_palette.py`` checks that no
module of :mod:`attention_lessons.kit.plots` and no lesson names a colour any other way.

Every colour of :data:`MEANINGS` comes from the Okabe–Ito palette or Paul Tol's schemes (both
told apart with every common colour-vision deficiency), or is a neutral grey, and has a contrast of at least
:data:`MIN_CONTRAST` (3:1, WCAG's minimum for graphics) against the background of both styles,
white and ``#1e1e1e``. Colour is never the only cue: a meaning drawn next to another is labelled,
or drawn with its own marker, line style or hatch (raw scores: ``o`` markers and hatched bars).

| meaning | colour | why |
| --- | --- | --- |
| raw score | vermilion ``#D55E00`` | warm and loud: the unscaled score, the one that saturates |
| scaled score | blue ``#0072B2`` | cool and calm: scaled by 1/√d_k (and lesson 11's model, which is scaled) |
| query | orange ``#E69F00`` | the query's arrow (labelled: below 3:1 on white, so never unlabelled) |
| key | bluish green ``#009E73`` | the key's arrow |
| position | reddish purple ``#CC79A7`` | position encodings compared with each other (lesson 10) |
| reference | grey ``#777777`` | a level to compare against, dashed: a blind guess, a uniform spread |
| naive attention | magenta ``#EE3377`` | loud like the wall it hits: it forms the n × n weights |
| tiled attention | green ``#228833`` | block by block, never the n × n weights (FlashAttention's loops) |
| PyTorch | olive ``#999933`` | PyTorch's own fused kernel, measured beside attnlib's two |
| running maximum | purple ``#AA4499`` | the online softmax's running maximum m, a line over the scores |

PyTorch's GPU backends (lesson 12) take the colour of their algorithm and a marker of their own
(:data:`BACKEND_LOOKS`): the math backend forms the n × n weights (naive attention's colour); the
flash, memory-efficient and cuDNN backends are tiled (tiled attention's colour), told apart by
marker and line style. Four more colours at 3:1 on both backgrounds would sit too near the others.

Colour maps: viridis for weights, cividis for scores and other signed numbers (one scale per
quantity within a figure); masked or padded cells are hatched. :func:`ordered` gives colours for
an ordered series without a meaning of its own (frequencies, steps), from viridis.
"""

from __future__ import annotations

from typing import NamedTuple

import matplotlib as mpl
from matplotlib.colors import to_hex

__all__ = [
    "BACKEND_LOOKS",
    "MEANINGS",
    "MIN_CONTRAST",
    "OKABE_ITO",
    "BackendLook",
    "Meaning",
    "color",
    "meaning_of",
    "ordered",
]

#: Okabe–Ito colours (distinguishable with every common colour-vision deficiency), without black:
#: orange, sky blue, bluish green, reddish purple, blue, vermilion, yellow.
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442")

#: Lines and marks of a meaning reach this contrast against both styles' backgrounds (except the
#: query, whose arrows always carry their label).
MIN_CONTRAST = 3.0


class Meaning(NamedTuple):
    """A colour and the reason it has that meaning."""

    color: str
    reason: str


#: Meaning → colour, with the reason (the table above).
MEANINGS: dict[str, Meaning] = {
    "raw score": Meaning(OKABE_ITO[5], "warm and loud: the unscaled score, the one that saturates"),
    "scaled score": Meaning(OKABE_ITO[4], "cool and calm: scores scaled by 1/√d_k, and a model that scales"),
    "query": Meaning(OKABE_ITO[0], "the query's arrow, always labelled"),
    "key": Meaning(OKABE_ITO[2], "the key's arrow"),
    "position": Meaning(OKABE_ITO[3], "position encodings compared with each other"),
    "reference": Meaning("#777777", "a level to compare against, drawn dashed"),
    "naive attention": Meaning("#EE3377", "the algorithm that forms the n × n weights"),
    "tiled attention": Meaning("#228833", "block by block, never the n × n weights"),
    "PyTorch": Meaning("#999933", "PyTorch's own fused kernel, measured beside attnlib's two"),
    "running maximum": Meaning("#AA4499", "the online softmax's running maximum m"),
}


class BackendLook(NamedTuple):
    """How a figure draws one of PyTorch's GPU backends: its algorithm's meaning, a marker, a line."""

    meaning: str
    marker: str
    linestyle: str


#: PyTorch's GPU backends of ``scaled_dot_product_attention``: the colour of their algorithm, and a
#: marker and line style each as the cue that tells them apart.
BACKEND_LOOKS: dict[str, BackendLook] = {
    "math": BackendLook("naive attention", "o", "-"),
    "flash": BackendLook("tiled attention", "s", "-"),
    "efficient": BackendLook("tiled attention", "D", "--"),
    "cudnn": BackendLook("tiled attention", "^", ":"),
}


def color(meaning: str) -> str:
    """The colour of ``meaning``, one of :data:`MEANINGS` (``"raw score"``, ``"position"``, …).

    >>> color("raw score")
    '#D55E00'
    """
    if not isinstance(meaning, str) or meaning not in MEANINGS:
        raise ValueError(f"meaning must be one of {sorted(MEANINGS)}, got {meaning!r}")
    return MEANINGS[meaning].color


def meaning_of(colour: object) -> str | None:
    """The meaning whose colour ``colour`` is (any Matplotlib colour, alpha ignored), or None."""
    hex_colour = to_hex(colour, keep_alpha=False).lower()  # type: ignore[arg-type]
    for name, meaning in MEANINGS.items():
        if meaning.color.lower() == hex_colour:
            return name
    return None


def ordered(n: int) -> list[str]:
    """``n`` colours for an ordered series with no meaning of its own, dark to light along viridis.

    They stop at viridis(0.6), about 3:1 against white, and avoid every colour of
    :data:`MEANINGS`; draw the lines with labels or line styles as well.

    >>> ordered(3)
    ['#440154', '#355f8d', '#22a884']
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive whole number, got {n!r}")
    cmap = mpl.colormaps["viridis"]
    return [to_hex(cmap(0.6 * i / max(n - 1, 1))) for i in range(n)]
