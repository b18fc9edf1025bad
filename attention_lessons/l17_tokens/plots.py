"""The pictures of lesson 17, tokens: how many bytes a token holds as byte-pair encoding learns more
merges, text by text, and a piece of text drawn as its tokens.

Each function takes the numbers it draws (computed with :mod:`attnlib.tokens`) and writes the
figure's text alternative from them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from itertools import pairwise

import numpy as np
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullLocator
from matplotlib.transforms import ScaledTranslation

from attention_lessons.kit.plots.contrast import readable_color
from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.palette import MIN_CONTRAST, color, ordered
from attention_lessons.kit.plots.styles import STYLES, check_style, figure, style_context
from attnlib.validation import as_positive_int, as_real, is_number

__all__ = ["MARKERS", "MAX_STRIP_TOKENS", "compression_figure", "shown", "token_strip_figure"]

#: The marker of each text in :func:`compression_figure`, by its place: a text is told by its marker
#: and its label, never by its colour alone (so at most this many texts).
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
#: The most tokens :func:`token_strip_figure` draws (about 30 rows of boxes).
MAX_STRIP_TOKENS = 400
#: The most characters a box shows of its token; a longer token is cut with "…".
MAX_BOX_CHARS = 24
#: How a character is written in a token's box: a space, a newline, a tab, a carriage return made visible.
_SHOWN = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "⏎"}
#: The size in points of a token's text in its box, and of its id beneath.
_TOKEN_SIZE, _ID_SIZE = 11, 7
#: What each of those marks stands for, in a figure's text alternative.
_SAID = {
    "␣": "is a space",
    "↵": "a newline",
    "⇥": "a tab",
    "⏎": "a carriage return",
    "�": "bytes that make no whole character",
}


def _text_colour(colour: str, style: str, minimum: float) -> str:
    """``colour`` lightened or darkened just enough to reach ``minimum`` against ``style``'s background."""
    return readable_color(colour, str(STYLES[style]["axes.facecolor"]), minimum)


# ---------------------------------------------------------------------------------------------
# Compression: bytes per token against the merges learned


def _merge_counts(merges: object) -> list[int]:
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Sequence):
        raise TypeError(f"merges must be a list of merge counts such as [0, 64, 256], got {merges!r}")
    if len(merges) < 2:
        raise ValueError(
            f"merges must hold at least two merge counts (a line needs two points), got {merges!r}"
        )
    counts = [as_positive_int(m, f"merges[{i}]", minimum=0) for i, m in enumerate(merges)]
    if any(b <= a for a, b in pairwise(counts)):
        raise ValueError(f"merges must be increasing (each count larger than the one before), got {counts}")
    return counts


def _bytes_per_token(value: object, name: str) -> float:
    number = as_real(value, name, example="3.2")
    if number < 1.0:
        raise ValueError(f"{name} must be at least 1 (a token holds at least one byte), got {number}")
    return number


def _curves(bytes_per_token: object, n: int) -> dict[str, list[float]]:
    if not isinstance(bytes_per_token, Mapping) or not bytes_per_token:
        raise ValueError(
            "bytes_per_token must be a non-empty dict: a text's name → bytes per token at each count"
        )
    if len(bytes_per_token) > len(MARKERS):
        raise ValueError(
            f"bytes_per_token names {len(bytes_per_token)} texts; the figure tells at most {len(MARKERS)} "
            "apart (a marker each)"
        )
    curves = {}
    for key, values in bytes_per_token.items():
        if not isinstance(key, str) or not key.strip():
            raise TypeError(f"each text's name in bytes_per_token must be a non-empty str, got {key!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
            raise TypeError(f"bytes_per_token[{key!r}] must be a list of numbers, got {values!r}")
        if len(values) != n:
            raise ValueError(
                f"bytes_per_token[{key!r}] has {len(values)} values; merges has {n} counts: one value each"
            )
        curves[key] = [_bytes_per_token(v, f"bytes_per_token[{key!r}][{i}]") for i, v in enumerate(values)]
    return curves


def _spread(positions: Sequence[float], gap: float) -> list[float]:
    """``positions`` (axes fractions) moved apart to at least ``gap`` each, as little as possible, kept in
    0 … 1 where there is room; the order of the input is kept in the output."""
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    placed = [positions[i] for i in order]
    for k in range(1, len(placed)):  # upward from the lowest
        placed[k] = max(placed[k], placed[k - 1] + gap)
    if placed and placed[-1] > 1.0:  # then down from the top, where that ran out of room
        placed[-1] = 1.0
        for k in range(len(placed) - 2, -1, -1):
            placed[k] = min(placed[k], placed[k + 1] - gap)
    out = [0.0] * len(positions)
    for k, i in enumerate(order):
        out[i] = placed[k]
    return out


def compression_figure(
    merges: Sequence[int],
    bytes_per_token: Mapping[str, Sequence[float]],
    *,
    reference: Mapping[str, float] | None = None,
    reference_name: str = "SmolLM2",
    reference_merges: int = 48_900,
    title: str = "More merges, longer tokens: bytes per token, text by text",
    style: str = "light",
) -> Figure:
    """Bytes per token of each text against the merges learned: one line per text, with a marker and a label.

    With no merges every token is one byte (1 byte per token); each merge joins a frequent pair, and
    the texts like the training text gain the most. The merges axis is logarithmic past its first
    step, with 0 drawn too (symmetric log, base 2). A real tokenizer's bytes per token on the same
    texts, if given, stand at its own number of merges: hollow markers of each text's marker and
    colour, on a dashed line in the reference colour.

    Parameters
    ----------
    merges : sequence of int, length m ≥ 2
        The merge counts measured, increasing, from 0 (``[0, 64, 256, 1024, 4096]``).
    bytes_per_token : dict of str to sequence of float, each of length m
        A text's name → its bytes per token (UTF-8 bytes over tokens, each ≥ 1) at each merge
        count, in the order to draw them (at most :data:`MARKERS` texts).
    reference : dict of str to float, optional
        Some of those texts → their bytes per token with ``reference_name``'s tokenizer.
    reference_name : str
        The tokenizer the reference comes from.
    reference_merges : int
        How many merges it has (where its marks stand on the merges axis).
    title : str
    style : {"light", "dark"}

    Returns
    -------
    matplotlib.figure.Figure
        Its text alternative (:func:`~attention_lessons.kit.plots.description`) gives the value at
        0 merges, each text's value at the most merges and the reference's, and a table of all.
    """
    counts = _merge_counts(merges)
    curves = _curves(bytes_per_token, len(counts))
    if reference is not None and not isinstance(reference, Mapping):
        raise TypeError(f"reference must be a dict: a text's name → bytes per token, got {reference!r}")
    marks = {str(k): _bytes_per_token(v, f"reference[{k!r}]") for k, v in (reference or {}).items()}
    unknown = [k for k in marks if k not in curves]
    if unknown:
        raise ValueError(f"reference names texts that are not in bytes_per_token: {unknown}")
    if not isinstance(reference_name, str) or not reference_name.strip():
        raise TypeError(f"reference_name must be a non-empty str, got {reference_name!r}")
    ref_merges = as_positive_int(reference_merges, "reference_merges")
    if not isinstance(title, str) or not title.strip():
        raise TypeError(f"title must be a non-empty str, got {title!r}")
    check_style(style)

    height = 4.6
    fig, axes = figure(1, 1, figsize=(9.5, height), style=style)
    ax = axes[0, 0]
    rc = STYLES[style]
    first = next(m for m in counts if m > 0)
    right = max(counts[-1], ref_merges if marks else 0)
    top = max([*(max(v) for v in curves.values()), *marks.values()])
    span = max(top - 1.0, 0.5)
    low, high = 1.0 - 0.06 * span, top + 0.1 * span
    lines = dict(zip(curves, ordered(len(curves)), strict=True))
    # ordered() runs dark to light for a white page: on the dark page its darkest are lightened to 3:1
    lines = {name: _text_colour(c, style, MIN_CONTRAST) for name, c in lines.items()}
    reference_label = f"{reference_name} ({ref_merges:,} merges)"
    with style_context(style):
        ax.set_xscale("symlog", base=2, linthresh=first, linscale=1.0)
        for (name, values), marker in zip(curves.items(), MARKERS, strict=False):
            ax.plot(counts, values, color=lines[name], marker=marker, markersize=6, linewidth=1.6, label=name)
        if marks:
            ax.axvline(ref_merges, color=color("reference"), linestyle="--", linewidth=1, zorder=1)
            for name, marker in zip(curves, MARKERS, strict=False):
                if name in marks:
                    ax.plot(
                        [ref_merges], [marks[name]], linestyle="none", marker=marker, markersize=7,
                        markerfacecolor=str(rc["axes.facecolor"]), markeredgecolor=lines[name],
                        markeredgewidth=1.6, zorder=3,
                    )  # fmt: skip
            ax.annotate(
                reference_label, (ref_merges, 1.0), xycoords=("data", "axes fraction"), xytext=(-4, -4),
                textcoords="offset points", ha="right", va="top", fontsize=8.5,
            )  # fmt: skip
        ax.set_xlim(-0.25 * first if counts[0] == 0 else counts[0] / 1.5, right * 1.5)
        ax.set_ylim(low, high)
        ticks = [*counts, *([ref_merges] if marks else [])]
        ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())  # symlog's would crowd the stretch near 0
        ax.grid(True, axis="y", alpha=0.5)
        ax.set_xlabel("merges learned (the vocabulary is 256 bytes + one token per merge)")
        ax.set_ylabel("bytes per token (higher: fewer tokens)")
        ax.set_title(title)
        # direct labels in the right margin, each with its line's marker, at its last value's height
        ends = [(curves[name][-1] - low) / (high - low) for name in curves]
        axes_points = (height - 1.1) * 72
        where = _spread(ends, 8.5 * 1.45 / axes_points)
        shift = ScaledTranslation(9 / 72, 0, fig.dpi_scale_trans)
        for (name, values), marker, y in zip(curves.items(), MARKERS, where, strict=False):
            ax.add_line(
                Line2D(
                    [1.0], [y], transform=ax.transAxes + shift, marker=marker, markersize=6,
                    color=lines[name], linestyle="none", clip_on=False,
                )
            )  # fmt: skip
            said = f"{name}  {values[-1]:.2f}" + (
                f"  ({reference_name} {marks[name]:.2f})" if name in marks else ""
            )
            ax.annotate(
                said, (1.0, y), xycoords="axes fraction", xytext=(16, 0), textcoords="offset points",
                va="center", fontsize=8.5, color=_text_colour(lines[name], style, 4.5), annotation_clip=False,
            )  # fmt: skip

    at_first = [values[0] for values in curves.values()]
    if len(curves) > 1 and len({f"{v:.2f}" for v in at_first}) == 1:
        start = f"At {counts[0]:,} merges every text has {at_first[0]:.2f} bytes per token" + (
            ": every token is one byte" if counts[0] == 0 and f"{at_first[0]:.2f}" == "1.00" else ""
        )
    else:
        start = f"At {counts[0]:,} merges: " + "; ".join(f"{k} {v[0]:.2f}" for k, v in curves.items())
    said = [
        f"{title}. Lines of bytes per token (a text's UTF-8 bytes over its tokens) against the merges "
        f"learned, {_and(f'{m:,}' for m in counts)}, for {len(curves)} "
        + ("texts, each with its own marker" if len(curves) > 1 else "text"),
        start,
        f"At {counts[-1]:,} merges: " + "; ".join(f"{k} {v[-1]:.2f}" for k, v in curves.items()),
    ]
    if marks:
        said.append(
            f"{reference_name}'s tokenizer ({ref_merges:,} merges), hollow markers on a dashed line: "
            + "; ".join(f"{k} {v:.2f}" for k, v in marks.items())
        )
    columns = [f"{m:,} merges" for m in counts] + ([reference_label] if marks else [])
    table = Table(
        caption="Bytes per token of each text, by merges learned (2 decimals)",
        columns=tuple(columns),
        rows=tuple(curves),
        cells=tuple(
            tuple(f"{v:.2f}" for v in values) + ((f"{marks[k]:.2f}" if k in marks else "—",) if marks else ())
            for k, values in curves.items()
        ),
        corner="text",
    )
    describe(fig, join_sentences(said), [table])
    return fig


def _and(items: Iterable[str]) -> str:
    """Words joined as a list is written: ``a, b and c``."""
    words = list(items)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# ---------------------------------------------------------------------------------------------
# A text as its tokens


def shown(piece: bytes) -> str:
    """A token's text as a box shows it: its bytes read as UTF-8 (U+FFFD where they are none), a space
    as ``␣``, a newline as ``↵``, a tab as ``⇥``, other control characters as ``\\xNN``.

    >>> shown(b" the"), shown(b"\\n\\n"), shown("é".encode()[:1])
    ('␣the', '↵↵', '�')
    """
    text = piece.decode("utf-8", errors="replace")
    return "".join(_SHOWN.get(c, f"\\x{ord(c):02x}" if unicodedata.category(c) == "Cc" else c) for c in text)


def _pieces(pieces: object) -> list[bytes]:
    if isinstance(pieces, (str, bytes)) or not isinstance(pieces, Sequence):
        raise TypeError(f"pieces must be a list of each token's bytes, got {type(pieces).__name__}")
    out = []
    for i, piece in enumerate(pieces):
        if isinstance(piece, str):
            raise TypeError(
                f"pieces[{i}] must be bytes (a token's bytes, tokenizer.vocab[id]), got the str {piece!r}: "
                f"encode it, {piece!r}.encode('utf-8')"
            )
        if not isinstance(piece, bytes | bytearray):
            raise TypeError(f"pieces[{i}] must be bytes (a token's bytes), got {type(piece).__name__}")
        if not piece:
            raise ValueError(f"pieces[{i}] is empty: every token holds at least one byte")
        out.append(bytes(piece))
    return out


def _ids(ids: object) -> list[int]:
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence | np.ndarray):
        raise TypeError(f"ids must be a list of token ids, got {type(ids).__name__}")
    out = []
    for i, t in enumerate(ids):
        if not is_number(t, whole=True):
            raise TypeError(f"ids[{i}] must be a whole number (a token id), got {t!r}")
        if t < 0:
            raise ValueError(f"ids[{i}] must be a token id (0 or more), got {t}")
        out.append(int(t))
    return out


def _count(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: ``_count(3, "byte") == "3 bytes"``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _mix(a: str, b: str, share: float) -> str:
    """``share`` of colour ``b`` mixed into colour ``a``."""
    return to_hex((1 - share) * np.array(to_rgb(a)) + share * np.array(to_rgb(b)))


def token_strip_figure(
    pieces: Sequence[bytes],
    ids: Sequence[int],
    *,
    title: str,
    width: float = 9.0,
    style: str = "light",
) -> Figure:
    """A text as its tokens: a box per token, in rows, its text inside and its id small beneath.

    Neighbouring boxes are told apart by their fill (two greys, alternating) and by a border and a
    gap between them. A box shows its token's bytes read as UTF-8 (:func:`shown`: a space is ``␣``,
    a newline ``↵``, bytes that are no whole character ``�``); after a token that holds a newline,
    the next row begins (as in the explorer).

    Parameters
    ----------
    pieces : sequence of bytes, length n (1 ≤ n ≤ :data:`MAX_STRIP_TOKENS`)
        Each token's bytes, in order (``tokenizer.vocab[id]``; none empty).
    ids : sequence of int, length n
        Each token's id.
    title : str
        What the text is and which tokenizer cut it.
    width : float
        The figure's width in inches (at least 3); its height follows from the rows.
    style : {"light", "dark"}

    Returns
    -------
    matplotlib.figure.Figure
        Its text alternative gives the numbers of tokens and bytes, the bytes per token and the
        first 40 tokens with their ids; a table lists every token.
    """
    chunks = _pieces(pieces)
    numbers = _ids(ids)
    if len(chunks) != len(numbers):
        raise ValueError(
            f"pieces and ids must be the same length (one id per token), got {len(chunks)} pieces and "
            f"{len(numbers)} ids"
        )
    if not chunks:
        raise ValueError("pieces is empty: there are no tokens to draw")
    if len(chunks) > MAX_STRIP_TOKENS:
        raise ValueError(
            f"pieces has {len(chunks)} tokens; the figure draws at most {MAX_STRIP_TOKENS}: "
            "draw a shorter text"
        )
    if not isinstance(title, str) or not title.strip():
        raise TypeError(f"title must be a non-empty str, got {title!r}")
    inches = as_real(width, "width", example="9.0")
    if inches < 3:
        raise ValueError(f"width must be at least 3 inches, got {inches}")
    check_style(style)

    n, n_bytes = len(chunks), sum(len(c) for c in chunks)
    per_token = n_bytes / n
    texts = [shown(c) for c in chunks]
    boxed = [t if len(t) <= MAX_BOX_CHARS else t[: MAX_BOX_CHARS - 1] + "…" for t in texts]
    try:
        n_chars: int | None = len(b"".join(chunks).decode("utf-8"))
    except UnicodeDecodeError:
        n_chars = None  # the tokens cut a character at the ends of the strip
    rc = STYLES[style]
    fig, axes = figure(1, 1, figsize=(inches, 2.0), style=style)
    fig.set_layout_engine("none")  # the boxes are laid out here, in points: the axes fill the figure
    ax = axes[0, 0]
    ax.set_position((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    renderer = fig.canvas.get_renderer()
    to_points = 72 / fig.dpi

    @cache
    def measure(text: str, size: float) -> float:
        """The width of ``text`` in monospace at ``size`` points, in points."""
        probe = ax.text(0, 0, text, family="monospace", fontsize=size, parse_math=False)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        return extent.width * to_points

    margin, pad, gap, row_gap = 10.0, 4.0, 4.0, 7.0
    token_line, id_line = _TOKEN_SIZE * 1.25, _ID_SIZE * 1.25
    box_height = pad + token_line + id_line + pad
    header = 11 * 1.4 + 9 * 1.4 + 8.0
    room = inches * 72 - 2 * margin
    boxes = []  # (x, row, width) of each box
    x, row = 0.0, 0
    for k, (text, number) in enumerate(zip(boxed, numbers, strict=True)):
        w = max(measure(text, _TOKEN_SIZE), measure(str(number), _ID_SIZE), 6.0) + 2 * pad
        if x > 0 and (x + w > room or b"\n" in chunks[k - 1]):
            x, row = 0.0, row + 1
        boxes.append((x, row, w))
        x += w + gap
    n_rows = row + 1
    height = header + n_rows * box_height + (n_rows - 1) * row_gap + 2 * margin
    fig.set_size_inches(inches, height / 72)
    ax.set_xlim(0, inches * 72)
    ax.set_ylim(height, 0)

    fills = (_mix(str(rc["grid.color"]), str(rc["axes.facecolor"]), 0.2),
             _mix(str(rc["grid.color"]), str(rc["axes.facecolor"]), 0.75))  # fmt: skip
    with style_context(style):
        ax.text(margin, margin, title, fontsize=11, fontweight="bold", va="top", parse_math=False)
        summary = f"{_count(n, 'token')}, {_count(n_bytes, 'byte')}: {per_token:.2f} bytes per token"
        ax.text(margin, margin + 11 * 1.4, summary, fontsize=9, va="top", parse_math=False)
        for k, ((bx, brow, w), text, number) in enumerate(zip(boxes, boxed, numbers, strict=True)):
            left, top = margin + bx, margin + header + brow * (box_height + row_gap)
            ax.add_patch(
                Rectangle(
                    (left, top), w, box_height, facecolor=fills[k % 2], edgecolor=str(rc["axes.edgecolor"]),
                    linewidth=0.8,
                )
            )  # fmt: skip
            centre = left + w / 2
            shared = {"family": "monospace", "ha": "center", "va": "center", "parse_math": False}
            ax.text(centre, top + pad + token_line / 2, text, fontsize=_TOKEN_SIZE,
                    color=str(rc["text.color"]), **shared)  # fmt: skip
            ax.text(centre, top + pad + token_line + id_line / 2, str(number), fontsize=_ID_SIZE,
                    color=str(rc["xtick.color"]), **shared)  # fmt: skip

    listed = [f"“{t}” {i}" for t, i in zip(texts[:40], numbers[:40], strict=False)]
    rest = f"; and {n - 40} more" if n > 40 else ""
    seen = "".join(texts[:40])
    key = ", ".join(f"{mark} {what}" for mark, what in _SAID.items() if mark in seen)
    key = f" ({key})" if key else ""
    count = f"{_count(n_chars, 'character')}, " if n_chars is not None else ""
    said = [
        f"{title}. The text as {_count(n, 'token')}, a box each with its id beneath, neighbours in "
        f"alternating greys: {count}{_count(n_bytes, 'byte')}, {per_token:.2f} bytes per token",
        ("The tokens" if n <= 40 else "The first 40 tokens")
        + f" with their ids{key}: "
        + "; ".join(listed)
        + rest,
    ]
    table = Table(
        caption=f"{title}: every token",
        columns=("token", "id", "bytes"),
        rows=tuple(str(k) for k in range(n)),
        cells=tuple((t, str(i), str(len(c))) for t, i, c in zip(texts, numbers, chunks, strict=True)),
        corner="position",
    )
    describe(fig, join_sentences(said), [table])
    return fig
