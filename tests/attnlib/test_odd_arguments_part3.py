"""Part III's public functions, called with odd arguments: a right answer or a clear error.

The harness of ``test_odd_arguments.py`` (its :data:`ODD` values and ``answer_or_clear_error``),
applied to the decoder (lessons 14 and 15), the counting of generation and memory, lesson 14's
induction analysis, lesson 15's text model, and the two explorers' traits. Every combination of
ODD values goes into each entry of :data:`CALLS`; ``python tests/attnlib/test_odd_arguments_part3.py``
counts the calls that are not clean (the issue 30 sweep: 1,337 calls, 102 not clean).
"""

from __future__ import annotations

import functools
import io
import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import traitlets
from test_odd_arguments import ODD, answer_or_clear_error, every_odd_combination

from attnlib import counting, decoder
from attnlib.decoder import DecoderConfig, KVCache

SMALL = DecoderConfig(vocab_size=5, n_ctx=4, d_model=4, n_heads=2, n_layers=2)
ROPE = DecoderConfig(vocab_size=5, n_ctx=4, d_model=4, n_heads=2, n_layers=1, positions="rope")
PARAMS = decoder.init_parameters(SMALL, seed=0)
ROPE_PARAMS = decoder.init_parameters(ROPE, seed=0)
TOKENS = np.array([[1, 2, 3, 1]])
SHAPE = counting.DecoderShape(n_layers=2, d_model=4, n_heads=2, d_mlp=0, vocab=3)
WEIGHTS = np.full((1, 2, 4, 4), 0.25)  # (batch, heads, queries, keys): uniform attention


def _diverging_is_an_answer(config: DecoderConfig) -> Callable[[object, object], object]:
    """:func:`attnlib.decoder.train` with ``steps`` and ``learning_rate``; its documented answer to a
    learning rate so large that training overflows, ``FloatingPointError("training diverged …")``,
    counts as an answer."""

    def call(steps: object, rate: object) -> object:
        try:
            return decoder.train(config, lambda rng: TOKENS, steps=steps, learning_rate=rate)
        except FloatingPointError as exc:
            assert str(exc).startswith("training diverged"), exc
            return None

    return call


@functools.cache
def _small_corpus() -> object:
    """The corpus with two short held-out texts: the analyses run in milliseconds."""
    import dataclasses

    corpus = _text_model().load_corpus()
    return dataclasses.replace(corpus, held_out=(corpus.held_out[0][:200], corpus.held_out[1][:100]))


def _cache_append(layer: object, K: object) -> object:
    cache = KVCache(2)
    cache.add_tokens(1)
    return cache.append(layer, K, K)


@functools.cache
def _induction() -> object:
    from attention_lessons.l14_induction_heads import induction

    return induction


@functools.cache
def _text_model() -> object:
    from attention_lessons.l15_generating_text import text_model

    return text_model


@functools.cache
def _model() -> object:
    return _text_model().load_text_model()


def _npz_bytes(cut: int | None = None, drop: str | None = None) -> bytes:
    """The committed text model's arrays as an .npz, cut to ``cut`` bytes or without ``drop``."""
    from attention_lessons.kit.committed import read_committed

    tm = _text_model()
    raw = read_committed(tm.PACKAGE, tm.MODEL_FILE, tm.MODEL_SHA256, tm.SCRIPT)
    if drop is not None:
        arrays = dict(np.load(io.BytesIO(raw)))
        del arrays[drop]
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        raw = buffer.getvalue()
    return raw[:cut]


CALLS: dict[str, tuple[Callable[..., object], int]] = {
    # attnlib.decoder
    "DecoderConfig": (lambda v, n: DecoderConfig(vocab_size=v, n_ctx=n, d_model=4, n_heads=2, n_layers=1), 2),
    "DecoderConfig-heads": (
        lambda h, kv: DecoderConfig(vocab_size=3, n_ctx=2, d_model=4, n_heads=h, n_kv_heads=kv, n_layers=1),
        2,
    ),
    "DecoderConfig-options": (
        lambda p, m: DecoderConfig(
            vocab_size=3, n_ctx=2, d_model=4, n_heads=1, n_layers=1, positions=p, d_mlp=m
        ),
        2,
    ),
    "parameter_shapes": (decoder.parameter_shapes, 1),
    "init_parameters": (lambda seed: decoder.init_parameters(SMALL, seed), 1),
    "check_parameters": (lambda p: decoder.check_parameters(SMALL, p), 1),
    "check_parameters-embed": (lambda x: decoder.check_parameters(SMALL, {**PARAMS, "embed": x}), 1),
    "check_tokens": (lambda t, any_length: decoder.check_tokens(SMALL, t, any_length=any_length), 2),
    "forward": (lambda t, ablate: decoder.forward(SMALL, PARAMS, t, ablate=ablate), 2),
    "forward-window": (lambda w, s: decoder.forward(SMALL, PARAMS, TOKENS, window=w, sinks=s), 2),
    "generate": (lambda prompt, n: decoder.generate(SMALL, PARAMS, prompt, n), 2),
    "generate-rope": (lambda n, w: decoder.generate(ROPE, ROPE_PARAMS, [1], n, window=w), 2),
    "generate-sampling": (
        lambda t, seed: decoder.generate(SMALL, PARAMS, [1], 2, temperature=t, seed=seed),
        2,
    ),
    "generate-flags": (
        lambda cache, trace: decoder.generate(SMALL, PARAMS, [1], 1, use_cache=cache, return_trace=trace),
        2,
    ),
    "pool_kv_heads": (lambda n: decoder.pool_kv_heads(SMALL, PARAMS, n), 1),
    "loss_and_gradients": (lambda t: decoder.loss_and_gradients(SMALL, PARAMS, t), 1),
    "next_token_losses": (lambda t, w: decoder.next_token_losses(SMALL, PARAMS, t, window=w), 2),
    "train": (_diverging_is_an_answer(SMALL), 2),
    "visible_keys": (decoder.visible_keys, 2),
    "visible_keys-window": (lambda w, s: decoder.visible_keys([3], [0, 1, 2, 3], window=w, sinks=s), 2),
    "KVCache": (lambda n, w: KVCache(n, window=w), 2),
    "KVCache-sinks": (lambda s: KVCache(1, window=2, sinks=s), 1),
    "KVCache.add_tokens": (lambda count: KVCache(1).add_tokens(count), 1),
    "KVCache.append": (_cache_append, 2),
    # attnlib.counting: generation and memory
    "llama_parameter_counts": (counting.llama_parameter_counts, 1),
    "DecoderShape-more": (
        lambda h, kv: counting.DecoderShape(
            n_layers=1, d_model=4, n_heads=h, d_mlp=0, vocab=2, n_kv_heads=kv
        ),
        2,
    ),
    "kv_cache_bytes-batch": (
        lambda batch, w: counting.kv_cache_bytes(SHAPE, 4, bytes_per_number=2, batch=batch, window=w),
        2,
    ),
    "kv_cache_outgrows_weights-window": (
        lambda w, s: counting.kv_cache_outgrows_weights(
            SHAPE, parameters=100, bytes_per_number=2, window=w, sinks=s
        ),
        2,
    ),
    "generation_multiplications-cache": (
        lambda n, cache: counting.generation_multiplications(SHAPE, n, cache=cache),
        2,
    ),
    "counted_generation": (
        lambda X, heads: counting.counted_generation(X, [], n_heads=heads, cache=True),
        2,
    ),
    "weights_bytes": (lambda n_q, n_k: counting.weights_bytes(n_q, n_k), 2),
    "weights_bytes-sizes": (lambda b, i: counting.weights_bytes(2, 2, batch_heads=b, itemsize=i), 2),
    "tiled_bytes": (lambda bq, bk: counting.tiled_bytes(4, 4, 2, 2, block_q=bq, block_k=bk), 2),
    "tile_counts": (lambda n_q, causal: counting.tile_counts(n_q, 4, block_q=2, block_k=2, causal=causal), 2),
    "hbm_traffic": (lambda n, sram: counting.hbm_traffic(n, 2, sram=sram), 2),
    "hbm_traffic-loop": (lambda loop: counting.hbm_traffic(4, 2, sram=64, loop=loop), 1),
    "sram_blocks": (lambda d, sram: counting.sram_blocks(d, sram, "flash"), 2),
    "counted_hbm_traffic": (lambda Q, sram: counting.counted_hbm_traffic(Q, Q, Q, sram=sram), 2),
    # attention_lessons/l14_induction_heads/induction.py
    "repeated_sequences": (lambda batch, half: _induction().repeated_sequences(batch, half, 5), 2),
    "repeated_sequences-vocab": (lambda vocab, seed: _induction().repeated_sequences(2, 3, vocab, seed), 2),
    "induction_batch": (
        lambda n_ctx, shortest: _induction().induction_batch(
            np.random.default_rng(0), 2, n_ctx, 5, shortest=shortest
        ),
        2,
    ),
    "previous_token_scores": (lambda w: _induction().previous_token_scores(w), 1),
    "induction_targets": (lambda t: _induction().induction_targets(t), 1),
    "induction_scores": (lambda w, t: _induction().induction_scores(w, t), 2),
    "induction_scores-tokens": (lambda t: _induction().induction_scores(WEIGHTS, t), 1),
    "half_losses": (lambda losses, half: _induction().half_losses(losses, half), 2),
    "in_context_score": (lambda losses, half: _induction().in_context_score(losses, half), 2),
    "phase_change_step": (lambda loss, vocab: _induction().phase_change_step(loss, vocab), 2),
    "phase_change_step-window": (lambda w: _induction().phase_change_step(np.full(60, 1.0), 16, window=w), 1),
    "ablation_losses": (lambda t: _induction().ablation_losses(SMALL, PARAMS, t), 1),
    "composition_scores": (
        lambda writer, reader: _induction().composition_scores(
            SMALL, PARAMS, writer_layer=writer, reader_layer=reader
        ),
        2,
    ),
    "composition_scores-kind": (lambda kind: _induction().composition_scores(SMALL, PARAMS, kind=kind), 1),
    "token_k_circuit": (
        lambda writer, reader: _induction().token_k_circuit(SMALL, PARAMS, writer, reader),
        2,
    ),
    "composition_baseline": (
        lambda samples, seed: _induction().composition_baseline(SMALL, samples=samples, seed=seed),
        2,
    ),
    "run_from_arrays": (lambda a: _induction().run_from_arrays(a), 1),
    # attention_lessons/l15_generating_text/text_model.py
    "corpus_from_text": (lambda text: _text_model().corpus_from_text(text), 1),
    "Vocabulary": (lambda chars: _text_model().Vocabulary(chars), 1),
    "Vocabulary.from_text": (lambda text, m: _text_model().Vocabulary.from_text(text, m), 2),
    "Vocabulary.encode": (lambda text, bos: _model().vocabulary.encode(text, bos=bos), 2),
    "Vocabulary.decode": (lambda ids: _model().vocabulary.decode(ids), 1),
    "Vocabulary.normalise": (lambda text: _model().vocabulary.normalise(text), 1),
    "TextModel.generate": (lambda prompt, n: _model().generate(prompt, n), 2),
    "TextModel.generate-sampling": (lambda t, w: _model().generate("the ", 2, temperature=t, window=w), 2),
    "model_from_arrays": (lambda a: _text_model().model_from_arrays(a), 1),
    "held_out_batch": (
        lambda texts, n_ctx: _text_model().held_out_batch(_model().vocabulary, texts, n_ctx),
        2,
    ),
    "pooled_kv_losses": (lambda heads: _text_model().pooled_kv_losses(_model(), heads, _small_corpus()), 1),
    "long_text_losses": (
        lambda length, count: _text_model().long_text_losses(
            _model(), length=length, window=4, sinks=1, count=count
        ),
        2,
    ),
    "long_text_losses-window": (
        lambda w, s: _text_model().long_text_losses(
            _model(), length=16, window=w, sinks=s, count=1, corpus=_small_corpus()
        ),
        2,
    ),
}

#: The files loaded by path: cut short, or without one of their arrays.
BAD_FILES = {
    "truncated": lambda: _npz_bytes(cut=3000),
    "not a zip": lambda: b"not an npz file",
    "empty": lambda: b"",
    "without an array": lambda: _npz_bytes(drop="vocabulary"),
}


def _explorers() -> dict[str, tuple[Callable[[], traitlets.HasTraits], tuple[str, ...]]]:
    """Each explorer of part III, made small, and the traits a learner's front end sets."""
    from attention_lessons.l14_induction_heads import widgets as replay
    from attention_lessons.l15_generating_text import widgets as generation

    return {
        "induction replay": (
            lambda: replay.induction_replay(_induction().load_induction_run()),
            ("step", "heads"),
        ),
        "generation explorer": (
            lambda: generation.generation_explorer(_model(), prompts=["the "], n_new=3),
            ("prompt", "window", "sinks", "step", "n_new", "text"),
        ),
    }


def _explorer_keeps_valid_values(make: Callable[[], traitlets.HasTraits], name: str, value: object) -> None:
    """Setting a trait to ``value`` raises TraitError or leaves a value the explorer accepts."""
    widget = make()
    before = getattr(widget, name)
    try:
        setattr(widget, name, value)
    except traitlets.TraitError:
        assert getattr(widget, name) == before, f"{name} changed although refused"
        return
    after = getattr(widget, name)
    if after == before:
        return
    # a kept value must be one the explorer would give itself: setting it again is accepted and
    # it is of the trait's own type (not a boolean for a number)
    assert not isinstance(after, (bool, np.bool_)) or isinstance(before, bool), f"{name} kept {after!r}"
    if name in {"step", "prompt", "sinks", "n_new"}:
        assert isinstance(after, int) and after >= 0, f"{name} kept {after!r}"


@pytest.mark.parametrize("name", CALLS)
def test_every_combination_of_odd_arguments(name: str) -> None:
    every_odd_combination(name, *CALLS[name])


@pytest.mark.parametrize("problem", BAD_FILES)
@pytest.mark.parametrize("loader", ["load_text_model", "load_induction_run"])
def test_a_bad_file_loaded_by_path_is_a_clear_error(tmp_path: Path, loader: str, problem: str) -> None:
    module = _text_model() if loader == "load_text_model" else _induction()
    path = tmp_path / "run.npz"
    path.write_bytes(BAD_FILES[problem]())
    answer_or_clear_error(getattr(module, loader), str(path))


@pytest.mark.parametrize("explorer", ["induction replay", "generation explorer"])
def test_explorer_traits_refuse_odd_values(explorer: str) -> None:
    make, names = _explorers()[explorer]
    widget = functools.cache(make)  # one explorer: setting a refused value leaves it as it was
    for name, value in itertools.product(names, [*ODD, -1, True, False, 10**6, [0, 0], [-1, 0]]):
        try:
            _explorer_keeps_valid_values(widget, name, value)
        except AssertionError as failure:
            raise AssertionError(f"{explorer}.{name} = {value!r}: {failure}") from None
        except (ValueError, TypeError) as exc:
            raise AssertionError(f"{explorer}.{name} = {value!r}: {type(exc).__name__} {exc}") from None


def count_unclean() -> tuple[int, int, dict[str, list[str]]]:
    """How many calls of :data:`CALLS` are not clean: (calls, not clean, failures per entry).

    Each call has 2 s (a call that never returns is not clean either).
    """
    import signal

    def too_slow(*_: object) -> None:
        raise TimeoutError("no answer within 2 s")

    signal.signal(signal.SIGALRM, too_slow)
    total, bad, per = 0, 0, {}
    for name, (call, n_args) in CALLS.items():
        for args in itertools.product(ODD, repeat=n_args):
            total += 1
            signal.alarm(2)
            try:
                answer_or_clear_error(call, *args)
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                bad += 1
                per.setdefault(name, []).append(f"{args!r}: {type(exc).__name__} {str(exc)[:150]}")
            finally:
                signal.alarm(0)
        print(name, len(per.get(name, [])), file=sys.stderr, flush=True)
    return total, bad, per


if __name__ == "__main__":
    calls, unclean, where = count_unclean()
    print(f"{calls} calls, {unclean} not clean")
    for entry, failures in sorted(where.items(), key=lambda item: -len(item[1])):
        print(f"{len(failures):5d} {entry}")
        for failure in failures[:4]:
            print("        " + failure[:300])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: decoder.check_tokens(SMALL, [[1, 2], [3]]), ValueError, "tokens is ragged"),
        (lambda: decoder.check_tokens(SMALL, None), TypeError, "tokens is None"),
        (lambda: decoder.visible_keys([2.5], [0, 1]), TypeError, "query_positions must be integers"),
        (
            lambda: decoder.visible_keys([3], [-1, 0]),
            ValueError,
            "key_positions must be whole numbers of at least 0",
        ),
        (lambda: _cache_append(-1, np.ones((1, 1, 1, 2))), ValueError, "layer must be at least 0"),
        (lambda: _cache_append(2, np.ones((1, 1, 1, 2))), ValueError, "layer must be from 0 to 1"),
        (
            lambda: counting.kv_cache_bytes(SHAPE, 9, bytes_per_number=2, sinks=2),
            ValueError,
            "sinks=2 needs a window",
        ),
        (
            lambda: counting.kv_cache_outgrows_weights(SHAPE, parameters=9, bytes_per_number=2, sinks=1),
            ValueError,
            "sinks=1 needs a window",
        ),
        (
            lambda: counting.counted_hbm_traffic(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2))),
            ValueError,
            "n, d ≥ 1",
        ),
        (lambda: _induction().previous_token_scores(np.full((1, 1, 3, 3), 2.0)), ValueError, "probabilities"),
        (lambda: _induction().run_from_arrays([1, 2]), TypeError, "arrays must map names to arrays"),
        (lambda: _model().vocabulary.encode("the", bos=1), TypeError, "bos must be True or False"),
        (
            lambda: _text_model().held_out_batch(_model().vocabulary, "a text", 4),
            TypeError,
            "texts must be a list",
        ),
    ],
)
def test_part_three_names_what_is_wrong(call: Callable[[], object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_valid_edge_cases_are_answered() -> None:
    """What the sweep found refused although valid: no queries, no ids, tied heads, list pairs."""
    from attnlib.efficient import tiled_attention

    assert tiled_attention(np.zeros((0, 3)), np.ones((4, 3)), np.ones((4, 2))).shape == (0, 2)
    assert _model().vocabulary.decode([]) == ""
    assert _model().vocabulary.decode(np.array([0, 1])) == _model().vocabulary.chars[0]
    np.testing.assert_array_equal(decoder.visible_keys([], [0, 1]), np.zeros((0, 2), dtype=bool))
    tied = decoder.forward(SMALL, PARAMS, TOKENS, ablate=[[0, 1], [0, 1]]).logits  # a list pair, twice
    np.testing.assert_array_equal(tied, decoder.forward(SMALL, PARAMS, TOKENS, ablate=[(0, 1)]).logits)
