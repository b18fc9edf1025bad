"""Learning next-token prediction: the loss, its gradient for every parameter, and training with Adam.

The gradients are the chain rule run backwards through the forward pass's steps (lesson 14;
lesson 11 derives the attention's part); :func:`train` feeds them to Adam, with snapshots, a probe
and measurements on the way. Lesson 14 · 2 shows a run (the phase change); lesson 15's model is
another.

The gradient by hand against the loss's slope, on one entry of the unembedding:

>>> import numpy as np
>>> from attnlib.decoder import DecoderConfig, init_parameters
>>> config = DecoderConfig(vocab_size=5, n_ctx=6, d_model=8, n_heads=2, n_layers=1)
>>> params, tokens = init_parameters(config, seed=0), np.array([[1, 2, 3, 1, 2, 3]])
>>> loss, grads = loss_and_gradients(config, params, tokens)
>>> nudged = {**params, "unembed": params["unembed"] + 1e-6 * (np.arange(40).reshape(8, 5) == 7)}
>>> slope = (loss_and_gradients(config, nudged, tokens)[0] - loss) / 1e-6
>>> bool(np.isclose(slope, grads["unembed"][1, 2], rtol=1e-4, atol=1e-8))
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.backward import steps_backward
from attnlib.decoder.block import dropout_backward, gelu_backward, layer_norm_backward
from attnlib.decoder.config import (
    DecoderConfig,
    as_ablations,
    as_config,
    as_dropout,
    as_mask_generator,
    as_window,
    check_parameters,
    check_tokens,
    init_parameters,
)
from attnlib.decoder.forward_pass import ForwardSteps, forward_steps
from attnlib.multihead import merge_heads, split_heads
from attnlib.positions import rope
from attnlib.training import Adam, cross_entropy, log_softmax
from attnlib.validation import as_positive_int, as_seed, is_number

__all__ = [
    "Batches",
    "DecoderRun",
    "backward_pass",
    "loss_and_d_logits",
    "loss_and_gradients",
    "next_token_losses",
    "token_losses",
    "train",
]


def loss_and_d_logits(logits: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of positions 0 … n−2 against tokens 1 … n−1, and d(loss)/d(logits).

    Lesson 14 · 1: the loss the model learns on.
    """
    d_logits = np.zeros_like(logits)  # the last position predicts nothing: no loss, no gradient
    loss, d_logits[:, :-1] = cross_entropy(logits[:, :-1], t[:, 1:])
    return loss, d_logits


def backward_pass(
    c: DecoderConfig, p: dict[str, np.ndarray], t: np.ndarray, run: ForwardSteps, d_logits: np.ndarray
) -> dict[str, np.ndarray]:
    """Every parameter's gradient from ``d_logits``, the chain rule run backwards through ``run``.

    Lesson 14: the model's gradients by hand (lesson 11 derives the attention's); lesson 18 adds
    dropout's, through the masks ``run`` drew.
    """
    g: dict[str, np.ndarray] = {"unembed": _matmul_grad(run.final, d_logits)}
    dx = d_logits @ p["unembed"].T  # (B, n, d_model)
    d_pos_attention = 0.0  # the positions' gradient through the queries and keys (positions="attention")
    if c.layer_norm:
        dx, g["ln_final.gain"], g["ln_final.bias"] = layer_norm_backward(run.final_norm, dx)
    for layer in reversed(range(c.n_layers)):
        name, kept = f"layer{layer}.", run.layers[layer]
        if c.d_mlp:  # x = x + dropout(GELU(m W_in + b_in) W_out + b_out)
            dw = dropout_backward(dx, kept.mlp_keep, run.dropout)  # the write's gradient
            g[name + "W_out"], g[name + "b_out"] = _matmul_grad(kept.hidden, dw), dw.sum(axis=(0, 1))
            d_pre = gelu_backward(kept.pre_act, dw @ p[name + "W_out"].T)
            g[name + "W_in"], g[name + "b_in"] = _matmul_grad(kept.mlp_in, d_pre), d_pre.sum(axis=(0, 1))
            dm = d_pre @ p[name + "W_in"].T
            if c.layer_norm:
                dm, g[name + "ln_mlp.gain"], g[name + "ln_mlp.bias"] = layer_norm_backward(kept.mlp_norm, dm)
            dx = dx + dm
        # x = x + dropout(z W_o), z = the heads' outputs side by side
        dw = dropout_backward(dx, kept.attn_keep, run.dropout)
        g[name + "W_o"] = _matmul_grad(kept.z, dw)
        dz = split_heads(dw @ p[name + "W_o"].T, c.n_heads)  # (B, H, n, d_head)
        dQ, dK, dV = steps_backward(kept.steps, kept.Q, kept.K, kept.V, dz)
        if c.group_size > 1:  # a key/value head served group_size query heads: their gradients add
            dK = dK.reshape(dK.shape[0], c.kv_heads, c.group_size, *dK.shape[2:]).sum(axis=2)
            dV = dV.reshape(dV.shape[0], c.kv_heads, c.group_size, *dV.shape[2:]).sum(axis=2)
        if c.positions == "rope":  # a rotation's gradient is the inverse rotation: by −position
            back = -run.key_positions
            dQ, dK = rope(dQ, back), rope(dK, back)
        d_qk_in = 0.0
        for w, d_proj in (("W_q", dQ), ("W_k", dK)):
            d_flat = merge_heads(d_proj)  # (B, n, heads·d_head)
            g[name + w] = _matmul_grad(kept.qk_in, d_flat)
            d_qk_in = d_qk_in + d_flat @ p[name + w].T
        if c.positions == "attention":  # qk_in = a + positions
            d_pos_attention = d_pos_attention + d_qk_in.sum(axis=0)
        d_flat = merge_heads(dV)
        g[name + "W_v"] = _matmul_grad(kept.attn_in, d_flat)
        da = d_qk_in + d_flat @ p[name + "W_v"].T
        if c.layer_norm:
            da, g[name + "ln_attn.gain"], g[name + "ln_attn.bias"] = layer_norm_backward(kept.attn_norm, da)
        dx = dx + da
    dx = dropout_backward(dx, run.embed_keep, run.dropout)  # x = dropout(embed[t] (+ pos_embed))
    d_embed = np.zeros_like(p["embed"])
    np.add.at(d_embed, t, dx)  # each occurrence of a token adds its position's gradient
    g["embed"] = d_embed
    if c.positions != "rope":
        g["pos_embed"] = np.zeros_like(p["pos_embed"])
        g["pos_embed"][: t.shape[1]] = d_pos_attention if c.positions == "attention" else dx.sum(axis=0)
    return {name: g[name] for name in p}


def loss_and_gradients(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    tokens: npt.ArrayLike,
    *,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[float, dict[str, np.ndarray]]:
    """The mean next-token cross-entropy on ``tokens`` and its gradient for every parameter.

    Lesson 14: its model's gradients by hand, checked against PyTorch's autograd in the tests
    (lesson 11 derives the attention's); lesson 18 trains with dropout.

    Positions ``0 … n−2`` predict tokens ``1 … n−1`` (``n ≥ 2``); the loss is their mean over
    the batch and the positions. The gradients are the backward pass written out (the attention
    through :func:`attnlib.backward.steps_backward`), in the parameters' dtype: float32 when
    every parameter is float32, else float64 (:func:`check_parameters`).

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    tokens : (B, n) or (n,) integers
    dropout : float
        Dropout's rate, ``0 ≤ dropout < 1``, on the embeddings and on every attention's and
        MLP's write (:func:`~attnlib.decoder.forward_pass.forward_steps`); the loss and the
        gradients are then those of the model with the masks drawn.
    rng : numpy.random.Generator, optional
        Draws the masks; needed when ``dropout > 0`` (the same seed draws the same masks).

    Returns
    -------
    loss : float
    grads : dict of str to ndarray
        One entry per parameter, under its name and of its shape.
    """
    c = as_config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens)
    if t.shape[1] < 2:
        raise ValueError(f"tokens need at least 2 positions for a next-token loss, got shape {t.shape}")
    rate = as_dropout(dropout)
    return _loss_and_gradients(c, p, t, rate, as_mask_generator(rng, rate))


def _loss_and_gradients(
    c: DecoderConfig, p: dict[str, np.ndarray], t: np.ndarray, rate: float, rng: np.random.Generator | None
) -> tuple[float, dict[str, np.ndarray]]:
    run = forward_steps(c, p, t, dropout=rate, rng=rng)
    loss, d_logits = loss_and_d_logits(run.logits, t)
    return loss, backward_pass(c, p, t, run, d_logits)


def next_token_losses(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    tokens: npt.ArrayLike,
    *,
    ablate: Iterable[tuple[int, int]] = (),
    window: int | None = None,
    sinks: int = 0,
) -> np.ndarray:
    """The loss of every prediction: ``−ln p(tokens[b, i + 1])`` from position ``i``.

    Lesson 14 · 1 and · 4 (the loss of each half, heads ablated); lesson 15 · 4 (with a window
    and sinks).

    Parameters
    ----------
    config, params, tokens, ablate, window, sinks
        As in :func:`forward`; ``n ≥ 2``.

    Returns
    -------
    (B, n − 1)
        Their mean is :func:`loss_and_gradients`'s loss (without ablation and window).
    """
    c = as_config(config)
    p = check_parameters(c, params)
    t = check_tokens(c, tokens, any_length=True)
    if t.shape[1] < 2:
        raise ValueError(f"tokens need at least 2 positions for a next-token loss, got shape {t.shape}")
    w, s = as_window(window, sinks)
    return token_losses(forward_steps(c, p, t, ablate=as_ablations(c, ablate), window=w, sinks=s).logits, t)


def token_losses(logits: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The next-token loss of each prediction, ``−log p(t[:, i + 1])`` at position i: (B, n − 1).

    Lesson 14 · 1. The task: sequences that repeat (the loss of each prediction).
    """
    log_probs = log_softmax(logits[:, :-1])
    return -np.take_along_axis(log_probs, t[:, 1:, None], axis=-1)[..., 0]


def _matmul_grad(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    """The gradient of ``W`` in ``x W`` summed over every row: ``xᵀ d_out`` over batch and positions."""
    return x.reshape(-1, x.shape[-1]).T @ d_out.reshape(-1, d_out.shape[-1])


@dataclass(frozen=True)
class DecoderRun:
    """What :func:`train` recorded.

    Lesson 14 · 2. The phase change.

    Attributes
    ----------
    config : DecoderConfig
    losses : (steps,)
        The mean loss of each step's batch, before that step's update.
    position_losses : (steps, n − 1)
        The same loss per predicted position (position ``i`` predicts token ``i + 1``), the mean
        over the batch: the loss on any part of the sequence, step by step.
    snapshot_steps : (n_snapshots,) int
        The steps whose parameters were saved (0 = before training, the last = after training).
    snapshots : list of dict
        The parameters after that many updates.
    probe : (n,) int or None
        A fixed sequence whose attention weights were recorded at each snapshot.
    probe_weights : (n_snapshots, n_layers, n_heads, n, n) or None
        Every head's weights on ``probe`` at each snapshot.
    measurements : (steps, ...) or None
        What ``measure`` returned at each step, before that step's update.
    """

    config: DecoderConfig
    losses: np.ndarray
    position_losses: np.ndarray
    snapshot_steps: np.ndarray
    snapshots: list[dict[str, np.ndarray]] = field(repr=False)
    probe: np.ndarray | None = None
    probe_weights: np.ndarray | None = field(default=None, repr=False)
    measurements: np.ndarray | None = field(default=None, repr=False)

    @property
    def params(self) -> dict[str, np.ndarray]:
        """The parameters after the last step."""
        return self.snapshots[-1]

    def parameters_at(self, step: int) -> dict[str, np.ndarray]:
        """The saved parameters after ``step`` updates (one of ``snapshot_steps``)."""
        matches = np.flatnonzero(self.snapshot_steps == step) if is_number(step, whole=True) else []
        if len(matches) == 0:
            raise ValueError(f"step {step!r} was not saved; saved steps: {self.snapshot_steps.tolist()}")
        return self.snapshots[int(matches[0])]


Batches = Callable[[np.random.Generator], npt.ArrayLike] | Iterable[npt.ArrayLike]


def train(
    config: DecoderConfig,
    batches: Batches,
    *,
    steps: int,
    learning_rate: float = 1e-3,
    seed: int = 0,
    snapshot_every: int = 0,
    probe: npt.ArrayLike | None = None,
    params: Mapping[str, npt.ArrayLike] | None = None,
    measure: Callable[[dict[str, np.ndarray]], npt.ArrayLike] | None = None,
    dropout: float = 0.0,
) -> DecoderRun:
    """Train with Adam on next-token prediction, one batch per step.

    Lesson 14 · 2 shows a run of it (``tools/train_induction.py``); lesson 15's model is another
    (``tools/train_decoder.py``).

    Parameters
    ----------
    config : DecoderConfig
    batches : callable or iterable
        ``batches(rng)`` returns a token batch (B, n), drawn with the run's generator (seeded by
        ``seed``); or an iterable that yields one batch per step.
    steps : int
        Number of updates, at most 10⁷.
    learning_rate : float
        Adam's step size (:class:`attnlib.training.Adam`).
    seed : int
        Seed of the starting parameters (:func:`init_parameters`) and of ``rng``.
    snapshot_every : int
        Save the parameters every that many steps (and at step 0 and the last step); 0 saves the
        first and last only.
    probe : (n,) integers, optional
        A sequence whose attention weights are recorded at every snapshot.
    params : dict, optional
        Start from these parameters instead of :func:`init_parameters`'s.
    measure : callable, optional
        ``measure(params)`` is called before every update (with the parameters that step's loss
        was computed with), for anything else to follow along, such as the loss on a fixed
        evaluation batch; its results become ``DecoderRun.measurements``.
    dropout : float
        Dropout's rate in training (lesson 18 · dropout), ``0 ≤ dropout < 1``; its masks are
        drawn with the run's generator, after each step's batch (0 draws nothing, so a run
        without dropout is unchanged). The losses recorded are those of the masked model; the
        probe's weights and ``measure`` see the model without dropout, as inference does.

    Returns
    -------
    DecoderRun

    Raises
    ------
    FloatingPointError
        A step overflowed or made a NaN (the learning rate is too large); the message names the step.

    Notes
    -----
    The matrices of a small model are tiny: on a busy machine, start Python with
    ``OPENBLAS_NUM_THREADS=1``, or NumPy's BLAS threads spend far longer waiting for each other
    than multiplying (``tools/train_induction.py`` does so).
    """
    c = as_config(config)
    n_steps = as_positive_int(steps, "steps", maximum=10**7)  # 10⁷ steps of the smallest model: hours
    every = as_positive_int(snapshot_every, "snapshot_every", minimum=0)
    rate = as_dropout(dropout)
    rng = np.random.default_rng(as_seed(seed))
    p = init_parameters(c, seed) if params is None else check_parameters(c, params)
    probe_tokens = None if probe is None else check_tokens(c, probe, "probe")
    if probe_tokens is not None and probe_tokens.shape[0] != 1:
        raise ValueError(f"probe must be one sequence (n,), got shape {np.shape(probe)}")
    source = _batch_source(batches, rng)
    optimiser = Adam(learning_rate)
    losses, position_losses, measurements = [], [], []
    saved_steps, snapshots = [0], [p]
    for step in range(1, n_steps + 1):
        batch = next(source, None)
        if batch is None:
            raise ValueError(f"batches ran out after {step - 1} of {n_steps} steps")
        t = check_tokens(c, batch, "batch")
        if measure is not None:
            measurements.append(np.asarray(measure(p)))
        try:
            with np.errstate(over="raise", invalid="raise"):
                run = forward_steps(c, p, t, dropout=rate, rng=rng)
                loss, d_logits = loss_and_d_logits(run.logits, t)
                p = optimiser.step(p, backward_pass(c, p, t, run, d_logits))
        except FloatingPointError as exc:
            raise FloatingPointError(
                f"training diverged at step {step} ({exc}); try a smaller learning_rate"
            ) from None
        losses.append(loss)
        position_losses.append(token_losses(run.logits, t).mean(axis=0))
        if (every and step % every == 0) or step == n_steps:
            saved_steps.append(step)
            snapshots.append(p)
    probe_weights = None
    if probe_tokens is not None:
        probe_weights = np.stack(
            [
                np.stack([k.steps.weights[0] for k in forward_steps(c, s, probe_tokens).layers])
                for s in snapshots
            ]
        )
    return DecoderRun(
        c,
        np.array(losses),
        np.array(position_losses),
        np.array(saved_steps),
        snapshots,
        None if probe_tokens is None else probe_tokens[0],
        probe_weights,
        np.array(measurements) if measure is not None else None,
    )


def _batch_source(batches: Batches, rng: np.random.Generator) -> Iterator[npt.ArrayLike]:
    if callable(batches):
        return (batches(rng) for _ in iter(int, 1))  # without end: train takes what it needs
    if isinstance(batches, Iterable):
        return iter(batches)
    raise TypeError(
        f"batches must be a function of a random generator or an iterable of batches, got {batches!r}"
    )
