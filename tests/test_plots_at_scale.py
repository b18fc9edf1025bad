"""plots.at_scale, the pictures of lesson 12: what they draw comes from attnlib's counts."""

from __future__ import annotations

import pytest

from attnlib.counting import tile_counts
from attnlib.plots import at_scale


def test_tiles_figure_titles_give_the_counts():
    fig = at_scale.tiles_figure(1000, 128)
    titles = [ax.get_title() for ax in fig.axes]
    causal = tile_counts(1000, 1000, block_q=128, block_k=128, causal=True)
    assert titles == ["no mask: 64 of 64 blocks computed", f"causal: {causal.computed} of 64 blocks computed"]
    assert len(fig.axes[1].patches) == causal.computed


def test_online_softmax_figure_marks_every_growth_of_the_maximum():
    fig = at_scale.online_softmax_figure([1.0, 0.0, 5.0, 2.0, 7.0], 2)
    labels = [t.get_text() for t in fig.axes[1].texts]
    assert len(labels) == 2 and all(label.startswith("× ") for label in labels)


def test_memory_wall_and_benchmark_figures():
    fig = at_scale.memory_wall_figure([256, 1024, 4096])
    assert len(fig.axes[0].lines) == 3  # naive, tiled, the laptop
    row = {
        "n": 256,
        "batch_heads": 1,
        "causal": False,
        "seconds": {"naive": 0.1, "tiled": 0.01, "torch": 0.02, "torch1": 0.03},
        "peak_bytes": {"naive": 2**20, "tiled": 2**18, "torch": 2**17},
    }
    lines = at_scale.benchmark_figure({"rows": [row]}, batch_heads=1).axes[0].lines
    assert len({line.get_marker() for line in lines}) == len(lines) == 4  # told apart by shape too
    with pytest.raises(ValueError, match="batch_heads = 8"):
        at_scale.benchmark_figure({"rows": [row]})
    with pytest.raises(ValueError, match="sizes"):
        at_scale.memory_wall_figure([0, 4])
