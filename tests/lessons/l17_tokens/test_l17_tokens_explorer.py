"""The tokens explorer of lesson 17 (attention_lessons.l17_tokens.widgets): what Python sends is the
learner's merge table, the pre-tokenizer's name, the text and the slider; its on-demand tokens are
attnlib's; what it cannot show is refused with a message naming the argument."""

from __future__ import annotations

import functools
import json

import pytest
import traitlets
from conftest import answer_or_clear_error, every_odd_combination, every_odd_trait

pytest.importorskip("anywidget", reason="pip install -r requirements.txt")

from attention_lessons.l17_tokens import widgets
from attention_lessons.l17_tokens.widgets import (
    MAX_MERGES,
    MAX_TEXT,
    SAMPLES,
    TokensExplorer,
    check_merges,
    check_text,
    tokens_explorer,
)
from attnlib import tokens

pytestmark = pytest.mark.filterwarnings("error")

TRAINING = (
    "The cat sat on the mat. The dog didn't mind the cat. Où est la bibliothèque ? Déjà fermée. "
    "注意力机制让每个词都能看到其他的词。 Tokens 👍 and 🙂 are bytes. In 2024, 1,234 kg. "
) * 4


@functools.cache
def table(rule: str | None = "gpt2", n: int = 120) -> tuple[tuple[int, int], ...]:
    return tuple(tokens.train(TRAINING, n, rule=rule))


def make(**changes: object) -> TokensExplorer:
    return tokens_explorer(list(table()), **changes)


def test_the_explorer_sends_the_table_the_rule_the_text_and_the_slider() -> None:
    explorer = make()
    assert isinstance(explorer, TokensExplorer)
    assert explorer.merges == [list(pair) for pair in table()]
    assert explorer.rule == "gpt2" and explorer.n_merges == len(table())
    assert explorer.text == next(iter(SAMPLES.values())) and explorer.samples == SAMPLES
    assert explorer.max_text == MAX_TEXT
    state = explorer.get_state()
    for name in ("merges", "rule", "text", "n_merges", "samples", "max_text", "style_name", "themes"):
        assert name in state, name
    json.dumps({name: state[name] for name in ("merges", "rule", "text", "n_merges", "samples")})
    explorer.close()


@pytest.mark.parametrize("rule", tokens.RULES)
def test_the_tokens_are_attnlibs_at_every_number_of_merges(rule: str | None) -> None:
    merges = table(rule, 80)
    explorer = tokens_explorer(list(merges), rule=rule, text="The cat didn't mind 注意力 👍 2024.")
    for k in range(len(merges) + 1):
        explorer.n_merges = k
        assert explorer.tokens == tokens.encode(explorer.text, merges[:k], rule=rule)
        counts = explorer.counts
        assert counts["tokens"] == len(explorer.tokens)
        assert counts["bytes"] == len(explorer.text.encode("utf-8"))
        assert counts["characters"] == len(explorer.text)
        assert counts["characters_per_token"] == counts["characters"] / counts["tokens"]
    assert tokens.decode(explorer.tokens, merges) == explorer.text
    explorer.close()


def test_the_defaults_and_the_choices() -> None:
    explorer = make(text="", n_merges=0, rule=None, samples={}, style="dark")
    assert explorer.text == "" and explorer.n_merges == 0 and explorer.rule is None and explorer.samples == {}
    assert explorer.style_name == "dark" and explorer.tokens == []
    assert explorer.counts == {"bytes": 0, "characters": 0, "tokens": 0, "characters_per_token": None}
    explorer.close()
    empty = tokens_explorer([])
    assert empty.merges == [] and empty.n_merges == 0 and empty.tokens == list(empty.text.encode("utf-8"))
    empty.close()
    mine = tokens_explorer([(97, 97)], text="aaaa", samples={"a row": "aaaaa"})
    assert mine.tokens == [256, 256] and mine.samples == {"a row": "aaaaa"}
    mine.close()


def test_the_front_end_moves_are_taken_and_checked() -> None:
    explorer = make()
    explorer.text = "typed by the learner"
    explorer.n_merges = 3
    assert explorer.tokens == tokens.encode("typed by the learner", table()[:3], rule="gpt2")
    for name, value, message in [
        ("n_merges", len(table()) + 1, f"n_merges must be from 0 to {len(table())}"),
        ("n_merges", -1, "n_merges must be from 0"),
        ("text", "x" * (MAX_TEXT + 1), "the explorer shows at most 2,000"),
        ("text", "half \ud800 a pair", "lone surrogate U\\+D800"),
        ("rule", "bert", "rule must be one of"),
        ("merges", [[97, 300]], "refers to token 300"),
        ("samples", {"": "text"}, "each sample's name must be"),
        ("max_text", 10, "max_text must be one of"),
    ]:
        before = getattr(explorer, name)
        with pytest.raises(traitlets.TraitError, match=message):
            setattr(explorer, name, value)
        assert getattr(explorer, name) == before
    with pytest.raises(traitlets.TraitError, match="set n_merges first"):
        explorer.merges = [[97, 97]]
    explorer.n_merges = 1
    explorer.merges = [[97, 97]]
    assert explorer.tokens == tokens.encode(explorer.text, [(97, 97)], rule="gpt2")
    explorer.close()


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"merges": "ab"}, TypeError, "merges must be a list of pairs of token ids"),
        ({"merges": {97: 97}}, TypeError, "merges must be a list of pairs"),
        ({"merges": [(97,)]}, TypeError, r"merges\[0\] must be a pair of token ids"),
        ({"merges": [(97, 98.0)]}, TypeError, r"merges\[0\] must be a pair of token ids"),
        ({"merges": [(97, 97), (256, 258)]}, ValueError, r"merges\[1\] = \(256, 258\) refers to token 258"),
        ({"merges": [(97, -1)]}, ValueError, "refers to token -1"),
        ({"merges": [(97, 97), (97, 97)]}, ValueError, r"merges\[1\] = \(97, 97\) repeats merges\[0\]"),
        ({"merges": [(97, 97)] * (MAX_MERGES + 1)}, ValueError, "the explorer takes at most 50,000"),
        ({"text": b"bytes"}, TypeError, "text must be a str"),
        ({"text": "a" * (MAX_TEXT + 1)}, ValueError, "text has 2,001 characters; the explorer shows at most"),
        ({"text": "\udc80"}, ValueError, "text holds a lone surrogate U\\+DC80"),
        ({"n_merges": 121}, ValueError, "n_merges must be from 0 to 120"),
        ({"n_merges": -1}, ValueError, "n_merges must be from 0 to 120"),
        ({"n_merges": 2.0}, TypeError, "n_merges must be a whole number"),
        ({"n_merges": True}, TypeError, "n_merges must be a whole number"),
        ({"rule": "GPT2"}, ValueError, "rule must be one of"),
        ({"rule": ["gpt2"]}, ValueError, "rule must be one of"),
        ({"samples": ["a"]}, TypeError, "samples must be a dict"),
        ({"samples": {"a": 1}}, TypeError, r"samples\['a'\] must be a str"),
        ({"samples": {"two\nlines": "a"}}, ValueError, "each sample's name must be a non-empty line"),
        ({"samples": {f"s{i}": "a" for i in range(21)}}, ValueError, "at most 20"),
        ({"samples": {"long": "a" * (MAX_TEXT + 1)}}, ValueError, r"samples\['long'\] has 2,001 characters"),
        ({"style": "sepia"}, ValueError, "style must be one of"),
    ],
)
def test_the_factory_names_what_is_wrong(arguments: dict, error: type, message: str) -> None:
    merges = arguments.pop("merges", list(table()))
    with pytest.raises(error, match=message):
        tokens_explorer(merges, **arguments)


def test_check_text_and_check_merges() -> None:
    assert check_text("é👍") == "é👍"
    assert check_merges([(97, 97), (256, 98)]) == [[97, 97], [256, 98]]
    with pytest.raises(TypeError, match="samples\\['x'\\] must be a str"):
        check_text(3, "samples['x']")


def test_odd_arguments_are_an_answer_or_a_clear_error() -> None:
    merges = list(table())
    every_odd_combination("tokens_explorer", lambda m: tokens_explorer(m).close(), 1)
    every_odd_combination("tokens_explorer(text)", lambda t: tokens_explorer(merges, text=t).close(), 1)
    every_odd_combination(
        "tokens_explorer(n_merges, rule)",
        lambda n, r: tokens_explorer(merges, n_merges=n, rule=r).close(),
        2,
    )
    every_odd_combination("tokens_explorer(samples)", lambda s: tokens_explorer(merges, samples=s).close(), 1)
    answer_or_clear_error(lambda: tokens_explorer([[1, 2]] * 2))


def test_the_traits_refuse_odd_values() -> None:
    every_odd_trait("tokens explorer", make, ("n_merges", "text", "rule", "merges", "samples", "max_text"))


def test_the_samples_are_short_and_of_many_kinds() -> None:
    assert {"English", "Shakespeare", "code", "numbers", "French", "Chinese", "emoji"} <= set(SAMPLES)
    assert all(0 < len(text) <= 100 for text in SAMPLES.values())
    assert any(ord(c) > 0xFFFF for c in SAMPLES["emoji"]) and "\u200d" in SAMPLES["emoji"]
    assert "\n" in SAMPLES["code"] and any(c.isdigit() for c in SAMPLES["numbers"])
    assert widgets.__all__ and all(hasattr(widgets, name) for name in widgets.__all__)
