"""Lesson 16's self-checks: each passes attnlib's own function, says "No answer yet" to None, and
names every mistake of its table when a learner's function makes it (on a small random model of
the same architecture, so that no model file is needed)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

from attention_lessons.l16_real_language_model import analysis, checks
from attnlib.model import llama
from attnlib.positions import rope

CONFIG = llama.LlamaConfig(
    n_layers=1, n_heads=6, n_kv_heads=2, d_head=8, d_model=16, d_mlp=24, vocab_size=40, n_ctx=64,
    rope_base=100000.0, norm_eps=1e-5,
)  # fmt: skip
MODEL = llama.LlamaModel.random(CONFIG, seed=1)
RNG = np.random.default_rng(0)
W = {name.split(".", 1)[1]: value for name, value in MODEL.params.items() if name.startswith("layer0.")}
W["attn_norm"] = RNG.uniform(0.5, 1.5, CONFIG.d_model).astype(np.float32)  # not all ones: a weight to forget
W["mlp_norm"] = RNG.uniform(0.5, 1.5, CONFIG.d_model).astype(np.float32)
X = MODEL.params["embed"][[3, 7, 1, 30, 12]]  # (5, d_model)
N = len(X)


def _heads(x: np.ndarray, matrix: np.ndarray, h: int) -> np.ndarray:
    return (x @ matrix).reshape(N, h, CONFIG.d_head).transpose(1, 0, 2)


Q = _heads(X, W["W_q"], CONFIG.n_heads)
K = llama.rotate(_heads(X, W["W_k"], CONFIG.n_kv_heads), np.arange(N), CONFIG.rope_base)
V = _heads(X, W["W_v"], CONFIG.n_kv_heads)


# --- the learner's functions, right and with each mistake ----------------------------------------


def rms(x, w, eps, *, mean=True, axis=-1, weight="times", root=True, centre=False, std=False, eps_out=False):
    x = x.astype(np.float64)
    if centre:
        x = x - x.mean(-1, keepdims=True)
    square = np.mean(x * x, axis=axis, keepdims=True) if mean else np.sum(x * x, axis=axis, keepdims=True)
    if std:
        square = x.var(-1, keepdims=True)
    y = x / (np.sqrt(square) + eps if eps_out else np.sqrt(square + eps) if root else square + eps)
    return {"times": y * w, "none": y, "one plus": y * (1 + w)}[weight]


def silu(z):
    return z / (1 + np.exp(-z))


def mlp(x, g, u, d, *, combine=lambda g, u: silu(g) * u):
    return combine(x @ g, x @ u) @ d


def gelu(z):
    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))


def rotation(x, positions, base, **change):
    kwargs = {"pairing": "half", "base": base} | change
    return rope(x.astype(np.float64), np.asarray(positions, float) * change.pop("sign", 1), **kwargs)


def causal(n, n_k):
    """The right causal mask: the n queries are the last n of the n_k tokens."""
    return np.arange(n_k) <= np.arange(n_k - n, n_k)[:, None]


def gqa(Q, K, V, mask=None, *, tile=False, scale=None, axis=-1, masked="-inf", first_n=False, use_mask=True):
    group = Q.shape[0] // K.shape[0]
    K, V = (np.tile(M, (group, 1, 1)) if tile else np.repeat(M, group, axis=0) for M in (K, V))
    s = Q @ K.transpose(0, 2, 1) * (1 / np.sqrt(Q.shape[-1]) if scale is None else scale)
    if mask is None or not use_mask:
        mask = np.tril(np.ones(s.shape[-2:], bool)) if first_n else causal(*s.shape[-2:])
    if masked == "zero":
        s = s * mask
    elif masked == "-inf":
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis, keepdims=True))
    weights = e / e.sum(axis, keepdims=True)
    return weights @ V, weights


def block(
    x, w, attn, parts, eps, *, res=(True, True), post=False, parallel=False, mlp_w="mlp_norm", norms=True,
    into_stream=0, reuse_a=False,
):  # fmt: skip
    n = (lambda v, k: parts.rms_norm(v, w[k], eps)) if norms else (lambda v, k: v)
    f = lambda v: parts.swiglu(v, w["W_gate"], w["W_up"], w["W_down"])  # noqa: E731
    if post:
        h = parts.rms_norm(x + attn(x), w["attn_norm"], eps)
        return parts.rms_norm(h + f(h), w["mlp_norm"], eps)
    if into_stream:  # x = norm(x); x = x + attn(x): the norm written into the stream
        x = n(x, "attn_norm")
        x = x + attn(x)
        if into_stream == 2:
            x = n(x, "mlp_norm")
            return x + f(x)
        return x + f(n(x, "mlp_norm"))
    if reuse_a:  # the MLP reads the attention's normalised input
        a = n(x, "attn_norm")
        x = x + attn(a)
        return x + f(a)
    a = attn(n(x, "attn_norm"))
    h = x + a if res[0] else a
    m = f(n(x if parallel else h, mlp_w))
    return h + m if res[1] else m


def _rotate_check(fn, **keep):
    return checks.check_rotate(fn, Q, np.arange(N), CONFIG.rope_base, **keep)


CASES = {
    "rms_norm": (
        lambda fn, **keep: checks.check_rms_norm(fn, X, W["attn_norm"], CONFIG.norm_eps, **keep),
        rms,
        checks.RMS_NORM_MISTAKES,
        [partial(rms, centre=True), partial(rms, weight="none"), partial(rms, weight="one plus"),
         partial(rms, root=False), partial(rms, mean=False), partial(rms, axis=0), partial(rms, std=True),
         partial(rms, eps_out=True)],
    ),
    "swiglu": (
        lambda fn, **keep: checks.check_swiglu(fn, X, W["W_gate"], W["W_up"], W["W_down"], **keep),
        mlp,
        checks.SWIGLU_MISTAKES,
        [partial(mlp, combine=combine) for combine in (
            lambda g, u: g * silu(u), lambda g, u: np.maximum(g, 0) * u, lambda g, u: u / (1 + np.exp(-g)),
            lambda g, u: silu(g), lambda g, u: silu(g) + u,
            lambda g, u: 0.5 * g * (1 + np.vectorize(math.erf)(g / np.sqrt(2))) * u, lambda g, u: gelu(g) * u,
            lambda g, u: silu(g * u))],
    ),
    "rotate": (
        _rotate_check,
        rotation,
        checks.ROTATE_MISTAKES,
        [partial(rotation, pairing="interleaved"), lambda x, p, b: rotation(x, p, 10000.0),
         lambda x, p, b: rotation(x, -np.asarray(p), b), lambda x, p, b: rotation(x, np.asarray(p) + 1, b),
         lambda x, p, b: rotation(x, p, b**0.5), lambda x, p, b: rotation(x, p, b**2),
         lambda x, p, b: rotation(x, np.arange(x.shape[1]), b)],
    ),
    "attention": (
        lambda fn, **keep: checks.check_attention(fn, Q, K, V, **keep),
        gqa,
        checks.ATTENTION_MISTAKES,
        [partial(gqa, tile=True), partial(gqa, masked="no"), partial(gqa, masked="zero"),
         partial(gqa, first_n=True), partial(gqa, use_mask=False), partial(gqa, scale=1.0),
         partial(gqa, scale=1 / CONFIG.d_head), partial(gqa, axis=-2)],
    ),
    "block": (
        lambda fn, **keep: checks.check_block(fn, X, W, CONFIG, **keep),
        block,
        checks.BLOCK_MISTAKES,
        [partial(block, res=(False, True)), partial(block, res=(True, False)), partial(block, post=True),
         partial(block, parallel=True), partial(block, mlp_w="attn_norm"), partial(block, norms=False),
         partial(block, into_stream=1), partial(block, into_stream=2), partial(block, reuse_a=True)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_the_right_function_passes_and_none_is_no_answer_yet(name: str) -> None:
    check, right, _, _ = CASES[name]
    yours = {}
    assert check(right, keep=yours).passed, check(right)
    assert yours == {name: right}  # what the model then runs on
    assert str(check(None)).startswith("✘ No answer yet")


@pytest.mark.parametrize("name", CASES)
def test_every_mistake_of_the_table_is_named(name: str) -> None:
    check, _, table, wrong_functions = CASES[name]
    assert len(wrong_functions) == len(table), "one learner's function per row of the table"
    for mistake, fn in zip(table, wrong_functions, strict=True):
        result = check(fn)
        assert not result.passed and result.message.startswith(mistake.name.format(ex=None)), (
            mistake.name,
            result,
        )


@pytest.mark.parametrize("name", CASES)
def test_a_function_that_fails_says_why(name: str) -> None:
    check = CASES[name][0]

    def raises(*args, **kwargs):
        raise ValueError("shapes (5, 16) and (3, 3) not aligned")

    def returning(value):
        return lambda *args, **kwargs: (value, value) if name == "attention" else value

    assert "raised ValueError: shapes (5, 16)" in check(raises).message
    assert check(lambda *args, **kwargs: None).message.startswith("Nothing returned")
    assert check(returning(np.zeros(3))).message.startswith("Wrong shape")
    assert check(returning("text")).message.startswith("Not an array")
    assert check(3.0).message.startswith("Not a function")


# The mistakes a check of the prompt pass alone cannot see: right for n queries at 0 … n − 1 with
# no mask given, wrong when decoding (one query at a later position), at other positions, or
# with a mask passed in; the model then breaks (lesson 16's answer became 'The-------…').
DECODE_ONLY = {
    "a mask for the first n queries": (
        "attention", partial(gqa, first_n=True), "Your mask assumes the queries are the first n tokens"
    ),
    "the mask given ignored": (
        "attention", partial(gqa, use_mask=False), "You ignored the mask you were given"
    ),
    "positions ignored": (
        "rotate", lambda x, p, b: rotation(x, np.arange(x.shape[1]), b), "You ignored positions"
    ),
    "eps outside the root": ("rms_norm", partial(rms, eps_out=True), "You added eps outside the square root"),
}  # fmt: skip


@pytest.mark.parametrize("mistake", DECODE_ONLY)
def test_a_mistake_the_prompt_pass_hides_is_named(mistake: str) -> None:
    name, wrong, named = DECODE_ONLY[mistake]
    on_prompt = {
        "attention": lambda: (wrong(Q, K, V)[0], llama.grouped_query_attention(Q, K, V)[0]),
        "rotate": lambda: (
            wrong(Q, np.arange(N), CONFIG.rope_base), llama.rotate(Q, np.arange(N), CONFIG.rope_base)
        ),
        "rms_norm": lambda: (wrong(X, W["attn_norm"], 1e-5), llama.rms_norm(X, W["attn_norm"], 1e-5)),
    }[name]()  # fmt: skip
    assert np.allclose(*on_prompt, rtol=checks.RTOL, atol=1e-6), "a prompt-only check would pass it"
    result = CASES[name][0](wrong)
    assert not result.passed and result.message.startswith(named), result


def test_attention_must_return_the_pair() -> None:
    result = checks.check_attention(lambda *args, **kwargs: gqa(*args, **kwargs)[0], Q, K, V)
    assert not result.passed and result.message.startswith("Return the pair (output, weights)")
    swapped = checks.check_attention(lambda *args, **kwargs: gqa(*args, **kwargs)[::-1], Q, K, V)
    assert not swapped.passed and "shape" in swapped.message
    uniform = lambda *args, **kwargs: (gqa(*args, **kwargs)[0], np.ones((6, N, N)) / N)  # noqa: E731
    wrong_weights = checks.check_attention(uniform, Q, K, V)
    assert not wrong_weights.passed and "your weights are not" in wrong_weights.message


def test_a_later_failing_check_withdraws_the_function() -> None:
    yours = {"swiglu": mlp}
    assert checks.check_rms_norm(rms, X, W["attn_norm"], 1e-5, keep=yours).passed
    assert yours == {"swiglu": mlp, "rms_norm": rms}
    assert not checks.check_rms_norm(partial(rms, weight="none"), X, W["attn_norm"], 1e-5, keep=yours).passed
    assert yours == {"swiglu": mlp}  # the model will not run the broken one
    assert checks.check_rms_norm(rms, X, W["attn_norm"], 1e-5, keep=yours).passed
    assert not checks.check_rms_norm(None, X, W["attn_norm"], 1e-5, keep=yours).passed
    assert yours == {"swiglu": mlp}
    assert checks.check_rms_norm(rms, X, W["attn_norm"], 1e-5).passed  # without keep, nothing is kept


def test_the_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="weight"):
        checks.check_rms_norm(rms, X, W["attn_norm"][:3], 1e-5)
    with pytest.raises(ValueError, match="H a multiple of H_kv"):
        checks.check_attention(gqa, Q[:5], K, V)
    with pytest.raises(ValueError, match="missing"):
        checks.check_block(block, X, {"W_q": W["W_q"]}, CONFIG)
    with pytest.raises(ValueError, match="finite"):
        checks.check_swiglu(mlp, X * np.nan, W["W_gate"], W["W_up"], W["W_down"])
    with pytest.raises(ValueError, match="W_gate and W_up"):
        checks.check_swiglu(mlp, X, W["W_gate"], W["W_up"][:3], W["W_down"])
    for bad_eps in (float("nan"), -1.0, 0.0):  # the exercise's ε, not the learner's mistake
        with pytest.raises(ValueError, match="eps must be a finite number"):
            checks.check_rms_norm(rms, X, W["attn_norm"], bad_eps)
    with pytest.raises(TypeError, match="eps must be a real number"):
        checks.check_rms_norm(rms, X, W["attn_norm"], "1e-5")
    with pytest.raises(ValueError, match="base must be a finite number"):
        checks.check_rotate(rotation, Q, np.arange(N), float("inf"))
    with pytest.raises(ValueError, match="mask must be None or a"):
        checks.check_attention(gqa, Q, K, V, mask="causal")
    with pytest.raises(ValueError, match="n ≤ n_k"):
        checks.check_attention(gqa, Q, K[:, :2], V[:, :2])


def test_the_learners_parts_fall_back_to_attnlibs() -> None:
    parts, whose = analysis.learners_parts(rms_norm=rms, swiglu=None)
    assert parts.rms_norm is rms and parts.swiglu is llama.swiglu
    assert whose[:2] == ["rms_norm: yours", "swiglu: attnlib's (yours has not passed its check)"]
    with pytest.raises(TypeError, match="takes"):
        analysis.learners_parts(norm=rms)
    logits = llama.forward(MODEL, [1, 2, 3], parts=analysis.learners_parts(
        rms_norm=rms, swiglu=mlp, rotate=rotation, attention=gqa, block=block)[0])  # fmt: skip
    assert np.allclose(logits, llama.forward(MODEL, [1, 2, 3]), atol=1e-4)


def test_the_measurements() -> None:
    logits = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    assert np.allclose(analysis.next_token_losses(logits, np.array([0, 1])), [np.log(4)])
    assert analysis.smallest_margin(np.array([[1.0, 3.0, 2.5], [0.0, 0.0, 4.0]])) == 0.5
    weights = [np.tril(np.ones((2, 3, 3))) / np.arange(1, 4)[:, None]]
    assert np.allclose(analysis.first_token_weights(weights), [[5 / 12, 5 / 12]])  # (1/2 + 1/3) / 2
    assert analysis.top_heads(np.array([[0.1, 0.9], [0.5, 0.2]]), 2) == [(0, 1), (1, 0)]
    drawn = analysis.random_heads((3, 3), 4, avoid=[(0, 0)], seed=0)
    assert len(set(drawn)) == 4 and (0, 0) not in drawn and drawn == sorted(drawn)
    with pytest.raises(ValueError, match="k must be"):
        analysis.random_heads((2, 2), 4, avoid=[(0, 0)])
    for k in ("3", 2.5, True, 0):
        with pytest.raises(ValueError, match="k must be a whole number"):
            analysis.top_heads(np.ones((2, 2)), k)
    with pytest.raises(ValueError, match="finite"):
        analysis.top_heads(np.array([[np.nan, 1.0]]), 1)
    with pytest.raises(ValueError, match="shape must be"):
        analysis.random_heads([3, 3], 2)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        analysis.random_heads((3, 3), 2, seed=-1)
