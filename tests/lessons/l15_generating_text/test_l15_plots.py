"""Lesson 15's figures: each writes its text alternative from the numbers it draws, and names bad input."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.kit import plots
from attention_lessons.l15_generating_text import plots as figures


def _causal(n: int, window: int | None = None, sinks: int = 0) -> np.ndarray:
    """The mask by its definition: query i sees keys i − window + 1 … i and the first `sinks` keys."""
    i, j = np.indices((n, n))
    near = (j <= i) & ((j > i - window) if window else True)
    return near | ((j < sinks) & (j <= i))


def test_the_score_rows_count_the_whole_matrix_without_a_cache_and_one_row_with_it():
    fig = figures.score_rows_figure(_causal(6))
    text = plots.description(fig).text
    # as attnlib.counting counts them: 6² products, of which the mask keeps 6·7/2
    assert (
        "Without a cache the step computes the whole 6 by 6 matrix again, 36 scores, and the mask keeps 21"
        in text
    )
    assert "With a cache it computes the new token's row only, 6 scores, for keys 0, 1, 2, 3, 4, 5." in text
    (table,) = plots.description(fig).tables
    assert table.cells == (("36", "21", "6"), ("6", "6", "1"))


def test_the_score_rows_of_a_window_with_sinks_name_the_keys_the_new_token_reads():
    mask = _causal(10, window=3, sinks=2)
    fig = figures.score_rows_figure(mask, style="dark")
    text = plots.description(fig).text
    assert f"100 scores, and the mask keeps {mask.sum()} of them." in text
    assert "row only, 5 scores, for keys 0, 1, 7, 8, 9." in text


@pytest.mark.parametrize(
    ("mask", "match"),
    [
        (np.ones((3, 4), dtype=bool), "square boolean"),
        (np.ones((3, 3)), "square boolean"),
        (np.ones((1, 1), dtype=bool), "n ≥ 2"),
        (np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0]], dtype=bool), "last row"),
    ],
)
def test_the_score_rows_name_a_bad_mask(mask, match):
    with pytest.raises(ValueError, match=match):
        figures.score_rows_figure(mask)


def test_the_cache_growth_says_where_each_cache_outgrows_its_weights():
    configs = {"small": (2048.0, 2**20), "big": (2**19, 13.5e9)}
    fig = figures.cache_growth_figure(configs, max_tokens=4096)
    text = plots.description(fig).text
    assert "small: 2 KiB per token, outgrows its weights (1 MiB) at 513 tokens." in text
    assert "big: 512 KiB per token, stays under its weights (12.6 GiB) up to 4096 tokens." in text
    (table,) = plots.description(fig).tables
    assert table.rows == ("small", "big") and table.cells[1] == ("512 KiB", "12.6 GiB", "25750")


def test_a_sliding_window_keeps_the_cache_under_the_weights():
    configs = {"windowed": (2048.0, 2**20), "long window": (2048.0, 2**20)}
    fig = figures.cache_growth_figure(
        configs, max_tokens=4096, windows={"windowed": 256, "long window": 1024}
    )
    text = plots.description(fig).text
    assert (
        "windowed: 2 KiB per token, stays under its weights (1 MiB): its window keeps at most 256 tokens."
        in text
    )
    assert "long window: 2 KiB per token, outgrows its weights (1 MiB) at 513 tokens." in text
    assert plots.description(fig).tables[0].cells[0][2] == "never (window of 256)"
    with pytest.raises(ValueError, match="not in configs"):
        figures.cache_growth_figure(configs, max_tokens=4096, windows={"other": 4})


@pytest.mark.parametrize(
    ("configs", "match"),
    [({}, "non-empty"), ({"a": (1.0,)}, "cache bytes per token, weight bytes"), ({"a": (0, 5)}, "positive")],
)
def test_the_cache_growth_names_a_bad_configuration(configs, match):
    with pytest.raises(ValueError, match=match):
        figures.cache_growth_figure(configs, max_tokens=100)


def test_the_loss_bars_write_each_loss_and_its_note():
    losses = {"as trained": 1.234, "2 key/value heads": 1.5, "1 key/value head": 2.0}
    fig = figures.loss_bars_figure(
        losses,
        title="Fewer key/value heads",
        reference="as trained",
        notes={"1 key/value head": "¼ of the cache"},
    )
    text = plots.description(fig).text
    assert "as trained: 1.234; 2 key/value heads: 1.500; 1 key/value head: 2.000 (¼ of the cache)." in text
    (table,) = plots.description(fig).tables
    assert table.cells[2] == ("2.000", "¼ of the cache")
    with pytest.raises(ValueError, match="reference must be one of"):
        figures.loss_bars_figure(losses, title="t", reference="dense")
    with pytest.raises(ValueError, match="no loss"):
        figures.loss_bars_figure(losses, title="t", notes={"dense": "x"})


def test_sizes_are_written_in_binary_units():
    assert [figures.size_text(v) for v in (1000, 1024, 1.5 * 2**30, 2**50)] == [
        "1000 bytes",
        "1 KiB",
        "1.5 GiB",
        "1024 TiB",
    ]


def test_the_position_losses_give_each_settings_mean_within_and_past_the_trained_context():
    rng = np.random.default_rng(2)
    dense = rng.uniform(1.0, 2.0, size=40)
    window = dense + np.r_[np.zeros(9), np.full(31, 1.5)]  # worse from position 9 on
    fig = figures.position_losses_figure(
        {"dense": dense, "window": window}, n_ctx=10, reference="dense", smooth=4
    )
    text = plots.description(fig).text
    assert "end of the trained context of 10 tokens" in text
    assert (
        f"window: {window[:9].mean():.3f} within the trained context, {window[9:].mean():.3f} past it" in text
    )
    (table,) = plots.description(fig).tables
    assert table.columns == ("within (positions 0 to 8)", "past it (positions 9 to 39)")
    assert table.cells[0] == (f"{dense[:9].mean():.3f}", f"{dense[9:].mean():.3f}")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"curves": {}}, "non-empty"),
        ({"curves": {"a": np.ones(20), "b": np.ones(21)}}, "same length"),
        ({"n_ctx": 30}, "at most the curves' length 20"),
        ({"reference": "sinks"}, "reference must be one of"),
        ({"smooth": 10}, "smooth must be at most n_ctx − 1 = 9"),
    ],
)
def test_the_position_losses_name_bad_input(kwargs, match):
    arguments = {"curves": {"a": np.ones(20)}, "n_ctx": 10, **kwargs}
    with pytest.raises(ValueError, match=match):
        figures.position_losses_figure(**arguments)


def test_the_step_weights_name_each_heads_heaviest_key_and_the_first_keys_weight():
    rng = np.random.default_rng(4)
    keys = np.array([0, 1, 5, 6, 7])  # two sinks, then a window of three
    weights = rng.dirichlet(np.ones(keys.size), size=(2, 2))  # (layers, heads, keys)
    fig = figures.step_weights_figure(weights, keys, "ab cdefg", sinks=2)
    text = plots.description(fig).text
    assert "query at position 7 over the 5 cached keys at positions 0 to 7, the first 2 kept as sinks" in text
    assert (
        f"The mean weight on position 0, the first key in the cache, is {weights[..., 0].mean():.2f}." in text
    )
    k = int(weights[1, 0].argmax())
    assert f"layer 1, head 0: most on position {keys[k]} ({weights[1, 0, k]:.2f})" in text
    (table,) = plots.description(fig).tables
    assert table.columns[2] == "5 e" and table.cells[3][4] == f"{weights[1, 1, 4]:.2f}"
    with pytest.raises(ValueError, match="increasing whole numbers"):
        figures.step_weights_figure(weights, keys[::-1], "ab cdefg")
    with pytest.raises(ValueError, match="n_layers, n_heads, L_k"):
        figures.step_weights_figure(weights[0], keys, "ab cdefg")
    with pytest.raises(ValueError, match="holding every key position"):
        figures.step_weights_figure(weights, keys, "abc")
