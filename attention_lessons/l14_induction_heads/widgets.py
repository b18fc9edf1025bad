"""The training replay of lesson 14: a two-layer decoder's heads on a repeated sequence, step by step.

Nothing trains here. A trained run
(:func:`attention_lessons.l14_induction_heads.induction.load_induction_run`) saved, at some steps of its
training, every head's attention weights on one probe sequence whose second half repeats its first,
and the loss on each half at every step. :func:`replay_table` turns those
snapshots into what the page draws; the page picks one head per layer and the slider's step, and
draws the two halves' loss curves with the step marked beside each layer's pattern, so the
previous-token stripe of layer 0 and the induction stripe of layer 1 can be watched forming while
the loss on the repeated half falls.

Future keys are masked (causal attention): the table sends them as ``None`` and the page draws
them hatched, not as a weight of 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import traitlets

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import WholeNumber
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.l14_induction_heads import induction
from attnlib.validation import as_distributions, as_real_array, is_number

__all__ = ["DECIMALS", "InductionReplay", "induction_replay", "replay_from_snapshots", "replay_table"]

#: Decimals kept of each weight and score sent to the page (the tables show 3).
DECIMALS = 4


def replay_table(
    steps: npt.ArrayLike,
    weights: npt.ArrayLike,
    previous: npt.ArrayLike,
    induction: npt.ArrayLike,
) -> list[dict[str, Any]]:
    """What the replay draws at each saved step, from the run's snapshots.

    Parameters
    ----------
    steps : array_like of int, shape (s,)
        The saved steps, increasing.
    weights : array_like, shape (s, n_layers, n_heads, n, n)
        Every head's attention weights on the probe at each saved step (causal: zero above the
        diagonal).
    previous, induction : array_like, shape (s, n_layers, n_heads)
        Each head's previous-token score and induction score on the probe at each saved step.

    Returns
    -------
    list of dict, one per saved step
        ``step``; ``weights`` (n_layers × n_heads × n × n nested lists, rounded to
        :data:`DECIMALS`, ``None`` for a masked future key); ``previous`` and ``induction``
        (n_layers × n_heads, rounded).
    """
    steps = np.asarray(steps)
    if steps.ndim != 1 or steps.size == 0 or not all(is_number(s, whole=True) for s in steps.tolist()):
        raise ValueError(f"steps must be a non-empty 1-D list of whole numbers, got shape {steps.shape}")
    if np.any(np.diff(steps) <= 0):
        raise ValueError(f"steps must increase, got {steps.tolist()}")
    w = as_real_array(weights, "weights", dtype=np.float64)
    if w.ndim != 5 or w.shape[0] != steps.size or w.shape[-1] != w.shape[-2]:
        raise ValueError(
            f"weights must have shape (steps, n_layers, n_heads, n, n) with {steps.size} steps, got {w.shape}"
        )
    future = np.triu(np.ones(w.shape[-2:], dtype=bool), k=1)
    if np.any(w[..., future] != 0):
        raise ValueError("weights must be causal: every weight on a future key must be 0")
    as_distributions(w, "weights")  # and each row sums to 1
    scores = {}
    for name, value in (("previous", previous), ("induction", induction)):
        array = as_real_array(value, name, dtype=np.float64)
        if array.shape != w.shape[:3]:
            raise ValueError(
                f"{name} must have shape {w.shape[:3]} (steps, n_layers, n_heads), got {array.shape}"
            )
        scores[name] = np.round(array, DECIMALS)
    shown = np.round(w, DECIMALS).astype(object)
    shown[..., future] = None
    return [
        {
            "step": int(step),
            "weights": shown[k].tolist(),
            "previous": scores["previous"][k].tolist(),
            "induction": scores["induction"][k].tolist(),
        }
        for k, step in enumerate(steps.tolist())
    ]


class InductionReplay(Explorer):
    """A decoder's training replayed: one head per layer on the probe, and the losses, per step.

    Use :func:`induction_replay` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them):

    step : int
        One of the saved steps (the slider's value is its index among them).
    heads : list of int
        The head shown of each layer, from 0.

    Set once (synced): ``table`` (:func:`replay_table`); ``loss_steps``, ``loss_first``,
    ``loss_second`` (the loss on the first and on the repeated half at every step listed, for the
    curves); ``chance`` (ln of the vocabulary size: the loss of a uniform guess); ``tokens`` (the
    probe's token names); ``repeat_start`` (the position where the repeat begins); ``n_heads``;
    ``style_name``, ``themes``, ``colormaps``.
    """

    _esm = module_text("attention_lessons.l14_induction_heads", "induction_replay.js")
    summary = "Induction replay: a two-layer decoder's heads on a repeated sequence, step by step"
    colormap_names = ("viridis",)

    step = WholeNumber(0).tag(sync=True)
    heads = traitlets.List(WholeNumber()).tag(sync=True)
    table = traitlets.List(traitlets.Dict()).tag(sync=True)
    loss_steps = traitlets.List(traitlets.Int()).tag(sync=True)
    loss_first = traitlets.List(traitlets.Float()).tag(sync=True)
    loss_second = traitlets.List(traitlets.Float()).tag(sync=True)
    chance = traitlets.Float(0.0).tag(sync=True)
    tokens = traitlets.List(traitlets.Unicode()).tag(sync=True)
    repeat_start = WholeNumber(0).tag(sync=True)
    n_heads = WholeNumber(1).tag(sync=True)

    @traitlets.validate("step")
    def _check_step(self, proposal: traitlets.Bunch) -> int:
        saved = [row["step"] for row in self.table]
        return self._checked_index(proposal, saved, "the saved steps") if saved else int(proposal["value"])

    @traitlets.validate("heads")
    def _check_heads(self, proposal: traitlets.Bunch) -> list[int]:
        heads = list(proposal["value"])
        n_layers = len(self.table[0]["weights"]) if self.table else len(heads)
        if len(heads) != n_layers or not all(0 <= h < self.n_heads for h in heads):
            raise traitlets.TraitError(
                f"heads must name one head (0 to {self.n_heads - 1}) for each of the {n_layers} layers, "
                f"got {heads!r}"
            )
        return heads


def replay_from_snapshots(
    steps: npt.ArrayLike,
    weights: npt.ArrayLike,
    previous: npt.ArrayLike,
    induction: npt.ArrayLike,
    *,
    losses: tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike],
    vocab_size: int,
    tokens: list[str],
    repeat_start: int,
    heads: list[int] | None = None,
    step: int | None = None,
    style: str = "light",
) -> InductionReplay:
    """The replay of any run's snapshots, given as arrays (:func:`induction_replay` takes a run).

    Parameters
    ----------
    steps, weights, previous, induction
        As :func:`replay_table` takes them.
    losses : (loss_steps, loss_first, loss_second), each array_like of shape (m,)
        The steps at which the losses were measured (every saved step among them) and the loss on
        the first and on the repeated half there.
    vocab_size : int
        The chance line of the loss plot is ln(vocab_size).
    tokens : list of str, length n
        The probe's token names.
    repeat_start : int
        The position of the probe where its repeat begins (0 < repeat_start < n).
    heads : list of int, optional
        The head shown first in each layer; by default head 0 of each.
    step : int, optional
        The step shown first (a saved one); by default the last.
    style : {"light", "dark"}

    Returns
    -------
    InductionReplay
    """
    table = replay_table(steps, weights, previous, induction)
    n_layers = len(table[0]["weights"])
    n_heads = len(table[0]["weights"][0])
    n = len(table[0]["weights"][0][0])
    if len(losses) != 3:
        raise ValueError("losses must be (loss_steps, loss_first, loss_second)")
    loss_steps = np.asarray(losses[0])
    names = ("loss_first", "loss_second")
    curves = [as_real_array(c, name, dtype=np.float64) for c, name in zip(losses[1:], names, strict=True)]
    if loss_steps.ndim != 1 or any(c.shape != loss_steps.shape for c in curves):
        raise ValueError(
            f"losses must be three 1-D arrays of one length, got shapes {[np.shape(x) for x in losses]}"
        )
    missing = sorted(set(row["step"] for row in table) - set(loss_steps.tolist()))
    if missing:
        raise ValueError(f"losses must include every saved step; missing {missing}")
    if not is_number(vocab_size, whole=True) or vocab_size < 2:
        raise ValueError(f"vocab_size must be a whole number of at least 2, got {vocab_size!r}")
    if isinstance(tokens, str) or len(tokens) != n:
        raise ValueError(f"tokens must be a list of {n} token names (one per position), got {tokens!r}")
    if not is_number(repeat_start, whole=True) or not 0 < repeat_start < n:
        raise ValueError(f"repeat_start must be a position from 1 to {n - 1}, got {repeat_start!r}")
    saved = [row["step"] for row in table]
    first = saved[-1] if step is None else step
    if first not in saved:
        raise ValueError(f"step must be one of the saved steps {saved}, got {step!r}")
    return InductionReplay(
        table=table,
        loss_steps=[int(s) for s in loss_steps.tolist()],
        loss_first=curves[0].tolist(),
        loss_second=curves[1].tolist(),
        chance=float(np.log(vocab_size)),
        tokens=[str(t) for t in tokens],
        repeat_start=int(repeat_start),
        n_heads=n_heads,
        heads=[0] * n_layers if heads is None else list(heads),
        step=first,
        style_name=style,
    )


def induction_replay(
    run: Any = None, *, heads: list[int] | None = None, step: int | None = None, style: str = "light"
) -> InductionReplay:
    """Replay lesson 14's training: a slider over the saved steps, one head picked per layer.

    Parameters
    ----------
    run : attention_lessons.l14_induction_heads.induction.InductionRun, optional
        By default the committed run
        (:func:`attention_lessons.l14_induction_heads.induction.load_induction_run`). Its saved steps whose
        loss was measured are shown, each head scored on the probe with
        :func:`attention_lessons.l14_induction_heads.induction.previous_token_scores` and
        :func:`attention_lessons.l14_induction_heads.induction.induction_scores`.
    heads : list of int, optional
        The head shown first in each layer; by default head 0 of each.
    step : int, optional
        The saved step shown first; by default the last.
    style : {"light", "dark"}

    Returns
    -------
    InductionReplay
    """
    if run is None:
        run = induction.load_induction_run()
    if not isinstance(run, induction.InductionRun):
        raise TypeError(
            "run must be an attention_lessons.l14_induction_heads.induction.InductionRun, "
            f"got {type(run).__name__}"
        )
    measured = np.arange(len(run.repeated_half_loss))
    keep = [k for k, s in enumerate(run.snapshot_steps.tolist()) if s < measured.size]
    weights = run.probe_weights[keep]  # (s, n_layers, n_heads, n, n)
    previous = np.stack([induction.previous_token_scores(w) for w in weights])
    found = np.stack([induction.induction_scores(w, run.probe) for w in weights])
    return replay_from_snapshots(
        run.snapshot_steps[keep],
        weights,
        previous,
        found,
        losses=(measured, run.first_half_loss, run.repeated_half_loss),
        vocab_size=run.config.vocab_size,
        tokens=[str(t) for t in run.probe.tolist()],
        repeat_start=run.half,
        heads=heads,
        step=step,
        style=style,
    )
