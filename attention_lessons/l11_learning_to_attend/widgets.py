"""The training replay of lesson 11: a slider over the saved steps of a training run.

Nothing trains here. :func:`replay_table` computes, with :mod:`attnlib.training`, the attention
weights of the run's probe sequence at every saved step and the loss there; the page only selects
the row of the step the slider is on and draws it with the whole loss curve.
"""

from __future__ import annotations

from typing import Any

import traitlets

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import RealNumber, WholeNumber
from attention_lessons.kit.widgets.modules import module_text
from attnlib.training import Model, TrainingRun, token_labels, train
from attnlib.validation import is_number

__all__ = ["TrainingReplay", "replay_table", "training_replay"]


def replay_table(run: TrainingRun) -> list[dict[str, Any]]:
    """What the replay draws at each saved step of ``run``.

    Returns
    -------
    list of dict, one per entry of ``run.snapshot_steps``
        ``step``; ``loss`` (``run.losses[step]``: the loss with the parameters after that many
        updates); ``weights`` (n × n, :meth:`~attnlib.training.TrainingRun.weights_at` of the
        probe); ``previous`` (the mean weight on the key just before each query, the pattern the
        task needs).
    """
    table = []
    for step in run.snapshot_steps.tolist():
        weights = run.weights_at(step)
        table.append(
            {
                "step": step,
                "loss": float(run.losses[step]),
                "weights": weights.tolist(),
                "previous": float(weights.diagonal(offset=-1).mean()),
            }
        )
    return table


class TrainingReplay(Explorer):
    """A saved training run, replayed: the weights heatmap and the loss at the slider's step.

    Use :func:`training_replay` to make one.

    Traits
    ------
    Input (synced; the front end sets it):

    step : int
        One of the run's saved steps (the slider's value is its index among them).

    Set once (synced): ``table`` (:func:`replay_table`), ``losses`` (the loss at every step, for
    the curve), ``tokens`` (the probe's token names), ``style_name``, ``themes``, ``colormaps``.
    The front end draws the table's row for ``step``.
    """

    _esm = module_text("attention_lessons.l11_learning_to_attend", "training.js")
    summary = "Training replay: the attention weights and the loss at each saved step"
    colormap_names = ("viridis",)

    step = WholeNumber(0).tag(sync=True)
    table = traitlets.List(traitlets.Dict()).tag(sync=True)
    losses = traitlets.List(RealNumber()).tag(sync=True)
    tokens = traitlets.List(traitlets.Unicode()).tag(sync=True)

    @traitlets.validate("step")
    def _check_step(self, proposal: traitlets.Bunch) -> int:
        saved = [row["step"] for row in self.table]
        return self._checked_index(proposal, saved, "the saved steps") if saved else int(proposal["value"])


def training_replay(
    run: TrainingRun | None = None, *, step: int | None = None, style: str = "light"
) -> TrainingReplay:
    """Replay a training run of :mod:`attnlib.training`: a slider over its saved steps.

    Parameters
    ----------
    run : TrainingRun, optional
        By default lesson 11's: ``train(Model(), steps=300, seed=0, snapshot_every=5)``.
    step : int, optional
        The step shown first (one of ``run.snapshot_steps``); by default the last.
    style : {"light", "dark"}

    Returns
    -------
    TrainingReplay
    """
    if run is None:
        run = train(Model(), steps=300, seed=0, snapshot_every=5)
    if not isinstance(run, TrainingRun):
        raise TypeError(f"run must be an attnlib.training.TrainingRun, got {type(run).__name__}")
    saved = run.snapshot_steps.tolist()
    first = saved[-1] if step is None else step
    if not is_number(first, whole=True) or first not in saved:
        raise ValueError(f"step must be one of the saved steps {saved}, got {step!r}")
    return TrainingReplay(
        table=replay_table(run),
        losses=run.losses.tolist(),
        tokens=token_labels(run.probe),
        step=first,
        style_name=style,
    )
