"""Fixtures of the generation explorer's Node tests (generation.test.mjs): a small decoder with rotary
positions and random weights, generating with attnlib.decoder as lesson 15's explorer receives it.

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

from types import SimpleNamespace

from attention_lessons.l15_generating_text.text_model import Vocabulary
from attention_lessons.l15_generating_text.widgets import generation_explorer
from attnlib.decoder import DecoderConfig, init_parameters

#: The characters of the generation fixture's vocabulary (with the rare symbol, as lesson 15's model).
GENERATION_CHARS = "abcehst .¤"


def generation_case() -> dict:
    """Two prompts of a small decoder with rotary positions and random weights, generated with the
    full cache, a window of 5 and the window with 2 sinks, as lesson 15's explorer receives them."""
    config = DecoderConfig(
        vocab_size=len(GENERATION_CHARS) + 1, n_ctx=16, d_model=16, n_heads=2, n_layers=2, positions="rope"
    )
    params = {name: 4 * value for name, value in init_parameters(config, seed=5).items()}
    model = SimpleNamespace(config=config, params=params, vocabulary=Vocabulary(GENERATION_CHARS))
    settings = [{"window": None, "sinks": 0}, {"window": 5, "sinks": 0}, {"window": 5, "sinks": 2}]
    explorer = generation_explorer(model, ["the ", "a cat"], n_new=10, settings=settings)
    names = ("runs", "settings", "n_new", "n_layers", "n_heads", "bytes_per_position", "decimals")
    state = {name: getattr(explorer, name) for name in names}
    explorer.close()
    return state


def fixtures() -> dict:
    return {"generation": generation_case()}
