"""Lesson 18's data: Shakespeare as tokens of lesson 17's byte-pair encoding, and what a loss means.

- :func:`token_streams`: the 41 works lesson 17 trains its tokenizer on, and *Hamlet* (held out of
  both the tokenizer and the model), encoded with :data:`N_MERGES` merges learned from the 41
  works (GPT-2's cut): the training and the validation streams;
- :func:`bits_per_character`: a loss in nats per token as bits per character, so that models with
  other tokenizers (characters, SmolLM2's) compare;
- :func:`unigram_loss`: the loss of the model that knows only how often each token occurs, the
  baseline a trained GPT must beat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from attention_lessons.l17_tokens import corpus
from attention_lessons.l17_tokens.analysis import HELD_OUT, training_text
from attnlib import tokens

__all__ = ["N_MERGES", "RULE", "TokenStreams", "bits_per_character", "token_streams", "unigram_loss"]

#: Merges of the lesson's tokenizer: 256 bytes + 256 merges = 512 token ids, a small embedding.
N_MERGES = 256
#: The cut before merging (lesson 17 · 4): GPT-2's regular expression.
RULE = "gpt2"


@dataclass(frozen=True)
class TokenStreams:
    """The lesson's tokenizer and its two token streams.

    Attributes
    ----------
    merges : list of (int, int)
        The :data:`N_MERGES` merges, learned from the training text.
    train_ids, val_ids : (N,) uint16
        The 41 works and *Hamlet*, encoded.
    train_chars, val_chars : int
        Their lengths in characters (ASCII: bytes).
    """

    merges: list[tuple[int, int]]
    train_ids: np.ndarray
    val_ids: np.ndarray
    train_chars: int
    val_chars: int

    @property
    def vocab_size(self) -> int:
        """256 bytes and one id per merge."""
        return 256 + len(self.merges)

    def decode(self, ids: np.ndarray) -> str:
        """The text of token ids (a model's sample)."""
        return tokens.decode([int(i) for i in np.ravel(ids)], self.merges)

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` (a prompt), as the streams were encoded."""
        return _encode(text, self.merges)


@cache
def token_streams() -> TokenStreams:
    """The lesson's tokenizer and streams (about 4 s: :func:`attnlib.tokens.train` and ``encode``).

    Lesson 18 · 1. The data.
    """
    text, held_out = training_text(), corpus.shakespeare([HELD_OUT])
    merges = tokens.train(text, N_MERGES, rule=RULE)
    return TokenStreams(merges, _encode(text, merges), _encode(held_out, merges), len(text), len(held_out))


def _encode(text: str, merges: list[tuple[int, int]]) -> np.ndarray:
    return np.array(tokens.encode(text, merges, rule=RULE), dtype=np.uint16)


def bits_per_character(nats_per_token: float, n_tokens: int, n_chars: int) -> float:
    """A loss in nats per token as bits per character: ``loss · tokens / characters / ln 2``.

    Lesson 18 · 2. The loss: a character-level model's loss (Karpathy's 1.47 nats on tiny
    Shakespeare) and ours compare only so.
    """
    return nats_per_token * n_tokens / n_chars / math.log(2)


def unigram_loss(train_ids: np.ndarray, val_ids: np.ndarray, vocab_size: int) -> float:
    """The validation loss, in nats per token, of a model that predicts each token's training frequency.

    Lesson 18 · 2. The loss. Counts start at 1 (Laplace), so a token never seen in training costs a
    finite loss.
    """
    counts = np.bincount(train_ids, minlength=vocab_size) + 1.0
    log_p = np.log(counts / counts.sum())
    return float(-log_p[val_ids].mean())
