"""attnlib.model against transformers' BertModel (eager attention) loaded from the same files:
every layer's hidden states and every head's weights, on single sentences and a padded batch, to
float32's rounding in a 6-layer encoder (:func:`attnlib.model.float32_tolerance`)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
pytest.importorskip("safetensors", reason="pip install -r requirements.txt")

from attnlib.model import float32_tolerance  # noqa: E402 - after the skips above

SENTENCES = [
    "The cat sat on the mat because it was tired.",
    "Attention is all you need.",
    "She likes coffee; he prefers tea, and neither of them understands tokenization!",
    "Paris is the capital of France.",
]


@pytest.fixture(scope="module")
def reference(model):
    bert = transformers.BertModel.from_pretrained(str(model.directory), attn_implementation="eager")
    return bert.eval()


def reference_run(reference, tokens):
    def tensor(a):
        return torch.from_numpy(np.atleast_2d(a).astype(np.int64))

    with torch.no_grad():
        out = reference(
            input_ids=tensor(tokens.input_ids),
            attention_mask=tensor(tokens.attention_mask),
            token_type_ids=tensor(tokens.token_type_ids),
            output_attentions=True,
            output_hidden_states=True,
        )
    hidden = np.stack([h.numpy() for h in out.hidden_states])  # (7, batch, n, 384)
    attentions = np.stack([a.numpy() for a in out.attentions])  # (6, batch, 12, n, n)
    return hidden, attentions


def assert_matches(config, ours, hidden, attentions):
    """``ours`` (hidden states and weights) against transformers' to :func:`float32_tolerance`: the
    hidden states relative to their largest entry, the attention weights relative to 1."""
    n = hidden.shape[-2]
    bound = float32_tolerance(config, n, float(np.abs(hidden).max()))
    np.testing.assert_allclose(ours.hidden_states, hidden, rtol=0, atol=bound)
    np.testing.assert_allclose(ours.attentions, attentions, rtol=0, atol=float32_tolerance(config, n, 1.0))


@pytest.mark.parametrize("sentence", SENTENCES)
def test_one_sentence_matches_bert_in_every_layer_and_head(model, reference, sentence):
    run = model.run(sentence)
    hidden, attentions = reference_run(reference, run.tokens)
    assert run.hidden_states.shape == hidden[:, 0].shape and run.attentions.shape == attentions[:, 0].shape
    assert_matches(model.config, run, hidden[:, 0], attentions[:, 0])


def test_a_padded_batch_matches_bert(model, reference):
    run = model.run(SENTENCES)
    assert not run.tokens.attention_mask.all(), "the batch must contain padding"
    hidden, attentions = reference_run(reference, run.tokens)
    assert_matches(model.config, run, hidden, attentions)


def test_a_sentence_pair_with_token_types_matches_bert(model, reference):
    encoding = model.tokenizer.encode("Where is the cat?", "The cat is on the mat.")
    assert set(encoding.type_ids) == {0, 1}
    from attnlib.model import Tokens

    tokens = Tokens(
        tokens=list(encoding.tokens),
        input_ids=np.array(encoding.ids),
        attention_mask=np.ones(len(encoding.ids), dtype=bool),
        token_type_ids=np.array(encoding.type_ids),
    )
    output = model.encode(tokens)
    hidden, attentions = reference_run(reference, tokens)
    assert_matches(model.config, output, hidden[:, 0], attentions[:, 0])
