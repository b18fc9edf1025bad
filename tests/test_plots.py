"""Tests for attnlib.plots: the drawn data must be the numbers given, not just "it did not crash".

Each test reads back what Matplotlib holds (the heatmap mesh array, the cell texts, the colour
limits, the quiver's offsets and components, the label positions) and compares it with values
computed independently in plain numpy.
"""

import io
import struct

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.colors import to_rgba
from PIL import Image

from attnlib import attention_steps, examples, plots, qkv

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MINUS_INF = "−∞"  # U+2212, as format_cell writes it
MINUS = "−"  # U+2212, the minus sign of negative cells
#: Global rcParams unlike both styles: what a figure's style must win over.
FOREIGN_RC = {
    "text.color": "#ff0000", "axes.labelcolor": "#ff0000", "axes.edgecolor": "#ff0000",
    "xtick.color": "#ff0000", "ytick.color": "#ff0000", "axes.facecolor": "#00ff00",
    "axes.titleweight": "normal", "axes.titlecolor": "#ff0000",
}  # fmt: skip


# --- helpers -------------------------------------------------------------------------------------


def new_ax(style="light", figsize=(4.0, 3.0)):
    fig, axes = plots.figure(1, 1, figsize=figsize, style=style)
    return fig, axes[0, 0]


def mesh_values(ax):
    """The heatmap's drawn values as a float array, masked cells as -inf."""
    drawn = ax.collections[0].get_array()
    return np.ma.filled(np.ma.asarray(drawn).astype(float), -np.inf)


def cell_texts(ax, shape):
    """The annotation texts, reshaped row by row."""
    return np.array([t.get_text() for t in ax.texts], dtype=object).reshape(shape)


def expected_text(value, decimals=2):
    """Independent formatting: fixed decimals, U+2212 for minus and minus-infinity, no "−0.00"."""
    if np.isneginf(value):
        return MINUS_INF
    digits = f"{abs(value):.{decimals}f}"
    return MINUS + digits if value < 0 and float(digits) != 0 else digits


def expected_texts(matrix, decimals=2):
    return np.array([[expected_text(v, decimals) for v in row] for row in matrix], dtype=object)


def softmax_rows(scores):
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)


def quiver_tails(arrows):
    """Where the arrows are drawn from: the collection's offsets (what the renderer uses)."""
    return np.asarray(arrows.quiver.get_offsets(), dtype=float)


def quiver_deltas(arrows):
    return np.column_stack([np.ravel(arrows.quiver.U), np.ravel(arrows.quiver.V)])


def label_places(arrows):
    """Each label's (horizontal, vertical) alignment: where it sits around its tip."""
    return [(t.get_horizontalalignment(), t.get_verticalalignment()) for t in arrows.labels]


PLAIN = ("left", "bottom")  # above and right of the tip: a label alone


def png_size(data):
    """(width, height) from the IHDR chunk, read by hand."""
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def four_tokens():
    """The four 2D tokens, their attention steps and an independent reference computation."""
    ex = examples.four_tokens_2d()
    steps = attention_steps(*qkv(ex.X, ex.W_q, ex.W_k, ex.W_v))
    raw = ex.X @ ex.X.T  # identity projections: Q = K = V = X
    weights = softmax_rows(raw / np.sqrt(2))
    return ex, steps, {"raw": raw, "weights": weights, "output": weights @ ex.X}


# --- format_cell, figure, styles -----------------------------------------------------------------


def test_format_cell():
    assert plots.format_cell(1.28844) == "1.29"
    assert plots.format_cell(1.28844, decimals=4) == "1.2884"
    assert plots.format_cell(-0.5) == "−0.50"
    assert plots.format_cell(-1.28844, decimals=3) == "−1.288"
    assert plots.format_cell(-np.inf) == MINUS_INF
    assert plots.format_cell(-np.inf)[0] == plots.format_cell(-0.5)[0] == "\u2212"  # the same minus


@pytest.mark.parametrize(
    ("value", "decimals", "text"),
    [(-1e-9, 2, "0.00"), (-0.0, 2, "0.00"), (-0.004, 2, "0.00"), (-0.0004, 3, "0.000"), (-0.4, 0, "0"),
     (-2.5e-7, 6, "0.000000"), (0.0, 2, "0.00"), (-0.006, 2, "−0.01"), (-2.6e-6, 6, "−0.000003")],
)  # fmt: skip
def test_format_cell_values_that_round_to_zero_have_no_sign(value, decimals, text):
    assert plots.format_cell(value, decimals) == text
    assert "-" not in plots.format_cell(value, decimals)  # never an ASCII hyphen-minus


def test_figure_gives_a_grid_of_axes_with_the_size_asked():
    fig, axes = plots.figure(2, 3, figsize=(6.0, 4.0))
    assert axes.shape == (2, 3)
    assert len(fig.axes) == 6
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)


def test_styles_differ_in_facecolor():
    light, _ = plots.figure(style="light")
    dark, dark_axes = plots.figure(style="dark")
    assert light.get_facecolor() == to_rgba("white")
    assert dark.get_facecolor() == to_rgba(plots.STYLES["dark"]["figure.facecolor"])
    assert dark_axes[0, 0].get_facecolor() == to_rgba(plots.STYLES["dark"]["axes.facecolor"])
    assert light.get_facecolor() != dark.get_facecolor()


@pytest.mark.parametrize("make", [
    lambda: plots.figure(style="sepia"),
    lambda: plots.style_context("sepia").__enter__(),
])  # fmt: skip
def test_unknown_style_is_a_clear_error(make):
    with pytest.raises(ValueError, match=r"style must be one of \['dark', 'light'\], got 'sepia'"):
        make()


# --- drawing in the style of the figure ---------------------------------------------------------


@pytest.mark.parametrize("style", ["light", "dark"])
def test_heatmap_and_vectors_draw_in_the_style_of_their_figure(style):
    """Drawn later, under other global rcParams, a styled figure's panels still follow its style."""
    rc = plots.STYLES[style]
    fig, axes = plots.figure(1, 2, figsize=(8.0, 3.5), style=style)
    heat, arrows_ax = axes[0]
    with mpl.rc_context(FOREIGN_RC):
        plots.heatmap(heat, [[-1.0, 0.5], [2.0, 0.0]], ["a", "b"], ["x", "y"], title="scores")
        plots.vectors(arrows_ax, [[1.0, 0.5], [-0.5, 1.0]], ["u", "v"], title="vectors")
    plots.png_bytes(fig)  # a draw: every tick label is there

    colorbar = heat.collections[0].colorbar
    tick_labels = [t for t in colorbar.ax.get_yticklabels() if t.get_text()]
    assert len(tick_labels) >= 3
    assert {to_rgba(t.get_color()) for t in tick_labels} == {to_rgba(rc["ytick.color"])}
    assert {to_rgba(t.tick2line.get_color()) for t in colorbar.ax.yaxis.get_major_ticks()} == {
        to_rgba(rc["ytick.color"])
    }
    for ax in (heat, arrows_ax):
        assert to_rgba(ax.title.get_color()) == to_rgba(rc["text.color"])
        assert ax.title.get_fontweight() == "bold"
    # the lines between the cells have the background's colour
    assert [to_rgba(c) for c in heat.collections[0].get_edgecolor()] == [to_rgba(rc["axes.facecolor"])]
    # the lines through the origin (the only lines of a vectors panel) have the frame's colour
    assert [to_rgba(line.get_color()) for line in arrows_ax.lines] == [to_rgba(rc["axes.edgecolor"])] * 2


def test_a_subfigure_draws_in_the_style_of_its_figure():
    fig, _ = plots.figure(style="dark")
    ax = fig.subfigures(1, 2)[1].subplots()
    with mpl.rc_context(FOREIGN_RC):
        arrows = plots.vectors(ax, [[1.0, 0.0]], ["u"], title="in a subfigure")
    assert ax.title.get_fontweight() == "bold"
    assert to_rgba(ax.lines[0].get_color()) == to_rgba(plots.STYLES["dark"]["axes.edgecolor"])
    assert arrows.labels[0].get_text() == " u"


def test_axes_of_other_figures_draw_in_the_current_rcparams():
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    with mpl.rc_context(FOREIGN_RC):
        plots.vectors(ax, [[1.0, 0.0]], ["u"], title="not ours")
    assert to_rgba(ax.lines[0].get_color()) == to_rgba(FOREIGN_RC["axes.edgecolor"])
    assert ax.title.get_fontweight() == "normal"


def test_figure_functions_draw_in_their_style_whatever_the_rcparams(four_tokens):
    ex, steps, _ = four_tokens
    dark = plots.STYLES["dark"]
    with mpl.rc_context(FOREIGN_RC):
        view = plots.attention_figure(steps, ex.tokens, ex.X, style="dark")
    plots.png_bytes(view.figure)
    for ax in (view.scores, view.weights):
        labels = [t for t in ax.collections[0].colorbar.ax.get_yticklabels() if t.get_text()]
        assert {to_rgba(t.get_color()) for t in labels} == {to_rgba(dark["ytick.color"])}
        assert [to_rgba(c) for c in ax.collections[0].get_edgecolor()] == [to_rgba(dark["axes.facecolor"])]
    for ax in (view.embeddings, view.scores, view.weights, view.context):
        assert ax.title.get_fontweight() == "bold"
        assert to_rgba(ax.title.get_color()) == to_rgba(dark["text.color"])
    for ax in (view.embeddings, view.context):
        assert {to_rgba(line.get_color()) for line in ax.lines} == {to_rgba(dark["axes.edgecolor"])}


# --- heatmap -------------------------------------------------------------------------------------


def test_heatmap_draws_the_matrix_its_texts_and_labels():
    ex = examples.she_likes_coffee()
    Q, K, _ = qkv(ex.X, ex.W_q, ex.W_k, ex.W_v)
    S = Q @ K.T  # the known scores [[1.2884, 1.064, 1.452], ...]
    _, ax = new_ax()
    returned = plots.heatmap(ax, S, ex.tokens, ex.tokens, title="Q Kᵀ", decimals=4)

    assert returned is ax
    np.testing.assert_allclose(mesh_values(ax), S, rtol=0, atol=1e-12)
    assert cell_texts(ax, (3, 3)).tolist() == [
        ["1.2884", "1.0640", "1.4520"],
        ["1.0640", "1.6064", "1.4496"],
        ["1.4520", "1.4496", "1.8768"],
    ]
    assert ax.collections[0].get_clim() == pytest.approx((S.min(), S.max()))
    assert [t.get_text() for t in ax.get_xticklabels()] == list(ex.tokens)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(ex.tokens)
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("Q Kᵀ", "keys", "queries")


def test_heatmap_cells_texts_and_tick_labels_line_up():
    """Row i, column j: the mesh cell holding M[i, j], its text and its tick labels coincide."""
    M = np.arange(6.0).reshape(2, 3)
    rows, cols = ["r0", "r1"], ["c0", "c1", "c2"]
    _, ax = new_ax()
    plots.heatmap(ax, M, rows, cols)

    corners = ax.collections[0].get_coordinates()  # (n_rows + 1, n_cols + 1, 2): x, y of corners
    drawn = mesh_values(ax)
    yticks = dict(zip([t.get_text() for t in ax.get_yticklabels()], ax.get_yticks(), strict=True))
    xticks = dict(zip([t.get_text() for t in ax.get_xticklabels()], ax.get_xticks(), strict=True))
    for k, text in enumerate(ax.texts):
        i, j = divmod(k, 3)
        x, y = text.get_position()
        (x0, y0), (x1, y1) = corners[i, j], corners[i + 1, j + 1]
        assert x0 < x < x1 and y0 < y < y1, (i, j)
        assert drawn[i, j] == M[i, j]
        assert text.get_text() == f"{M[i, j]:.2f}"
        assert xticks[cols[j]] == pytest.approx(x) and yticks[rows[i]] == pytest.approx(y)
    assert ax.yaxis_inverted()  # row 0 at the top, as the matrix is printed


def test_heatmap_masked_cells_show_minus_infinity():
    M = np.array([[0.5, -np.inf], [-1.25, 2.0]])
    _, ax = new_ax()
    plots.heatmap(ax, M, ["a", "b"], ["x", "y"])

    drawn = ax.collections[0].get_array()
    assert np.ma.getmaskarray(drawn).tolist() == [[False, True], [False, False]]
    np.testing.assert_array_equal(mesh_values(ax), M)
    assert cell_texts(ax, M.shape).tolist() == [["0.50", MINUS_INF], ["−1.25", "2.00"]]
    assert ax.collections[0].get_clim() == (-1.25, 2.0)  # limits of the finite values only


@pytest.mark.parametrize(
    ("matrix", "kwargs", "clim"),
    [
        ([[0.2, 0.4], [0.6, 0.8]], {}, (0.2, 0.8)),
        ([[0.2, 0.4], [0.6, 0.8]], {"vmin": 0, "vmax": 1}, (0.0, 1.0)),
        ([[3.0, 3.0], [3.0, 3.0]], {}, (2.5, 3.5)),  # one value: widened, not a zero-width scale
        ([[-np.inf, -np.inf], [-np.inf, -np.inf]], {}, (0.0, 1.0)),
    ],
)
def test_heatmap_colour_limits(matrix, kwargs, clim):
    _, ax = new_ax()
    plots.heatmap(ax, matrix, ["a", "b"], ["x", "y"], **kwargs)
    assert ax.collections[0].get_clim() == pytest.approx(clim)
    assert cell_texts(ax, (2, 2)).tolist() == expected_texts(np.array(matrix)).tolist()


def test_heatmap_text_colour_reads_on_its_cell():
    """Dark text on the bright end of viridis, white text on the dark end."""
    _, ax = new_ax()
    plots.heatmap(ax, [[0.0, 1.0]], ["a"], ["lo", "hi"])
    low, high = ax.texts
    assert to_rgba(low.get_color()) == to_rgba("#ffffff")
    assert to_rgba(high.get_color()) == to_rgba("#111111")


def test_heatmap_colorbar_is_optional():
    fig, ax = new_ax()
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"])
    colorbar = ax.collections[0].colorbar
    assert colorbar is not None and ax.child_axes == [colorbar.ax] and fig.axes == [ax]
    fig, ax = new_ax()
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], colorbar=False)
    assert ax.collections[0].colorbar is None and ax.child_axes == [] and fig.axes == [ax]


def colorbar_and_cells(ax):
    """The drawn boxes (pixels) of a heatmap's colour bar and of its cells."""
    return ax.collections[0].colorbar.ax.get_window_extent(), ax.get_window_extent()


@pytest.mark.parametrize(
    ("shape", "figsize"),
    [
        ((2, 5), (7.0, 3.2)),
        ((4, 4), (5.0, 4.0)),
        ((4, 4), (3.0, 5.0)),
        ((1, 6), (6.0, 2.0)),
        ((6, 1), (3.0, 5.0)),
    ],
)
def test_colorbar_is_as_tall_as_the_cells_and_beside_them(shape, figsize):
    fig, ax = new_ax(figsize=figsize)
    rows, cols = [f"r{i}" for i in range(shape[0])], [f"c{j}" for j in range(shape[1])]
    plots.heatmap(ax, np.arange(shape[0] * shape[1], dtype=float).reshape(shape), rows, cols, title="t")
    plots.png_bytes(fig)

    bar, cells = colorbar_and_cells(ax)
    assert cells.width / shape[1] == pytest.approx(cells.height / shape[0], rel=1e-6)  # square cells
    assert (bar.y0, bar.height) == pytest.approx((cells.y0, cells.height), abs=0.5)
    assert 0 < bar.x0 - cells.x1 < 0.2 * fig.dpi  # right beside them
    assert bar.y1 < ax.title.get_window_extent().y0
    colorbar_extent = ax.collections[0].colorbar.ax.get_tightbbox()
    assert fig.bbox.x0 <= ax.get_tightbbox().x0 and colorbar_extent.x1 <= fig.bbox.x1  # nothing cut off


def test_update_heatmap_changes_the_same_artists_in_place():
    _, ax = new_ax()
    plots.heatmap(ax, [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], ["a", "b"], ["x", "y", "z"], decimals=3)
    mesh, texts = ax.collections[0], list(ax.texts)
    counts = (len(ax.collections), len(ax.texts), len(ax.figure.axes))

    new = np.array([[5.0, -np.inf, -2.5], [0.125, 1.0, 4.0]])
    plots.update_heatmap(ax, new, decimals=3)

    assert ax.collections[0] is mesh
    assert all(a is b for a, b in zip(ax.texts, texts, strict=True))
    assert (len(ax.collections), len(ax.texts), len(ax.figure.axes)) == counts
    np.testing.assert_array_equal(mesh_values(ax), new)
    assert cell_texts(ax, new.shape).tolist() == expected_texts(new, 3).tolist()
    assert mesh.get_clim() == (-2.5, 5.0)

    plots.update_heatmap(ax, new, vmin=-10, vmax=10)
    assert mesh.get_clim() == (-10, 10)
    assert cell_texts(ax, new.shape).tolist() == expected_texts(new, 3).tolist()  # still 3 decimals


def test_update_heatmap_keeps_the_decimals_shown():
    _, ax = new_ax()
    plots.heatmap(ax, [[0.12345, -0.5]], ["a"], ["x", "y"], decimals=4)
    plots.update_heatmap(ax, [[0.98765, -0.25]])
    assert cell_texts(ax, (1, 2)).tolist() == [["0.9877", "−0.2500"]]
    plots.update_heatmap(ax, [[1.04, 2.0]], decimals=1)
    assert cell_texts(ax, (1, 2)).tolist() == [["1.0", "2.0"]]
    plots.update_heatmap(ax, [[3.04, -2.0]])  # the decimals last asked for
    assert cell_texts(ax, (1, 2)).tolist() == [["3.0", "−2.0"]]
    _, other = new_ax()
    plots.heatmap(other, [[0.12345]], ["a"], ["x"])  # each heatmap its own
    plots.update_heatmap(other, [[0.98765]])
    assert cell_texts(other, (1, 1)).tolist() == [["0.99"]]


def test_update_heatmap_keeps_the_colorbar_in_step():
    _, ax = new_ax()
    plots.heatmap(ax, [[0.0, 1.0]], ["a"], ["x", "y"])
    plots.update_heatmap(ax, [[-3.0, 7.0]])
    colorbar = ax.collections[0].colorbar
    assert (colorbar.vmin, colorbar.vmax) == (-3.0, 7.0)


def test_update_heatmap_rejects_another_shape():
    _, ax = new_ax()
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"])
    with pytest.raises(ValueError, match=r"matrix has shape \(3, 3\); the heatmap shows shape \(2, 2\)"):
        plots.update_heatmap(ax, np.eye(3))


@pytest.mark.parametrize(
    ("matrix", "rows", "cols", "message"),
    [
        (np.eye(2), ["a"], ["x", "y"], r"matrix has shape \(2, 2\) but there are 1 row labels and 2 column"),
        (np.eye(2), ["a", "b"], ["x", "y", "z"], r"there are 2 row labels and 3 column labels"),
        (np.ones(3), ["a"], ["x", "y", "z"], r"matrix must be 2-D \(n_rows, n_cols\), got shape \(3,\)"),
        ([[0.0, np.nan]], ["a"], ["x", "y"], r"matrix"),
        ([[0.0, np.inf]], ["a"], ["x", "y"], r"matrix"),
    ],
)
def test_heatmap_bad_input_is_a_clear_error(matrix, rows, cols, message):
    _, ax = new_ax()
    with pytest.raises(ValueError, match=message):
        plots.heatmap(ax, matrix, rows, cols)


# --- vectors -------------------------------------------------------------------------------------


def test_vectors_draw_arrows_from_the_origin_with_labels_at_the_tips():
    ex = examples.four_tokens_2d()
    _, ax = new_ax(figsize=(4.0, 4.0))
    arrows = plots.vectors(ax, ex.X, ex.tokens, title="Four tokens")

    np.testing.assert_array_equal(np.ravel(arrows.quiver.X), 0.0)
    np.testing.assert_array_equal(np.ravel(arrows.quiver.Y), 0.0)
    np.testing.assert_array_equal(quiver_tails(arrows), np.zeros((4, 2)))
    np.testing.assert_array_equal(quiver_deltas(arrows), ex.X)
    assert arrows.quiver.scale == 1 and arrows.quiver.scale_units == "xy" and arrows.quiver.angles == "xy"
    assert [t.get_text().strip() for t in arrows.labels] == list(ex.tokens)
    np.testing.assert_array_equal([t.get_position() for t in arrows.labels], ex.X)
    # each label has its arrow's colour, from the Okabe–Ito palette
    arrow_colours = [tuple(c) for c in arrows.quiver.get_facecolor()]
    label_colours = [to_rgba(t.get_color()) for t in arrows.labels]
    assert arrow_colours == label_colours == [to_rgba(c) for c in plots.OKABE_ITO[:4]]
    # square limits that show every tip and the origin
    lo, hi = ax.get_xlim()
    assert ax.get_ylim() == (lo, hi)
    assert lo < 0 and hi > ex.X.max()
    assert ax.get_title() == "Four tokens"


def test_vectors_from_given_origins_and_limits():
    tails = np.array([[1.0, 1.0], [-1.0, 0.5]])
    tips = np.array([[2.0, 3.0], [0.0, -1.0]])
    _, ax = new_ax()
    arrows = plots.vectors(ax, tips, ["u", "v"], origins=tails, limits=(-4.0, 4.0), alpha=0.25)

    np.testing.assert_array_equal(np.column_stack([arrows.quiver.X, arrows.quiver.Y]), tails)
    np.testing.assert_array_equal(quiver_tails(arrows), tails)
    np.testing.assert_array_equal(quiver_deltas(arrows), tips - tails)
    np.testing.assert_array_equal([t.get_position() for t in arrows.labels], tips)
    assert ax.get_xlim() == ax.get_ylim() == (-4.0, 4.0)
    assert arrows.quiver.get_alpha() == 0.25
    assert all(t.get_alpha() == 0.25 for t in arrows.labels)


def test_update_vectors_moves_the_same_arrows_in_place():
    _, ax = new_ax()
    arrows = plots.vectors(ax, [[1.0, 0.0], [0.0, 1.0]], ["a", "b"])
    quiver, labels = arrows.quiver, list(arrows.labels)
    drawn_tails = np.column_stack([quiver.X, quiver.Y])
    counts = (len(ax.collections), len(ax.texts), len(ax.lines))

    tails = np.array([[1.0, 1.0], [0.0, 1.0]])
    tips = np.array([[2.5, 2.0], [-3.0, 2.0]])
    plots.update_vectors(ax, arrows, tips, origins=tails)

    assert arrows.quiver is quiver and ax.collections[0] is quiver
    assert all(a is b for a, b in zip(arrows.labels, labels, strict=True))
    assert (len(ax.collections), len(ax.texts), len(ax.lines)) == counts
    np.testing.assert_array_equal(quiver_tails(arrows), tails)
    np.testing.assert_array_equal(quiver_deltas(arrows), tips - tails)
    np.testing.assert_array_equal([t.get_position() for t in arrows.labels], tips)
    assert [t.get_text() for t in arrows.labels] == [" a", " b"]
    # quiver.X and .Y keep the tails it was drawn with: the docstring points to get_offsets()
    np.testing.assert_array_equal(np.column_stack([quiver.X, quiver.Y]), drawn_tails)
    assert "quiver.get_offsets()" in plots.Arrows.__doc__
    lo, hi = ax.get_xlim()
    assert ax.get_ylim() == (lo, hi) and lo < -3.0 and hi > 2.5  # refitted to the new tips

    plots.update_vectors(ax, arrows, tips, limits=(-5.0, 5.0))  # origins default to zero again
    np.testing.assert_array_equal(quiver_tails(arrows), np.zeros((2, 2)))
    np.testing.assert_array_equal(quiver_deltas(arrows), tips)
    assert ax.get_xlim() == ax.get_ylim() == (-5.0, 5.0)


@pytest.mark.parametrize(
    ("points", "labels", "origins", "message"),
    [
        ([[1.0, 0.0, 0.0]], ["a"], None, r"points must have shape \(n, 2\).*got shape \(1, 3\)"),
        ([1.0, 0.0], ["a"], None, r"points must have shape \(n, 2\).*got shape \(2,\)"),
        ([[1.0, 0.0], [0.0, 1.0]], ["a"], None, r"there are 2 vectors but 1 labels"),
        ([[1.0, 0.0]], ["a", "b"], None, r"there are 1 vectors but 2 labels"),
        ([[1.0, 0.0]], ["a"], [[0.0, 0.0], [1.0, 1.0]], r"origins must have the shape of points \(1, 2\)"),
        ([[1.0, np.nan]], ["a"], None, r"points"),
    ],
)
def test_vectors_bad_input_is_a_clear_error(points, labels, origins, message):
    _, ax = new_ax()
    with pytest.raises(ValueError, match=message):
        plots.vectors(ax, points, labels, origins=origins)


def test_vectors_without_colours_is_a_clear_error():
    _, ax = new_ax()
    with pytest.raises(ValueError, match="colors must name at least one colour"):
        plots.vectors(ax, [[1.0, 0.0]], ["a"], colors=[])


CLOSE = np.array([[1.0, 1.0], [1.02, 0.97], [-1.0, 0.5]])  # a and b end close together
APART = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 0.5]])


def test_vectors_spread_the_labels_of_tips_that_end_close_together():
    _, ax = new_ax(figsize=(4.0, 4.0))
    arrows = plots.vectors(ax, CLOSE, ["a", "b", "c"])
    assert arrows.spread_labels
    assert label_places(arrows) == [("right", "bottom"), ("left", "top"), PLAIN]
    assert [t.get_text() for t in arrows.labels] == ["a ", " b", " c"]
    np.testing.assert_array_equal([t.get_position() for t in arrows.labels], CLOSE)  # still at the tips
    # moved apart, then together again: placed anew each time
    plots.update_vectors(ax, arrows, APART)
    assert label_places(arrows) == [PLAIN] * 3
    assert [t.get_text() for t in arrows.labels] == [" a", " b", " c"]
    plots.update_vectors(ax, arrows, CLOSE)
    assert label_places(arrows) == [("right", "bottom"), ("left", "top"), PLAIN]
    plots.update_vectors(ax, arrows, CLOSE, spread_labels=False)
    assert label_places(arrows) == [PLAIN] * 3


def test_vectors_spreading_can_be_turned_off():
    _, ax = new_ax(figsize=(4.0, 4.0))
    arrows = plots.vectors(ax, CLOSE, ["a", "b", "c"], spread_labels=False)
    assert not arrows.spread_labels
    assert label_places(arrows) == [PLAIN] * 3
    assert [t.get_text() for t in arrows.labels] == [" a", " b", " c"]
    plots.update_vectors(ax, arrows, CLOSE * 0.5)  # stays off
    assert label_places(arrows) == [PLAIN] * 3
    plots.update_vectors(ax, arrows, CLOSE, spread_labels=True)
    assert label_places(arrows) == [("right", "bottom"), ("left", "top"), PLAIN]


def test_update_vectors_bad_input_is_a_clear_error():
    _, ax = new_ax()
    arrows = plots.vectors(ax, [[1.0, 0.0], [0.0, 1.0]], ["a", "b"])
    with pytest.raises(ValueError, match=r"there are 3 vectors but 2 labels"):
        plots.update_vectors(ax, arrows, np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"points must have shape \(n, 2\)"):
        plots.update_vectors(ax, arrows, np.ones((2, 3)))


# --- attention_figure ----------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["light", "dark"])
def test_attention_figure_shows_the_attention_steps(four_tokens, style):
    ex, steps, ref = four_tokens
    view = plots.attention_figure(steps, ex.tokens, ex.X, style=style)

    # top left: the embeddings
    np.testing.assert_array_equal(quiver_deltas(view.embedding_arrows), ex.X)
    np.testing.assert_array_equal(quiver_tails(view.embedding_arrows), np.zeros((4, 2)))
    # top right: the raw scores, exactly attention_steps' and X Xᵀ
    np.testing.assert_array_equal(mesh_values(view.scores), steps.raw_scores)
    np.testing.assert_allclose(mesh_values(view.scores), ref["raw"], atol=1e-12)
    assert cell_texts(view.scores, (4, 4)).tolist() == expected_texts(ref["raw"]).tolist()
    # bottom left: the weights, rows summing to 1, on a fixed 0..1 colour scale
    np.testing.assert_array_equal(mesh_values(view.weights), steps.weights)
    np.testing.assert_allclose(mesh_values(view.weights), ref["weights"], atol=1e-12)
    np.testing.assert_allclose(mesh_values(view.weights).sum(axis=1), 1.0)
    assert cell_texts(view.weights, (4, 4)).tolist() == expected_texts(ref["weights"]).tolist()
    assert view.weights.collections[0].get_clim() == (0, 1)
    # bottom right: the output as arrows, the embeddings faint behind them
    np.testing.assert_array_equal(quiver_deltas(view.context_arrows), steps.output)
    np.testing.assert_allclose(quiver_deltas(view.context_arrows), ref["output"], atol=1e-12)
    np.testing.assert_array_equal(quiver_deltas(view.faint_arrows), ex.X)
    assert view.faint_arrows.quiver.get_alpha() == 0.25
    for arrows in (view.embedding_arrows, view.context_arrows, view.faint_arrows):
        assert [t.get_text().strip() for t in arrows.labels] == list(ex.tokens)
    np.testing.assert_array_equal([t.get_position() for t in view.context_arrows.labels], steps.output)
    # both arrow panels on the same square limits
    assert view.embeddings.get_xlim() == view.embeddings.get_ylim() == view.context.get_xlim()
    # four panels in reading order on a 2×2 grid, plus the two colour bars
    panels = [view.embeddings, view.scores, view.weights, view.context]
    grid = [(ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start) for ax in panels]
    assert grid == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert view.figure.axes == panels
    assert [ax.child_axes for ax in panels] == [
        [], [view.scores.collections[0].colorbar.ax], [view.weights.collections[0].colorbar.ax], []
    ]  # fmt: skip
    assert view.scores.get_title().startswith("2. Raw scores")
    assert view.weights.get_title().startswith("3. Weights")
    # the style
    facecolor = to_rgba(plots.STYLES[style]["figure.facecolor"])
    assert view.figure.get_facecolor() == facecolor
    assert view.embeddings.get_facecolor() == to_rgba(plots.STYLES[style]["axes.facecolor"])


@pytest.mark.parametrize("style", ["light", "dark"])
def test_attention_figure_colour_bars_are_as_tall_as_the_heatmaps(four_tokens, style):
    ex, steps, _ = four_tokens
    view = plots.attention_figure(steps, ex.tokens, ex.X, style=style)
    fig = view.figure
    plots.png_bytes(fig)
    for ax in (view.scores, view.weights):
        bar, cells = colorbar_and_cells(ax)
        assert (bar.y0, bar.height) == pytest.approx((cells.y0, cells.height), abs=0.5)
        assert 0 < bar.x0 - cells.x1 < 0.2 * fig.dpi
        assert bar.y1 < ax.title.get_window_extent().y0  # below its panel's title
    for ax in fig.axes:  # nothing cut off at the edges: labels, titles, colour bars
        extent = ax.get_tightbbox()
        assert fig.bbox.x0 <= extent.x0 and extent.x1 <= fig.bbox.x1
        assert fig.bbox.y0 <= extent.y0 and extent.y1 <= fig.bbox.y1


def test_attention_figure_spreads_labels_by_default(four_tokens):
    ex, steps, _ = four_tokens
    view = plots.attention_figure(steps, ex.tokens, ex.X)
    # the contextualized vectors end close together: their labels go to either side
    assert ("right", "bottom") in label_places(view.context_arrows)
    assert ("left", "top") in label_places(view.context_arrows)
    assert all(
        arrows.spread_labels for arrows in (view.embedding_arrows, view.faint_arrows, view.context_arrows)
    )
    plain = plots.attention_figure(steps, ex.tokens, ex.X, spread_labels=False)
    for arrows in (plain.embedding_arrows, plain.faint_arrows, plain.context_arrows):
        assert label_places(arrows) == [PLAIN] * 4
    # an update keeps what the figure was drawn with
    plots.update_attention_figure(plain, steps, ex.X)
    assert label_places(plain.context_arrows) == [PLAIN] * 4
    plots.update_attention_figure(view, steps, ex.X)
    assert ("left", "top") in label_places(view.context_arrows)


def test_update_attention_figure_keeps_the_decimals_shown(four_tokens):
    ex, steps, _ = four_tokens
    view = plots.attention_figure(steps, ex.tokens, ex.X)
    plots.update_attention_figure(view, steps, ex.X, decimals=3)
    plots.update_attention_figure(view, steps, ex.X)
    assert cell_texts(view.weights, (4, 4)).tolist() == expected_texts(steps.weights, 3).tolist()


def test_attention_figure_styles_differ(four_tokens):
    ex, steps, _ = four_tokens
    light = plots.attention_figure(steps, ex.tokens, ex.X, style="light")
    dark = plots.attention_figure(steps, ex.tokens, ex.X, style="dark")
    assert light.figure.get_facecolor() != dark.figure.get_facecolor()
    assert light.scores.title.get_color() != dark.scores.title.get_color()
    # the drawn numbers do not depend on the style
    np.testing.assert_array_equal(mesh_values(light.weights), mesh_values(dark.weights))


def test_update_attention_figure_moves_everything_in_place(four_tokens):
    ex, steps, _ = four_tokens
    view = plots.attention_figure(steps, ex.tokens, ex.X)
    artists = [view.scores.collections[0], view.weights.collections[0], *view.scores.texts,
               *view.weights.texts, view.embedding_arrows.quiver, view.context_arrows.quiver,
               view.faint_arrows.quiver, *view.context_arrows.labels]  # fmt: skip
    counts = [(len(ax.collections), len(ax.texts), len(ax.lines)) for ax in view.figure.axes]

    X = ex.X.copy()
    X[0] = [-0.6, 1.2]  # drag Token-1 to the upper left
    new = attention_steps(X, X, X)
    plots.update_attention_figure(view, new, X)

    now = [view.scores.collections[0], view.weights.collections[0], *view.scores.texts,
           *view.weights.texts, view.embedding_arrows.quiver, view.context_arrows.quiver,
           view.faint_arrows.quiver, *view.context_arrows.labels]  # fmt: skip
    assert all(a is b for a, b in zip(now, artists, strict=True))
    assert [(len(ax.collections), len(ax.texts), len(ax.lines)) for ax in view.figure.axes] == counts

    raw = X @ X.T
    weights = softmax_rows(raw / np.sqrt(2))
    np.testing.assert_allclose(mesh_values(view.scores), raw, atol=1e-12)
    assert cell_texts(view.scores, (4, 4)).tolist() == expected_texts(raw).tolist()
    assert view.scores.collections[0].get_clim() == pytest.approx((raw.min(), raw.max()))
    np.testing.assert_allclose(mesh_values(view.weights), weights, atol=1e-12)
    assert cell_texts(view.weights, (4, 4)).tolist() == expected_texts(weights).tolist()
    np.testing.assert_array_equal(quiver_deltas(view.embedding_arrows), X)
    np.testing.assert_array_equal(quiver_deltas(view.faint_arrows), X)
    np.testing.assert_allclose(quiver_deltas(view.context_arrows), weights @ X, atol=1e-12)
    np.testing.assert_array_equal([t.get_position() for t in view.embedding_arrows.labels], X)
    lo, hi = view.embeddings.get_xlim()
    assert lo < -0.6 and hi > 1.2  # refitted to the dragged token
    assert view.context.get_xlim() == (lo, hi)


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
        plots.attention_figure(steps, tokens, rng.normal(size=embeddings_shape))


def test_attention_figure_unknown_style(four_tokens):
    ex, steps, _ = four_tokens
    with pytest.raises(ValueError, match=r"style must be one of"):
        plots.attention_figure(steps, ex.tokens, ex.X, style="sepia")


def test_update_attention_figure_rejects_another_number_of_tokens(four_tokens):
    ex, steps, _ = four_tokens
    view = plots.attention_figure(steps, ex.tokens, ex.X)
    X3 = ex.X[:3]
    with pytest.raises(ValueError, match=r"got 4 tokens, embeddings \(3, 2\), weights \(3, 3\)"):
        plots.update_attention_figure(view, attention_steps(X3, X3, X3), X3)


# --- png_bytes and show --------------------------------------------------------------------------


def small_heatmap_figure(figsize):
    fig, ax = new_ax(figsize=figsize)
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"])
    return fig


@pytest.mark.parametrize(("figsize", "dpi"), [((4.0, 3.0), 50), ((5.5, 4.2), 100)])
def test_png_bytes_is_a_png_of_figsize_times_dpi(figsize, dpi):
    data = plots.png_bytes(small_heatmap_figure(figsize), dpi=dpi)

    assert data[:8] == PNG_MAGIC
    expected = (round(figsize[0] * dpi), round(figsize[1] * dpi))
    assert png_size(data) == expected
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG" and image.size == expected
        image.load()  # decodes the whole image: the PNG is complete
    # no version metadata: the same figure, built again, gives the same bytes
    assert b"Software" not in data
    assert plots.png_bytes(small_heatmap_figure(figsize), dpi=dpi) == data


def test_png_bytes_draws_the_style_background():
    fig, _ = plots.figure(figsize=(1.0, 1.0), style="dark")
    with Image.open(io.BytesIO(plots.png_bytes(fig, dpi=20))) as image:
        corner = image.convert("RGB").getpixel((0, 0))
    assert corner == (0x1E, 0x1E, 0x1E)


def test_show_displays_only_a_png(monkeypatch, capsys):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *args, **kwargs: shown.append((args, kwargs)))
    fig, ax = new_ax(figsize=(2.0, 1.5))
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"])
    assert plots.show(fig, dpi=40) is None

    assert len(shown) == 1
    (bundle,), kwargs = shown[0]
    assert kwargs == {"raw": True}
    assert list(bundle) == ["image/png"]
    assert bundle["image/png"][:8] == PNG_MAGIC
    assert png_size(bundle["image/png"]) == (80, 60)
    assert capsys.readouterr() == ("", "")  # no "<Figure size ...>" text anywhere
