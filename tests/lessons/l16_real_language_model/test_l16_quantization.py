"""Lesson 16's proxy for what 4-bit weights cost (attention_lessons.l16_real_language_model.quantization)
and its two committed measurements (tools/l16_measure.py): the re-rounding on small arrays with
known answers, the error it adds, its refusals; then, on the real model, one variant's perplexity
and the first tokens of the greedy story, recomputed and compared with the committed files."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lessons.kit import committed
from attention_lessons.l16_real_language_model import analysis
from attention_lessons.l16_real_language_model import quantization as qz
from attnlib.model import llama

PACKAGE = "attention_lessons.l16_real_language_model"
RNG = np.random.default_rng(0)
#: Rows as a GGUF stores them: 300 rows of 576 numbers (18 blocks), like the model's weights.
ROWS = RNG.normal(0.0, 0.05, (300, 576)).astype(np.float32)
#: A small model whose every stored row is a whole number of blocks: d_model = n_heads·d_head = 32.
CONFIG = llama.LlamaConfig(
    n_layers=2, n_heads=4, n_kv_heads=2, d_head=8, d_model=32, d_mlp=64, vocab_size=50, n_ctx=64,
    rope_base=10000.0, norm_eps=1e-5,
)  # fmt: skip


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


# --- the recipe on small arrays, with known answers ---------------------------------------------


def test_q4_1s_recipe_on_one_block_rounds_halves_up_and_stores_float16():
    block = np.arange(32, dtype=np.float32) % 16  # 0 … 15 twice: d = 1, m = 0, every number a code
    assert np.array_equal(qz.round_blocks(block, 4), block)
    block[[1, 2, 3, 4]] = [7.4, 6.5, 7.6, 0.49]
    back = qz.round_blocks(block, 4)
    assert back[[1, 2, 3, 4]].tolist() == [7.0, 7.0, 8.0, 0.0]  # 6.5 → 7: ⌊x + ½⌋ (llama.cpp), not to even
    low = np.float32(0.1) + block  # m = 0.1 is stored as float16: 0.0999755859375
    assert qz.round_blocks(low, 4)[0] == np.float32(np.float16(0.1)) != np.float32(0.1)
    two_bits = np.tile(np.array([0.0, 1.4, 1.6, 3.0], np.float32), 8)  # 4 levels: d = 1
    assert qz.round_blocks(two_bits, 2)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.array_equal(qz.round_blocks(np.full(32, 0.25, np.float32), 4), np.full(32, 0.25))  # d = 0


def test_q8_0s_recipe_is_symmetric_and_rounds_halves_away_from_zero():
    block = np.zeros(32, np.float32)
    block[:5] = [127.0, -2.5, 2.5, 1.4, -126.6]  # max |x| = 127: d = 1
    back = qz.round_blocks(block, 8, symmetric=True)
    assert back[:5].tolist() == [127.0, -3.0, 3.0, 1.0, -127.0] and not back[5:].any()
    assert qz.block_scales(block, 8, symmetric=True).tolist() == [1.0]


def test_a_shift_starts_the_blocks_later_and_closes_the_last_one_with_the_rows_start():
    start = np.full(16, 7.3, np.float32)
    middle = (np.arange(32) % 16).astype(np.float32)  # one block of codes 0 … 15 at d = 1
    end = 2 * np.arange(16, dtype=np.float32)  # 0 … 30: with the start, a block of d = 2
    row = np.concatenate([start, middle, end])
    shifted = qz.round_blocks(row, 4, shift=16)  # blocks: middle, then end + start
    assert np.array_equal(shifted, np.concatenate([np.full(16, 8.0), middle, end]))  # 7.3/2 → 4 → 8
    assert qz.block_scales(row, 4, shift=16).tolist() == [1.0, 2.0]
    assert qz.round_blocks(row, 4)[0] == 7.0  # the file's blocks: start + middle's first half, d = 1


@pytest.mark.parametrize(("bits", "symmetric"), [(8, True), (4, False), (3, False), (2, False)])
def test_rounding_again_on_the_same_blocks_gives_the_numbers_back_bit_for_bit(bits, symmetric):
    once = qz.round_blocks(ROWS, bits, symmetric=symmetric)
    assert not np.array_equal(once, ROWS)
    assert np.array_equal(qz.round_blocks(once, bits, symmetric=symmetric), once)  # nothing to measure
    shifted = qz.round_blocks(once, bits, symmetric=symmetric, shift=16)
    assert np.count_nonzero(shifted != once) > once.size / 2  # another grid: most numbers move


def test_a_rounding_adds_an_error_of_rms_about_d_over_root_12():
    """Uniform rounding error of a step d has RMS d/√12. The first rounding of continuous numbers:
    the block's minimum and maximum land exactly (2 of 32), so √(30/32) of it. Again on blocks
    shifted by 16: each straddles two grids, and numbers that sit at the new block's ends or on
    both grids move less, so a little under d/√12."""
    once = qz.round_blocks(ROWS, 4)
    first = rms(once - ROWS) / rms(qz.block_scales(ROWS, 4)) * np.sqrt(12)
    assert first == pytest.approx(np.sqrt(30 / 32), rel=0.02)
    again = qz.round_blocks(once, 4, shift=16)
    added = rms(again - once) / rms(qz.block_scales(once, 4, shift=16)) * np.sqrt(12)
    assert 0.8 < added < 1.0
    eight = qz.round_blocks(once, 8, symmetric=True, shift=16)
    added_8 = rms(eight - once) / rms(qz.block_scales(once, 8, symmetric=True, shift=16)) * np.sqrt(12)
    assert added_8 == pytest.approx(1.0, abs=0.05)  # 255 levels: the grids do not show


def test_bits_per_weight_count_the_blocks_float16_scale_and_minimum():
    assert qz.bits_per_weight(4) == 5.0  # Q4_1: 20 bytes per 32 numbers
    assert qz.bits_per_weight(8, symmetric=True) == 8.5  # Q8_0: 34 bytes per 32
    assert [qz.bits_per_weight(b) for b in (3, 2)] == [4.0, 3.0]


@pytest.mark.parametrize(
    ("rows", "kwargs", "error", "message"),
    [
        (np.zeros(40, np.float32), {}, ValueError, "whole number of 32-number blocks"),
        (np.zeros(0, np.float32), {}, ValueError, "whole number of 32-number blocks"),
        (np.float32(1.0), {}, ValueError, r"\(\.\.\., n\)"),
        (np.zeros(32, np.int64), {}, TypeError, "floating-point"),
        (np.full(32, np.nan, np.float32), {}, ValueError, "finite"),
        (np.zeros(32, np.float32), {"bits": 1}, ValueError, "bits must be at least 2"),
        (np.zeros(32, np.float32), {"bits": 9}, ValueError, "bits must be at most 8"),
        (np.zeros(32, np.float32), {"bits": 4.0}, TypeError, "bits must be a whole number"),
        (np.zeros(32, np.float32), {"bits": True}, TypeError, "bits must be a whole number"),
        (np.zeros(64, np.float32), {"shift": 32}, ValueError, "shift must be a whole number from 0 to 31"),
        (np.zeros(64, np.float32), {"shift": -1}, ValueError, "shift must be"),
        (np.zeros(64, np.float32), {"shift": 1.5}, ValueError, "shift must be"),
        (np.zeros(64, np.float32), {"block": 1}, ValueError, "block must be at least 2"),
    ],
)
def test_bad_rows_and_settings_are_refused_by_name(rows, kwargs, error, message):
    settings = {"bits": 4} | kwargs
    for function in (qz.round_blocks, qz.block_scales):
        with pytest.raises(error, match=message):
            function(rows, **settings)


# --- the re-rounded model, on a small one ----------------------------------------------------------


def test_the_rerounded_model_rounds_each_stored_row_and_leaves_the_rest_shared():
    model = llama.LlamaModel.random(CONFIG, seed=3)
    before = {name: value.copy() for name, value in model.params.items()}
    rounded, change = qz.rerounded_model(model, 4)
    assert all(np.array_equal(model.params[name], before[name]) for name in before)  # not changed
    names = qz.matrix_names(CONFIG)
    assert len(names) == 7 * CONFIG.n_layers and set(names) < set(model.params)
    for name, value in rounded.params.items():
        if name in names:  # along the file's rows: a matrix's input axis, its columns here
            expected = qz.round_blocks(model.params[name].T, 4, shift=16).T
            assert np.array_equal(value, expected) and value.strides == model.params[name].strides
        else:
            assert value is model.params[name]  # the embedding and the norms, shared
    moved = np.concatenate([(rounded.params[n] - model.params[n]).ravel() for n in names])
    weights = np.concatenate([model.params[n].ravel() for n in names])
    assert change["weights"] == weights.size and change["changed"] == np.count_nonzero(moved)
    assert change["relative_rms"] == pytest.approx(rms(moved) / rms(weights), rel=1e-6)
    assert change["max_abs"] == np.abs(moved).max()
    assert 0.8 < change["relative_rms"] / change["expected_relative_rms"] < 1.0

    embedding, _ = qz.rerounded_model(model, 8, symmetric=True, part="embedding")
    assert np.array_equal(
        embedding.params["embed"], qz.round_blocks(model.params["embed"], 8, symmetric=True, shift=16)
    )
    assert all(embedding.params[n] is model.params[n] for n in names)

    _, same = qz.rerounded_model(qz.rerounded_model(model, 4, shift=0)[0], 4, shift=0)
    assert same["changed"] == 0 and same["relative_rms"] == 0.0  # the same blocks: nothing moves


def test_the_text_perplexity_is_the_lessons():
    model, ids = llama.LlamaModel.random(CONFIG, seed=3), RNG.integers(0, CONFIG.vocab_size, 20)
    losses = analysis.next_token_losses(llama.forward(model, ids), ids)
    assert qz.text_perplexity(model, ids, past=4) == pytest.approx(np.exp(losses[4:].mean()), rel=1e-12)
    with pytest.raises(ValueError, match="more than past"):
        qz.text_perplexity(model, ids, past=19)
    with pytest.raises(TypeError, match="LlamaModel"):
        qz.rerounded_model(model.params, 4)
    with pytest.raises(ValueError, match="part must be"):
        qz.rerounded_model(model, 4, part="norms")


def test_the_greedy_leads_are_each_rows_gap():
    assert analysis.greedy_leads(np.array([[1.0, 3.0, 2.5], [0.0, 0.0, 4.0]])).tolist() == [0.5, 4.0]
    with pytest.raises(ValueError, match="logits must be"):
        analysis.greedy_leads(np.ones(3))


# --- the committed files, recomputed on the real model ------------------------------------------


def test_the_committed_files_say_what_they_measured():
    found = committed.read_json(PACKAGE, "quantization.json")
    assert found["label"] == "what one more rounding of this size costs, a proxy for what the first cost"
    assert found["same_blocks"]["changed"] == 0 and found["same_blocks"]["stored_scales_and_minima_recovered"]
    by_name = {v["name"]: v for v in found["variants"]}
    curve = [by_name[name] for name in ("8-bit (Q8_0)", "4-bit (Q4_1)", "3-bit (Q4_1's recipe, 8 levels)")]
    curve.append(by_name["2-bit (Q4_1's recipe, 4 levels)"])
    assert [v["bits_per_weight"] for v in curve] == [8.5, 5.0, 4.0, 3.0]
    perplexities = [found["shipped"]["perplexity"]] + [v["perplexity"] for v in curve]
    assert perplexities == sorted(perplexities)  # fewer bits, a higher perplexity
    greedy = committed.read_json(PACKAGE, "greedy_200.json")
    leads = np.array(greedy["leads"])
    assert len(leads) == len(greedy["tokens"]) == greedy["n_new"] == 200
    assert greedy["smallest_lead"] == leads.min() and greedy["smallest_lead_step"] == leads.argmin()
    assert greedy["first_step_under_bound"] == np.flatnonzero(leads <= greedy["float32_bound"])[0]
    assert greedy["machine"]["date"] and greedy["machine"]["cpu"]


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.reference  # make second-path runs it again on other kernels
def test_the_4_bit_variants_perplexity_is_the_committed_one_within_float32s_rounding(smollm2):
    """The re-rounding is elementwise float32 arithmetic, the same bits on any CPU; the forward pass
    is not: its logits are within ``llama.float32_tolerance`` (B) of another CPU's. A loss is a
    log-sum-exp of the logits minus one of them, so it moves by at most 2B, and so does their mean,
    the log of the perplexity."""
    found = committed.read_json(PACKAGE, "quantization.json")
    variant = next(v for v in found["variants"] if v["name"] == "4-bit (Q4_1)")
    text = committed.read_text("attention_lessons.l15_generating_text", "lessons_text.txt")
    ids = smollm2.encode(text.split("\n", 1)[1])[: found["text"]["tokens"]]
    rounded, change = qz.rerounded_model(smollm2, variant["bits"], shift=variant["shift"])
    assert change["changed"] == variant["changed"] and change["weights"] == variant["weights"]
    assert change["relative_rms"] == pytest.approx(variant["relative_rms"], rel=1e-9)  # float64 sums
    logits = llama.forward(rounded, ids)
    losses = analysis.next_token_losses(logits, ids)[found["text"]["past_position"] :]
    bound = 2 * llama.float32_tolerance(smollm2.config, len(ids), largest=float(np.abs(logits).max()))
    assert abs(losses.mean() - np.log(variant["perplexity"])) <= bound


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.reference
def test_the_greedy_story_is_the_committed_one_up_to_its_first_close_call(smollm2):
    """Every step before the first whose lead is under the float32 bound chose its token by more
    than another CPU's rounding can move a logit: those tokens are the same on any machine."""
    greedy = committed.read_json(PACKAGE, "greedy_200.json")
    story = smollm2.chat([{"role": "user", "content": greedy["prompt"]}])
    assert len(story) == greedy["prompt_tokens"]
    k = greedy["first_step_under_bound"]
    tokens, logits = llama.generate_with_logits(smollm2, story, k, stop_at_eos=False)
    assert tokens.tolist() == greedy["tokens"][:k]
    assert analysis.greedy_leads(logits).min() > greedy["float32_bound"]
