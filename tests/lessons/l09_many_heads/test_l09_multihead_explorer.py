"""Lesson 09's explorer (two heads in 2D) and its static twin, driven from Python.

Every embedding slider goes to its minimum, its maximum and random values on its step; after each
move the explorer's on-demand weights, concatenation and output (``heads``) equal
attnlib.multihead's. The front end's arithmetic is checked against attnlib in
multihead.test.mjs (this folder).
"""

from __future__ import annotations

import numpy as np
import pytest
import traitlets

from attention_lessons.l09_many_heads import widgets
from attention_lessons.l09_many_heads.plots import two_heads_figure
from attnlib.multihead import multi_head_attention, split_heads

pytestmark = pytest.mark.filterwarnings("error")

TOKENS = ["a", "b", "c", "d"]
X = np.array([[1.0, 0.5], [-1.0, 0.5], [0.5, -1.0], [-0.5, -1.0]])
W = {
    "W_q": np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]),
    "W_k": np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]),
    "W_v": np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]),
    "W_o": np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 1.0]]),
}


def explorer(**changes):
    return widgets.multi_head_explorer(TOKENS, X, **(W | changes))


def assert_matches_attnlib(ex: widgets.MultiHeadExplorer) -> None:
    E = np.array(ex.embeddings)
    Ws = {name: np.array(getattr(ex, name)) for name in W}
    output, weights = multi_head_attention(E, E, **Ws, n_heads=2)
    shown = ex.heads
    np.testing.assert_array_equal(shown.weights, weights)
    np.testing.assert_array_equal(shown.output, output)
    V = split_heads(E @ Ws["W_v"], 2)  # (2, n, 2): each head's values
    heads = weights @ V  # (2, n, 2): each head's output
    np.testing.assert_allclose(shown.concat, np.concatenate(heads, axis=-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(shown.output, shown.concat @ Ws["W_o"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.sum(shown.weights, axis=-1), 1.0, rtol=1e-12)


def test_every_slider_over_its_range_recomputes_with_attnlib() -> None:
    ex = explorer()
    assert_matches_attnlib(ex)
    rng = np.random.default_rng(9)
    n_steps = round((ex.value_max - ex.value_min) / ex.step)
    for i in range(len(TOKENS)):
        for j in range(2):
            for k in [0, n_steps, *rng.integers(0, n_steps + 1, 10)]:
                E = [row[:] for row in ex.embeddings]
                E[i][j] = round(ex.value_min + int(k) * ex.step, 10)
                ex.embeddings = E
                assert_matches_attnlib(ex)
    ex.reset()
    assert ex.embeddings == X.tolist()
    ex.close()


def test_each_head_uses_its_own_columns() -> None:
    ex = explorer()
    # head 1 compares first coordinates only, head 2 second coordinates only
    for h, coordinate in ((0, 0), (1, 1)):
        scores = 4 * np.outer(X[:, coordinate], X[:, coordinate]) / np.sqrt(2)
        expected = np.exp(scores - scores.max(axis=1, keepdims=True))
        np.testing.assert_allclose(
            ex.heads.weights[h], expected / expected.sum(axis=1, keepdims=True), rtol=1e-12
        )
    ex.close()


def test_one_token_and_eight_tokens() -> None:
    one = widgets.multi_head_explorer(["x"], [[0.0, 0.0]], **W)
    assert one.heads.weights.tolist() == [[[1.0]], [[1.0]]] and one.heads.output.tolist() == [[0.0, 0.0]]
    rng = np.random.default_rng(1)
    eight = widgets.multi_head_explorer([f"t{i}" for i in range(8)], rng.uniform(-2, 2, (8, 2)), **W)
    assert_matches_attnlib(eight)
    one.close()
    eight.close()


@pytest.mark.parametrize(
    ("args", "changes", "message"),
    [
        ((TOKENS, X[:3]), {}, "one per embedding"),
        ((TOKENS, X[:, :1]), {}, r"shape \(n, 2\)"),
        (("abcd", X), {}, "not the string"),
        ((TOKENS, X), {"W_v": np.ones((2, 2))}, "W_v"),
        ((TOKENS, X), {"W_o": np.ones((2, 2))}, "W_o"),
        ((TOKENS, X), {"W_q": np.ones((2, 3))}, "n_heads"),
        ((TOKENS, X), {"W_k": np.ones((2, 2))}, "d_k"),
        ((TOKENS, X), {"step": 0}, "step"),
        ((TOKENS, [[np.nan, 0]] * 4), {}, "embeddings"),
        ((["t"] * 9, np.zeros((9, 2))), {}, "1 to 8"),
    ],
)
def test_bad_arguments(args, changes, message) -> None:
    kwargs = W | changes
    with pytest.raises((ValueError, TypeError), match=message):
        widgets.multi_head_explorer(*args, **kwargs)


def test_bad_embeddings_trait() -> None:
    ex = explorer()
    with pytest.raises(traitlets.TraitError, match="4 pairs"):
        ex.embeddings = [[0.0, 0.0]]
    with pytest.raises(traitlets.TraitError, match="value_max"):
        ex.embeddings = [[9.0, 0.0]] * 4
    ex.close()


def test_booleans_and_complex_embeddings_are_refused_numpy_floats_taken() -> None:
    with pytest.raises(TypeError, match="embeddings is complex"):
        widgets.multi_head_explorer(TOKENS, X + 0j, **W)
    with pytest.raises(TypeError, match="value_range"):
        widgets.multi_head_explorer(TOKENS, X, **W, value_range=(False, True))
    ex = widgets.multi_head_explorer(TOKENS, X, **W, step=np.float32(0.25))
    assert ex.step == 0.25
    before = ex.embeddings
    for bad in ([[True, False]] * 4, [[1 + 1j, 0.0]] * 4, np.array([[1 + 1j, 0.0]] * 4)):
        with pytest.raises(traitlets.TraitError, match="embeddings"):
            ex.embeddings = bad
        assert ex.embeddings == before
    ex.embeddings = [[np.float32(0.5), np.int64(1)]] * 4
    assert ex.embeddings == [[0.5, 1.0]] * 4
    ex.close()


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_static_figure_draws_attnlibs_numbers(style) -> None:
    drawn = two_heads_figure(TOKENS, X, **W, style=style)
    ex = explorer()
    shown = ex.heads
    np.testing.assert_array_equal(drawn.weights, shown.weights)
    np.testing.assert_allclose(drawn.concat, shown.concat, rtol=1e-12)
    np.testing.assert_array_equal(drawn.output, shown.output)
    for h, heat in enumerate(drawn.weight_maps):
        shown = [float(t.get_text()) for t in heat.texts]
        np.testing.assert_allclose(shown, np.round(drawn.weights[h], 2).ravel(), atol=1e-9)
    assert len(drawn.concat_map.texts) == 4 * len(TOKENS) and len(drawn.w_o_map.texts) == 8
    with pytest.raises(ValueError, match="W_o"):
        two_heads_figure(TOKENS, X, **(W | {"W_o": np.ones((2, 2))}))
    ex.close()
