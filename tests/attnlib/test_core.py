"""Unit tests for every public function of attnlib.core."""

import itertools
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import attention_error, every_case

from attnlib import (
    AttentionSteps,
    apply_mask,
    attention_steps,
    causal_mask,
    default_scale,
    raw_scores,
    scale_scores,
    scaled_dot_product_attention,
    softmax,
    weighted_sum,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

RNG_SEED = 20240607


def reference_attention(Q, K, V, scale, mask=None):
    """Plain-numpy attention for 2-D inputs: the textbook formula, written out."""
    scores = (Q @ K.T) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@pytest.fixture
def qkv64():
    rng = np.random.default_rng(RNG_SEED)
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))


# --- the test configuration itself ------------------------------------------------------------


def test_pytest_turns_runtime_warnings_into_errors():
    """The no-warning tests below rely on pyproject's filterwarnings = error::RuntimeWarning."""
    with pytest.raises(RuntimeWarning):
        warnings.warn("overflow", RuntimeWarning, stacklevel=1)


def test_import_attnlib_loads_numpy_only():
    code = (
        "import sys, attnlib\n"
        "heavy = ['matplotlib', 'seaborn', 'ipywidgets', 'pandas']\n"
        "print('numpy' in sys.modules, [m for m in heavy if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split(maxsplit=1) == ["True", "[]\n"]


# --- softmax ------------------------------------------------------------------------------------


def test_softmax_values():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, np.log(2.0)]])
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose(softmax(x)[1], [0.25, 0.25, 0.5], rtol=1e-15)


def test_softmax_is_stable_for_large_scores():
    np.testing.assert_allclose(softmax([1000.0, 1001.0]), softmax([0.0, 1.0]), rtol=1e-15)
    np.testing.assert_allclose(softmax([-1000.0, -1001.0]), softmax([1.0, 0.0]), rtol=1e-15)


def test_softmax_all_neg_inf_row_gives_zeros():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    w = softmax(x)
    np.testing.assert_array_equal(w, [[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]])


def test_softmax_axis():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(softmax(x, axis=0), softmax(x.T).T, rtol=1e-15)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), np.ones(3), rtol=1e-15)
    np.testing.assert_array_equal(softmax(x, axis=-2), softmax(x, axis=0))
    x3 = np.random.default_rng(RNG_SEED).normal(size=(2, 3, 4))
    np.testing.assert_allclose(softmax(x3, axis=1), np.moveaxis(softmax(np.moveaxis(x3, 1, -1)), -1, 1))


def test_softmax_dtypes():
    assert softmax([1, 2, 3]).dtype == np.float64
    assert softmax(np.array([1.0, 2.0], dtype=np.float32)).dtype == np.float32


# --- raw_scores, scale_scores, default_scale ----------------------------------------------------


def test_raw_scores_is_q_kt(qkv64):
    Q, K, _ = qkv64
    np.testing.assert_allclose(raw_scores(Q, K), Q @ K.T, rtol=1e-14)
    assert raw_scores(Q, K).shape == (3, 5)


def test_raw_scores_small_by_hand():
    np.testing.assert_array_equal(raw_scores([[1, 2]], [[3, 4], [5, 6]]), [[11.0, 17.0]])


def test_raw_scores_single_query_and_batch(qkv64):
    Q, K, _ = qkv64
    np.testing.assert_allclose(raw_scores(Q[1], K), (Q @ K.T)[1], rtol=1e-14)
    assert raw_scores(Q[1], K).shape == (5,)
    Kb = np.stack([K, 2 * K])
    np.testing.assert_allclose(raw_scores(Q, Kb), np.stack([Q @ K.T, 2 * Q @ K.T]), rtol=1e-14)


def test_scale_scores():
    np.testing.assert_array_equal(scale_scores([[2.0, -4.0]], 0.5), [[1.0, -2.0]])
    masked = scale_scores([[-np.inf, 4.0]], 0.25)
    np.testing.assert_array_equal(masked, [[-np.inf, 1.0]])
    s32 = scale_scores(np.array([[1.0, 2.0]], dtype=np.float32), default_scale(3))
    assert s32.dtype == np.float32


def test_default_scale():
    assert default_scale(4) == 0.5
    assert default_scale(np.int64(16)) == 0.25
    assert default_scale(2) == pytest.approx(1 / np.sqrt(2), rel=1e-15)
    assert type(default_scale(2)) is float


# --- causal_mask, apply_mask --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_q", "n_k", "expected"),
    [
        (3, None, [[1, 0, 0], [1, 1, 0], [1, 1, 1]]),
        (2, 4, [[1, 0, 0, 0], [1, 1, 0, 0]]),
        (4, 2, [[1, 0], [1, 1], [1, 1], [1, 1]]),
        (1, 3, [[1, 0, 0]]),
    ],
    ids=["square", "fewer-queries", "more-queries", "one-query"],
)
def test_causal_mask_top_left_aligned(n_q, n_k, expected):
    mask = causal_mask(n_q, n_k)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, np.array(expected, dtype=bool))


def test_causal_mask_empty():
    assert causal_mask(0).shape == (0, 0)
    assert causal_mask(0, 3).shape == (0, 3)


def windowed_by_loop(n_q, n_k, window, sinks):
    """The definition, one entry at a time: j ≤ i, and j in the window or among the sinks."""
    mask = np.zeros((n_q, n_k), dtype=bool)
    for i in range(n_q):
        for j in range(n_k):
            mask[i, j] = j <= i and (window is None or i - window < j or j < sinks)
    return mask


@pytest.mark.parametrize(
    ("window", "sinks"), [(None, 0), (None, 2), (1, 0), (2, 0), (3, 1), (2, 4), (4, 2), (20, 3)]
)
def test_causal_mask_window_and_sinks_equal_the_definition(window, sinks):
    def check(shape):
        n_q, n_k = shape
        mask = causal_mask(n_q, n_k, window=window, sinks=sinks)
        assert mask.dtype == bool and mask.shape == (n_q, n_k)
        np.testing.assert_array_equal(mask, windowed_by_loop(n_q, n_k, window, sinks))

    every_case(check, itertools.product([1, 2, 5, 9], [1, 3, 5, 12]))  # every (n_q, n_k)


def test_causal_mask_default_is_the_plain_lower_triangle():
    for n_q, n_k in [(4, None), (3, 6), (6, 3)]:
        np.testing.assert_array_equal(causal_mask(n_q, n_k), np.tri(n_q, n_k or n_q, dtype=bool))
        np.testing.assert_array_equal(causal_mask(n_q, n_k, window=None, sinks=0), causal_mask(n_q, n_k))


def test_causal_mask_window_of_one_is_the_diagonal_and_sinks_add_columns():
    np.testing.assert_array_equal(causal_mask(4, window=1), np.eye(4, dtype=bool))
    with_sink = causal_mask(4, window=1, sinks=1)
    np.testing.assert_array_equal(with_sink, np.eye(4, dtype=bool) | (np.arange(4) == 0)[None, :])
    assert with_sink.sum(axis=1).tolist() == [1, 2, 2, 2]  # each query: itself and the sink


def test_causal_mask_last_rows_for_queries_after_a_prefix():
    # the documented way to mask the new queries of a KV cache: the last rows of the square mask
    last = causal_mask(6, window=3, sinks=1)[-2:]
    assert last.astype(int).tolist() == [[1, 0, 1, 1, 1, 0], [1, 0, 0, 1, 1, 1]]


def test_windowed_mask_in_attention(qkv64):
    Q, K, V = qkv64
    K, V = K[:3], V[:3]
    mask = causal_mask(3, window=2, sinks=0)
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    expected_out, expected_w = reference_attention(Q, K, V, 0.5, mask)
    np.testing.assert_allclose(w, expected_w, rtol=1e-12)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12)
    np.testing.assert_array_equal(w == 0, ~mask)


def test_apply_mask_bool():
    scores = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = np.array([[True, False, True], [False, False, True]])
    out = apply_mask(scores, mask)
    np.testing.assert_array_equal(out, [[1.0, -np.inf, 3.0], [-np.inf, -np.inf, 6.0]])
    np.testing.assert_array_equal(scores, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # not modified


def test_apply_mask_float_is_added():
    scores = np.array([[1.0, 2.0, 3.0]])
    out = apply_mask(scores, np.array([0.0, -np.inf, -0.5]))
    np.testing.assert_array_equal(out, [[1.0, -np.inf, 2.5]])


def test_apply_mask_broadcasts_a_key_row():
    out = apply_mask(np.zeros((2, 3)), [True, True, False])
    np.testing.assert_array_equal(out, [[0.0, 0.0, -np.inf], [0.0, 0.0, -np.inf]])


@pytest.mark.parametrize(
    "mask", [np.array([True, False]), np.array([0.0, -np.inf])], ids=["bool", "float64-additive"]
)
def test_apply_mask_keeps_float32(mask):
    out = apply_mask(np.ones((2, 2), dtype=np.float32), mask)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1.0, -np.inf], [1.0, -np.inf]])


# --- attention_steps ----------------------------------------------------------------------------


def test_attention_steps_fields_are_consistent(qkv64):
    Q, K, V = qkv64
    steps = attention_steps(Q, K, V)
    assert isinstance(steps, AttentionSteps)
    assert steps.scale == 0.5
    np.testing.assert_allclose(steps.raw_scores, Q @ K.T, rtol=1e-14)
    np.testing.assert_array_equal(steps.scaled_scores, steps.raw_scores * steps.scale)
    np.testing.assert_array_equal(steps.masked_scores, steps.scaled_scores)
    np.testing.assert_array_equal(steps.weights, softmax(steps.masked_scores))
    np.testing.assert_allclose(steps.output, steps.weights @ V, rtol=1e-14)
    out, w = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_array_equal(out, steps.output)
    np.testing.assert_array_equal(w, steps.weights)


def test_attention_steps_with_mask_and_scale(qkv64):
    Q, K, V = qkv64
    mask = np.random.default_rng(RNG_SEED + 1).random((3, 5)) < 0.6
    mask[:, 0] = True
    steps = attention_steps(Q, K, V, mask=mask, scale=0.3)
    assert steps.scale == 0.3
    np.testing.assert_array_equal(steps.scaled_scores, steps.raw_scores * 0.3)
    np.testing.assert_array_equal(steps.masked_scores[mask], steps.scaled_scores[mask])
    assert np.all(np.isneginf(steps.masked_scores[~mask]))
    np.testing.assert_array_equal(steps.weights[~mask], 0.0)
    np.testing.assert_allclose(steps.weights.sum(axis=-1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(steps.output, steps.weights @ V, rtol=1e-14)


def test_attention_steps_is_the_public_steps_in_order(qkv64):
    """What core's body reads as: raw_scores, scale_scores, apply_mask, causal, softmax, weighted_sum."""
    Q, K, V = qkv64
    mask = np.random.default_rng(RNG_SEED + 2).random((3, 5)) < 0.7
    steps = attention_steps(Q, K, V, mask=mask, causal=True, scale=0.4)
    raw = raw_scores(Q, K)
    scaled = scale_scores(raw, 0.4)
    masked = apply_mask(apply_mask(scaled, mask), causal_mask(3, 5))
    weights = softmax(masked)
    for name, expected in [
        ("raw_scores", raw),
        ("scaled_scores", scaled),
        ("masked_scores", masked),
        ("weights", weights),
        ("output", weighted_sum(weights, V)),
    ]:
        np.testing.assert_array_equal(getattr(steps, name), expected, err_msg=name)


def test_weighted_sum():
    weights = np.array([[0.25, 0.75], [1.0, 0.0]])
    V = np.array([[4.0, 0.0], [0.0, 8.0]])
    np.testing.assert_array_equal(weighted_sum(weights, V), [[1.0, 6.0], [4.0, 0.0]])
    batch = weighted_sum(np.stack([weights, weights[::-1]]), V)  # (2, 2, 2) with (2, 2)
    np.testing.assert_array_equal(batch[1], [[4.0, 0.0], [1.0, 6.0]])
    assert weighted_sum(weights.astype(np.float32), V.astype(np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match=r"output weights @ V overflow float64"):
        weighted_sum([[1.0, 1.0]], [[1.7e308], [1.7e308]])


def test_attention_steps_is_frozen(qkv64):
    steps = attention_steps(*qkv64)
    with pytest.raises(AttributeError):
        steps.scale = 2.0


# --- scaled_dot_product_attention ---------------------------------------------------------------


def test_attention_matches_reference(qkv64):
    Q, K, V = qkv64
    out, w = scaled_dot_product_attention(Q, K, V)
    ref_out, ref_w = reference_attention(Q, K, V, 0.5)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-13)
    assert out.shape == (3, 2) and w.shape == (3, 5)


def test_docstring_example():
    _, w = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1, 2], [3, 4]])
    a = 1 / (1 + np.exp(-1 / np.sqrt(2)))  # softmax of (1/√2, 0)
    np.testing.assert_allclose(w, [[a, 1 - a]], rtol=1e-15)
    np.testing.assert_array_equal(w.round(4), [[0.6698, 0.3302]])


def test_scale_one_is_plain_dot_product(qkv64):
    Q, K, V = qkv64
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(w, softmax(Q @ K.T), rtol=1e-13)
    np.testing.assert_allclose(out, reference_attention(Q, K, V, 1.0)[0], rtol=1e-13)
    assert not np.allclose(w, scaled_dot_product_attention(Q, K, V)[1])


def test_single_query(qkv64):
    Q, K, V = qkv64
    out, w = scaled_dot_product_attention(Q[2], K, V)
    assert out.shape == (2,) and w.shape == (5,)
    out_m, w_m = scaled_dot_product_attention(Q[2:3], K, V)
    np.testing.assert_array_equal(out, out_m[0])
    np.testing.assert_array_equal(w, w_m[0])
    steps = attention_steps(Q[2], K, V)
    assert steps.raw_scores.shape == steps.scaled_scores.shape == steps.masked_scores.shape == (5,)


def test_single_query_with_key_mask(qkv64):
    Q, K, V = qkv64
    keys = np.array([True, False, True, True, False])
    out, w = scaled_dot_product_attention(Q[0], K, V, mask=keys)
    np.testing.assert_array_equal(w[~keys], 0.0)
    ref_out, ref_w = reference_attention(Q[:1], K, V, 0.5, mask=keys)
    np.testing.assert_allclose(w, ref_w[0], rtol=1e-13)
    np.testing.assert_allclose(out, ref_out[0], rtol=1e-13)


def test_single_query_with_batched_keys():
    rng = np.random.default_rng(RNG_SEED)
    q, K, V = rng.normal(size=4), rng.normal(size=(3, 6, 4)), rng.normal(size=(3, 6, 2))
    out, w = scaled_dot_product_attention(q, K, V)
    assert out.shape == (3, 2) and w.shape == (3, 6)
    for b in range(3):
        ref_out, ref_w = reference_attention(q[None], K[b], V[b], 0.5)
        np.testing.assert_allclose(out[b], ref_out[0], rtol=1e-13)
        np.testing.assert_allclose(w[b], ref_w[0], rtol=1e-13)


def test_batch_broadcasting():
    rng = np.random.default_rng(RNG_SEED)
    Q, K, V = rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(5, 6, 4)), rng.normal(size=(5, 6, 7))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 5, 3, 7) and w.shape == (2, 5, 3, 6)
    for i in range(2):
        for j in range(5):
            ref_out, ref_w = reference_attention(Q[i, 0], K[j], V[j], 0.5)
            np.testing.assert_allclose(out[i, j], ref_out, rtol=1e-12)
            np.testing.assert_allclose(w[i, j], ref_w, rtol=1e-12)


def test_batched_mask():
    rng = np.random.default_rng(RNG_SEED)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    pad = np.array([[True] * 5, [True, True, True, False, False]])[:, None, :]  # (2, 1, 5)
    out, w = scaled_dot_product_attention(Q, K, V, mask=pad)
    np.testing.assert_array_equal(w[1, :, 3:], 0.0)
    np.testing.assert_allclose(out[0], reference_attention(Q[0], K[0], V[0], 0.5)[0], rtol=1e-13)
    np.testing.assert_allclose(out[1], reference_attention(Q[1], K[1, :3], V[1, :3], 0.5)[0], rtol=1e-13)


@pytest.mark.parametrize(
    "mask",
    [
        np.array([[True, True, True], [False, False, False]]),
        np.array([[0.0, 0.0, -1.0], [-np.inf, -np.inf, -np.inf]]),
    ],
    ids=["bool", "float"],
)
def test_fully_masked_query_gets_zero_weights_and_output(mask):
    rng = np.random.default_rng(RNG_SEED)
    Q, K, V = rng.normal(size=(2, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 5)) + 10
    steps = attention_steps(Q, K, V, mask=mask)
    np.testing.assert_array_equal(steps.weights[1], np.zeros(3))
    np.testing.assert_array_equal(steps.output[1], np.zeros(5))
    assert np.all(np.isneginf(steps.masked_scores[1]))
    np.testing.assert_allclose(steps.weights[0].sum(), 1.0, rtol=1e-15)


def test_causal():
    rng = np.random.default_rng(RNG_SEED)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    out, w = scaled_dot_product_attention(Q, K, V, causal=True)
    np.testing.assert_array_equal(w[np.triu_indices(4, k=1)], 0.0)
    for i in range(4):
        ref_out, ref_w = reference_attention(Q[i : i + 1], K[: i + 1], V[: i + 1], 1 / np.sqrt(3))
        np.testing.assert_allclose(w[i, : i + 1], ref_w[0], rtol=1e-13)
        np.testing.assert_allclose(out[i], ref_out[0], rtol=1e-13)
    np.testing.assert_allclose(out[0], V[0], rtol=1e-15)


def test_causal_with_fewer_queries_than_keys():
    rng = np.random.default_rng(RNG_SEED)
    Q, K, V = rng.normal(size=(2, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    _, w = scaled_dot_product_attention(Q, K, V, causal=True)
    np.testing.assert_array_equal(w != 0, causal_mask(2, 5))


@pytest.mark.parametrize("as_float", [False, True], ids=["bool-mask", "float-mask"])
def test_mask_combined_with_causal(as_float):
    rng = np.random.default_rng(RNG_SEED)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    keys = np.array([False, True, True, True])  # key 0 is padding
    mask = np.where(keys, 0.0, -np.inf) if as_float else keys
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask, causal=True)
    combined = keys & causal_mask(4)
    out_ref, w_ref = scaled_dot_product_attention(Q, K, V, mask=combined)
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_array_equal(w[0], 0.0)  # query 0 may see only key 0, which is padding
    np.testing.assert_array_equal(w != 0, combined)


def test_integer_inputs_give_float64():
    out, w = scaled_dot_product_attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]])
    assert out.dtype == np.float64 and w.dtype == np.float64
    a = np.exp(1 / np.sqrt(2)) / (np.exp(1 / np.sqrt(2)) + 1)
    np.testing.assert_allclose(w, [[a, 1 - a], [1 - a, a]], rtol=1e-15)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"scale": 0.25},
        {"scale": np.float64(0.25)},
        {"scale": np.float32(0.25)},
        {"mask": np.array([[0.0, -np.inf, 0.0, 0.0, 0.0]] * 3)},
        {"mask": np.array([0.0, -np.inf, -1.5, 0.0, 0.0]), "scale": np.float64(0.3)},
        {"mask": np.array([True, False, True, True, True]), "causal": True},
    ],
    ids=["default", "python-float-scale", "np-float64-scale", "np-float32-scale", "float64-mask",
         "float64-mask-and-scale", "bool-mask-causal"],
)  # fmt: skip
def test_float32_stays_float32(qkv64, kwargs):
    Q, K, V = (a.astype(np.float32) for a in qkv64)
    steps = attention_steps(Q, K, V, **kwargs)
    for name in ("raw_scores", "scaled_scores", "masked_scores", "weights", "output"):
        assert getattr(steps, name).dtype == np.float32, name
    ref = attention_steps(*(a.astype(np.float64) for a in (Q, K, V)), **kwargs)
    bound = attention_error(Q, K, V, np.float32, scale=kwargs.get("scale"), mask=kwargs.get("mask"))
    np.testing.assert_allclose(steps.weights, ref.weights, rtol=0, atol=bound.weights)  # float64 ≈ exact
    np.testing.assert_allclose(steps.output, ref.output, rtol=0, atol=bound.output)


def test_large_finite_scores_give_finite_results():
    Q = np.array([[100.0, 0.0], [-100.0, 0.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0], [0.0, 100.0]])  # scores ±1e4 and 0
    V = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    np.testing.assert_array_equal(w, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0, 0.0], [0.0, 1.0]])


def test_scores_beyond_float_range_apart_do_not_warn():
    """Scores 1e308 and -1e308 differ by more than the largest float: weight 1 and 0."""
    np.testing.assert_array_equal(softmax([1e308, -1e308]), [1.0, 0.0])
    out, w = scaled_dot_product_attention([[1e154]], [[1e154], [-1e154]], [[1.0], [2.0]], scale=1.0)
    np.testing.assert_array_equal(w, [[1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0]])
