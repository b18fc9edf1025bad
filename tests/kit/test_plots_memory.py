"""A figure from attention_lessons.kit.plots has its canvas from the start, so measuring text stays cheap.

Without a canvas, seaborn's measurement of each tick label builds a new full-size renderer:
lesson 13's 2 × 2 grid of heatmaps took 585 MiB that way, lesson 10's 64 × 64 heatmap kept 209."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from attention_lessons.kit import plots


def test_a_figure_has_an_agg_canvas_that_keeps_one_renderer():
    fig, axes = plots.figure(1, 2)
    assert isinstance(fig.canvas, FigureCanvasAgg)
    plots.heatmap(axes[0, 0], np.eye(3), list("abc"), list("abc"))
    assert fig.canvas.get_renderer() is fig.canvas.get_renderer()


def _status_mib(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        return int(re.search(field + r":\s+(\d+) kB", handle.read()).group(1)) / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_lesson_13s_grid_of_heatmaps_needs_tens_of_mib_not_hundreds():
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")  # the peak resident set size (VmHWM) starts again from here
    except OSError as exc:
        pytest.skip(f"cannot reset the peak resident set size: {exc}")
    before = _status_mib("VmRSS")
    tokens = [f"token {i}" for i in range(12)]
    fig, axes = plots.figure(2, 2, figsize=(13, 12))
    rng = np.random.default_rng(0)
    for ax in axes.flat:
        plots.heatmap(ax, rng.dirichlet(np.ones(12), 12), tokens, tokens, vmin=0, vmax=1, decimals=2)
    plots.png_bytes(fig)
    assert _status_mib("VmHWM") - before < 150  # 593 MiB without the canvas, 20 with it
