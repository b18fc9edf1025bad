"""attention_lessons.l07_whole_picture.plots: the overview figure draws the numbers of the attention steps
(read back from Matplotlib and compared with a reference computed in plain numpy), in the style of
its figure, with its arrow labels clear of the arrows, and says what it shows in its text
alternative."""

import matplotlib as mpl
import numpy as np
import pytest
from conftest import (
    FOREIGN_RC,
    STYLES,
    alt,
    cell_texts,
    expected_texts,
    inside,
    label_problems,
    mesh_values,
    quiver_deltas,
    quiver_tails,
    softmax_rows,
    tables,
)
from matplotlib.colors import to_rgba

from attention_lessons.kit import examples, plots
from attention_lessons.l07_whole_picture.plots import attention_figure
from attnlib import attention_steps, qkv

fmt = plots.format_cell


@pytest.fixture
def four_tokens():
    """The four 2D tokens, their attention steps and an independent reference computation."""
    ex = examples.four_tokens_2d()
    steps = attention_steps(*qkv(ex.X, ex.W_q, ex.W_k, ex.W_v))
    raw = ex.X @ ex.X.T  # identity projections: Q = K = V = X
    weights = softmax_rows(raw / np.sqrt(2))
    return ex, steps, {"raw": raw, "weights": weights, "output": weights @ ex.X}


# --- drawing in the style of the figure ----------------------------------------------------------


def test_figure_functions_draw_in_their_style_whatever_the_rcparams(four_tokens):
    ex, steps, _ = four_tokens
    dark = plots.STYLES["dark"]
    with mpl.rc_context(FOREIGN_RC):
        view = attention_figure(steps, ex.tokens, ex.X, style="dark")
    plots.png_bytes(view.figure)
    for drawn in (view.score_map, view.weight_map):
        labels = [t for t in drawn.colorbar.ax.get_yticklabels() if t.get_text()]
        assert {to_rgba(t.get_color()) for t in labels} == {to_rgba(dark["ytick.color"])}
        assert [to_rgba(c) for c in drawn.mesh.get_edgecolor()] == [to_rgba(dark["axes.facecolor"])]
    for ax in (view.embeddings, view.scores, view.weights, view.context):
        assert ax.title.get_fontweight() == "bold"
        assert to_rgba(ax.title.get_color()) == to_rgba(dark["text.color"])
    for ax in (view.embeddings, view.context):
        assert {to_rgba(line.get_color()) for line in ax.lines} == {to_rgba(dark["axes.edgecolor"])}


# --- where the arrow labels go -------------------------------------------------------------------


def lesson_07(style):
    four = examples.four_tokens_2d()
    steps = attention_steps(*qkv(four.X, four.W_q, four.W_k, four.W_v))
    view = attention_figure(steps, four.tokens, four.X, style=style)
    return view.figure, [view.embeddings, view.context]


LESSON_CASES = {
    "lesson 07 light": lambda: lesson_07("light"),
    "lesson 07 dark": lambda: lesson_07("dark"),
}


@pytest.mark.parametrize("case", list(LESSON_CASES))
def test_lesson_arrow_labels_sit_at_their_own_tips_clear_of_every_arrow(case):
    fig, axes = LESSON_CASES[case]()
    plots.png_bytes(fig)
    for ax in axes:
        assert label_problems(fig, ax) == [], ax.get_title()


# --- attention_figure ----------------------------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
def test_attention_figure_shows_the_attention_steps(four_tokens, style):
    ex, steps, ref = four_tokens
    view = attention_figure(steps, ex.tokens, ex.X, style=style)

    # top left: the embeddings
    np.testing.assert_array_equal(quiver_deltas(view.embedding_arrows), ex.X)
    np.testing.assert_array_equal(quiver_tails(view.embedding_arrows), np.zeros((4, 2)))
    # top right: the raw scores, exactly attention_steps' and X Xᵀ
    np.testing.assert_array_equal(mesh_values(view.score_map), steps.raw_scores)
    np.testing.assert_allclose(mesh_values(view.score_map), ref["raw"], atol=1e-12)
    assert cell_texts(view.score_map) == expected_texts(ref["raw"])
    # bottom left: the weights, rows summing to 1, on a fixed 0..1 colour scale
    np.testing.assert_array_equal(mesh_values(view.weight_map), steps.weights)
    np.testing.assert_allclose(mesh_values(view.weight_map), ref["weights"], atol=1e-12)
    np.testing.assert_allclose(mesh_values(view.weight_map).sum(axis=1), 1.0)
    assert cell_texts(view.weight_map) == expected_texts(ref["weights"])
    assert view.weight_map.mesh.get_clim() == (0, 1)
    # bottom right: the output as arrows, the embeddings faint and unlabelled behind them
    np.testing.assert_array_equal(quiver_deltas(view.context_arrows), steps.output)
    np.testing.assert_allclose(quiver_deltas(view.context_arrows), ref["output"], atol=1e-12)
    np.testing.assert_array_equal(quiver_deltas(view.faint_arrows), ex.X)
    assert view.faint_arrows.quiver.get_alpha() == 0.25
    assert [t.get_text() for t in view.faint_arrows.labels] == [""] * 4
    for arrows in (view.embedding_arrows, view.context_arrows):
        assert [t.get_text() for t in arrows.labels] == list(ex.tokens)
    # both arrow panels on the same square limits
    assert view.embeddings.get_xlim() == view.embeddings.get_ylim() == view.context.get_xlim()
    # four panels in reading order on a 2×2 grid, plus the two colour bars
    panels = [view.embeddings, view.scores, view.weights, view.context]
    grid = [(ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start) for ax in panels]
    assert grid == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert view.figure.axes == panels
    assert view.score_map.ax is view.scores and view.weight_map.ax is view.weights
    assert [ax.child_axes for ax in panels] == [
        [],
        [view.score_map.colorbar.ax],
        [view.weight_map.colorbar.ax],
        [],
    ]
    assert view.scores.get_title().startswith("2. Raw scores")
    assert view.weights.get_title().startswith("3. Weights")
    assert view.figure.get_facecolor() == to_rgba(plots.STYLES[style]["figure.facecolor"])
    assert view.embeddings.get_facecolor() == to_rgba(plots.STYLES[style]["axes.facecolor"])


@pytest.mark.parametrize("style", STYLES)
def test_attention_figure_colour_bars_are_as_tall_as_the_heatmaps(four_tokens, style):
    ex, steps, _ = four_tokens
    view = attention_figure(steps, ex.tokens, ex.X, style=style)
    fig = view.figure
    plots.png_bytes(fig)
    for drawn in (view.score_map, view.weight_map):
        bar, cells = drawn.colorbar.ax.get_window_extent(), drawn.ax.get_window_extent()
        assert (bar.y0, bar.height) == pytest.approx((cells.y0, cells.height), abs=0.5)
        assert 0 < bar.x0 - cells.x1 < 0.2 * fig.dpi
        assert bar.y1 < drawn.ax.title.get_window_extent().y0  # below its panel's title
    for ax in fig.axes:  # nothing cut off at the edges: labels, titles, colour bars
        assert inside(ax.get_tightbbox(), fig.bbox, tolerance=0)


def test_attention_figure_labels_can_stay_above_their_tips(four_tokens):
    ex, steps, _ = four_tokens
    view = attention_figure(steps, ex.tokens, ex.X, spread_labels=False)
    assert not view.embedding_arrows.spread_labels and not view.context_arrows.spread_labels
    assert attention_figure(steps, ex.tokens, ex.X).context_arrows.spread_labels


@pytest.mark.parametrize(
    ("tokens", "embeddings_shape", "values_dim"),
    [
        (("a", "b", "c"), (4, 2), 2),  # one label short
        (("a", "b", "c", "d"), (4, 3), 2),  # embeddings not 2D
        (("a", "b", "c", "d"), (4, 2), 3),  # outputs not 2D
    ],
)
def test_attention_figure_bad_input_is_a_clear_error(tokens, embeddings_shape, values_dim):
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, values_dim))
    steps = attention_steps(Q, K, V)
    with pytest.raises(ValueError, match=r"the overview needs self-attention of n tokens in 2D"):
        attention_figure(steps, tokens, rng.normal(size=embeddings_shape))


def test_attention_figure_wants_attention_steps_and_a_known_style(four_tokens):
    ex, steps, _ = four_tokens
    with pytest.raises(ValueError, match=r"style must be one of"):
        attention_figure(steps, ex.tokens, ex.X, style="sepia")
    with pytest.raises(TypeError, match=r"steps must be what attnlib.attention_steps returns, got tuple"):
        attention_figure((steps.output, steps.weights), ex.tokens, ex.X)


# --- text alternative ----------------------------------------------------------------------------


def test_attention_figure_names_each_querys_largest_weight_and_the_outputs():
    ex = examples.four_tokens_2d()
    steps = attention_steps(*qkv(ex.X, ex.W_q, ex.W_k, ex.W_v))
    view = attention_figure(steps, ex.tokens, ex.X)
    text = alt(view.figure)
    assert text.startswith(f"Self-attention of 4 tokens ({', '.join(ex.tokens)}) in four panels")
    for i, token in enumerate(ex.tokens):
        j = int(np.argmax(steps.weights[i]))
        assert f"{token} → {ex.tokens[j]} {fmt(steps.weights[i, j])}" in text
        assert f"{token} ({fmt(steps.output[i, 0])}, {fmt(steps.output[i, 1])})" in text
    assert f"Raw scores from {fmt(steps.raw_scores.min())} to {fmt(steps.raw_scores.max())}" in text
    captions = [t.caption for t in tables(view.figure)]
    assert captions == [
        "1. Embeddings X",
        "2. Raw scores Q Kᵀ",
        "3. Weights softmax(Q Kᵀ/√d_k)",
        "4. Outputs (weights · V)",
    ]
    assert tables(view.figure)[3].cells[1] == (fmt(steps.output[1, 0]), fmt(steps.output[1, 1]))
