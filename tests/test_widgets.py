"""The explorers of attnlib.widgets, driven without a browser over the whole range of every control.

Every slider goes to its minimum, its maximum and 20 random values (on its step, as a browser
would send them). After each move: no exception, the picture changed when the value did, it is a
PNG of the expected size, and what is drawn (heatmap arrays and cell texts, arrow ends, bar
heights) equals attnlib's computation on the same inputs, with weight rows summing to 1.
Then the extremes: an embedding at the origin, d_k = 1, all tokens identical, every key masked.
"""

from __future__ import annotations

import io
import math
import threading

import ipywidgets
import numpy as np
import pytest
from PIL import Image

from attnlib import attention_steps, examples, plots, widgets
from attnlib.scaling import random_queries_keys
from attnlib.similarity import similarity

pytestmark = pytest.mark.filterwarnings("error")  # a warning in a callback is a bug here

RANDOM_VALUES = 20
EXAMPLE = examples.four_tokens_2d()


# --- helpers ------------------------------------------------------------------------------------


def slider_values(
    slider: ipywidgets.Widget, rng: np.random.Generator, n: int = RANDOM_VALUES
) -> list[object]:
    """The minimum, the maximum and ``n`` random values of a slider, on its step."""
    if isinstance(slider, ipywidgets.SelectionSlider):
        options = list(slider.options)
        return [options[0], options[-1], *(options[i] for i in rng.integers(0, len(options), n))]
    if isinstance(slider, ipywidgets.FloatLogSlider):
        exponents = np.arange(slider.min, slider.max + slider.step / 2, slider.step)
        picked = [exponents[0], exponents[-1], *rng.choice(exponents, n)]
        return [float(slider.base**e) for e in picked]
    if isinstance(slider, ipywidgets.IntSlider):
        return [
            slider.min,
            slider.max,
            *(int(v) for v in rng.integers(slider.min, slider.max + 1, n)),
        ]
    assert isinstance(slider, ipywidgets.FloatSlider)
    n_steps = round((slider.max - slider.min) / slider.step)
    picked = [0, n_steps, *rng.integers(0, n_steps + 1, n)]
    return [round(slider.min + int(k) * slider.step, 10) for k in picked]


def decode(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG"
        return np.asarray(image.convert("RGB"))


def move(explorer: widgets.Explorer, control: ipywidgets.Widget, value: object) -> None:
    """Set a control as a browser would; check the picture changed if the value did."""
    before_value, before_png = control.value, explorer.image.value
    control.value = value
    if control.value != before_value:
        assert explorer.image.value != before_png, f"{control.description}: {before_value} → {value}"


def sweep(explorer: widgets.Explorer, check, seed: int = 0, n: int = RANDOM_VALUES) -> None:
    """Every slider to its min, max and ``n`` random values; ``check(explorer)`` after each move."""
    rng = np.random.default_rng(seed)
    size = decode(explorer.image.value).shape
    for name, slider in explorer.sliders.items():
        for value in slider_values(slider, rng, n):
            move(explorer, slider, value)
            check(explorer)
        assert decode(explorer.image.value).shape == size, name


def mesh_values(ax) -> np.ndarray:
    return np.ma.filled(np.ma.asarray(ax.collections[0].get_array(), dtype=float), np.nan)


def cell_texts(ax, n_cells: int) -> list[str]:
    return [text.get_text() for text in ax.texts[:n_cells]]


def same_pixels(a: bytes, b: bytes) -> bool:
    return decode(a).shape == decode(b).shape and bool((decode(a) == decode(b)).all())


# --- the playground -----------------------------------------------------------------------------


def expected_steps(pg: widgets.Playground):
    X = np.array([[pg.sliders[f"{t} {axis}"].value for axis in "xy"] for t in pg.tokens])
    d_k = pg.sliders["d_k"].value
    steps = attention_steps(
        X @ pg.W_q, X @ pg.W_k, X @ pg.W_v, scale=1 / math.sqrt(d_k), causal=pg.causal.value
    )
    return X, steps


def check_playground(pg: widgets.Playground) -> None:
    X, steps = expected_steps(pg)
    view, n = pg.view, len(pg.tokens)
    np.testing.assert_allclose(mesh_values(view.scores), steps.raw_scores, atol=1e-12)
    np.testing.assert_allclose(mesh_values(view.weights), steps.weights, atol=1e-12)
    np.testing.assert_allclose(mesh_values(view.weights).sum(axis=1), 1.0, atol=1e-12)
    assert cell_texts(view.scores, n * n) == [plots.format_cell(v) for v in steps.raw_scores.ravel()]
    assert cell_texts(view.weights, n * n) == [plots.format_cell(v) for v in steps.weights.ravel()]
    for arrows, tips in (
        (view.embedding_arrows, X),
        (view.faint_arrows, X),
        (view.context_arrows, steps.output),
    ):
        np.testing.assert_allclose(np.column_stack([arrows.quiver.U, arrows.quiver.V]), tips, atol=1e-12)
        np.testing.assert_allclose(arrows.quiver.get_offsets(), 0.0)
        np.testing.assert_allclose([label.get_position() for label in arrows.labels], tips, atol=1e-12)
    for ax in (view.embeddings, view.context):  # every arrow tip is inside the panel
        low, high = ax.get_xlim()
        every = np.concatenate([X.ravel(), steps.output.ravel()])
        assert low <= every.min() and every.max() <= high
        assert ax.get_ylim() == (low, high)
    np.testing.assert_allclose(pg.steps.weights, steps.weights, atol=1e-12)
    assert f"{steps.scale:.4f}" in pg.readout.value


@pytest.fixture
def pg() -> widgets.Playground:
    return widgets.playground(asynchronous=False)


def test_playground_first_picture_is_lesson_07(pg):
    steps = attention_steps(EXAMPLE.X @ EXAMPLE.W_q, EXAMPLE.X @ EXAMPLE.W_k, EXAMPLE.X @ EXAMPLE.W_v)
    static = plots.attention_figure(steps, EXAMPLE.tokens, EXAMPLE.X)  # the default arguments
    assert same_pixels(pg.image.value, plots.png_bytes(static.figure))
    assert pg.sliders["d_k"].value == 2
    assert pg.causal.value is False and pg.style.value == "light"
    check_playground(pg)


def test_playground_every_slider_over_its_range(pg):
    assert set(pg.sliders) == {f"{t} {axis}" for t in EXAMPLE.tokens for axis in "xy"} | {"d_k"}
    for slider in pg.sliders.values():
        assert slider.description and slider.min < slider.max and slider.step > 0
    sweep(pg, check_playground)


def test_playground_causal_and_dark(pg):
    sweep_seed = np.random.default_rng(1)
    for causal, style in ((True, "light"), (True, "dark"), (False, "dark")):
        move(pg, pg.causal, causal)
        move(pg, pg.style, style)
        check_playground(pg)
        if causal:
            assert np.all(np.triu(pg.steps.weights, 1) == 0)
            assert "mask" in pg.view.weights.get_title()
        for value in slider_values(pg.sliders["Token-2 y"], sweep_seed)[:5]:
            move(pg, pg.sliders["Token-2 y"], value)
            check_playground(pg)
    background = decode(pg.image.value)[2, 2]
    assert background.max() < 80  # dark


def test_playground_extremes(pg):
    first = pg.image.value
    # an embedding at the origin: its scores are all zero, its weights uniform
    for axis in "xy":
        move(pg, pg.sliders[f"Token-1 {axis}"], 0.0)
    check_playground(pg)
    np.testing.assert_allclose(pg.steps.raw_scores[0], 0.0)
    np.testing.assert_allclose(pg.steps.weights[0], 0.25)
    # d_k = 1: no scaling
    move(pg, pg.sliders["d_k"], 1)
    check_playground(pg)
    assert pg.steps.scale == 1.0
    # all tokens identical: every weight is 1/n, every output the shared vector
    for token in EXAMPLE.tokens:
        move(pg, pg.sliders[f"{token} x"], 0.5)
        move(pg, pg.sliders[f"{token} y"], -0.5)
    check_playground(pg)
    np.testing.assert_allclose(pg.steps.weights, 0.25)
    np.testing.assert_allclose(pg.steps.output, [[0.5, -0.5]] * 4)
    # all at the origin, causal: nothing to draw but zeros and the mask
    move(pg, pg.causal, True)
    for token in EXAMPLE.tokens:
        move(pg, pg.sliders[f"{token} x"], 0.0)
        move(pg, pg.sliders[f"{token} y"], 0.0)
    check_playground(pg)
    np.testing.assert_allclose(pg.steps.weights[1], [0.5, 0.5, 0, 0])
    # the largest values of every slider at once
    for slider in pg.sliders.values():
        move(pg, slider, slider.max)
    check_playground(pg)
    pg.reset()
    assert same_pixels(pg.image.value, first)
    check_playground(pg)


def test_playground_reset_restores_every_control(pg):
    defaults = {name: slider.value for name, slider in pg.sliders.items()}
    first = pg.image.value
    move(pg, pg.sliders["Token-3 x"], -1.5)
    move(pg, pg.sliders["d_k"], 40)
    move(pg, pg.causal, True)
    move(pg, pg.style, "dark")
    renders = pg.renders
    pg.reset_button.click()
    assert pg.renders == renders + 1  # one render for the whole reset
    assert {name: slider.value for name, slider in pg.sliders.items()} == defaults
    assert pg.causal.value is False and pg.style.value == "light"
    assert same_pixels(pg.image.value, first)


def test_playground_other_tokens_and_projections():
    she = examples.she_likes_coffee()  # 4-D: use the first two dimensions as a 2D example
    W_q = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]])
    pg = widgets.playground(
        she.tokens, she.X[:, :2], W_q=W_q, W_k=W_q, W_v=np.array([[0.0, 1.0], [1.0, 0.0]]), asynchronous=False
    )
    assert pg.sliders["d_k"].value == 3  # the queries' dimension
    check_playground(pg)
    sweep(pg, check_playground, seed=3, n=5)


def test_playground_rejects_bad_arguments():
    with pytest.raises(ValueError, match="both tokens and embeddings"):
        widgets.playground(["a"])
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        widgets.playground(["a", "b"], np.ones((2, 3)))
    with pytest.raises(ValueError, match="one per embedding"):
        widgets.playground(["a"], np.ones((2, 2)))
    with pytest.raises(ValueError, match="W_v"):
        widgets.playground(["a", "b"], np.ones((2, 2)), W_v=np.ones((2, 3)))
    with pytest.raises(ValueError, match="style"):
        widgets.playground(style="sepia")
    with pytest.raises(ValueError, match="d_k"):
        widgets.playground(d_k=0)


def test_playground_d_k_slider_is_labelled_honestly(pg):
    description = pg.sliders["d_k"].description
    assert "1/√d_k" in description
    assert "2D" in pg.note.value and "temperature" in pg.note.value and pg.note in pg.widget.children


# --- coalescing: fast moves never queue up -------------------------------------------------------


def test_fast_moves_are_coalesced_and_end_on_the_newest_value():
    pg = widgets.playground()  # asynchronous, as in a notebook
    slider = pg.sliders["Token-1 x"]
    renders = pg.renders
    values = [round(v, 2) for v in np.linspace(-1.5, 1.5, 61)]
    for value in values:
        slider.value = value  # returns at once: the render happens on another thread
    pg.wait()
    assert slider.value == values[-1]
    assert 1 <= pg.renders - renders < len(values) / 2
    check_playground(pg)  # the picture shows the newest value
    settled = pg.image.value
    assert pg.update() is not None
    assert decode(pg.image.value).shape == decode(settled).shape


def test_background_render_runs_off_the_calling_thread():
    pg = widgets.playground()
    threads: list[str] = []
    render = pg._render

    def spy() -> bytes:
        threads.append(threading.current_thread().name)
        return render()

    pg._render = spy
    pg.sliders["Token-2 x"].value = 0.0
    pg.wait()
    assert threads and all(name != threading.current_thread().name for name in threads)


def test_a_failing_background_render_is_shown_and_raised_by_wait():
    pg = widgets.playground()

    def broken() -> bytes:
        raise RuntimeError("drawing failed")

    pg._render = broken
    pg.sliders["Token-2 x"].value = 0.0
    with pytest.raises(RuntimeError, match="drawing failed"):
        pg.wait()
    assert "drawing failed" in pg.message.value


def test_wait_times_out_while_a_render_hangs():
    pg = widgets.playground()
    release = threading.Event()
    render = pg._render

    def slow() -> bytes:
        release.wait(5)
        return render()

    pg._render = slow
    pg.sliders["Token-2 x"].value = 0.0
    with pytest.raises(TimeoutError):
        pg.wait(timeout=0.05)
    release.set()
    pg.wait()


def test_explorer_displays_as_its_widget(pg):
    bundle = pg._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == pg.widget.model_id
    assert "0x" not in bundle["text/plain"] and "playground" in bundle["text/plain"].lower()
    assert pg.image in pg.widget.children and pg.readout in pg.widget.children


# --- the scaling explorer (lesson 04) ------------------------------------------------------------


def check_scaling(explorer: widgets.ScalingExplorer) -> None:
    d_k = explorer.sliders["d_k"].value
    view, stats = explorer.view, explorer.stats
    assert stats.d_k == d_k
    Q, K = random_queries_keys(d_k, explorer.n_queries, explorer.n_keys, seed=explorer.seed)
    raw = attention_steps(Q[0], K, K, scale=1.0)
    scaled = attention_steps(Q[0], K, K)
    raw_heights = [bar.get_height() for bar in view.raw_bars.patches]
    scaled_heights = [bar.get_height() for bar in view.scaled_bars.patches]
    np.testing.assert_allclose(raw_heights, raw.weights, atol=1e-12)
    np.testing.assert_allclose(scaled_heights, scaled.weights, atol=1e-12)
    assert math.isclose(sum(raw_heights), 1.0) and math.isclose(sum(scaled_heights), 1.0)
    all_raw = Q @ K.T
    edges = plots.scaling_bins(d_k)
    counts = np.histogram(np.clip(all_raw, edges[0], edges[-1]), edges)[0]
    np.testing.assert_allclose(view.raw_hist.get_data().values, counts / all_raw.size)
    scaled_counts = np.histogram(np.clip(all_raw / math.sqrt(d_k), edges[0], edges[-1]), edges)[0]
    np.testing.assert_allclose(view.scaled_hist.get_data().values, scaled_counts / all_raw.size)
    assert view.raw_marker.get_xdata()[0] == d_k
    np.testing.assert_allclose(view.raw_marker.get_ydata()[0], all_raw.var())
    np.testing.assert_allclose(view.scaled_marker.get_ydata()[0], (all_raw / math.sqrt(d_k)).var())
    assert f"d_k = {d_k}" in explorer.readout.value
    assert f"{all_raw.var():.2f}" in explorer.readout.value


def test_scaling_explorer_over_its_range():
    explorer = widgets.scaling_explorer(asynchronous=False)
    slider = explorer.sliders["d_k"]
    assert slider.options[0] == 1 and slider.options[-1] == 1024
    check_scaling(explorer)
    sweep(explorer, check_scaling)


def test_scaling_explorer_shows_why_sqrt_d_k():
    explorer = widgets.scaling_explorer(1, asynchronous=False)
    assert explorer.stats.raw_max_weight == explorer.stats.scaled_max_weight  # d_k = 1: no scaling
    move(explorer, explorer.sliders["d_k"], 1024)
    stats = explorer.stats
    assert stats.raw_variance > 500 and 0.5 < stats.scaled_variance < 2
    assert stats.raw_max_weight > 0.9 > 0.5 > stats.scaled_max_weight  # saturated without scaling
    assert stats.raw_jacobian_norm < stats.scaled_jacobian_norm  # and its gradient vanishes


def test_scaling_explorer_new_draw_changes_the_vectors():
    explorer = widgets.scaling_explorer(8, asynchronous=False)
    before = explorer.image.value
    explorer.new_draw.click()
    assert explorer.seed == 1 and explorer.image.value != before
    check_scaling(explorer)
    sweep(explorer, check_scaling, seed=5)


# --- the softmax explorer (lesson 05) ------------------------------------------------------------


def check_softmax(explorer: widgets.SoftmaxExplorer) -> None:
    labels = explorer.labels
    scores = np.array([explorer.sliders[f"score {label}"].value for label in labels])
    keep = np.array([not explorer.masks[f"mask {label}"].value for label in labels])
    temperature = explorer.sliders["temperature"].value
    # softmax(s / T) as attention: one query 1, keys = the scores, values = one-hot rows
    steps = attention_steps(
        np.ones(1), scores[:, None], np.eye(len(labels)), scale=1 / temperature, mask=keep
    )
    view = explorer.view
    heights = [bar.get_height() for bar in view.weight_bars.patches]
    np.testing.assert_allclose(heights, steps.weights, atol=1e-12)
    np.testing.assert_allclose(steps.output, steps.weights, atol=1e-12)
    assert math.isclose(sum(heights), 1.0 if keep.any() else 0.0, abs_tol=1e-12)
    assert [t.get_text() for t in view.weight_texts] == [f"{p:.3f}" for p in steps.weights]
    shown = np.where(keep, scores, -np.inf)
    assert [t.get_text() for t in view.score_texts] == [plots.format_cell(s) for s in shown]
    np.testing.assert_allclose(
        [bar.get_height() for bar in view.score_bars.patches], np.where(keep, scores, 0)
    )
    assert f"T = {temperature:.2f}" in view.weights.get_title()


def test_softmax_explorer_over_its_range():
    explorer = widgets.softmax_explorer(asynchronous=False)
    assert explorer.labels == ("h1", "h2", "h3")
    np.testing.assert_allclose(explorer.scores, [8.0, 6.0, 1.0])  # lesson 03's s·h
    check_softmax(explorer)
    sweep(explorer, check_softmax)


def test_softmax_explorer_masks_and_extremes():
    explorer = widgets.softmax_explorer([10.0, -10.0, 0.0, 3.0], asynchronous=False)
    move(explorer, explorer.sliders["temperature"], 0.1)  # s / T = 100: one key takes (almost) all
    check_softmax(explorer)
    assert explorer.weights[0] == pytest.approx(1.0)
    move(explorer, explorer.masks["mask k1"], True)
    check_softmax(explorer)
    assert explorer.weights[0] == 0.0 and explorer.weights[3] == pytest.approx(1.0)
    for mask in explorer.masks.values():
        move(explorer, mask, True)
        check_softmax(explorer)
    np.testing.assert_array_equal(explorer.weights, 0.0)  # every key masked: zeros, not NaN
    move(explorer, explorer.sliders["temperature"], 10.0)
    for mask in explorer.masks.values():
        move(explorer, mask, False)
    check_softmax(explorer)
    sweep(explorer, check_softmax, seed=7)


# --- the similarity explorer (lessons 01 and 03) -------------------------------------------------


def check_similarity(explorer: widgets.SimilarityExplorer) -> None:
    a, b = (
        np.array([explorer.sliders[f"{label} {axis}"].value for axis in "xy"]) for label in explorer.labels
    )
    view = explorer.view
    np.testing.assert_allclose(np.column_stack([view.arrows.quiver.U, view.arrows.quiver.V]), [a, b])
    dot = attention_steps(a, b[None, :], np.ones((1, 1)), scale=1.0).raw_scores[0]  # a·b as a score
    sim = similarity(a, b)
    assert math.isclose(dot, sim.dot, abs_tol=1e-12)
    text = view.readout.get_text()
    assert f"{sim.dot:+.2f}" in text and f"{sim.norm_a * sim.norm_b:.2f}" in text
    if sim.cosine is None:
        assert "undefined" in text and len(view.arc.get_xdata()) == 0
    else:
        assert f"{sim.cosine:+.3f}" in text and f"{sim.angle_degrees:.1f}°" in text
        arc = np.column_stack([view.arc.get_xdata(), view.arc.get_ydata()])
        angle = math.degrees(
            math.acos(np.clip(arc[0] @ arc[-1] / (np.linalg.norm(arc[0]) * np.linalg.norm(arc[-1])), -1, 1))
        )
        assert angle == pytest.approx(sim.angle_degrees, abs=1e-6)
    if sim.norm_a > 0:
        foot = np.array([view.shadow.get_xdata()[1], view.shadow.get_ydata()[1]])
        np.testing.assert_allclose(foot, (a @ b) / (a @ a) * a, atol=1e-12)
        np.testing.assert_allclose(foot @ a / np.linalg.norm(a), sim.dot / sim.norm_a, atol=1e-12)
    assert view.ax.get_xlim() == explorer.limits == view.ax.get_ylim()
    assert f"{sim.dot:.4f}" in explorer.readout.value


def test_similarity_explorer_over_its_range():
    explorer = widgets.similarity_explorer(asynchronous=False)
    np.testing.assert_allclose(explorer.vectors, EXAMPLE.X[:2])
    check_similarity(explorer)
    sweep(explorer, check_similarity)


def test_similarity_explorer_zero_and_opposite_vectors():
    explorer = widgets.similarity_explorer(asynchronous=False)
    for axis in "xy":
        move(explorer, explorer.sliders[f"a {axis}"], 0.0)
    check_similarity(explorer)
    assert "undefined" in explorer.readout.value
    for axis in "xy":
        move(explorer, explorer.sliders[f"b {axis}"], 0.0)
    check_similarity(explorer)
    move(explorer, explorer.sliders["a x"], 1.0)
    move(explorer, explorer.sliders["b x"], -0.5)
    check_similarity(explorer)
    assert explorer.view.readout.get_text().count("180.0°") == 1


# --- the renderer and the figures behind the explorers ------------------------------------------


def test_renderer_first_frame_is_a_full_draw_and_blits_follow():
    steps = attention_steps(EXAMPLE.X, EXAMPLE.X, EXAMPLE.X)
    view = plots.attention_figure(steps, EXAMPLE.tokens, EXAMPLE.X)
    static = plots.png_bytes(plots.attention_figure(steps, EXAMPLE.tokens, EXAMPLE.X).figure)
    renderer = plots.FigureRenderer(view.figure, view.dynamic_artists())
    assert same_pixels(renderer.png(), static)
    X = EXAMPLE.X.copy()
    X[1] = [0.3, 0.7]
    new = attention_steps(X, X, X)
    limits, clim = view.embeddings.get_xlim(), view.scores.collections[0].get_clim()
    plots.update_attention_figure(view, new, X, limits=limits, score_limits=clim)
    blitted = decode(renderer.png())
    assert renderer.full_draws == 1
    # the same picture: only antialiased pixels where arrows cross grid lines may differ
    limits_picture = plots.attention_figure(new, EXAMPLE.tokens, X)
    plots.update_attention_figure(limits_picture, new, X, limits=limits, score_limits=clim)
    full = decode(plots.png_bytes(limits_picture.figure))
    assert blitted.shape == full.shape
    assert (np.abs(blitted.astype(int) - full).max(axis=2) > 0).mean() < 0.002
    # a static panel's limits change: the next frame is drawn whole
    plots.update_attention_figure(view, new, X, limits=(-2.0, 2.0), score_limits=clim)
    renderer.png()
    assert renderer.full_draws == 2
    renderer.invalidate()
    renderer.png()
    assert renderer.full_draws == 3


def test_renderer_redraws_a_changed_colour_bar_and_never_moves_a_heatmap():
    """A colour bar is a child axes of its heatmap: new colour limits redraw it (not a stale blit),
    and its longer tick labels do not move the heatmap once the first frame is laid out."""
    steps = attention_steps(EXAMPLE.X, EXAMPLE.X, EXAMPLE.X)
    view = plots.attention_figure(steps, EXAMPLE.tokens, EXAMPLE.X)
    renderer = plots.FigureRenderer(view.figure, view.dynamic_artists())
    renderer.png()
    colorbar = view.scores.collections[0].colorbar
    boxes = [ax.get_window_extent().frozen() for ax in (view.scores, colorbar.ax, view.weights)]
    limits = view.embeddings.get_xlim()

    plots.update_attention_figure(view, steps, EXAMPLE.X, limits=limits, score_limits=(-1234.5, 6789.0))
    frame = renderer.png()
    assert renderer.full_draws == 2
    assert colorbar.ax.get_ylim() == (-1234.5, 6789.0)
    assert [t.get_text() for t in colorbar.ax.get_yticklabels() if "000" in t.get_text()]  # wider labels
    for before, ax in zip(boxes, (view.scores, colorbar.ax, view.weights), strict=True):
        np.testing.assert_allclose(ax.get_window_extent().bounds, before.bounds)
    assert same_pixels(frame, plots.png_bytes(view.figure))  # what a full draw of it gives


def test_renderer_does_not_leave_artists_animated():
    view = plots.similarity_figure([1, 0], [0, 1])
    renderer = plots.FigureRenderer(view.figure, view.dynamic_artists())
    renderer.png()
    assert not any(artist.get_animated() for artist in view.dynamic_artists())
    saved = decode(plots.png_bytes(view.figure))
    assert saved.shape == decode(renderer.png()).shape


def test_encode_png_round_trips():
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(7, 5, 3), dtype=np.uint8)
    for level in (0, 1, 9):
        assert (decode(plots.encode_png(pixels, compress_level=level)) == pixels).all()
    with pytest.raises(ValueError, match="uint8"):
        plots.encode_png(pixels.astype(float))
    with pytest.raises(ValueError, match="compress_level"):
        plots.FigureRenderer(plots.figure()[0], compress_level=10)


def test_static_figures_match_their_explorers():
    sim = widgets.similarity_explorer(asynchronous=False)
    static = plots.similarity_figure(EXAMPLE.X[0], EXAMPLE.X[1], limits=sim.limits)
    assert same_pixels(sim.image.value, plots.png_bytes(static.figure))
    scaling = widgets.scaling_explorer(64, asynchronous=False)
    assert same_pixels(scaling.image.value, plots.png_bytes(plots.scaling_figure(64).figure))
    soft = widgets.softmax_explorer(asynchronous=False)
    static_soft = plots.softmax_figure([8.0, 6.0, 1.0], ["h1", "h2", "h3"], limits=widgets.score_limits())
    assert same_pixels(soft.image.value, plots.png_bytes(static_soft.figure))


def test_figure_functions_reject_bad_input():
    with pytest.raises(ValueError, match="2D vectors"):
        plots.similarity_figure([1, 2, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="one row"):
        plots.softmax_figure([[1.0, 2.0]], ["a", "b"])
    with pytest.raises(ValueError, match="temperature"):
        plots.softmax_figure([1.0, 2.0], ["a", "b"], temperature=0)
    with pytest.raises(ValueError, match="d_k"):
        plots.scaling_figure(0)


def test_small_moves_redraw_only_what_changes():
    """The fast path: moving an arrow inside the panel does not redraw the whole figure."""
    pg = widgets.playground(asynchronous=False)
    for value in (0.25, 0.3, 0.35, 0.4, 0.3):  # the scores stay inside their colour limits
        pg.sliders["Token-2 x"].value = value
        pg.sliders["d_k"].value = 2 + int(value * 20)
    assert pg.renderer.full_draws == 1
