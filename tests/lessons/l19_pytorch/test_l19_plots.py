"""Lesson 19's figures: each draws the committed numbers and says them in its text alternative."""

from __future__ import annotations

import pytest
from matplotlib import pyplot as plt

from attention_lessons.kit import committed
from attention_lessons.kit.plots.descriptions import description
from attention_lessons.l19_pytorch import lora, plots


@pytest.fixture(scope="module")
def benchmark() -> dict:
    return committed.read_json("attention_lessons.l19_pytorch", "gpt_training.json")


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_step_times_figure_says_each_time(benchmark: dict, style: str) -> None:
    fig = plots.step_times_figure(benchmark, style=style)
    said = description(fig)
    times = plots.step_times(benchmark)
    for name, ms in times.items():
        assert f"{name}: {ms:.0f} ms" in said.text
    assert said.tables[0].rows == plots.STEP_CONTENDERS
    hatched = [bar.get_hatch() for bar in fig.axes[0].patches]
    assert hatched == ["", "//", "", "//"]  # PyTorch's bars told apart without colour
    plt.close(fig)


def test_the_step_times_refuse_another_file() -> None:
    with pytest.raises(ValueError, match=r"gpt_training\.json"):
        plots.step_times({"timing": {}})


@pytest.mark.parametrize("style", ["light", "dark"])
def test_the_lora_figure_says_the_curve(style: str) -> None:
    run = lora.load_run()
    fig = plots.lora_figure(run, scratch=2.14, style=style)
    text = description(fig).text
    assert "dashed, lesson 18's GPT from scratch, 2.14" in text
    for bits in run.val_bits_per_char:
        assert f"{bits:.2f}" in text
    plt.close(fig)


def test_the_lora_figure_refuses_bad_input() -> None:
    with pytest.raises(TypeError, match=r"lora\.load_run"):
        plots.lora_figure({}, scratch=2.0)
    with pytest.raises(ValueError, match="smooth"):
        plots.lora_figure(lora.load_run(), scratch=2.0, smooth=0)
