"""Lesson 18's figures: each writes its text alternative from the numbers it draws, tells its runs apart
by more than colour, and names bad input."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.kit import plots
from attention_lessons.l18_training_gpt import plots as figures
from attention_lessons.l18_training_gpt.runs import Curves, Experiments, Run, Size
from attnlib.decoder import DecoderConfig

STEPS = np.array([0, 50, 100])


def _curves(train, val) -> dict:
    return {"losses": np.linspace(6.0, 3.0, 100), "eval_steps": STEPS, "train_losses": np.array(train),
            "val_losses": np.array(val)}  # fmt: skip


def _run() -> Run:
    config = DecoderConfig(vocab_size=8, n_ctx=4, d_model=4, n_heads=1, n_layers=1)
    return Run(**_curves([6.1, 3.5, 2.9], [6.2, 3.9, 3.3]), config=config, params={}, settings={},
               learning_rates=np.zeros(100), grad_norms=np.zeros(100), seconds=60.0)  # fmt: skip


def _experiments() -> Experiments:
    overfit = {
        "plain": Curves(**_curves([5.0, 2.0, 0.5], [5.1, 4.0, 4.9])),
        "dropout": Curves(**_curves([5.0, 2.5, 1.5], [5.1, 3.9, 4.1])),
    }
    shapes = [(32, 2, 57_000, [5, 4.2, 3.9]), (64, 4, 164_000, [5, 4.0, 3.4])]
    sizes = [
        Size(**_curves([5, 4, 3], val), d_model=d, n_heads=h, n_layers=2, parameters=n, tokens=1_000)
        for d, h, n, val in shapes
    ]
    return Experiments(overfit, {"plain": {}, "dropout": {"dropout": 0.2}}, {}, {}, 40_000, sizes)


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_loss_curves_figure_says_where_the_losses_start_and_end(style):
    fig = figures.loss_curves_figure(_run(), baselines={"unigram": 5.19}, smooth=10, style=style)
    text = plots.description(fig).text
    assert "from 6.20 to 3.30" in text and "unigram 5.19" in text and "100 steps" in text
    markers = {
        line.get_marker()
        for line in fig.axes[0].lines
        if line.get_label() and not line.get_label().startswith("_")
    }
    assert {"o", "s"} <= markers  # training and validation told apart by marker


def test_the_overfitting_figure_names_each_variants_best_step():
    fig = figures.overfitting_figure(_experiments())
    text = plots.description(fig).text
    assert "plain: training 0.50 at the end; Hamlet lowest 4.00 at step 50, 4.90 at the end" in text
    assert "40,000 tokens" in text
    looks = {(line.get_marker(), line.get_linestyle()) for line in fig.axes[1].lines}
    assert len(looks) == 2  # each variant its own marker and line


def test_the_scaling_figure_gives_each_size_and_the_slope():
    fig = figures.scaling_figure(_experiments())
    text = plots.description(fig).text
    assert "57,000 parameters: 3.90" in text and "164,000 parameters: 3.40" in text
    slope = np.polyfit(np.log([57_000, 164_000]), np.log([3.9, 3.4]), 1)[0]
    assert f"slope of about {slope:.2f}" in text
    assert fig.axes[1].get_xscale() == "log"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: figures.loss_curves_figure({"losses": [1]}), "run must be a run of lesson 18"),
        (lambda: figures.loss_curves_figure(_run(), baselines=[5.0]), "baselines must be a dict"),
        (lambda: figures.loss_curves_figure(_run(), smooth=1000), "smooth"),
        (lambda: figures.overfitting_figure(_run()), "experiments must be runs.load_experiments()"),
        (lambda: figures.scaling_figure(None), "experiments must be runs.load_experiments()"),
        (lambda: figures.scaling_figure(_experiments(), style="neon"), "style must be one of"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_the_steps_figure_counts_the_clipped_steps():
    run = _run()
    run.grad_norms[:] = 0.5
    run.grad_norms[[3, 7]] = 4.0
    run.learning_rates[:] = np.linspace(1e-3, 1e-4, 100)
    run.settings.update(clip=1.0, warmup=10)
    text = plots.description(figures.steps_figure(run)).text
    assert "2 of 100 steps were above the limit of 1 and clipped" in text
    assert "median 0.50, largest 4.00" in text
    with pytest.raises(TypeError, match=r"run must be runs\.load_run"):
        figures.steps_figure(_experiments())
