"""attention_lessons.l05_softmax.plots: the softmax figure draws the scores and the weights (compared with
a softmax written out here), names bad input, and lists each key in its text alternative; and the
static figures of lessons 01, 04 and 05 are drawn without the explorers."""

import numpy as np
import pytest
from conftest import MINUS_INF, alt, tables

from attention_lessons.kit import plots
from attention_lessons.l05_softmax.plots import softmax_figure
from attnlib import softmax

fmt = plots.format_cell


# --- softmax_figure ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("temperature", "title"), [(1.0, "T = 1"), (0.25, "T = 0.25"), (4, "T = 4"), (1e-5, "T = 1e-05")]
)
def test_softmax_figure_draws_scores_and_weights(temperature, title):
    scores = np.array([8.0, 6.0, -np.inf, 1.0])
    view = softmax_figure(scores, ["h1", "h2", "h3", "h4"], temperature=temperature)
    finite = np.where(np.isfinite(scores), scores, -1e300)
    expected = np.exp((finite - 8.0) / temperature)
    expected /= expected.sum()
    np.testing.assert_allclose([bar.get_height() for bar in view.weight_bars], expected, atol=1e-15)
    np.testing.assert_allclose(view.weights_drawn, expected, atol=1e-15)
    assert [bar.get_height() for bar in view.score_bars] == [8.0, 6.0, 0.0, 1.0]
    assert [t.get_text() for t in view.score_texts] == ["8.00", "6.00", MINUS_INF, "1.00"]
    assert [t.get_text() for t in view.weight_texts] == [f"{w:.3f}" for w in expected]
    assert view.weights.get_title() == f"Weights softmax(s / T), {title}"


@pytest.mark.parametrize(
    ("temperature", "error", "message"),
    [
        (True, TypeError, r"temperature must be a positive number"),
        ("1", TypeError, r"temperature must be a positive number"),
        (0, ValueError, r"temperature must be a positive, finite number, got 0.0"),
        (-1.0, ValueError, r"temperature must be a positive, finite number"),
        (np.inf, ValueError, r"temperature must be a positive, finite number, got inf"),
        (np.nan, ValueError, r"temperature must be a positive, finite number, got nan"),
        (1e-310, ValueError, r"temperature 1e-310 is too small for these scores"),
    ],
)
def test_softmax_figure_bad_temperature_is_a_clear_error(temperature, error, message):
    with pytest.raises(error, match=message):
        softmax_figure([1, 2], ["a", "b"], temperature=temperature)


def test_softmax_figure_bad_scores_are_a_clear_error():
    with pytest.raises(ValueError, match=r"scores must be one row of 2 values"):
        softmax_figure([[1.0, 2.0]], ["a", "b"])
    with pytest.raises(ValueError, match=r"span more than the largest float"):
        softmax_figure([1.7e308, -1.7e308], ["a", "b"])
    with pytest.raises(ValueError, match=r"limits must have low < high"):
        softmax_figure([1.0, 2.0], ["a", "b"], limits=(1.0, 0.0))


def test_explorer_limits_have_a_margin():
    assert plots.score_limits((-10.0, 10.0)) == pytest.approx((-12.4, 12.4))
    assert plots.similarity_limits((-1.5, 1.5)) == pytest.approx((-1.8, 1.8))
    view = softmax_figure([1.0, 2.0], ["a", "b"], limits=plots.score_limits())
    assert view.scores.get_ylim() == pytest.approx((-12.4, 12.4))


# --- text alternative ----------------------------------------------------------------------------


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_softmax_figure_lists_each_keys_score_and_weight(temperature):
    scores = np.array([2.0, 1.0, -np.inf, 0.1])
    labels = ["animal", "street", "masked", "it"]
    text = alt(softmax_figure(scores, labels, temperature=temperature).figure)
    weights = softmax(scores / temperature)
    assert f"T = {temperature:g} over 4 keys" in text
    for name, s, w in zip(labels, scores, weights, strict=True):
        assert f"{name} {fmt(s)} → {w:.3f}" in text


def test_softmax_figure_of_many_keys_puts_them_in_a_table():
    scores = np.linspace(-2, 2, 10)
    view = softmax_figure(scores, [f"k{i}" for i in range(10)])
    weights = softmax(scores)
    assert f"the largest weight is k9's, {weights[9]:.3f}" in alt(view.figure)
    (table,) = tables(view.figure)
    assert table.cells[3] == (fmt(scores[3]), f"{weights[3]:.3f}")


# --- no explorers --------------------------------------------------------------------------------


def test_the_pictures_need_no_explorers():
    """A static lesson figure is drawn without the explorers (attention_lessons.kit.widgets, a lesson's
    widgets, anywidget)."""
    import subprocess
    import sys

    code = """
import sys
import attention_lessons.kit.plots as plots
from attention_lessons.kit import examples
from attention_lessons.l01_embeddings.plots import similarity_figure
from attention_lessons.l04_scaling.plots import scaling_figure
from attention_lessons.l05_softmax.plots import softmax_figure
four = examples.four_tokens_2d()
plots.png_bytes(similarity_figure(four.X[0], four.X[1], limits=plots.similarity_limits()).figure)
plots.png_bytes(softmax_figure([8.0, 6.0, 1.0], ["h1", "h2", "h3"], limits=plots.score_limits()).figure)
plots.png_bytes(scaling_figure(64).figure)
explorers = ("anywidget", "attention_lessons.kit.widgets")  # (seaborn itself imports ipywidgets if it can)
lessons = [m for m in sys.modules if m.startswith("attention_lessons.l") and m.endswith(".widgets")]
print(sorted(m for m in sys.modules if m.startswith(explorers)) + lessons)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
