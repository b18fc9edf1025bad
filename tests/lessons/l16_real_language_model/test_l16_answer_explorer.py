"""The answer explorer of lesson 16 (attention_lessons.l16_real_language_model.widgets): what Python ships is
the prompt in the chat template, the answer attnlib's model writes after it, and every head's
weights over both as attnlib.model.llama computes them; typed prompts are answered or refused."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets
from conftest import unit_roundoff

pytest.importorskip("anywidget", reason="pip install -r requirements.txt")
pytest.importorskip("gguf", reason="pip install -r requirements.txt")

from attention_lessons.l16_real_language_model.widgets import (
    SCALE,
    SYSTEM,
    AnswerExplorer,
    answer_entry,
    answer_explorer,
)
from attnlib.model import llama

#: How far a shipped weight, divided by its scale, is from the model's: half of 1/SCALE, and a
#: float64 division.
ROUNDED = 0.5 / SCALE + unit_roundoff(np.float64)
PROMPTS = ["What do bees make?"]


@pytest.fixture(scope="module")
def explorer(smollm2):
    return answer_explorer(smollm2, PROMPTS, n_new=3, max_tokens=26)


def test_the_shipped_entry_is_the_models_answer_and_weights(smollm2, explorer):
    assert isinstance(explorer, AnswerExplorer) and explorer.mark_sink and explorer.noun == "prompt"
    entry = explorer.sentences[0]
    ids = smollm2.chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPTS[0]}])
    new = llama.generate(smollm2, ids, 3)
    both = np.concatenate([ids, new])
    assert entry["text"] == PROMPTS[0] and entry["n_prompt"] == len(ids) and entry["scale"] == SCALE
    assert entry["answer"] == smollm2.decode(new, skip_special=True)
    assert "".join(entry["tokens"]).replace("\\n", "\n") == smollm2.decode(both)
    _, weights = llama.forward_with_weights(smollm2, both)
    assert len(entry["attentions"]) == smollm2.config.n_layers
    for layer, head in [(0, 0), (12, 4), (29, 8)]:
        rows = entry["attentions"][layer][head]
        assert [len(row) for row in rows] == list(range(1, len(both) + 1))  # keys 0 … i: causal
        for i, row in enumerate(rows):
            assert all(isinstance(w, int) for w in row)
            shipped = np.array(row) / entry["scale"]  # what the page's headWeights draws
            np.testing.assert_allclose(shipped, weights[layer][head, i, : i + 1], rtol=0, atol=ROUNDED)
        assert np.all(weights[layer][head][np.triu_indices(len(both), 1)] == 0)  # what is left out


def test_a_typed_prompt_is_answered_and_selected_and_bad_ones_are_named(smollm2, explorer):
    explorer.text = "Hi!"
    assert explorer.error == ""
    assert explorer.sentence == 1 and explorer.sentences[1]["text"] == "Hi!"
    assert explorer.sentences[1] == answer_entry(smollm2, "Hi!", n_new=3, max_tokens=26)
    explorer.text = "   "
    assert explorer.error == "Type a prompt first."
    explorer.text = "Please tell me everything you know about the history of bees and honey."
    assert "the limit here is 25" in explorer.error and "Shorten it" in explorer.error
    explorer.text = "Bees \ud800?"
    assert "surrogate" in explorer.error
    assert len(explorer.sentences) == 2
    with pytest.raises(traitlets.TraitError, match="head"):
        explorer.head = 9


def test_bad_arguments_are_named(smollm2):
    with pytest.raises(TypeError, match="prompts"):
        answer_explorer(smollm2, "What do bees make?")
    with pytest.raises(ValueError, match="n_new must be a whole number from 1 to 32"):
        answer_explorer(smollm2, PROMPTS, n_new=0)
    with pytest.raises(ValueError, match="max_tokens"):
        answer_explorer(smollm2, PROMPTS, max_tokens=True)
    with pytest.raises(ValueError, match="layer must be from 0 to 29"):
        answer_explorer(smollm2, PROMPTS, layer=30)
    with pytest.raises(TypeError, match="head"):
        answer_explorer(smollm2, PROMPTS, head=1.0)
    with pytest.raises(TypeError, match="a prompt must be a string"):
        answer_entry(smollm2, None)
    with pytest.raises(ValueError, match="the prompt is empty"):
        answer_entry(smollm2, " ")
    with pytest.raises(ValueError, match="n_new must be a whole number from 1 to 32"):
        answer_entry(smollm2, "Hi!", n_new=1000)  # a long answer, and megabytes of widget state
    with pytest.raises(ValueError, match="max_tokens must be a whole number from 16 to 48"):
        answer_entry(smollm2, "Hi!", max_tokens=1000)


def test_the_explorers_sizes_stay_bounded_after_it_is_made(explorer):
    for name, value in (("n_new", 1000), ("max_tokens", 1000), ("n_new", 0)):
        with pytest.raises(traitlets.TraitError):
            setattr(explorer, name, value)
