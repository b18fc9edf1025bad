"""Fixtures of the tokens explorer's Node tests (tokens.test.mjs): merge tables trained by
:func:`attnlib.tokens.train` on a short mixed text, and what :mod:`attnlib.tokens` makes of texts
with them (the cut into pieces, the bytes, the ids after every number of merges).

Read by tests/kit/js/make_fixtures.py, which merges every lesson's ``fixtures()`` into one file.
"""

from __future__ import annotations

from attention_lessons.l17_tokens.widgets import SAMPLES, tokens_explorer
from attnlib import tokens

#: What the tables are trained on: English, French, Chinese, emoji and numbers, so that some merges
#: join the bytes of one character (é, 中, 👍) and some join whole words.
TRAINING = (
    "The cat sat on the mat. The dog didn't mind the cat; the cat didn't mind the dog. "
    "Où est la bibliothèque ? Déjà fermée, hélas : l'été, la bibliothèque ferme tôt. "
    "注意力机制让每个词都能看到其他的词。注意力就是一切。 "
    "Tokens 👍🏽 and 👍 and 🙂 🙂 are bytes too. "
    "In 2024 the 3 ships carried 1,234,567 kg; in 2025, 2,345,678 kg. "
    "aaaa aaaaaaa aaa a aa "
) * 3

#: The texts encoded (the samples as well): multi-byte characters, emoji with a joiner and a skin
#: tone, pairs that overlap ("aaaaa"), whitespace of every kind, numbers, contractions.
TEXTS = (
    "The cat didn't mind the dog.",
    "la bibliothèque ferme l'été",
    "注意力机制",
    "👍🏽 and 👨\u200d👩\u200d👧 🙂",
    "aaaaa aaaa aaa",
    "  two spaces,\ttab\nnew line\n\n  indented  ",
    "In 2024, 1,234,567 kg (12.5%).",
    "",
    "x",
)

#: Texts the pre-tokenizers cut in every way they can: contractions (and those they do not know:
#: capitals, a curly apostrophe), numbers of every kind (½, ², Arabic-Indic, Roman), spaces of
#: every kind (Unicode's White_Space, and what it is not: U+001C–U+001F, U+200B, U+FEFF),
#: combining marks, emoji, CJK and spaces at the ends.
PRETOKENIZE = (
    "Hello world's 2024!",
    "I'm you'll we'd they've she's it'd 'S 'LL don't don’t",
    "  leading and   multiple   spaces  ",
    "tabs\tand\nnew lines\n\n  indented\r\nwindows\n",
    "numbers 3.14 1,000,000 and ½ ² ٣٤ Ⅻ 12ab34",
    "spaces:\u00a0nbsp\u2003em\u3000ideographic\u0085nel\u200bzwsp\ufeffbom\u2028line\u2029para",
    "\x1c\x1d\x1e\x1f separators, \x00 nul and \x7f",
    "combining e\u0301 é and ﬁ, ... !!! ?? --> <= $3",
    "emoji 👍🏽 family 👨\u200d👩\u200d👧 flag 🇫🇷!",
    "中文和English混合123，好。",
    "x  \n y \n",
    " ",
    "",
)


def _table(n_merges: int, rule: str | None, text: str = TRAINING) -> dict:
    return {"rule": rule, "merges": [list(pair) for pair in tokens.train(text, n_merges, rule=rule)]}


def _encodings(name: str, table: dict, text: str, ks: list[int]) -> dict:
    merges = [tuple(pair) for pair in table["merges"]]
    return {
        "table": name,
        "text": text,
        "ks": ks,
        "ids": [tokens.encode(text, merges[:k], rule=table["rule"]) for k in ks],
    }


def tokens_cases() -> dict:
    tables = {
        "gpt2": _table(300, "gpt2"),  # fewer come: every piece becomes one token first
        "none": _table(200, None),
        "smollm": _table(150, "smollm"),
        "aaaa": _table(6, None, "aaaaaaaaaaaaaaaa b aaaaaaaaaaa"),
    }
    encodings = []
    for name, table in tables.items():
        n = len(table["merges"])
        ks = sorted({0, 1, 2, 3, 5, 10, n // 3, n // 2, n - 1, n} & set(range(n + 1)))
        for text in (*TEXTS, *SAMPLES.values()):
            encodings.append(_encodings(name, table, text, ks))
    # every k from 0 to N on two texts: each merge applying, one at a time
    every = [
        _encodings(name, tables[name], text, list(range(len(tables[name]["merges"]) + 1)))
        for name, text in (
            ("gpt2", " ".join((TEXTS[0], TEXTS[1], TEXTS[3], TEXTS[6]))),
            ("none", TEXTS[4] + " " + TEXTS[2]),
            ("aaaa", "aaaaaaaaaaaaa"),
        )
    ]
    return {
        "tables": tables,
        "encodings": encodings,
        "every": every,
        "pretokenize": [
            {"text": text, "rule": rule, "pieces": tokens.pretokenize(text, rule)}
            for text in PRETOKENIZE
            for rule in tokens.RULES
        ],
        "bytes": [
            {"text": text, "bytes": list(tokens.utf8(text)), "characters": len(text)}
            for text in (*TEXTS, *PRETOKENIZE, *SAMPLES.values())
        ],
        "vocabulary": {
            "table": "gpt2",
            "bytes": [list(b) for b in tokens.vocabulary([tuple(p) for p in tables["gpt2"]["merges"]])],
        },
        "explorer": explorer_state(tables["gpt2"]["merges"]),
        "stripFills": strip_fills(),
    }


def strip_fills() -> dict[str, list[str]]:
    """The two greys that alternate in the boxes of lesson 17's static picture of a text as tokens
    (:func:`attention_lessons.l17_tokens.plots.token_strip_figure`), in each style."""
    from attention_lessons.kit.plots.styles import STYLES
    from attention_lessons.l17_tokens.plots import _mix

    return {
        style: [_mix(str(rc["grid.color"]), str(rc["axes.facecolor"]), share) for share in (0.2, 0.75)]
        for style, rc in STYLES.items()
    }


def explorer_state(merges: list[list[int]]) -> dict:
    """What the page of a tokens explorer receives (its synced inputs), made by the factory."""
    explorer = tokens_explorer(merges, n_merges=len(merges) // 2)
    names = ("merges", "rule", "text", "n_merges", "samples", "max_text")
    state = {name: getattr(explorer, name) for name in names}
    explorer.close()
    return state


def fixtures() -> dict:
    return {"tokens": tokens_cases()}
