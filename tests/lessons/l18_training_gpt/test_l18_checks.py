"""Lesson 18's self-checks: each passes the learner's function written right (from the formula, not
by calling attnlib), says "No answer yet" to None, names every mistake of its table when a function
written the way a learner would write it makes that mistake, and refuses in one line a function that
raises, returns nothing, the wrong kind, shape or dtype of thing, or takes other arguments. The
wrong functions here are written independently of the checks' own rows."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

from attention_lessons.l18_training_gpt import checks
from attnlib.decoder import LN_EPS

# --- the learner's functions, right -----------------------------------------------------------------------


def batch(ids, batch_size, n_ctx, rng):
    starts = rng.integers(0, len(ids) - n_ctx, size=batch_size)
    inputs = np.stack([ids[s : s + n_ctx] for s in starts])
    targets = np.stack([ids[s + 1 : s + n_ctx + 1] for s in starts])
    return inputs, targets


def cross_entropy(logits, targets):
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    onehot = np.eye(logits.shape[-1])[targets]
    loss = -(log_p * onehot).sum(axis=-1).mean()
    return loss, (np.exp(log_p) - onehot) / targets.size


def layer_norm_backward(x, gain, d_out):
    mu = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + LN_EPS)
    x_hat = (x - mu) / sigma
    g = d_out * gain
    d_x = (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / sigma
    leading = tuple(range(x.ndim - 1))
    return d_x, (d_out * x_hat).sum(axis=leading), d_out.sum(axis=leading)


def adamw_step(param, grad, m, v, step, *, learning_rate, beta1, beta2, eps, weight_decay):
    param = param - learning_rate * weight_decay * param
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad**2
    m_hat = m / (1 - beta1**step)
    v_hat = v / (1 - beta2**step)
    return param - learning_rate * m_hat / (np.sqrt(v_hat) + eps), m, v


def decays(name, array):
    return array.ndim >= 2


def learning_rate(step, *, peak, warmup, total, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    if step >= total:
        return floor
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup)))


def clip(grads, max_norm):
    norm = math.sqrt(sum((g**2).sum() for g in grads.values()))
    scale = min(1.0, max_norm / (norm + 1e-6))
    return {name: g * scale for name, g in grads.items()}, norm


def dropout(x, rate, rng):
    keep = rng.random(x.shape) >= rate
    return x * keep / (1 - rate), keep


def dropout_backward(d_out, keep, rate):
    return d_out * keep / (1 - rate)


# --- with one mistake each, as a learner writes it --------------------------------------------------------


def ce(logits, targets, *, axis=-1, stable=True, total=False, divide=True, onehot=True, sign=1, loss_sign=1,
       log=np.log, rows=False):  # fmt: skip
    z = logits - logits.max(axis=axis, keepdims=True) if stable else logits
    p = np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)
    hot = np.eye(logits.shape[-1])[targets]
    losses = -log((p * hot).sum(axis=-1))
    loss = losses.sum() if total else losses.mean()
    grad = (p - hot if onehot else p) * sign
    count = len(targets) if rows else targets.size
    return loss_sign * loss, grad / count if divide and not total else grad


def ce_log_of_inf(logits, targets):
    """No maximum subtracted, the log-sum-exp written out: exp(1000) is inf, and the loss too."""
    lse = np.log(np.exp(logits).sum(axis=-1))
    picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    p = np.exp(logits - lse[..., None])
    return (lse - picked).mean(), (p - np.eye(logits.shape[-1])[targets]) / targets.size


def ln(x, gain, d_out, *, mean_term=True, var_term=True, eps=LN_EPS, times_gain=True, sum_over="leading"):
    mu = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mu) / sigma
    g = d_out * gain if times_gain else d_out
    d_x = g.copy()
    if mean_term:
        d_x = d_x - g.mean(axis=-1, keepdims=True)
    if var_term:
        d_x = d_x - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    axes = {"leading": tuple(range(x.ndim - 1)), "batch": 0, "none": ()}[sum_over]
    return d_x / sigma, np.sum(d_out * x_hat, axis=axes), np.sum(d_out, axis=axes)


def adam(param, grad, m, v, step, *, learning_rate, beta1, beta2, eps, weight_decay, how=""):
    lr, wd = learning_rate, weight_decay
    if how == "swap all":
        beta1, beta2 = beta2, beta1
    if how == "L2":
        grad = grad + wd * param
    elif how == "no lr":
        param = param * (1 - wd)
    elif how != "after":
        param = param - lr * wd * param
    m = (beta2 if how == "swap averages" else beta1) * m + (
        1 - (beta2 if how == "swap averages" else beta1)
    ) * grad
    b = beta1 if how == "swap averages" else beta2
    v = b * v + (1 - b) * (abs(grad) if how == "abs" else grad * grad)
    t = {"from 0": step - 1, "one ahead": step + 1}.get(how, step)
    m_hat = m if how == "no correction" else m / (1 - beta1**t)
    v_hat = v if how == "no correction" else v / (1 - beta2**t)
    denominator = np.sqrt(v_hat + eps) if how == "eps inside" else np.sqrt(v_hat) + eps
    param = param - lr * m_hat / denominator
    if how == "after":
        param = param - lr * wd * param
    return param, m, v


def adamw_in_place(param, grad, m, v, step, *, learning_rate, beta1, beta2, eps, weight_decay):
    param -= learning_rate * weight_decay * param
    m *= beta1
    m += (1 - beta1) * grad
    v *= beta2
    v += (1 - beta2) * grad**2
    param -= learning_rate * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)
    return param, m, v


def schedule(step, *, peak, warmup, total, floor, how=""):
    if step < warmup and how != "no warmup":
        return peak * (step if how == "from 0" else step + 1) / warmup
    if step >= total and how != "back up":
        return 0.0 if how == "to 0" else floor
    start = 0 if how in ("no warmup", "unshifted") else warmup
    span = total if how in ("over total", "no warmup", "unshifted") else total - warmup
    bottom = 0.0 if how == "to 0" else floor
    if how == "linear":
        return bottom + (peak - bottom) * (1 - (step - start) / span)
    return bottom + (peak - bottom) * (1 + math.cos(math.pi * (step - start) / span)) / 2


def clipped(grads, max_norm, *, how=""):
    squares = sum(float((g * g).sum()) for g in grads.values())
    norm = sum(float(np.abs(g).sum()) for g in grads.values()) if how == "L1" else squares
    norm = norm if how in ("L1", "no root") else math.sqrt(norm)
    if how == "each":
        return {k: g * min(1, max_norm / (np.linalg.norm(g) + 1e-6)) for k, g in grads.items()}, norm
    scale = max_norm / (norm + 1e-6) if how == "up" else min(1, max_norm / (norm + 1e-6))
    out = {k: g * scale for k, g in grads.items()}
    return out, math.sqrt(sum(float((g * g).sum()) for g in out.values())) if how == "after" else norm


CASES = {
    "cross_entropy": (
        checks.check_cross_entropy, cross_entropy, checks.CROSS_ENTROPY_MISTAKES,
        [partial(ce, total=True), partial(ce, divide=False), partial(ce, rows=True),
         partial(ce, stable=False), partial(ce, axis=-2), partial(ce, axis=0), partial(ce, onehot=False),
         partial(ce, sign=-1), partial(ce, loss_sign=-1), partial(ce, log=np.log2)],
    ),
    "layer_norm_backward": (
        checks.check_layer_norm_backward, layer_norm_backward, checks.LAYER_NORM_BACKWARD_MISTAKES,
        [partial(ln, mean_term=False, var_term=False), partial(ln, mean_term=False),
         partial(ln, var_term=False), partial(ln, eps=0.0), partial(ln, sum_over="batch"),
         partial(ln, sum_over="none"), partial(ln, times_gain=False)],
    ),
    "adamw_step": (
        checks.check_adamw_step, adamw_step, checks.ADAMW_MISTAKES,
        [partial(adam, how=how) for how in ("no correction", "L2", "no lr", "after", "eps inside", "abs",
                                            "swap all", "swap averages", "from 0", "one ahead")],
    ),
    "decays": (
        checks.check_decays, decays, checks.DECAYS_MISTAKES,
        [lambda name, array: True, lambda name, array: False, lambda name, array: "W_" in name,
         lambda name, array: not name.endswith("bias")],
    ),
    "learning_rate": (
        checks.check_learning_rate, learning_rate, checks.LEARNING_RATE_MISTAKES,
        [partial(schedule, how=how)
         for how in ("from 0", "over total", "to 0", "back up", "linear", "unshifted", "no warmup")],
    ),
    "clip": (
        checks.check_clip, clip, checks.CLIP_MISTAKES,
        [partial(clipped, how=how) for how in ("each", "up", "after", "L1", "no root")],
    ),
    "dropout_backward": (
        checks.check_dropout_backward, dropout_backward, checks.DROPOUT_BACKWARD_MISTAKES,
        [lambda d_out, keep, rate: d_out / (1 - rate), lambda d_out, keep, rate: d_out,
         lambda d_out, keep, rate: d_out * keep],
    ),
}  # fmt: skip

RANDOM = {"batch": (checks.check_batch, batch), "dropout": (checks.check_dropout, dropout)}


@pytest.mark.parametrize("name", [*CASES, *RANDOM])
def test_l18_the_right_function_passes_and_none_is_no_answer_yet(name: str) -> None:
    check, right = (CASES.get(name) or RANDOM[name])[:2]
    yours = {}
    result = check(right, keep=yours)
    assert result.passed and result.message.startswith(f"Correct: my_{name}"), result
    assert yours == {name: right}
    assert str(check(None)).startswith(f"✘ No answer yet: my_{name} is None")
    assert check(3).message.startswith(f"Not a function: my_{name} is an int; define it with `def my_{name}(")


@pytest.mark.parametrize("name", CASES)
def test_l18_every_mistake_of_the_table_is_named(name: str) -> None:
    check, _, table, wrong_functions = CASES[name]
    assert len(wrong_functions) == len(table), "one learner's function per row of the table"
    for mistake, fn in zip(table, wrong_functions, strict=True):
        result = check(fn)
        assert not result.passed and result.message.startswith(mistake.name), (mistake.name, result)
        assert "\n" not in result.message and " Seen on " in result.message


def test_l18_an_overflow_written_otherwise_is_named_too() -> None:
    """Without the maximum subtracted, a log-sum-exp written out gives inf where the softmax gave NaN."""
    result = checks.check_cross_entropy(ce_log_of_inf)
    assert result.message.startswith("You did not subtract the maximum before exp"), result
    assert "Seen on logits around +1000 and −1000" in result.message


def test_l18_the_layer_norm_check_reads_central_differences() -> None:
    """attnlib's gradient agrees with central differences a hundred times closer than the bound, and a
    d_x off by more than the bound at the entries differenced is refused by them."""
    for case in checks._layer_norm_cases():
        d_x = case.exercise.right[0]
        error = np.abs(d_x[tuple(case.entries.T)] - case.differences).max()
        assert error < checks.FD_BOUND / 100 * np.abs(d_x).max()

    def off(x, gain, d_out):
        d_x, d_gain, d_bias = layer_norm_backward(x, gain, d_out)
        return d_x * (1 + 3 * checks.FD_BOUND), d_gain, d_bias

    refused = checks._against_differences(off)
    assert refused.message == (
        "Not yet, on x of shape (2, 3, 8) (B, n, d_model): my_layer_norm_backward's d_x differs from "
        "central differences of sum(y * d_out)."
    )
    assert checks.check_layer_norm_backward(layer_norm_backward).message.endswith(
        "central differences of sum(y * d_out) at 12 entries."
    )


def test_l18_a_step_in_place_is_refused_and_clipping_in_place_is_not() -> None:
    result = checks.check_adamw_step(adamw_in_place)
    assert result.message.startswith("Your my_adamw_step changed param in place on step 1"), result
    assert "early stopping" in result.message

    def clip_in_place(grads, max_norm):
        grads, norm = clip(grads, max_norm)
        for g in grads.values():
            g *= 1.0
        return grads, norm

    assert checks.check_clip(clip_in_place).passed


# --- the random ones ---------------------------------------------------------------------------------------


def batch_with(ids, batch_size, n_ctx, rng, *, low=0, high_less=0, shift=1, one_start=False, positions=False):
    starts = rng.integers(low, len(ids) - n_ctx - high_less, size=1 if one_start else batch_size)
    starts = np.resize(starts, batch_size)
    window = starts[:, None] + np.arange(n_ctx)
    if positions:
        return window, window + 1
    return ids[window], ids[window + shift]


def batch_random_tokens(ids, batch_size, n_ctx, rng):
    picks = rng.integers(0, len(ids) - 1, size=(batch_size, n_ctx))
    return ids[picks], ids[picks + 1]


def batch_global_state(ids, batch_size, n_ctx, rng):
    starts = np.random.randint(0, len(ids) - n_ctx, size=batch_size)  # noqa: NPY002
    window = starts[:, None] + np.arange(n_ctx)
    return ids[window], ids[window + 1]


def batch_own_generator(ids, batch_size, n_ctx, rng):
    return batch(ids, batch_size, n_ctx, np.random.default_rng(0))


def batch_from_floats(ids, batch_size, n_ctx, rng):
    starts = (rng.random(batch_size) * (len(ids) - n_ctx - 1)).astype(int)  # never len(ids) - n_ctx - 1
    window = starts[:, None] + np.arange(n_ctx)
    return ids[window], ids[window + 1]


def batch_off_by_one_high(ids, batch_size, n_ctx, rng):
    starts = rng.integers(0, len(ids) - n_ctx + 1, size=batch_size)
    return (
        np.stack([ids[s : s + n_ctx] for s in starts]),
        np.stack([ids[s + 1 : s + n_ctx + 1] for s in starts]),
    )


BATCH_MISTAKES = {
    "no shift": (partial(batch_with, shift=0), "Your targets are the inputs themselves (not shifted)"),
    "wrong way": (partial(batch_with, shift=-1, low=1), "Your targets are the previous tokens"),
    "positions": (partial(batch_with, positions=True), "You returned the positions of the window"),
    "random tokens": (batch_random_tokens, "Your rows are random tokens, not a contiguous window"),
    "one window": (partial(batch_with, one_start=True), "Every row is the same window"),
    "np.random": (batch_global_state, "You ignored rng"),
    "a seed inside": (batch_own_generator, "You ignored rng"),
    "off by one low": (partial(batch_with, high_less=1), "The last window is never drawn"),
    "first never": (partial(batch_with, low=1), "The first window (start 0) is never drawn"),
    "off by one low, drawn from floats": (batch_from_floats, "The last window is never drawn"),
    "off by one high": (
        batch_off_by_one_high,
        "Your my_batch raised ValueError on a stream of 40 tokens (int64) with batch_size 16, n_ctx 8: all "
        "input arrays must have the same shape; a window started too late ran past the end of ids: a window "
        "of n_ctx inputs and its targets need n_ctx + 1 tokens, so the starts run from 0 to N − n_ctx − 1",
    ),
}  # fmt: skip


@pytest.mark.parametrize("mistake", BATCH_MISTAKES)
def test_l18_every_mistake_of_the_batches_is_named(mistake: str) -> None:
    function, said = BATCH_MISTAKES[mistake]
    result = checks.check_batch(function)
    assert not result.passed and result.message.startswith(said), result
    assert "\n" not in result.message


def test_l18_the_batches_edges() -> None:
    """A stream of n_ctx + 1 tokens holds one window: a draw from an empty range says so; an IndexError
    past the end says where the starts run; the draws of the reach test miss a start of a uniform draw
    with probability under 1e-14."""

    def low_on_short_streams(ids, batch_size, n_ctx, rng):
        return batch_with(ids, batch_size, n_ctx, rng, high_less=int(len(ids) < 40))

    low = checks.check_batch(low_on_short_streams)
    assert low.message.startswith("Your my_batch raised ValueError on a stream of 9 tokens"), low
    assert "high <= 0. The last window is never drawn: " in low.message and ".." not in low.message

    def high_and_fancy(ids, batch_size, n_ctx, rng):
        starts = rng.integers(0, len(ids) - n_ctx + 1, size=batch_size)
        window = starts[:, None] + np.arange(n_ctx)
        return ids[window], ids[window + 1]

    high = checks.check_batch(high_and_fancy)
    assert high.message.startswith("Your my_batch raised IndexError"), high
    assert "rng.integers(0, len(ids) - n_ctx)" in high.message
    n_starts = checks.REACH_TOKENS - checks.REACH_CTX
    assert (1 - 1 / n_starts) ** (checks.REACH_CALLS * checks.REACH_BATCH) < 1e-14


def dropout_with(x, rate, rng, *, scale="divide", p_keep=None, flip=False):
    keep = rng.random(x.shape) < (1 - rate if p_keep is None else p_keep(rate))
    factor = {"divide": 1 / (1 - rate), "none": 1.0, "times": 1 - rate}[scale]
    return x * keep * factor, ~keep if flip else keep


def dropout_global(x, rate, rng):
    keep = np.random.random_sample(x.shape) >= rate  # noqa: NPY002
    return x * keep / (1 - rate), keep


DROPOUT_MISTAKES = {
    "no rescaling": (partial(dropout_with, scale="none"), "You did not rescale the kept entries"),
    "times 1 − rate": (partial(dropout_with, scale="times"), "You multiplied by (1 − rate) instead of"),
    "the other mask": (partial(dropout_with, flip=True), "The mask you return is not the one you applied"),
    "keep with rate": (partial(dropout_with, p_keep=lambda r: r), "You kept each entry with probability"),
    "another fraction": (partial(dropout_with, p_keep=lambda r: 1 - r / 2), "Your kept fraction is not"),
    "y of another mask": (
        lambda x, rate, rng: (dropout(x, rate, rng)[0], rng.random(x.shape) >= rate),
        "Your y is not x · keep / (1 − rate) for the keep you return",
    ),
    "np.random": (dropout_global, "You ignored rng"),
}  # fmt: skip


@pytest.mark.parametrize("mistake", DROPOUT_MISTAKES)
def test_l18_every_mistake_of_dropout_is_named(mistake: str) -> None:
    function, said = DROPOUT_MISTAKES[mistake]
    result = checks.check_dropout(function)
    assert not result.passed and result.message.startswith(said), result


def test_l18_dropout_written_otherwise_passes() -> None:
    def with_a_float_mask(x, rate, rng):
        keep = (rng.random(x.shape) > rate).astype(x.dtype)  # 0 and 1: a mask too
        return x * keep / (1 - rate), keep

    assert checks.check_dropout(with_a_float_mask).passed
    assert checks.check_dropout(
        lambda x, rate, rng: (x, np.ones(x.shape, bool)) if rate == 0 else dropout(x, rate, rng)
    )


# --- what fails before any comparison ---------------------------------------------------------------------

BAD = {
    "raises": (
        checks.check_cross_entropy, lambda logits, targets: logits[targets],
        "Your my_cross_entropy raised IndexError on logits of shape (2, 3, 5) (B, n, V): index",
    ),
    "returns None": (
        checks.check_adamw_step, lambda *args, **kwargs: None,
        "Nothing returned: my_adamw_step returns None; end it with `return` and the AdamW step.",
    ),
    "one array, not the pair": (
        checks.check_cross_entropy, lambda logits, targets: cross_entropy(logits, targets)[1],
        "Return (loss, d_logits): my_cross_entropy returned an ndarray; end it with `return loss, d_logits`.",
    ),
    "three things": (
        checks.check_clip, lambda grads, max_norm: (*clip(grads, max_norm), max_norm),
        "Return (grads, norm): my_clip returned 3 things",
    ),
    "a loss of every position": (
        checks.check_cross_entropy,
        lambda logits, targets: (np.full(targets.shape, 1.0), cross_entropy(logits, targets)[1]),
        "Not one number: my_cross_entropy returned loss of shape (2, 3); return one number",
    ),
    "wrong shape": (
        checks.check_cross_entropy,
        lambda logits, targets: (cross_entropy(logits, targets)[0], np.zeros((2, 5))),
        "Not yet, on logits of shape (2, 3, 5) (B, n, V): my_cross_entropy returned d_logits of shape "
        "(2, 5), "
        "but the logits have shape (2, 3, 5).",
    ),
    "NaN": (
        checks.check_layer_norm_backward, lambda x, gain, d_out: (x * np.nan, gain, gain),
        "Not yet, on x of shape (2, 3, 8) (B, n, d_model): my_layer_norm_backward's d_x holds NaN or an "
        "infinity",
    ),
    "text": (
        checks.check_dropout_backward, lambda d_out, keep, rate: "d_out * keep",
        "Not an array: my_dropout_backward returned a str as d_x",
    ),
    "booleans": (
        checks.check_dropout_backward, lambda d_out, keep, rate: keep,
        "Not real numbers: my_dropout_backward returned d_x of dtype bool.",
    ),
    "1 for True": (
        checks.check_decays, lambda name, array: int(array.ndim >= 2),
        "Not True or False: my_decays returned an int; return a bool.",
    ),
    "float tokens": (
        checks.check_batch, lambda *args: tuple(a.astype(float) for a in batch(*args)),
        "Not integers: my_batch returned inputs of dtype float64; it must be an array of integers.",
    ),
    "a batch of the wrong shape": (
        checks.check_batch, lambda *args: tuple(a.T for a in batch(*args)),
        "Wrong shape: my_batch returned inputs of shape (8, 6) on a stream of 40 tokens",
    ),
    "a mask of the wrong shape": (
        checks.check_dropout, lambda x, rate, rng: (dropout(x, rate, rng)[0], True),
        "Wrong shape: my_dropout returned keep of shape (), but x has shape (3, 4).",
    ),
    "a number for the learning rate": (
        checks.check_learning_rate, lambda step, **kwargs: [learning_rate(step, **kwargs)] * 2,
        "Not a number: my_learning_rate returned a list as the learning rate; return one number.",
    ),
    "lr for learning_rate": (
        checks.check_adamw_step,
        lambda param, grad, m, v, step, *, lr, beta1, beta2, eps, weight_decay: (param, m, v),
        "Wrong arguments: the lesson calls my_adamw_step(param, grad, m, v, step, *, learning_rate, beta1, "
        "beta2, eps, weight_decay); yours is my_adamw_step(param, grad, m, v, step, *, lr, beta1, beta2, "
        "eps, "
        "weight_decay) (",
    ),
    "batch without rng": (
        checks.check_batch,
        lambda ids, batch_size, n_ctx: batch(ids, batch_size, n_ctx, np.random.default_rng()),
        "Wrong arguments: the lesson calls my_batch(ids, batch_size, n_ctx, rng); yours is "
        "my_batch(ids, batch_size, n_ctx) (too many positional arguments).",
    ),
    "a dropout that raises": (
        checks.check_dropout, lambda x, rate, rng: x / 0 + {}[rate],
        "Your my_dropout raised KeyError on x of shape (3, 4) with rate 0.5: 0.5.",
    ),
}  # fmt: skip


@pytest.mark.parametrize("what", BAD)
def test_l18_what_cannot_be_compared_is_told_in_one_line(what: str) -> None:
    check, function, said = BAD[what]
    result = check(function)
    assert not result.passed and result.message.startswith(said), result
    assert "\n" not in result.message and len(result.message) < 500


def test_l18_a_later_failing_check_withdraws_the_function() -> None:
    yours = {"clip": clip}
    assert checks.check_dropout(dropout, keep=yours).passed
    assert checks.check_batch(batch, keep=yours).passed
    assert yours == {"clip": clip, "dropout": dropout, "batch": batch}
    assert not checks.check_dropout(dropout_global, keep=yours).passed
    assert not checks.check_batch(batch_global_state, keep=yours).passed
    assert yours == {"clip": clip}  # the loop will not run the broken ones
    assert not checks.check_clip(None, keep=yours).passed
    assert yours == {}


def test_l18_the_cases_hold_what_the_lesson_asks_for() -> None:
    shapes = [ex.args[0].shape for ex in checks._cross_entropy_cases()]
    assert any(len(s) == 3 for s in shapes) and any(len(s) == 2 for s in shapes)
    assert any(np.abs(ex.args[0]).min() > 990 for ex in checks._cross_entropy_cases())
    steps = [ex.args[4] for ex in checks._adamw_cases()]
    assert steps == [1, 2, 3, 4, 50]
    for before, after in zip(checks._adamw_cases()[:3], checks._adamw_cases()[1:4], strict=True):
        assert all(
            np.array_equal(a, b) for a, b in zip(before.right, (after.args[0], *after.args[2:4]), strict=True)
        )
    schedules = {tuple(sorted(ex.kwargs.items())) for ex in checks._learning_rate_cases()}
    assert any(dict(s)["warmup"] == 0 for s in schedules)
    for s in schedules:
        steps_of = [
            ex.args[0] for ex in checks._learning_rate_cases() if tuple(sorted(ex.kwargs.items())) == s
        ]
        assert steps_of == list(range(len(steps_of))) and len(steps_of) > dict(s)["total"]
    names = [ex.args[0] for ex in checks._decays_cases()]
    assert {"embed", "unembed", "ln_final.gain", "layer0.b_in"} <= set(names)
