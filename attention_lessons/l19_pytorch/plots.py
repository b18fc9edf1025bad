"""The pictures of lesson 19, the same model in PyTorch: time per training step, and the LoRA run.

Each function takes committed figures (``gpt_training.json``, written by
``benchmarks/gpt_training.py``; the LoRA run of :mod:`attention_lessons.l19_pytorch.lora`) and writes
the figure's text alternative from the numbers it draws. Bars carry their numbers as text, and
curves are told apart by marker and line style as well as colour.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.palette import color, ordered
from attention_lessons.kit.plots.styles import STYLES, check_style, figure, style_context
from attention_lessons.l19_pytorch.lora import LoRARun
from attnlib.validation import as_positive_int, as_real

__all__ = ["STEP_CONTENDERS", "lora_figure", "step_times", "step_times_figure"]

#: The benchmark's contenders the lesson shows, in its order: the same step in each.
STEP_CONTENDERS = ("attnlib float64", "PyTorch float64", "attnlib float32", "PyTorch float32")


def step_times(benchmark: Mapping[str, object]) -> dict[str, float]:
    """The median wall time of one training step, in ms, of each of :data:`STEP_CONTENDERS`.

    Lesson 19 · 4. ``benchmark`` is ``gpt_training.json`` as read (its ``timing.median``).
    """
    try:
        medians = benchmark["timing"]["median"]  # type: ignore[index]
        return {name: as_real(medians[name]["wall_ms"], f"{name}'s time") for name in STEP_CONTENDERS}
    except (KeyError, TypeError) as error:
        raise ValueError(f"benchmark must be gpt_training.json's contents; it lacks {error}") from None


def step_times_figure(benchmark: Mapping[str, object], *, style: str = "light") -> Figure:
    """Bars of the time one training step of lesson 18's GPT takes, attnlib's against PyTorch's.

    Lesson 19 · 4. PyTorch on the CPU: the committed benchmark, one thread, medians of interleaved rounds.

    Parameters
    ----------
    benchmark : dict
        ``gpt_training.json`` as read (:func:`attention_lessons.kit.committed.read_json`).
    style : {"light", "dark"}
    """
    times = step_times(benchmark)
    check_style(style)
    rc = STYLES[style]
    names = list(times)
    fig, axes = figure(1, 1, figsize=(8.0, 0.55 * len(names) + 1.5), style=style)
    ax = axes[0, 0]
    with style_context(style):
        y = np.arange(len(names))
        hatches = ["//" if name.startswith("PyTorch") else "" for name in names]  # not colour alone
        bars = ax.barh(
            y, [times[n] for n in names], 0.6, color=color("reference"), edgecolor=str(rc["text.color"])
        )
        for bar, hatch in zip(bars, hatches, strict=True):
            bar.set_hatch(hatch)
        for k, name in enumerate(names):
            ax.text(times[name], k, f" {times[name]:.0f} ms", va="center", fontsize=9)
        ax.set_yticks(y, names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(0, max(times.values()) * 1.25)
        ax.set_xlabel("one training step (ms, median; one thread)")
        ax.set_title("Lesson 18's GPT, one step: batch 16 × 128, backward, clipping, AdamW", fontsize=10)
    ratio32 = times["attnlib float32"] / times["PyTorch float32"]
    ratio64 = times["attnlib float64"] / times["PyTorch float64"]
    text = join_sentences(
        [
            "Bars of the median time of one training step of lesson 18's GPT on one CPU thread, "
            "PyTorch's bars hatched",
            "; ".join(f"{name}: {times[name]:.0f} ms" for name in names),
            f"attnlib takes {ratio64:.2f} times PyTorch's time in float64 and {ratio32:.2f} times in float32",
        ]
    )
    table = Table(
        caption="One training step, median wall time",
        columns=("ms",),
        rows=tuple(names),
        cells=tuple((f"{times[n]:.0f}",) for n in names),
        corner="contender",
    )
    describe(fig, text, [table])
    return fig


def lora_figure(run: LoRARun, *, scratch: float, smooth: int = 10, style: str = "light") -> Figure:
    """The LoRA run: each batch's loss, and *Hamlet*'s bits per character against lesson 18's GPT.

    Lesson 19 · 6. Fine-tuning with LoRA.

    Parameters
    ----------
    run : LoRARun
        :func:`attention_lessons.l19_pytorch.lora.load_run`.
    scratch : float
        Lesson 18's GPT on *Hamlet*, bits per character (drawn dashed).
    smooth : int
        Steps per running mean of the batch losses.
    style : {"light", "dark"}
    """
    if not isinstance(run, LoRARun):
        raise TypeError(f"run must be lora.load_run(), got {type(run).__name__}")
    level = as_real(scratch, "scratch")
    k = as_positive_int(smooth, "smooth", maximum=len(run.losses))
    check_style(style)
    rc = STYLES[style]
    fig, axes = figure(1, 2, figsize=(9.0, 3.6), style=style)
    left, right = axes[0]
    batch, held_out = ordered(3)[:2]
    mean = np.convolve(run.losses, np.ones(k) / k, mode="valid")
    bits = run.val_bits_per_char
    with style_context(style):
        left.plot(np.arange(k, k + mean.size), mean, color=batch, linewidth=1.2)
        left.set_title(f"Training batches (mean of {k} steps)")
        left.set_ylabel("loss (nats per SmolLM2 token)")
        right.plot(run.eval_steps, bits, color=held_out, marker="s", label="SmolLM2 + LoRA")
        right.axhline(level, color=color("reference"), linestyle="--", linewidth=1)
        right.annotate(
            f"lesson 18's GPT: {level:.2f}", (1.0, level), xycoords=("axes fraction", "data"),
            xytext=(-4, -12), textcoords="offset points", ha="right", fontsize=8, color=str(rc["text.color"]),
        )  # fmt: skip
        right.set_ylim(min(bits.min(), level) - 0.1, max(bits.max(), level) + 0.1)
        right.set_title("Hamlet, held out")
        right.set_ylabel("bits per character")
        for ax in (left, right):
            ax.set_xlabel("step")
            ax.grid(True, alpha=0.4)
    text = join_sentences(
        [
            f"Left, the loss of each training batch over {len(run.losses)} steps of LoRA, as a running mean "
            f"of {k}: from {mean[0]:.2f} to {mean[-1]:.2f} nats per token",
            f"Right, Hamlet in bits per character at steps {', '.join(str(int(s)) for s in run.eval_steps)}: "
            f"{', '.join(f'{b:.2f}' for b in bits)}; dashed, lesson 18's GPT from scratch, {level:.2f}",
        ]
    )
    table = Table(
        caption="Hamlet, bits per character",
        columns=("bits per character", "nats per token"),
        rows=tuple(f"step {int(s)}" for s in run.eval_steps),
        cells=tuple((f"{b:.3f}", f"{n:.3f}") for b, n in zip(bits, run.val_losses, strict=True)),
        corner="step",
    )
    describe(fig, text, [table])
    return fig
