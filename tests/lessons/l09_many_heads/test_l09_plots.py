"""attention_lessons.l09_many_heads.plots: the two-heads figure draws the concatenated heads and W_o on one
scale about 0, and names each head's largest weights and the output in its text alternative."""

from __future__ import annotations

import numpy as np
from conftest import alt

from attention_lessons.kit import plots
from attention_lessons.l09_many_heads.plots import two_heads_figure
from attnlib.multihead import multi_head_attention

fmt = plots.format_cell


def test_the_two_heads_figure_draws_concat_and_w_o_on_one_scale_about_0():
    X = np.array([[1.0, 0.6], [-1.0, 0.6], [1.0, -0.6], [-1.0, -0.6]])
    W = {
        "W_q": np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]),
        "W_k": np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]),
        "W_v": np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]),
        "W_o": np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 1.0]]),
    }
    drawn = two_heads_figure(["a", "b", "c", "d"], X, **W)
    concat, w_o = drawn.concat_map.mesh.norm, drawn.w_o_map.mesh.norm
    assert (concat.vmin, concat.vmax) == (w_o.vmin, w_o.vmax)
    assert concat.vmin == -concat.vmax > -np.inf


def test_two_heads_figure_names_each_heads_largest_weights_and_the_output():
    tokens = ["a", "b", "c"]
    X = np.array([[1.0, 0.5], [-1.0, 0.5], [0.5, -1.0]])
    rng = np.random.default_rng(1)
    W = {"W_q": rng.normal(size=(2, 4)), "W_k": rng.normal(size=(2, 4)), "W_v": rng.normal(size=(2, 4))}
    W_o = rng.normal(size=(4, 2))
    output, weights = multi_head_attention(X, X, W["W_q"], W["W_k"], W["W_v"], W_o, n_heads=2)
    text = alt(two_heads_figure(tokens, X, **W, W_o=W_o).figure)
    for h in range(2):
        j = int(np.argmax(weights[h][1]))
        assert f"head {h + 1}: " in text and f"b → {tokens[j]} {fmt(weights[h][1, j])}" in text
    assert f"c ({fmt(output[2, 0])}, {fmt(output[2, 1])})" in text
