"""Lesson 18's committed runs: their hashes, what the lesson says of them, and the script that made
them, re-run for its first steps on this machine's kernels."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_training_script

import attention_lessons.l18_training_gpt.runs as runs
from attention_lessons.l18_training_gpt.data import token_streams, unigram_loss
from attnlib.decoder import generate_with_trace, parameter_shapes

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def test_the_committed_files_are_checked_by_their_hash(monkeypatch):
    monkeypatch.setattr(runs, "RUN_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"gpt_run\.npz has SHA-256 .* not the committed 0000"):
        runs.load_run()
    monkeypatch.setattr(runs, "EXPERIMENTS_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"gpt_experiments\.npz has SHA-256 .* not the committed 0000"):
        runs.load_experiments()


def test_the_long_run_is_the_lessons_model_trained_below_the_unigram_model():
    run, streams = runs.load_run(), token_streams()
    assert run.config == runs.model_config(streams.vocab_size)
    assert {p.dtype for p in run.params.values()} == {np.dtype(np.float32)}
    assert run.seconds < 20 * 60  # the limit on this machine
    assert len(run.losses) == run.settings["steps"] == run.eval_steps[-1]
    unigram = unigram_loss(streams.train_ids, streams.val_ids, streams.vocab_size)
    assert run.val_losses[0] > np.log(512)  # a random start is worse than a uniform guess
    assert run.val_losses[-1] < unigram - 2.0  # and the end far better than the unigram model
    assert np.all(np.diff(run.val_losses) < 0)  # no overfitting: every evaluation lower
    assert run.train_losses[-1] < run.val_losses[-1]  # the play it never read costs more
    assert run.learning_rates.max() == pytest.approx(run.settings["learning_rate"])


def test_the_experiments_show_overfitting_and_its_remedies():
    found = runs.load_experiments()
    plain = found.overfit["plain"]
    best = int(np.argmin(plain.val_losses))
    assert 0 < best < len(plain.val_losses) - 1  # validation turns and rises …
    assert plain.val_losses[-1] > plain.val_losses[best] + 0.3
    assert plain.train_losses[-1] < plain.val_losses[-1] - 1.0  # … while the slice is learned
    for remedy in ("dropout", "weight decay", "both"):
        assert found.overfit[remedy].val_losses[-1] < plain.val_losses[-1], remedy


def test_the_larger_models_reach_lower_losses_on_the_same_tokens():
    sizes = runs.load_experiments().scale
    parameters = [s.parameters for s in sizes]
    assert parameters == sorted(parameters) and len(sizes) == 3
    for size in sizes:
        config = runs.model_config(512, d_model=size.d_model, n_heads=size.n_heads, n_layers=size.n_layers)
        assert size.parameters == sum(int(np.prod(s)) for s in parameter_shapes(config).values())
    finals = [s.val_losses[-1] for s in sizes]
    assert finals == sorted(finals, reverse=True)
    assert len({s.tokens for s in sizes}) == 1


def test_the_script_reproduces_the_first_steps_of_the_committed_run(tmp_path):
    fresh = run_training_script("train_gpt.py", 4, tmp_path)
    committed = runs.load_run()
    # float32 on the same kernels gives the same bits; on other kernels (the second floating-point
    # path) each sum's last bits differ: a relative 1e-5 holds the first steps' losses with room
    np.testing.assert_allclose(fresh["run.losses"], committed.losses[:4], rtol=1e-5)
    assert fresh["run.val_losses"][0] == pytest.approx(committed.val_losses[0], rel=1e-5)
    np.testing.assert_array_equal(fresh["run.eval_steps"], [0, 4])


def test_the_lessons_samples_draw_far_from_any_tie():
    """Lesson 18 prints the long run's samples at two temperatures: each draw must have a margin far
    above what another CPU's float32 rounding moves a probability by, so that it writes the same text."""
    run, streams = runs.load_run(), token_streams()
    prompt = streams.encode("\nHAMLET.\n")
    for temperature in (0.8, 1.0):
        _, trace = generate_with_trace(run.config, run.params, prompt, 100, temperature=temperature, seed=10)
        rng = np.random.default_rng(10)
        for logits in trace.logits[:, 0].astype(np.float64):
            weights = np.exp((logits - logits.max()) / temperature)
            cumulative = np.cumsum(weights / weights.sum())
            assert np.abs(cumulative - rng.random()).min() > 2e-5
