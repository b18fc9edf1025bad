"""Training with Adam on next-token prediction, with snapshots, a probe and measurements on the way.

Lesson 14 · 2 shows a run (the phase change); lesson 15's model is another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.decoder.backward_pass import backward_pass, loss_and_d_logits, token_losses
from attnlib.decoder.checks import check_parameters, check_tokens
from attnlib.decoder.config import DecoderConfig, as_config, init_parameters
from attnlib.decoder.forward_pass import forward_steps
from attnlib.training import Adam
from attnlib.validation import as_positive_int, as_seed, is_number

__all__ = ["Batches", "DecoderRun", "train"]


@dataclass(frozen=True)
class DecoderRun:
    """What :func:`train` recorded.

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
        Number of updates.
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
    n_steps = as_positive_int(steps, "steps")
    every = as_positive_int(snapshot_every, "snapshot_every", minimum=0)
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
                run = forward_steps(c, p, t)
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
