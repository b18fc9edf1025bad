"""Tests for attnlib.plots: the drawn data must be the numbers given, not just "it did not crash".

Each test reads back what Matplotlib holds (the heatmap mesh array, the cell texts, the colour
limits, the quiver's offsets and components, the label positions) and compares it with values
computed independently in plain numpy.
"""

import io
import struct

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from PIL import Image

from attnlib import attention_steps, examples, plots, qkv

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MINUS_INF = "−∞"  # U+2212, as format_cell writes it


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


def expected_texts(matrix, decimals=2):
    """Independent formatting: fixed decimals, U+2212 minus-infinity for masked cells."""
    return np.array(
        [[MINUS_INF if np.isneginf(v) else f"{v:.{decimals}f}" for v in row] for row in matrix], dtype=object
    )


def softmax_rows(scores):
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)


def quiver_tails(arrows):
    """Where the arrows are drawn from: the collection's offsets (what the renderer uses)."""
    return np.asarray(arrows.quiver.get_offsets(), dtype=float)


def quiver_deltas(arrows):
    return np.column_stack([np.ravel(arrows.quiver.U), np.ravel(arrows.quiver.V)])


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
    assert plots.format_cell(-0.5) == "-0.50"
    assert plots.format_cell(-np.inf) == MINUS_INF


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
    assert cell_texts(ax, M.shape).tolist() == [["0.50", MINUS_INF], ["-1.25", "2.00"]]
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
    assert len(fig.axes) == 2
    fig, ax = new_ax()
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], colorbar=False)
    assert len(fig.axes) == 1


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
    assert cell_texts(ax, new.shape).tolist() == expected_texts(new, 2).tolist()


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
    assert len(view.figure.axes) == 6
    assert view.scores.get_title().startswith("2. Raw scores")
    assert view.weights.get_title().startswith("3. Weights")
    # the style
    facecolor = to_rgba(plots.STYLES[style]["figure.facecolor"])
    assert view.figure.get_facecolor() == facecolor
    assert view.embeddings.get_facecolor() == to_rgba(plots.STYLES[style]["axes.facecolor"])


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
