"""The drawing tools' text alternatives (attention_lessons.kit.plots): what a figure shows and its key
numbers, from the data it draws.

The expected numbers are computed here from the same inputs (with attnlib's numeric modules or
numpy), never typed in, and written the way the figures write them (``format_cell``). The lessons'
figures' text alternatives are tested in their lessons' folders.
"""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pytest
from conftest import alt, tables

from attention_lessons.kit import plots
from attention_lessons.kit.plots.artists import number
from attention_lessons.kit.plots.descriptions import MAX_ALT_LENGTH
from attnlib import softmax

fmt = plots.format_cell


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
