"""attnlib.tiled_backward: the tiled backward pass equals attention_backward, without the weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import attention_backward_error

from attnlib import scaled_dot_product_attention
from attnlib.backward import attention_backward
from attnlib.counting import peak_bytes, weights_bytes
from attnlib.efficient import tiled_attention_with_logsumexp
from attnlib.tiled_backward import tiled_attention_backward

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    ("n_q", "n_k", "block_q", "block_k"),
    [(7, 7, 3, 2), (16, 16, 4, 8), (5, 9, 2, 4), (9, 5, 4, 2), (6, 6, 10, 10)],
)
def test_tiled_backward_equals_attention_backward(n_q, n_k, block_q, block_k, causal):
    rng = np.random.default_rng(n_q * 100 + n_k)
    Q, K = rng.normal(size=(2, 3, n_q, 4)), rng.normal(size=(2, 3, n_k, 4))
    V, dO = rng.normal(size=(2, 3, n_k, 5)), rng.normal(size=(2, 3, n_q, 5))
    expected = attention_backward(Q, K, V, dO, causal=causal, scale=0.7)
    got = tiled_attention_backward(Q, K, V, dO, causal=causal, scale=0.7, block_q=block_q, block_k=block_k)
    blocks = math.ceil(n_k / block_k)  # the tiled forward's online softmax, for the logsumexp
    bounds = attention_backward_error(Q, K, V, dO, np.float64, causal=causal, scale=0.7, blocks=blocks)
    for name, g, e, bound in zip(("dQ", "dK", "dV"), got, expected, bounds, strict=True):
        assert g.shape == e.shape, name
        np.testing.assert_allclose(g, e, rtol=0, atol=2 * bound, err_msg=name)  # two codes: twice it


def test_logsumexp_gives_back_the_weights():
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(10, 4)) for _ in range(3))
    output, lse = tiled_attention_with_logsumexp(Q, K, V, block_q=3, block_k=4, causal=True)
    naive, weights = scaled_dot_product_attention(Q, K, V, causal=True)
    scores = np.where(np.tril(np.ones((10, 10), dtype=bool)), Q @ K.T / 2.0, -np.inf)
    np.testing.assert_allclose(np.exp(scores - lse[:, None]), weights, atol=1e-14)
    np.testing.assert_allclose(output, naive, atol=1e-14)


def test_a_query_with_every_key_masked_has_logsumexp_minus_inf():
    Q, K, V = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))
    mask = np.array([[True, True, False, False], [False] * 4])
    _, lse = tiled_attention_with_logsumexp(Q, K, V, mask=mask)
    assert np.isfinite(lse[0]) and np.isneginf(lse[1])


def test_tiled_backward_holds_blocks_not_the_weights():
    rng = np.random.default_rng(4)
    Q, K, V, dO = (rng.normal(size=(512, 16)) for _ in range(4))
    _, tiled = peak_bytes(lambda: tiled_attention_backward(Q, K, V, dO, block_q=64, block_k=64))
    _, naive = peak_bytes(lambda: attention_backward(Q, K, V, dO))
    assert tiled < weights_bytes(512, 512, itemsize=8) < naive


def test_bad_input_names_the_argument():
    Q = np.ones((4, 3))
    with pytest.raises(ValueError, match="same leading dimensions"):
        tiled_attention_backward(np.ones((2, 4, 3)), Q, Q, Q)
    with pytest.raises(ValueError, match="d_output"):
        tiled_attention_backward(Q, Q, np.ones((4, 2)), np.ones((4, 3)))
    with pytest.raises(TypeError, match="causal"):
        tiled_attention_backward(Q, Q, Q, Q, causal="yes")
    with pytest.raises(ValueError, match="block_q"):
        tiled_attention_backward(Q, Q, Q, Q, block_q=0)


@pytest.mark.parametrize(
    ("dtype", "shift"),
    [
        (np.float32, 0.0),
        (np.float32, 25.0),
        (np.float32, 2.0**21),
        (np.float64, 2.0**40),
        (np.float64, 2.0**50),
    ],
)
def test_tiled_backward_at_large_scores(dtype, shift):
    """Scores ``q·k + shift`` with small integers q, k and scale 1 are exact in ``dtype`` however large
    ``shift`` is, and the gradients do not depend on it except through the shift's own column: the
    weights recomputed from ``L = m + log l`` rounded to the dtype were off by ``u·shift`` (10 % at
    2²¹ in float32), those from ``(s − m) − log l`` stay within the arithmetic's bound.
    """
    rng = np.random.default_rng(int(shift) % 1000)
    n, d = 11, 3
    Q = np.hstack([rng.integers(-2, 3, (n, d)), np.full((n, 1), shift)]).astype(dtype)
    K = np.hstack([rng.integers(-2, 3, (n, d)), np.ones((n, 1))]).astype(dtype)
    V, dO = (rng.normal(size=(n, 4)).astype(dtype) for _ in range(2))
    spread = 2 * d * 4  # |q·k| ≤ d·2·2 on either side
    exact = attention_backward(*(a.astype(np.float64) for a in (Q, K, V, dO)), scale=1.0)
    bounds = attention_backward_error(Q, K, V, dO, dtype, scale=1.0, blocks=3, exact_spread=spread)
    bounds64 = attention_backward_error(Q, K, V, dO, np.float64, scale=1.0, exact_spread=spread)
    naive = attention_backward(Q, K, V, dO, scale=1.0)
    tiled = tiled_attention_backward(Q, K, V, dO, scale=1.0, block_q=4, block_k=4)
    for name, t, a, e, bound, bound64 in zip(
        ("dQ", "dK", "dV"), tiled, naive, exact, bounds, bounds64, strict=True
    ):
        assert t.dtype == dtype, name
        np.testing.assert_allclose(t, e, rtol=0, atol=bound + bound64, err_msg=name)
        np.testing.assert_allclose(t, a, rtol=0, atol=2 * bound, err_msg=name)  # two codes: twice it
