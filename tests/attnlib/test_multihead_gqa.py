"""Grouped-query and multi-query attention: by definition, and against PyTorch's enable_gqa=True."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import multi_head_error

from attnlib import causal_mask
from attnlib.multihead import (
    MultiHeadArguments,
    heads_attention,
    merge_heads,
    multi_head_arguments,
    multi_head_attention,
    split_heads,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

# (n_heads, n_kv_heads): multi-query (1), grouped (2 of 4, 2 of 6, 3 of 6), and plain multi-head
SHAPES = [(1, 1), (2, 1), (4, 1), (4, 2), (6, 2), (6, 3), (4, 4)]


def gqa_weights(rng, d_model, n_heads, n_kv_heads, d_k, d_v, d_out, dtype=np.float64):
    shapes = {"W_q": (d_model, n_heads * d_k), "W_k": (d_model, n_kv_heads * d_k)}
    shapes |= {"W_v": (d_model, n_kv_heads * d_v), "W_o": (n_heads * d_v, d_out)}
    return {
        name: (rng.normal(size=shape) / np.sqrt(shape[0])).astype(dtype) for name, shape in shapes.items()
    }


def repeat_kv_columns(W, n_heads, n_kv_heads):
    """The definition: query head h gets a copy of kv head h // r's columns, r = n_heads / n_kv_heads."""
    group = n_heads // n_kv_heads
    full = dict(W)
    for name in ("W_k", "W_v"):
        d = W[name].shape[1] // n_kv_heads
        full[name] = np.concatenate(
            [W[name][:, (h // group) * d : (h // group + 1) * d] for h in range(n_heads)], axis=1
        )
    return full


@pytest.mark.parametrize(("n_heads", "n_kv_heads"), SHAPES)
@pytest.mark.parametrize("kind", ["none", "causal", "window", "padding"])
def test_equals_multi_head_with_the_kv_heads_repeated(n_heads, n_kv_heads, kind):
    rng = np.random.default_rng(10 * n_heads + n_kv_heads)
    d_model, d_k, d_v, d_out, n = 8, 3, 2, 5, 7
    W = gqa_weights(rng, d_model, n_heads, n_kv_heads, d_k, d_v, d_out)
    X = rng.normal(size=(2, n, d_model))
    kwargs = {
        "none": {},
        "causal": {"causal": True},
        "window": {"mask": causal_mask(n, window=3, sinks=1)},
        "padding": {"key_padding_mask": np.array([[True] * n, [True] * (n - 2) + [False] * 2])},
    }[kind]
    out, weights = multi_head_attention(X, X, **W, n_heads=n_heads, n_kv_heads=n_kv_heads, **kwargs)
    full = repeat_kv_columns(W, n_heads, n_kv_heads)
    expected_out, expected_weights = multi_head_attention(X, X, **full, n_heads=n_heads, **kwargs)
    assert out.shape == (2, n, d_out) and weights.shape == (2, n_heads, n, n)
    bound = multi_head_error(X, X, W, n_heads, np.float64, n_kv_heads=n_kv_heads)  # two codes: twice it
    np.testing.assert_allclose(out, expected_out, rtol=0, atol=2 * bound.output)
    np.testing.assert_allclose(weights, expected_weights, rtol=0, atol=2 * bound.weights)


def test_query_heads_of_one_group_share_keys_and_values():
    rng = np.random.default_rng(3)
    W = gqa_weights(rng, 6, 4, 2, 3, 3, 6)
    W["W_q"][:, 3:6] = W["W_q"][:, 0:3]  # query heads 0 and 1 ask the same question
    W["W_q"][:, 6:9] = W["W_q"][:, 0:3]  # and so does head 2, which reads the other kv head
    X = rng.normal(size=(5, 6))
    _, weights = multi_head_attention(X, X, **W, n_heads=4, n_kv_heads=2)
    np.testing.assert_array_equal(weights[0], weights[1])  # heads 0, 1 both read kv head 0 = 0 // 2, 1 // 2
    assert not np.allclose(weights[0], weights[2])  # head 2 reads kv head 1


def test_none_is_plain_multi_head_and_n_kv_heads_equal_to_n_heads_too():
    rng = np.random.default_rng(4)
    W = gqa_weights(rng, 6, 3, 3, 2, 2, 6)
    X = rng.normal(size=(4, 6))
    plain = multi_head_attention(X, X, **W, n_heads=3)
    for kv in (None, 3):
        for got, want in zip(multi_head_attention(X, X, **W, n_heads=3, n_kv_heads=kv), plain, strict=True):
            np.testing.assert_array_equal(got, want)


def test_cross_attention_with_grouped_heads():
    rng = np.random.default_rng(5)
    X_q, X_kv = rng.normal(size=(3, 4)), rng.normal(size=(6, 5))
    W = {"W_q": rng.normal(size=(4, 8)), "W_k": rng.normal(size=(5, 4)), "W_v": rng.normal(size=(5, 2))}
    W["W_o"] = rng.normal(size=(4, 4))  # n_heads=4 heads of d_v=1
    out, weights = multi_head_attention(X_q, X_kv, **W, n_heads=4, n_kv_heads=2)
    expected = multi_head_attention(X_q, X_kv, **repeat_kv_columns(W, 4, 2), n_heads=4)
    bound = multi_head_error(X_q, X_kv, W, 4, np.float64, n_kv_heads=2)  # two codes: twice it
    np.testing.assert_allclose(out, expected[0], rtol=0, atol=2 * bound.output)
    assert weights.shape == (4, 3, 6)


def test_heads_attention_reads_n_kv_heads_from_the_checked_arguments():
    rng = np.random.default_rng(6)
    W = gqa_weights(rng, 6, 4, 2, 2, 2, 6)
    X = rng.normal(size=(5, 6))
    checked = multi_head_arguments(X, X, **W, n_heads=4, n_kv_heads=2)
    assert checked.n_kv_heads == 2
    expected = multi_head_attention(X, X, **W, n_heads=4, n_kv_heads=2, causal=True)
    built = MultiHeadArguments(4, X, X, W, None, 2)
    for arguments in (checked, built):
        for got, want in zip(heads_attention(arguments, causal=True), expected, strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("n_heads", "n_kv_heads"), SHAPES)
@pytest.mark.parametrize("kind", ["none", "causal", "window-sinks"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_matches_pytorch_enable_gqa(n_heads, n_kv_heads, kind, dtype):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    F = torch.nn.functional
    rng = np.random.default_rng(100 * n_heads + n_kv_heads)
    d_model, d_k, d_v, n = 8, 4, 3, 9
    W = gqa_weights(rng, d_model, n_heads, n_kv_heads, d_k, d_v, d_model, dtype)
    X = rng.normal(size=(2, n, d_model)).astype(dtype)
    ours, theirs = {}, {}
    if kind == "causal":
        ours["causal"] = theirs["is_causal"] = True
    elif kind == "window-sinks":
        mask = causal_mask(n, window=3, sinks=2)
        ours["mask"], theirs["attn_mask"] = mask, torch.from_numpy(mask)
    out, _ = multi_head_attention(X, X, **W, n_heads=n_heads, n_kv_heads=n_kv_heads, **ours)

    Q = torch.from_numpy(np.ascontiguousarray(split_heads(X @ W["W_q"], n_heads)))  # (2, n_heads, n, d_k)
    K = torch.from_numpy(
        np.ascontiguousarray(split_heads(X @ W["W_k"], n_kv_heads))
    )  # (2, n_kv_heads, n, d_k)
    V = torch.from_numpy(np.ascontiguousarray(split_heads(X @ W["W_v"], n_kv_heads)))
    with torch.no_grad():
        heads = F.scaled_dot_product_attention(Q, K, V, enable_gqa=True, **theirs).numpy()
    expected = merge_heads(heads) @ W["W_o"]
    bound = multi_head_error(X, X, W, n_heads, dtype, n_kv_heads=n_kv_heads)  # two codes: twice it
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=0, atol=2 * bound.output)


def base_arguments():
    args = {"X_q": np.ones((5, 8)), "X_kv": np.ones((5, 8)), "n_heads": 4, "n_kv_heads": 2}
    args |= {"W_q": np.ones((8, 8)), "W_k": np.ones((8, 4)), "W_v": np.ones((8, 4)), "W_o": np.ones((8, 8))}
    return args


def test_base_arguments_are_good():
    assert multi_head_attention(**base_arguments())[0].shape == (5, 8)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"n_kv_heads": 3}, ValueError, r"n_kv_heads=3 does not divide n_heads=4"),
        ({"n_kv_heads": 0}, ValueError, r"n_kv_heads must be at least 1, got 0"),
        ({"n_kv_heads": 2.0}, TypeError, r"n_kv_heads must be a whole number, got 2\.0"),
        ({"n_kv_heads": True}, TypeError, r"n_kv_heads must be a whole number, got True"),
        ({"n_kv_heads": 8, "n_heads": 4}, ValueError, r"n_kv_heads=8 does not divide n_heads=4"),
        (
            {"W_k": np.ones((8, 8))},
            ValueError,
            r"W_q and W_k must give the same d_k per head: W_q has shape \(8, 8\) \(n_heads=4 heads of "
            r"d_k=2\), W_k has shape \(8, 8\) \(n_kv_heads=2 heads of 4\)",
        ),
        (
            {"W_k": np.ones((8, 5))},
            ValueError,
            r"W_k has 5 columns, which do not divide into n_kv_heads=2 equal heads \(shape \(8, 5\)\)",
        ),
        (
            {"W_v": np.ones((8, 3))},
            ValueError,
            r"W_v has 3 columns, which do not divide into n_kv_heads=2 equal heads \(shape \(8, 3\)\)",
        ),
        (
            {"W_v": np.ones((8, 8))},
            ValueError,
            r"W_o must have one row per column of the concatenated heads: W_v has shape \(8, 8\) "
            r"\(d_v=4, n_heads·d_v = 16\), W_o has shape \(8, 8\)",
        ),
        (
            {"n_kv_heads": None},
            ValueError,
            r"W_q and W_k must give the same d_k per head: .* \(n_heads=4 heads of 1\)",
        ),
    ],
)
def test_bad_arguments_are_named(change, error, message):
    with pytest.raises(error, match=message):
        multi_head_attention(**(base_arguments() | change))
