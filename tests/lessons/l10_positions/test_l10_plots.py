"""attention_lessons.l10_positions.plots: the RoPE figure draws the rotations and scores attnlib computes,
each in its meaning's colour, and says the positions and the score in its text alternative.

The arrows, the curve and the marker are read back from Matplotlib and compared with rotations
written out in the test (2×2 rotation matrices), not with attnlib's own code path.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import alt
from matplotlib.colors import to_hex, to_rgb

from attention_lessons.kit import plots
from attention_lessons.kit.plots import palette
from attention_lessons.l10_positions.plots import (
    ROPE_KEY,
    ROPE_QUERY,
    rope_figure,
    rope_limits,
    rope_score_limits,
    rope_text,
)
from attnlib.positions import rope

fmt = plots.format_cell


def rotation(angle: float) -> np.ndarray:
    return np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


def deltas(arrows) -> np.ndarray:
    return np.column_stack([np.ravel(arrows.quiver.U), np.ravel(arrows.quiver.V)])


def contrast(a, b) -> float:
    def luminance(colour):
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted([luminance(a), luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize(("m", "n", "offset"), [(2, 5, 0), (2, 5, 7), (12, 0, 3), (0.5, 0.25, 0)])
@pytest.mark.parametrize("style", ["light", "dark"])
def test_rope_figure_draws_the_rotations_and_the_score(m, n, offset, style):
    q, k = np.array(ROPE_QUERY), np.array(ROPE_KEY)
    view = rope_figure(q, k, m, n, offset, style=style)
    turned_q, turned_k = rotation(m + offset) @ q, rotation(n + offset) @ k
    score = turned_q @ turned_k
    np.testing.assert_array_equal(deltas(view.before), [q, k])
    np.testing.assert_allclose(deltas(view.after), [turned_q, turned_k], atol=1e-12)
    np.testing.assert_allclose(np.column_stack(view.marker.get_data()), [[m - n, score]], atol=1e-12)
    distances, scores = view.curve.get_data()
    np.testing.assert_allclose(scores, [(rotation(d) @ q) @ k for d in distances], atol=1e-12)
    assert view.readout.get_text() == rope_text(m + offset, n + offset, score)
    assert view.readout.get_text().splitlines()[-1].startswith("score = ")
    assert [label.get_text() for label in view.after.labels] == [
        f"q at m = {m + offset:g}",
        f"k at n = {n + offset:g}",
    ]
    assert view.arrows_ax.get_xlim() == rope_limits(q, k) and view.curve_ax.get_ylim() == rope_score_limits(
        q, k
    )
    background = plots.STYLES[style]["axes.facecolor"]
    for label in view.after.labels:
        assert contrast(label.get_color(), background) >= 4.5
    plots.png_bytes(view.figure)
    readout = view.readout.get_bbox_patch().get_window_extent()
    frame = view.arrows_ax.get_window_extent()
    for label in view.after.labels:
        box = label.get_window_extent()
        assert not box.overlaps(readout), label.get_text()
        assert (
            frame.x0 - 1 <= box.x0
            and box.x1 <= frame.x1 + 1
            and frame.y0 - 1 <= box.y0
            and box.y1 <= frame.y1 + 1
        )


def test_an_offset_turns_the_arrows_but_keeps_the_marker():
    still = rope_figure(offset=0)
    moved = rope_figure(offset=5)
    assert not np.allclose(deltas(still.after), deltas(moved.after))
    np.testing.assert_allclose(moved.marker.get_data(), still.marker.get_data(), atol=1e-12)


def test_rope_text_uses_real_minus_signs():
    assert rope_text(2, 5, -0.8484) == "m = 2, n = 5\nm − n = −3\nscore = −0.848"
    assert rope_text(9.5, 1, 0.25) == "m = 9.5, n = 1\nm − n = 8.5\nscore = +0.250"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), {}, r"shape \(2,\)"),
        (([1.0, np.nan], [0.0, 1.0]), {}, "query has 1 non-finite"),
        (([1.0, 0.0], "k"), {}, "key has dtype"),
        ((), {"max_distance": 0}, "max_distance must be a positive number"),
        ((), {"style": "sepia"}, "style must be one of"),
    ],
)
def test_rope_figure_bad_input_is_a_clear_error(args, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        rope_figure(*args, **kwargs)


# --- colours and text alternative ----------------------------------------------------------------


def _drawn_colours(fig):
    """The colours of every line, patch and collection drawn (not text, not colour maps)."""
    colours = set()
    for ax in fig.axes:
        for line in ax.lines:
            colours.add(to_hex(line.get_color()))
        for patch in ax.patches:
            colours.add(to_hex(patch.get_facecolor(), keep_alpha=False))
        for coll in ax.collections:
            if coll.get_array() is None:  # not a colour-mapped mesh
                colours.update(to_hex(c, keep_alpha=False) for c in coll.get_facecolor())
    return colours


def test_the_rope_figure_draws_query_key_and_raw_score_in_their_colours_only():
    drawn = rope_figure([1.0, 0.2], [0.6, 0.8], 2, 5, offset=0, max_distance=6)
    meanings = {palette.meaning_of(c) for c in _drawn_colours(drawn.figure)} - {None}
    assert meanings == {"query", "key", "raw score"}
    assert to_hex(drawn.curve.get_color()) == to_hex(plots.color("raw score"))


def test_rope_figure_gives_the_positions_and_the_score():
    drawn = rope_figure(ROPE_QUERY, ROPE_KEY, 2, 5, offset=1)
    score = float(rope(np.asarray(ROPE_QUERY, float), [3.0]) @ rope(np.asarray(ROPE_KEY, float), [6.0]))
    text = alt(drawn.figure)
    assert "m = 3" in text and "n = 6" in text and "m − n = -3" in text
    assert f"score {fmt(score, 3)}" in text
