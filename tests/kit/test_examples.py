"""Every worked example reproduces its published values, at the published precision."""

import numpy as np
import pytest

from attention_lessons.kit import examples
from attnlib import attention_steps, qkv, scaled_dot_product_attention
from attnlib.efficient import online_softmax


def assert_published(actual, published):
    """``actual`` equals the ``published`` decimal strings to half a unit in each one's last digit."""
    published = np.array(published, dtype=str)
    expected = np.vectorize(float)(published)
    decimals = np.vectorize(lambda s: len(s.partition(".")[2]))(published)
    tolerance = 0.5 * 10.0 ** (-decimals)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    error = np.abs(actual - expected)
    assert np.all(error <= tolerance), f"{actual} differs from the published {published} (error {error})"


def test_assert_published_uses_the_last_published_digit():
    assert_published([0.334], ["0.33"])
    assert_published([1.06449], ["1.064"])
    with pytest.raises(AssertionError):
        assert_published([0.336], ["0.33"])
    with pytest.raises(AssertionError):
        assert_published([1.0646], ["1.064"])


# --- 1. Q3 ---------------------------------------------------------------------------------------

Q3_WEIGHTS = [[0.73105854, 0.26894143], [0.26894143, 0.73105854]]
Q3_OUTPUT_ROW0 = [2.0757656, 3.0757656, 4.0757656, 5.0757656]


def test_q3_inputs():
    Q, K, V = examples.q3()
    np.testing.assert_array_equal(Q, [[1, 0, 1, 0], [0, 1, 0, 1]])
    np.testing.assert_array_equal(K, Q)
    np.testing.assert_array_equal(V, [[1, 2, 3, 4], [5, 6, 7, 8]])
    steps = attention_steps(Q, K, V)
    np.testing.assert_array_equal(steps.scaled_scores, [[1.0, 0.0], [0.0, 1.0]])


def test_q3_float32_within_one_ulp_of_published():
    """The published values came from float32: a float32 computation matches to one ulp."""
    out, w = scaled_dot_product_attention(*(a.astype(np.float32) for a in examples.q3()))
    assert out.dtype == w.dtype == np.float32
    np.testing.assert_array_max_ulp(w, np.array(Q3_WEIGHTS, dtype=np.float32), maxulp=1)
    np.testing.assert_array_max_ulp(out[0], np.array(Q3_OUTPUT_ROW0, dtype=np.float32), maxulp=1)


def test_q3_float64_within_1e_7_of_published():
    out, w = scaled_dot_product_attention(*examples.q3())
    assert w.dtype == np.float64
    np.testing.assert_allclose(w, Q3_WEIGHTS, atol=1e-7, rtol=0)
    np.testing.assert_allclose(out[0], Q3_OUTPUT_ROW0, atol=1e-7, rtol=0)
    e = np.e
    np.testing.assert_allclose(w, [[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]], rtol=1e-15)


# --- 2. four tokens in 2D ------------------------------------------------------------------------


def test_four_tokens_2d():
    ex = examples.four_tokens_2d()
    assert ex.tokens == ("Token-1", "Token-2", "Token-3", "Token-4")
    np.testing.assert_array_equal(ex.X, [[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.8, 0.2]])
    for W in (ex.W_q, ex.W_k, ex.W_v):
        np.testing.assert_array_equal(W, np.eye(2))
    for projected in qkv(ex.X, ex.W_q, ex.W_k, ex.W_v):
        np.testing.assert_array_equal(projected, ex.X)


def test_four_tokens_2d_each_attends_most_to_itself_or_its_neighbour_in_direction():
    ex = examples.four_tokens_2d()
    _, w = scaled_dot_product_attention(*qkv(ex.X, ex.W_q, ex.W_k, ex.W_v))
    np.testing.assert_array_equal(np.argsort(w, axis=1)[:, -2:].tolist(), [[3, 0], [1, 2], [1, 2], [3, 0]])


# --- 3. one query against three vectors (plain dot-product attention) ---------------------------


def test_one_query_three_vectors():
    Q, K, V = examples.one_query_three_vectors()
    steps = attention_steps(Q, K, V, scale=1.0)
    np.testing.assert_array_equal(steps.raw_scores, [8.0, 6.0, 1.0])
    assert_published(steps.weights, ["0.88", "0.12", "0.00"])
    assert_published(steps.output, ["1.00", "2.00", "2.76"])


def test_plain_attention_exercise():
    Q, K, V = examples.plain_attention_exercise()
    assert Q.shape == (3,) and K.shape == (3, 3)
    np.testing.assert_array_equal(K, V)
    steps = attention_steps(Q, K, V, scale=1.0)
    np.testing.assert_array_equal(steps.raw_scores, [2.0, 5.0, 3.0])
    assert_published(steps.weights, ["0.0420", "0.8438", "0.1142"])
    assert_published(steps.output, ["0.8136", "2.0000", "0.9160"])
    assert steps.output[1] == pytest.approx(2.0, abs=1e-12)  # every h_j has 2 as its middle entry


def test_plain_attention_exercise_is_not_lesson_03s_example():
    """Lesson 08's exercise 1 must not be answerable from lesson 03's (or 05's) printed numbers."""
    ours = attention_steps(*examples.plain_attention_exercise(), scale=1.0)
    theirs = attention_steps(*examples.one_query_three_vectors(), scale=1.0)
    for mine in (ours.weights, ours.output):
        for printed in (theirs.weights, theirs.output):
            assert not np.allclose(np.sort(mine), np.sort(printed), atol=0.01)


# --- 4. attention by hand ------------------------------------------------------------------------


def test_attention_by_hand():
    Q, K, V = examples.attention_by_hand()
    assert Q.shape == (2, 2) and K.shape == (3, 2) and V.shape == (3, 3)
    steps = attention_steps(Q, K, V)
    assert steps.scale == pytest.approx(1 / np.sqrt(2), rel=1e-15)
    assert_published(steps.output, [["0.86", "1.58", "-0.72"], ["0.99", "1.88", "-1.56"]])


# --- 5. random projections, seed 42 --------------------------------------------------------------


def test_random_projections_seed42_weights():
    ex = examples.random_projections_seed42()
    assert ex.X.shape == (3, 4) and all(W.shape == (4, 4) for W in (ex.W_q, ex.W_k, ex.W_v))
    _, w = scaled_dot_product_attention(*qkv(ex.X, ex.W_q, ex.W_k, ex.W_v))
    assert_published(w[0], ["0.52735889", "0.11510842", "0.35753269"])


def test_random_projections_seed42_matches_legacy_global_seed():
    saved = np.random.get_state()  # noqa: NPY002 (the published numbers came from the legacy API)
    try:
        np.random.seed(42)  # noqa: NPY002
        X = np.random.rand(3, 4)  # noqa: NPY002
        W_q, W_k, W_v = (np.random.rand(4, 4) for _ in range(3))  # noqa: NPY002
    finally:
        np.random.set_state(saved)  # noqa: NPY002
    ex = examples.random_projections_seed42()
    np.testing.assert_array_equal(ex.X, X)
    np.testing.assert_array_equal(ex.W_q, W_q)
    np.testing.assert_array_equal(ex.W_k, W_k)
    np.testing.assert_array_equal(ex.W_v, W_v)


def test_random_projections_seed42_leaves_global_generator_alone():
    before = np.random.get_state()  # noqa: NPY002
    examples.random_projections_seed42()
    after = np.random.get_state()  # noqa: NPY002
    assert before[0] == after[0]
    np.testing.assert_array_equal(before[1], after[1])
    assert before[2:] == after[2:]


# --- 6. she likes coffee -------------------------------------------------------------------------


@pytest.fixture
def coffee():
    ex = examples.she_likes_coffee()
    Q, K, V = qkv(ex.X, ex.W_q, ex.W_k, ex.W_v)
    return ex, attention_steps(Q, K, V), V


def test_she_likes_coffee_inputs(coffee):
    ex, _, _ = coffee
    assert ex.tokens == ("she", "likes", "coffee")
    np.testing.assert_array_equal(ex.X[0], [0.2, 0.9, 0.1, 0.5])
    np.testing.assert_allclose(ex.W_q, np.where(np.eye(4, dtype=bool), 0.9, 0.1), rtol=1e-15)
    np.testing.assert_array_equal(ex.W_q, ex.W_k)


def test_she_likes_coffee_one_projection_element(coffee):
    ex, _, _ = coffee
    assert_published(ex.X[0, :] @ ex.W_q[:, 0], "0.33")


def test_she_likes_coffee_raw_scores(coffee):
    _, steps, _ = coffee
    assert_published(
        steps.raw_scores,
        [["1.2884", "1.064", "1.452"], ["1.064", "1.6064", "1.4496"], ["1.452", "1.4496", "1.8768"]],
    )


def test_she_likes_coffee_exp_row_sums(coffee):
    _, steps, _ = coffee
    assert steps.scale == 0.5
    assert_published(np.exp(steps.scaled_scores).sum(axis=1), ["5.67359329", "5.99932583", "6.68700378"])


def test_she_likes_coffee_weights_and_output(coffee):
    _, steps, V = coffee
    assert_published(steps.weights[0], ["0.33567137", "0.30004505", "0.36428358"])
    assert_published(steps.output[0], ["0.57530294", "0.70527381", "0.50530294", "0.64177546"])
    np.testing.assert_allclose(steps.output, steps.weights @ V, rtol=1e-14)


def test_online_softmax_row_grows_its_maximum_in_several_blocks():
    scores, values = examples.online_softmax_row()
    assert scores.shape == (16,) and values.shape == (16, 2)
    again = examples.online_softmax_row()
    np.testing.assert_array_equal(scores, again[0])
    np.testing.assert_array_equal(values, again[1])
    states = list(online_softmax(scores, 4, values))
    assert sum(state.rescale < 1 for state in states[1:]) >= 2  # the maximum grows more than once


def test_real_model_sentences_are_three_distinct_sentences():
    sentences = examples.real_model_sentences()
    assert len(set(sentences)) == 3 and sentences[0] == "The cat sat on the mat because it was tired"
