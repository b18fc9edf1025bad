"""plots.at_scale, the pictures of lesson 12: what they draw comes from attnlib's counts, and their text
alternatives say what they count."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import alt, tables
from matplotlib.colors import to_hex

from attention_lessons.kit.plots.artists import number
from attention_lessons.kit.plots.descriptions import description
from attention_lessons.kit.plots.palette import BACKEND_LOOKS, color, meaning_of
from attention_lessons.l12_attention_at_scale import at_scale, flash
from attnlib import softmax
from attnlib.counting import hbm_traffic, tile_counts
from attnlib.efficient import online_softmax


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
    rows = [
        {
            "threads": threads,
            "n": 256,
            "batch_heads": 1,
            "causal": False,
            "seconds": {"naive": 0.1, "tiled": 0.01, "torch": 0.02},
            "peak_bytes": {"naive": 2**20, "tiled": 2**18, "torch": 2**17} if threads == "1" else None,
        }
        for threads in ("1", "default")
    ]
    fig = at_scale.benchmark_figure({"rows": rows}, batch_heads=1)
    for ax in fig.axes:
        assert len({line.get_marker() for line in ax.lines}) == len(ax.lines) == 3  # told apart by shape too
    assert [ax.get_title() for ax in fig.axes[:2]] == [
        "Time, 1 heads, one thread each",
        "Time, 1 heads, default threads each",
    ]
    with pytest.raises(ValueError, match="batch_heads = 8"):
        at_scale.benchmark_figure({"rows": rows})
    with pytest.raises(ValueError, match="sizes"):
        at_scale.memory_wall_figure([0, 4])


def test_online_softmax_path_figure_draws_the_path_the_ring_and_the_numbers():
    scores, values = [1.0, 0.0, 5.0, 2.0, 7.0], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]
    fig = at_scale.online_softmax_path_figure(scores, values, 2)
    states = list(online_softmax(scores, 2, values))
    path = fig.axes[1].lines[0].get_xydata()
    np.testing.assert_allclose(path, [st.output for st in states])
    np.testing.assert_allclose(path[-1], softmax(np.array(scores)) @ np.array(values))  # lands on the ring
    numbers = [t.get_text() for t in fig.axes[0].texts]
    assert numbers == [
        f"l = {st.total:.2f}\n" + ("—" if i == 0 else f"× {st.rescale:.3f}") for i, st in enumerate(states)
    ]
    assert "drawn as a ring" in description(fig).text
    with pytest.raises(ValueError, match="values"):
        at_scale.online_softmax_path_figure(scores, values[:3], 2)


def _line_meanings(fig):
    return {meaning_of(line.get_color()) for ax in fig.axes for line in ax.lines}


def test_lesson_12_draws_each_meaning_in_its_palette_colour():
    fig = at_scale.memory_wall_figure([256, 1024])
    assert _line_meanings(fig) - {None} == {"naive attention", "tiled attention"}
    fig = at_scale.online_softmax_figure([1.0, 0.0, 5.0, 2.0, 7.0], 2)
    maxima = {to_hex(c) for m in fig.axes[0].collections for c in m.get_colors()}
    assert maxima == {to_hex(color("running maximum"))}
    assert {meaning_of(p.get_facecolor()) for p in fig.axes[0].patches} == {"scaled score"}
    fig = at_scale.online_softmax_path_figure([1.0, 0.0, 5.0, 2.0, 7.0], [[1.0, 0.0]] * 5, 2)
    assert {to_hex(c) for c in fig.axes[0].collections[0].get_colors()} == {to_hex(color("running maximum"))}


def test_traffic_and_gpu_figures_say_their_numbers():
    fig = flash.traffic_figure([1024, 4096], d=64, sram=2**16)
    text = description(fig).text
    standard = hbm_traffic(4096, 64).total
    assert number(standard) in text and len(fig.axes[0].lines) == 3
    rows = [
        {"d": 64, "causal": False, "n": n, "backend": b, "mode": "fwd", "tflops": t, "peak_mib": m}
        for n, b, t, m in [
            (1024, "math", 10.0, 192.0),
            (1024, "flash", 85.0, 2.0),
            (2048, "flash", 200.0, 4.0),
        ]
    ] + [{"d": 64, "causal": False, "n": 2048, "backend": "math", "mode": "fwd", "error": "out of memory"}]
    fig = flash.gpu_backends_figure({"info": {"gpu": "a GPU"}, "rows": rows})
    for ax in fig.axes:  # the math backend in naive attention's colour, flash in tiled's, and a marker each
        looks = {(line.get_label(), meaning_of(line.get_color()), line.get_marker()) for line in ax.lines}
        assert looks == {(b, BACKEND_LOOKS[b].meaning, BACKEND_LOOKS[b].marker) for b in ("math", "flash")}
    text = description(fig).text
    assert "math fails from n = 2048 (out of memory)" in text and "flash 85–200" in text
    with pytest.raises(ValueError, match="d = 128"):
        flash.gpu_backends_figure({"info": {"gpu": "a GPU"}, "rows": rows}, d=128)


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
