"""Lesson 14's figures: each writes its text alternative from the numbers it draws, and names bad input."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.kit import plots
from attention_lessons.l14_induction_heads import plots as figures
from attnlib.core import softmax

RNG = np.random.default_rng(5)
N = 9
SCORES = RNG.normal(size=(2, 3, N, N))
SCORES[..., np.triu(np.ones((N, N), dtype=bool), k=1)] = -np.inf
WEIGHTS = softmax(SCORES)
MARKED = {"previous-token": (0, 2), "induction": (1, 0)}


def test_the_phase_change_says_where_the_repeated_loss_falls_fastest():
    steps = np.arange(0, 110, 10)
    repeated = np.array([3.0, 3.0, 2.9, 2.8, 1.2, 0.5, 0.3, 0.2, 0.2, 0.1, 0.1])
    first = np.full(steps.size, 3.0)
    fig = figures.phase_change_figure(steps, first, repeated, repeated - first, vocab_size=20)
    text = plots.description(fig).text
    assert "The repeated half's loss at steps 0: 3.00, 20: 2.90, 50: 0.50, 80: 0.20, 100: 0.10." in text
    assert f"ln(vocab) is {np.log(20):.2f}" in text and "from 3.00 to 0.10" in text
    (table,) = plots.description(fig).tables
    assert table.rows[0] == "0" and table.cells[4][1] == "1.200"
    with pytest.raises(ValueError, match="one value per step"):
        figures.phase_change_figure(steps, first[:3], repeated, repeated, vocab_size=20)


def test_the_patterns_name_the_marked_heads_and_hold_the_previous_token_weights():
    fig = figures.induction_patterns_figure(WEIGHTS, 5, marked=MARKED, style="dark")
    text = plots.description(fig).text
    assert (
        "previous-token head is head 2 of layer 0" in text and "induction head is head 0 of layer 1" in text
    )
    table = plots.description(fig).tables[0]
    assert table.cells[1][2] == f"{np.diagonal(WEIGHTS[1, 2], offset=-1).mean():.2f}"
    with pytest.raises(ValueError, match="repeat_start"):
        figures.induction_patterns_figure(WEIGHTS, N)
    with pytest.raises(ValueError, match="not in 2 layers"):
        figures.induction_patterns_figure(WEIGHTS, 5, marked={"induction": (2, 0)})
    with pytest.raises(ValueError, match="roles"):
        figures.induction_patterns_figure(WEIGHTS, 5, marked={"copying": (1, 0)})


def test_the_ablation_bars_name_the_two_costliest_heads():
    losses = np.array([[0.1, 0.2, 2.5], [3.1, 0.15, 0.12]])
    fig = figures.ablation_figure(losses, 0.08, vocab_size=12, marked=MARKED)
    text = plots.description(fig).text
    assert "head 0 of layer 1 (3.10) and head 2 of layer 0 (2.50)" in text and "it is 0.08" in text
    with pytest.raises(ValueError, match="n_layers, n_heads"):
        figures.ablation_figure(losses[0], 0.08, vocab_size=12)


def test_the_composition_heatmap_lists_every_pair():
    scores = RNG.uniform(size=(3, 3))
    fig = figures.composition_figure(scores)
    cells = plots.description(fig).tables[0].cells
    assert cells == tuple(tuple(plots.format_cell(v) for v in row) for row in scores)
    with pytest.raises(ValueError, match="heads of layer 0"):
        figures.composition_figure(scores[0])


def test_the_replay_figure_marks_its_step_and_says_each_heads_scores():
    steps = np.arange(0, 50, 10)
    first, repeated = np.full(5, 2.5), np.array([2.5, 2.4, 1.0, 0.3, 0.2])
    patterns = {"layer 0, head 2": WEIGHTS[0, 2], "layer 1, head 0": WEIGHTS[1, 0]}
    probe = np.array([3, 1, 4, 0, 2, 3, 1, 4, 0])  # 3 1 4 0 2, then 3 1 4 0 again
    fig = figures.replay_figure(steps, first, repeated, 20, patterns, 5, vocab_size=12, tokens=probe)
    text = plots.description(fig).text
    assert "step 20 marked: first half 2.50, repeated half 1.00" in text
    w = WEIGHTS[1, 0]
    stripe = np.mean([w[i, i - 5 + 1] for i in range(5, N)])  # one key right of each query's first copy
    assert (
        f"layer 1, head 0: previous-token score {np.diagonal(w, -1).mean():.2f}, induction score "
        f"{stripe:.2f}" in text
    )
    (table,) = plots.description(fig).tables
    assert table.rows == tuple(patterns) and table.cells[1] == (
        f"{np.diagonal(w, -1).mean():.3f}",
        f"{stripe:.3f}",
    )
    with pytest.raises(ValueError, match="one of the steps"):
        figures.replay_figure(steps, first, repeated, 25, patterns, 5, vocab_size=12, tokens=probe)


def test_the_patterns_figure_says_each_panels_scores():
    patterns = {"intact": WEIGHTS[1, 0], "ablated": WEIGHTS[0, 2]}
    probe = np.array([3, 1, 4, 0, 2, 3, 1, 4, 0])
    fig = figures.patterns_figure(patterns, 5, tokens=probe, title="Two panels", style="dark")
    text = plots.description(fig).text
    w = WEIGHTS[0, 2]
    stripe = np.mean([w[i, i - 5 + 1] for i in range(5, N)])
    assert text.startswith("Two panels.")
    previous = np.diagonal(w, -1).mean()
    assert f"ablated: previous-token score {previous:.2f}, induction score {stripe:.2f}" in text
    (table,) = plots.description(fig).tables
    assert table.rows == ("intact", "ablated")
    with pytest.raises(ValueError, match="at least one panel"):
        figures.patterns_figure({}, 5, tokens=probe, title="none")
    with pytest.raises(ValueError, match="repeat_start"):
        figures.patterns_figure(patterns, N, tokens=probe, title="bad")


def test_the_token_circuit_heatmap_counts_the_rows_that_peak_on_the_diagonal():
    matrix = np.eye(6) + RNG.uniform(0, 0.5, size=(6, 6))
    matrix[2] = [0, 0, 0, 0, 3, 0]  # row 2 peaks at column 4
    fig = figures.token_circuit_figure(matrix)
    description = plots.description(fig)
    assert "5 of the 6 rows have their largest entry on the diagonal" in description.text
    (table,) = [t for t in description.tables if t.caption == "Each query token's largest entry"]
    assert table.cells[2] == ("4", "3.00", "0.00")
    with pytest.raises(ValueError, match="must be square"):
        figures.token_circuit_figure(matrix[:3])
