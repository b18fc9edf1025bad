"""Every figure's text alternative: what it shows and its key numbers, from the data it draws.

The expected numbers are computed here from the same inputs (with attnlib's numeric modules or
numpy), never typed in, and written the way the figures write them (``format_cell``).
"""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pytest
from matplotlib.figure import Figure

from attention_lessons.kit import examples, plots
from attention_lessons.kit.plots.artists import number
from attention_lessons.kit.plots.descriptions import MAX_ALT_LENGTH
from attention_lessons.l01_embeddings.plots import similarity_figure
from attention_lessons.l01_embeddings.similarity import similarity
from attention_lessons.l04_scaling.plots import scaling_figure
from attention_lessons.l04_scaling.scaling import D_K_VALUES, entropy, scaling_statistics
from attention_lessons.l05_softmax.plots import softmax_figure
from attention_lessons.l07_whole_picture.plots import attention_figure
from attention_lessons.l09_many_heads.plots import two_heads_figure
from attention_lessons.l10_positions.plots import ROPE_KEY, ROPE_QUERY, rope_figure
from attention_lessons.l12_attention_at_scale import at_scale
from attention_lessons.l13_real_model.plots import heads_grid_figure
from attnlib import attention_steps, qkv, softmax
from attnlib.multihead import multi_head_attention
from attnlib.positions import rope

fmt = plots.format_cell


def alt(fig: Figure) -> str:
    return plots.description(fig).text


def tables(fig: Figure) -> tuple[plots.Table, ...]:
    return plots.description(fig).tables


# --- the drawing tools -------------------------------------------------------------------------------


def test_a_small_heatmap_lists_every_value():
    fig, axes = plots.figure()
    matrix = softmax(np.array([[2.0, 0.5, -1.0], [0.1, 0.3, 0.2]]))
    plots.heatmap(axes[0, 0], matrix, ["it", "she"], ["animal", "street", "road"], title="Weights")
    text = alt(fig)
    assert text.startswith("Weights: heatmap of 2 queries × 3 keys.")
    for row, name in zip(matrix, ["it", "she"], strict=True):
        listed = ", ".join(
            f"{key} {fmt(v)}" for key, v in zip(["animal", "street", "road"], row, strict=True)
        )
        assert f"{name}: {listed}" in text
    (table,) = tables(fig)
    assert table.rows == ("it", "she") and table.columns == ("animal", "street", "road")
    assert table.cells == tuple(tuple(fmt(v) for v in row) for row in matrix)


def test_a_larger_heatmap_names_each_rows_largest_and_holds_the_rest_in_a_table():
    rng = np.random.default_rng(3)
    matrix = softmax(rng.normal(size=(4, 6)))
    rows, cols = [f"q{i}" for i in range(4)], [f"k{j}" for j in range(6)]
    fig, axes = plots.figure()
    plots.heatmap(axes[0, 0], matrix, rows, cols, title="W")
    text = alt(fig)
    for i, r in enumerate(rows):
        j = int(np.argmax(matrix[i]))
        assert f"{r}: {cols[j]} {fmt(matrix[i, j])}" in text
    assert "table below" in text
    assert tables(fig)[0].cells[2][5] == fmt(matrix[2, 5])


def test_a_big_heatmap_names_its_extremes_and_counts_masked_cells():
    n = 20
    scores = np.arange(n * n, dtype=float).reshape(n, n) / 10
    scores[np.triu_indices(n, 1)] = -np.inf  # causal mask
    labels = [str(i) for i in range(n)]
    fig, axes = plots.figure()
    plots.heatmap(axes[0, 0], scores, labels, labels, title="causal scores")
    finite = scores[np.isfinite(scores)]
    text = alt(fig)
    assert f"Largest {fmt(finite.max())} (19, 19); smallest {fmt(finite.min())} (0, 0)" in text
    assert f"{n * (n - 1) // 2} of {n * n} cells masked (−∞, hatched)" in text
    assert axes[0, 0].patch.get_hatch() == "//"  # masked cells differ by more than their colour


def test_a_heatmap_without_masked_cells_is_not_hatched():
    _, axes = plots.figure()
    plots.heatmap(axes[0, 0], np.eye(2), ["a", "b"], ["x", "y"])
    assert axes[0, 0].patch.get_hatch() is None


def test_vectors_list_their_ends_and_faint_unnamed_arrows_add_nothing():
    points = np.array([[1.0, 0.5], [-0.25, 2.0], [0.0, -1.5]])
    fig, axes = plots.figure()
    ax = axes[0, 0]
    plots.vectors(ax, points, ["cat", "dog", "it"], title="Three tokens")
    plots.vectors(ax, points * 0.5, ["", "", ""], alpha=0.2)
    expected = ", ".join(
        f"{n} ({fmt(x)}, {fmt(y)})" for n, (x, y) in zip(["cat", "dog", "it"], points, strict=True)
    )
    assert alt(fig) == f"Three tokens: 3 arrows from the origin: {expected}."


def test_many_vectors_go_into_a_table():
    points = np.random.default_rng(0).normal(size=(12, 2))
    fig, axes = plots.figure()
    plots.vectors(axes[0, 0], points, [f"t{i}" for i in range(12)], title="Twelve")
    (table,) = tables(fig)
    assert table.columns == ("x", "y")
    assert table.cells[7] == (fmt(points[7, 0]), fmt(points[7, 1]))


def test_a_panel_drawn_with_matplotlib_is_read_from_its_data():
    dims = np.array([1, 4, 16, 64])
    variance = dims * 1.07
    fig, axes = plots.figure()
    ax = axes[0, 0]
    ax.plot(dims, variance, "o-", label="raw scores")
    ax.bar([0, 1], [0.25, 0.75], label="weights")
    ax.set_xticks([0, 1], ["h1", "h2"])
    ax.axhline(1.0)  # a reference line: not data
    ax.set_title("Variance")
    ax.set_xlabel("d_k")
    text = alt(fig)
    assert text.startswith("Variance (x: d_k).")
    assert "weights: h1: 0.25, h2: 0.75" in text
    assert (
        f"raw scores: 4 points, x from 1 to 64, y from {number(variance[0])} to {number(variance[-1])}"
        in text
    )
    assert text.count("points") == 1


def test_a_figure_of_several_panels_says_how_many():
    fig, axes = plots.figure(1, 2)
    plots.heatmap(axes[0, 0], np.eye(2), ["a", "b"], ["x", "y"], title="left")
    plots.vectors(axes[0, 1], np.eye(2), ["u", "v"], title="right")
    assert re.match(r"2 panels\. left: .*\. right: 2 arrows", alt(fig))


def test_a_spare_panel_switched_off_is_left_out():
    fig, axes = plots.figure(1, 2)
    plots.heatmap(axes[0, 0], np.eye(2), ["a", "b"], ["x", "y"], title="only")
    axes[0, 1].set_axis_off()
    assert alt(fig).startswith("only: heatmap")


def test_a_figure_of_many_panels_keeps_its_text_short_and_its_numbers_in_tables():
    rng = np.random.default_rng(5)
    matrices = [softmax(rng.normal(size=(3, 3))) for _ in range(6)]
    tokens = ["she", "likes", "coffee"]
    fig, axes = plots.figure(2, 3)
    for k, (ax, m) in enumerate(zip(axes.flat, matrices, strict=True)):
        plots.heatmap(ax, m, tokens, tokens, title=f"head {k}")
    described = plots.description(fig)
    assert len(described.text) <= 2 * MAX_ALT_LENGTH
    for k, m in enumerate(matrices):
        assert f"head {k}: heatmap of 3 queries × 3 keys, values from {fmt(m.min())} to {fmt(m.max())}" in (
            described.text
        )
        assert described.tables[k].cells == tuple(tuple(fmt(v) for v in row) for row in m)
    assert described.text.endswith("Every value is in the tables below the figure.")


def test_table_html_has_row_and_column_headers_and_escapes():
    table = plots.Table("a < b", ("k&1",), ("q",), (("0.50",),), corner="queries")
    page = table.html()
    assert "<caption>a &lt; b</caption>" in page
    assert '<th scope="col">k&amp;1</th>' in page and '<th scope="row">q</th><td>0.50</td>' in page


def test_bad_descriptions_are_clear_errors():
    with pytest.raises(ValueError, match="rows and"):
        plots.Table("t", ("a", "b"), ("r",), (("1",),))
    with pytest.raises(ValueError, match="needs text"):
        plots.Description("   ")
    with pytest.raises(ValueError, match="Axes or a Figure"):
        plots.describe("not a figure", "text")  # type: ignore[arg-type]


def test_figure_bundle_carries_the_same_text_in_every_form():
    fig, axes = plots.figure()
    plots.heatmap(axes[0, 0], np.array([[0.5, 0.5]]), ["q"], ['k "1"', "k2"], title="W")
    data, metadata = plots.figure_bundle(fig, dpi=20)
    text = alt(fig)
    assert metadata == {"image/png": {"alt": text}}
    assert data["text/plain"] == text
    assert f'alt="{html.escape(text)}"' in data["text/html"]
    assert "<details><summary>" in data["text/html"] and "<table>" in data["text/html"]


def test_raw_and_scaled_differ_by_more_than_colour():
    view = scaling_figure(64)
    assert {bar.get_hatch() for bar in view.raw_bars} == {plots.RAW_HATCH}
    assert {bar.get_hatch() for bar in view.scaled_bars} == {None}
    assert view.raw_hist.get_hatch() == plots.RAW_HATCH and view.scaled_hist.get_hatch() is None
    assert view.raw_marker.get_marker() != view.scaled_marker.get_marker()
    raw_line, scaled_line = view.variance.lines[:2]
    assert raw_line.get_marker() != scaled_line.get_marker()


@pytest.mark.parametrize("style", ["light", "dark"])
def test_figures_are_opaque_so_they_read_on_light_and_dark_pages(style):
    from PIL import Image

    fig, axes = plots.figure(figsize=(1.0, 1.0), style=style)
    plots.heatmap(axes[0, 0], np.eye(2), ["a", "b"], ["x", "y"], colorbar=False)
    with Image.open(io.BytesIO(plots.png_bytes(fig, dpi=20))) as image:
        alpha = np.asarray(image.convert("RGBA"))[..., 3]
    assert alpha.min() == 255


def test_no_text_colour_reads_on_both_white_and_a_dark_page():
    """Why figures are opaque rather than transparent (attention_lessons.kit.plots.styles)."""
    greys = [f"#{v:02x}{v:02x}{v:02x}" for v in range(256)]
    best = max(min(plots.contrast_ratio(g, "#ffffff"), plots.contrast_ratio(g, "#111111")) for g in greys)
    assert 4.3 < best < 4.5


# --- the lessons' figure functions -------------------------------------------------------------------


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


def test_similarity_figure_gives_the_numbers_of_its_box():
    a, b = np.array([2.0, 1.0]), np.array([0.5, 1.5])
    sim = similarity(a, b)
    text = alt(similarity_figure(a, b, labels=("q", "k")).figure)
    assert f"q ({fmt(2.0)}, {fmt(1.0)}), k ({fmt(0.5)}, {fmt(1.5)})" in text
    assert f"q·k = {fmt(sim.dot)}" in text and f"cos θ = {fmt(sim.cosine, 3)}" in text
    assert f"θ = {fmt(sim.angle_degrees, 1)}°" in text


def test_scaling_figure_gives_variances_and_weights():
    stats = scaling_statistics(64)
    view = scaling_figure(64)
    text = alt(view.figure)
    assert f"variance {stats.raw_variance:.2f} raw and {stats.scaled_variance:.2f} scaled" in text
    raw_w, scaled_w = stats.raw_weights[0], stats.scaled_weights[0]
    assert f"largest {raw_w.max():.3f} without scaling and {scaled_w.max():.3f} with it" in text
    assert f"entropy {float(entropy(raw_w)):.3f}" in text
    weights, variances = tables(view.figure)
    assert variances.rows == tuple(str(d) for d in D_K_VALUES)
    last = scaling_statistics(D_K_VALUES[-1])
    assert variances.cells[-1] == (f"{last.raw_variance:.2f}", f"{last.scaled_variance:.2f}")
    assert weights.cells[0] == (f"{raw_w[0]:.3f}", f"{scaled_w[0]:.3f}")


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_softmax_figure_lists_each_keys_score_and_weight(temperature):
    scores = np.array([2.0, 1.0, -np.inf, 0.1])
    labels = ["animal", "street", "masked", "it"]
    text = alt(softmax_figure(scores, labels, temperature=temperature).figure)
    weights = softmax(scores / temperature)
    assert f"T = {temperature:g} over 4 keys" in text
    for name, s, w in zip(labels, scores, weights, strict=True):
        assert f"{name} {fmt(s)} → {w:.3f}" in text


def test_softmax_figure_of_many_keys_puts_them_in_a_table():
    scores = np.linspace(-2, 2, 10)
    view = softmax_figure(scores, [f"k{i}" for i in range(10)])
    weights = softmax(scores)
    assert f"the largest weight is k9's, {weights[9]:.3f}" in alt(view.figure)
    (table,) = tables(view.figure)
    assert table.cells[3] == (fmt(scores[3]), f"{weights[3]:.3f}")


def test_two_heads_figure_names_each_heads_largest_weights_and_the_output():
    tokens = ["a", "b", "c"]
    X = np.array([[1.0, 0.5], [-1.0, 0.5], [0.5, -1.0]])
    rng = np.random.default_rng(1)
    W = {"W_q": rng.normal(size=(2, 4)), "W_k": rng.normal(size=(2, 4)), "W_v": rng.normal(size=(2, 4))}
    W_o = rng.normal(size=(4, 2))
    output, weights = multi_head_attention(X, X, W["W_q"], W["W_k"], W["W_v"], W_o, n_heads=2)
    text = alt(two_heads_figure(tokens, X, **W, W_o=W_o).figure)
    for h in range(2):
        j = int(np.argmax(weights[h][1]))
        assert f"head {h + 1}: " in text and f"b → {tokens[j]} {fmt(weights[h][1, j])}" in text
    assert f"c ({fmt(output[2, 0])}, {fmt(output[2, 1])})" in text


def test_heads_grid_figure_names_its_most_and_least_focused_heads():
    weights = softmax(np.random.default_rng(0).normal(size=(2, 3, 4, 4)) * 3)
    grid = heads_grid_figure(weights, ["[CLS]", "a", "b", "[SEP]"])
    focus = weights.max(axis=-1).mean(axis=-1)
    layer, head = np.unravel_index(np.argmax(focus), focus.shape)
    text = alt(grid.figure)
    assert f"{focus.max():.2f} in the most focused head (layer {layer}, head {head})" in text
    assert "2 layers × 3 heads, on 4 tokens" in text
    (table,) = tables(grid.figure)
    assert table.cells[1][2] == f"{focus[1, 2]:.2f}"


def test_rope_figure_gives_the_positions_and_the_score():
    drawn = rope_figure(ROPE_QUERY, ROPE_KEY, 2, 5, offset=1)
    score = float(rope(np.asarray(ROPE_QUERY, float), [3.0]) @ rope(np.asarray(ROPE_KEY, float), [6.0]))
    text = alt(drawn.figure)
    assert "m = 3" in text and "n = 6" in text and "m − n = -3" in text
    assert f"score {fmt(score, 3)}" in text


def test_at_scale_figures_say_what_they_count():
    text = alt(at_scale.tiles_figure(1000, 128))
    assert "no mask: 64 of 64 blocks computed; causal: 36 of 64 blocks computed" in text
    scores = np.array([1.0, 0.0, 5.0, 2.0, 7.0])
    text = alt(at_scale.online_softmax_figure(scores, 2))
    assert "running maximum m after each block is 1, 5, 7" in text
    grew = np.exp(5.0 - 7.0)
    assert f"× {np.exp(1.0 - 5.0):.3f} after block 2; × {grew:.3f} after block 3" in text
    text = alt(at_scale.memory_wall_figure([256, 65536, 131072]))
    assert f"from {number(256**2 * 4 / 2**30)} to {number(131072**2 * 4 / 2**30)} GiB" in text
    assert "pass a laptop's 16 GiB from n = 131072" in text
    row = {
        "threads": "1",
        "n": 256,
        "batch_heads": 1,
        "causal": False,
        "seconds": {"naive": 0.1, "tiled": 0.01, "torch": 0.02},
        "peak_bytes": {"naive": 2**20, "tiled": 2**18, "torch": 2**17},
    }
    fig = at_scale.benchmark_figure({"rows": [row]}, batch_heads=1)
    expected = "At n = 256, one thread each: naive attnlib 100 ms, tiled attnlib 10 ms, PyTorch 20 ms."
    assert expected in alt(fig)
    (table,) = tables(fig)
    assert table.cells[0][-1] == number(2**17 / 2**20)
