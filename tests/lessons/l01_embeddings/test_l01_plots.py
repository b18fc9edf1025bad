"""attention_lessons.l01_embeddings.plots: the similarity figure draws the vectors, the projection and
the numbers of its box (read back from Matplotlib), its labels clear of the arrows, and says them in
its text alternative."""

import numpy as np
import pytest
from conftest import alt, label_problems, quiver_deltas

from attention_lessons.kit import plots
from attention_lessons.l01_embeddings.plots import similarity_figure, similarity_text
from attention_lessons.l01_embeddings.similarity import similarity

fmt = plots.format_cell


@pytest.mark.parametrize(("a", "b"), [([1, 0.2], [0.9, 0.35]), ([1, 0], [-1, 0]), ([-1.5, 1.4], [1, 1])])
def test_similarity_figure_labels_sit_at_their_tips_clear_of_the_arrows_and_the_numbers(a, b):
    view = similarity_figure(a, b, limits=plots.similarity_limits())
    plots.png_bytes(view.figure)
    assert label_problems(view.figure, view.ax) == []
    readout = view.readout.get_bbox_patch().get_window_extent()
    for label in view.arrows.labels:
        assert not label.get_window_extent().overlaps(readout)


# --- similarity_figure ---------------------------------------------------------------------------


def test_similarity_figure_draws_the_vectors_the_projection_and_the_numbers():
    a, b = np.array([1.0, 0.5]), np.array([0.2, 1.0])
    view = similarity_figure(a, b, labels=("u", "v"))
    np.testing.assert_array_equal(quiver_deltas(view.arrows), [a, b])
    foot = (a @ b) / (a @ a) * a  # the projection of b onto a, by hand
    np.testing.assert_allclose(np.column_stack(view.shadow.get_data()), [[0.0, 0.0], foot])
    np.testing.assert_allclose(np.column_stack(view.drop.get_data()), [b, foot])
    arc = np.column_stack(view.arc.get_data())
    radius = 0.3 * min(np.linalg.norm(a), np.linalg.norm(b))
    np.testing.assert_allclose(np.linalg.norm(arc, axis=1), radius)
    angles = np.degrees(np.arctan2(arc[:, 1], arc[:, 0]))
    expected = np.degrees(np.arccos(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
    assert angles[-1] - angles[0] == pytest.approx(expected)
    assert view.readout.get_text() == similarity_text(a, b, ("u", "v"))
    assert view.readout.get_text().splitlines() == [
        f"u·v     = {a @ b:+.2f}",
        f"|u| |v| = {np.linalg.norm(a) * np.linalg.norm(b):.2f}",
        f"cos θ   = {a @ b / np.linalg.norm(a) / np.linalg.norm(b):+.3f}",
        f"θ       = {expected:.1f}°",
    ]


def test_similarity_figure_of_a_zero_vector_has_no_angle():
    view = similarity_figure([0.0, 0.0], [1.0, 1.0])
    assert len(view.arc.get_xdata()) == 0 and len(view.shadow.get_xdata()) == 0
    assert "cos θ   : undefined" in view.readout.get_text()


def test_similarity_figure_of_opposite_vectors_draws_a_half_circle():
    view = similarity_figure([1.0, 0.0], [-2.0, 0.0])
    angles = np.degrees(np.arctan2(*np.column_stack(view.arc.get_data())[:, ::-1].T))
    assert abs(angles[-1] - angles[0]) == pytest.approx(180.0)


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        ([1, 2, 3], [1, 2, 3], {}, r"a and b must be 2D vectors of shape \(2,\)"),
        ([1, 0], [0, 1], {"labels": ("a",)}, r"labels must name the two vectors"),
        ([1, np.nan], [0, 1], {}, r"^a has 1 non-finite"),
    ],
)
def test_similarity_figure_bad_input_is_a_clear_error(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        similarity_figure(a, b, **kwargs)


# --- text alternative ----------------------------------------------------------------------------


def test_similarity_figure_gives_the_numbers_of_its_box():
    a, b = np.array([2.0, 1.0]), np.array([0.5, 1.5])
    sim = similarity(a, b)
    text = alt(similarity_figure(a, b, labels=("q", "k")).figure)
    assert f"q ({fmt(2.0)}, {fmt(1.0)}), k ({fmt(0.5)}, {fmt(1.5)})" in text
    assert f"q·k = {fmt(sim.dot)}" in text and f"cos θ = {fmt(sim.cosine, 3)}" in text
    assert f"θ = {fmt(sim.angle_degrees, 1)}°" in text
