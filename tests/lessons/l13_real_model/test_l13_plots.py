"""attention_lessons.l13_real_model.plots: the grid of every head draws exactly the weights it is given,
and names its most and least focused heads in its text alternative."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import alt, tables

from attention_lessons.l13_real_model.plots import heads_grid_figure
from attnlib import softmax


def random_weights(layers=2, heads=3, n=4, seed=0):
    rng = np.random.default_rng(seed)
    return softmax(rng.normal(size=(layers, heads, n, n)))


@pytest.mark.parametrize("style", ["light", "dark"])
def test_each_panel_holds_its_head(style):
    weights = random_weights()
    grid = heads_grid_figure(weights, ["[CLS]", "a", "b", "[SEP]"], style=style)
    assert grid.axes.shape == grid.images.shape == (2, 3)
    for layer in range(2):
        for head in range(3):
            image = grid.images[layer, head]
            np.testing.assert_array_equal(image.get_array(), weights[layer, head])
            assert image.get_clim() == (0.0, 1.0)
    assert grid.axes[0, 2].get_title() == "head 2" and grid.axes[1, 0].get_ylabel() == "layer 1"
    assert "[CLS] a b [SEP]" in grid.figure.texts[0].get_text()


@pytest.mark.parametrize(
    ("weights", "tokens", "message"),
    [
        (np.ones((2, 4, 4)), ["a"] * 4, "shape"),
        (random_weights() * 2, ["a"] * 4, "from 0 to 1"),
        (np.full((1, 1, 2, 2), np.nan), ["a", "b"], "finite"),
        (random_weights(), ["a"] * 3, "name the 4 tokens"),
        (random_weights(), "abcd", "name the 4 tokens"),
    ],
)
def test_bad_input_is_named(weights, tokens, message):
    with pytest.raises(ValueError, match=message):
        heads_grid_figure(weights, tokens)


def test_heads_grid_figure_names_its_most_and_least_focused_heads():
    weights = softmax(np.random.default_rng(0).normal(size=(2, 3, 4, 4)) * 3)
    grid = heads_grid_figure(weights, ["[CLS]", "a", "b", "[SEP]"])
    focus = weights.max(axis=-1).mean(axis=-1)
    layer, head = np.unravel_index(np.argmax(focus), focus.shape)
    text = alt(grid.figure)
    assert f"{focus.max():.2f} in the most focused head (layer {layer}, head {head})" in text
    assert "2 layers × 3 heads, on 4 tokens" in text
    (table,) = tables(grid.figure)
    assert table.cells[1][2] == f"{focus[1, 2]:.2f}"
