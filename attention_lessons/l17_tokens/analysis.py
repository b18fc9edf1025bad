"""Lesson 17's measurements: the texts it tokenizes, SmolLM2's tokenizer, and what tokens cost.

- :func:`sample_texts`: the texts every tokenizer of the lesson reads (English, Shakespeare held out
  of the training, code, numbers, emoji), and :data:`SAME_SENTENCE`, one sentence in eight languages;
- :func:`smollm2_tokenizer`: attnlib's encoder with SmolLM2's merges and cut, and the production
  tokenizer built from the same file, for the lesson to compare;
- :func:`bytes_per_token` and :func:`attention_cost`: the compression, and what it does to n, the
  n² scores and the KV cache.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import attnlib.core
from attention_lessons.kit import committed
from attention_lessons.l17_tokens import corpus
from attnlib import counting
from attnlib.model import gguf, llama_file
from attnlib.tokens import Tokenizer, utf8

__all__ = [
    "HELD_OUT",
    "SAME_SENTENCE",
    "CostRow",
    "attention_cost",
    "bytes_per_token",
    "sample_texts",
    "smollm2_tokenizer",
    "soliloquy",
    "training_text",
]

#: The work the lesson's tokenizer is not trained on, to measure it on text it has not seen.
HELD_OUT = "hamlet"

#: Article 1 of the Universal Declaration of Human Rights, in the United Nations' translations: one
#: sentence's meaning, so that the tokens each language needs for it compare.
SAME_SENTENCE = {
    "English": "All human beings are born free and equal in dignity and rights. They are endowed with "
    "reason and conscience and should act towards one another in a spirit of brotherhood.",
    "French": "Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués "
    "de raison et de conscience et doivent agir les uns envers les autres dans un esprit de fraternité.",
    "German": "Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft "
    "und Gewissen begabt und sollen einander im Geist der Brüderlichkeit begegnen.",
    "Russian": "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены "
    "разумом и совестью и должны поступать в отношении друг друга в духе братства.",
    "Arabic": "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن "
    "يعامل بعضهم بعضًا بروح الإخاء.",
    "Hindi": "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है। "
    "उन्हें बुद्धि और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए।",
    "Chinese": "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。",
    "Japanese": "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。"
    "人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。",
}

EMOJI = "👍 👍🏽 🎉 🚀 ❤️ 😂 🙏 👨‍👩‍👧 🇫🇷 🇯🇵 ☕ 🐍 ✨ 🔥 💡 🤖 "


def sample_texts(length: int = 3000) -> dict[str, str]:
    """The texts the lesson measures every tokenizer on, each about ``length`` characters.

    Lesson 17 · 3 and 5. English is these lessons' own text (lesson 15's corpus), Shakespeare is
    :data:`HELD_OUT`'s opening (the lesson trains on the other works), code is attnlib's softmax,
    numbers are seeded random numbers as a text writes them, emoji repeat a line of sixteen.
    """
    english = committed.read_text("attention_lessons.l15_generating_text", "lessons_text.txt")
    rng = np.random.default_rng(17)  # whole numbers only: the same digits on any CPU
    numbers = " ".join(
        f"{rng.integers(10 ** (size - 1), 10**size):,}" + (f".{rng.integers(100):02d}" if size % 2 else "")
        for size in rng.integers(1, 8, 600)
    )
    code = inspect.getsource(attnlib.core.softmax) + inspect.getsource(attnlib.core.attention_steps)
    texts = {
        "English (these lessons)": english.split("\n", 1)[1],
        "Shakespeare (Hamlet, held out)": corpus.shakespeare([HELD_OUT]),
        "Python (attnlib's code)": code,
        "numbers": numbers,
        "emoji": EMOJI * (length // len(EMOJI) + 1),
    }
    return {name: text[:length] for name, text in texts.items()}


def training_text() -> str:
    """The text lesson 17 trains its tokenizer on: every work of the corpus but :data:`HELD_OUT`.

    Lesson 17 · 3. Train on Shakespeare.
    """
    return corpus.shakespeare([name for name in corpus.works() if name != HELD_OUT])


def soliloquy(length: int = 200) -> str:
    """The first ``length`` characters of Hamlet's "To be, or not to be": the explorer's text.

    Lesson 17 · 6. Try it.
    """
    held_out = corpus.shakespeare([HELD_OUT])
    return held_out[held_out.index("To be, or not to be") :][:length]


def smollm2_tokenizer() -> tuple[Tokenizer, Any, dict[str, Any]]:
    """attnlib's encoder with SmolLM2's 48,900 merges and its cut, the production tokenizer, the metadata.

    Lesson 17 · 4. The real tokenizer. Both are built from the same GGUF's metadata, read without
    its weights (:func:`attnlib.model.gguf.read_gguf_metadata`): ours with
    :meth:`attnlib.tokens.Tokenizer.from_gguf`, the production one with the ``tokenizers`` library
    (:func:`attnlib.model.gguf.tokenizer_from_metadata`, llama.cpp's rule for the cut).
    """
    metadata = gguf.read_gguf_metadata(gguf.find_smollm2())
    return Tokenizer.from_gguf(metadata), gguf.tokenizer_from_metadata(metadata), metadata


def bytes_per_token(texts: Mapping[str, str], encoders: Mapping[str, Callable[[str], list[int]]]) -> dict:
    """``{encoder: {text: bytes per token}}``: each text's UTF-8 bytes over its number of tokens.

    Lesson 17 · 3. Train on Shakespeare: the compression.
    """
    return {
        name: {title: len(utf8(text)) / len(encode(text)) for title, text in texts.items()}
        for name, encode in encoders.items()
    }


@dataclass(frozen=True)
class CostRow:
    """What one text costs a model: its tokens, their n² scores per head, its KV cache."""

    characters: int
    tokens: int
    scores: int
    cache_bytes: int

    @property
    def characters_per_token(self) -> float:
        return self.characters / self.tokens


def attention_cost(text: str, ids: list[int], metadata: Mapping[str, Any]) -> CostRow:
    """What ``text``, as the token ids ``ids``, costs SmolLM2's attention.

    Lesson 17 · 5. What tokens do to attention: ``n`` tokens make ``n²`` scores in each head of each
    layer (lesson 12), and a KV cache of ``n`` rows per layer (lesson 15, float32 here).
    """
    shape = llama_file.config_from_metadata(metadata).shape
    n = len(ids)
    return CostRow(
        characters=len(text),
        tokens=n,
        scores=n * n,
        cache_bytes=int(counting.kv_cache_bytes(shape, n, bytes_per_number=4)),
    )
