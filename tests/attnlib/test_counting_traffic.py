"""attnlib.counting's memory traffic: the counted loops equal the formulas and the naive output."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import attention_error

from attnlib import scaled_dot_product_attention
from attnlib.counting import LOOPS, Traffic, counted_hbm_traffic, hbm_traffic, sram_blocks

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize(
    ("n", "d", "sram"), [(64, 8, 256), (100, 16, 1000), (37, 4, 64), (50, 8, 8), (9, 3, 10_000)]
)
def test_counted_traffic_equals_the_formula_and_the_output_the_naive_one(n, d, sram, loop):
    rng = np.random.default_rng(n + d)
    Q, K, V = (rng.normal(size=(n, d)) for _ in range(3))
    output, counted = counted_hbm_traffic(Q, K, V, sram=sram, loop=loop)
    assert counted == hbm_traffic(n, d, sram=sram, loop=loop)
    bound = attention_error(Q, K, V, np.float64, blocks=n).output  # at most a block per key; two codes
    np.testing.assert_allclose(output, scaled_dot_product_attention(Q, K, V)[0], rtol=0, atol=2 * bound)


def test_the_standard_algorithm_moves_theta_nd_plus_n_squared():
    # Dao et al. 2022, Algorithm 0: S and P written once and read once each
    n, d = 1000, 64
    assert hbm_traffic(n, d) == Traffic(3 * n * d + 2 * n * n, 2 * n * n + n * d)


def test_tiled_traffic_grows_like_n_squared_d_squared_over_m():
    # doubling n quadruples the tiled traffic, doubling M about halves it, and it is far below standard
    d, sram = 64, 2**16
    for loop in ("kv-outer", "q-outer"):
        a, b = (hbm_traffic(n, d, sram=sram, loop=loop).total for n in (2**14, 2**15))
        assert 3.9 < b / a < 4.1
        small, large = (hbm_traffic(2**15, d, sram=m, loop=loop).total for m in (2**15, 2**16))
        assert 1.8 < small / large < 2.1
        assert hbm_traffic(2**15, d, sram=sram, loop=loop).total < hbm_traffic(2**15, d).total / 5


def test_blocks_follow_the_paper():
    # Algorithm 1: B_c = ceil(M / 4d), B_r = min(B_c, d); the query-outer loop swaps them
    assert sram_blocks(64, 2**16, "kv-outer") == (64, 256)
    assert sram_blocks(64, 2**16, "q-outer") == (256, 64)
    assert sram_blocks(64, 1000, "kv-outer") == (4, 4)


def test_bad_input_names_the_argument():
    Q = np.ones((4, 2))
    with pytest.raises(ValueError, match="loop"):
        hbm_traffic(4, 2, sram=8, loop="sideways")
    with pytest.raises(ValueError, match="sram"):
        hbm_traffic(4, 2, loop="q-outer")
    with pytest.raises(ValueError, match="sram"):
        sram_blocks(64, 10, "q-outer")
    with pytest.raises(ValueError, match=r"\(n, d\)"):
        counted_hbm_traffic(Q, np.ones((5, 2)), Q)
    with pytest.raises(ValueError, match="n must"):
        hbm_traffic(0, 2)
