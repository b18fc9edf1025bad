"""Readable text: the WCAG contrast ratio of two colours, and text colours that reach it.

WCAG 2 asks for a contrast ratio of at least 4.5:1 between normal text and its background
(https://www.w3.org/TR/WCAG21/#contrast-minimum). The ratio is ``(L1 + 0.05) / (L2 + 0.05)`` of
the two colours' relative luminances ``L1 ≥ L2``, from 1 (the same colour) to 21 (black on white).
"""

from __future__ import annotations

from matplotlib.colors import to_hex, to_rgb

__all__ = ["ANNOTATION_COLORS", "MINIMUM_CONTRAST", "contrast_ratio", "readable_color", "relative_luminance",
           "text_color_on"]  # fmt: skip

#: What WCAG 2 asks of normal text (level AA).
MINIMUM_CONTRAST = 4.5
#: The two colours of the numbers written on heatmap cells. Pure black and pure white: on every
#: colour one of them reaches at least 4.58:1 (with any grey instead of black, some colours get
#: less than 4.5:1 from both).
ANNOTATION_COLORS = ("#000000", "#ffffff")

_Color = str | tuple[float, ...]


def relative_luminance(color: _Color) -> float:
    """The relative luminance of a colour (WCAG 2), from 0 (black) to 1 (white); alpha is ignored.

    Parameters
    ----------
    color : a Matplotlib colour
        A name, ``"#rrggbb"``, or an RGB(A) tuple of floats in [0, 1].
    """
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(color)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: _Color, b: _Color) -> float:
    """The WCAG contrast ratio of two colours, from 1 (equal luminance) to 21 (black and white)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def text_color_on(background: _Color) -> str:
    """Of :data:`ANNOTATION_COLORS`, the one with the higher contrast on ``background``.

    Returns
    -------
    str
        ``"#000000"`` or ``"#ffffff"``; its contrast with ``background`` is at least 4.58:1.
    """
    return max(ANNOTATION_COLORS, key=lambda text: contrast_ratio(text, background))


def readable_color(color: _Color, background: _Color, minimum: float = MINIMUM_CONTRAST) -> str:
    """``color``, darkened or lightened just enough to read as text on ``background``.

    The colour is mixed with black (on a light background) or white (on a dark one) in steps of
    5 %, until its contrast with ``background`` is at least ``minimum``; a colour that already
    reads is returned as it is (as ``"#rrggbb"``). Its hue stays recognisable, so a label can
    keep the colour of what it names.

    Parameters
    ----------
    color, background : Matplotlib colours
    minimum : float
        The contrast ratio to reach, at most what black or white reaches on ``background``.

    Returns
    -------
    str
        ``"#rrggbb"``.
    """
    rgb = to_rgb(color)
    end = max(((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)), key=lambda e: contrast_ratio(e, background))
    reachable = contrast_ratio(end, background)
    if not 1.0 <= minimum <= reachable:
        raise ValueError(
            f"minimum must be between 1 and {reachable:.2f} (what black or white reaches on "
            f"{to_hex(background)}), got {minimum!r}"
        )
    mixes = (
        to_hex([(1 - share) * c + share * e for c, e in zip(rgb, end, strict=True)])
        for share in (step / 20 for step in range(21))
    )  # the last one is black or white itself, which reaches the minimum
    return next(mix for mix in mixes if contrast_ratio(mix, background) >= minimum)
