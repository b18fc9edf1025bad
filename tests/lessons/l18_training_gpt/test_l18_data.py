"""Lesson 18's data: the token streams of lesson 17's corpus, bits per character, the unigram baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_lessons.l17_tokens import corpus
from attention_lessons.l17_tokens.analysis import training_text
from attention_lessons.l18_training_gpt.data import N_MERGES, bits_per_character, token_streams, unigram_loss


def test_the_streams_are_the_41_works_and_hamlet_in_512_tokens():
    streams = token_streams()
    assert streams.vocab_size == 256 + N_MERGES == 512
    assert streams.train_ids.dtype == np.uint16 and int(streams.train_ids.max()) < 512
    assert streams.train_chars == len(training_text())
    assert streams.decode(streams.train_ids) == training_text()  # nothing lost
    assert streams.decode(streams.val_ids) == corpus.shakespeare(["hamlet"])  # held out of everything
    assert streams.val_chars == len(corpus.shakespeare(["hamlet"]))
    assert 1.5 < streams.train_chars / len(streams.train_ids) < 2.5  # about two characters a token
    prompt = streams.encode("\nHAMLET.\n")
    assert prompt.dtype == np.uint16 and streams.decode(prompt) == "\nHAMLET.\n"


def test_bits_per_character_converts_nats_per_token():
    assert bits_per_character(math.log(2), 10, 10) == pytest.approx(1.0)
    assert bits_per_character(2.0, 50, 100) == pytest.approx(1.0 / math.log(2))


def test_the_unigram_loss_is_the_cross_entropy_of_the_training_frequencies():
    train, val = np.array([0, 0, 0, 1]), np.array([0, 1])
    counts = np.array([3 + 1, 1 + 1, 0 + 1])  # Laplace: one more of each
    expected = -(np.log(counts[0] / 7) + np.log(counts[1] / 7)) / 2
    assert unigram_loss(train, val, 3) == pytest.approx(expected)
    assert unigram_loss(train, np.array([2]), 3) == pytest.approx(-np.log(1 / 7))  # unseen: finite
