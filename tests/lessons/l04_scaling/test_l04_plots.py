"""attention_lessons.l04_scaling.plots: the scaling figure draws the statistics of the experiment
(compared with scores computed by hand), raw and scaled in their colours and hatches, and says the
variances and weights in its text alternative."""

import numpy as np
import pytest
from conftest import alt, softmax_rows, tables
from matplotlib.colors import to_rgb

from attention_lessons.kit import plots
from attention_lessons.l04_scaling import scaling
from attention_lessons.l04_scaling.plots import scaling_bins, scaling_figure
from attention_lessons.l04_scaling.scaling import D_K_VALUES, entropy, scaling_statistics

# --- scaling_figure ------------------------------------------------------------------------------


def test_scaling_figure_draws_the_statistics_in_one_colour_per_meaning():
    view = scaling_figure(64, n_queries=32, n_keys=5, seed=3)
    Q, K = scaling.random_queries_keys(64, 32, 5, seed=3)
    raw = Q @ K.T  # independent: the scores by hand
    scaled = raw / 8.0
    np.testing.assert_allclose(view.statistics.raw, raw, atol=1e-12)
    edges = scaling_bins(64)
    np.testing.assert_allclose(edges[[0, -1]], [-36.0, 36.0])
    values, drawn_edges = view.raw_hist.get_data()[:2]
    np.testing.assert_allclose(drawn_edges, edges)
    np.testing.assert_allclose(values, np.histogram(np.clip(raw, -36, 36), edges)[0] / raw.size)
    values = view.scaled_hist.get_data()[0]
    np.testing.assert_allclose(values, np.histogram(scaled, edges)[0] / raw.size)
    np.testing.assert_allclose([bar.get_height() for bar in view.raw_bars], softmax_rows(raw)[0])
    np.testing.assert_allclose([bar.get_height() for bar in view.scaled_bars], softmax_rows(scaled)[0])
    assert view.raw_marker.get_data() == ([64], [pytest.approx(raw.var())])
    entropy = -(softmax_rows(scaled)[0] * np.log(softmax_rows(scaled)[0])).sum()
    assert f"{entropy:6.3f}" in view.weight_numbers.get_text().splitlines()[2]
    # raw in RAW_COLOR, scaled in SCALED_COLOR, everywhere
    raw_colour, scaled_colour = to_rgb(plots.RAW_COLOR), to_rgb(plots.SCALED_COLOR)
    assert to_rgb(view.raw_hist.get_facecolor()) == raw_colour
    assert to_rgb(view.scaled_hist.get_facecolor()) == scaled_colour
    assert {to_rgb(bar.get_facecolor()) for bar in view.raw_bars} == {raw_colour}
    assert {to_rgb(bar.get_facecolor()) for bar in view.scaled_bars} == {scaled_colour}
    raw_line, scaled_line = view.variance.lines[:2]
    assert (raw_line.get_label(), scaled_line.get_label()) == ("raw", "scaled")
    assert to_rgb(raw_line.get_color()) == to_rgb(view.raw_marker.get_color()) == raw_colour
    assert to_rgb(scaled_line.get_color()) == to_rgb(view.scaled_marker.get_color()) == scaled_colour
    np.testing.assert_array_equal(raw_line.get_xdata(), scaling.D_K_VALUES)


@pytest.mark.parametrize("d_k", [0, -1, 2.5, True])
def test_scaling_figure_bad_d_k_is_a_clear_error(d_k):
    with pytest.raises((ValueError, TypeError), match=r"d_k"):
        scaling_figure(d_k)


# --- text alternative ----------------------------------------------------------------------------


def test_raw_and_scaled_differ_by_more_than_colour():
    view = scaling_figure(64)
    assert {bar.get_hatch() for bar in view.raw_bars} == {plots.RAW_HATCH}
    assert {bar.get_hatch() for bar in view.scaled_bars} == {None}
    assert view.raw_hist.get_hatch() == plots.RAW_HATCH and view.scaled_hist.get_hatch() is None
    assert view.raw_marker.get_marker() != view.scaled_marker.get_marker()
    raw_line, scaled_line = view.variance.lines[:2]
    assert raw_line.get_marker() != scaled_line.get_marker()


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
