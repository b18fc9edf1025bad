"""The training replay of lesson 14: every saved step and head selects the snapshot it was given."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets

from attention_lessons.l14_induction_heads import induction, widgets
from attention_lessons.l14_induction_heads.widgets import DECIMALS, replay_from_snapshots, replay_table
from attnlib.core import softmax

pytestmark = pytest.mark.filterwarnings("error")


def synthetic_run(n_steps: int = 4, n_layers: int = 2, n_heads: int = 3, n: int = 7, seed: int = 0) -> dict:
    """Random causal snapshots (softmax of random scores under the causal mask) and scores."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n_steps, n_layers, n_heads, n, n))
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    scores[..., future] = -np.inf
    return {
        "steps": np.arange(n_steps) * 10,
        "weights": softmax(scores),
        "previous": rng.uniform(size=(n_steps, n_layers, n_heads)),
        "induction": rng.uniform(size=(n_steps, n_layers, n_heads)),
    }


RUN = synthetic_run()
LOSS_STEPS = np.arange(31)
LOSSES = (LOSS_STEPS, np.full(31, 2.0), np.linspace(2.0, 0.1, 31))


def make(**changes: object) -> widgets.InductionReplay:
    arguments = {
        **RUN,
        "losses": LOSSES,
        "vocab_size": 8,
        "tokens": [f"t{i}" for i in range(7)],
        "repeat_start": 4,
        **changes,
    }
    snapshots = [arguments.pop(k) for k in ("steps", "weights", "previous", "induction")]
    return replay_from_snapshots(*snapshots, **arguments)


def test_each_row_holds_the_snapshot_rounded_with_future_keys_masked() -> None:
    table = replay_table(RUN["steps"], RUN["weights"], RUN["previous"], RUN["induction"])
    assert [row["step"] for row in table] == [0, 10, 20, 30]
    for k, row in enumerate(table):
        weights = row["weights"]
        for layer in range(2):
            for head in range(3):
                for i in range(7):
                    for j in range(7):
                        shown = weights[layer][head][i][j]
                        if j > i:
                            assert shown is None  # masked, not 0
                        else:
                            expected = RUN["weights"][k, layer, head, i, j]
                            assert shown == pytest.approx(expected, abs=10**-DECIMALS)
        np.testing.assert_allclose(row["previous"], RUN["previous"][k], atol=10**-DECIMALS)
        np.testing.assert_allclose(row["induction"], RUN["induction"][k], atol=10**-DECIMALS)


def test_the_explorer_starts_at_the_last_step_with_head_0_of_each_layer() -> None:
    replay = make()
    assert replay.step == 30 and replay.heads == [0, 0] and replay.n_heads == 3
    assert replay.chance == pytest.approx(np.log(8))
    assert replay.loss_second == LOSSES[2].tolist()
    assert replay.repeat_start == 4
    replay.step = 10
    replay.heads = [2, 1]
    assert (replay.step, replay.heads) == (10, [2, 1])
    replay.close()


def test_bad_moves_and_bad_snapshots_are_named() -> None:
    replay = make(step=20, heads=[1, 2])
    with pytest.raises(traitlets.TraitError, match="saved steps"):
        replay.step = 7
    with pytest.raises(traitlets.TraitError, match="one head"):
        replay.heads = [0, 3]
    with pytest.raises(traitlets.TraitError, match="one head"):
        replay.heads = [0]
    assert (replay.step, replay.heads) == (20, [1, 2])
    replay.close()
    with pytest.raises(ValueError, match="saved steps"):
        make(step=5)
    leaky = RUN["weights"].copy()
    leaky[0, 0, 0, 0, 1] = 0.5
    with pytest.raises(ValueError, match="causal"):
        make(weights=leaky)
    with pytest.raises(ValueError, match="shape"):
        make(weights=RUN["weights"][:, 0])
    with pytest.raises(ValueError, match="previous must have shape"):
        make(previous=RUN["previous"][:, :1])
    with pytest.raises(ValueError, match="increase"):
        make(steps=[0, 10, 10, 30])
    with pytest.raises(ValueError, match="missing \\[20, 30\\]"):
        make(losses=(LOSS_STEPS[:20], LOSSES[1][:20], LOSSES[2][:20]))
    with pytest.raises(ValueError, match="tokens"):
        make(tokens=["a", "b"])
    with pytest.raises(ValueError, match="repeat_start"):
        make(repeat_start=7)
    with pytest.raises(ValueError, match="vocab_size"):
        make(vocab_size=1)


def test_the_committed_run_is_replayed_from_what_attnlib_induction_computes() -> None:
    run = induction.load_induction_run()
    replay = widgets.induction_replay(run, heads=[0, 1])
    measured = [s for s in run.snapshot_steps.tolist() if s < len(run.repeated_half_loss)]
    assert [row["step"] for row in replay.table] == measured and replay.step == measured[-1]
    assert replay.repeat_start == run.half and replay.tokens == [str(t) for t in run.probe.tolist()]
    assert replay.loss_second == run.repeated_half_loss.tolist()
    k = run.snapshot_steps.tolist().index(measured[-1])
    row = replay.table[-1]
    expected_previous = induction.previous_token_scores(run.probe_weights[k])
    expected_induction = induction.induction_scores(run.probe_weights[k], run.probe)
    np.testing.assert_allclose(row["previous"], expected_previous, atol=10**-DECIMALS)
    np.testing.assert_allclose(row["induction"], expected_induction, atol=10**-DECIMALS)
    replay.close()
    with pytest.raises(TypeError, match="InductionRun"):
        widgets.induction_replay("run")
