"""Lesson 19's LoRA run (attention_lessons/l19_pytorch/lora.py, written by tools/l19_lora.py): the
committed file's hash and what it holds; the adapter on a fresh SmolLM2 measures on Hamlet what the
run measured; the script's first two steps again; a zero-step adapter changes nothing; and the
continuations before and after regenerate up to the first step whose lead another CPU could undo.
Every comparison of floats is to a bound derived from float32's rounding (lora.lead_tolerance,
lora.loss_tolerance, lora.update_bound): on this machine's kernels each is met with room to spare,
on the second floating-point path (make second-path) they hold as well."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import attention_lessons.l19_pytorch.lora as lora
from attention_lessons.kit.committed import read_committed
from attention_lessons.l17_tokens import corpus
from attention_lessons.l19_pytorch.modules import add_lora, generate, llama_from

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

#: Lesson 18's GPT from scratch on Hamlet (runs.load_run(): 2.888 nats per token of its tokens).
L18_BITS_PER_CHAR = 2.14


@pytest.fixture(scope="module")
def run():
    return lora.load_run()


@pytest.fixture(scope="module")
def tuned(smollm2, run):
    return lora.apply_adapter(llama_from(smollm2.config, smollm2.params), run.arrays)


@pytest.fixture(scope="module")
def plain(smollm2):
    return llama_from(smollm2.config, smollm2.params)


def test_the_committed_file_is_checked_by_its_hash(monkeypatch):
    read_committed(lora.PACKAGE, lora.LORA_FILE, lora.LORA_SHA256, lora.SCRIPT)  # the recorded hash
    monkeypatch.setattr(lora, "LORA_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"lora_run\.npz has SHA-256 .* not the committed 0000"):
        lora.load_run()


def test_the_run_holds_the_adapter_its_settings_and_its_curves(run):
    s = run.settings
    assert s.threads == 1 and run.machine["torch_threads"] == 1
    shapes = {"q": (576, 576), "k": (192, 576), "v": (192, 576), "o": (576, 576)}  # (out, in)
    adapter = {name: a for name, a in run.arrays.items() if name.startswith("lora.")}
    assert len(adapter) == 2 * 30 * len(s.targets)
    for i in range(30):
        for target in s.targets:
            out, inp = shapes[target]
            assert adapter[f"lora.layer{i}.{target}.A"].shape == (s.r, inp)
            assert adapter[f"lora.layer{i}.{target}.B"].shape == (out, s.r)
    assert {a.dtype for a in adapter.values()} == {np.dtype(np.float32)}
    assert run.trainable == sum(a.size for a in adapter.values())
    assert run.trainable < 0.01 * lora.N_PARAMETERS
    assert len(run.losses) == len(run.step_seconds) == s.steps == run.eval_steps[-1]
    assert run.eval_steps[0] == 0 and run.val_window_losses.shape == (len(run.eval_steps), s.eval_windows)
    np.testing.assert_allclose(run.val_window_losses.mean(axis=1), run.val_losses, rtol=1e-12)
    assert run.seconds < 25 * 60
    bits = run.val_bits_per_char
    assert bits[-1] < bits[0] < L18_BITS_PER_CHAR  # SmolLM2 as it comes beats lesson 18's GPT; LoRA more
    assert run.learning_rates.max() == pytest.approx(s.learning_rate)


@pytest.mark.model
def test_encoding_in_pieces_gives_the_whole_texts_tokens(smollm2):
    hamlet = corpus.shakespeare(["hamlet"])
    np.testing.assert_array_equal(lora.encode_text(smollm2, hamlet, piece=500), smollm2.encode(hamlet))


@pytest.mark.model
def test_the_adapter_on_a_fresh_model_measures_the_committed_hamlet_loss(smollm2, run, plain, tuned):
    s = run.settings
    streams = lora.token_streams(smollm2, train=False)
    assert len(streams.val_ids) == run.val_tokens and streams.val_chars == run.val_chars
    inputs, targets = lora.evaluation_windows(streams.val_ids, s.n_ctx, s.eval_windows)
    pick = [1, s.eval_windows - 1]  # two of the run's windows
    for model, committed, settings in ((plain, 0, None), (tuned, -1, s)):
        with torch.no_grad():
            logits = model(inputs[pick])
        largest = float(logits.abs().max())
        fresh = F.cross_entropy(logits.transpose(1, 2), targets[pick], reduction="none").mean(dim=1)
        np.testing.assert_array_equal(
            fresh.double().numpy(), lora.window_losses(model, (inputs[pick], targets[pick]))
        )
        bound = lora.loss_tolerance(smollm2.config, s.n_ctx, largest, settings)
        np.testing.assert_allclose(
            fresh.double().numpy(), run.val_window_losses[committed, pick], rtol=0, atol=bound
        )
    # the adapter's effect is larger than twice the bound: what the lesson shows is not rounding
    assert run.val_losses[0] - run.val_losses[-1] > 2 * bound


@pytest.mark.model
def test_the_script_reproduces_the_first_two_losses(smollm2, run):
    import l19_lora  # tools/l19_lora.py

    settings = replace(run.settings, steps=2, eval_windows=1, n_new=1)
    fresh = l19_lora.train(smollm2, settings, [], log=lambda _: None)
    np.testing.assert_array_equal(fresh["learning_rates"], run.learning_rates[:2])
    c, n = smollm2.config, run.settings.n_ctx
    # step 1: B = 0, the model as it comes; its loss moves by the forward pass's rounding only
    first = lora.loss_tolerance(c, n, float(run.largest_logits[0]), run.settings)
    assert abs(float(fresh["losses"][0]) - float(run.losses[0])) <= first
    # step 2: after AdamW's first update, which another CPU may make otherwise where a gradient is
    # within its rounding of zero: the run's bound on what that moves the second loss by
    second = (
        lora.loss_tolerance(c, n, float(run.largest_logits[1]), run.settings) + run.second_loss_update_bound
    )
    assert math.isfinite(second) and abs(float(fresh["losses"][1]) - float(run.losses[1])) <= second


@pytest.mark.model
def test_a_zero_step_adapter_leaves_the_logits_unchanged_bit_for_bit(smollm2, plain):
    ids = torch.from_numpy(smollm2.encode("Now is the winter of our discontent"))[None]
    with torch.no_grad():
        expected = plain(ids)
        wrapped = llama_from(smollm2.config, smollm2.params)
        add_lora(wrapped, 8, 16.0, targets=("q", "k", "v", "o"), seed=3)
        assert torch.equal(wrapped(ids), expected)  # B = 0: base(x) + (x Aᵀ) 0ᵀ · α/r is base(x) exactly
        settings = replace(lora.LoRASettings(), targets=("q", "k", "v", "o"), seed=3)
        arrays = settings.arrays() | lora.adapter_arrays(wrapped)
        loaded = lora.apply_adapter(llama_from(smollm2.config, smollm2.params), arrays)
        assert torch.equal(loaded(ids), expected)


@pytest.mark.model
def test_the_continuations_regenerate_up_to_the_first_narrow_lead(smollm2, run, plain, tuned):
    c, s = smollm2.config, run.settings
    for i, prompt in enumerate(run.prompts):
        ids = smollm2.encode(prompt).tolist()
        cases = [
            (plain, run.before[i], run.before_margins[i], None),
            (tuned, run.after[i], run.after_margins[i], s),
        ]
        for model, committed, margins, settings in cases:
            new, fresh_margins = lora.generate_with_leads(model, ids, s.n_new)
            assert new == generate(model, ids, s.n_new)  # the modules' generate writes the same
            bounds = [
                lora.lead_tolerance(c, len(ids) + k, largest, settings)
                for k, (_, largest) in enumerate(margins)
            ]
            narrow = [k for k, (lead, _) in enumerate(margins) if lead <= bounds[k]]
            safe = narrow[0] if narrow else s.n_new
            assert new[:safe] == committed[:safe], (prompt, settings is not None)
            np.testing.assert_allclose(
                fresh_margins[:safe, 0], margins[:safe, 0], rtol=0, atol=2 * max(bounds)
            )
    assert run.before != run.after
