"""The head explorer of lesson 13 (attention_lessons.l13_real_model.widgets): what Python ships is what
attnlib.model computes, the page's module draws exactly those weights, and typed sentences are run or
refused."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
import traitlets
from conftest import ROOT, unit_roundoff

pytest.importorskip("anywidget", reason="pip install -r requirements.txt")
pytest.importorskip("safetensors", reason="pip install -r requirements.txt")

from attention_lessons.kit.examples import real_model_sentences
from attention_lessons.l13_real_model.widgets import DECIMALS, HeadExplorer, head_explorer

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

#: How far a shipped weight is from the model's: rounded to DECIMALS decimals (half a unit of the
#: last), written in float64 (u more, a weight being at most 1).
ROUNDED = 0.5 * 10**-DECIMALS + unit_roundoff(np.float64)


@pytest.fixture
def explorer(model):
    return head_explorer(model, max_tokens=16)


def test_the_selected_head_is_attnlib_models(model, explorer):
    assert isinstance(explorer, HeadExplorer)
    assert [e["text"] for e in explorer.sentences] == list(real_model_sentences())
    for sentence, layer, head in [(0, 0, 0), (1, 3, 7), (2, 5, 11)]:
        with explorer.hold_trait_notifications():
            explorer.sentence, explorer.layer, explorer.head = sentence, layer, head
        run = model.run(real_model_sentences()[sentence])
        entry = explorer.sentences[explorer.sentence]  # the page draws this entry's head
        assert entry["tokens"] == run.tokens.tokens
        np.testing.assert_allclose(
            entry["attentions"][layer][head], run.attentions[layer, head], rtol=0, atol=ROUNDED
        )


def test_a_typed_sentence_is_run_and_selected(model, explorer):
    explorer.text = "Bees make honey."
    assert explorer.error == ""
    assert explorer.sentence == len(real_model_sentences())
    entry = explorer.sentences[explorer.sentence]
    assert entry["tokens"] == ["[CLS]", "bees", "make", "honey", ".", "[SEP]"]
    np.testing.assert_allclose(
        entry["attentions"][0][0], model.run("Bees make honey.").attentions[0, 0], rtol=0, atol=ROUNDED
    )


def test_a_sentence_past_the_limit_gets_a_clear_message(explorer):
    explorer.text = "This sentence is far too long for the explorer, which keeps only sixteen tokens at most."
    assert "the limit here is 16" in explorer.error and "Shorten it" in explorer.error
    assert len(explorer.sentences) == len(real_model_sentences())
    explorer.text = "   "
    assert explorer.error == "Type a sentence first."


@pytest.mark.parametrize(
    ("name", "value"), [("layer", 6), ("head", 12), ("head", -1), ("view", "bars"), ("sentence", 3)]
)
def test_choices_out_of_range_are_refused(explorer, name, value):
    with pytest.raises(traitlets.TraitError, match=name):
        setattr(explorer, name, value)


def test_bad_arguments_are_named(model):
    with pytest.raises(ValueError, match="max_tokens"):
        head_explorer(model, max_tokens=100)
    with pytest.raises(TypeError, match="sentences"):
        head_explorer(model, sentences="one sentence")
    with pytest.raises(ValueError, match="limit here is 5"):
        head_explorer(model, sentences=["A sentence with more than five tokens."], max_tokens=5)
    for name, value in [("layer", True), ("head", 1.0), ("max_tokens", True)]:
        with pytest.raises((TypeError, ValueError), match=name):
            head_explorer(model, **{name: value})
    with pytest.raises(ValueError, match="layer must be from 0 to 5"):
        head_explorer(model, layer=6)
    with pytest.raises(TypeError, match="sentences"):
        head_explorer(model, sentences=["A sentence.", None])


def test_booleans_and_floats_are_refused_and_a_lone_surrogate_is_named(explorer):
    explorer.layer, explorer.head = 2, 3
    for name, value in [("layer", True), ("head", 1.0), ("sentence", False), ("layer", np.float64(1))]:
        with pytest.raises(traitlets.TraitError, match=name):
            setattr(explorer, name, value)
        assert (explorer.layer, explorer.head, explorer.sentence) == (2, 3, 0)
    explorer.layer = np.int64(4)
    assert explorer.layer == 4
    explorer.text = "Bees \ud800 make honey."  # a lone surrogate: not a character of Unicode text
    assert "surrogate" in explorer.error
    assert len(explorer.sentences) == len(real_model_sentences())


DRAW = """
import { readFileSync } from "node:fs";
import { drawHeads, strongest } from "./attention_lessons/l13_real_model/heads.js";
const { state, themes, colormaps } = JSON.parse(readFileSync(process.argv[2], "utf-8"));
const out = {};
for (const view of ["lines", "heatmap"]) {
  const { markup } = drawHeads({ ...state, view }, themes.light, colormaps);
  const numbers = /data-quantity="([^"]+)" data-row="(\\d+)" data-col="(\\d+)"[^>]*? data-value="([^"]*)"/g;
  out[view] = [...markup.matchAll(numbers)].map((m) => [m[1], Number(m[2]), Number(m[3]), Number(m[4])]);
}
const entry = state.sentences[state.sentence];
out.strongest = strongest(entry.attentions[state.layer][state.head]);
console.log(JSON.stringify(out));
"""


def test_the_page_draws_the_shipped_weights(explorer, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: install Node.js 20 or newer (Debian: apt-get install nodejs)")
    explorer.sentence, explorer.layer, explorer.head = 1, 2, 4
    state = {
        "sentences": explorer.sentences,
        "sentence": 1,
        "layer": 2,
        "head": 4,
        "modelName": explorer.model_name,
    }
    data = tmp_path / "state.json"
    data.write_text(json.dumps({"state": state, "themes": explorer.themes, "colormaps": explorer.colormaps}))
    script = tmp_path / "draw.mjs"
    script.write_text(DRAW.replace("./attention_lessons/", (ROOT / "attention_lessons").as_uri() + "/"))
    result = subprocess.run(
        [node, str(script), str(data)], capture_output=True, text=True, check=True, timeout=60
    )
    drawn = json.loads(result.stdout)
    W = np.array(explorer.sentences[1]["attentions"][2][4])
    n = len(W)
    cells = [(i, j, v) for q, i, j, v in drawn["heatmap"] if q == "weight"]
    assert len(cells) == n * n
    assert all(v == W[i, j] for i, j, v in cells)
    shown = [(i, j, v) for q, i, j, v in drawn["lines"] if q == "weight"]
    every_weight_in_order = [(i, j) for i in range(n) for j in range(n)]
    assert [(i, j) for i, j, _ in shown] == every_weight_in_order
    assert all(v == W[i, j] for i, j, v in shown)
    assert drawn["strongest"] == np.argmax(W, axis=1).tolist()
    largest = [(i, j, v) for q, i, j, v in drawn["lines"] if q == "largest_weight"]
    assert [(i, j) for i, j, _ in largest] == list(enumerate(np.argmax(W, axis=1).tolist()))
