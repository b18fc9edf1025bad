"""attnlib.decoder.gpt: lesson 18's batches, loss, evaluation and training loop.

The loss on (inputs, targets) is the decoder's next-token loss on the windows they come from, so
its gradients are the decoder's (whose backward pass tests/attnlib/test_decoder*.py check against
PyTorch and finite differences); the loop is checked for what it promises: the same batches with
or without dropout, early stopping's parameters, float32 kept, divergence named by its step.
"""

import re

import numpy as np
import pytest

from attnlib.decoder import DecoderConfig, init_parameters, loss_and_gradients
from attnlib.decoder.gpt import (
    GPTRun,
    TrainingSettings,
    evaluation_windows,
    sample_batch,
    train_gpt,
    windows_loss,
)
from attnlib.decoder.gpt import loss_and_gradients as gpt_loss_and_gradients

CONFIG = DecoderConfig(
    vocab_size=11, n_ctx=8, d_model=16, n_heads=2, n_layers=2, d_mlp=32, layer_norm=True, positions="rope"
)
STREAM = np.random.default_rng(5).integers(0, 11, size=400)


def test_a_batch_is_windows_of_the_stream_and_the_next_tokens():
    ids = np.arange(50)
    inputs, targets = sample_batch(ids, 200, 8, np.random.default_rng(0))
    assert inputs.shape == targets.shape == (200, 8)
    np.testing.assert_array_equal(inputs, inputs[:, :1] + np.arange(8))  # contiguous windows
    np.testing.assert_array_equal(targets, inputs + 1)
    # every start 0 … 41 (= 50 − 8 − 1) is possible: 200 draws of 42 reach both ends
    assert inputs[:, 0].min() == 0 and inputs[:, 0].max() == 41


def test_the_same_generator_draws_the_same_batch():
    first = sample_batch(STREAM, 4, 8, np.random.default_rng(3))
    again = sample_batch(STREAM, 4, 8, np.random.default_rng(3))
    np.testing.assert_array_equal(first[0], again[0])


def test_evaluation_windows_are_fixed_and_cover_the_stream():
    inputs, targets = evaluation_windows(np.arange(100), 8, 5)
    np.testing.assert_array_equal(inputs[:, 0], [0, 23, 46, 68, 91])  # 0 … 91 = 100 − 8 − 1
    np.testing.assert_array_equal(targets, inputs + 1)
    whole, _ = evaluation_windows(np.arange(100), 8)
    np.testing.assert_array_equal(whole[:, 0], np.arange(0, 92, 8))


def test_the_loss_on_inputs_and_targets_is_the_decoders_next_token_loss():
    windows = STREAM[: 3 * 9].reshape(3, 9)  # 3 windows of 8 inputs and their 8 targets
    params = init_parameters(CONFIG, 1)
    loss, grads = gpt_loss_and_gradients(CONFIG, params, windows[:, :-1], windows[:, 1:])
    # the decoder on 9 tokens predicts 8 and ignores the last position: the same 8 predictions
    config9 = DecoderConfig(**{**CONFIG.__dict__, "n_ctx": 9})
    expected_loss, expected = loss_and_gradients(config9, params, windows)
    assert loss == pytest.approx(expected_loss, rel=1e-13)
    for name, g in grads.items():
        np.testing.assert_allclose(g, expected[name], rtol=1e-10, atol=1e-14, err_msg=name)
    assert windows_loss(CONFIG, params, (windows[:, :-1], windows[:, 1:]), batch_size=2) == pytest.approx(
        loss, rel=1e-13
    )


def _settings(**changes) -> TrainingSettings:
    return TrainingSettings(
        **{"steps": 12, "batch_size": 4, "warmup": 2, "eval_every": 4, "eval_windows": 4} | changes
    )


def test_a_short_run_learns_and_records_every_step():
    run = train_gpt(CONFIG, STREAM, STREAM[::-1].copy(), _settings())
    assert isinstance(run, GPTRun)
    assert run.losses.shape == run.learning_rates.shape == run.grad_norms.shape == (12,)
    np.testing.assert_array_equal(run.eval_steps, [0, 4, 8, 12])
    assert run.train_losses[-1] < run.train_losses[0] - 0.1
    assert run.learning_rates[0] == pytest.approx(3e-3 / 2) and run.learning_rates[1] == pytest.approx(3e-3)
    assert run.best_step in run.eval_steps.tolist()
    best = int(np.argmin(run.val_losses))
    assert windows_loss(
        CONFIG, run.best_params, evaluation_windows(STREAM[::-1].copy(), 8, 4), batch_size=4
    ) == (pytest.approx(run.val_losses[best], rel=1e-12))


def test_dropout_and_weight_decay_see_the_same_batches():
    plain = train_gpt(CONFIG, STREAM, STREAM, _settings(steps=1, warmup=0, eval_every=1))
    changed = train_gpt(CONFIG, STREAM, STREAM, _settings(steps=1, warmup=0, eval_every=1, weight_decay=1.0))
    dropped = train_gpt(CONFIG, STREAM, STREAM, _settings(steps=1, warmup=0, eval_every=1, dropout=0.5))
    assert plain.losses[0] == changed.losses[0]  # one batch, before any update: the same loss
    assert dropped.losses[0] != plain.losses[0]  # dropout changes the training loss …
    assert dropped.train_losses[0] == plain.train_losses[0]  # … not the evaluation (nothing dropped)


def test_float32_parameters_train_in_float32():
    run = train_gpt(
        CONFIG,
        STREAM,
        STREAM,
        _settings(steps=2, warmup=1),
        params=init_parameters(CONFIG, 0, dtype=np.float32),
    )
    assert {p.dtype for p in run.params.values()} == {np.dtype(np.float32)}


def test_a_learning_rate_too_large_is_named_with_its_step():
    # step 1 moves every weight by about 1e307, still finite; step 2's sums overflow
    with pytest.raises(FloatingPointError, match=r"training diverged at step 2 .*smaller learning_rate"):
        train_gpt(CONFIG, STREAM, STREAM, _settings(learning_rate=1e308, min_learning_rate=0.0))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sample_batch(np.arange(5), 2, 8, np.random.default_rng(0)), "ids has 5 tokens"),
        (
            lambda: sample_batch(np.ones((4, 20), int), 2, 8, np.random.default_rng(0)),
            "1-D array of token ids",
        ),
        (lambda: sample_batch(np.arange(50.0), 2, 8, np.random.default_rng(0)), "1-D array of token ids"),
        (lambda: sample_batch(np.arange(50), 2, 8, 0), "rng must be a numpy.random.Generator"),
        (lambda: train_gpt(CONFIG, STREAM + 20, STREAM, _settings()), "train_ids"),
        (lambda: train_gpt(CONFIG, STREAM, STREAM, {"steps": 3}), "settings must be a TrainingSettings"),
        (lambda: _settings(dropout=1.0), "dropout is the chance that an entry is dropped"),
        (
            lambda: gpt_loss_and_gradients(
                CONFIG, init_parameters(CONFIG), STREAM[:8][None], STREAM[1:9][None], dropout=0.1
            ),
            "dropout=0.1 draws its masks with rng",
        ),
        (lambda: _settings(weight_decay=-0.1), "weight_decay must not be negative"),
        (lambda: _settings(warmup=12), "warmup"),
        (
            lambda: gpt_loss_and_gradients(
                CONFIG, init_parameters(CONFIG), STREAM[:8][None], STREAM[:7][None]
            ),
            "inputs (1, 8) and targets (1, 7)",
        ),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        call()
