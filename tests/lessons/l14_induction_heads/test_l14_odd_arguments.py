"""Lesson 14's analysis (:mod:`attention_lessons.l14_induction_heads.induction`) and its explorer,
called with odd arguments: a right answer or a clear error.

The sweep of ``tests/attnlib/test_odd_arguments_part3.py`` (``conftest``'s odd values and harness):
every combination of odd values goes into each entry of :data:`CALLS`; a run file cut short, not a
zip or without one of its arrays is a clear error; the replay explorer's traits refuse what they
cannot show. ``PYTHONPATH=tests python tests/lessons/l14_induction_heads/test_l14_odd_arguments.py``
counts the calls that are not clean.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import answer_or_clear_error, every_odd_combination, every_odd_trait, print_unclean

from attention_lessons.kit.committed import read_committed
from attention_lessons.l14_induction_heads import induction
from attention_lessons.l14_induction_heads import widgets as replay
from attnlib import decoder
from attnlib.decoder import DecoderConfig

SMALL = DecoderConfig(vocab_size=5, n_ctx=4, d_model=4, n_heads=2, n_layers=2)
PARAMS = decoder.init_parameters(SMALL, seed=0)
WEIGHTS = np.full((1, 2, 4, 4), 0.25)  # (batch, heads, queries, keys): uniform attention

CALLS: dict[str, tuple[Callable[..., object], int]] = {
    "repeated_sequences": (lambda batch, half: induction.repeated_sequences(batch, half, 5), 2),
    "repeated_sequences-vocab": (lambda vocab, seed: induction.repeated_sequences(2, 3, vocab, seed), 2),
    "induction_batch": (
        lambda n_ctx, shortest: induction.induction_batch(
            np.random.default_rng(0), 2, n_ctx, 5, shortest=shortest
        ),
        2,
    ),
    "previous_token_scores": (lambda w: induction.previous_token_scores(w), 1),
    "induction_targets": (lambda t: induction.induction_targets(t), 1),
    "induction_scores": (lambda w, t: induction.induction_scores(w, t), 2),
    "induction_scores-tokens": (lambda t: induction.induction_scores(WEIGHTS, t), 1),
    "half_losses": (lambda losses, half: induction.half_losses(losses, half), 2),
    "in_context_score": (lambda losses, half: induction.in_context_score(losses, half), 2),
    "phase_change_step": (lambda loss, vocab: induction.phase_change_step(loss, vocab), 2),
    "phase_change_step-window": (lambda w: induction.phase_change_step(np.full(60, 1.0), 16, window=w), 1),
    "ablation_losses": (lambda t: induction.ablation_losses(SMALL, PARAMS, t), 1),
    "composition_scores": (
        lambda writer, reader: induction.composition_scores(
            SMALL, PARAMS, writer_layer=writer, reader_layer=reader
        ),
        2,
    ),
    "composition_scores-kind": (lambda kind: induction.composition_scores(SMALL, PARAMS, kind=kind), 1),
    "token_k_circuit": (lambda writer, reader: induction.token_k_circuit(SMALL, PARAMS, writer, reader), 2),
    "composition_baseline": (
        lambda samples, seed: induction.composition_baseline(SMALL, samples=samples, seed=seed),
        2,
    ),
    "run_from_arrays": (lambda a: induction.run_from_arrays(a), 1),
}


def _run_bytes(cut: int | None = None, drop: str | None = None) -> bytes:
    """The committed run's arrays as an .npz, cut to ``cut`` bytes or without ``drop``."""
    raw = read_committed(
        "attention_lessons.l14_induction_heads",
        induction.RUN_FILE,
        induction.RUN_SHA256,
        "tools/train_induction.py",
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
    "truncated": lambda: _run_bytes(cut=3000),
    "not a zip": lambda: b"not an npz file",
    "empty": lambda: b"",
    "without an array": lambda: _run_bytes(drop="probe_weights"),
}


@pytest.mark.parametrize("name", CALLS)
def test_every_combination_of_odd_arguments(name: str) -> None:
    every_odd_combination(name, *CALLS[name])


@pytest.mark.parametrize("problem", BAD_FILES)
def test_a_bad_file_loaded_by_path_is_a_clear_error(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "run.npz"
    path.write_bytes(BAD_FILES[problem]())
    answer_or_clear_error(induction.load_induction_run, str(path))


def test_the_replay_explorers_traits_refuse_odd_values() -> None:
    every_odd_trait(
        "induction replay", lambda: replay.induction_replay(induction.load_induction_run()), ("step", "heads")
    )


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: induction.previous_token_scores(np.full((1, 1, 3, 3), 2.0)), ValueError, "probabilities"),
        (lambda: induction.run_from_arrays([1, 2]), TypeError, "arrays must map names to arrays"),
    ],
)
def test_lesson_14_names_what_is_wrong(call: Callable[[], object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


if __name__ == "__main__":
    print_unclean(CALLS)


def _committed_arrays() -> dict[str, np.ndarray]:
    return dict(np.load(io.BytesIO(_run_bytes())))


def test_what_a_held_out_sweep_found_is_named() -> None:
    """Issue 44's held-out sweep: raw AttributeErrors, and a loader that took what it should refuse."""
    with pytest.raises(TypeError, match=r"rng must be a NumPy generator, np\.random\.default_rng\(seed\)"):
        induction.induction_batch(None, 2, 6, 5)
    with pytest.raises(TypeError, match=r"config must be an attnlib\.decoder\.DecoderConfig, got dict"):
        induction.composition_baseline(vars(SMALL))
    arrays = _committed_arrays()
    with pytest.raises(TypeError, match=r"n_layers must be a whole number, got 2\.5"):  # once cut to 2
        induction.run_from_arrays({**arrays, "config.n_layers": np.array(2.5)})
    with pytest.raises(ValueError, match=r"probe_weights \(\d+, 2, 2, \d+, 3\) do not fit"):
        induction.run_from_arrays({**arrays, "probe_weights": arrays["probe_weights"][..., :3]})
    with pytest.raises(ValueError, match="probe_weights must be probabilities"):
        induction.run_from_arrays({**arrays, "probe_weights": 3 * arrays["probe_weights"]})
    run = induction.load_induction_run()
    weights = run.probe_weights[:2]
    with pytest.raises(ValueError, match="weights must sum to 1"):  # a replay of weights that are not weights
        replay.replay_table(
            run.snapshot_steps[:2], weights / 2, np.zeros(weights.shape[:3]), np.zeros(weights.shape[:3])
        )


def test_a_head_given_as_a_list_or_an_array_is_a_head() -> None:
    """A writer head as ``[0, 1]`` or ``np.array([0, 1])`` was refused; it names the head ``(0, 1)``."""
    as_tuple = induction.token_k_circuit(SMALL, PARAMS, (0, 1), (1, 0))
    for writer, reader in (([0, 1], [1, 0]), (np.array([0, 1]), np.array([1, 0]))):
        np.testing.assert_array_equal(induction.token_k_circuit(SMALL, PARAMS, writer, reader), as_tuple)
    np.testing.assert_array_equal(
        induction.token_ov_circuit(SMALL, PARAMS, np.array([1, 1])),
        induction.token_ov_circuit(SMALL, PARAMS, (1, 1)),
    )
