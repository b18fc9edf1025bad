"""The training replay of lesson 11: every saved step selects what attnlib.training computed."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets

from attention_lessons.l11_learning_to_attend import widgets
from attention_lessons.l11_learning_to_attend.widgets import replay_table
from attnlib.training import Model, forward, token_labels, train

pytestmark = pytest.mark.filterwarnings("error")

RUN = train(Model(length=6), steps=20, snapshot_every=5, seed=1)


def test_every_saved_step_shows_the_weights_and_loss_of_that_step() -> None:
    replay = widgets.training_replay(RUN)
    assert replay.step == 20  # the last saved step first
    for step in RUN.snapshot_steps.tolist():
        replay.step = step
        row = next(r for r in replay.table if r["step"] == replay.step)  # what the page draws
        parameters = RUN.parameters_at(step)
        expected = forward(RUN.model, parameters, RUN.probe[None, :]).weights[0]
        np.testing.assert_array_equal(row["weights"], expected)
        assert row["loss"] == RUN.losses[step]
    assert replay.tokens == token_labels(RUN.probe)
    assert replay.losses == RUN.losses.tolist()
    replay.close()


def test_the_table_holds_the_previous_token_weight() -> None:
    table = replay_table(RUN)
    assert [row["step"] for row in table] == [0, 5, 10, 15, 20]
    for row in table:
        assert row["previous"] == pytest.approx(np.diagonal(np.array(row["weights"]), offset=-1).mean())


def test_bad_steps_and_runs_are_named() -> None:
    replay = widgets.training_replay(RUN, step=5)
    with pytest.raises(traitlets.TraitError, match="saved steps"):
        replay.step = 7
    assert replay.step == 5
    replay.close()
    with pytest.raises(ValueError, match="saved steps"):
        widgets.training_replay(RUN, step=3)
    with pytest.raises(TypeError, match="TrainingRun"):
        widgets.training_replay("run")
    for step in (5.0, np.float32(5), True):
        with pytest.raises(ValueError, match="saved steps"):
            widgets.training_replay(RUN, step=step)
    replay = widgets.training_replay(RUN, step=np.int64(5))
    for step in (10.0, np.float32(10), True):
        with pytest.raises(traitlets.TraitError, match="step"):
            replay.step = step
        assert replay.step == 5
    replay.close()
