"""attnlib.counting at scale: the memory and block formulas agree with what is measured."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from attnlib import causal_mask, scaled_dot_product_attention
from attnlib.counting import peak_bytes, tile_counts, tiled_bytes, weights_bytes
from attnlib.efficient import tile_schedule, tiled_attention


def test_weights_bytes_is_the_n_squared_wall():
    assert weights_bytes(32_768, 32_768) == 4 * 2**30  # 4 GiB per head in float32
    assert weights_bytes(3, 5, batch_heads=2, itemsize=8) == 3 * 5 * 2 * 8
    with pytest.raises(ValueError, match="n_q"):
        weights_bytes(0, 4)
    with pytest.raises(TypeError, match="itemsize"):
        weights_bytes(4, 4, itemsize=4.0)


@pytest.mark.parametrize(
    ("n_q", "n_k", "block_q", "block_k"),
    [(8, 8, 2, 2), (5, 7, 3, 2), (7, 5, 2, 3), (1, 9, 4, 4), (13, 13, 13, 13), (10, 3, 4, 1), (9, 9, 20, 2)],
)
@pytest.mark.parametrize("causal", [False, True])
def test_tile_counts_match_the_schedule_and_the_mask(n_q, n_k, block_q, block_k, causal):
    counts = tile_counts(n_q, n_k, block_q=block_q, block_k=block_k, causal=causal)
    schedule = tile_schedule(n_q, n_k, block_q=block_q, block_k=block_k, causal=causal)
    computed = [(b.start, b.stop, j0, j1) for b in schedule for j0, j1 in b.key_blocks]
    assert counts.computed == len(computed)
    assert counts.scores_computed == sum((i1 - i0) * (j1 - j0) for i0, i1, j0, j1 in computed)
    assert counts.blocks == math.ceil(n_q / block_q) * math.ceil(n_k / block_k)
    # brute force: a block is needed exactly when some query of it may see some key of it
    allowed = causal_mask(n_q, n_k) if causal else np.ones((n_q, n_k), dtype=bool)
    needed = [
        (i0, j0)
        for i0 in range(0, n_q, block_q)
        for j0 in range(0, n_k, block_k)
        if allowed[i0 : i0 + block_q, j0 : j0 + block_k].any()
    ]
    assert counts.computed == len(needed)
    assert counts.skipped == counts.blocks - len(needed)


def test_causal_square_blocks_compute_a_triangle():
    for t in (1, 2, 5, 16):
        counts = tile_counts(64 * t, 64 * t, block_q=64, block_k=64, causal=True)
        assert (counts.computed, counts.skipped) == (t * (t + 1) // 2, t * (t - 1) // 2)


@pytest.mark.parametrize(
    ("n", "d", "block_q", "block_k", "batch_heads", "dtype"),
    [
        (2048, 16, 64, 64, 1, np.float64),
        (1024, 64, 256, 512, 8, np.float32),
        (300, 8, 32, 16, 3, np.float64),
    ],
)
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_bytes_is_what_tracemalloc_measures(n, d, block_q, block_k, batch_heads, dtype, causal):
    rng = np.random.default_rng(n)
    Q, K, V = (rng.standard_normal((batch_heads, n, d)).astype(dtype) for _ in range(3))
    blocks = {"block_q": block_q, "block_k": block_k}
    _, measured = peak_bytes(lambda: tiled_attention(Q, K, V, **blocks, causal=causal))
    formula = tiled_bytes(
        n, n, d, d, block_q=block_q, block_k=block_k, batch_heads=batch_heads, itemsize=Q.itemsize
    )
    # the formula counts the arrays; Python's own objects (the schedule's tuples) come on top
    assert formula <= measured <= 1.1 * formula + 256 * 1024


def test_naive_peak_is_several_weight_matrices():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((2, 512, 32)) for _ in range(3))
    _, measured = peak_bytes(lambda: scaled_dot_product_attention(Q, K, V))
    weights = weights_bytes(512, 512, batch_heads=2, itemsize=8)
    assert 2 * weights <= measured <= 8 * weights


def test_peak_bytes_measures_an_allocation_and_returns_the_result():
    result, peak = peak_bytes(lambda: np.ones(1_000_000).sum())
    assert result == 1_000_000.0
    assert 8_000_000 <= peak < 8_100_000
    with pytest.raises(TypeError, match="call"):
        peak_bytes(42)


def test_tile_counts_closed_form_matches_the_schedule_everywhere_small():
    # the closed form against the schedule tiled_attention runs, on every small shape
    for n_q, n_k, block_q, block_k in itertools.product(range(1, 12), range(1, 12), range(1, 6), range(1, 6)):
        schedule = tile_schedule(n_q, n_k, block_q=block_q, block_k=block_k, causal=True)
        computed = [(b.stop - b.start) * (j1 - j0) for b in schedule for j0, j1 in b.key_blocks]
        counts = tile_counts(n_q, n_k, block_q=block_q, block_k=block_k, causal=True)
        assert (counts.computed, counts.scores_computed) == (len(computed), sum(computed)), (
            n_q,
            n_k,
            block_q,
            block_k,
        )


def test_tile_counts_of_huge_sizes_return_at_once():
    # no loop over blocks: 10**200 tokens in blocks of 1 is a triangle of T(T+1)/2 blocks
    t = 10**200
    counts = tile_counts(t, t, block_q=1, block_k=1, causal=True)
    assert (counts.computed, counts.skipped, counts.scores_computed) == (
        t * (t + 1) // 2,
        t * (t - 1) // 2,
        t * (t + 1) // 2,
    )
    wide = tile_counts(t, 3 * t, block_q=7, block_k=5, causal=True)
    assert wide.blocks == -(-t // 7) * -(-3 * t // 5) and wide.skipped > wide.computed
