"""Lesson 17's measurements: its texts, SmolLM2's two tokenizers, the compression and the cost."""

from __future__ import annotations

import pytest

from attention_lessons.l17_tokens import analysis
from attnlib import tokens
from attnlib.counting import DecoderShape, kv_cache_bytes


def test_the_sample_texts_are_fixed_and_as_long_as_asked() -> None:
    first, again = analysis.sample_texts(), analysis.sample_texts()
    assert first == again
    assert set(first) == {
        "English (these lessons)",
        "Shakespeare (Hamlet, held out)",
        "Python (attnlib's code)",
        "numbers",
        "emoji",
    }
    assert all(0 < len(text) <= 3000 for text in first.values())
    assert first["Shakespeare (Hamlet, held out)"].startswith("HAMLET")
    assert set(first["numbers"]) <= set("0123456789,. ")
    assert len(analysis.sample_texts(500)["English (these lessons)"]) == 500


def test_the_same_sentence_is_given_in_eight_scripts_and_languages() -> None:
    assert len(analysis.SAME_SENTENCE) == 8
    assert analysis.SAME_SENTENCE["English"].startswith("All human beings are born free")
    assert all(text.strip() == text and text for text in analysis.SAME_SENTENCE.values())


def test_bytes_per_token_is_bytes_over_tokens() -> None:
    texts = {"a": "aaaa", "b": "café"}
    merges = tokens.train("aaaa", 2)
    table = analysis.bytes_per_token(
        texts, {"bytes": lambda t: tokens.encode(t, []), "two": lambda t: tokens.encode(t, merges)}
    )
    assert table["bytes"] == {"a": 1.0, "b": 1.0}
    assert table["two"]["a"] == 4.0  # one token, "aaaa"
    assert table["two"]["b"] == 1.0


def test_the_attention_cost_counts_scores_and_lesson_15s_cache() -> None:
    metadata = {
        "general.architecture": "llama",
        "llama.block_count": 2,
        "llama.attention.head_count": 4,
        "llama.attention.head_count_kv": 2,
        "llama.embedding_length": 32,
        "llama.feed_forward_length": 64,
        "llama.context_length": 128,
        "llama.rope.freq_base": 10000.0,
        "llama.attention.layer_norm_rms_epsilon": 1e-5,
        "llama.vocab_size": 300,
        "tokenizer.ggml.tokens": ["x"] * 300,
    }
    cost = analysis.attention_cost("some text", [1, 2, 3], metadata)
    shape = DecoderShape(n_layers=2, d_model=32, n_heads=4, d_mlp=64, vocab=300, n_kv_heads=2, d_head=8)
    assert (cost.characters, cost.tokens, cost.scores) == (9, 3, 9)
    assert cost.cache_bytes == kv_cache_bytes(shape, 3, bytes_per_number=4) == 2 * 2 * 2 * 8 * 4 * 3
    assert cost.characters_per_token == pytest.approx(3.0)


@pytest.mark.model
def test_smollm2s_two_tokenizers_agree_on_the_lessons_texts() -> None:
    ours, production, metadata = analysis.smollm2_tokenizer()
    assert metadata["tokenizer.ggml.pre"] == "smollm"
    for text in [*analysis.sample_texts().values(), *analysis.SAME_SENTENCE.values()]:
        assert ours.encode(text) == production.encode(text).ids
