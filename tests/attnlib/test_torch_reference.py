"""attnlib against torch.nn.functional.scaled_dot_product_attention on seeded random cases.

Torch's weights are read from torch itself: with ``V = I`` (n_k × n_k) its output *is* the weights.
The two agree to twice :func:`conftest.attention_error`'s bound: each is within it of the exact result.
"""

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch",
    reason="PyTorch is not installed; install it with: .venv/bin/pip install -r requirements-torch.txt",
)
F = torch.nn.functional

from conftest import attention_error  # noqa: E402

from attnlib import causal_mask, scaled_dot_product_attention  # noqa: E402

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

CASES_PER_KIND = 40
BATCHES = [
    ((), (), ()),
    ((3,), (3,), (3,)),
    ((2, 3), (2, 3), (2, 3)),
    ((2, 1), (1, 3), (2, 3)),  # Q, K, V batch shapes that broadcast
    ((4,), (), (4,)),
]


def torch_attention(Q, K, V, mask=None, causal=False, scale=None):
    """Torch's output and weights (the latter from V = I), broadcasting batches as numpy does."""
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    q, k, v = (torch.from_numpy(np.array(np.broadcast_to(a, batch + a.shape[-2:]))) for a in (Q, K, V))
    attn_mask = None if mask is None else torch.from_numpy(np.array(mask))
    kwargs = dict(attn_mask=attn_mask, is_causal=causal, scale=scale)
    eye = torch.eye(K.shape[-2], dtype=q.dtype).expand(*batch, -1, -1)
    with torch.no_grad():
        return F.scaled_dot_product_attention(q, k, v, **kwargs).numpy(), F.scaled_dot_product_attention(
            q, k, eye, **kwargs
        ).numpy()


def random_case(seed, dtype, kind):
    rng = np.random.default_rng(seed)
    batch_q, batch_k, batch_v = BATCHES[seed % len(BATCHES)]
    n_q, n_k, d_k, d_v = (int(n) for n in rng.integers(1, 7, size=4))
    Q = rng.normal(size=(*batch_q, n_q, d_k)).astype(dtype)
    K = rng.normal(size=(*batch_k, n_k, d_k)).astype(dtype)
    V = rng.normal(size=(*batch_v, n_k, d_v)).astype(dtype)
    kwargs = {}
    weights_shape = (*np.broadcast_shapes(batch_q, batch_k), n_q, n_k)
    if kind in ("bool-mask", "float-mask", "bias-mask"):
        # a mask of the full weights' shape, or one that broadcasts over queries or batch
        shape = [weights_shape, (*weights_shape[:-2], 1, n_k), (n_q, n_k)][seed % 3]
        allowed = rng.random(shape) < 0.7
        if seed % 4 == 0:
            allowed[..., 0, :] = False  # a fully masked query
        if kind == "bool-mask":
            kwargs["mask"] = allowed
        elif kind == "float-mask":
            kwargs["mask"] = np.where(allowed, 0.0, -np.inf).astype(dtype)
        else:
            kwargs["mask"] = np.where(allowed, rng.normal(size=shape), -np.inf).astype(dtype)
    elif kind == "causal":
        kwargs["causal"] = True
    elif kind == "scale":
        kwargs["scale"] = float(rng.uniform(-2.0, 3.0))
    return (Q, K, V), kwargs


KINDS = ["plain", "scale", "bool-mask", "float-mask", "bias-mask", "causal"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("kind", KINDS)
def test_matches_torch(kind, dtype):
    for seed in range(CASES_PER_KIND):
        (Q, K, V), kwargs = random_case(seed, dtype, kind)
        out, w = scaled_dot_product_attention(Q, K, V, **kwargs)
        t_out, t_w = torch_attention(
            Q, K, V, mask=kwargs.get("mask"), causal=kwargs.get("causal", False), scale=kwargs.get("scale")
        )
        assert out.dtype == w.dtype == dtype
        assert out.shape == t_out.shape and w.shape == t_w.shape, f"seed {seed}"
        bound = attention_error(Q, K, V, dtype, scale=kwargs.get("scale"), mask=kwargs.get("mask"))
        np.testing.assert_allclose(out, t_out, rtol=0, atol=2 * bound.output, err_msg=f"output, seed {seed}")
        np.testing.assert_allclose(w, t_w, rtol=0, atol=2 * bound.weights, err_msg=f"weights, seed {seed}")


@pytest.mark.parametrize("kind", ["bool-mask", "float-mask"])
def test_fully_masked_rows_are_zero_in_both(kind):
    (Q, K, V), kwargs = random_case(0, np.float64, kind)  # seed 0 masks every key of query 0
    out, w = scaled_dot_product_attention(Q, K, V, **kwargs)
    t_out, t_w = torch_attention(Q, K, V, mask=kwargs["mask"])
    np.testing.assert_array_equal(w[..., 0, :], 0.0)
    np.testing.assert_array_equal(out[..., 0, :], 0.0)
    np.testing.assert_array_equal(t_w[..., 0, :], 0.0)
    np.testing.assert_array_equal(t_out[..., 0, :], 0.0)


@pytest.mark.parametrize(
    ("n_q", "n_k"), [(2, 5), (5, 2), (4, 4)], ids=["fewer-queries", "more-queries", "square"]
)
def test_causal_is_top_left_aligned_like_torch(n_q, n_k):
    rng = np.random.default_rng(n_q * 10 + n_k)
    Q, K, V = rng.normal(size=(n_q, 3)), rng.normal(size=(n_k, 3)), rng.normal(size=(n_k, 2))
    out, w = scaled_dot_product_attention(Q, K, V, causal=True)
    t_out, t_w = torch_attention(Q, K, V, causal=True)
    bound = attention_error(Q, K, V, np.float64)
    np.testing.assert_array_equal(w != 0, t_w != 0)
    np.testing.assert_allclose(w, t_w, rtol=0, atol=2 * bound.weights)
    np.testing.assert_allclose(out, t_out, rtol=0, atol=2 * bound.output)


def test_single_query_matches_torch_one_row():
    rng = np.random.default_rng(3)
    q, K, V = rng.normal(size=4), rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    out, w = scaled_dot_product_attention(q, K, V)
    t_out, t_w = torch_attention(q[None, :], K, V)
    bound = attention_error(q[None, :], K, V, np.float64)
    np.testing.assert_allclose(out, t_out[0], rtol=0, atol=2 * bound.output)
    np.testing.assert_allclose(w, t_w[0], rtol=0, atol=2 * bound.weights)


@pytest.mark.parametrize(("window", "sinks"), [(1, 0), (2, 0), (3, 1), (2, 2), (5, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_window_and_sinks_mask_matches_torch(window, sinks, dtype):
    rng = np.random.default_rng(window * 10 + sinks)
    Q, K, V = (rng.normal(size=(2, 3, 7, 4)).astype(dtype) for _ in range(3))
    mask = causal_mask(7, window=window, sinks=sinks)
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    t_out, t_w = torch_attention(Q, K, V, mask=mask)
    bound = attention_error(Q, K, V, dtype)
    np.testing.assert_array_equal(w != 0, np.broadcast_to(mask, w.shape))
    np.testing.assert_allclose(w, t_w, rtol=0, atol=2 * bound.weights)
    np.testing.assert_allclose(out, t_out, rtol=0, atol=2 * bound.output)
