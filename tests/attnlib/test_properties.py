"""Property tests: what must hold for every (bounded, finite) input."""

import numpy as np
import pytest
from conftest import attention_error
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib import scaled_dot_product_attention, softmax

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)  # same examples every run
dims = st.integers(min_value=1, max_value=6)


def floats64(bound=10.0):
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False)


@st.composite
def attention_inputs(draw, dtype=np.float64, bound=10.0):
    """Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) with entries in [-bound, bound]."""
    n_q, n_k, d_k, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    elements = st.floats(
        -bound, bound, allow_nan=False, allow_infinity=False, width=np.dtype(dtype).itemsize * 8
    )
    Q = draw(arrays(dtype, (n_q, d_k), elements=elements))
    K = draw(arrays(dtype, (n_k, d_k), elements=elements))
    V = draw(arrays(dtype, (n_k, d_v), elements=elements))
    return Q, K, V


@SETTINGS
@given(attention_inputs(), st.booleans())
def test_weights_are_a_distribution_per_query(qkv, causal):
    out, w = scaled_dot_product_attention(*qkv, causal=causal)
    assert np.all((w >= 0) & (w <= 1))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)
    V = qkv[2]
    assert np.all(out <= V.max(axis=0) + 1e-9) and np.all(out >= V.min(axis=0) - 1e-9)


@SETTINGS
@given(arrays(np.float64, st.tuples(dims, dims), elements=floats64(50)), st.data())
def test_softmax_unchanged_by_adding_a_constant_per_row(x, data):
    shift = data.draw(arrays(np.float64, (x.shape[0], 1), elements=floats64(100)))
    np.testing.assert_allclose(softmax(x + shift), softmax(x), atol=1e-12)
    np.testing.assert_allclose(softmax(x.T + shift.T, axis=0), softmax(x.T, axis=0), atol=1e-12)


@SETTINGS
@given(attention_inputs(), st.randoms(use_true_random=False))
def test_permuting_keys_and_values_together_leaves_output_unchanged(qkv, random):
    Q, K, V = qkv
    perm = np.array(random.sample(range(K.shape[0]), K.shape[0]))
    out, w = scaled_dot_product_attention(Q, K, V)
    out_p, w_p = scaled_dot_product_attention(Q, K[perm], V[perm])
    np.testing.assert_allclose(out_p, out, atol=1e-12)
    np.testing.assert_allclose(w_p, w[:, perm], atol=1e-12)


@SETTINGS
@given(attention_inputs(), st.randoms(use_true_random=False))
def test_permuting_queries_permutes_output_rows(qkv, random):
    Q, K, V = qkv
    perm = np.array(random.sample(range(Q.shape[0]), Q.shape[0]))
    out, w = scaled_dot_product_attention(Q, K, V)
    out_p, w_p = scaled_dot_product_attention(Q[perm], K, V)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(w_p, w[perm], atol=1e-12)


@SETTINGS
@given(attention_inputs(), st.data())
def test_masked_keys_get_exactly_zero_weight(qkv, data):
    Q, K, V = qkv
    mask = data.draw(arrays(bool, (Q.shape[0], K.shape[0])))
    as_float = data.draw(st.booleans())
    given_mask = np.where(mask, 0.0, -np.inf) if as_float else mask
    out, w = scaled_dot_product_attention(Q, K, V, mask=given_mask)
    assert np.all(w[~mask] == 0.0)
    visible = mask.any(axis=-1)
    np.testing.assert_allclose(w[visible].sum(axis=-1), 1.0, atol=1e-12)
    assert np.all(w[~visible] == 0.0) and np.all(out[~visible] == 0.0)
    # the same as attending only to the visible keys
    for i in np.flatnonzero(visible):
        out_i, _ = scaled_dot_product_attention(Q[i], K[mask[i]], V[mask[i]], scale=1 / np.sqrt(K.shape[1]))
        np.testing.assert_allclose(out[i], out_i, atol=1e-12)


#: Q, K and V where float32's product underflows: weights 0.5 times V = 2⁻¹⁴⁹ is 0, exactly 2⁻¹⁵⁰ off.
UNDERFLOW = (np.zeros((1, 1), np.float32), np.zeros((2, 1), np.float32), np.full((2, 1), 1e-45, np.float32))


@SETTINGS
@given(attention_inputs(dtype=np.float32, bound=3.0), st.booleans())
@example(UNDERFLOW, False)
def test_float32_in_float32_out_close_to_float64(qkv, causal):
    out, w = scaled_dot_product_attention(*qkv, causal=causal)
    assert out.dtype == np.float32 and w.dtype == np.float32
    out64, w64 = scaled_dot_product_attention(*(a.astype(np.float64) for a in qkv), causal=causal)
    bound = attention_error(*qkv, np.float32)  # float64's own error is 2⁻²⁹ of it: exact, here
    np.testing.assert_allclose(w, w64, atol=bound.weights, rtol=0)
    np.testing.assert_allclose(out, out64, atol=bound.output, rtol=0)


@SETTINGS
@given(attention_inputs(), st.data())
def test_single_query_equals_one_row_matrix(qkv, data):
    Q, K, V = qkv
    i = data.draw(st.integers(0, Q.shape[0] - 1))
    keys = data.draw(arrays(bool, K.shape[0]))
    out, w = scaled_dot_product_attention(Q[i], K, V, mask=keys)
    out_m, w_m = scaled_dot_product_attention(Q[i : i + 1], K, V, mask=keys[None, :])
    assert out.shape == (V.shape[1],) and w.shape == (K.shape[0],)
    np.testing.assert_array_equal(out, out_m[0])
    np.testing.assert_array_equal(w, w_m[0])
