"""attnlib.backward against central finite differences and PyTorch's autograd."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import attention_backward_error, every_case

from attnlib import attention_steps, scaled_dot_product_attention, softmax
from attnlib.backward import attention_backward, softmax_backward, steps_backward

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def loss(Q, K, V, dZ, **kwargs):
    return float(np.sum(scaled_dot_product_attention(Q, K, V, **kwargs)[0] * dZ))


def finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("seed", range(12))
def test_matches_central_finite_differences(seed):
    rng = np.random.default_rng(seed)
    n_q, n_k, d_k, d_v = (int(rng.integers(1, 5)) for _ in range(4))
    Q, K, V = rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))
    dZ = rng.normal(size=(n_q, d_v))
    kwargs = {"causal": seed % 3 == 0, "scale": None if seed % 2 else 0.7}
    if seed % 4 == 1:
        kwargs["mask"] = rng.random((n_q, n_k)) > 0.3
    dQ, dK, dV = attention_backward(Q, K, V, dZ, **kwargs)
    np.testing.assert_allclose(dQ, finite_difference(lambda x: loss(x, K, V, dZ, **kwargs), Q), atol=1e-7)
    np.testing.assert_allclose(dK, finite_difference(lambda x: loss(Q, x, V, dZ, **kwargs), K), atol=1e-7)
    np.testing.assert_allclose(dV, finite_difference(lambda x: loss(Q, K, x, dZ, **kwargs), V), atol=1e-7)


def test_softmax_backward_is_the_jacobian_times_the_gradient():
    rng = np.random.default_rng(0)
    s, g = rng.normal(size=5), rng.normal(size=5)
    A = softmax(s)
    J = np.diag(A) - np.outer(A, A)
    np.testing.assert_allclose(softmax_backward(A, g), J @ g, rtol=1e-14, atol=1e-16)


def test_masked_keys_and_fully_masked_rows_get_no_gradient():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    mask = np.array([[True, True, False, False], [False] * 4, [True, False, True, False]])
    dQ, dK, dV = attention_backward(Q, K, V, np.ones((3, 3)), mask=mask)
    np.testing.assert_array_equal(dQ[1], 0.0)  # the query that sees no key
    np.testing.assert_array_equal(dK[3], 0.0)  # the key no query sees
    np.testing.assert_array_equal(dV[3], 0.0)


def test_broadcast_inputs_get_summed_gradients_and_single_query():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(1, 5, 2))
    dZ = rng.normal(size=(2, 3, 2))
    dQ, dK, dV = attention_backward(Q, K, V, dZ)
    assert dQ.shape == Q.shape and dK.shape == K.shape and dV.shape == V.shape
    per_batch = [attention_backward(Q[b], K, V[0], dZ[b]) for b in range(2)]
    np.testing.assert_allclose(dK, per_batch[0][1] + per_batch[1][1], rtol=1e-12)
    np.testing.assert_allclose(dV[0], per_batch[0][2] + per_batch[1][2], rtol=1e-12)
    dq, dk, dv = attention_backward(Q[0, 0], K, V[0], dZ[0, 0])
    full = attention_backward(Q[0, :1], K, V[0], dZ[0, :1])
    assert dq.shape == (4,)
    np.testing.assert_allclose(dq, full[0][0], rtol=1e-12)
    np.testing.assert_allclose(dk, full[1], rtol=1e-12)
    np.testing.assert_allclose(dv, full[2], rtol=1e-12)


@pytest.mark.parametrize(
    ("weights", "d_weights", "words"),
    [
        ([[2.0, -1.0]], [[1.0, 0.0]], "softmax of the scores"),  # scores passed for weights
        ([[0.5, 0.4]], [[1.0, 0.0]], "sums to 0.9"),
        ([[0.5, 0.5]], [[1.0, 0.0, 0.0]], "d_weights must have the weights' shape"),
        ([[0.5, 0.5]], [[np.nan, 0.0]], "d_weights"),
        (None, [[1.0, 0.0]], "weights"),
    ],
)
def test_softmax_backward_bad_input_is_named(weights, d_weights, words):
    with pytest.raises((ValueError, TypeError), match=words):
        softmax_backward(weights, d_weights)


def test_softmax_backward_of_a_fully_masked_row_is_zero_and_float32_stays():
    np.testing.assert_array_equal(softmax_backward([[0.0, 0.0, 0.0]], [[1.0, 2.0, 3.0]]), 0.0)
    A = softmax(np.array([0.1, 0.5, -0.3], dtype=np.float32))
    assert softmax_backward(A, np.ones(3, dtype=np.float32)).dtype == np.float32


def test_softmax_backward_takes_float16_distributions_within_float16_rounding():
    rng = np.random.default_rng(0)
    A64 = softmax(rng.normal(size=(4, 50)))
    A16 = A64.astype(np.float16)  # row 1 sums to 1.00006: float16 rounding, not a mistake
    g = rng.normal(size=(4, 50))
    got = softmax_backward(A16, g.astype(np.float16))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, softmax_backward(A64, g), atol=1e-2)
    off = A16.copy()
    off[0, 0] += np.float16(0.01)  # ten float16 epsilons: a distribution that does not sum to 1
    with pytest.raises(ValueError, match="weights must sum to 1"):
        softmax_backward(off, g)
    with pytest.raises(ValueError, match="weights must sum to 1"):
        softmax_backward(A64 * (1 + 1e-4), g)  # float64 keeps its tight tolerance


def test_float32_inputs_give_float32_gradients_close_to_float64():
    rng = np.random.default_rng(3)
    Q, K, V, dZ = (
        rng.normal(size=(3, 4)),
        rng.normal(size=(5, 4)),
        rng.normal(size=(5, 2)),
        rng.normal(size=(3, 2)),
    )
    Q, K, V, dZ = (x.astype(np.float32) for x in (Q, K, V, dZ))
    exact = attention_backward(*(x.astype(np.float64) for x in (Q, K, V, dZ)), causal=True)
    single = attention_backward(Q, K, V, dZ, causal=True)
    bounds = attention_backward_error(Q, K, V, dZ, np.float32, causal=True)  # float64 ≈ exact
    for g32, g64, bound in zip(single, exact, bounds, strict=True):
        assert g32.dtype == np.float32
        np.testing.assert_allclose(g32, g64, rtol=0, atol=bound)


@pytest.mark.parametrize(
    ("d_output", "words"),
    [(np.ones((3, 2)), "d_output"), (np.full((3, 3), np.nan), "d_output"), (None, "d_output")],
)
def test_bad_d_output_is_named(d_output, words):
    Q = np.ones((3, 2))
    with pytest.raises((ValueError, TypeError), match=words):
        attention_backward(Q, Q, np.ones((3, 3)), d_output)


def test_forward_errors_are_the_forward_passes():
    with pytest.raises(ValueError, match="d_k"):
        attention_backward(np.ones((3, 2)), np.ones((3, 4)), np.ones((3, 2)), np.ones((3, 2)))


KINDS = ["none", "bool", "additive", "causal", "bool+causal", "fully-masked-row"]


@pytest.mark.parametrize("kind", KINDS)
def test_matches_pytorch_autograd(kind):
    """320 random cases (seeds 0 … 319), each mask kind on every sixth, in batches of (), (2,), (2, 3)."""
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    every_case(lambda seed: _autograd_case(torch, seed), range(KINDS.index(kind), 320, len(KINDS)))


def _autograd_case(torch, seed):
    rng = np.random.default_rng(5000 + seed)
    batch = [(), (2,), (2, 3)][seed % 3]
    n_q = int(rng.integers(1, 7))
    n_k = n_q if seed % 2 else int(rng.integers(1, 7))  # self (same length) and cross
    d_k, d_v = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    Q = rng.normal(size=(*batch, n_q, d_k))
    K = rng.normal(size=(*batch, n_k, d_k))
    V = rng.normal(size=(*batch, n_k, d_v))
    dZ = rng.normal(size=(*batch, n_q, d_v))
    kind = KINDS[seed % 6]
    ours, theirs = {}, {}
    if kind in ("bool", "bool+causal", "fully-masked-row"):
        allowed = rng.random((n_q, n_k)) > 0.3
        if kind == "fully-masked-row":
            allowed[rng.integers(n_q)] = False
        ours["mask"], theirs["attn_mask"] = allowed, torch.from_numpy(allowed)  # same convention here
    if kind == "additive":
        additive = np.where(rng.random((n_q, n_k)) > 0.3, rng.normal(size=(n_q, n_k)), -np.inf)
        ours["mask"], theirs["attn_mask"] = additive, torch.from_numpy(additive)
    if "causal" in kind:
        ours["causal"] = True
        causal = torch.from_numpy(np.tri(n_q, n_k, dtype=bool))
        theirs["attn_mask"] = causal if "attn_mask" not in theirs else theirs["attn_mask"] & causal
    if seed % 5 == 2:  # a scale other than 1/√d_k
        ours["scale"] = theirs["scale"] = float(rng.uniform(0.1, 2.0))
    tQ, tK, tV = (torch.tensor(x, requires_grad=True) for x in (Q, K, V))
    out = torch.nn.functional.scaled_dot_product_attention(tQ, tK, tV, **theirs)
    (out * torch.from_numpy(dZ)).sum().backward()
    expected = [t.grad.numpy() for t in (tQ, tK, tV)]
    got = attention_backward(Q, K, V, dZ, **ours)
    seen = scaled_dot_product_attention(Q, K, V, **ours)[1].sum(axis=-1) > 0
    bounds = attention_backward_error(Q, K, V, dZ, np.float64, **ours)  # two codes: twice it
    for name, g, e, bound in zip(("dQ", "dK", "dV"), got, expected, bounds, strict=True):
        if name == "dQ":  # PyTorch leaves NaN in a query row that sees no key; ours is 0
            np.testing.assert_array_equal(g[~seen], 0.0)
            g, e = g[seen], e[seen]
        np.testing.assert_allclose(g, e, rtol=0, atol=2 * bound, err_msg=f"{name}, {kind}")


@pytest.mark.parametrize("single", [False, True])
def test_steps_backward_reuses_the_forward_and_gives_attention_backwards_gradients(single):
    rng = np.random.default_rng(5)
    Q = rng.normal(size=4) if single else rng.normal(size=(2, 3, 4))  # a single query, or a batch of 2
    K, V = rng.normal(size=(2, 5, 4)), rng.normal(size=(5, 3))  # V broadcast over the batch
    mask = np.array([True, True, False, True, True])
    dZ = rng.normal(size=(2, 3) if single else (2, 3, 3))
    steps = attention_steps(Q, K, V, mask=mask, scale=0.4)
    expected = attention_backward(Q, K, V, dZ, mask=mask, scale=0.4)
    for got, want in zip(steps_backward(steps, Q, K, V, dZ), expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
