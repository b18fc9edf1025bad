"""Tests for attention_lessons.kit.plots: the drawn data must be the numbers given, not just "it did not
crash".

Each test reads back what Matplotlib holds (the heatmap mesh array, the cell texts and their
colours, the colour limits, the quiver's offsets and components, where the labels and titles
are drawn) and compares it with values computed independently in plain numpy: the WCAG
contrast formula, the label geometry. The lessons' figure functions are tested in their lessons'
folders (tests/lessons/lNN_slug/test_lNN_plots.py).
"""

import io
import itertools
import struct

import matplotlib as mpl
import numpy as np
import pytest
from conftest import (
    FOREIGN_RC,
    MINUS_INF,
    STYLES,
    box_distance,
    cell_texts,
    decode_png,
    expected_texts,
    inside,
    label_problems,
    mesh_values,
    quiver_deltas,
    quiver_tails,
)
from matplotlib.colors import to_rgb, to_rgba
from matplotlib.figure import Figure
from PIL import Image

from attention_lessons.kit import examples, plots
from attnlib import attention_steps, qkv

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# --- helpers -------------------------------------------------------------------------------------


def new_ax(style="light", figsize=(4.0, 3.0)):
    fig, axes = plots.figure(1, 1, figsize=figsize, style=style)
    return fig, axes[0, 0]


def wcag_contrast(a, b):
    """The WCAG 2 contrast ratio, written out from the definition (independent of attnlib)."""

    def luminance(colour):
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted([luminance(a), luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def png_size(data):
    """(width, height) from the IHDR chunk, read by hand."""
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# --- format_cell ---------------------------------------------------------------------------------


def test_format_cell():
    assert plots.format_cell(1.28844) == "1.29"
    assert plots.format_cell(1.28844, decimals=4) == "1.2884"
    assert plots.format_cell(-0.5) == "−0.50"
    assert plots.format_cell(-1.28844, decimals=3) == "−1.288"
    assert plots.format_cell(-np.inf) == MINUS_INF
    assert plots.format_cell(-np.inf)[0] == plots.format_cell(-0.5)[0] == "\u2212"  # the same minus
    assert plots.format_cell(np.float32(0.25)) == "0.25"


@pytest.mark.parametrize(
    ("value", "decimals", "text"),
    [(-1e-9, 2, "0.00"), (-0.0, 2, "0.00"), (-0.004, 2, "0.00"), (-0.0004, 3, "0.000"), (-0.4, 0, "0"),
     (-2.5e-7, 6, "0.000000"), (0.0, 2, "0.00"), (-0.006, 2, "−0.01"), (-2.6e-6, 6, "−0.000003")],
)  # fmt: skip
def test_format_cell_values_that_round_to_zero_have_no_sign(value, decimals, text):
    assert plots.format_cell(value, decimals) == text
    assert "-" not in plots.format_cell(value, decimals)  # never an ASCII hyphen-minus


@pytest.mark.parametrize(
    ("value", "decimals", "text"),
    [(1e300, 2, "1.00e+300"), (-1.7e308, 1, "−1.7e+308"), (123456.0, 2, "1.23e+05"), (1e5, 0, "1e+05"),
     (99999.994, 2, "99999.99"), (-2.5e-300, 2, "0.00"), (-3e7, 2, "−3.00e+07")],
)  # fmt: skip
def test_format_cell_writes_large_numbers_in_scientific_form(value, decimals, text):
    assert plots.format_cell(value, decimals) == text
    assert len(plots.format_cell(value, decimals)) <= 10


@pytest.mark.parametrize("decimals", [-1, 2.0, 1.5, True, "2", None, 11])
def test_format_cell_bad_decimals_is_a_clear_error(decimals):
    with pytest.raises(ValueError, match=r"decimals must be"):
        plots.format_cell(0.5, decimals)


@pytest.mark.parametrize("value", [np.nan, "0.5", None, 1j])
def test_format_cell_bad_value_is_a_clear_error(value):
    with pytest.raises(ValueError, match=r"value"):
        plots.format_cell(value)


# --- contrast ------------------------------------------------------------------------------------


def test_contrast_ratio_matches_the_wcag_definition():
    assert plots.contrast_ratio("black", "white") == pytest.approx(21.0)
    assert plots.contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert plots.contrast_ratio("#777777", "white") == pytest.approx(4.48, abs=0.01)  # WCAG's example grey
    assert plots.relative_luminance("white") == pytest.approx(1.0)
    assert plots.relative_luminance((0.0, 0.0, 0.0, 0.3)) == 0.0  # alpha is ignored
    rng = np.random.default_rng(0)
    for a, b in rng.uniform(size=(50, 2, 3)):
        assert plots.contrast_ratio(tuple(a), tuple(b)) == pytest.approx(wcag_contrast(tuple(a), tuple(b)))
        assert plots.contrast_ratio(tuple(a), tuple(b)) == plots.contrast_ratio(tuple(b), tuple(a))


def test_text_color_on_takes_the_higher_contrast_and_reaches_4_5_everywhere():
    rng = np.random.default_rng(1)
    for rgb in [*rng.uniform(size=(2000, 3)), (0.5, 0.5, 0.5), (0.46, 0.46, 0.46)]:
        colour = tuple(rgb)
        text = plots.text_color_on(colour)
        assert text in ("#000000", "#ffffff")
        other = "#ffffff" if text == "#000000" else "#000000"
        assert wcag_contrast(text, colour) >= wcag_contrast(other, colour)
        assert wcag_contrast(text, colour) >= 4.5


@pytest.mark.parametrize("style", STYLES)
def test_readable_color_keeps_the_hue_and_reaches_4_5(style):
    background = plots.STYLES[style]["axes.facecolor"]
    for colour in plots.OKABE_ITO:
        readable = plots.readable_color(colour, background)
        assert wcag_contrast(readable, background) >= 4.5
        if wcag_contrast(colour, background) >= 4.5:
            assert readable == colour.lower()  # unchanged when it already reads
        else:  # mixed with black (light) or white (dark): the channels keep their order
            assert np.argsort(to_rgb(readable)).tolist() == np.argsort(to_rgb(colour)).tolist()
    with pytest.raises(ValueError, match=r"minimum must be between 1 and"):
        plots.readable_color("#E69F00", background, minimum=25)


# --- figure, styles ------------------------------------------------------------------------------


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
    lambda: plots.check_style(["light"]),
])  # fmt: skip
def test_unknown_style_is_a_clear_error(make):
    with pytest.raises(ValueError, match=r"style must be one of \['dark', 'light'\], got"):
        make()


# --- drawing in the style of the figure ----------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
def test_heatmap_and_vectors_draw_in_the_style_of_their_figure(style):
    """Drawn later, under other global rcParams, a styled figure's panels still follow its style."""
    rc = plots.STYLES[style]
    fig, axes = plots.figure(1, 2, figsize=(8.0, 3.5), style=style)
    heat, arrows_ax = axes[0]
    with mpl.rc_context(FOREIGN_RC):
        drawn = plots.heatmap(heat, [[-1.0, 0.5], [2.0, 0.0]], ["a", "b"], ["x", "y"], title="scores")
        plots.vectors(arrows_ax, [[1.0, 0.5], [-0.5, 1.0]], ["u", "v"], title="vectors")
    plots.png_bytes(fig)  # a draw: every tick label is there

    tick_labels = [t for t in drawn.colorbar.ax.get_yticklabels() if t.get_text()]
    assert len(tick_labels) >= 3
    assert {to_rgba(t.get_color()) for t in tick_labels} == {to_rgba(rc["ytick.color"])}
    assert {to_rgba(t.tick2line.get_color()) for t in drawn.colorbar.ax.yaxis.get_major_ticks()} == {
        to_rgba(rc["ytick.color"])
    }
    for ax in (heat, arrows_ax):
        assert to_rgba(ax.title.get_color()) == to_rgba(rc["text.color"])
        assert ax.title.get_fontweight() == "bold"
    # the lines between the cells have the background's colour
    assert [to_rgba(c) for c in drawn.mesh.get_edgecolor()] == [to_rgba(rc["axes.facecolor"])]
    # the lines through the origin (the only lines of a vectors panel) have the frame's colour
    assert [to_rgba(line.get_color()) for line in arrows_ax.lines] == [to_rgba(rc["axes.edgecolor"])] * 2


def test_a_subfigure_draws_in_the_style_of_its_figure():
    fig, _ = plots.figure(style="dark")
    ax = fig.subfigures(1, 2)[1].subplots()
    with mpl.rc_context(FOREIGN_RC):
        arrows = plots.vectors(ax, [[1.0, 0.0]], ["u"], title="in a subfigure")
    assert ax.title.get_fontweight() == "bold"
    assert to_rgba(ax.lines[0].get_color()) == to_rgba(plots.STYLES["dark"]["axes.edgecolor"])
    assert arrows.labels[0].get_text() == "u"


def test_axes_of_other_figures_draw_in_the_current_rcparams():
    ax = Figure().subplots()
    with mpl.rc_context(FOREIGN_RC):
        plots.vectors(ax, [[1.0, 0.0]], ["u"], title="not ours")
    assert to_rgba(ax.lines[0].get_color()) == to_rgba(FOREIGN_RC["axes.edgecolor"])
    assert ax.title.get_fontweight() == "normal"


# --- heatmap -------------------------------------------------------------------------------------


def test_heatmap_draws_the_matrix_its_texts_and_labels():
    ex = examples.she_likes_coffee()
    Q, K, _ = qkv(ex.X, ex.W_q, ex.W_k, ex.W_v)
    S = Q @ K.T  # the known scores [[1.2884, 1.064, 1.452], ...]
    _, ax = new_ax()
    drawn = plots.heatmap(ax, S, ex.tokens, ex.tokens, title="Q Kᵀ", decimals=4)

    assert drawn.ax is ax and drawn.mesh is ax.collections[0] and drawn.decimals == 4
    np.testing.assert_allclose(mesh_values(drawn), S, rtol=0, atol=1e-12)
    assert cell_texts(drawn) == [
        ["1.2884", "1.0640", "1.4520"],
        ["1.0640", "1.6064", "1.4496"],
        ["1.4520", "1.4496", "1.8768"],
    ]
    assert drawn.mesh.get_clim() == pytest.approx((S.min(), S.max()))
    assert [t.get_text() for t in ax.get_xticklabels()] == list(ex.tokens)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(ex.tokens)
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("Q Kᵀ", "keys", "queries")
    assert drawn.colorbar is drawn.mesh.colorbar and ax.child_axes == [drawn.colorbar.ax]


def test_heatmap_cells_texts_and_tick_labels_line_up():
    """Row i, column j: the mesh cell holding M[i, j], its text and its tick labels coincide."""
    M = np.arange(6.0).reshape(2, 3)
    rows, cols = ["r0", "r1"], ["c0", "c1", "c2"]
    _, ax = new_ax()
    drawn = plots.heatmap(ax, M, rows, cols)

    corners = drawn.mesh.get_coordinates()  # (n_rows + 1, n_cols + 1, 2): x, y of corners
    values = mesh_values(drawn)
    yticks = dict(zip([t.get_text() for t in ax.get_yticklabels()], ax.get_yticks(), strict=True))
    xticks = dict(zip([t.get_text() for t in ax.get_xticklabels()], ax.get_xticks(), strict=True))
    for k, text in enumerate(drawn.texts):
        i, j = divmod(k, 3)
        x, y = text.get_position()
        (x0, y0), (x1, y1) = corners[i, j], corners[i + 1, j + 1]
        assert x0 < x < x1 and y0 < y < y1, (i, j)
        assert values[i, j] == M[i, j]
        assert text.get_text() == f"{M[i, j]:.2f}"
        assert xticks[cols[j]] == pytest.approx(x) and yticks[rows[i]] == pytest.approx(y)
    assert ax.yaxis_inverted()  # row 0 at the top, as the matrix is printed


def test_heatmap_masked_cells_show_minus_infinity():
    M = np.array([[0.5, -np.inf], [-1.25, 2.0]])
    _, ax = new_ax()
    drawn = plots.heatmap(ax, M, ["a", "b"], ["x", "y"])

    assert np.ma.getmaskarray(drawn.mesh.get_array()).tolist() == [[False, True], [False, False]]
    np.testing.assert_array_equal(mesh_values(drawn), M)
    assert cell_texts(drawn) == [["0.50", MINUS_INF], ["−1.25", "2.00"]]
    assert drawn.mesh.get_clim() == (-1.25, 2.0)  # limits of the finite values only


@pytest.mark.parametrize(
    ("matrix", "kwargs", "clim"),
    [
        ([[0.2, 0.4], [0.6, 0.8]], {}, (0.2, 0.8)),
        ([[0.2, 0.4], [0.6, 0.8]], {"vmin": 0, "vmax": 1}, (0.0, 1.0)),
        ([[0.2, 0.4], [0.6, 0.8]], {"vmin": 0.5}, (0.5, 0.8)),
        ([[3.0, 3.0], [3.0, 3.0]], {}, (2.5, 3.5)),  # one value: widened, not a zero-width scale
        ([[-np.inf, -np.inf], [-np.inf, -np.inf]], {}, (0.0, 1.0)),
    ],
)
def test_heatmap_colour_limits(matrix, kwargs, clim):
    _, ax = new_ax()
    drawn = plots.heatmap(ax, matrix, ["a", "b"], ["x", "y"], **kwargs)
    assert drawn.mesh.get_clim() == pytest.approx(clim)
    assert cell_texts(drawn) == expected_texts(matrix)


CMAPS = ["viridis", "cividis", "magma", "plasma", "coolwarm", "RdBu", "Greys", "twilight"]


@pytest.mark.parametrize("style", STYLES)
def test_every_number_on_a_cell_has_a_contrast_of_at_least_4_5(style):
    """Random heatmaps (colour maps, limits that clip, masked cells): the text against the drawn cell."""
    rng = np.random.default_rng(2 if style == "light" else 3)
    fig, axes = plots.figure(4, 5, figsize=(14.0, 10.0), style=style)
    drawn = []
    for k, ax in enumerate(axes.flat):
        shape = tuple(rng.integers(1, 6, size=2))
        matrix = rng.normal(scale=rng.choice([0.01, 1.0, 100.0]), size=shape)
        matrix[rng.uniform(size=shape) < 0.15] = -np.inf
        limits = {}
        if k % 2:  # limits inside the range: the colours of cells beyond them are clipped
            low, high = np.sort(
                rng.normal(scale=np.abs(matrix[np.isfinite(matrix)]).max(initial=1.0), size=2)
            )
            limits = {"vmin": float(low), "vmax": float(high) + 1e-3}
        names = [f"r{i}" for i in range(shape[0])], [f"c{j}" for j in range(shape[1])]
        drawn.append(plots.heatmap(ax, matrix, *names, cmap=CMAPS[k % len(CMAPS)], **limits))
    plots.png_bytes(fig)  # a draw: the mesh has mapped its values to colours
    background = to_rgba(plots.STYLES[style]["axes.facecolor"])
    checked = 0
    for heat in drawn:
        faces = heat.mesh.get_facecolors()  # one RGBA per cell, row by row; masked cells transparent
        assert len(faces) == len(heat.texts)
        for face, text in zip(faces, heat.texts, strict=True):
            cell = background if face[3] == 0 else face
            assert wcag_contrast(text.get_color(), cell) >= 4.5, (text.get_text(), cell)
            checked += 1
    assert checked >= 100


def test_cell_colour_read_from_the_pixels_matches_the_mesh():
    """The colour the contrast test reads (the mesh's face colours) is the one on the screen."""
    fig, ax = new_ax(figsize=(3.0, 3.0))
    drawn = plots.heatmap(ax, [[0.0, 0.45], [0.55, 1.0]], ["a", "b"], ["x", "y"], colorbar=False)
    pixels = decode_png(plots.png_bytes(fig))
    for k, face in enumerate(drawn.mesh.get_facecolors()):
        i, j = divmod(k, 2)
        x, y = ax.transData.transform((j + 0.15, i + 0.15))  # near a corner, away from the text
        pixel = pixels[pixels.shape[0] - 1 - int(y), int(x)] / 255
        np.testing.assert_allclose(pixel, face[:3], atol=2 / 255)


def test_heatmap_colorbar_is_optional():
    fig, ax = new_ax()
    drawn = plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"])
    assert drawn.colorbar is not None and ax.child_axes == [drawn.colorbar.ax] and fig.axes == [ax]
    fig, ax = new_ax()
    drawn = plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], colorbar=False)
    assert drawn.colorbar is None and ax.child_axes == [] and fig.axes == [ax]


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
    drawn = plots.heatmap(
        ax, np.arange(shape[0] * shape[1], dtype=float).reshape(shape), rows, cols, title="t"
    )
    plots.png_bytes(fig)

    bar, cells = drawn.colorbar.ax.get_window_extent(), ax.get_window_extent()
    assert cells.width / shape[1] == pytest.approx(cells.height / shape[0], rel=1e-6)  # square cells
    assert (bar.y0, bar.height) == pytest.approx((cells.y0, cells.height), abs=0.5)
    assert 0 < bar.x0 - cells.x1 < 0.2 * fig.dpi  # right beside them
    assert bar.y1 < ax.title.get_window_extent().y0
    assert inside(ax.get_tightbbox(), fig.bbox) and inside(drawn.colorbar.ax.get_tightbbox(), fig.bbox)


def lesson_panels(case):
    """Figures of heatmaps laid out as the lessons draw them (the figure, its heatmaps)."""
    ex, four = examples.she_likes_coffee(), examples.four_tokens_2d()
    steps = attention_steps(*qkv(ex.X, ex.W_q, ex.W_k, ex.W_v))
    tokens, dims = ex.tokens, [f"dim {k}" for k in range(1, 5)]
    if case == "lesson 01 cell 19":
        fig, axes = plots.figure(1, 2, figsize=(10, 4.2))
        return fig, [
            plots.heatmap(axes[0, 0], four.X @ four.X.T, four.tokens, four.tokens,
                          title="X Xᵀ, four tokens in 2D", cmap="cividis", xlabel="", ylabel=""),
            plots.heatmap(axes[0, 1], ex.X @ ex.X.T, tokens, tokens, title="X Xᵀ, she likes coffee",
                          cmap="cividis", xlabel="", ylabel=""),
        ]  # fmt: skip
    if case == "lesson 06 cell 12":
        fig, axes = plots.figure(1, 3, figsize=(13, 3.6))
        V, lo, hi = steps.output, steps.output.min(), steps.output.max()
        return fig, [
            plots.heatmap(axes[0, 0], steps.weights, tokens, tokens, title="A: weights (rows sum to 1)",
                          vmin=0, vmax=1),
            plots.heatmap(axes[0, 1], V, tokens, dims, title="V: values", cmap="cividis", vmin=lo, vmax=hi,
                          xlabel="value dimension", ylabel="keys"),
            plots.heatmap(axes[0, 2], V, tokens, dims, title="Z = A V: outputs", cmap="cividis", vmin=lo,
                          vmax=hi, xlabel="value dimension"),
        ]  # fmt: skip
    fig, axes = plots.figure(1, 3, figsize=(14, 4.2))  # lesson 05 cell 9
    return fig, [
        plots.heatmap(
            ax, steps.raw_scores, tokens, tokens, title=f"{k}. scaled scores Q Kᵀ/√d_k", cmap="cividis"
        )
        for k, ax in enumerate(axes[0], start=1)
    ]


@pytest.mark.parametrize("case", ["lesson 01 cell 19", "lesson 06 cell 12", "lesson 05 cell 9"])
def test_titles_and_labels_are_inside_the_figure(case):
    fig, drawn = lesson_panels(case)
    plots.png_bytes(fig)
    for heat in drawn:
        assert inside(heat.ax.title.get_window_extent(), fig.bbox, tolerance=0), heat.ax.get_title()
        assert inside(heat.ax.get_tightbbox(), fig.bbox, tolerance=0)


@pytest.mark.parametrize("seed", range(6))
def test_titles_of_random_heatmap_grids_are_inside_the_figure(seed):
    rng = np.random.default_rng(seed)
    ncols = int(rng.integers(1, 4))
    fig, axes = plots.figure(
        1, ncols, figsize=(float(rng.uniform(3.5, 5.0)) * ncols, float(rng.uniform(2.5, 5.0)))
    )
    for ax in axes[0]:
        shape = tuple(int(n) for n in rng.integers(1, 7, size=2))
        plots.heatmap(ax, rng.normal(size=shape), [f"row {i}" for i in range(shape[0])],
                      [f"c{j}" for j in range(shape[1])], title="A two-line title\nof a heatmap",
                      colorbar=bool(rng.integers(0, 2)))  # fmt: skip
    plots.png_bytes(fig)
    for ax in axes[0]:
        assert inside(ax.title.get_window_extent(), fig.bbox, tolerance=0)


@pytest.mark.parametrize("case", ["lesson 06 cell 12", "lesson 05 cell 9"])
def test_a_panels_axis_label_keeps_clear_of_the_colour_bar_before_it(case):
    """Panel k + 1's "queries" must not read as the label of panel k's colour bar."""
    fig, drawn = lesson_panels(case)
    plots.png_bytes(fig)
    for before, after in itertools.pairwise(drawn):
        bar = before.colorbar.ax.get_tightbbox()  # the bar and its tick labels
        label = after.ax.yaxis.label.get_window_extent()
        assert label.x0 - bar.x1 >= 0.25 * fig.dpi, (before.ax.get_title(), after.ax.get_ylabel())


def test_a_large_heatmap_leaves_out_its_numbers_and_says_so():
    rng = np.random.default_rng(0)
    names = [f"t{i}" for i in range(50)]
    fig, ax = new_ax(figsize=(6.0, 5.0))
    drawn = plots.heatmap(ax, rng.normal(size=(50, 50)), names, names, title="50 tokens")
    plots.png_bytes(fig)
    assert drawn.texts == [] and len(ax.texts) == 0
    assert ax.get_title() == "50 tokens\n50 × 50 cells: values not written"
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert 1 < len(shown) <= plots.heatmaps.MAX_ANNOTATED_SIDE + 1 and shown[:2] == ["t0", "t5"]
    np.testing.assert_array_equal(mesh_values(drawn).shape, (50, 50))
    # at the limit the numbers are written, and annotate=True asks for them above it
    limit = plots.heatmaps.MAX_ANNOTATED_SIDE
    _, ax = new_ax()
    names = [str(i) for i in range(limit)]
    assert len(plots.heatmap(ax, np.eye(limit), names, names).texts) == limit * limit
    _, ax = new_ax()
    names = [str(i) for i in range(limit + 1)]
    assert len(plots.heatmap(ax, np.eye(limit + 1), names, names, annotate=True).texts) == (limit + 1) ** 2
    _, ax = new_ax()
    drawn = plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], title="asked", annotate=False)
    assert drawn.texts == [] and ax.get_title() == "asked"


def test_a_heatmap_of_huge_values_is_drawn_or_refused_clearly():
    _, ax = new_ax()
    for matrix in ([[1.7e308, -1.7e308]], [[1.7e308, 1e307]], [[1e308]], [[6e299, -6e299]]):
        with pytest.raises(ValueError, match=r"the colour scale from .* is too wide to draw"):
            plots.heatmap(ax, matrix, ["a"], ["x", "y"][: len(matrix[0])])
        assert len(ax.collections) == 0  # refused before anything was drawn
    fig, ax = new_ax()
    drawn = plots.heatmap(ax, [[9e299, -1e299]], ["a"], ["x", "y"])
    assert decode_png(plots.png_bytes(fig)).shape == (300, 400, 3)
    assert cell_texts(drawn) == [["9.00e+299", "−1.00e+299"]]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"decimals": -1}, r"decimals must be from 0 to 10, got -1"),
        ({"decimals": 1.5}, r"decimals must be a whole number"),
        ({"decimals": True}, r"decimals must be a whole number"),
        ({"vmin": 1.0, "vmax": 0.0}, r"vmin must be less than vmax"),
        ({"vmin": np.nan}, r"vmin must be a finite real number"),
        ({"vmax": np.inf}, r"vmax must be a finite real number"),
    ],
)
def test_heatmap_bad_options_are_a_clear_error(kwargs, message):
    _, ax = new_ax()
    with pytest.raises(ValueError, match=message):
        plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], **kwargs)
    assert len(ax.collections) == 0


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
    fig, ax = new_ax(figsize=(4.0, 4.0))
    arrows = plots.vectors(ax, ex.X, ex.tokens, title="Four tokens")

    np.testing.assert_array_equal(quiver_tails(arrows), np.zeros((4, 2)))
    np.testing.assert_array_equal(quiver_deltas(arrows), ex.X)
    assert arrows.quiver.scale == 1 and arrows.quiver.scale_units == "xy" and arrows.quiver.angles == "xy"
    assert [t.get_text() for t in arrows.labels] == list(ex.tokens)
    # each arrow in its Okabe–Ito colour; its label in the same colour, made to read on white
    arrow_colours = [tuple(c) for c in arrows.quiver.get_facecolor()]
    assert arrow_colours == [to_rgba(c) for c in plots.OKABE_ITO[:4]]
    for label, colour in zip(arrows.labels, plots.OKABE_ITO, strict=False):
        assert to_rgba(label.get_color()) == to_rgba(plots.readable_color(colour, "white"))
        assert wcag_contrast(label.get_color(), "white") >= 4.5
    # square limits that show every tip and the origin
    lo, hi = ax.get_xlim()
    assert ax.get_ylim() == (lo, hi)
    assert lo < 0 and hi > ex.X.max()
    assert ax.get_title() == "Four tokens"
    plots.png_bytes(fig)
    assert label_problems(fig, ax) == []


def test_vectors_from_given_origins_and_limits():
    tails = np.array([[1.0, 1.0], [-1.0, 0.5]])
    tips = np.array([[2.0, 3.0], [0.0, -1.0]])
    fig, ax = new_ax()
    arrows = plots.vectors(ax, tips, ["u", "v"], origins=tails, limits=(-4.0, 4.0), alpha=0.25)

    np.testing.assert_array_equal(np.column_stack([arrows.quiver.X, arrows.quiver.Y]), tails)
    np.testing.assert_array_equal(quiver_tails(arrows), tails)
    np.testing.assert_array_equal(quiver_deltas(arrows), tips - tails)
    assert ax.get_xlim() == ax.get_ylim() == (-4.0, 4.0)
    assert arrows.quiver.get_alpha() == 0.25
    assert all(t.get_alpha() is None for t in arrows.labels)  # labels stay opaque
    plots.png_bytes(fig)
    assert label_problems(fig, ax) == []


@pytest.mark.parametrize(
    ("points", "labels", "kwargs", "message"),
    [
        ([[1.0, 0.0, 0.0]], ["a"], {}, r"points must have shape \(n, 2\).*got shape \(1, 3\)"),
        ([1.0, 0.0], ["a"], {}, r"points must have shape \(n, 2\).*got shape \(2,\)"),
        ([[1.0, 0.0], [0.0, 1.0]], ["a"], {}, r"there are 2 vectors but 1 labels"),
        ([[1.0, 0.0]], ["a", "b"], {}, r"there are 1 vectors but 2 labels"),
        (
            [[1.0, 0.0]],
            ["a"],
            {"origins": [[0.0, 0.0], [1.0, 1.0]]},
            r"origins must have the shape of points",
        ),
        ([[1.0, np.nan]], ["a"], {}, r"points"),
        ([[1.0, 0.0]], ["a"], {"colors": []}, r"colors must name at least one colour"),
        ([[1.0, 0.0]], ["a"], {"limits": (1.0, -1.0)}, r"limits must have low < high"),
        ([[1.0, 0.0]], ["a"], {"limits": (0.0, np.inf)}, r"limits must be two finite numbers"),
        ([[1.0, 0.0]], ["a"], {"limits": 2.0}, r"limits must be \(low, high\)"),
    ],
)
def test_vectors_bad_input_is_a_clear_error(points, labels, kwargs, message):
    _, ax = new_ax()
    with pytest.raises(ValueError, match=message):
        plots.vectors(ax, points, labels, **kwargs)


# --- where the arrow labels go -------------------------------------------------------------------


def lesson_06_cell_22():
    toks = examples.four_tokens_2d()
    V2 = toks.X
    steps2 = attention_steps(V2, V2, V2)
    sharp = attention_steps(V2, V2, V2, scale=5 / np.sqrt(2))
    names, limits = list(toks.tokens), (-0.1, 1.1)
    fig, axes = plots.figure(1, 3, figsize=(13, 4.6))
    plots.vectors(axes[0, 0], V2, names, title="values V (= embeddings X)", limits=limits)
    for ax, result in [(axes[0, 1], steps2), (axes[0, 2], sharp)]:
        ends = V2[[2, 0]]
        ax.plot(ends[:, 0], ends[:, 1], color="0.6", linewidth=6, alpha=0.35, solid_capstyle="round")
        plots.vectors(ax, V2, [""] * 4, alpha=0.2, limits=limits)
        plots.vectors(ax, result.output, names, title="context vectors", limits=limits)
    return fig, list(axes[0])


def lesson_01_cell_15():
    a, b = np.array([1.0, 0.2]), np.array([0.8, 0.3])
    fig, axes = plots.figure(1, 2, figsize=(9, 2.0))
    for ax, factor, name in zip(axes[0], [1, 2], ["a", "2a"], strict=True):
        plots.vectors(ax, np.array([factor * a, b]), [name, "b"], limits=(-0.1, 2.1), title=name)
        ax.set_ylim(-0.1, 0.4)  # set after drawing: the labels are placed at the draw
    return fig, list(axes[0])


#: Lesson 07's overview figure is checked the same way in tests/lessons/l07_whole_picture.
LESSON_CASES = {
    "lesson 06 cell 22": lesson_06_cell_22,
    "lesson 01 cell 15": lesson_01_cell_15,
}


@pytest.mark.parametrize("case", list(LESSON_CASES))
def test_lesson_arrow_labels_sit_at_their_own_tips_clear_of_every_arrow(case):
    fig, axes = LESSON_CASES[case]()
    plots.png_bytes(fig)
    for ax in axes:
        assert label_problems(fig, ax) == [], ax.get_title()


def readable_random_arrows(rng, n):
    """n random tips whose arrows leave each tip free: no tip within 0.12 of another arrow."""
    while True:
        tips = rng.uniform(-1, 1, size=(n, 2))
        if np.linalg.norm(tips, axis=1).min() < 0.25:
            continue
        clear = all(
            np.min([np.linalg.norm(tips[i] - t * tips[j]) for t in np.linspace(0, 1, 50)]) >= 0.12
            for i in range(n)
            for j in range(n)
            if i != j
        )
        if clear:
            return tips


@pytest.mark.parametrize("style", STYLES)
def test_random_arrow_labels_sit_at_their_own_tips_clear_of_every_arrow(style):
    rng = np.random.default_rng(10 if style == "light" else 11)
    fig, axes = plots.figure(3, 4, figsize=(14.0, 10.5), style=style)
    for k, ax in enumerate(axes.flat):
        n = int(rng.integers(2, 6))
        if k % 3 == 0:  # faint "before" arrows behind, unlabelled, as lesson 06 draws them
            plots.vectors(ax, rng.uniform(-1, 1, size=(n, 2)), [""] * n, alpha=0.2, limits=(-1.3, 1.3))
        plots.vectors(ax, readable_random_arrows(rng, n), [f"Token-{i + 1}" for i in range(n)],
                      limits=(-1.3, 1.3) if k % 3 == 0 else None)  # fmt: skip
    plots.png_bytes(fig)
    background = plots.STYLES[style]["axes.facecolor"]
    for ax in axes.flat:
        assert label_problems(fig, ax) == []
        for label in ax.texts:
            assert wcag_contrast(label.get_color(), background) >= 4.5 and label.get_alpha() is None


def test_labels_stay_above_and_right_of_their_tips_when_not_spread():
    fig, ax = new_ax(figsize=(4.0, 4.0))
    tips = np.array([[1.0, 1.0], [1.02, 0.97], [-1.0, 0.5]])
    arrows = plots.vectors(ax, tips, ["a", "b", "c"], spread_labels=False)
    assert not arrows.spread_labels
    plots.png_bytes(fig)
    for label, tip in zip(arrows.labels, ax.transData.transform(tips), strict=True):
        box = label.get_window_extent()
        assert box.x0 > tip[0] and box.y0 > tip[1] and box_distance(tip, box) < 20


def test_an_empty_label_is_not_placed_and_takes_no_room():
    fig, ax = new_ax(figsize=(4.0, 4.0))
    arrows = plots.vectors(ax, [[1.0, 0.0], [0.0, 1.0]], ["", "b"])
    plots.png_bytes(fig)
    assert arrows.labels[0].get_text() == "" and arrows.labels[1].get_text() == "b"
    assert label_problems(fig, ax) == []


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
    corner = decode_png(plots.png_bytes(fig, dpi=20))[0, 0]
    assert tuple(corner) == (0x1E, 0x1E, 0x1E)


def test_show_displays_the_png_with_its_text_alternative(monkeypatch, capsys):
    import base64

    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *args, **kwargs: shown.append((args, kwargs)))
    fig, ax = new_ax(figsize=(2.0, 1.5))
    plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"])
    assert plots.show(fig, dpi=40) is None

    assert len(shown) == 1
    (bundle,), kwargs = shown[0]
    alt = plots.description(fig).text
    assert kwargs == {"raw": True, "metadata": {"image/png": {"alt": alt}}}
    assert sorted(bundle) == ["image/png", "text/html", "text/plain"]
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == PNG_MAGIC
    assert png_size(png) == (80, 60)
    assert bundle["text/plain"] == alt
    assert bundle["text/html"].startswith(f'<img src="data:image/png;base64,{bundle["image/png"]}" alt="')
    assert capsys.readouterr() == ("", "")  # no "<Figure size ...>" text anywhere
