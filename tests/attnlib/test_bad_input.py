"""Bad input raises ValueError or TypeError naming the argument and what is wrong with it."""

import warnings

import numpy as np
import pytest
from conftest import gamma

from attnlib import (
    apply_mask,
    attention_steps,
    causal_mask,
    default_scale,
    project,
    qkv,
    raw_scores,
    scale_scores,
    scaled_dot_product_attention,
    softmax,
    weighted_sum,
)
from attnlib.counting import counted_attention, operation_counts

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

Q = np.ones((3, 4))
K = np.ones((5, 4))
V = np.ones((5, 2))


def attn(q=Q, k=K, v=V, **kwargs):
    return scaled_dot_product_attention(q, k, v, **kwargs)


def with_nan(shape, index):
    a = np.ones(shape)
    a[index] = np.nan
    return a


def with_value(shape, index, value):
    a = np.ones(shape)
    a[index] = value
    return a


# (id, call, exception, regex that the message must match)
CASES = [
    # shapes
    (
        "Q-K-d_k-mismatch",
        lambda: attn(k=np.ones((5, 3))),
        ValueError,
        r"d_k: Q has shape \(3, 4\) \(d_k=4\), K has shape \(5, 3\) \(d_k=3\)",
    ),
    (
        "single-query-d_k-mismatch",
        lambda: attn(q=np.ones(3)),
        ValueError,
        r"d_k: Q has shape \(3,\) \(d_k=3\), K has shape \(5, 4\)",
    ),
    (
        "K-V-n_k-mismatch",
        lambda: attn(v=np.ones((6, 2))),
        ValueError,
        r"n_k: K has shape \(5, 4\) \(n_k=5\), V has shape \(6, 2\) \(n_k=6\)",
    ),
    (
        "Q-K-batch-no-broadcast",
        lambda: attn(q=np.ones((2, 3, 4)), k=np.ones((3, 5, 4)), v=np.ones((3, 5, 2))),
        ValueError,
        r"batch dimensions .* do not broadcast: Q \(2, 3, 4\), K \(3, 5, 4\)",
    ),
    (
        "V-batch-no-broadcast",
        lambda: attn(q=np.ones((2, 3, 4)), k=np.ones((2, 5, 4)), v=np.ones((3, 5, 2))),
        ValueError,
        r"do not broadcast: Q \(2, 3, 4\), K \(2, 5, 4\), V \(3, 5, 2\)",
    ),
    (
        "K-1-D",
        lambda: attn(k=np.ones(4)),
        ValueError,
        r"K must have shape \(\.\.\., n_k, d_k\), got shape \(4,\)",
    ),
    (
        "V-1-D",
        lambda: attn(v=np.ones(5)),
        ValueError,
        r"V must have shape \(\.\.\., n_k, d_v\), got shape \(5,\)",
    ),
    (
        "no-keys",
        lambda: attn(k=np.ones((0, 4)), v=np.ones((0, 2))),
        ValueError,
        r"K has no keys \(shape \(0, 4\)\)",
    ),
    (
        "d_k-zero",
        lambda: attn(q=np.ones((3, 0)), k=np.ones((5, 0))),
        ValueError,
        r"d_k is 0 \(Q has shape \(3, 0\)\)",
    ),
    ("Q-0-dimensional", lambda: attn(q=np.float64(2.0)), ValueError, r"Q is a 0-dimensional scalar \(2\.0\)"),
    # masks
    (
        "mask-no-broadcast",
        lambda: attn(mask=np.ones((2, 5), dtype=bool)),
        ValueError,
        r"mask of shape \(2, 5\) does not broadcast to the attention weights' shape \(3, 5\)",
    ),
    (
        "mask-extra-batch",
        lambda: attn(mask=np.ones((2, 3, 5), dtype=bool)),
        ValueError,
        r"mask of shape \(2, 3, 5\) does not broadcast to the attention weights' shape \(3, 5\)",
    ),
    (
        "single-query-mask-no-broadcast",
        lambda: attn(q=np.ones(4), mask=np.ones(4, dtype=bool)),
        ValueError,
        r"mask of shape \(4,\) does not broadcast to the attention weights' shape \(5,\)",
    ),
    (
        "mask-int",
        lambda: attn(mask=np.ones((3, 5), dtype=int)),
        TypeError,
        r"mask must be boolean .* or float .*got dtype int64",
    ),
    (
        "mask-strings",
        lambda: attn(mask=[["yes"] * 5] * 3),
        TypeError,
        r"mask must be boolean .*got dtype <U3",
    ),
    ("mask-ragged", lambda: attn(mask=[[True] * 5, [True] * 4, [True] * 5]), ValueError, r"mask is ragged"),
    (
        "mask-NaN",
        lambda: attn(mask=with_nan((3, 5), (1, 1))),
        ValueError,
        r"mask has NaN entries \(shape \(3, 5\)\)",
    ),
    (
        "mask-plus-inf",
        lambda: attn(mask=with_value((3, 5), (0, 2), np.inf)),
        ValueError,
        r"mask has \+inf entries \(shape \(3, 5\)\)",
    ),
    (
        "mask-too-large-for-float32",
        lambda: attn(*(a.astype(np.float32) for a in (Q, K, V)), mask=np.array([0.0, 1e300, 0.0, 0.0, 0.0])),
        ValueError,
        r"mask has entries too large for float32 \(largest 1e\+300\)",
    ),
    (
        "mask-plus-scores-overflow",
        lambda: attn(
            q=np.full((1, 1), 1e154),
            k=np.full((2, 1), 1e154),
            v=np.ones((2, 1)),
            scale=1.0,
            mask=np.array([1e308, 0.0]),
        ),
        ValueError,
        r"adding the mask to the scores overflows float64",
    ),
    (
        "apply_mask-int-mask",
        lambda: apply_mask(np.zeros((2, 2)), np.eye(2, dtype=int)),
        TypeError,
        r"mask must be boolean .*got dtype int64",
    ),
    (
        "apply_mask-no-broadcast",
        lambda: apply_mask(np.zeros((2, 2)), np.ones(3, dtype=bool)),
        ValueError,
        r"mask of shape \(3,\) does not broadcast to the attention weights' shape \(2, 2\)",
    ),
    # non-finite entries
    (
        "Q-NaN",
        lambda: attn(q=with_nan((3, 4), (1, 2))),
        ValueError,
        r"Q has 1 non-finite entry; the first is NaN at index \(1, 2\) of shape \(3, 4\)",
    ),
    (
        "K-plus-inf",
        lambda: attn(k=with_value((5, 4), (4, 0), np.inf)),
        ValueError,
        r"K has 1 non-finite entry; the first is inf at index \(4, 0\) of shape \(5, 4\)",
    ),
    (
        "V-minus-inf",
        lambda: attn(v=with_value((5, 2), (2, 1), -np.inf)),
        ValueError,
        r"V has 1 non-finite entry; the first is -inf at index \(2, 1\) of shape \(5, 2\)",
    ),
    (
        "Q-two-NaN",
        lambda: attn(q=np.full((3, 4), np.nan)),
        ValueError,
        r"Q has 12 non-finite entries; the first is NaN at index \(0, 0\)",
    ),
    # not real numbers
    (
        "Q-strings",
        lambda: attn(q=[["a", "b", "c", "d"]]),
        TypeError,
        r"Q has dtype <U1, which is not numeric",
    ),
    (
        "K-complex",
        lambda: attn(k=np.ones((5, 4), dtype=complex)),
        TypeError,
        r"K is complex \(dtype complex128\)",
    ),
    ("V-boolean", lambda: attn(v=np.ones((5, 2), dtype=bool)), TypeError, r"V is boolean"),
    ("V-ragged", lambda: attn(v=[[1, 2], [3]] + [[1, 2]] * 3), ValueError, r"V is ragged"),
    ("Q-mixed-types", lambda: attn(q=[[1, 2, 3, None]]), ValueError, r"Q is ragged, mixes types"),
    (
        "K-int-beyond-64-bits",
        lambda: attn(k=[[2**70, 1, 1, 1]] * 5),
        ValueError,
        r"K is ragged, mixes types, or holds integers too large for 64 bits",
    ),
    ("Q-None", lambda: attn(q=None), TypeError, r"Q is None"),
    ("K-None", lambda: attn(k=None), TypeError, r"K is None"),
    ("V-None", lambda: attn(v=None), TypeError, r"V is None"),
    # scale and causal
    ("scale-NaN", lambda: attn(scale=float("nan")), ValueError, r"scale must be a finite number, got nan"),
    ("scale-inf", lambda: attn(scale=np.inf), ValueError, r"scale must be a finite number, got inf"),
    (
        "scale-string",
        lambda: attn(scale="0.5"),
        TypeError,
        r"scale must be a real number such as 0\.5, got '0\.5'",
    ),
    (
        "scale-bool",
        lambda: attn(scale=True),
        TypeError,
        r"scale must be a real number such as 0\.5, got True",
    ),
    (
        "scale-array",
        lambda: attn(scale=np.array([0.5])),
        TypeError,
        r"scale must be a real number .*got array",
    ),
    ("causal-int", lambda: attn(causal=1), TypeError, r"causal must be True or False, got 1"),
    ("causal-string", lambda: attn(causal="yes"), TypeError, r"causal must be True or False, got 'yes'"),
    ("causal-None", lambda: attn(causal=None), TypeError, r"causal must be True or False, got None"),
    # overflow
    (
        "overflow-1e200",
        lambda: attn(q=np.full((3, 4), 1e200), k=np.full((5, 4), -1e200)),
        ValueError,
        r"the raw scores Q Kᵀ overflow float64: the inputs are too large \(largest \|entry\| 1e\+200",
    ),
    (
        "overflow-float32",
        lambda: attn(*(np.full(s, 1e20, dtype=np.float32) for s in ((3, 4), (5, 4), (5, 2)))),
        ValueError,
        r"raw scores Q Kᵀ overflow float32",
    ),
    (
        "overflow-by-scale",
        lambda: attn(q=np.full((3, 4), 1e10), scale=1e300),
        ValueError,
        r"scaling the scores by 1e\+300 overflows float64 \(largest \|score\| 4e\+10\)",
    ),
    (
        "raw_scores-overflow",
        lambda: raw_scores(np.full((1, 2), 1e200), np.full((1, 2), 1e200)),
        ValueError,
        r"the raw scores Q Kᵀ overflow float64",
    ),
    (
        "scale_scores-overflow-to-minus-inf",  # must not pass as a masked (-inf) score
        lambda: scale_scores([[-1e300, 1.0]], 1e10),
        ValueError,
        r"scaling the scores by 10000000000\.0 overflows float64",
    ),
    (
        "scale_scores-overflow",
        lambda: scale_scores([[1e300, 1.0]], 1e10),
        ValueError,
        r"scaling the scores by 10000000000\.0 overflows float64 \(largest \|score\| 1e\+300\)",
    ),
    (
        "scale_scores-minus-inf-non-positive-scale",
        lambda: scale_scores([[-np.inf, 1.0]], 0.0),
        ValueError,
        r"scale must be positive when the scores contain -inf .*got 0\.0",
    ),
    (
        "scale_scores-scale-string",
        lambda: scale_scores([[1.0]], "big"),
        TypeError,
        r"scale must be a real number",
    ),
    (
        "project-overflow",
        lambda: project(np.full((2, 3), 1e200), np.full((3, 2), 1e200)),
        ValueError,
        r"X @ W overflows float64",
    ),
    # softmax
    (
        "softmax-NaN",
        lambda: softmax([1.0, np.nan, 2.0]),
        ValueError,
        r"x has 1 non-finite entry \(only -inf is allowed, to mask\); "
        r"the first is NaN at index \(1,\) of shape \(3,\)",
    ),
    (
        "softmax-plus-inf",
        lambda: softmax([[1.0, np.inf]]),
        ValueError,
        r"x has 1 non-finite entry .*inf at index \(0, 1\)",
    ),
    (
        "softmax-axis-out-of-range",
        lambda: softmax(np.ones((2, 3)), axis=2),
        ValueError,
        r"axis 2 is out of range for x of shape \(2, 3\)",
    ),
    (
        "softmax-axis-negative-out-of-range",
        lambda: softmax(np.ones((2, 3)), axis=-3),
        ValueError,
        r"axis -3 is out of range for x of shape \(2, 3\)",
    ),
    (
        "softmax-axis-float",
        lambda: softmax(np.ones((2, 3)), axis=1.0),
        TypeError,
        r"axis must be an integer, got 1\.0",
    ),
    (
        "softmax-axis-None",
        lambda: softmax(np.ones((2, 3)), axis=None),
        TypeError,
        r"axis must be an integer, got None",
    ),
    ("softmax-0-dimensional", lambda: softmax(1.0), ValueError, r"x is a 0-dimensional scalar"),
    # projection
    (
        "project-W-wrong-rows",
        lambda: project(np.ones((3, 4)), np.ones((5, 2)), name="W_q"),
        ValueError,
        r"W_q has shape \(5, 2\) but X has shape \(3, 4\): W_q needs 4 rows",
    ),
    (
        "project-W-default-name",
        lambda: project(np.ones((3, 4)), np.ones((5, 2))),
        ValueError,
        r"W has shape \(5, 2\) but X has shape \(3, 4\)",
    ),
    (
        "project-W-1-D",
        lambda: project(np.ones((3, 4)), np.ones(4)),
        ValueError,
        r"W must be a matrix of shape \(d_model, d_out\), got shape \(4,\)",
    ),
    (
        "project-W-3-D",
        lambda: project(np.ones((3, 4)), np.ones((1, 4, 2)), name="W_v"),
        ValueError,
        r"W_v must be a matrix .*got shape \(1, 4, 2\)",
    ),
    (
        "project-X-NaN",
        lambda: project(with_nan((3, 4), (0, 0)), np.ones((4, 2))),
        ValueError,
        r"X has 1 non-finite",
    ),
    (
        "qkv-different-d_k",
        lambda: qkv(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2))),
        ValueError,
        r"W_q and W_k must give the same d_k: W_q has shape \(4, 2\), W_k has shape \(4, 3\)",
    ),
    (
        "qkv-W_v-wrong-rows",
        lambda: qkv(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 2)), np.ones((3, 2))),
        ValueError,
        r"W_v has shape \(3, 2\) but X has shape \(3, 4\)",
    ),
    # sizes
    ("default_scale-zero", lambda: default_scale(0), ValueError, r"d_k must be at least 1, got 0"),
    ("default_scale-float", lambda: default_scale(4.0), TypeError, r"d_k must be a whole number, got 4\.0"),
    ("causal_mask-negative", lambda: causal_mask(-1), ValueError, r"n_q must be at least 0, got -1"),
    (
        "causal_mask-n_k-float",
        lambda: causal_mask(2, 2.5),
        TypeError,
        r"n_k must be a whole number, got 2\.5",
    ),
    (
        "causal_mask-window-zero",
        lambda: causal_mask(3, window=0),
        ValueError,
        r"window must be at least 1, got 0",
    ),
    (
        "causal_mask-window-float",
        lambda: causal_mask(3, window=2.0),
        TypeError,
        r"window must be a whole number, got 2\.0",
    ),
    (
        "causal_mask-sinks-negative",
        lambda: causal_mask(3, window=2, sinks=-1),
        ValueError,
        r"sinks must be at least 0, got -1",
    ),
    (
        "causal_mask-sinks-bool",
        lambda: causal_mask(3, window=2, sinks=True),
        TypeError,
        r"sinks must be a whole number, got True",
    ),
    (
        "operation_counts-n_q-zero",
        lambda: operation_counts(0, 1, 1, 1),
        ValueError,
        r"n_q must be at least 1, got 0",
    ),
    (
        "operation_counts-n_k-negative",
        lambda: operation_counts(1, -2, 1, 1),
        ValueError,
        r"n_k must be at least 1, got -2",
    ),
    (
        "operation_counts-d_k-zero",
        lambda: operation_counts(1, 1, 0, 1),
        ValueError,
        r"d_k must be at least 1, got 0",
    ),
    (
        "operation_counts-d_v-zero",
        lambda: operation_counts(1, 1, 1, 0),
        ValueError,
        r"d_v must be at least 1, got 0",
    ),
    (
        "operation_counts-float",
        lambda: operation_counts(1, 1.5, 1, 1),
        TypeError,
        r"n_k must be a whole number, got 1\.5",
    ),
    (
        "operation_counts-bool",
        lambda: operation_counts(True, 1, 1, 1),
        TypeError,
        r"n_q must be a whole number, got True",
    ),
    (
        "counted_attention-batch",
        lambda: counted_attention(np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 2))),
        ValueError,
        r"counted_attention takes matrices only: Q must have shape \(n_q, d_k\), got \(2, 3, 4\)",
    ),
    (
        "counted_attention-n_k-mismatch",
        lambda: counted_attention(Q, K, np.ones((4, 2))),
        ValueError,
        r"K and V must have the same number of keys n_k: K \(5, 4\), V \(4, 2\)",
    ),
    (
        "counted_attention-no-keys",
        lambda: counted_attention(Q, np.ones((0, 4)), np.ones((0, 2))),
        ValueError,
        r"K has no keys",
    ),
    (
        "counted_attention-d_v-zero",
        lambda: counted_attention(Q, K, np.ones((5, 0))),
        ValueError,
        r"V has no value dimensions \(shape \(5, 0\)\)",
    ),
    (
        "counted_attention-no-queries",
        lambda: counted_attention(np.ones((0, 4)), K, V),
        ValueError,
        r"Q has no queries \(shape \(0, 4\)\)",
    ),
    (
        "counted_attention-stable-not-a-flag",
        lambda: counted_attention(Q, K, V, stable="no"),
        TypeError,
        r"stable must be True or False, got 'no'",
    ),
    # beyond the float range: a clear error, never NaN, never OverflowError
    (
        "counted_attention-scores-overflow",
        lambda: counted_attention([[1e200] * 2], [[1e200] * 2] * 2, [[1.0], [2.0]]),
        ValueError,
        r"the raw scores Q Kᵀ overflow float64: .*largest \|entry\| 1e\+200",
    ),
    (
        "counted_attention-unstable-exp-overflow",
        lambda: counted_attention([[30.0] * 2], [[30.0] * 2] * 2, [[1.0], [2.0]], stable=False),
        ValueError,
        r"exp\(1272\.79\) is beyond the float64 range: .*above 709\.78.*stable=True",
    ),
    (
        "counted_attention-unstable-sum-overflow",  # exp(709.5) fits; three of them do not
        lambda: counted_attention([[709.5]], [[1.0]] * 3, [[1.0]] * 3, stable=False),
        ValueError,
        r"the sum of exp\(score\) for query 0 is inf",
    ),
    (
        "counted_attention-unstable-exp-underflow",
        lambda: counted_attention([[-800.0]], [[1.0]] * 2, [[1.0]] * 2, stable=False),
        ValueError,
        r"the sum of exp\(score\) for query 0 is 0\.0",
    ),
    (
        "scale-beyond-float",
        lambda: attn(scale=10**400),
        ValueError,
        r"scale is too large for a float \(an integer of 401 digits\)",
    ),
    (
        "default_scale-beyond-float",
        lambda: default_scale(10**400),
        ValueError,
        r"d_k is too large for a float \(an integer of 401 digits\)",
    ),
    (
        "causal_mask-too-large",
        lambda: causal_mask(2, 10**30),
        ValueError,
        r"a causal mask of n_q=2 by n_k=10{30} is too large to build",
    ),
    (
        "Q-longdouble-beyond-float64",
        lambda: attn(q=np.full((3, 4), np.longdouble(10) ** 400)),
        ValueError,
        r"Q has entries too large for float64",
    ),
    # weighted_sum
    (
        "weighted_sum-n_k-mismatch",
        lambda: weighted_sum(np.full((3, 5), 0.2), np.ones((4, 2))),
        ValueError,
        r"weights and V must have the same number of keys n_k: weights has shape \(3, 5\) \(n_k=5\), "
        r"V has shape \(4, 2\) \(n_k=4\)",
    ),
    (
        "weighted_sum-1-D-weights",
        lambda: weighted_sum(np.full(5, 0.2), V),
        ValueError,
        r"weights must have shape \(\.\.\., n_q, n_k\), got shape \(5,\)",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_clear_error(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning before the error would be a bug too
        with pytest.raises(error, match=message):
            call()


def test_a_tensor_that_requires_grad_is_named():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    tensor = torch.ones((3, 4), requires_grad=True)
    with pytest.raises(
        TypeError, match=r"Q \(Tensor\) cannot be read as a NumPy array .*pass .* Q\.detach\(\)"
    ):
        attn(q=tensor)
    with pytest.raises(TypeError, match=r"mask \(Tensor\) cannot be read as a NumPy array"):
        attn(mask=torch.zeros((3, 5), requires_grad=True))
    out, _ = attn(q=tensor.detach().numpy())
    assert out.shape == (3, 2)


def test_attention_steps_checks_everything_before_computing():
    """Q Kᵀ of these would overflow; the argument errors must come first."""
    huge = np.full((3, 4), 1e200)
    with pytest.raises(TypeError, match=r"causal must be True or False"):
        attention_steps(huge, huge, V[:3], causal="yes")
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2\) does not broadcast"):
        attention_steps(huge, huge, V[:3], mask=np.ones((2, 2), bool))
    with pytest.raises(TypeError, match=r"scale must be a real number"):
        attention_steps(huge, huge, V[:3], scale="1")


def test_attention_steps_checks_like_attention():
    with pytest.raises(ValueError, match=r"K and V must have the same number of keys"):
        attention_steps(Q, K, np.ones((4, 2)))
    with pytest.raises(TypeError, match=r"causal must be True or False"):
        attention_steps(Q, K, V, causal="no")


# Weird but valid: each must compute without any warning and give sensible weights.
WEIRD_BUT_VALID = [
    ("scores-1e308-apart", dict(Q=[[1e154]], K=[[1e154], [-1e154]], V=[[1.0], [2.0]], scale=1.0)),
    (
        "scores-plus-minus-1e4",
        dict(Q=[[100.0, 0.0]], K=[[100.0, 0.0], [-100.0, 0.0]], V=[[1.0], [2.0]], scale=1.0),
    ),
    ("tiny-entries-underflow", dict(Q=np.full((2, 3), 1e-300), K=np.full((4, 3), 1e-300), V=np.ones((4, 2)))),
    ("subnormal-entries", dict(Q=np.full((2, 3), 5e-324), K=np.ones((4, 3)), V=np.ones((4, 2)))),
    (
        "float32-near-max",
        dict(
            Q=np.full((1, 1), 1e19, np.float32),
            K=np.full((2, 1), 1e19, np.float32) * [[1], [-1]],
            V=np.ones((2, 1), np.float32),
            scale=1.0,
        ),
    ),
    (
        "float-mask-minus-1e308",
        dict(Q=[[-1e154]], K=[[1e154], [1.0]], V=[[1.0], [2.0]], scale=1.0, mask=np.array([-1e308, 0.0])),
    ),
    (
        "float32-with-mask-beyond-float32",
        dict(
            Q=np.ones((2, 3), np.float32),
            K=np.ones((2, 3), np.float32),
            V=np.ones((2, 3), np.float32),
            mask=np.array([[-1e300, 0.0]] * 2),
        ),
    ),
    (
        "every-key-masked",
        dict(Q=np.ones((2, 3)), K=np.ones((4, 3)), V=np.ones((4, 2)), mask=np.zeros((2, 4), bool)),
    ),
    (
        "every-key-minus-inf",
        dict(Q=np.ones((2, 3)), K=np.ones((4, 3)), V=np.ones((4, 2)), mask=np.full((2, 4), -np.inf)),
    ),
    (
        "causal-more-queries-than-keys",
        dict(Q=np.ones((5, 3)), K=np.ones((2, 3)), V=np.ones((2, 2)), causal=True),
    ),
    ("no-queries", dict(Q=np.ones((0, 3)), K=np.ones((4, 3)), V=np.ones((4, 2)))),
    ("no-value-dimensions", dict(Q=np.ones((2, 3)), K=np.ones((4, 3)), V=np.ones((4, 0)))),
    ("scale-zero", dict(Q=np.ones((2, 3)), K=np.ones((4, 3)), V=np.ones((4, 2)), scale=0.0)),
    ("scale-negative", dict(Q=np.ones((2, 3)), K=np.ones((4, 3)), V=np.ones((4, 2)), scale=-2.0)),
    (
        "float16",
        dict(Q=np.ones((2, 3), np.float16), K=np.ones((4, 3), np.float16), V=np.ones((4, 2), np.float16)),
    ),
    (
        "uint8",
        dict(Q=np.full((2, 3), 255, np.uint8), K=np.full((4, 3), 255, np.uint8), V=np.ones((4, 2), np.uint8)),
    ),
    ("one-key", dict(Q=np.ones((2, 3)), K=np.ones((1, 3)), V=np.ones((1, 2)))),
    ("nested-lists", dict(Q=[[1, 2]], K=[[1, 0], [0, 1]], V=[[1.5], [2]])),
]


@pytest.mark.parametrize("inputs", [c[1] for c in WEIRD_BUT_VALID], ids=[c[0] for c in WEIRD_BUT_VALID])
def test_weird_but_valid_inputs_give_no_warning(inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        steps = attention_steps(**inputs)
        weights = softmax(steps.masked_scores)
    assert np.isfinite(steps.output).all()
    assert np.all((steps.weights >= 0) & (steps.weights <= 1))
    sums = steps.weights.sum(axis=-1)
    rounding = gamma(2 * steps.weights.shape[-1], steps.weights.dtype)  # normalising, then summing back
    assert np.all((np.abs(sums - 1.0) <= rounding) | (sums == 0.0))
    np.testing.assert_array_equal(weights, steps.weights)
