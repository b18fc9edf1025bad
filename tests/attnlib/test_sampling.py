"""attnlib.sampling, the one sampler of lesson 15's decoder and lesson 16's SmolLM2: the greedy
choice, a draw written out, the rows of a batch drawn in turn, a temperature as small as a float
allows, and both generation loops drawing with it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attnlib import decoder, sampling
from attnlib.model import llama


def written_out(logits: np.ndarray, temperature: float, u: float) -> int:
    """The first token whose running sum of ``softmax(logits / T)`` passes the uniform draw ``u``."""
    p = np.exp((logits - logits.max()) / temperature)
    return int(np.searchsorted(np.cumsum(p / p.sum()), u, side="right"))


@pytest.mark.parametrize("temperature", [0.3, 1.0, 2.5])
def test_a_draw_is_the_first_token_whose_running_sum_passes_u(temperature):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(6, 40))
    drawn = sampling.choose_tokens(logits, temperature, np.random.default_rng(7))
    u = np.random.default_rng(7).random(6)  # one draw per row, in turn
    assert drawn.tolist() == [written_out(row, temperature, ui) for row, ui in zip(logits, u, strict=True)]


def test_greedy_takes_the_largest_logit_and_draws_nothing():
    rng = np.random.default_rng(3)
    logits = np.array([[0.5, 2.0, 2.0, -1.0], [3.0, 0.0, 1.0, 2.9]])
    np.testing.assert_array_equal(sampling.choose_tokens(logits, 0.0, rng), [1, 0])  # the first if tied
    assert rng.random() == np.random.default_rng(3).random()  # the generator was not used


@pytest.mark.parametrize("temperature", [1e-310, 5e-324, 1e-300])
def test_a_tiny_temperature_is_greedy_without_a_warning(temperature):
    logits = np.array([[1.0, 3.0, 2.0, 3.0 - 1e-9], [-4.0, -5.0, 0.0, -0.5]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(20):  # a token of probability 0 is never drawn, token 0 included
            drawn = sampling.choose_tokens(logits, temperature, np.random.default_rng(seed))
            np.testing.assert_array_equal(drawn, [1, 2])
        probs = sampling.next_token_probabilities(logits[0], temperature=temperature)
    np.testing.assert_array_equal(probs, [0, 1, 0, 0])


def test_the_filters_renormalise_only_what_they_kept():
    z = np.array([2.0, 1.0, 0.5, -1.0])
    plain = sampling.next_token_probabilities(z, temperature=1.0)
    e = np.exp(z - z.max())
    np.testing.assert_array_equal(plain, e / e.sum())  # no filter: softmax, and nothing more
    top2 = sampling.next_token_probabilities(z, temperature=1.0, top_k=2)
    np.testing.assert_allclose(top2, np.r_[e[:2] / e[:2].sum(), 0, 0], rtol=1e-15)


def test_the_decoder_and_smollm2s_loop_draw_with_it():
    """Lesson 15's decoder and lesson 16's model, given the same seed, draw each token as
    :func:`attnlib.sampling.choose_tokens` draws it from the logits they chose from."""
    config = decoder.DecoderConfig(vocab_size=9, n_ctx=12, d_model=8, n_heads=2, n_layers=1)
    params = decoder.init_parameters(config, seed=2)
    tokens, trace = decoder.generate_with_trace(config, params, [1, 2], 6, temperature=1.3, seed=5)
    rng = np.random.default_rng(5)
    redrawn = [int(sampling.choose_tokens(step, 1.3, rng)[0]) for step in trace.logits]
    assert redrawn == tokens[2:].tolist()

    shape = llama.LlamaConfig(1, 2, 1, 4, 8, 16, 11, 32, 10000.0, 1e-5)
    model = llama.LlamaModel.random(shape, seed=0)
    new, logits = llama.generate_with_logits(model, [3, 1, 4], 6, temperature=0.8, top_k=5, seed=9)
    rng = np.random.default_rng(9)
    redrawn = [int(sampling.choose_tokens(step[None], 0.8, rng, 5)[0]) for step in logits]
    assert redrawn == new.tolist()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"temperature": -1.0}, ValueError, r"temperature must be 0 \(greedy\) or a finite positive number"),
        ({"temperature": "warm"}, TypeError, "temperature must be a real number"),
        ({"top_k": 0}, ValueError, "top_k must be at least 1"),
        ({"top_k": 5}, ValueError, "top_k must be from 1 to the vocabulary's 4"),
        ({"top_p": 0.0}, ValueError, r"top_p must be in \(0, 1\]"),
        ({"top_p": True}, TypeError, "top_p must be a real number"),
    ],
)
def test_bad_settings_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        sampling.next_token_probabilities([1.0, 2.0, 3.0, 4.0], **kwargs)
