"""attention_lessons.l15_generating_text.text_model: the frozen corpus and its split, the vocabulary, the
committed model (its hash, its log against a fresh run of tools/train_decoder.py) and the losses lesson 15
reports."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ROOT, run_training_script

from attention_lessons.l15_generating_text.text_model import (
    HELD_OUT_FRACTION,
    RARE,
    Corpus,
    Vocabulary,
    corpus_from_text,
    first_token_weights,
    held_out_batch,
    held_out_loss,
    load_corpus,
    load_text_model,
    long_text_losses,
    pooled_kv_losses,
    uptrained_kv_losses,
)
from attnlib.decoder import generate_with_trace, next_token_losses

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def test_the_corpus_is_the_lessons_markdown_split_at_paragraphs(monkeypatch):
    corpus = load_corpus()
    assert corpus.lessons[0] == "notebooks/00_start_here.ipynb" and len(corpus.lessons) == 15
    assert corpus.lessons[-1].startswith("notebooks/14_")
    for training, held_out in zip(corpus.training, corpus.held_out, strict=True):
        share = len(held_out) / (len(training) + len(held_out))
        assert 0.02 < share <= HELD_OUT_FRACTION + 1e-9  # the last tenth, cut at a paragraph
        assert held_out and held_out not in training
    assert corpus.training[0].startswith("# ")  # a lesson starts with its title
    import attention_lessons.l15_generating_text.text_model as text_model

    monkeypatch.setattr(text_model, "CORPUS_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"lessons_text\.txt has SHA-256 .* not the committed 0000"):
        load_corpus()


def test_corpus_from_text_splits_each_lesson():
    text = "=== a ===\n" + "one\n\n" * 20 + "last\n=== b ===\nfirst\n\n" + "x" * 30 + "\n\nend\n"
    corpus = corpus_from_text(text)
    assert corpus.lessons == ("a", "b")
    assert corpus.held_out == ("one\n\nlast", "end")
    assert corpus.training_text == corpus.training[0] + "\n\n" + corpus.training[1]
    with pytest.raises(ValueError, match="'=== lesson name ===' line"):
        corpus_from_text("no header\n=== a ===\nx\n\ny")
    with pytest.raises(TypeError, match="text must be a str"):
        corpus_from_text(b"=== a ===")


def test_vocabulary_encodes_decodes_and_maps_rare_characters():
    vocabulary = Vocabulary.from_text("aaabbbc" * 20 + "é", min_count=40)
    assert vocabulary.chars == "ab" + RARE and vocabulary.size == 4
    ids = vocabulary.encode("abcé")
    np.testing.assert_array_equal(ids, [Vocabulary.BOS, 1, 2, 3, 3])
    assert vocabulary.decode(ids) == "ab" + RARE + RARE
    assert vocabulary.normalise("cab") == RARE + "ab"
    np.testing.assert_array_equal(vocabulary.encode("ba", bos=False), [2, 1])
    with pytest.raises(ValueError, match="ids must be one sequence of token ids 0 … 3"):
        vocabulary.decode([4])
    with pytest.raises(ValueError, match="distinct characters"):
        Vocabulary("aab" + RARE)
    batch = held_out_batch(vocabulary, ["abab", "ba"], 3)
    np.testing.assert_array_equal(batch, [[0, 1, 2], [0, 1, 2], [0, 2, 1]])  # whole pieces of 2
    with pytest.raises(ValueError, match="no held-out text is 9 characters long"):
        held_out_batch(vocabulary, ["ab"], 10)


def test_the_committed_model_loads_and_its_hash_is_checked(monkeypatch):
    import attention_lessons.l15_generating_text.text_model as text_model

    model = load_text_model()
    c = model.config
    assert c.positions == "rope" and c.layer_norm and c.d_mlp > 0 and c.n_heads >= 4
    assert model.vocabulary.size == c.vocab_size < 100
    assert model.vocabulary == Vocabulary.from_text(load_corpus().training_text)
    steps = model.settings["steps"]
    assert model.train_loss.shape == (steps,)
    assert model.eval_steps[0] == 0 and model.eval_steps[-1] == steps
    assert model.validation_loss.shape == model.eval_steps.shape
    assert model.seconds > 0  # the wall time the script measured (the machine may have been busy)
    assert (
        ROOT / "attention_lessons" / "l15_generating_text" / text_model.MODEL_FILE
    ).stat().st_size < 3_000_000
    monkeypatch.setattr(text_model, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"text_model\.npz has SHA-256 .* not the committed 0000"):
        load_text_model()


def test_the_committed_model_learned_the_lessons_text():
    model = load_text_model()
    uniform = math.log(model.config.vocab_size)
    assert model.validation_loss[0] > uniform - 0.5
    assert model.train_loss[-50:].mean() < 2.5 and model.validation_loss[-1] < 2.5
    assert model.validation_loss[-1] < model.validation_loss[0] - 2.0
    assert held_out_loss(model) == pytest.approx(model.validation_loss[-1], rel=1e-9)
    text = model.generate("The attention weights", 40, temperature=0.5, seed=0)
    assert text.startswith("The attention weights") and len(text) == len("The attention weights") + 40
    assert text == model.generate("The attention weights", 40, temperature=0.5, seed=0)  # seeded
    assert " " in text[21:]  # it writes words


def first_lessons(count):
    """The corpus of the first ``count`` lessons only (a quicker evaluation)."""
    corpus = load_corpus()
    return Corpus(corpus.lessons[:count], corpus.training[:count], corpus.held_out[:count])


def test_pooling_the_committed_models_heads_costs_loss():
    model = load_text_model()
    corpus = first_lessons(3)
    losses = pooled_kv_losses(model, corpus=corpus)
    heads = model.config.n_heads
    assert list(losses) == [h for h in range(heads, 0, -1) if heads % h == 0]
    assert losses[heads] == pytest.approx(held_out_loss(model, corpus), rel=1e-12)  # nothing pooled
    assert losses[1] > losses[heads] + 0.5  # multi-query without retraining loses much
    weights = first_token_weights(model, corpus)
    assert weights.shape == (model.config.n_layers, heads) and ((weights > 0) & (weights < 1)).all()


def test_long_text_losses_dense_window_and_sinks():
    model = load_text_model()
    results = long_text_losses(model, length=3 * model.config.n_ctx, window=32, sinks=4, count=2)
    assert [r.name for r in results] == ["dense", "window", "window + sinks", "sinks, original places"]
    dense, window, sinks, original = results
    assert dense.position_losses.shape == (3 * model.config.n_ctx - 1,)
    # within the first window + sinks positions every pass sees every key
    np.testing.assert_allclose(window.position_losses[:32], dense.position_losses[:32], atol=1e-12)
    np.testing.assert_allclose(sinks.position_losses[:36], dense.position_losses[:36], atol=1e-12)
    # rotated at their original positions, the sinks see what dense attention sees while the window
    # holds every key; and no different from the rolling cache's while the query is at place ≤ 35
    np.testing.assert_allclose(original.position_losses[:36], dense.position_losses[:36], atol=1e-12)
    assert original.beyond > sinks.beyond  # past the context, the far sinks hurt
    assert dense.within == pytest.approx(dense.position_losses[: model.config.n_ctx - 1].mean())
    # past the trained context the dense model meets distances it never trained on; a window does not
    assert dense.beyond > dense.within + 0.5 and window.beyond < dense.beyond - 0.5
    # the windowed pass is what generation with the rolling cache computes
    corpus = load_corpus()
    text = next(t for t in corpus.held_out if len(t) >= 2 * model.config.n_ctx - 1)
    tokens = model.vocabulary.encode(text[: 2 * model.config.n_ctx - 1])
    _, trace = generate_with_trace(model.config, model.params, tokens[:150], 3, window=32, sinks=4)
    losses = next_token_losses(model.config, model.params, tokens[:153], window=32, sinks=4)
    log_p = trace.logits[:, 0] - np.log(np.exp(trace.logits[:, 0]).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(-log_p[0, tokens[150]], losses[0, 149], atol=1e-10)


def test_uptraining_pooled_heads_wins_back_loss():
    model = load_text_model()
    corpus = first_lessons(3)
    before, after = uptrained_kv_losses(model, 2, steps=6, batch=4, corpus=corpus)
    assert before == pytest.approx(pooled_kv_losses(model, [2], corpus=corpus)[2], rel=1e-12)
    assert after < before - 0.3  # a few steps already repair much of the pooling
    with pytest.raises(ValueError, match="divide"):
        uptrained_kv_losses(model, 3, steps=1, corpus=corpus)


def test_the_lessons_temperature_ladder_draws_far_from_any_tie():
    """Lesson 15 prints the texts of its temperature ladder: each draw (or greedy choice) must have a
    margin far above a last-bit difference, so that another CPU writes the same characters."""
    model = load_text_model()
    prompt = model.vocabulary.encode("The attention weights ")
    for temperature in (0, 0.5, 1.0, 1.5):
        _, trace = generate_with_trace(
            model.config, model.params, prompt, 80, temperature=temperature, seed=0
        )
        rng = np.random.default_rng(0)
        for logits in trace.logits[:, 0]:
            if temperature == 0:
                top = np.sort(logits)[-2:]
                assert top[1] - top[0] > 1e-6
            else:
                weights = np.exp((logits - logits.max()) / temperature)
                cumulative = np.cumsum(weights / weights.sum())
                assert np.abs(cumulative - rng.random()).min() > 1e-9


def test_the_script_reproduces_the_first_steps_of_the_committed_run(tmp_path):
    fresh = run_training_script("train_decoder.py", 4, tmp_path)
    committed = load_text_model()
    np.testing.assert_allclose(fresh["train_loss"], committed.train_loss[:4], rtol=1e-9)
    assert fresh["validation_loss"][0] == pytest.approx(committed.validation_loss[0], rel=1e-9)
    assert fresh["validation_loss"][1] < fresh["validation_loss"][0] - 0.3  # 4 steps already help
    assert str(fresh["vocabulary"]) == committed.vocabulary.chars
    np.testing.assert_array_equal(fresh["eval_steps"], [0, 4])
