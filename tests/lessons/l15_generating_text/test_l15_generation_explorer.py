"""The generation explorer of lesson 15 (attention_lessons.l15_generating_text.widgets): every step it ships
is what attnlib.decoder generates and attends to, with the cache's bytes; typed prompts are generated or
refused with a message naming what is wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest
import traitlets

from attention_lessons.l15_generating_text import widgets as shipped
from attention_lessons.l15_generating_text.widgets import (
    BOS_SHOWN,
    DECIMALS,
    MAX_PROMPT,
    GenerationExplorer,
    check_prompt,
    generation_entry,
    generation_explorer,
    weight_codes,
)
from attnlib import decoder
from attnlib.counting import kv_cache_bytes

pytestmark = pytest.mark.filterwarnings("error")

CHARS = "abcdehilnorst .¤"
SETTINGS = [{"window": None, "sinks": 0}, {"window": 6, "sinks": 0}, {"window": 6, "sinks": 2}]
PROMPTS = ["the cat ", "a "]
N_NEW = 12


@dataclass(frozen=True)
class Vocabulary:
    """Characters ↔ ids as lesson 15's text model has them: id 0 is BOS, then one per character."""

    chars: str
    BOS = 0

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.BOS] + [self.chars.index(c) + 1 for c in text], dtype=np.int64)

    def decode(self, ids: np.ndarray) -> str:
        return "".join(self.chars[i - 1] for i in np.asarray(ids).tolist() if i != self.BOS)


@dataclass(frozen=True)
class SmallModel:
    """A small decoder with rotary positions and random weights (what is shipped does not need training)."""

    config: decoder.DecoderConfig
    params: dict
    vocabulary: Vocabulary


def small_model(n_kv_heads: int | None = None) -> SmallModel:
    config = decoder.DecoderConfig(
        vocab_size=len(CHARS) + 1,
        n_ctx=16,
        d_model=16,
        n_heads=2,
        n_layers=2,
        d_mlp=32,
        layer_norm=True,
        positions="rope",
        n_kv_heads=n_kv_heads,
    )
    params = decoder.init_parameters(config, seed=3)
    params = {name: value * 4 for name, value in params.items()}  # sharper weights than at init
    return SmallModel(config, params, Vocabulary(CHARS))


MODEL = small_model()


def decoded(codes: list) -> np.ndarray:
    """Shipped weights read back: every two base-36 digits are one weight's thousandths."""
    if isinstance(codes, str):
        return np.array([int(codes[k : k + 2], 36) for k in range(0, len(codes), 2)]) / 10**DECIMALS
    return np.array([decoded(c) for c in codes])


def shown(tokens: np.ndarray) -> list[str]:
    """Token ids as the page shows them: BOS as its symbol, every other id as its character."""
    return [BOS_SHOWN if i == Vocabulary.BOS else CHARS[i - 1] for i in tokens.tolist()]


def make(**changes: object) -> GenerationExplorer:
    arguments = {"prompts": PROMPTS, "n_new": N_NEW, "settings": SETTINGS, **changes}
    return generation_explorer(MODEL, **arguments)


def test_each_step_is_what_the_decoder_generates_and_attends_to() -> None:
    explorer = make()
    assert [run["prompt"] for run in explorer.runs] == PROMPTS
    for run, prompt in zip(explorer.runs, PROMPTS, strict=True):
        ids = MODEL.vocabulary.encode(prompt)
        for setting, entry in zip(SETTINGS, run["settings"], strict=True):
            window, sinks = setting["window"], setting["sinks"]
            # the tokens: generate again, this time without the cache (each step reruns all)
            tokens = decoder.generate(MODEL.config, MODEL.params, ids, N_NEW, use_cache=False, **setting)
            assert entry["tokens"] == shown(tokens)
            assert entry["tokens"][: len(ids)] == [BOS_SHOWN, *prompt]
            assert entry["prompt_length"] == len(ids) == len(prompt) + 1
            # the weights: one pass over the whole sequence with the window's mask
            weights = decoder.forward(MODEL.config, MODEL.params, tokens, **setting).weights[:, 0]
            for step in range(1, N_NEW + 1):
                q = len(ids) - 2 + step
                kept = entry["kept"][step - 1]
                # exactly the keys the query may see: the first sinks and the last window, or all
                first = 0 if window is None else max(0, q - window + 1)
                assert kept == sorted(set(range(min(sinks, q + 1))) | set(range(first, q + 1)))
                np.testing.assert_allclose(weights[:, :, q, kept].sum(axis=-1), 1.0)  # none elsewhere
                shipped = decoded(entry["weights"][step - 1])
                assert shipped.shape == (MODEL.config.n_layers, MODEL.config.n_heads, len(kept))
                np.testing.assert_allclose(shipped, weights[:, :, q, kept], atol=0.5 * 10**-DECIMALS + 1e-12)
                assert entry["bytes"][step - 1] == kv_cache_bytes(
                    MODEL.config.shape, q + 1, bytes_per_number=8, **setting
                )
    explorer.close()


def test_bytes_per_position_follow_the_formula_with_grouped_query_attention_too() -> None:
    for n_kv_heads in (None, 1):
        model = small_model(n_kv_heads)
        explorer = generation_explorer(model, ["a "], n_new=3, settings=SETTINGS[:1])
        per_token = kv_cache_bytes(model.config.shape, 1, bytes_per_number=8)
        assert explorer.bytes_per_position == per_token == 2 * 2 * model.config.kv_heads * 8 * 8
        explorer.close()


def test_a_window_stops_the_cache_growing_and_sinks_keep_the_first_positions() -> None:
    explorer = make()
    full, window, sinks = explorer.runs[0]["settings"]
    assert np.all(np.diff(full["bytes"]) > 0)
    assert max(len(k) for k in window["kept"]) == 6 and max(len(k) for k in sinks["kept"]) == 8
    late = sinks["kept"][-1]
    assert late[:2] == [0, 1] and window["kept"][-1][0] > 1
    explorer.close()


def test_the_explorer_starts_at_step_1_with_the_full_cache_and_moves() -> None:
    explorer = make(step=3, style="dark")
    assert (explorer.prompt, explorer.window, explorer.sinks, explorer.step) == (0, None, 0, 3)
    assert explorer.settings == SETTINGS and explorer.n_new == N_NEW
    assert (explorer.n_layers, explorer.n_heads, explorer.decimals) == (2, 2, DECIMALS)
    assert explorer.bytes_per_position == kv_cache_bytes(MODEL.config.shape, 1, bytes_per_number=8)
    with explorer.hold_trait_notifications():
        explorer.prompt, explorer.window, explorer.sinks, explorer.step = 1, 6, 2, N_NEW
    assert (explorer.prompt, explorer.window, explorer.sinks, explorer.step) == (1, 6, 2, N_NEW)
    explorer.close()


def test_bad_moves_are_named_and_leave_the_explorer_as_it_was() -> None:
    explorer = make()
    for name, value, words in (
        ("step", 0, "step must be from 1 to 12"),
        ("step", N_NEW + 1, "step must be from 1 to 12"),
        ("prompt", 2, "prompt must be from 0 to 1"),
        ("window", 5, "window must be one of"),
        ("sinks", 3, "sinks must be one of"),
    ):
        with pytest.raises(traitlets.TraitError, match=words):
            setattr(explorer, name, value)
    assert (explorer.prompt, explorer.window, explorer.sinks, explorer.step) == (0, None, 0, 1)
    explorer.close()


def test_a_typed_prompt_is_generated_in_every_setting_and_selected() -> None:
    explorer = make()
    explorer.text = "dots "
    assert explorer.error == ""
    assert explorer.prompt == 2 and explorer.runs[2]["prompt"] == "dots "
    for setting, entry in zip(SETTINGS, explorer.runs[2]["settings"], strict=True):
        ids = MODEL.vocabulary.encode("dots ")
        expected = decoder.generate(MODEL.config, MODEL.params, ids, N_NEW, **setting)
        assert entry["tokens"] == shown(expected)
    explorer.close()


def test_a_prompt_the_model_cannot_read_gets_a_clear_message() -> None:
    explorer = make()
    explorer.text = "Quick, the cat!"
    assert explorer.error.startswith("The model does not know '!', ',', 'Q', 'k', 'u':")
    assert "Type the prompt without them" in explorer.error
    assert len(explorer.runs) == 2 and explorer.prompt == 0
    explorer.text = "a" * (MAX_PROMPT + 1)
    assert f"the limit here is {MAX_PROMPT}" in explorer.error
    explorer.text = ""
    assert explorer.error == "Type a prompt first."
    explorer.text = "a cat"
    assert explorer.error == "" and explorer.prompt == 2
    explorer.close()
    with pytest.raises(TypeError, match="a prompt must be a string"):
        check_prompt(MODEL, 3)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="does not know 'Z'"):
        make(prompts=["Zebra"])
    with pytest.raises(TypeError, match="prompts must be a non-empty list"):
        make(prompts="the cat")
    with pytest.raises(ValueError, match="n_new must be a whole number"):
        make(n_new=0)
    with pytest.raises(ValueError, match="settings must start with the full cache"):
        make(settings=SETTINGS[1:])
    with pytest.raises(ValueError, match="sinks must be a whole number"):
        make(settings=[SETTINGS[0], {"window": 6, "sinks": -1}])
    with pytest.raises(ValueError, match="window must be None or a whole number"):
        make(settings=[SETTINGS[0], {"window": 0, "sinks": 0}])
    with pytest.raises(ValueError, match="keys 'window' and 'sinks'"):
        make(settings=[SETTINGS[0], {"window": 6}])
    with pytest.raises(ValueError, match="step must be a whole number from 1 to 12"):
        make(step=13)


def test_weights_are_sent_as_two_base_36_digits_of_their_thousandths() -> None:
    codes = weight_codes(np.array([[0.0, 0.1234, 0.5, 1.0], [0.0004, 0.0006, 0.9996, 0.35]]))
    # 123 = 3·36 + 15, 500 = 13·36 + 32, 1000 = 27·36 + 28, 350 = 9·36 + 26
    assert codes == ["003fdwrs", "0001rs9q"]
    assert weight_codes(np.full((2, 3, 1), 0.25)) == [["6y"] * 3] * 2  # 250 = 6·36 + 34
    explorer = make()
    for run in explorer.runs:
        for entry in run["settings"]:
            for step, kept in enumerate(entry["kept"]):
                assert {len(code) for layer in entry["weights"][step] for code in layer} == {2 * len(kept)}
    explorer.close()


def test_generation_entry_matches_generate_with_the_trace() -> None:
    ids = MODEL.vocabulary.encode("the ")
    tokens, trace = decoder.generate_with_trace(MODEL.config, MODEL.params, ids, 4, window=6, sinks=2)
    entry = generation_entry(MODEL, "the ", 4, window=6, sinks=2)
    assert entry["kept"] == [k.tolist() for k in trace.key_positions]
    assert entry["tokens"] == shown(tokens)
    assert json.loads(json.dumps(entry)) == entry  # plain JSON, as the page receives it


def test_the_text_model_explorer_offers_its_prompts_in_every_setting_within_the_page_budget() -> None:
    from attention_lessons.l15_generating_text.text_model import load_text_model

    model = load_text_model()
    explorer = generation_explorer(model)
    assert [run["prompt"] for run in explorer.runs] == list(shipped.PROMPTS)
    assert explorer.settings == list(shipped.SETTINGS) and explorer.n_new == shipped.N_NEW
    assert (explorer.n_layers, explorer.n_heads) == (model.config.n_layers, model.config.n_heads)
    for prompt, run in zip(shipped.PROMPTS, explorer.runs, strict=True):
        for setting, entry in zip(shipped.SETTINGS, run["settings"], strict=True):
            assert "".join(entry["tokens"][1:]) == model.generate(prompt, shipped.N_NEW, **setting)
    # the prompts show the window's trouble and the sinks' repair (generation.PROMPTS' comment)
    window, sinks = shipped.SETTINGS[1:]
    assert (window["window"], sinks) == (16, {"window": 16, "sinks": 4})

    def first_difference(entry: dict, full: dict) -> int | None:
        start = entry["prompt_length"]
        written = zip(entry["tokens"][start:], full["tokens"][start:], strict=True)
        return next((k + 1 for k, (a, b) in enumerate(written) if a != b), None)

    unlike = [
        [first_difference(run["settings"][k], run["settings"][0]) for run in explorer.runs] for k in (1, 2)
    ]
    assert unlike == [[10, 9, 29], [36, None, None]]
    # the state as a book page holds it (json.dumps' separators): a few hundred kB
    assert len(json.dumps(explorer.get_state())) < 350_000
    explorer.close()
