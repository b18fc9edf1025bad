"""attnlib.efficient: the online softmax and tiled attention equal the naive computation."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import attention_error
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import causal_mask, scaled_dot_product_attention, softmax
from attnlib.counting import peak_bytes
from attnlib.efficient import online_softmax, online_softmax_weights, tile_schedule, tiled_attention

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


@st.composite
def attention_cases(draw):
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    n_q, n_k = draw(st.integers(1, 23)), draw(st.integers(1, 23))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    k_batch = draw(st.sampled_from([batch, batch[-1:] if batch else (), (1,) * len(batch)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = draw(st.sampled_from([0.1, 1.0, 10.0]))
    Q = (rng.normal(size=(*batch, n_q, d_k)) * spread).astype(dtype)
    K = (rng.normal(size=(*k_batch, n_k, d_k)) * spread).astype(dtype)
    V = rng.normal(size=(*k_batch, n_k, d_v)).astype(dtype)
    kind = draw(st.sampled_from(["none", "bool", "additive", "bool-row-masked"]))
    mask = None
    if kind != "none":
        mask = rng.random((n_q, n_k)) > 0.3
        if kind == "bool-row-masked":
            mask[rng.integers(n_q)] = False  # one query sees no key
        elif kind == "additive":
            mask = np.where(mask, rng.normal(size=(n_q, n_k)), -np.inf)
    causal = draw(st.booleans())
    blocks = (draw(st.integers(1, 25)), draw(st.integers(1, 25)))
    return Q, K, V, mask, causal, blocks


@settings(max_examples=300, deadline=None)
@given(attention_cases())
def test_tiled_equals_naive(case):
    Q, K, V, mask, causal, (block_q, block_k) = case
    expected = scaled_dot_product_attention(Q, K, V, mask=mask, causal=causal)[0]
    got = tiled_attention(Q, K, V, block_q=block_q, block_k=block_k, mask=mask, causal=causal)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    bound = attention_error(Q, K, V, Q.dtype, mask=mask, blocks=math.ceil(K.shape[-2] / block_k))  # two codes
    np.testing.assert_allclose(got, expected, rtol=0, atol=2 * bound.output)


@pytest.mark.parametrize(("window", "sinks"), [(1, 0), (3, 0), (4, 2), (9, 1), (40, 3)])
@pytest.mark.parametrize(("block_q", "block_k"), [(1, 1), (3, 4), (8, 8), (64, 64)])
def test_tiled_equals_naive_with_a_window_and_sinks(window, sinks, block_q, block_k):
    rng = np.random.default_rng(window + 7 * sinks)
    Q, K, V = rng.normal(size=(2, 29, 4)), rng.normal(size=(2, 29, 4)), rng.normal(size=(2, 29, 3))
    mask = causal_mask(29, window=window, sinks=sinks)
    expected = scaled_dot_product_attention(Q, K, V, mask=mask)[0]
    got = tiled_attention(Q, K, V, block_q=block_q, block_k=block_k, mask=mask)
    bound = attention_error(Q, K, V, np.float64, blocks=math.ceil(29 / block_k)).output  # two codes
    np.testing.assert_allclose(got, expected, rtol=0, atol=2 * bound)
    both = tiled_attention(Q, K, V, block_q=block_q, block_k=block_k, mask=mask, causal=True)
    np.testing.assert_allclose(both, expected, rtol=0, atol=2 * bound)  # the mask is causal already


def test_fully_masked_rows_give_zeros_and_single_query():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    mask = np.ones((4, 6), dtype=bool)
    mask[1] = False
    out = tiled_attention(Q, K, V, block_q=3, block_k=4, mask=mask)
    np.testing.assert_array_equal(out[1], [0.0, 0.0])
    single = tiled_attention(Q[0], K, V, block_k=4, scale=0.3)
    bound = attention_error(Q[:1], K, V, np.float64, scale=0.3, blocks=2).output  # two codes
    np.testing.assert_allclose(
        single, scaled_dot_product_attention(Q[0], K, V, scale=0.3)[0], rtol=0, atol=2 * bound
    )
    assert single.shape == (2,)


def test_causal_schedule_skips_blocks_above_the_diagonal():
    full = tile_schedule(8, 8, block_q=2, block_k=2)
    causal = tile_schedule(8, 8, block_q=2, block_k=2, causal=True)
    assert sum(len(b.key_blocks) for b in full) == 16
    assert [len(b.key_blocks) for b in causal] == [1, 2, 3, 4]  # 10 of the 16 blocks
    uneven = tile_schedule(5, 7, block_q=3, block_k=2, causal=True)
    assert [(b.start, b.stop, b.key_blocks) for b in uneven] == [
        (0, 3, ((0, 2), (2, 4))),
        (3, 5, ((0, 2), (2, 4), (4, 6))),
    ]
    for block in uneven:  # every key a query of the block may see is in one of its key blocks
        seen = {j for j0, j1 in block.key_blocks for j in range(j0, j1)}
        assert set(range(min(block.stop, 7))) <= seen


def test_windowed_schedule_keeps_the_band_and_the_sinks():
    band = tile_schedule(8, 8, block_q=2, block_k=2, causal=True, visible=causal_mask(8, window=2))
    assert [b.key_blocks for b in band] == [((0, 2),), ((0, 2), (2, 4)), ((2, 4), (4, 6)), ((4, 6), (6, 8))]
    with_sink = tile_schedule(8, 8, block_q=2, block_k=2, visible=causal_mask(8, window=2, sinks=1))
    assert [len(b.key_blocks) for b in with_sink] == [1, 2, 3, 3]  # the band and the first column
    long = tile_schedule(
        4096, 4096, block_q=512, block_k=512, causal=True, visible=causal_mask(4096, window=512)
    )
    assert (
        sum(len(b.key_blocks) for b in long) == 15
    )  # of the 36 causal blocks: the diagonal and the one before


@pytest.mark.parametrize(("window", "sinks"), [(1, 0), (3, 2), (5, 0), (6, 1)])
def test_windowed_schedule_keeps_every_visible_key(window, sinks):
    mask = causal_mask(23, 19, window=window, sinks=sinks)
    for block in tile_schedule(23, 19, block_q=4, block_k=3, visible=mask):
        computed = np.zeros(19, dtype=bool)
        for j0, j1 in block.key_blocks:
            computed[j0:j1] = True
            assert mask[block.start : block.stop, j0:j1].any()  # no block computed in vain
        assert not (mask[block.start : block.stop] & ~computed).any()  # no visible key left out


@pytest.mark.parametrize("visible", [np.ones((4, 4)), np.ones((4, 5), dtype=bool), [[True]]])
def test_schedule_names_a_bad_visible(visible):
    with pytest.raises(ValueError, match=r"visible must be a boolean array of shape \(n_q, n_k\) = \(4, 4\)"):
        tile_schedule(4, 4, visible=visible)


def test_tiled_skips_by_a_batched_or_additive_mask():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 17, 4)), rng.normal(size=(3, 17, 4)), rng.normal(size=(3, 17, 2))
    masks = np.stack([causal_mask(17, window=w, sinks=s) for w, s in [(2, 0), (3, 1), (17, 0)]])
    for mask in (masks, np.where(masks, 0.0, -np.inf), masks[1][None, :5, :].repeat(3, 0)):
        q = Q[:, : mask.shape[-2]]
        expected = scaled_dot_product_attention(q, K, V, mask=mask)[0]
        bound = attention_error(q, K, V, np.float64, mask=mask, blocks=6).output  # 17 keys by 3; two codes
        np.testing.assert_allclose(
            tiled_attention(q, K, V, block_q=2, block_k=3, mask=mask), expected, rtol=0, atol=2 * bound
        )


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"block_q": 0}, ValueError, "block_q"),
        ({"block_k": 2.5}, TypeError, "block_k"),
        ({"causal": "yes"}, TypeError, "causal"),
        ({"mask": np.ones((3, 3))}, ValueError, "mask"),
        ({"scale": float("nan")}, ValueError, "scale"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, words):
    Q = np.ones((4, 2))
    with pytest.raises(error, match=words):
        tiled_attention(Q, Q, Q, **kwargs)


@pytest.mark.parametrize(
    ("Q", "K", "V"),
    [
        (np.ones((3, 2)), np.ones((4, 3)), np.ones((4, 2))),  # d_k mismatch
        (np.ones((3, 2)), np.ones((4, 2)), np.ones((5, 2))),  # n_k mismatch
        (np.full((3, 2), np.nan), np.ones((4, 2)), np.ones((4, 2))),  # NaN
        (np.full((3, 2), 1e200), np.full((4, 2), 1e200), np.ones((4, 2))),  # overflow
    ],
)
def test_same_errors_as_the_naive_version(Q, K, V):
    with pytest.raises(ValueError) as naive:
        scaled_dot_product_attention(Q, K, V)
    with pytest.raises(ValueError) as tiled:
        tiled_attention(Q, K, V, block_q=2, block_k=2)
    first_word = str(naive.value).split()[0]
    assert first_word in str(tiled.value)


def test_peak_memory_stays_near_one_block():
    n, d, block = 2048, 16, 64
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(n, d)) for _ in range(3))
    _, tiled_peak = peak_bytes(lambda: tiled_attention(Q, K, V, block_q=block, block_k=block, causal=True))
    _, naive_peak = peak_bytes(lambda: scaled_dot_product_attention(Q, K, V, causal=True))
    vectors = (n * d + n * d + n * (d + 1)) * 8  # output, Q · scale, [V | 1]: n · d, not n²
    assert tiled_peak <= vectors + 4 * block * block * 8 + 256 * 1024
    assert naive_peak >= n * n * 8  # the weights alone: 32 MiB
    assert tiled_peak < naive_peak / 20


@pytest.mark.parametrize("block_size", [1, 3, 4, 10])
def test_online_softmax_equals_softmax(block_size):
    rng = np.random.default_rng(block_size)
    s = rng.normal(size=10) * 8
    s[[2, 7]] = -np.inf
    V = rng.normal(size=(10, 3))
    np.testing.assert_allclose(online_softmax_weights(s, block_size), softmax(s), rtol=1e-14, atol=1e-15)
    states = list(online_softmax(s, block_size, V))
    assert [st.stop for st in states] == [min(b + block_size, 10) for b in range(0, 10, block_size)]
    last = states[-1]
    assert last.maximum == s.max()
    np.testing.assert_allclose(last.total, np.exp(s - s.max()).sum(), rtol=1e-14)
    np.testing.assert_allclose(last.output, softmax(s) @ V, rtol=1e-12, atol=1e-14)
    for state in states:  # each partial output is the attention over the keys read so far
        seen = s[: state.stop]
        np.testing.assert_allclose(state.output, softmax(seen) @ V[: state.stop], rtol=1e-12, atol=1e-14)


def test_online_softmax_rescales_when_the_maximum_grows():
    states = list(online_softmax([1.0, 0.0, 5.0, 2.0], 2))
    assert states[1].rescale == pytest.approx(np.exp(1.0 - 5.0))
    assert list(online_softmax([5.0, 0.0, 1.0, 2.0], 2))[1].rescale == 1.0


def test_online_softmax_all_masked_and_bad_input():
    np.testing.assert_array_equal(online_softmax_weights([-np.inf, -np.inf], 1), [0.0, 0.0])
    with pytest.raises(ValueError, match="scores"):
        list(online_softmax(np.ones((2, 2)), 1))
    with pytest.raises(ValueError, match="values"):
        list(online_softmax(np.ones(3), 1, np.ones((2, 2))))
    with pytest.raises(ValueError, match="block_size"):
        list(online_softmax(np.ones(3), 0))
    with pytest.raises(ValueError, match="scores"):
        list(online_softmax([1.0, np.nan], 1))


def test_tiled_matches_pytorch():
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    rng = np.random.default_rng(4)
    for causal in (False, True):
        Q, K, V = (rng.normal(size=(2, 4, 37, 8)).astype(np.float32) for _ in range(3))
        expected = torch.nn.functional.scaled_dot_product_attention(
            *(torch.from_numpy(a) for a in (Q, K, V)), is_causal=causal
        ).numpy()
        got = tiled_attention(Q, K, V, block_q=16, block_k=8, causal=causal)
        bound = attention_error(Q, K, V, np.float32, blocks=5)  # 37 keys in blocks of 8; two codes
        np.testing.assert_allclose(got, expected, rtol=0, atol=2 * bound.output)


def test_scores_near_the_float_range_take_the_checked_path():
    Q = np.eye(8) * 3e153  # q·k up to 9e306: finite, but d_k · max|Q| · max|K| is not far from overflow
    V = np.arange(16.0).reshape(8, 2)
    expected = scaled_dot_product_attention(Q, Q, V)[0]
    np.testing.assert_array_equal(tiled_attention(Q, Q, V, block_q=3, block_k=5), expected)


def test_tiled_attention_broadcasts_batch_dimensions_that_only_v_has():
    # V with batch dimensions beyond Q's and K's: the naive version broadcasts them, and so must this
    rng = np.random.default_rng(20)
    Q, K = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    V = rng.normal(size=(3, 2, 6, 5))
    expected = scaled_dot_product_attention(Q, K, V, causal=True)[0]
    got = tiled_attention(Q, K, V, block_q=4, block_k=4, causal=True)
    assert got.shape == expected.shape == (3, 2, 6, 5)
    bound = attention_error(Q, K, V, np.float64, blocks=2).output  # two codes: twice it
    np.testing.assert_allclose(got, expected, rtol=0, atol=2 * bound)


def test_online_softmax_weights_of_an_empty_row_is_empty():
    got = online_softmax_weights([], 2)
    assert got.shape == (0,) and got.shape == softmax(np.array([])).shape


def test_a_spread_beyond_the_float_range_gives_no_overflow_warning():
    # exp(-1e308 − 1e308) = exp(-inf) = 0, silently, as in the naive softmax
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(
            online_softmax_weights([1e308, -1e308], 2), softmax(np.array([1e308, -1e308]))
        )
        Q, K, V = np.array([[1e308, 0.0]]), np.array([[1.0, 0.0], [-1.0, 0.0]]), np.eye(2)
        expected = scaled_dot_product_attention(Q, K, V, scale=1.0)[0]
        np.testing.assert_array_equal(tiled_attention(Q, K, V, scale=1.0), expected)
