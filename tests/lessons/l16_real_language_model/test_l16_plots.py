"""Lesson 16's figures: each writes its text alternative from the numbers it draws, and refuses
numbers it cannot draw."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.kit.plots import description
from attention_lessons.l16_real_language_model import plots


def test_the_layer_head_figure_says_its_largest_and_each_layer() -> None:
    values = np.zeros((3, 2))
    values[2, 1] = 0.9
    said = description(plots.layer_head_figure(values, title="t", what="induction score", reference=0.05))
    assert "head 1 of layer 2, 0.90; 1 are above 0.5" in said.text and "against 0.050 for a" in said.text
    assert "0 0.0, 1 0.0, 2 0.5" in said.text and said.tables[0].cells[2] == ("0.5", "0.9", "1")
    with pytest.raises(ValueError, match="from 0 to 1"):
        plots.layer_head_figure(values + 2, title="t", what="w")


def test_the_window_figure_gives_each_settings_perplexity_past_the_window() -> None:
    curves = {"full": np.full(100, np.log(10.0)), "window": np.full(100, np.log(40.0))}
    said = description(plots.window_losses_figure(curves, window=20, smooth=5))
    assert "full: 10.0; window: 40.0" in said.text and "position 20" in said.text
    with pytest.raises(ValueError, match="at least two"):
        plots.window_losses_figure({"full": curves["full"]}, window=20)
    with pytest.raises(ValueError, match="shorter than the curves"):
        plots.window_losses_figure(curves, window=100)


def test_the_ablation_figure_gives_every_bar() -> None:
    said = description(plots.ablation_figure({"none": 3.3, "top 10": 13.8}, first_half=14.7))
    assert "none: 3.3; top 10: 13.8" in said.text and "14.7 nats" in said.text
    with pytest.raises(ValueError, match="non-empty"):
        plots.ablation_figure({}, first_half=1.0)
