"""Lesson 17's figures: each writes its text alternative from the numbers it draws, tells its series
and its neighbouring tokens apart by more than colour, and names bad input."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from conftest import inside
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle

from attention_lessons.kit import plots
from attention_lessons.kit.plots import contrast_ratio, palette
from attention_lessons.l17_tokens import plots as figures
from attnlib import tokens

MERGES = [0, 64, 256, 1024, 4096]
BYTES_PER_TOKEN = {
    "Shakespeare (Hamlet, held out)": [1.0, 1.48, 1.93, 2.46, 2.9],
    "Python code": [1.0, 1.29, 1.5, 1.74, 2.04],
    "Chinese": [1.0, 1.0, 1.0, 1.0, 1.0],
}
SMOLLM2 = {"Shakespeare (Hamlet, held out)": 3.61, "Chinese": 1.58}


def _texts_outside(fig) -> list[str]:
    """The texts of ``fig`` that reach outside it, as drawn (empty: none)."""
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    texts = [t for ax in fig.axes for t in (*ax.texts, ax.title, ax.xaxis.label, ax.yaxis.label)]
    return [
        t.get_text() for t in texts if t.get_text() and not inside(t.get_window_extent(renderer), fig.bbox)
    ]


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_compression_figure_gives_each_texts_last_value_and_the_reference(style):
    fig = figures.compression_figure(MERGES, BYTES_PER_TOKEN, reference=SMOLLM2, style=style)
    text = plots.description(fig).text
    assert "against the merges learned, 0, 64, 256, 1,024 and 4,096, for 3 texts" in text
    assert "At 0 merges every text has 1.00 bytes per token: every token is one byte." in text
    assert "At 4,096 merges: Shakespeare (Hamlet, held out) 2.90; Python code 2.04; Chinese 1.00." in text
    assert "SmolLM2's tokenizer (48,900 merges), hollow markers on a dashed line: " in text
    assert "Shakespeare (Hamlet, held out) 3.61; Chinese 1.58." in text
    (table,) = plots.description(fig).tables
    assert table.columns[0] == "0 merges" and table.columns[-1] == "SmolLM2 (48,900 merges)"
    assert table.rows == tuple(BYTES_PER_TOKEN)
    assert table.cells[1] == ("1.00", "1.29", "1.50", "1.74", "2.04", "—")
    assert table.cells[2][-1] == "1.58"
    assert not _texts_outside(fig)
    assert plots.png_bytes(fig).startswith(b"\x89PNG")


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_compression_figure_tells_texts_apart_by_marker_and_label_not_colour_alone(style):
    fig = figures.compression_figure(MERGES, BYTES_PER_TOKEN, reference=SMOLLM2, style=style)
    ax = fig.axes[0]
    background = plots.STYLES[style]["axes.facecolor"]
    curves = [line for line in ax.get_lines() if line.get_label() in BYTES_PER_TOKEN]
    assert [line.get_label() for line in curves] == list(BYTES_PER_TOKEN)
    assert len({line.get_marker() for line in curves}) == len(curves)
    for line in curves:
        assert palette.meaning_of(line.get_color()) is None  # no meaning of the palette's
        assert contrast_ratio(line.get_color(), background) >= palette.MIN_CONTRAST
    # a direct label per text, in the right margin, naming its last value (and the reference's)
    labels = [t.get_text() for t in ax.texts]
    assert "Shakespeare (Hamlet, held out)  2.90  (SmolLM2 3.61)" in labels
    assert "Python code  2.04" in labels
    assert "SmolLM2 (48,900 merges)" in labels
    # the reference: a dashed line in the reference colour, hollow marks in each text's marker
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and to_hex(dashed[0].get_color()) == to_hex(plots.color("reference"))
    hollow = [line for line in ax.get_lines() if list(line.get_xdata()) == [48_900]]
    assert [h.get_marker() for h in hollow] == [curves[0].get_marker(), curves[2].get_marker()]
    assert [float(h.get_ydata()[0]) for h in hollow] == [3.61, 1.58]


def test_the_compression_figure_without_a_reference_or_a_zero():
    fig = figures.compression_figure([64, 256], {"French": [1.2, 1.36]})
    text = plots.description(fig).text
    assert "merges learned, 64 and 256, for 1 text." in text
    assert "At 64 merges: French 1.20." in text and "SmolLM2" not in text
    (table,) = plots.description(fig).tables
    assert table.columns == ("64 merges", "256 merges") and table.cells == (("1.20", "1.36"),)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"merges": [0]}, ValueError, "at least two merge counts"),
        ({"merges": "0, 64"}, TypeError, "merges must be a list"),
        ({"merges": [0, 64, 64, 1024, 4096]}, ValueError, "merges must be increasing"),
        ({"merges": [0, -64, 256, 1024, 4096]}, ValueError, r"merges\[1\] must be at least 0"),
        ({"merges": [0, 64.5, 256, 1024, 4096]}, TypeError, r"merges\[1\] must be a whole number"),
        ({"bytes_per_token": {}}, ValueError, "bytes_per_token must be a non-empty dict"),
        (
            {"bytes_per_token": {"a": [1.0, 2.0]}},
            ValueError,
            r"bytes_per_token\['a'\] has 2 values; merges has 5",
        ),
        (
            {"bytes_per_token": {"a": [1, 2, float("nan"), 3, 4]}},
            ValueError,
            r"\['a'\]\[2\] must be a finite",
        ),
        ({"bytes_per_token": {"a": [1, 0.5, 2, 3, 4]}}, ValueError, r"\['a'\]\[1\] must be at least 1"),
        ({"bytes_per_token": {"a": [1, "2", 2, 3, 4]}}, TypeError, r"\['a'\]\[1\] must be a real number"),
        ({"bytes_per_token": {"a": "12345"}}, TypeError, "must be a list of numbers"),
        ({"bytes_per_token": {str(k): [1] * 5 for k in range(9)}}, ValueError, "at most 8"),
        ({"reference": {"German": 2.0}}, ValueError, r"not in bytes_per_token: \['German'\]"),
        ({"reference": {"Chinese": float("inf")}}, ValueError, r"reference\['Chinese'\] must be a finite"),
        ({"reference": [2.0]}, TypeError, "reference must be a dict"),
        ({"reference_merges": 0}, ValueError, "reference_merges must be at least 1"),
        ({"style": "sepia"}, ValueError, "style must be one of"),
    ],
)
def test_the_compression_figure_names_bad_input(kwargs, error, match):
    arguments = {"merges": MERGES, "bytes_per_token": BYTES_PER_TOKEN, "reference": SMOLLM2, **kwargs}
    with pytest.raises(error, match=match):
        figures.compression_figure(**arguments)


def _tokens(text: str, n_merges: int) -> tuple[list[bytes], list[int]]:
    """``text``'s tokens' bytes and ids with merges learned from it."""
    tokenizer = tokens.Tokenizer.from_merges(tokens.train(text, n_merges, rule="gpt2"), rule="gpt2")
    ids = tokenizer.encode(text)
    return [tokenizer.vocab[i] for i in ids], ids


TEXT = "the cat sat on the mat,\nthe dog sat on the cat: $x$ costs 2 €"


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_token_strip_counts_the_tokens_and_lists_them(style):
    pieces, ids = _tokens(TEXT, 12)
    fig = figures.token_strip_figure(pieces, ids, title="A sentence, cut by 12 merges", style=style)
    text = plots.description(fig).text
    n_bytes = len(TEXT.encode("utf-8"))
    assert text.startswith("A sentence, cut by 12 merges. The text as ")
    assert (
        f"The text as {len(ids)} tokens, a box each with its id beneath, neighbours in alternating greys: "
        f"{len(TEXT)} characters, {n_bytes} bytes, {n_bytes / len(ids):.2f} bytes per token." in text
    )
    assert "(␣ is a space, ↵ a newline, � bytes that make no whole character)" in text  # € cut in bytes
    assert f"“the” {ids[0]}; “␣cat” {ids[1]};" in text  # "the" and " cat" were merged whole
    assert "“↵” 10" in text and "; and " not in text  # fewer than 40 tokens: all of them
    (table,) = plots.description(fig).tables
    assert table.rows == tuple(str(k) for k in range(len(ids)))
    assert table.cells[1] == ("␣cat", str(ids[1]), "4")
    assert not _texts_outside(fig)
    assert plots.png_bytes(fig).startswith(b"\x89PNG")


def test_the_token_strip_tells_neighbours_apart_by_fill_and_border_and_starts_a_row_after_a_newline():
    pieces, ids = _tokens(TEXT, 12)
    fig = figures.token_strip_figure(pieces, ids, title="t")
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(boxes) == len(ids)
    fills = [to_hex(b.get_facecolor()) for b in boxes]
    assert all(a != b for a, b in pairwise(fills)) and len(set(fills)) == 2
    assert all(b.get_linewidth() > 0 for b in boxes)
    edge = plots.STYLES["light"]["axes.edgecolor"]
    assert all(to_hex(b.get_edgecolor()) == to_hex(edge) for b in boxes)
    for left, right in pairwise(boxes):  # a gap between neighbours in a row
        if left.get_y() == right.get_y():
            assert right.get_x() > left.get_x() + left.get_width()
    newline = pieces.index(b"\n")
    assert boxes[newline + 1].get_x() == boxes[0].get_x() and boxes[newline + 1].get_y() > boxes[0].get_y()
    shown = [t.get_text() for t in ax.texts]
    assert "␣$" in shown and "$" in shown  # drawn as typed, not as mathtext
    assert all(not t.get_parse_math() for t in ax.texts)


def test_a_row_ends_after_a_token_that_holds_a_newline_as_in_the_explorer():
    fig = figures.token_strip_figure([b"if", b":", b"\n   ", b" x"], [1, 2, 3, 4], title="Code")
    boxes = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert [b.get_y() for b in boxes[:3]] == [boxes[0].get_y()] * 3
    assert boxes[3].get_x() == boxes[0].get_x() and boxes[3].get_y() > boxes[0].get_y()
    assert "↵␣␣␣" in [t.get_text() for t in fig.axes[0].texts]


def test_the_token_strip_wraps_a_long_text_and_cuts_a_long_token():
    pieces = [b" the"] * 60 + [b" " * 40]
    fig = figures.token_strip_figure(pieces, [267] * 60 + [999], title="Wrapped", width=4.0)
    boxes = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len({b.get_y() for b in boxes}) > 3  # several rows
    right = fig.axes[0].get_xlim()[1]
    assert all(b.get_x() + b.get_width() <= right for b in boxes)
    assert "␣" * 23 + "…" in [t.get_text() for t in fig.axes[0].texts]
    assert "61 tokens, a box each" in plots.description(fig).text
    assert "280 characters, 280 bytes, 4.59 bytes per token" in plots.description(fig).text
    assert "The first 40 tokens with their ids (␣ is a space): " in plots.description(fig).text
    assert plots.description(fig).text.endswith("; and 21 more.")
    assert plots.description(fig).tables[0].cells[60][0] == "␣" * 40  # the table has it whole


def test_a_token_cut_inside_a_character_is_shown_as_the_replacement_character():
    pieces = [bytes([b]) for b in "é!".encode()]
    fig = figures.token_strip_figure(pieces, list("é!".encode()), title="Bytes")
    text = plots.description(fig).text
    assert "2 characters, 3 bytes" in text and "“�” 195; “�” 169; “!” 33" in text
    assert "� bytes that make no whole character" in text
    fig = figures.token_strip_figure(pieces[:1], [195], title="Half a character")
    # no character count for half of one
    assert (
        "The text as 1 token, a box each with its id beneath, neighbours in alternating greys: 1 byte,"
        in (plots.description(fig).text)
    )


def test_shown_makes_whitespace_and_control_characters_visible():
    assert figures.shown(b" a\tb\r\n") == "␣a⇥b⏎↵"
    assert figures.shown(b"\x00\x1b[") == "\\x00\\x1b["
    assert figures.shown("注".encode()) == "注"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"pieces": [b"a"], "ids": [1, 2]}, ValueError, "same length .* got 1 pieces and 2 ids"),
        ({"pieces": [], "ids": []}, ValueError, "pieces is empty"),
        ({"pieces": ["a", "b"]}, TypeError, r"pieces\[0\] must be bytes .* encode it"),
        ({"pieces": [b"a", 3]}, TypeError, r"pieces\[1\] must be bytes"),
        ({"pieces": [b"a", b""]}, ValueError, r"pieces\[1\] is empty"),
        ({"pieces": b"ab"}, TypeError, "pieces must be a list"),
        ({"ids": [97, 1.5]}, TypeError, r"ids\[1\] must be a whole number"),
        ({"ids": [97, -1]}, ValueError, r"ids\[1\] must be a token id"),
        ({"ids": "ab"}, TypeError, "ids must be a list"),
        ({"pieces": [b"a"] * 401, "ids": [97] * 401}, ValueError, "at most 400"),
        ({"title": ""}, TypeError, "title must be a non-empty str"),
        ({"width": 2}, ValueError, "width must be at least 3"),
        ({"width": float("nan")}, ValueError, "width must be a finite"),
        ({"style": "sepia"}, ValueError, "style must be one of"),
    ],
)
def test_the_token_strip_names_bad_input(kwargs, error, match):
    arguments = {"pieces": [b"a", b"b"], "ids": [97, 98], "title": "t", **kwargs}
    with pytest.raises(error, match=match):
        figures.token_strip_figure(**arguments)


def test_the_ids_may_be_a_numpy_array():
    fig = figures.token_strip_figure([b"a", b"b"], np.array([97, 98]), title="t")
    assert "“a” 97; “b” 98" in plots.description(fig).text
