"""Self-checks of lesson 18, train your own GPT: the learner writes the parts of nanoGPT's training
loop in NumPy, and each check calls the learner's function on several cases.

- :func:`check_batch` (random windows of the token stream) and its table :data:`BATCH_MISTAKES`;
- :func:`check_cross_entropy` and :data:`CROSS_ENTROPY_MISTAKES`;
- :func:`check_layer_norm_backward` and :data:`LAYER_NORM_BACKWARD_MISTAKES`;
- :func:`check_adamw_step` and :data:`ADAMW_MISTAKES`; :func:`check_decays` and :data:`DECAYS_MISTAKES`;
- :func:`check_learning_rate` and :data:`LEARNING_RATE_MISTAKES`;
- :func:`check_clip` and :data:`CLIP_MISTAKES`;
- :func:`check_dropout` (random) and :data:`DROPOUT_MISTAKES`; :func:`check_dropout_backward` and
  :data:`DROPOUT_BACKWARD_MISTAKES`;
- each check keeps the learner's function, when it passes, in the lesson's own dictionary
  (``keep=yours``) under its name without ``my_`` (``"cross_entropy"``), and takes it out when a
  later check of it fails: what the lesson's training loop then runs.

The functions that compute (the loss, the gradients, the optimiser's step, the schedule, clipping)
are compared with attnlib's (:mod:`attnlib.training`, :mod:`attnlib.decoder.block`,
:mod:`attnlib.optim`) within :data:`RTOL` of each output's largest entry, by the kit's runner
(:func:`~attention_lessons.kit.checks.functions.judge_function`): each row of a table *makes* its
mistake on a case's inputs, and the row that returns what the learner's function returned is named.
The two random functions (the batches, dropout) cannot be compared with attnlib's draws: their
checks read what the learner's own draws must satisfy (each row of their tables is a
:class:`Symptom` that recognises its mistake in them) and draw many times to see that every window
can come. The right answers are never shown; a function that raises, returns nothing or the wrong
kind of thing, or takes other arguments is told so in one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from attention_lessons.kit.checks.functions import (
    FunctionExercise,
    Output,
    call,
    judge_function,
    kept,
    not_a_function,
    numeric_returns,
)
from attention_lessons.kit.checks.mistakes import Mistake
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import shape_text
from attnlib import optim
from attnlib.decoder import DecoderConfig, init_parameters
from attnlib.decoder.block import LN_EPS, dropout, dropout_backward, layer_norm, layer_norm_backward
from attnlib.training import cross_entropy

__all__ = [
    "ADAMW_IN_PLACE",
    "ADAMW_MISTAKES",
    "BATCH_MISTAKES",
    "CLIP_MISTAKES",
    "CROSS_ENTROPY_MISTAKES",
    "DECAYS_MISTAKES",
    "DROPOUT_BACKWARD_MISTAKES",
    "DROPOUT_MISTAKES",
    "DROPOUT_RNG_IGNORED",
    "LAYER_NORM_BACKWARD_MISTAKES",
    "LEARNING_RATE_MISTAKES",
    "REACH_MISTAKES",
    "RNG_IGNORED",
    "RTOL",
    "Symptom",
    "central_differences",
    "check_adamw_step",
    "check_batch",
    "check_clip",
    "check_cross_entropy",
    "check_decays",
    "check_dropout",
    "check_dropout_backward",
    "check_layer_norm_backward",
    "check_learning_rate",
]

#: Relative tolerance of a learner's float64 result, at the scale of each output's largest entry: far
#: above float64's rounding (≈ 1e-16 per operation), far below what any mistake of the tables changes.
RTOL = 1e-6

Keep = MutableMapping[str, Callable] | None


@dataclass(frozen=True)
class Symptom:
    """A mistake of a random function, recognised in what the learner's own draws return.

    Attributes
    ----------
    name, advice : str
        As a :class:`~attention_lessons.kit.checks.mistakes.Mistake`'s: the message is ``name: advice``.
    seen : callable
        ``seen(draw)``: whether the learner's draw shows the mistake.
    """

    name: str
    advice: str
    seen: Callable[[object], bool]

    def message(self) -> str:
        """``name: advice``."""
        return f"{self.name}: {self.advice}"


def _first_seen(table: Sequence[Symptom], draw: object) -> Symptom | None:
    return next((symptom for symptom in table if symptom.seen(draw)), None)


def _listed_labels(cases: Sequence[FunctionExercise]) -> str:
    labels = list(dict.fromkeys(ex.label for ex in cases))
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


# --- 1. batches ----------------------------------------------------------------------------------------

#: Draws of the reach test: 64 calls of 16 windows of a stream of 40 tokens with n_ctx 8, whose 32
#: starts a uniform draw misses one of with probability (31/32)^1024 < 1e-14.
REACH_CALLS, REACH_BATCH, REACH_TOKENS, REACH_CTX = 64, 16, 40, 8

_LAST_START = (
    "a window of n_ctx inputs and its targets need n_ctx + 1 tokens, so the starts run from 0 to "
    "N − n_ctx − 1 (N = len(ids)), both included: rng.integers(0, len(ids) - n_ctx), whose upper end "
    "is excluded."
)


@dataclass(frozen=True)
class Draw:
    """One call of the learner's ``my_batch``: the stream and what it returned.

    ``ids`` is a permutation of ``0 … N − 1`` (every token once), so ``place[token]`` is where a
    token stands in the stream, and a window is read off its tokens' places.
    """

    ids: np.ndarray
    inputs: np.ndarray
    targets: np.ndarray

    @property
    def place(self) -> np.ndarray:
        place = np.empty(len(self.ids), dtype=np.int64)
        place[self.ids] = np.arange(len(self.ids))
        return place

    @property
    def positions(self) -> np.ndarray:
        """Where each input token stands in the stream."""
        return self.place[self.inputs]

    @property
    def contiguous(self) -> bool:
        return bool((np.diff(self.positions, axis=1) == 1).all())


def _shifted(draw: Draw, by: int) -> bool:
    at = draw.positions + by
    return bool(((at >= 0) & (at < len(draw.ids))).all() and (draw.targets == draw.ids[at]).all())


#: What a learner's batches may show instead of contiguous windows and the next tokens.
BATCH_MISTAKES: tuple[Symptom, ...] = (
    Symptom(
        "Your targets are the inputs themselves (not shifted)",
        "every position predicts the token after it: targets = ids[start + 1 : start + n_ctx + 1], the "
        "same window one token later.",
        lambda d: bool((d.targets == d.inputs).all()),
    ),
    Symptom(
        "Your targets are the previous tokens (shifted the wrong way)",
        "the target of ids[start + i] is the token after it, ids[start + i + 1].",
        lambda d: d.contiguous and _shifted(d, -1),
    ),
    Symptom(
        "You returned the positions of the window, not its tokens",
        "index the stream: inputs = ids[start : start + n_ctx] (the lesson's ids are a permutation here, "
        "so positions and tokens differ).",
        lambda d: not d.contiguous and bool((np.diff(d.inputs, axis=1) == 1).all()),
    ),
    Symptom(
        "Your rows are random tokens, not a contiguous window",
        "draw one start per row and take the n_ctx tokens from it: ids[start : start + n_ctx]; the model "
        "learns from text in order.",
        lambda d: not d.contiguous,
    ),
    Symptom(
        "Your targets are not the next tokens",
        "targets = ids[start + 1 : start + n_ctx + 1], the inputs' window one token later.",
        lambda d: not _shifted(d, 1),
    ),
    Symptom(
        "Every row is the same window (you drew one start for the whole batch)",
        "draw batch_size starts, one per row: rng.integers(0, len(ids) - n_ctx, size=batch_size).",
        lambda d: (
            len(d.inputs) >= 4
            and len(d.ids) - d.inputs.shape[1] >= 8
            and bool((d.inputs == d.inputs[0]).all())
        ),
    ),
)

#: Seen in three batches (the same seed twice, then another seed): the generator passed in is not used.
RNG_IGNORED = Symptom(
    "You ignored rng",
    "draw the starts with the generator passed in (rng.integers(...)), not np.random's own state or a "
    "generator of your own: then the same seed gives the same batches, and a run can be repeated.",
    lambda batches: not np.array_equal(batches[0], batches[1]) or np.array_equal(batches[0], batches[2]),
)

#: Seen in the starts of many draws from a stream of :data:`REACH_TOKENS` tokens with n_ctx :data:`REACH_CTX`.
REACH_MISTAKES: tuple[Symptom, ...] = (
    Symptom(
        "The last window is never drawn",
        _LAST_START,
        lambda starts: starts.max() < REACH_TOKENS - REACH_CTX - 1,
    ),
    Symptom(
        "The first window (start 0) is never drawn",
        "the starts run from 0: " + _LAST_START,
        lambda starts: starts.min() > 0,
    ),
)


def _batch_hint(error: Exception) -> str:
    """The window past the end, or no window at all, in an error's words."""
    text, starts = str(error), _LAST_START.removesuffix(".")
    if isinstance(error, IndexError) or any(
        part in text for part in ("inhomogeneous", "same shape", "could not broadcast")
    ):
        return f"; a window started too late ran past the end of ids: {starts}"
    if "high <= 0" in text:
        return f". The last window is never drawn: {starts}"
    if "low >= high" in text:
        return f"; ids of n_ctx + 1 tokens hold one window, which starts at 0: {starts}"
    return ""


_BATCH_RETURNS = numeric_returns(
    "batch", [Output("inputs", "", kind="ints"), Output("targets", "", kind="ints")]
)


def _batch_case(
    n_tokens: int, batch_size: int, n_ctx: int, seed: object, dtype: type, label: str
) -> FunctionExercise:
    ids = np.random.default_rng(18).permutation(n_tokens).astype(dtype)
    return FunctionExercise(
        "my_batch", "ids, batch_size, n_ctx, rng", "batch",
        (ids, batch_size, n_ctx, np.random.default_rng(seed)), None,
        f"a stream of {n_tokens} tokens ({ids.dtype}) with batch_size {batch_size}, n_ctx {n_ctx}", label,
    )  # fmt: skip


def _draw(answer: Callable, ex: FunctionExercise) -> Draw | CheckResult:
    """The learner's batch on this case, or why it is not one of windows and next tokens."""
    read = call(answer, ex, _BATCH_RETURNS, hint=_batch_hint)
    if isinstance(read, CheckResult):
        return read
    inputs, targets = read  # type: ignore[misc]
    ids, batch_size, n_ctx, _ = ex.args
    for name, array in (("inputs", inputs), ("targets", targets)):
        if array.shape != (batch_size, n_ctx):
            return failed(
                f"Wrong shape: {ex.name} returned {name} of shape {shape_text(array.shape)} on {ex.case}; "
                f"inputs and targets are (batch_size, n_ctx), here ({batch_size}, {n_ctx})."
            )
        if array.min() < 0 or array.max() >= len(ids):
            return failed(
                f"Not tokens: {ex.name}'s {name} hold numbers that are no token of ids on {ex.case}; index "
                "the stream: ids[start : start + n_ctx]."
            )
    return Draw(ids, inputs, targets)


def _batches(answer: Callable, cases: Sequence[FunctionExercise]) -> list[Draw] | CheckResult:
    draws = []
    for ex in cases:
        draw = _draw(answer, ex)
        if isinstance(draw, CheckResult):
            return draw
        symptom = _first_seen(BATCH_MISTAKES, draw)
        if symptom is not None:
            return failed(f"{symptom.message()} Seen on {ex.case}.")
        draws.append(draw)
    return draws


def _reach_cases(seed: int) -> list[FunctionExercise]:
    return [
        _batch_case(REACH_TOKENS, REACH_BATCH, REACH_CTX, [seed, k], np.int64, "every window reached")
        for k in range(REACH_CALLS)
    ]


def _batch_verdict(answer: Callable) -> CheckResult | None:
    """The first case, the generator's use, every window reached, then the other cases."""
    cases = _batch_cases()
    seeds = [cases[0], _batch_cases()[0], _batch_case(40, 6, 8, 1, np.int64, "")]  # seeds 0, 0, 1
    draws = _batches(answer, seeds)
    if isinstance(draws, CheckResult):
        return draws
    if RNG_IGNORED.seen([draw.inputs for draw in draws]):
        return failed(RNG_IGNORED.message())
    reach = _batches(answer, _reach_cases(0))
    if isinstance(reach, CheckResult):
        return reach
    starts = np.concatenate([draw.positions[:, 0] for draw in reach])
    symptom = _first_seen(REACH_MISTAKES, starts)
    if symptom is not None:
        return failed(f"{symptom.message()} Seen in {starts.size} windows drawn from {REACH_TOKENS} tokens.")
    rest = _batches(answer, cases[1:])
    return rest if isinstance(rest, CheckResult) else None


def _batch_cases() -> tuple[FunctionExercise, ...]:
    """The cases, each with a generator of its own seed, new at every call (a generator is used up)."""
    return (
        _batch_case(40, 6, 8, 0, np.int64, "40 tokens"),
        _batch_case(9, 3, 8, 2, np.uint16, "a stream of n_ctx + 1 tokens (one window)"),
        _batch_case(500, 16, 32, 3, np.uint16, "500 tokens in uint16, as the lesson's streams"),
    )


def check_batch(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``batch(ids, batch_size, n_ctx, rng)`` by what its draws must satisfy.

    attnlib's is :func:`attnlib.decoder.gpt.sample_batch`. Its draws are random, so the check reads
    the learner's: both arrays of shape ``(batch_size, n_ctx)`` and of integers, every row of the
    inputs a contiguous stretch of the stream (its ids are a permutation of ``0 … N − 1``, so where
    each token stands is known), the targets the same window one token later, the rows not all one
    window, the same batch from the same seed and another from another seed (``rng`` is used), and,
    over :data:`REACH_CALLS` × :data:`REACH_BATCH` draws, both the first window (start 0) and the
    last (start ``N − n_ctx − 1``) drawn.

    Parameters
    ----------
    answer : callable
        ``answer(ids, batch_size, n_ctx, rng)`` → ``(inputs, targets)``.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    result = not_a_function(answer, "my_batch", "ids, batch_size, n_ctx, rng")
    if result is None:
        result = _batch_verdict(answer)  # type: ignore[arg-type]
    if result is None:
        result = passed(
            f"Correct: my_batch's windows are contiguous, its targets the next tokens, on "
            f"{_listed_labels(_batch_cases())}; the same seed gives the same batch, and in "
            f"{REACH_CALLS * REACH_BATCH} draws both the first and the last window came."
        )
    return kept(answer, "my_batch", result, keep)


# --- 2. the loss ---------------------------------------------------------------------------------------


def _softmax(logits: np.ndarray, axis: int = -1, *, stable: bool = True) -> np.ndarray:
    shifted = logits - logits.max(axis=axis, keepdims=True) if stable else logits
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _cross_entropy(
    ex: FunctionExercise,
    *,
    axis: int = -1,
    stable: bool = True,
    mean: bool = True,
    log: Callable = np.log,
    divide: bool = True,
    by_rows: bool = False,
    onehot: bool = True,
    sign: int = 1,
    loss_sign: int = 1,
) -> tuple[float, np.ndarray]:
    """The loss and its gradient, right or with a mistake (``axis`` of the softmax, no maximum
    subtracted, a sum, another log, the gradient's count, one-hot or sign)."""
    logits, targets = ex.args
    p = _softmax(logits, axis, stable=stable)
    picked = np.take_along_axis(p, targets[..., None], axis=-1)[..., 0]
    losses = -log(picked)
    hot = np.arange(logits.shape[-1]) == targets[..., None]
    grad = (p - hot if onehot else p) * sign
    count = targets.shape[0] if by_rows else targets.size
    return loss_sign * float(losses.mean() if mean else losses.sum()), grad / count if divide else grad


def _ce_wrong(**how: object) -> Callable[[FunctionExercise], tuple[float, np.ndarray]]:
    return lambda ex: _cross_entropy(ex, **how)  # type: ignore[arg-type]


_COUNT = (
    "the loss is the mean over every position (B · n of them, or n), so its gradient is divided by that count"
)

#: What a learner's cross-entropy may return instead of the mean loss and (softmax − onehot) / count.
CROSS_ENTROPY_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You summed the losses instead of taking their mean",
        f"{_COUNT}: loss = −log p[target] averaged, d_logits = (softmax − onehot) / count.",
        _ce_wrong(mean=False, divide=False),
    ),
    Mistake(
        "Your gradient is not divided by the count of positions",
        f"{_COUNT}: d_logits = (softmax − onehot) / targets.size.",
        _ce_wrong(divide=False),
    ),
    Mistake(
        "Your gradient is divided by the batch size only (len(targets)), not by every position",
        f"{_COUNT}: d_logits = (softmax − onehot) / targets.size.",
        _ce_wrong(by_rows=True),
    ),
    Mistake(
        "You did not subtract the maximum before exp (exp(1000) overflows: NaN)",
        "softmax(z) = softmax(z − max z): subtract each row's maximum, logits - logits.max(axis=-1, "
        "keepdims=True), then exp; and take log p as shifted − log Σ exp(shifted).",
        _ce_wrong(stable=False),
    ),
    Mistake(
        "Softmax over the wrong axis",
        "each position's probabilities are over the vocabulary, the last axis: axis=-1.",
        _ce_wrong(axis=-2),
    ),
    Mistake(
        "Softmax over the wrong axis",
        "each position's probabilities are over the vocabulary, the last axis: axis=-1.",
        _ce_wrong(axis=0),
    ),
    Mistake(
        "You did not subtract the one-hot target from the gradient",
        "d loss / d logits = (softmax − onehot(target)) / count: the target's probability moves up.",
        _ce_wrong(onehot=False),
    ),
    Mistake(
        "Your gradient's sign is flipped",
        "d_logits = (softmax − onehot) / count: gradient descent then lowers the wrong logits and raises "
        "the target's.",
        _ce_wrong(sign=-1),
    ),
    Mistake(
        "Your loss's sign is flipped (log p is negative: the loss is −log p)",
        "loss = mean(−log p[target]), a positive number that falls as the target's probability rises.",
        _ce_wrong(loss_sign=-1),
    ),
    Mistake(
        "You took log base 2",
        "the loss is in nats, np.log: the gradient (softmax − onehot) / count is that of the natural log "
        "(bits are nats / ln 2, for reading a loss).",
        _ce_wrong(log=np.log2),
    ),
)

_CE_RETURNS = numeric_returns(
    "loss and gradient", [Output("loss", kind="number"), Output("d_logits", "the logits have")], rtol=RTOL
)


def check_cross_entropy(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``cross_entropy(logits, targets)`` against :func:`attnlib.training.cross_entropy`.

    Parameters
    ----------
    answer : callable
        ``answer(logits, targets)`` → ``(loss, d_logits)``: the mean of ``−log softmax(logits)`` at
        the targets over every position, and its gradient ``(softmax − onehot) / count``; logits
        ``(B, n, V)`` or ``(n, V)``, targets ``(B, n)`` or ``(n,)`` integers.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    return judge_function(answer, _cross_entropy_cases(), CROSS_ENTROPY_MISTAKES, _CE_RETURNS, keep=keep)


@cache
def _cross_entropy_cases() -> tuple[FunctionExercise, ...]:
    rng = np.random.default_rng(180)
    huge = 1000.0 * np.array([1.0, -1.0])[:, None, None] + rng.normal(0, 2, (2, 4, 7))
    inputs = [
        (rng.normal(0, 2, (2, 3, 5)), "logits of shape (2, 3, 5) (B, n, V)", "(B, n, V)"),
        (rng.normal(0, 2, (4, 6)), "logits of shape (4, 6) (n, V)", "(n, V)"),
        (huge, "logits around +1000 and −1000, shape (2, 4, 7)", "logits around ±1000"),
    ]
    return tuple(
        FunctionExercise(
            "my_cross_entropy", "logits, targets", "numbers", (logits, targets),
            cross_entropy(logits, targets), case, label,
        )
        for logits, case, label in inputs
        for targets in [rng.integers(0, logits.shape[-1], logits.shape[:-1])]
    )  # fmt: skip


# --- 3. LayerNorm's backward pass ----------------------------------------------------------------------

#: Central differences of ``f(x) = Σ y · d_out`` at :data:`FD_ENTRIES` entries of each case, with a
#: step of :data:`FD_STEP` times the row's √(σ² + ε): the truncation error is about step²/6 of the
#: gradient (2e-7 relative), rounding about 1e-16 · |f| / h (under 1e-9), both far under
#: :data:`FD_BOUND`, the largest difference allowed, relative to the case's largest |d_x| (every
#: mistake of the table that changes d_x changes it by more than 1e-3 of that on some case).
FD_ENTRIES, FD_STEP, FD_BOUND = 4, 1e-3, 1e-5


def _layer_norm_wrong(
    how: str = "right",
) -> Callable[[FunctionExercise], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    def wrong(ex: FunctionExercise) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x, gain, d_out = ex.args
        centred = x - x.mean(axis=-1, keepdims=True)
        var = (centred**2).mean(axis=-1, keepdims=True)
        inv_sigma = 1 / np.sqrt(var + (0.0 if how == "no eps" else LN_EPS))
        x_hat = centred * inv_sigma
        d_hat = d_out if how == "no gain" else d_out * gain
        mean_term = 0 if how in ("no mean", "neither") else d_hat.mean(axis=-1, keepdims=True)
        var_term = (
            0 if how in ("no variance", "neither") else x_hat * (d_hat * x_hat).mean(axis=-1, keepdims=True)
        )
        d_x = inv_sigma * (d_hat - mean_term - var_term)
        axes = {"batch only": (0,), "not summed": ()}.get(how, tuple(range(x.ndim - 1)))
        return d_x, (d_out * x_hat).sum(axis=axes), d_out.sum(axis=axes)

    return wrong


_LN_SUM = (
    "gain and bias are shared by every position of every sequence, so their gradients add up over all "
    "the leading axes: d_gain = (d_out * x_hat).sum(axis=tuple(range(x.ndim - 1))), d_bias = d_out "
    "summed likewise, each of the gain's shape."
)

#: What a learner's LayerNorm backward pass may return instead of attnlib's.
LAYER_NORM_BACKWARD_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "Your d_x is d_hat / σ: you treated μ and σ as constants",
        "μ and σ depend on every entry of the row: d_x = (d_hat − mean(d_hat) − x_hat · mean(d_hat · x_hat)) "
        "/ √(σ² + ε), with d_hat = d_out · gain and the means over the last axis.",
        _layer_norm_wrong("neither"),
    ),
    Mistake(
        "You left out the mean's term of d_x",
        "x − μ depends on every entry of the row through μ: d_x = (d_hat − mean(d_hat) − x_hat · "
        "mean(d_hat · x_hat)) / √(σ² + ε), with d_hat = d_out · gain, means over the last axis.",
        _layer_norm_wrong("no mean"),
    ),
    Mistake(
        "You left out the variance's term of d_x",
        "σ depends on every entry of the row too: subtract x_hat · mean(d_hat · x_hat) as well.",
        _layer_norm_wrong("no variance"),
    ),
    Mistake(
        "You divided by σ without ε",
        f"the forward pass divides by √(σ² + ε), ε = {LN_EPS:g}, and so does its gradient; it matters for "
        "rows whose variance is near ε, as here.",
        _layer_norm_wrong("no eps"),
    ),
    Mistake(
        "You summed d_gain and d_bias over the batch axis only",
        _LN_SUM,
        _layer_norm_wrong("batch only"),
    ),
    Mistake("You did not sum d_gain and d_bias over the positions", _LN_SUM, _layer_norm_wrong("not summed")),
    Mistake(
        "You did not multiply by gain in d_x",
        "y = x_hat · gain + bias, so the gradient reaching x_hat is d_hat = d_out · gain.",
        _layer_norm_wrong("no gain"),
    ),
)

_LN_RETURNS = numeric_returns(
    "gradients",
    [Output("d_x", "x has"), Output("d_gain", "the gain has"), Output("d_bias", "the gain has")],
    rtol=RTOL,
)


def _layer_norm_output(x: np.ndarray, gain: np.ndarray, d_out: np.ndarray) -> float:
    return float((layer_norm(x, gain, np.zeros_like(gain))[0] * d_out).sum())


def central_differences(
    x: np.ndarray, gain: np.ndarray, d_out: np.ndarray, entries: np.ndarray
) -> np.ndarray:
    """``∂ Σ(y · d_out) / ∂x`` at each of ``entries`` (indices into ``x``), by central differences.

    The step is :data:`FD_STEP` times the entry's row's ``√(σ² + ε)``, the scale on which ``y`` changes.
    """
    scale = np.sqrt(x.var(axis=-1) + LN_EPS)
    grads = []
    for index in map(tuple, entries):
        h = FD_STEP * float(scale[index[:-1]])
        up, down = x.copy(), x.copy()
        up[index] += h
        down[index] -= h
        grads.append((_layer_norm_output(up, gain, d_out) - _layer_norm_output(down, gain, d_out)) / (2 * h))
    return np.array(grads)


@dataclass(frozen=True)
class _LayerNormCase:
    exercise: FunctionExercise
    entries: np.ndarray
    differences: np.ndarray


@cache
def _layer_norm_cases() -> tuple[_LayerNormCase, ...]:
    rng = np.random.default_rng(181)
    inputs = [
        ((2, 3, 8), 2.0, "x of shape (2, 3, 8) (B, n, d_model)", "(B, n, d_model)"),
        ((4, 6), 1.0, "x of shape (4, 6) (n, d_model)", "(n, d_model)"),
        ((3, 8), 3e-3, "rows of shape (3, 8) whose variance is near ε", "rows of variance near ε"),
    ]
    cases = []
    for shape, spread, case, label in inputs:
        x = rng.normal(0.5, spread, shape)
        gain, d_out = rng.uniform(0.5, 1.5, shape[-1]), rng.normal(0, 1, shape)
        right = layer_norm_backward(layer_norm(x, gain, np.zeros_like(gain))[1], d_out)
        entries = np.stack([rng.integers(0, size, FD_ENTRIES) for size in shape], axis=1)
        exercise = FunctionExercise(
            "my_layer_norm_backward", "x, gain, d_out", "numbers", (x, gain, d_out), right, case, label
        )
        cases.append(_LayerNormCase(exercise, entries, central_differences(x, gain, d_out, entries)))
    return tuple(cases)


def _against_differences(answer: Callable) -> CheckResult | None:
    """``None`` when the learner's d_x agrees with central differences on every case, else why not."""
    for case in _layer_norm_cases():
        d_x = call(answer, case.exercise, _LN_RETURNS)[0]  # type: ignore[index]
        off = np.abs(d_x[tuple(case.entries.T)] - case.differences)
        if off.max() > FD_BOUND * np.abs(case.exercise.right[0]).max():
            return failed(
                f"Not yet, on {case.exercise.case}: my_layer_norm_backward's d_x differs from central "
                "differences of sum(y * d_out)."
            )
    return None


def check_layer_norm_backward(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``layer_norm_backward(x, gain, d_out)`` against attnlib's
    (:func:`attnlib.decoder.block.layer_norm_backward`) and against central differences.

    Parameters
    ----------
    answer : callable
        ``answer(x, gain, d_out)`` → ``(d_x, d_gain, d_bias)`` for ``y = (x − μ)/√(σ² + ε) · gain +
        bias`` over the last axis, ``ε = attnlib.decoder.LN_EPS``: ``d_x`` of x's shape, ``d_gain``
        and ``d_bias`` of the gain's.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    cases = [case.exercise for case in _layer_norm_cases()]
    result = judge_function(answer, cases, LAYER_NORM_BACKWARD_MISTAKES, _LN_RETURNS)
    if result.passed:
        differs = _against_differences(answer)  # type: ignore[arg-type]
        result = (
            differs
            if differs is not None
            else passed(
                f"{result.message[:-1]}; and d_x agrees with central differences of sum(y * d_out) at "
                f"{FD_ENTRIES * len(cases)} entries."
            )
        )
    return kept(answer, "my_layer_norm_backward", result, keep)


# --- 4. AdamW ------------------------------------------------------------------------------------------


def _adamw(ex: FunctionExercise, how: str = "right") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One AdamW step, right or with a mistake (``how``)."""
    param, grad, m, v, t = ex.args
    s = dict(ex.kwargs)
    lr, wd, eps = s["learning_rate"], s["weight_decay"], s["eps"]
    b1, b2 = (s["beta2"], s["beta1"]) if how.startswith("swapped") else (s["beta1"], s["beta2"])
    if how == "L2":
        grad = grad + wd * param
    elif how == "decay without lr":
        param = param - wd * param
    elif how != "decay after":
        param = param - lr * wd * param
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * (np.abs(grad) if how == "abs" else grad * grad)
    c1, c2 = (s["beta1"], s["beta2"]) if how == "swapped averages" else (b1, b2)
    at = {"step - 1": t - 1, "step + 1": t + 1}.get(how, t)
    m_hat, v_hat = (m, v) if how == "no correction" else (m / (1 - c1**at), v / (1 - c2**at))
    root = np.sqrt(v_hat + eps) if how == "eps inside" else np.sqrt(v_hat) + eps
    new = param - lr * m_hat / root
    return (new - lr * wd * new if how == "decay after" else new), m, v


def _adamw_wrong(how: str) -> Callable[[FunctionExercise], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return lambda ex: _adamw(ex, how)


#: What a learner's AdamW step may return instead of attnlib's.
ADAMW_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You left out the bias correction",
        "m and v start at 0, so early on they are too small: divide them by 1 − β₁ᵗ and 1 − β₂ᵗ "
        "(m̂ = m / (1 - beta1**step), v̂ = v / (1 - beta2**step)) before the update.",
        _adamw_wrong("no correction"),
    ),
    Mistake(
        "You added weight_decay · param to the gradient (L2 regularisation: Adam, not AdamW)",
        "AdamW decays the parameter itself, apart from the gradient: param = param − lr · wd · param, "
        "then Adam's step with the gradient as it is (Loshchilov and Hutter 2019).",
        _adamw_wrong("L2"),
    ),
    Mistake(
        "Your decay is not scaled by the learning rate",
        "param = param − learning_rate · weight_decay · param: the decay follows the schedule.",
        _adamw_wrong("decay without lr"),
    ),
    Mistake(
        "You decayed after the Adam update",
        "decay first, param − lr · wd · param, from the parameter as it was, then Adam's step "
        "(torch.optim.AdamW's order).",
        _adamw_wrong("decay after"),
    ),
    Mistake(
        "You put ε inside the square root",
        "divide by √v̂ + ε: ε is added after the root (it matters where v̂ is tiny, as for some entries here).",
        _adamw_wrong("eps inside"),
    ),
    Mistake(
        "Your v averages |g|, not g²",
        "v is the running mean of the squared gradients: v = beta2 · v + (1 − beta2) · grad**2.",
        _adamw_wrong("abs"),
    ),
    Mistake(
        "You swapped beta1 and beta2",
        "beta1 (0.9) averages the gradients into m; beta2 (0.999) averages their squares into v, and "
        "each corrects its own: m / (1 − beta1**step), v / (1 − beta2**step).",
        _adamw_wrong("swapped"),
    ),
    Mistake(
        "You swapped beta1 and beta2",
        "beta1 (0.9) averages the gradients into m; beta2 (0.999) averages their squares into v.",
        _adamw_wrong("swapped averages"),
    ),
    Mistake(
        "Your bias correction divides by zero at step 1 (it uses step − 1, counting from 0)",
        "the lesson's steps count from 1 (the first update is step 1): divide by 1 − beta1**step.",
        _adamw_wrong("step - 1"),
    ),
    Mistake(
        "Your bias correction uses step + 1",
        "step is already the number of this update, 1 on the first call: divide by 1 − beta1**step "
        "and 1 − beta2**step as they are.",
        _adamw_wrong("step + 1"),
    ),
)

#: Why a step may not change its inputs in place: the lesson keeps earlier parameters.
ADAMW_IN_PLACE = (
    "a training loop may keep earlier parameters (early stopping keeps the best so far), which an "
    "update in place would change behind its back; compute new arrays, param = param - ..., "
    "m = beta1 * m + ..., not param -= ... or m[:] = ...."
)

_ADAMW_RETURNS = numeric_returns(
    "AdamW step",
    [Output("param", "param has"), Output("m", "param has"), Output("v", "param has")],
    rtol=RTOL,
)
_ADAMW_PARAMS = "param, grad, m, v, step, *, learning_rate, beta1, beta2, eps, weight_decay"


def check_adamw_step(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``adamw_step(param, grad, m, v, step, *, learning_rate, beta1, beta2, eps,
    weight_decay)`` against :func:`attnlib.optim.adamw_step`.

    The cases: step 1 from zero moments, steps 2 to 4 carrying the state of the steps before, and
    step 50 with a large learning rate and decay (where decaying after the update shows). The
    function must not change its inputs in place (:data:`ADAMW_IN_PLACE`).

    Parameters
    ----------
    answer : callable
        → ``(param, m, v)``, new arrays of param's shape.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    return judge_function(
        answer, _adamw_cases(), ADAMW_MISTAKES, _ADAMW_RETURNS, keep=keep, in_place=ADAMW_IN_PLACE
    )


def _adamw_case(
    state: tuple[np.ndarray, np.ndarray, np.ndarray], grad: np.ndarray, step: int, settings: dict, case: str,
    label: str,
) -> FunctionExercise:  # fmt: skip
    param, m, v = state
    right = optim.adamw_step(param, grad, m, v, step, **settings)
    return FunctionExercise("my_adamw_step", _ADAMW_PARAMS, "numbers", (param, grad, m, v, step), right, case,
                            label, settings)  # fmt: skip


@cache
def _adamw_cases() -> tuple[FunctionExercise, ...]:
    rng = np.random.default_rng(182)
    gradient = lambda: rng.normal(0, 0.1, (3, 4)) * np.where(rng.random((3, 4)) < 0.25, 1e-6, 1.0)  # noqa: E731
    usual = {"learning_rate": 1e-2, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.1}
    state = (rng.normal(0, 1, (3, 4)), np.zeros((3, 4)), np.zeros((3, 4)))
    cases = [_adamw_case(state, gradient(), 1, usual, "step 1 (m and v zero)", "step 1")]
    for step in (2, 3, 4):
        state = cases[-1].right  # type: ignore[assignment]
        cases.append(_adamw_case(state, gradient(), step, usual, f"step {step}, carrying the state of step "
                                 f"{step - 1}", "steps 2 to 4 in a row"))  # fmt: skip
    large = {"learning_rate": 0.1, "beta1": 0.8, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.5}
    state = (rng.normal(0, 1, (2, 5)), np.zeros((2, 5)), np.zeros((2, 5)))
    for step in range(1, 50):
        state = optim.adamw_step(*state[:1], rng.normal(0, 0.1, (2, 5)), *state[1:], step, **large)
    last = "step 50, learning_rate 0.1, weight_decay 0.5, betas 0.8 and 0.95"
    cases.append(_adamw_case(state, rng.normal(0, 0.1, (2, 5)), 50, large, last, "step 50"))
    return tuple(cases)


# --- which parameters decay ----------------------------------------------------------------------------


#: What a learner's rule may decide instead of "every array of two or more axes".
DECAYS_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You decay every parameter",
        "gains and biases (one axis) do not decay: pulling a LayerNorm's gain toward 0 shrinks its "
        "output, and a bias has nothing to regularise; matrices and embeddings (two axes) do.",
        lambda ex: True,
    ),
    Mistake(
        "You decay no parameter",
        "matrices and embeddings, every array of two or more axes, decay: array.ndim >= 2.",
        lambda ex: False,
    ),
    Mistake(
        "You decay the W matrices only: the embeddings escape",
        "embed and unembed are matrices too (vocab_size × d_model) and decay: decide by the array's "
        "number of axes, array.ndim >= 2, not by its name.",
        lambda ex: "W_" in ex.args[0],
    ),
    Mistake(
        'You spared the names with "bias" only: the LayerNorm gains (and the MLP\'s b_in, b_out) decay',
        "a gain is one number per feature, as a bias is, and does not decay either: decide by the array's "
        "number of axes, array.ndim >= 2.",
        lambda ex: "bias" not in ex.args[0],
    ),
)


def check_decays(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``decays(name, array)`` against :func:`attnlib.optim.decays` on every
    parameter of a decoder with LayerNorm, an MLP and RoPE.

    Parameters
    ----------
    answer : callable
        ``answer(name, array)`` → ``True`` when weight decay applies (matrices and embeddings).
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    return judge_function(answer, _decays_cases(), DECAYS_MISTAKES, _DECAYS_RETURNS, keep=keep)


_DECAYS_RETURNS = numeric_returns("answer", [Output("its answer", kind="truth")])


def _kind_of_parameter(name: str, array: np.ndarray) -> str:
    if array.ndim >= 2:
        return "the embeddings" if "embed" in name else "the matrices"
    return "the LayerNorm gains and biases" if name.startswith("ln") or ".ln" in name else "the MLP's biases"


@cache
def _decays_cases() -> tuple[FunctionExercise, ...]:
    config = DecoderConfig(
        vocab_size=12, n_ctx=8, d_model=8, n_heads=2, n_layers=1, d_mlp=16, layer_norm=True, positions="rope"
    )
    return tuple(
        FunctionExercise(
            "my_decays", "name, array", "truth", (name, array), optim.decays(name, array),
            f'the parameter "{name}" of shape {shape_text(array.shape)}', _kind_of_parameter(name, array),
        )
        for name, array in init_parameters(config, 0).items()
    )  # fmt: skip


# --- 5. the learning-rate schedule ---------------------------------------------------------------------


def _schedule(step: int, peak: float, warmup: int, total: int, floor: float, how: str = "right") -> float:
    """The learning rate after ``step`` updates, right or with a mistake (``how``)."""
    if how == "no floor":
        floor = 0.0
    if step < warmup and how != "no warmup":
        return peak * (step if how == "warmup from 0" else step + 1) / warmup
    if step >= total and how != "turns back up":
        return floor
    unshifted = how in ("no warmup", "unshifted")  # the cosine counted from step 0, over total
    start, span = (0, total) if unshifted else (warmup, total - (how != "over total") * warmup)
    progress = (step - start) / span
    if how == "linear":
        return floor + (peak - floor) * (1 - progress)
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * progress))


def _lr_wrong(how: str) -> Callable[[FunctionExercise], float]:
    return lambda ex: _schedule(*ex.args, **ex.kwargs, how=how)  # type: ignore[arg-type]


#: What a learner's schedule may give instead of attnlib's warmup and cosine.
LEARNING_RATE_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "Your warmup starts from 0 (the first step learns nothing)",
        "step counts from 0, and the first update should already move: peak · (step + 1) / warmup, "
        "which reaches peak at step warmup − 1.",
        _lr_wrong("warmup from 0"),
    ),
    Mistake(
        "Your cosine runs over total steps, not over the total − warmup after the warmup",
        "the cosine starts at step warmup and reaches floor at step total: "
        "cos(π (step − warmup) / (total − warmup)).",
        _lr_wrong("over total"),
    ),
    Mistake(
        "Your cosine decays to 0, not to floor",
        "floor + ½ (peak − floor)(1 + cos(…)) ends at floor.",
        _lr_wrong("no floor"),
    ),
    Mistake(
        "Your cosine turns back up after total",
        "from step total on, the rate stays at floor: the cosine's second half would raise it again.",
        _lr_wrong("turns back up"),
    ),
    Mistake(
        "Your decay is linear, not a cosine",
        "floor + ½ (peak − floor)(1 + cos(π (step − warmup) / (total − warmup))): it stays near peak, then "
        "falls, then flattens near floor.",
        _lr_wrong("linear"),
    ),
    Mistake(
        "Your cosine starts at step 0, under the warmup, not at step warmup",
        "after the warmup the cosine starts from peak: cos(π (step − warmup) / (total − warmup)), "
        "so that at step warmup the rate is peak and at step total it is floor.",
        _lr_wrong("unshifted"),
    ),
    Mistake(
        "You left out the warmup",
        "for step < warmup the rate rises linearly, peak · (step + 1) / warmup, so that the first updates, "
        "made while Adam's moments are still poor estimates, are small; the cosine starts at warmup.",
        _lr_wrong("no warmup"),
    ),
)

_LR_RETURNS = numeric_returns("learning rate", [Output("the learning rate", kind="number")], rtol=RTOL)


def check_learning_rate(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``learning_rate(step, *, peak, warmup, total, floor)`` against
    :func:`attnlib.optim.learning_rate_at` at every step of three schedules, and past their end.

    Parameters
    ----------
    answer : callable
        → the learning rate after ``step`` updates (from 0): a linear warmup to ``peak``, then a
        cosine to ``floor`` at ``total``, then ``floor``.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    return judge_function(answer, _learning_rate_cases(), LEARNING_RATE_MISTAKES, _LR_RETURNS, keep=keep)


@cache
def _learning_rate_cases() -> tuple[FunctionExercise, ...]:
    schedules = [
        ({"peak": 1.0, "warmup": 10, "total": 100, "floor": 0.1}, 120, "a warmup of 10 in 100 steps"),
        ({"peak": 6e-4, "warmup": 0, "total": 50, "floor": 6e-5}, 60, "no warmup"),
        ({"peak": 3e-3, "warmup": 5, "total": 20, "floor": 0.0}, 25, "a floor of 0"),
    ]
    return tuple(
        FunctionExercise(
            "my_learning_rate", "step, *, peak, warmup, total, floor", "number", (step,),
            optim.learning_rate_at(step, **schedule), f"step {step} of the schedule {schedule}", label,
            schedule,
        )
        for schedule, steps, label in schedules
        for step in range(steps)
    )  # fmt: skip


# --- 6. clipping ---------------------------------------------------------------------------------------


def _clip(ex: FunctionExercise, how: str = "right") -> tuple[dict[str, np.ndarray], float]:
    """Clipping by the global norm, right or with a mistake (``how``)."""
    grads, max_norm = ex.args
    power = {"L1": 1}.get(how, 2)
    total = sum(float((np.abs(g) ** power).sum()) for g in grads.values())
    norm = total if how in ("L1", "no root") else math.sqrt(total)
    if how == "each":
        coefs = {k: min(1.0, max_norm / (float(np.sqrt((g * g).sum())) + 1e-6)) for k, g in grads.items()}
    else:
        coef = max_norm / (norm + 1e-6)
        coefs = dict.fromkeys(grads, coef if how == "scale up" else min(coef, 1.0))
    clipped = {k: g * coefs[k] for k, g in grads.items()}
    after = math.sqrt(sum(float((g * g).sum()) for g in clipped.values()))
    return clipped, after if how == "norm after" else norm


def _clip_wrong(how: str) -> Callable[[FunctionExercise], tuple[dict[str, np.ndarray], float]]:
    return lambda ex: _clip(ex, how)


#: What a learner's clipping may return instead of attnlib's.
CLIP_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You clipped each array by its own norm",
        "one factor for all: the global norm is √(Σ of every entry² of every array), and every gradient "
        "is scaled by the same max_norm / (norm + 1e-6), so the update keeps its direction.",
        _clip_wrong("each"),
    ),
    Mistake(
        "You scaled small gradients up to max_norm",
        "clip only when the norm is above max_norm: scale by max_norm / (norm + 1e-6) only where that is "
        "below 1, else leave the gradients as they are.",
        _clip_wrong("scale up"),
    ),
    Mistake(
        "You returned the norm after clipping",
        "return the norm before clipping, as torch.nn.utils.clip_grad_norm_ does: it is what a training "
        "log watches for spikes (section 6 plots the long run's).",
        _clip_wrong("norm after"),
    ),
    Mistake(
        "You took the L1 norm (the sum of |g|)",
        "the global norm is the square root of the sum of the squares of every entry.",
        _clip_wrong("L1"),
    ),
    Mistake(
        "You left out the square root",
        "the global norm is √(Σ g²), not Σ g².",
        _clip_wrong("no root"),
    ),
)

_CLIP_RETURNS = numeric_returns(
    "clipped gradients and norm",
    [Output("grads", "the grads given have", kind="arrays"), Output("norm", kind="number")],
    rtol=RTOL,
)  # fmt: skip


def check_clip(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``clip(grads, max_norm)`` against :func:`attnlib.optim.clip_by_global_norm`.

    Changing ``grads`` in place is allowed: the lesson's loop reads the gradients only through
    what the function returns, and ``torch.nn.utils.clip_grad_norm_`` clips in place too (the check
    gives the function copies).

    Parameters
    ----------
    answer : callable
        ``answer(grads, max_norm)`` → ``(grads, norm)``: a dict of the gradients scaled by one factor
        ``max_norm / (norm + 1e-6)`` where that is below 1, and their global norm before clipping.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    return judge_function(answer, _clip_cases(), CLIP_MISTAKES, _CLIP_RETURNS, keep=keep)


@cache
def _clip_cases() -> tuple[FunctionExercise, ...]:
    rng = np.random.default_rng(183)
    grads = {"embed": rng.normal(0, 1, (5, 4)), "layer0.W_q": rng.normal(0, 0.2, (4, 4)),
             "ln_final.gain": rng.normal(0, 3, 4)}  # fmt: skip
    inputs = [(grads, 1.0, "above max_norm"), (grads, 100.0, "below max_norm"),
              ({"W": rng.normal(0, 1, (3, 3))}, 0.5, "a single array")]  # fmt: skip
    return tuple(
        FunctionExercise(
            "my_clip", "grads, max_norm", "numbers", (g, max_norm), optim.clip_by_global_norm(g, max_norm),
            f"gradients {', '.join(f'{k} {shape_text(v.shape)}' for k, v in g.items())} with max_norm "
            f"{max_norm:g} ({label})", label,
        )
        for g, max_norm, label in inputs
    )  # fmt: skip


# --- 7. dropout ----------------------------------------------------------------------------------------

#: The kept fraction of the large case may be off 1 − rate by at most this many binomial standard
#: deviations √(rate (1 − rate) / size): a right dropout is refused with probability under 2e-9.
DROPOUT_SIGMAS = 6.0


@dataclass(frozen=True)
class Dropped:
    """One call of the learner's ``my_dropout``: its input and rate, and what it returned."""

    x: np.ndarray
    rate: float
    y: np.ndarray
    keep: np.ndarray

    def scaled(self, mask: np.ndarray, factor: float) -> bool:
        """Whether ``y`` is ``x · mask · factor``."""
        return bool(np.allclose(self.y, self.x * mask * factor, rtol=RTOL, atol=0.0))

    @property
    def off(self) -> float:
        """How many binomial standard deviations the kept fraction is from 1 − rate."""
        sd = math.sqrt(self.rate * (1 - self.rate) / self.x.size)
        if not sd:  # rate 0: every entry is kept
            return 0.0 if self.keep.all() else math.inf
        return abs(float(self.keep.mean()) - (1 - self.rate)) / sd


#: What a learner's dropout may show instead of ``x · keep / (1 − rate)`` with P(keep) = 1 − rate.
DROPOUT_MISTAKES: tuple[Symptom, ...] = (
    Symptom(
        "You did not rescale the kept entries by 1 / (1 − rate)",
        "without it the expected activation shrinks to (1 − rate) · x during training, and the layers after "
        "see larger ones at inference, where nothing is dropped: y = x * keep / (1 - rate).",
        lambda d: d.rate > 0 and d.scaled(d.keep, 1.0) and not d.scaled(d.keep, 1 / (1 - d.rate)),
    ),
    Symptom(
        "You multiplied by (1 − rate) instead of dividing",
        "the kept entries are divided by 1 − rate, so that each keeps its expected value: "
        "y = x * keep / (1 - rate).",
        lambda d: d.rate > 0 and d.scaled(d.keep, 1 - d.rate),
    ),
    Symptom(
        "The mask you return is not the one you applied (keep is True where x is kept)",
        "return keep = the entries kept, True where y is x / (1 − rate); dropout_backward needs it.",
        lambda d: d.rate > 0 and d.scaled(~d.keep, 1 / (1 - d.rate)),
    ),
    Symptom(
        "Your y is not x · keep / (1 − rate) for the keep you return",
        "zero the entries where keep is False, and divide the others by 1 − rate.",
        lambda d: not d.scaled(d.keep, 1 / (1 - d.rate)),
    ),
    Symptom(
        "You kept each entry with probability rate instead of 1 − rate",
        "rate is the chance of being dropped: keep = rng.random(x.shape) >= rate.",
        lambda d: d.x.size > 1000 and d.off > DROPOUT_SIGMAS and abs(float(d.keep.mean()) - d.rate) < 0.01,
    ),
    Symptom(
        "Your kept fraction is not 1 − rate",
        "keep each entry, independently, with probability 1 − rate: keep = rng.random(x.shape) >= rate.",
        lambda d: d.off > DROPOUT_SIGMAS,
    ),
)

#: Seen in three masks (the same seed twice, then another seed): the generator passed in is not used.
DROPOUT_RNG_IGNORED = Symptom(
    "You ignored rng",
    "draw the mask with the generator passed in (rng.random(x.shape)), not np.random's own state or a "
    "generator of your own: then the same seed drops the same entries, and a run can be repeated.",
    RNG_IGNORED.seen,
)

_DROPOUT_RETURNS = numeric_returns("dropout", [Output("y", "x has"), Output("keep", "x has", kind="mask")])


def _dropout_case(shape: tuple[int, ...], rate: float, seed: int, label: str) -> FunctionExercise:
    x = np.random.default_rng(184).normal(0, 1, shape)
    return FunctionExercise(
        "my_dropout", "x, rate, rng", "dropout", (x, rate, np.random.default_rng(seed)), None,
        f"x of shape {shape_text(shape)} with rate {rate:g}", label,
    )  # fmt: skip


def _dropout_cases() -> tuple[FunctionExercise, ...]:
    """The cases, each with a generator of its own seed, new at every call (a generator is used up)."""
    return (
        _dropout_case((3, 4), 0.5, 0, "a small x"),
        _dropout_case((200, 500), 0.3, 1, "100,000 entries at rate 0.3"),
        _dropout_case((2, 3, 4), 0.0, 2, "rate 0"),
    )


def _dropped(answer: Callable, ex: FunctionExercise) -> Dropped | CheckResult:
    read = call(answer, ex, _DROPOUT_RETURNS)
    if isinstance(read, CheckResult):
        return read
    y, keep = read  # type: ignore[misc]
    x, rate, _ = ex.args
    for name, array in (("y", y), ("keep", keep)):
        if array.shape != x.shape:
            return failed(
                f"Wrong shape: {ex.name} returned {name} of shape {shape_text(array.shape)}, but x has shape "
                f"{shape_text(x.shape)}."
            )
    return Dropped(x, rate, y, keep)


def _dropout_verdict(answer: Callable) -> CheckResult | None:
    masks = []
    cases = _dropout_cases()
    # seeds 0, 1, 2, then 1 again and 3: 100,000 entries each, so no two masks are equal by chance
    for ex in (*cases, _dropout_cases()[1], _dropout_case((200, 500), 0.3, 3, "")):
        dropped = _dropped(answer, ex)
        if isinstance(dropped, CheckResult):
            return dropped
        symptom = _first_seen(DROPOUT_MISTAKES, dropped)
        if symptom is not None:
            return failed(f"{symptom.message()} Seen on {ex.case}.")
        masks.append(dropped.keep)
    if DROPOUT_RNG_IGNORED.seen([masks[1], masks[3], masks[4]]):
        return failed(DROPOUT_RNG_IGNORED.message())
    return None


def check_dropout(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``dropout(x, rate, rng)`` by what its masks must satisfy.

    attnlib's is :func:`attnlib.decoder.block.dropout`. Its masks are random, so the check reads the
    learner's: ``y = x · keep / (1 − rate)`` for the ``keep`` it returns, of x's shape; on 100,000
    entries the kept fraction within :data:`DROPOUT_SIGMAS` binomial standard deviations of
    ``1 − rate``; rate 0 leaves x as it is; the same seed gives the same mask, another seed another.

    Parameters
    ----------
    answer : callable
        ``answer(x, rate, rng)`` → ``(y, keep)``, ``keep`` True where x is kept.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    result = not_a_function(answer, "my_dropout", "x, rate, rng")
    if result is None:
        result = _dropout_verdict(answer)  # type: ignore[arg-type]
    if result is None:
        result = passed(
            f"Correct: my_dropout keeps each entry with probability 1 − rate and divides the kept ones by "
            f"1 − rate, on {_listed_labels(_dropout_cases())}; the same seed gives the same mask."
        )
    return kept(answer, "my_dropout", result, keep)


#: What a learner's dropout backward pass may return instead of ``d_out · keep / (1 − rate)``.
DROPOUT_BACKWARD_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "Your backward pass ignores the mask",
        "a dropped entry did not reach the output, so no gradient reaches it: "
        "d_x = d_out * keep / (1 - rate).",
        lambda ex: ex.args[0] / (1 - ex.args[2]),
    ),
    Mistake(
        "Your backward pass ignores the mask",
        "a dropped entry did not reach the output, so no gradient reaches it: "
        "d_x = d_out * keep / (1 - rate).",
        lambda ex: ex.args[0],
    ),
    Mistake(
        "Your backward pass is not rescaled by 1 / (1 − rate)",
        "the forward pass divided the kept entries by 1 − rate, so their gradients are divided too.",
        lambda ex: ex.args[0] * ex.args[1],
    ),
)

_DROPOUT_BACKWARD_RETURNS = numeric_returns("gradient", [Output("d_x", "d_out has")], rtol=RTOL)


def check_dropout_backward(answer: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``dropout_backward(d_out, keep, rate)`` against
    :func:`attnlib.decoder.block.dropout_backward`.

    Parameters
    ----------
    answer : callable
        ``answer(d_out, keep, rate)`` → ``d_x``, of d_out's shape.
    keep : dict, optional
        The lesson's record of the learner's functions that passed.
    """
    return judge_function(
        answer, _dropout_backward_cases(), DROPOUT_BACKWARD_MISTAKES, _DROPOUT_BACKWARD_RETURNS, keep=keep
    )


@cache
def _dropout_backward_cases() -> tuple[FunctionExercise, ...]:
    rng = np.random.default_rng(185)
    cases = []
    for shape, rate, label in (
        ((4, 6), 0.25, "rate 0.25"),
        ((2, 3, 5), 0.5, "rate 0.5"),
        ((3, 4), 0.0, "rate 0"),
    ):
        d_out = rng.normal(0, 1, shape)
        mask = dropout(np.ones(shape), rate, rng)[1]
        cases.append(
            FunctionExercise(
                "my_dropout_backward", "d_out, keep, rate", "numbers", (d_out, mask, rate),
                dropout_backward(d_out, mask, rate), f"d_out of shape {shape_text(shape)} with rate {rate:g}",
                label,
            )
        )  # fmt: skip
    return tuple(cases)
