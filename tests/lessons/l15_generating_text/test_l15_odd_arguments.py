"""Lesson 15's text model (:mod:`attention_lessons.l15_generating_text.text_model`) and its explorer,
called with odd arguments: a right answer or a clear error.

The sweep of ``tests/attnlib/test_odd_arguments_part3.py`` (``conftest``'s odd values and harness):
every combination of odd values goes into each entry of :data:`CALLS`; a model file cut short, not
a zip or without one of its arrays is a clear error; the generation explorer's traits refuse what
they cannot show. ``PYTHONPATH=tests python tests/lessons/l15_generating_text/test_l15_odd_arguments.py``
counts the calls that are not clean.
"""

from __future__ import annotations

import dataclasses
import functools
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import answer_or_clear_error, every_odd_combination, every_odd_trait, print_unclean

from attention_lessons.kit.committed import read_committed
from attention_lessons.l15_generating_text import text_model
from attention_lessons.l15_generating_text import widgets as generation


@functools.cache
def _model() -> text_model.TextModel:
    return text_model.load_text_model()


@functools.cache
def _small_corpus() -> text_model.Corpus:
    """The corpus with two short held-out texts: the analyses run in milliseconds."""
    corpus = text_model.load_corpus()
    return dataclasses.replace(corpus, held_out=(corpus.held_out[0][:200], corpus.held_out[1][:100]))


CALLS: dict[str, tuple[Callable[..., object], int]] = {
    "corpus_from_text": (lambda text: text_model.corpus_from_text(text), 1),
    "Vocabulary": (lambda chars: text_model.Vocabulary(chars), 1),
    "Vocabulary.from_text": (lambda text, m: text_model.Vocabulary.from_text(text, m), 2),
    "Vocabulary.encode": (lambda text, bos: _model().vocabulary.encode(text, bos=bos), 2),
    "Vocabulary.decode": (lambda ids: _model().vocabulary.decode(ids), 1),
    "Vocabulary.normalise": (lambda text: _model().vocabulary.normalise(text), 1),
    "TextModel.generate": (lambda prompt, n: _model().generate(prompt, n), 2),
    "TextModel.generate-sampling": (lambda t, w: _model().generate("the ", 2, temperature=t, window=w), 2),
    "model_from_arrays": (lambda a: text_model.model_from_arrays(a), 1),
    "held_out_batch": (lambda texts, n_ctx: text_model.held_out_batch(_model().vocabulary, texts, n_ctx), 2),
    "pooled_kv_losses": (lambda heads: text_model.pooled_kv_losses(_model(), heads, _small_corpus()), 1),
    "long_text_losses": (
        lambda length, count: text_model.long_text_losses(
            _model(), length=length, window=4, sinks=1, count=count
        ),
        2,
    ),
    "long_text_losses-window": (
        lambda w, s: text_model.long_text_losses(
            _model(), length=16, window=w, sinks=s, count=1, corpus=_small_corpus()
        ),
        2,
    ),
}


def _model_bytes(cut: int | None = None, drop: str | None = None) -> bytes:
    """The committed text model's arrays as an .npz, cut to ``cut`` bytes or without ``drop``."""
    raw = read_committed(
        text_model.PACKAGE, text_model.MODEL_FILE, text_model.MODEL_SHA256, text_model.SCRIPT
    )
    if drop is not None:
        arrays = dict(np.load(io.BytesIO(raw)))
        del arrays[drop]
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        raw = buffer.getvalue()
    return raw[:cut]


#: The files loaded by path: cut short, or without one of their arrays.
BAD_FILES = {
    "truncated": lambda: _model_bytes(cut=3000),
    "not a zip": lambda: b"not an npz file",
    "empty": lambda: b"",
    "without an array": lambda: _model_bytes(drop="vocabulary"),
}


@pytest.mark.parametrize("name", CALLS)
def test_every_combination_of_odd_arguments(name: str) -> None:
    every_odd_combination(name, *CALLS[name])


@pytest.mark.parametrize("problem", BAD_FILES)
def test_a_bad_file_loaded_by_path_is_a_clear_error(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "model.npz"
    path.write_bytes(BAD_FILES[problem]())
    answer_or_clear_error(text_model.load_text_model, str(path))


def test_the_generation_explorers_traits_refuse_odd_values() -> None:
    every_odd_trait(
        "generation explorer",
        lambda: generation.generation_explorer(_model(), prompts=["the "], n_new=3),
        ("prompt", "window", "sinks", "step", "n_new", "text"),
    )


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: _model().vocabulary.encode("the", bos=1), TypeError, "bos must be True or False"),
        (
            lambda: text_model.held_out_batch(_model().vocabulary, "a text", 4),
            TypeError,
            "texts must be a list",
        ),
    ],
)
def test_lesson_15_names_what_is_wrong(call: Callable[[], object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_valid_edge_cases_are_answered() -> None:
    """What the sweep found refused although valid: no ids, ids as an array."""
    assert _model().vocabulary.decode([]) == ""
    assert _model().vocabulary.decode(np.array([0, 1])) == _model().vocabulary.chars[0]


if __name__ == "__main__":
    print_unclean(CALLS)


def test_what_a_held_out_sweep_found_is_named() -> None:
    """Issue 44's held-out sweep: a prompt that is not text was named ``text``; a model file whose
    config says ``n_layers = 2.5`` loaded as 2 layers; a unit given as a list was Python's error."""
    with pytest.raises(TypeError, match="prompt must be a str"):
        _model().generate(123, 3)
    arrays = dict(np.load(io.BytesIO(_model_bytes())))
    with pytest.raises(TypeError, match=r"n_layers must be a whole number, got 2\.5"):
        text_model.model_from_arrays({**arrays, "config.n_layers": np.array(2.5)})
    from attention_lessons.l15_generating_text.checks import check_kv_cache_bytes

    with pytest.raises(ValueError, match=r"unit must be one of bytes, KiB, MiB, GiB, got \['MiB'\]"):
        check_kv_cache_bytes(1.0, _model().config.shape, 8, bytes_per_number=8, unit=["MiB"])
