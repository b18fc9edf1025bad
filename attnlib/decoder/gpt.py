"""Training a GPT on a stream of tokens: batches, the loss on every position, AdamW, evaluation.

Lesson 18's loop, nanoGPT's ``train.py`` in a few lines: each step draws ``batch_size`` random
windows of the token stream (targets = inputs shifted by one), runs the decoder forward (with
dropout when asked), takes the cross-entropy and its gradient, runs the backward pass by hand,
clips the gradients by their global norm and lets :class:`attnlib.optim.AdamW` move every
parameter with the learning rate of :func:`attnlib.optim.learning_rate_at` (warmup, then cosine).
Every ``eval_every`` steps it measures the loss on fixed windows of the training and the validation
text, without dropout, and keeps the parameters where validation was lowest (early stopping).

The batches in NumPy, as a learner writes them (lesson 18 · 1):

>>> import numpy as np
>>> ids, rng = np.arange(100), np.random.default_rng(0)
>>> inputs, targets = sample_batch(ids, 4, 8, rng)
>>> inputs.shape, bool((targets == inputs + 1).all()), int(inputs.max()) < 100 - 1
((4, 8), True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.decoder.config import (
    DecoderConfig,
    as_config,
    as_dropout,
    as_mask_generator,
    check_parameters,
    check_tokens,
    init_parameters,
)
from attnlib.decoder.forward_pass import forward_steps
from attnlib.decoder.training import backward_pass
from attnlib.optim import AdamW, clip_by_global_norm, global_norm, learning_rate_at
from attnlib.training import cross_entropy, log_softmax
from attnlib.validation import as_positive_int, as_real, as_seed

__all__ = [
    "GPTRun",
    "TrainingSettings",
    "evaluation_windows",
    "loss_and_gradients",
    "sample_batch",
    "train_gpt",
    "windows_loss",
]


def _stream(ids: npt.ArrayLike, n_ctx: int, name: str) -> np.ndarray:
    """``ids`` as a 1-D integer array long enough for one window of ``n_ctx`` inputs and its targets."""
    array = np.asarray(ids)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-D array of token ids, got {array.dtype} of shape {array.shape}")
    if len(array) < n_ctx + 1:
        raise ValueError(
            f"{name} has {len(array)} tokens: a window of {n_ctx} and its targets need {n_ctx + 1}"
        )
    return array


def sample_batch(
    ids: npt.ArrayLike, batch_size: int, n_ctx: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``batch_size`` random windows of the token stream, and the same windows one token later.

    Lesson 18 · 1. The data.

    Parameters
    ----------
    ids : (N,) integers
        The token stream (at least ``n_ctx + 1`` tokens).
    batch_size, n_ctx : int
    rng : numpy.random.Generator

    Returns
    -------
    inputs, targets : (batch_size, n_ctx) integers
        ``targets[b, i] = ids[s_b + i + 1]`` for ``inputs[b, i] = ids[s_b + i]``: every position
        predicts the token after it. Each start ``s_b`` is uniform on ``0 … N − n_ctx − 1``.
    """
    n = as_positive_int(n_ctx, "n_ctx")
    stream = _stream(ids, n, "ids")
    b = as_positive_int(batch_size, "batch_size")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    starts = rng.integers(0, len(stream) - n, size=b)
    window = starts[:, None] + np.arange(n)
    return stream[window], stream[window + 1]


def evaluation_windows(
    ids: npt.ArrayLike, n_ctx: int, count: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fixed windows to measure a loss on: ``count`` evenly spaced ones, or every whole one (``None``).

    Lesson 18 · 5. Train it: the same windows at every evaluation, so two losses compare.

    Returns
    -------
    inputs, targets : (count, n_ctx) integers
    """
    n = as_positive_int(n_ctx, "n_ctx")
    stream = _stream(ids, n, "ids")
    last = len(stream) - n - 1  # the last start whose targets fit
    if count is None:
        starts = np.arange(0, last + 1, n)
    else:
        starts = np.linspace(0, last, as_positive_int(count, "count")).round().astype(int)
    window = starts[:, None] + np.arange(n)
    return stream[window], stream[window + 1]


def windows_loss(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    windows: tuple[np.ndarray, np.ndarray],
    *,
    batch_size: int = 32,
) -> float:
    """The mean next-token loss over every position of ``windows`` (no dropout), in nats.

    Lesson 18 · 5. Train it.
    """
    c = as_config(config)
    p = check_parameters(c, params)
    inputs, targets = _windows(c, *windows)
    return _windows_loss(c, p, inputs, targets, as_positive_int(batch_size, "batch_size"))


def _windows_loss(c: DecoderConfig, p: dict, inputs: np.ndarray, targets: np.ndarray, batch: int) -> float:
    total = 0.0
    for i in range(0, len(inputs), batch):
        log_probs = log_softmax(forward_steps(c, p, inputs[i : i + batch]).logits)
        total -= float(np.take_along_axis(log_probs, targets[i : i + batch, :, None], axis=-1).sum())
    return total / targets.size


def loss_and_gradients(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    inputs: npt.ArrayLike,
    targets: npt.ArrayLike,
    *,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[float, dict[str, np.ndarray]]:
    """The mean loss of every position's prediction of ``targets`` from ``inputs``, and every gradient.

    Lesson 18 · 3. The model: the backward pass by hand (lesson 14's), checked on one entry by a
    finite difference.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    inputs, targets : (B, n) integers
        As :func:`sample_batch` returns them: position ``i`` predicts ``targets[:, i]``.
    dropout : float
        The chance of zeroing an activation (training only); then ``rng`` draws the masks.
    rng : numpy.random.Generator, optional

    Returns
    -------
    loss : float
    grads : dict of str to ndarray
        One per parameter, of its shape and dtype.
    """
    c = as_config(config)
    p = check_parameters(c, params)
    x, y = _windows(c, inputs, targets)
    rate = as_dropout(dropout)
    return _loss_and_gradients(c, p, x, y, rate, as_mask_generator(rng, rate))


def _windows(
    c: DecoderConfig, inputs: npt.ArrayLike, targets: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    x, y = check_tokens(c, inputs, "inputs"), check_tokens(c, targets, "targets")
    if x.shape != y.shape:
        raise ValueError(f"inputs {x.shape} and targets {y.shape} must have the same shape")
    return x, y


def _loss_and_gradients(
    c: DecoderConfig, p: dict, x: np.ndarray, y: np.ndarray, dropout: float, rng: np.random.Generator | None
) -> tuple[float, dict[str, np.ndarray]]:
    run = forward_steps(c, p, x, dropout=dropout, rng=rng)
    loss, d_logits = cross_entropy(run.logits, y)
    return loss, backward_pass(c, p, x, run, d_logits)


@dataclass(frozen=True)
class TrainingSettings:
    """How a GPT is trained (lesson 18); nanoGPT's names where it has them.

    Attributes
    ----------
    steps : int
        Number of updates.
    batch_size : int
        Windows per step.
    learning_rate, min_learning_rate : float
        The peak after warmup, and the floor the cosine decays to at the last step.
    warmup : int
        Steps of linear warmup.
    weight_decay : float
        AdamW's decoupled decay, for the matrices and embeddings only (:func:`attnlib.optim.decays`).
    beta1, beta2 : float
        AdamW's running means.
    clip : float
        The largest global norm of the gradients (0: no clipping).
    dropout : float
        The probability of zeroing an activation during training (0: none).
    eval_every : int
        Measure the training and validation losses every that many steps (and before and after).
    eval_windows : int
        How many fixed windows of each text those losses are measured on.
    seed : int
        Seeds the starting parameters, the batches and (separately) the dropout masks: runs that
        differ only in dropout or weight decay see the same batches.
    """

    steps: int
    batch_size: int = 16
    learning_rate: float = 3e-3
    min_learning_rate: float = 3e-4
    warmup: int = 100
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    clip: float = 1.0
    dropout: float = 0.0
    eval_every: int = 100
    eval_windows: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "eval_every", "eval_windows"):
            as_positive_int(getattr(self, name), name)
        as_positive_int(self.warmup, "warmup", minimum=0)
        as_seed(self.seed)
        for name in ("learning_rate", "min_learning_rate", "weight_decay", "clip"):
            if as_real(getattr(self, name), name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        as_dropout(self.dropout)
        learning_rate_at(
            0, peak=self.learning_rate, warmup=self.warmup, total=self.steps, floor=self.min_learning_rate
        )


@dataclass(frozen=True)
class GPTRun:
    """What :func:`train_gpt` recorded.

    Lesson 18 · 5. Train it.

    Attributes
    ----------
    config : DecoderConfig
    settings : TrainingSettings
    losses : (steps,)
        Each step's batch loss, before its update (with dropout when training has it).
    learning_rates, grad_norms : (steps,)
        Each step's learning rate, and its gradients' global norm before clipping.
    eval_steps : (n_evals,) int
        When the losses below were measured: 0, every ``eval_every`` steps, and the last step.
    train_losses, val_losses : (n_evals,)
        The loss on fixed windows of the training and of the validation text, without dropout.
    params : dict
        The parameters after the last step.
    best_params : dict
        The parameters at the evaluation with the lowest validation loss (early stopping).
    """

    config: DecoderConfig
    settings: TrainingSettings
    losses: np.ndarray
    learning_rates: np.ndarray
    grad_norms: np.ndarray
    eval_steps: np.ndarray
    train_losses: np.ndarray
    val_losses: np.ndarray
    params: dict[str, np.ndarray] = field(repr=False)
    best_params: dict[str, np.ndarray] = field(repr=False)

    @property
    def best_step(self) -> int:
        """The step of :attr:`best_params`."""
        return int(self.eval_steps[np.argmin(self.val_losses)])


def train_gpt(
    config: DecoderConfig,
    train_ids: npt.ArrayLike,
    val_ids: npt.ArrayLike,
    settings: TrainingSettings,
    *,
    params: Mapping[str, npt.ArrayLike] | None = None,
    stop_after: int | None = None,
) -> GPTRun:
    """Train a decoder on next-token prediction over a token stream, nanoGPT's way.

    Lesson 18 · 5. Train it (the learner writes the same loop from its parts); ``tools/train_gpt.py``
    makes the lesson's committed runs with it.

    Parameters
    ----------
    config : DecoderConfig
    train_ids, val_ids : (N,) integers
        The training and the validation token streams.
    settings : TrainingSettings
    params : dict, optional
        Start from these parameters (float32 ones train in float32) instead of
        :func:`init_parameters`'s with ``settings.seed``.
    stop_after : int, optional
        Stop after that many steps of the ``settings.steps`` the schedule is made for (the first
        steps of a longer run, exactly); by default all of them.

    Returns
    -------
    GPTRun

    Raises
    ------
    FloatingPointError
        A step overflowed or made a NaN (the learning rate is too large); the message names the step.
        A learning rate of 1e308 moves every weight by about 1e307 at step 1, still finite, and
        overflows at step 2.
    """
    c = as_config(config)
    if not isinstance(settings, TrainingSettings):
        raise TypeError(f"settings must be a TrainingSettings, got {type(settings).__name__}")
    s = settings
    train_stream, val_stream = _stream(train_ids, c.n_ctx, "train_ids"), _stream(val_ids, c.n_ctx, "val_ids")
    check_tokens(c, train_stream[None, : c.n_ctx], "train_ids")
    check_tokens(c, val_stream[None, : c.n_ctx], "val_ids")
    last = s.steps if stop_after is None else as_positive_int(stop_after, "stop_after", maximum=s.steps)
    p = init_parameters(c, s.seed) if params is None else check_parameters(c, params)
    batches, masks = np.random.default_rng(s.seed), np.random.default_rng([s.seed, 1])
    optimiser = AdamW(s.learning_rate, beta1=s.beta1, beta2=s.beta2, weight_decay=s.weight_decay)
    evaluations = [evaluation_windows(ids, c.n_ctx, s.eval_windows) for ids in (train_stream, val_stream)]
    record: dict[str, list] = {key: [] for key in ("loss", "lr", "norm", "step", "train", "val")}
    best = (np.inf, p)

    def evaluate(step: int, params_now: dict[str, np.ndarray]) -> None:
        nonlocal best
        train_loss, val_loss = (_windows_loss(c, params_now, *w, s.batch_size) for w in evaluations)
        record["step"].append(step)
        record["train"].append(train_loss)
        record["val"].append(val_loss)
        if val_loss < best[0]:
            best = (val_loss, params_now)

    evaluate(0, p)
    for step in range(1, last + 1):
        lr = learning_rate_at(
            step - 1, peak=s.learning_rate, warmup=s.warmup, total=s.steps, floor=s.min_learning_rate
        )
        inputs, targets = sample_batch(train_stream, s.batch_size, c.n_ctx, batches)
        try:
            with np.errstate(over="raise", invalid="raise"):
                loss, grads = _loss_and_gradients(c, p, inputs, targets, s.dropout, masks)
                if s.clip:
                    grads, norm = clip_by_global_norm(grads, s.clip)
                else:
                    norm = global_norm(grads)
                p = optimiser.step(p, grads, learning_rate=lr)
        except FloatingPointError as exc:
            raise FloatingPointError(
                f"training diverged at step {step} ({exc}); try a smaller learning_rate"
            ) from None
        record["loss"].append(loss)
        record["lr"].append(lr)
        record["norm"].append(norm)
        if step % s.eval_every == 0 or step == last:
            evaluate(step, p)
    return GPTRun(
        c,
        s,
        np.array(record["loss"]),
        np.array(record["lr"]),
        np.array(record["norm"]),
        np.array(record["step"]),
        np.array(record["train"]),
        np.array(record["val"]),
        p,
        best[1],
    )
