"""Lesson 11's claims about √d_k and learning (section 4), from fresh trainings at d_k = 256.

Two trainings of 300 steps each, and both again from a nudged start: what the lesson prints and its
figure's text say, and that only the unscaled run is chaotic. The mechanism itself (gradients,
Adam, what training learns on small models) is tested in ``test_training.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.training import Model, init_parameters, train

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def _first_below(losses, threshold):
    hits = np.flatnonzero(losses < threshold)
    return int(hits[0]) if hits.size else len(losses)


def test_lesson_11_sqrt_dk_claims_hold_and_only_the_unscaled_run_is_chaotic():
    """Lesson 11, section 4, what it prints and its figure's text say: unscaled at d_k = 256 learns
    later, its first gradients are larger, later they fall below 1e-6 where the scaled ones stay above
    1e-5; a change in the 15th digit of the start moves the unscaled weights at step 300 by more than
    10 % and the scaled ones by less than 1e-9 (so only the unscaled run depends on the CPU)."""
    models = {"scaled": Model(d_k=256), "unscaled": Model(d_k=256, scale=1.0)}
    runs = {label: train(model, steps=300, seed=0) for label, model in models.items()}
    scaled, unscaled = runs["scaled"], runs["unscaled"]
    assert _first_below(unscaled.losses, 0.1) > _first_below(scaled.losses, 0.1)
    assert scaled.losses.min() < 0.01 and unscaled.losses.min() < 0.01
    for name in ("W_q", "W_k"):
        assert unscaled.grad_norms[name][0] > scaled.grad_norms[name][0]
        assert unscaled.grad_norms[name].min() < 1e-6 < 1e-5 < scaled.grad_norms[name].min()

    noise = np.random.default_rng(99)  # another nudge than the lesson's, each entry its own
    for label, model in models.items():
        start = {
            k: v * (1 + 1e-14 * noise.standard_normal(v.shape)) for k, v in init_parameters(model).items()
        }
        again, end = (
            train(model, steps=300, seed=0, start=start).parameters_at(300),
            runs[label].parameters_at(300),
        )
        moved = max(np.linalg.norm(again[k] - end[k]) / np.linalg.norm(end[k]) for k in end)
        assert moved < 1e-9 if label == "scaled" else moved > 0.1, (label, moved)
