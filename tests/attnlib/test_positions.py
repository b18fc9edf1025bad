"""attnlib.positions: sinusoidal encodings and RoPE against independent formulations."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import unit_roundoff
from hypothesis import given, settings
from hypothesis import strategies as st

import attnlib
from attnlib import scaled_dot_product_attention
from attnlib.positions import half_to_interleaved, rope, rope_frequencies, sinusoidal, sinusoidal_shift

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


@pytest.mark.parametrize(("n", "d"), [(1, 1), (4, 2), (7, 5), (50, 16), (128, 63)])
@pytest.mark.parametrize("base", [10000.0, 100.0])
def test_sinusoidal_is_the_papers_formula(n, d, base):
    expected = np.zeros((n, d))
    for p in range(n):
        for i in range(d):
            pair = i - i % 2  # 2i for both members of a pair
            angle = p / base ** (pair / d)
            expected[p, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    np.testing.assert_allclose(sinusoidal(n, d, base=base), expected, rtol=0, atol=1e-12)


def test_sinusoidal_first_rows_known_values():
    PE = sinusoidal(2, 4)
    np.testing.assert_array_equal(PE[0], [0.0, 1.0, 0.0, 1.0])  # position 0: sin 0, cos 0
    np.testing.assert_allclose(PE[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])


def test_sinusoidal_from_a_later_start_is_those_rows():
    np.testing.assert_array_equal(sinusoidal(3, 6, start=5), sinusoidal(8, 6)[5:])
    p = 10**12  # one row at a huge position, computed without the rows before it
    row = sinusoidal(1, 4, start=p)[0]
    np.testing.assert_allclose(
        row, [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)], atol=1e-9
    )


def rope_complex(x: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """RoPE written as complex numbers: each pair times exp(i p θ_j)."""
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    theta = np.array([base ** (-2 * j / d) for j in range(d // 2)])
    z = z * np.exp(1j * positions[..., None] * theta)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


@pytest.mark.parametrize("shape", [(1, 2), (5, 4), (3, 6, 8), (2, 3, 7, 16)])
def test_rope_matches_complex_rotation(shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.normal(size=shape)
    default = np.broadcast_to(np.arange(shape[-2], dtype=float), shape[:-1])
    np.testing.assert_allclose(rope(x), rope_complex(x, default), rtol=0, atol=1e-12)
    pos = rng.uniform(-50, 500, size=shape[:-1])
    np.testing.assert_allclose(rope(x, pos, base=500.0), rope_complex(x, pos, 500.0), rtol=0, atol=1e-10)


def test_rope_frequencies():
    np.testing.assert_allclose(rope_frequencies(6, base=100.0), [1.0, 100 ** (-2 / 6), 100 ** (-4 / 6)])


def test_rope_in_2d_is_one_rotation():
    # d = 2: one pair, θ = 1, so position p rotates by p radians.
    np.testing.assert_allclose(rope([[1.0, 0.0]], [math.pi / 2]), [[0.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(rope([1.0, 0.0], [math.pi]), [-1.0, 0.0], atol=1e-15)


def test_rope_positions_broadcast_and_dtype():
    x = np.ones((2, 3, 4), dtype=np.float32)
    out = rope(x, [0.0, 1.0, 2.0])  # one row of positions for both batch elements
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[1], rope(np.ones((3, 4))).astype(np.float32))  # float64, rounded
    np.testing.assert_array_equal(rope([[2, 3]]), [[2.0, 3.0]])  # integers → float64, position 0


def test_rope_one_position_for_every_vector():
    x = np.random.default_rng(0).normal(size=(3, 4))
    for position in (2.5, np.float32(2.5), np.array(2.5)):
        np.testing.assert_array_equal(rope(x, position), rope(x, [2.5, 2.5, 2.5]))
    np.testing.assert_array_equal(rope(x[0], 2.5), rope(x[:1], [2.5])[0])


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    half=st.integers(1, 8),
    m=st.floats(-1000, 1000),
    n=st.floats(-1000, 1000),
    shift=st.floats(-1000, 1000),
)
def test_rope_score_depends_only_on_the_offset(seed, half, m, n, shift):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 2 * half))
    score = rope(q, [m]) @ rope(k, [n])
    shifted = rope(q, [m + shift]) @ rope(k, [n + shift])
    assert math.isclose(score, shifted, rel_tol=1e-9, abs_tol=1e-9 * (1 + abs(m) + abs(n) + abs(shift)))
    assert math.isclose(np.linalg.norm(rope(q, [m])), np.linalg.norm(q), rel_tol=1e-12)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8), d=st.sampled_from([2, 4, 6]))
def test_attention_is_permutation_equivariant_without_positions(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    perm = rng.permutation(n)
    out, weights = scaled_dot_product_attention(X, X, X)
    out_p, weights_p = scaled_dot_product_attention(X[perm], X[perm], X[perm])
    np.testing.assert_allclose(out_p, out[perm], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights_p, weights[np.ix_(perm, perm)], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("add_positions", ["sinusoidal", "rope"])
def test_positions_break_permutation_equivariance(add_positions):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3, 4))
    perm = np.array([2, 1, 0])  # "dog bites man" → "man bites dog"

    def attend(tokens):
        if add_positions == "sinusoidal":
            H = tokens + sinusoidal(3, 4)
            return scaled_dot_product_attention(H, H, H)[0]
        return scaled_dot_product_attention(rope(tokens), rope(tokens), tokens)[0]

    assert not np.allclose(attend(X[perm]), attend(X)[perm], atol=1e-3)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: rope(np.ones((3, 5))), ValueError, "even"),
        (lambda: rope(np.ones((3, 4)), base=0.0), ValueError, "base"),
        (lambda: rope(np.ones((3, 4)), base=-2), ValueError, "base"),
        (lambda: rope(np.ones((3, 4)), base=float("inf")), ValueError, "base"),
        (lambda: rope(np.ones((3, 4)), base=True), TypeError, "base"),
        (lambda: rope(np.ones((3, 4)), [0.0, float("nan"), 1.0]), ValueError, "positions"),
        (lambda: rope(np.ones((3, 4)), [0.0, float("inf"), 1.0]), ValueError, "positions"),
        (lambda: rope(np.ones((3, 4)), [0.0, 1.0]), ValueError, "positions"),
        (lambda: rope(np.ones((2, 3, 4)), np.zeros((3, 3))), ValueError, "positions"),
        (lambda: rope(np.ones((3, 4)), ["a", "b", "c"]), TypeError, "positions"),
        (lambda: rope(np.ones((2, 3, 4)), [[0, 1, 2], [0, 1]]), ValueError, "positions is ragged"),
        (lambda: rope(np.ones((3, 0))), ValueError, "even and positive"),
        (lambda: rope(np.full((3, 4), np.nan)), ValueError, "x"),
        (lambda: rope(5.0), ValueError, "x"),
        (lambda: sinusoidal(0, 4), ValueError, "n_positions"),
        (lambda: sinusoidal(10**400, 4), ValueError, r"past 2\*\*53"),
        (lambda: sinusoidal(10**8, 10**4), ValueError, "more than this machine can allocate"),
        (lambda: sinusoidal(1, 10**400), ValueError, "about 1e400 float64 entries"),
        (lambda: sinusoidal(1, 4, start=2**53 + 1), ValueError, r"past 2\*\*53"),
        (lambda: sinusoidal(1, 4, start=-1), ValueError, "start"),
        (lambda: sinusoidal(1, 4, start=True), TypeError, "start"),
        (lambda: sinusoidal(4, 2.5), TypeError, "d_model"),
        (lambda: sinusoidal(4, 4, base=0), ValueError, "base"),
        (lambda: rope_frequencies(3), ValueError, "even"),
        (lambda: rope(np.ones((3, 4)), pairing="halves"), ValueError, "pairing"),
        (lambda: rope(np.ones((3, 4)), pairing=None), ValueError, "pairing"),
        (lambda: sinusoidal_shift(1, 5), ValueError, "even d_model"),
        (lambda: sinusoidal_shift("a", 4), TypeError, "k"),
        (lambda: sinusoidal_shift(1e308, 4, base=1e-300), ValueError, "overflow"),
        (lambda: half_to_interleaved(5), ValueError, "even"),
    ],
)
def test_bad_input_is_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


ODD = [
    None, True, 0, 1, -1, 2, 2.5, math.nan, math.inf, -math.inf, 1e308, 1e-320, 5e-324, 10**400, "x",
    [], [[]], [1.0], [[1.0, 2.0]], [[1.0, 2.0], [3.0]], [[1e308, -1e308]], [[1e308, 1e308]],
    np.ones((2, 2)), np.full((2, 2), 3e38, np.float32), np.ones((2, 2), np.float16), np.ones((2, 2), bool),
    np.ones((2, 2), complex), np.array(1.0), np.zeros((0, 2)), np.zeros((2, 0)), np.array([[np.nan, 1.0]]),
    np.ones((2, 2, 2)), np.ones(2), np.ones(3), np.float32(0.5), np.int64(3),
]  # fmt: skip
ODD_CALLS = {
    "sinusoidal_shift": (lambda k, d: sinusoidal_shift(k, d), 2),
    "half_to_interleaved": (lambda d: half_to_interleaved(d), 1),
    "rope(x, positions)": (lambda x, p: rope(x, p), 2),
    "rope(x, base=)": (lambda x, b: rope(x, base=b), 2),
    "rope(positions, base=) far away": (lambda p, b: rope(np.ones((2, 2)), p, base=b), 2),
    "rope_frequencies": (lambda d, b: rope_frequencies(d, base=b), 2),
    "sinusoidal": (lambda n, d: sinusoidal(n, d), 2),
    "sinusoidal(base=)": (lambda b: sinusoidal(300, 512, base=b), 1),
}


@pytest.mark.parametrize("name", ODD_CALLS)
def test_odd_arguments_give_a_finite_answer_or_a_clear_error_from_attnlib(name):
    call, n_args = ODD_CALLS[name]
    package = Path(attnlib.__file__).resolve().parent
    for args in itertools.product(ODD, repeat=n_args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                result = call(*args)
            except (ValueError, TypeError) as exc:
                frame = exc.__traceback__
                while frame.tb_next is not None:
                    frame = frame.tb_next
                where = Path(frame.tb_frame.f_code.co_filename).resolve()
                assert package in where.parents, (
                    f"{name}{args!r}: {type(exc).__name__} raised in {where}: {exc}"
                )
                continue
        assert np.isfinite(result).all(), f"{name}{args!r} gave {result!r}"


def test_overflow_is_named():
    with pytest.raises(ValueError, match="too large to rotate in float32"):
        rope(np.full((1, 2), 3e38, np.float32), [0.7])
    with pytest.raises(ValueError, match="too large to rotate in float64"):
        rope([[1.5e308, 1.5e308]], [0.7])
    with pytest.raises(ValueError, match="angle is infinite"):
        rope(np.ones((1, 4)), [1e308], base=1e-300)
    with pytest.raises(ValueError, match="frequencies base"):
        rope_frequencies(1000, base=1e-320)
    np.testing.assert_allclose(rope([[1e308, 0.0]], [math.pi / 2]), [[0.0, 1e308]], atol=1e300)


@pytest.mark.parametrize(
    ("k", "d", "base"), [(1, 2, 10000.0), (3, 8, 10000.0), (-5, 16, 10000.0), (2.5, 64, 100.0)]
)
def test_a_shift_of_the_sinusoidal_encodings_is_one_fixed_linear_map(k, d, base):
    """PE[p + k] = PE[p] M_k for every p (Vaswani et al., section 3.5), and M_k is a rotation."""
    M = sinusoidal_shift(k, d, base=base)
    p = np.arange(40.0)
    table = lambda positions: np.stack(  # noqa: E731  the paper's formula, written again
        [f(positions[:, None] / base ** (2 * (np.arange(d) // 2) / d))[:, j] for j, f in
         zip(range(d), itertools.cycle([np.sin, np.cos]), strict=False)], axis=1
    )  # fmt: skip
    np.testing.assert_allclose(table(p) @ M, table(p + k), rtol=0, atol=1e-12)
    np.testing.assert_allclose(M.T @ M, np.eye(d), rtol=0, atol=1e-12)  # a rotation: keeps lengths
    off_blocks = M.copy()
    for i in range(0, d, 2):
        off_blocks[i : i + 2, i : i + 2] = 0
    assert not off_blocks.any()  # one 2 x 2 block per pair, nothing between the pairs
    back = sinusoidal_shift(-k, d, base=base)
    np.testing.assert_allclose(M @ back, np.eye(d), rtol=0, atol=1e-12)


def test_the_shift_matrix_is_not_the_identity_nor_any_other_shift():
    M = sinusoidal_shift(1, 8)
    PE = sinusoidal(10, 8)
    assert not np.allclose(PE[:-1], PE[1:])
    assert not np.allclose(PE[:-2] @ M, PE[2:])


def _rope_by_definition(x, positions, pairs, base=10000.0):
    """Rotate the components (pairs[i][0], pairs[i][1]) of each row by position · base**(-2i/d)."""
    out = np.array(x, dtype=np.float64)
    d = out.shape[-1]
    for row, p in enumerate(positions):
        for i, (a, b) in enumerate(pairs):
            angle = p * base ** (-2 * i / d)
            xa, xb = x[row, a], x[row, b]
            out[row, a] = xa * math.cos(angle) - xb * math.sin(angle)
            out[row, b] = xa * math.sin(angle) + xb * math.cos(angle)
    return out


@pytest.mark.parametrize("d", [2, 4, 6, 16])
def test_both_pairings_match_their_definition_and_differ_by_a_permutation(d):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(5, d))
    positions = [0, 1, 4, 7.5, 30]
    interleaved = [(2 * i, 2 * i + 1) for i in range(d // 2)]
    halves = [(i, i + d // 2) for i in range(d // 2)]
    np.testing.assert_allclose(rope(x, positions), _rope_by_definition(x, positions, interleaved), atol=1e-12)
    np.testing.assert_allclose(
        rope(x, positions, pairing="half"), _rope_by_definition(x, positions, halves), atol=1e-12
    )
    order = half_to_interleaved(d)
    assert sorted(order.tolist()) == list(range(d))
    assert [(int(order[2 * i]), int(order[2 * i + 1])) for i in range(d // 2)] == halves
    np.testing.assert_allclose(
        rope(x, positions, pairing="half")[:, order], rope(x[:, order], positions), rtol=0, atol=1e-12
    )
    back = np.argsort(order)
    np.testing.assert_allclose(
        rope(x[:, order], positions)[:, back], rope(x, positions, pairing="half"), atol=1e-12
    )


def test_weights_trained_for_one_pairing_give_other_scores_under_the_other():
    """Same q and k, same positions: the two pairings give different scores (d > 2), unless the
    components are permuted; in 2D there is one pair and they agree."""
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 8))
    interleaved = rope(q, [5]) @ rope(k, [1]).T
    half = rope(q, [5], pairing="half") @ rope(k, [1], pairing="half").T
    assert abs(interleaved - half).max() > 0.1
    order = half_to_interleaved(8)
    permuted = rope(q[order], [5]) @ rope(k[order], [1]).T
    np.testing.assert_allclose(permuted, half, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(rope(q[:2], [5], pairing="half"), rope(q[:2], [5]))


@pytest.mark.parametrize("d", [2, 8, 64])
def test_half_pairing_matches_llamas_rotate_half_code(d):
    """transformers' Llama apply_rotary_pos_emb, with cos and sin built as its rotary embedding does."""
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    llama = pytest.importorskip(
        "transformers.models.llama.modeling_llama", reason="pip install -r requirements-torch.txt"
    )
    rng = np.random.default_rng(d)
    q, k = rng.normal(size=(2, 1, 1, 7, d))  # (batch, heads, n, d)
    positions = np.arange(7.0) + 3
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.from_numpy(positions)[:, None] * inv_freq[None, :]  # (n, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)[None]  # (1, n, d)
    q_t, k_t = llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), emb.cos(), emb.sin())
    # Two codes, each: θ = base**(-2i/d) within (ln(base) + 2)·u relatively (the exponent's rounding,
    # amplified by ln(base), then the power and a division), the angle p·θ one product more; cos
    # and sin within an ulp (2u), then a product and a sum: every rotated component within
    # (|x_1| + |x_2|)·u·((ln(base) + 3)·largest angle + 4), the largest angle max(p)·θ_0 = max(p)
    angle_error = (math.log(10000.0) + 3) * positions.max() + 4
    bound = 2 * unit_roundoff(np.float64) * angle_error * 2 * max(np.abs(q).max(), np.abs(k).max())
    np.testing.assert_allclose(rope(q, positions, pairing="half"), q_t.numpy(), rtol=0, atol=bound)
    np.testing.assert_allclose(rope(k, positions, pairing="half"), k_t.numpy(), rtol=0, atol=bound)
    if d > 2:
        assert not np.allclose(rope(q, positions), q_t.numpy(), atol=1e-3)
