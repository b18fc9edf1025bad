"""The pictures of lesson 18, train your own GPT: a run's loss curves, the overfitting experiment and
the scaling experiment.

Each function takes the committed runs (:mod:`attention_lessons.l18_training_gpt.runs`) and writes the
figure's text alternative from the numbers it draws. Runs are told apart by marker and line style as
well as colour; the baselines are the palette's dashed reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.palette import color, ordered
from attention_lessons.kit.plots.styles import STYLES, check_style, figure, style_context
from attention_lessons.l18_training_gpt.runs import Curves, Experiments, Run, Size
from attnlib.validation import as_positive_int, as_real

__all__ = ["MARKERS", "loss_curves_figure", "overfitting_figure", "scaling_figure", "steps_figure"]

#: The marker and line style of each run by its place: never colour alone.
MARKERS = ("o", "s", "D", "^")
LINES = ("-", "--", "-.", ":")


def _smoothed(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The running mean of ``k`` values, drawn at the step of its last value (steps count from 1)."""
    mean = np.convolve(values, np.ones(k) / k, mode="valid")
    return np.arange(k, k + mean.size), mean


def _baselines(baselines: Mapping[str, float] | None) -> dict[str, float]:
    if baselines is None:
        return {}
    if not isinstance(baselines, Mapping):
        raise TypeError(f"baselines must be a dict of name → loss, got {type(baselines).__name__}")
    return {str(name): as_real(value, f"baselines[{name!r}]") for name, value in baselines.items()}


def _reference_lines(ax: Axes, baselines: dict[str, float], style: str) -> None:
    for name, level in baselines.items():
        ax.axhline(level, color=color("reference"), linestyle="--", linewidth=1)
        ax.annotate(
            f"{name}: {level:.2f}", (1.0, level), xycoords=("axes fraction", "data"),
            xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=8,
            color=str(STYLES[style]["text.color"]),
        )  # fmt: skip


def _plain_log_labels(ax: Axes) -> None:
    """A log y axis labelled 0.6, 2.0, not 6×10⁻¹, 2×10⁰."""
    for set_formatter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
        set_formatter(FormatStrFormatter("%.1f"))


def loss_curves_figure(
    run: Run, *, baselines: Mapping[str, float] | None = None, smooth: int = 25, style: str = "light"
) -> Figure:
    """A run's losses against the step: each batch's (a running mean), and the fixed windows' of both texts.

    Lesson 18 · 6. The long run.

    Parameters
    ----------
    run : Run
    baselines : dict of str to float, optional
        Levels to compare with (the uniform guess, the unigram model), drawn dashed.
    smooth : int
        Steps per running mean of the batch losses.
    style : {"light", "dark"}
    """
    if not isinstance(run, Curves):
        raise TypeError(f"run must be a run of lesson 18 (runs.load_run()), got {type(run).__name__}")
    levels = _baselines(baselines)
    k = as_positive_int(smooth, "smooth", maximum=len(run.losses))
    check_style(style)
    fig, axes = figure(1, 1, figsize=(8.0, 4.2), style=style)
    ax = axes[0, 0]
    batch, fixed = ordered(3)[:2]
    with style_context(style):
        ax.plot(*_smoothed(run.losses, k), color=batch, linewidth=1, label=f"batches (mean of {k} steps)")
        ax.plot(run.eval_steps, run.train_losses, color=batch, marker="o", linestyle="none",
                label="training text (fixed windows)")  # fmt: skip
        ax.plot(run.eval_steps, run.val_losses, color=fixed, marker="s", linestyle="-",
                label="Hamlet (validation)")  # fmt: skip
        _reference_lines(ax, levels, style)
        ax.set_xlabel("step")
        ax.set_ylabel("loss (nats per token)")
        ax.set_title("The long run's loss")
        ax.grid(True, alpha=0.4)
        ax.legend(fontsize=8, loc="upper right", bbox_to_anchor=(1.0, 0.85))
    first, last = run.val_losses[0], run.val_losses[-1]
    said = [f"{name} {level:.2f}" for name, level in levels.items()]
    text = join_sentences(
        [
            f"The loss of the long run over {len(run.losses)} steps: the batches' as a running mean of {k}, "
            f"and the loss on fixed windows of the training text and of Hamlet every "
            f"{int(run.eval_steps[1] - run.eval_steps[0])} steps",
            f"On Hamlet it falls from {first:.2f} to {last:.2f} nats per token; on the training text from "
            f"{run.train_losses[0]:.2f} to {run.train_losses[-1]:.2f}",
            ("Dashed levels: " + ", ".join(said)) if said else "",
        ]
    )
    table = Table(
        caption="Loss on fixed windows, nats per token",
        columns=("training text", "Hamlet"),
        rows=tuple(f"step {int(s)}" for s in run.eval_steps),
        cells=tuple((f"{a:.3f}", f"{b:.3f}") for a, b in zip(run.train_losses, run.val_losses, strict=True)),
        corner="step",
    )
    describe(fig, text, [table])
    return fig


def steps_figure(run: Run, *, style: str = "light") -> Figure:
    """A run's learning rate and its gradients' global norm at every step, with the clipping limit.

    Lesson 18 · 6. The long run: the schedule of section 4 as it ran, and how often clipping acted.
    """
    if not isinstance(run, Run):
        raise TypeError(f"run must be runs.load_run(), got {type(run).__name__}")
    check_style(style)
    fig, axes = figure(1, 2, figsize=(9.0, 3.4), style=style)
    left, right = axes[0]
    steps = np.arange(len(run.learning_rates))
    line, dots = ordered(3)[:2]
    limit = float(run.settings["clip"])
    clipped = int((run.grad_norms > limit).sum())
    with style_context(style):
        left.plot(steps, run.learning_rates, color=line)
        left.set_title("Learning rate")
        right.plot(steps, run.grad_norms, color=dots, marker=".", linestyle="none", markersize=2,
                   label="global norm before clipping")  # fmt: skip
        right.axhline(
            limit, color=color("reference"), linestyle="--", linewidth=1, label=f"clipped above {limit:g}"
        )
        right.set_yscale("log")
        _plain_log_labels(right)
        right.set_title("Gradient norm")
        right.legend(fontsize=8)
        for ax in (left, right):
            ax.set_xlabel("step")
            ax.grid(True, alpha=0.4)
    warmup = int(run.settings["warmup"])
    text = join_sentences(
        [
            f"Left, the learning rate at each of {len(steps)} steps: it rises over {warmup} steps to "
            f"{run.learning_rates.max():.1e}, then falls along a half cosine to {run.learning_rates[-1]:.1e}",
            f"Right, the gradients' global norm before clipping, on a log axis: median "
            f"{np.median(run.grad_norms):.2f}, largest {run.grad_norms.max():.2f}; {clipped} of {len(steps)} "
            f"steps were above the limit of {limit:g} and clipped",
        ]
    )
    describe(fig, text)
    return fig


def _variant_panels(axes: Sequence[Axes], overfit: Mapping[str, Curves], style: str) -> None:
    colours = ordered(len(overfit))
    for i, (name, curves) in enumerate(overfit.items()):
        look = {"color": colours[i], "marker": MARKERS[i % 4], "linestyle": LINES[i % 4], "markersize": 4}
        axes[0].plot(curves.eval_steps, curves.train_losses, label=name, **look)
        axes[1].plot(curves.eval_steps, curves.val_losses, label=name, **look)
    with style_context(style):
        for ax, title in zip(axes, ("training slice", "Hamlet (validation)"), strict=True):
            ax.set_title(title)
            ax.set_xlabel("step")
            ax.grid(True, alpha=0.4)
        axes[0].set_ylabel("loss (nats per token)")
        axes[1].legend(fontsize=8)


def overfitting_figure(experiments: Experiments, *, style: str = "light") -> Figure:
    """The overfitting runs: the loss on the small training slice and on Hamlet, variant by variant.

    Lesson 18 · 7. Overfitting.
    """
    if not isinstance(experiments, Experiments):
        raise TypeError(f"experiments must be runs.load_experiments(), got {type(experiments).__name__}")
    check_style(style)
    fig, axes = figure(1, 2, figsize=(9.0, 3.8), style=style)
    overfit = experiments.overfit
    _variant_panels(axes[0], overfit, style)
    said = []
    for name, c in overfit.items():
        best = int(np.argmin(c.val_losses))
        said.append(
            f"{name}: training {c.train_losses[-1]:.2f} at the end; Hamlet lowest {c.val_losses[best]:.2f} "
            f"at step {int(c.eval_steps[best])}, {c.val_losses[-1]:.2f} at the end"
        )
    text = join_sentences(
        [
            f"The model of section 3 trained on {experiments.slice_tokens:,} tokens for "
            f"{int(next(iter(overfit.values())).eval_steps[-1])} steps, {len(overfit)} ways; "
            "left the loss on that slice, right on Hamlet",
            *said,
        ]
    )
    table = Table(
        caption="Loss on Hamlet (validation), nats per token",
        columns=tuple(overfit),
        rows=tuple(f"step {int(s)}" for s in next(iter(overfit.values())).eval_steps),
        cells=tuple(
            tuple(f"{c.val_losses[i]:.3f}" for c in overfit.values())
            for i in range(len(next(iter(overfit.values())).eval_steps))
        ),
        corner="step",
    )
    describe(fig, text, [table])
    return fig


def _size_name(size: Size) -> str:
    return f"{size.parameters / 1e3:,.0f}k parameters"


def scaling_figure(experiments: Experiments, *, style: str = "light") -> Figure:
    """Three sizes on the same tokens: the validation loss against the step, and at the end against size.

    Lesson 18 · 8. Scale.
    """
    if not isinstance(experiments, Experiments):
        raise TypeError(f"experiments must be runs.load_experiments(), got {type(experiments).__name__}")
    check_style(style)
    sizes = experiments.scale
    fig, axes = figure(1, 2, figsize=(9.0, 3.8), style=style)
    left, right = axes[0]
    colours = ordered(len(sizes))
    for i, size in enumerate(sizes):
        look = {"color": colours[i], "marker": MARKERS[i % 4], "markersize": 4}
        left.plot(size.eval_steps, size.val_losses, linestyle=LINES[i % 4], label=_size_name(size), **look)
        right.plot([size.parameters], [size.val_losses[-1]], linestyle="none", label=_size_name(size), **look)
    params = np.array([s.parameters for s in sizes], dtype=float)
    finals = np.array([s.val_losses[-1] for s in sizes])
    slope = float(np.polyfit(np.log(params), np.log(finals), 1)[0])
    with style_context(style):
        right.plot(params, finals, color=color("reference"), linestyle="--", linewidth=1, zorder=0)
        right.set_xscale("log")
        right.set_yscale("log")
        _plain_log_labels(right)
        right.set_xlabel("parameters")
        right.set_title("At the end (log axes)")
        left.set_xlabel("step")
        left.set_ylabel("loss on Hamlet (nats per token)")
        left.set_title("During training")
        for ax in (left, right):
            ax.grid(True, alpha=0.4, which="both")
        left.legend(fontsize=8)
    said = [f"{s.parameters:,} parameters: {s.val_losses[-1]:.2f}" for s in sizes]
    text = join_sentences(
        [
            f"{len(sizes)} sizes of the model trained on the same {sizes[0].tokens:,} tokens; the loss on "
            "Hamlet during training (left) and at the end against the parameters on log axes (right)",
            "At the end " + "; ".join(said),
            f"On log axes the three points fall along a slope of about {slope:.2f}",
        ]
    )
    table = Table(
        caption="The sizes at the end of training",
        columns=("parameters", "d_model", "layers", "loss on Hamlet"),
        rows=tuple(_size_name(s) for s in sizes),
        cells=tuple(
            (f"{s.parameters:,}", str(s.d_model), str(s.n_layers), f"{s.val_losses[-1]:.3f}") for s in sizes
        ),
        corner="model",
    )
    describe(fig, text, [table])
    return fig
