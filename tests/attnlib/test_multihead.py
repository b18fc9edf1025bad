"""attnlib.multihead against a loop over heads and against PyTorch's nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import every_case, multi_head_error

from attnlib import scaled_dot_product_attention
from attnlib.multihead import (
    MultiHeadArguments,
    heads_attention,
    merge_heads,
    multi_head_arguments,
    multi_head_attention,
    split_heads,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def weights_for(rng, d_model, d_kv, n_heads, d_k, d_v, d_out, dtype=np.float64):
    shapes = {"W_q": (d_model, n_heads * d_k), "W_k": (d_kv, n_heads * d_k)}
    shapes |= {"W_v": (d_kv, n_heads * d_v), "W_o": (n_heads * d_v, d_out)}
    return {
        name: (rng.normal(size=shape) / np.sqrt(shape[0])).astype(dtype) for name, shape in shapes.items()
    }


def loop_over_heads(X_q, X_kv, W, n_heads, mask=None, causal=False):
    """Each head on its own columns with scaled_dot_product_attention, then concat and W_o."""
    d_k, d_v = W["W_q"].shape[1] // n_heads, W["W_v"].shape[1] // n_heads
    outs, weights = [], []
    for h in range(n_heads):
        Q = X_q @ W["W_q"][:, h * d_k : (h + 1) * d_k]
        K = X_kv @ W["W_k"][:, h * d_k : (h + 1) * d_k]
        V = X_kv @ W["W_v"][:, h * d_v : (h + 1) * d_v]
        head_mask = None if mask is None else mask[..., h, :, :]
        out, w = scaled_dot_product_attention(Q, K, V, mask=head_mask, causal=causal)
        outs.append(out)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W["W_o"], np.stack(weights, axis=-3)


def test_split_and_merge_heads_are_inverse_and_take_columns():
    X = np.arange(2 * 3 * 6, dtype=float).reshape(2, 3, 6)
    heads = split_heads(X, 3)
    assert heads.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(heads[1, 2], X[1, :, 4:6])  # head 2 = columns 4, 5
    np.testing.assert_array_equal(merge_heads(heads), X)


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_equals_a_loop_over_heads(batch):
    """60 random cases (seeds 0 … 59), each batch shape on every third."""
    every_case(_loop_case, range([(), (2,), (2, 3)].index(batch), 60, 3))


def _loop_case(seed):
    rng = np.random.default_rng(seed)
    n_heads = int(rng.integers(1, 5))
    d_model, d_kv = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    d_k, d_v, d_out = (int(rng.integers(1, 5)) for _ in range(3))
    n_q, n_k = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    batch = [(), (2,), (2, 3)][seed % 3]
    X_q = rng.normal(size=(*batch, n_q, d_model))
    X_kv = X_q if seed % 2 and d_kv == d_model else rng.normal(size=(*batch, n_k, d_kv))
    n_k = X_kv.shape[-2]
    W = weights_for(rng, d_model, X_kv.shape[-1], n_heads, d_k, d_v, d_out)
    mask = rng.random((*batch, n_heads, n_q, n_k)) > 0.3 if seed % 4 == 0 else None
    causal = seed % 5 == 0
    out, weights = multi_head_attention(X_q, X_kv, **W, n_heads=n_heads, mask=mask, causal=causal)
    expected_out, expected_weights = loop_over_heads(X_q, X_kv, W, n_heads, mask, causal)
    assert out.shape == (*batch, n_q, d_out) and weights.shape == (*batch, n_heads, n_q, n_k)
    bound = multi_head_error(X_q, X_kv, W, n_heads, np.float64)  # two codes: twice it
    np.testing.assert_allclose(out, expected_out, rtol=0, atol=2 * bound.output)
    np.testing.assert_allclose(weights, expected_weights, rtol=0, atol=2 * bound.weights)


def test_key_padding_mask_hides_padded_keys_and_a_fully_padded_row_gives_zeros():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 4, 6))
    W = weights_for(rng, 6, 6, 2, 3, 3, 6)
    padding = np.array([[True, True, True, False], [False, False, False, False]])
    out, weights = multi_head_attention(X, X, **W, n_heads=2, key_padding_mask=padding)
    np.testing.assert_array_equal(weights[0, :, :, 3], 0.0)  # no query looks at the padding
    np.testing.assert_allclose(weights[0].sum(axis=-1), 1.0)
    np.testing.assert_array_equal(weights[1], 0.0)  # a sentence that is all padding
    np.testing.assert_array_equal(out[1], 0.0)
    unpadded, _ = multi_head_attention(X[0, :3], X[0, :3], **W, n_heads=2)
    bound = multi_head_error(X[0], X[0], W, 2, np.float64)  # other shapes: two orders of summing
    np.testing.assert_allclose(out[0, :3], unpadded, rtol=0, atol=2 * bound.output)  # nothing else changes


def test_padding_combines_with_boolean_and_additive_masks_and_causal():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3, 5, 4))
    W = weights_for(rng, 4, 4, 2, 2, 2, 4)
    padding = rng.random((3, 5)) > 0.3
    allowed = rng.random((5, 5)) > 0.2
    additive = np.where(allowed, rng.normal(size=(5, 5)), -np.inf)
    for mask in (allowed, additive):
        got = multi_head_attention(X, X, **W, n_heads=2, mask=mask, key_padding_mask=padding, causal=True)
        both = (
            mask & padding[:, None, None, :]
            if mask.dtype == bool
            else np.where(padding[:, None, None, :], mask, -np.inf)
        )
        expected = loop_over_heads(X, X, W, 2, np.broadcast_to(both, (3, 2, 5, 5)), causal=True)
        bound = multi_head_error(X, X, W, 2, np.float64, mask=mask)  # two codes: twice it
        np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=2 * bound.output)
        np.testing.assert_allclose(got[1], expected[1], rtol=0, atol=2 * bound.weights)


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"n_heads": 3}, ValueError, "n_heads"),
        ({"n_heads": 0}, ValueError, "n_heads"),
        ({"n_heads": 2.0}, TypeError, "n_heads"),
        ({"n_heads": True}, TypeError, "n_heads"),
        ({"W_k": np.ones((4, 6))}, ValueError, "d_k"),
        ({"W_q": np.ones((5, 4))}, ValueError, "W_q"),
        ({"W_o": np.ones((3, 4))}, ValueError, "W_o"),
        ({"X_kv": np.ones((5, 3))}, ValueError, "X_kv"),
        ({"X_kv": np.zeros((0, 4))}, ValueError, "X_kv has no tokens"),
        ({"X_kv": np.zeros((2, 0, 4))}, ValueError, "X_kv has no tokens"),
        ({"X_q": np.full((5, 4), np.nan)}, ValueError, "X_q"),
        ({"key_padding_mask": np.ones(5)}, TypeError, "key_padding_mask"),
        ({"key_padding_mask": np.ones(4, dtype=bool)}, ValueError, "key_padding_mask"),
        ({"key_padding_mask": np.ones((3, 5), dtype=bool)}, ValueError, "key_padding_mask.*batch"),
        ({"key_padding_mask": np.ones((), dtype=bool)}, ValueError, "key_padding_mask"),
        ({"W_v": np.ones((4, 5))}, ValueError, "W_v"),
        ({"W_q": np.ones((4, 5)), "W_k": np.ones((4, 5))}, ValueError, "n_heads"),
        ({"X_q": np.ones(4)}, ValueError, "X_q"),
        ({"W_o": np.ones(4)}, ValueError, "W_o"),
        ({"n_heads": "2"}, TypeError, "n_heads"),
        ({"mask": np.ones((3, 3), dtype=bool)}, ValueError, "mask"),
        ({"mask": np.ones((5, 5), dtype=int)}, TypeError, "mask"),
        (
            {"mask": np.ones((3, 3), dtype=bool), "key_padding_mask": np.ones(5, dtype=bool)},
            ValueError,
            "mask",
        ),
    ],
)
def test_bad_arguments_are_named(change, error, words):
    args = {"X_q": np.ones((5, 4)), "X_kv": np.ones((5, 4)), "n_heads": 2}
    args |= {"W_q": np.ones((4, 4)), "W_k": np.ones((4, 4)), "W_v": np.ones((4, 4)), "W_o": np.ones((4, 4))}
    args |= change
    with pytest.raises(error, match=words):
        multi_head_attention(**args)


def test_zero_queries_give_an_empty_output_as_the_naive_attention_does():
    rng = np.random.default_rng(0)
    W = weights_for(rng, d_model=4, d_kv=4, n_heads=2, d_k=3, d_v=2, d_out=5)
    for X_q in (np.zeros((0, 4)), np.zeros((3, 0, 4))):
        X_kv = rng.normal(size=(*X_q.shape[:-2], 6, 4))
        output, weights = multi_head_attention(X_q, X_kv, **W, n_heads=2)
        assert output.shape == (*X_q.shape[:-1], 5)
        assert weights.shape == (*X_q.shape[:-2], 2, 0, 6)
        expected = loop_over_heads(X_q, X_kv, W, 2)
        assert (output.shape, weights.shape) == (expected[0].shape, expected[1].shape)
    assert merge_heads(np.zeros((2, 0, 3))).shape == (0, 6)
    assert merge_heads(split_heads(np.zeros((4, 0, 6)), 3)).shape == (4, 0, 6)


def test_split_heads_bad_input():
    with pytest.raises(ValueError, match="n_heads=4"):
        split_heads(np.ones((3, 6)), 4)
    with pytest.raises(ValueError, match="X"):
        split_heads(np.ones(6), 2)
    with pytest.raises(ValueError, match="X"):
        merge_heads(np.ones((3, 6)))


def torch_mha(torch, W, n_heads, d_model, d_kv, dtype):
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True, kdim=d_kv, vdim=d_kv)
    mha = mha.to(dtype)
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            mha.in_proj_weight.copy_(
                torch.from_numpy(np.concatenate([W["W_q"], W["W_k"], W["W_v"]], axis=1).T)
            )
        else:
            mha.q_proj_weight.copy_(torch.from_numpy(W["W_q"].T))
            mha.k_proj_weight.copy_(torch.from_numpy(W["W_k"].T))
            mha.v_proj_weight.copy_(torch.from_numpy(W["W_v"].T))
        mha.out_proj.weight.copy_(torch.from_numpy(W["W_o"].T))
    return mha.eval()


MHA_KINDS = ["none", "bool", "additive", "causal", "padding", "padding+causal"]


@pytest.mark.parametrize("kind", MHA_KINDS)
def test_matches_pytorch_multihead_attention(kind):
    """200 random cases (seeds 0 … 199), each mask kind on every sixth."""
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    every_case(lambda seed: _mha_case(torch, seed), range(MHA_KINDS.index(kind), 200, len(MHA_KINDS)))


def _mha_case(torch, seed):
    rng = np.random.default_rng(1000 + seed)
    dtype = np.float64 if seed % 2 else np.float32
    n_heads = int(rng.integers(1, 5))
    d_model = n_heads * int(rng.integers(1, 5))
    cross = seed % 3 == 0
    d_kv = int(rng.integers(1, 9)) if cross else d_model
    batch, n_q = int(rng.integers(1, 4)), int(rng.integers(1, 7))
    n_k = int(rng.integers(1, 7)) if cross else n_q
    X_q = rng.normal(size=(batch, n_q, d_model)).astype(dtype)
    X_kv = rng.normal(size=(batch, n_k, d_kv)).astype(dtype) if cross else X_q
    W = weights_for(rng, d_model, d_kv, n_heads, d_model // n_heads, d_model // n_heads, d_model, dtype)

    kind = MHA_KINDS[seed % 6]
    ours = {"n_heads": n_heads}
    theirs = {"need_weights": True, "average_attn_weights": False}
    if kind == "bool":
        allowed = rng.random((n_q, n_k)) > 0.3
        ours["mask"], theirs["attn_mask"] = allowed, torch.from_numpy(~allowed)  # PyTorch: True = may NOT
    elif kind == "additive":
        additive = np.where(rng.random((n_q, n_k)) > 0.3, rng.normal(size=(n_q, n_k)), -np.inf).astype(dtype)
        ours["mask"], theirs["attn_mask"] = additive, torch.from_numpy(additive)
    if "causal" in kind:
        ours["causal"] = True
        theirs["attn_mask"] = torch.from_numpy(~np.tri(n_q, n_k, dtype=bool))
    if "padding" in kind:
        real = rng.random((batch, n_k)) > 0.3
        real[:, 0] = True
        ours["key_padding_mask"], theirs["key_padding_mask"] = real, torch.from_numpy(~real)

    out, weights = multi_head_attention(X_q, X_kv, **W, **ours)
    mha = torch_mha(torch, W, n_heads, d_model, d_kv, torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        t_out, t_weights = mha(
            torch.from_numpy(X_q), torch.from_numpy(X_kv), torch.from_numpy(X_kv), **theirs
        )
    seen = weights.sum(axis=-1) > 0  # PyTorch gives NaN where a query sees no key; we give zeros
    assert out.dtype == dtype and weights.shape == (batch, n_heads, n_q, n_k)
    bound = multi_head_error(X_q, X_kv, W, n_heads, dtype, mask=ours.get("mask"))  # two codes: twice it
    np.testing.assert_allclose(weights[seen], t_weights.numpy()[seen], rtol=0, atol=2 * bound.weights)
    rows = seen.all(axis=-2)  # queries that see a key in every head
    np.testing.assert_allclose(out[rows], t_out.numpy()[rows], rtol=0, atol=2 * bound.output)


def no_key_case(torch, bias):
    """A left-padded causal batch whose query 0 sees no key; the layer with or without biases.

    The biases are zero, so either layer computes attnlib's ``multi_head_attention``; ``bias=True``
    (PyTorch's default) is what opens ``nn.MultiheadAttention``'s fast path.
    """
    rng = np.random.default_rng(9)
    X = rng.normal(size=(1, 3, 4))
    W = weights_for(rng, 4, 4, 2, 2, 2, 4)
    real = np.array([[False, True, True]])  # key 0 is padding; causal: query 0 sees only key 0
    mha = torch.nn.MultiheadAttention(4, 2, bias=bias, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W["W_q"], W["W_k"], W["W_v"]], axis=1).T))
        mha.out_proj.weight.copy_(torch.from_numpy(W["W_o"].T))
        if bias:
            mha.in_proj_bias.zero_()
            mha.out_proj.bias.zero_()
    return X, W, real, mha


# Lesson 09's appendix table, measured with PyTorch 2.13 on the CPU: the output of a query that
# sees no key. (bias, mode, under no_grad, need_weights) -> NaN or zeros.
NO_KEY_CASES = [
    (False, "train", False, True, "nan"),  # the default need_weights=True: always NaN
    (True, "eval", True, True, "nan"),
    (False, "train", False, False, "zeros"),  # need_weights=False: through SDPA, zeros ...
    (True, "train", False, False, "zeros"),
    (True, "eval", False, False, "zeros"),
    (False, "eval", True, False, "zeros"),  # (no biases: the fast path is closed)
    (True, "eval", True, False, "nan"),  # ... except the fast path: eval, no_grad, biases
]


@pytest.mark.parametrize(("bias", "mode", "no_grad", "need_weights", "expected"), NO_KEY_CASES)
def test_a_query_with_no_key_in_nn_multihead_attention_as_lesson_09_states(
    bias, mode, no_grad, need_weights, expected
):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    X, W, real, mha = no_key_case(torch, bias)
    out, _ = multi_head_attention(X, X, **W, n_heads=2, causal=True, key_padding_mask=real)
    assert np.all(out[0, 0] == 0)
    mha.train(mode == "train")
    hidden = torch.from_numpy(~np.tri(3, dtype=bool))
    x = torch.from_numpy(X)
    with torch.no_grad() if no_grad else torch.enable_grad():
        t_out, _ = mha(
            x, x, x, key_padding_mask=torch.from_numpy(~real), attn_mask=hidden, need_weights=need_weights
        )
    t_out = t_out.detach()
    if expected == "nan":
        assert torch.isnan(t_out[0, 0]).all()
    else:
        assert (t_out[0, 0] == 0).all()
    bound = multi_head_error(X, X, W, 2, np.float64).output  # two codes: twice it
    np.testing.assert_allclose(t_out[0, 1:].numpy(), out[0, 1:], rtol=0, atol=2 * bound)  # the other rows


@pytest.mark.parametrize("float_mask", [False, True])
def test_a_query_with_no_key_in_scaled_dot_product_attention_gives_zeros(float_mask):
    """F.scaled_dot_product_attention gives zeros, as attnlib does, for a boolean or a -inf mask."""
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    X, W, real, _ = no_key_case(torch, bias=False)
    out, _ = multi_head_attention(X, X, **W, n_heads=2, causal=True, key_padding_mask=real)
    allowed = np.tri(3, dtype=bool) & real[:, None, None, :]  # (1, 1, 3, 3)
    mask = np.where(allowed, 0.0, -np.inf) if float_mask else allowed
    Q, K, V = (torch.from_numpy(split_heads(X @ W[name], 2)) for name in ("W_q", "W_k", "W_v"))
    heads = torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=torch.from_numpy(mask))
    assert (heads[0, :, 0] == 0).all()
    bound = multi_head_error(X, X, W, 2, np.float64).output  # two codes: twice it
    np.testing.assert_allclose(merge_heads(heads.numpy()) @ W["W_o"], out, rtol=0, atol=2 * bound)


def test_heads_attention_is_multi_head_attention_on_checked_arguments():
    rng = np.random.default_rng(8)
    W = weights_for(rng, 6, 6, 3, 2, 2, 5)
    X = rng.normal(size=(2, 4, 6))
    padding = np.array([[True, True, True, False], [True, True, True, True]])
    expected = multi_head_attention(X, X, **W, n_heads=3, key_padding_mask=padding, causal=True)
    checked = multi_head_arguments(X, X, **W, n_heads=3, key_padding_mask=padding)
    # what the BERT encoder builds from weights checked at loading: the padding as a key mask
    built = MultiHeadArguments(3, X, X, W, padding[:, None, None, :])
    for arguments in (checked, built):
        for got, want in zip(heads_attention(arguments, causal=True), expected, strict=True):
            np.testing.assert_array_equal(got, want)
