"""The tokens explorer of lesson 17: type text and watch byte-pair encoding turn it into tokens.

Type text (or pick a sample) and see it as tokens: one box per token, its text and its id, and a
slider over the merges of the learner's table, from 0 (every byte a token) to all of them, that
shows the merges applying one by one; the numbers of bytes, characters, tokens and characters per
token follow. The page computes everything it draws (``tokens.js``: the UTF-8 bytes, the
pre-tokenizer's cut, the merges by rank), so it answers without a kernel; Python holds the merge
table, the text and the slider, and computes the same tokens with :mod:`attnlib.tokens` only when
asked (:attr:`TokensExplorer.tokens`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import traitlets

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import WholeNumber
from attention_lessons.kit.widgets.modules import module_text
from attnlib import tokens
from attnlib.validation import is_number

__all__ = [
    "MAX_MERGES",
    "MAX_SAMPLES",
    "MAX_TEXT",
    "SAMPLES",
    "TokensExplorer",
    "check_merges",
    "check_text",
    "tokens_explorer",
]

#: The longest text the explorer takes, in characters: a page redraws a few hundred tokens within a
#: frame; at 2,000 characters (up to 8,000 bytes, each a token before any merge) it still answers.
MAX_TEXT = 2000
#: The most merges a table may hold (the state sent to the page grows with it; lesson 17 trains 1,024).
MAX_MERGES = 50_000
#: The most samples the picker offers, and the longest sample name.
MAX_SAMPLES = 20
MAX_NAME = 40
#: Short texts of many kinds: what a tokenizer trained on English does with each (a sample's name →
#: its text). Every one is far below :data:`MAX_TEXT`.
SAMPLES = {
    "English": "The cat sat on the mat, and the dog didn't mind at all.",
    "Shakespeare": "To be, or not to be, that is the question:",
    "code": "def add(a, b):\n    return a + b  # two numbers\n",
    "numbers": "In 2024 the 3 ships carried 1,234,567 kg (12.5% more).",
    "French": "Où est la bibliothèque ? Déjà fermée, hélas : reviens à huit heures.",
    "Chinese": "注意力机制让每个词都能看到其他的词。",
    "emoji": "Tokens 🙂 and 👍🏽 and 👨‍👩‍👧 are bytes too.",
}


def check_text(text: object, name: str = "text") -> str:
    """``text`` if the explorer can show it: a ``str`` of at most :data:`MAX_TEXT` characters that
    UTF-8 can encode (no lone surrogate); else ``TypeError`` or ``ValueError`` naming ``name``."""
    tokens.utf8(text, name)  # TypeError for a non-str, ValueError naming a lone surrogate
    if len(text) > MAX_TEXT:  # type: ignore[arg-type]
        raise ValueError(
            f"{name} has {len(text):,} characters; the explorer shows at most {MAX_TEXT:,}: shorten it"  # type: ignore[arg-type]
        )
    return str(text)


def check_merges(merges: object, name: str = "merges") -> list[list[int]]:
    """A merge table as :func:`attnlib.tokens.train` returns it, checked, as a list of ``[a, b]``.

    Each merge ``i`` makes token ``256 + i`` from two tokens that exist before it (ids below
    ``256 + i``), and no pair comes twice (:meth:`attnlib.tokens.Tokenizer.from_merges` names the
    first merge that breaks this); at most :data:`MAX_MERGES` merges.
    """
    if isinstance(merges, (str, bytes, Mapping)) or not isinstance(merges, Sequence):
        raise TypeError(
            f"{name} must be a list of pairs of token ids (from attnlib.tokens.train), got {merges!r}"
        )
    if len(merges) > MAX_MERGES:
        raise ValueError(f"{name} has {len(merges):,} merges; the explorer takes at most {MAX_MERGES:,}")
    tokens.Tokenizer.from_merges(merges)  # TypeError or ValueError naming merges[i]
    return [[int(a), int(b)] for a, b in merges]


def _check_rule(rule: object) -> str | None:
    if not (rule is None or isinstance(rule, str)) or rule not in tokens.RULES:
        raise ValueError(f"rule must be one of {tokens.RULES}, got {rule!r}")
    return rule  # type: ignore[return-value]


def _check_samples(samples: object) -> dict[str, str]:
    if not isinstance(samples, Mapping):
        raise TypeError(f"samples must be a dict of a name to a text, got {samples!r}")
    if len(samples) > MAX_SAMPLES:
        raise ValueError(f"samples has {len(samples)} texts; the picker offers at most {MAX_SAMPLES}")
    checked = {}
    for key, text in samples.items():
        if not isinstance(key, str) or not key.strip() or "\n" in key or len(key) > MAX_NAME:
            raise ValueError(
                f"each sample's name must be a non-empty line of at most {MAX_NAME} characters, got {key!r}"
            )
        checked[key] = check_text(text, f"samples[{key!r}]")
    return checked


class TokensExplorer(Explorer):
    """Text as byte-pair-encoded tokens, with a slider over the merges of a table.

    Use :func:`tokens_explorer` to make one. In lesson 17, for the learner's table::

        from attention_lessons.l17_tokens import widgets

        widgets.tokens_explorer(merges)

    Traits
    ------
    Inputs (synced; the front end sets them):

    text : str
        The text shown as tokens (typed, or a sample's), at most :data:`MAX_TEXT` characters.
    n_merges : int
        How many merges of the table apply (the first ``n_merges``, in the order learned), from 0
        (every byte is a token) to ``len(merges)``.

    Set once (synced): ``merges`` (list of ``[a, b]``: token ``256 + i`` joins merge ``i``'s two
    tokens), ``rule`` (the pre-tokenizer: ``None``, ``"gpt2"`` or ``"smollm"``, as
    :func:`attnlib.tokens.pretokenize`), ``samples`` (a name → a text, the picker's),
    ``max_text`` (:data:`MAX_TEXT`), ``style_name``, ``themes``.

    The front end computes what it draws (``attention_lessons/l17_tokens/tokens.js``, checked
    against attnlib in ``tests/lessons/l17_tokens/tokens.test.mjs``); :attr:`tokens` and
    :attr:`counts` are the same computed by :mod:`attnlib.tokens`, when read.
    """

    _esm = module_text("attention_lessons.l17_tokens", "tokens.js")
    summary = "Tokens explorer: text as byte-pair-encoded tokens, the merges applying one by one"

    merges = traitlets.List(traitlets.List(traitlets.Int())).tag(sync=True)
    rule = traitlets.Unicode("gpt2", allow_none=True).tag(sync=True)
    text = traitlets.Unicode("").tag(sync=True)
    n_merges = WholeNumber(0).tag(sync=True)
    samples = traitlets.Dict().tag(sync=True)
    max_text = WholeNumber(MAX_TEXT).tag(sync=True)

    @traitlets.validate("merges")
    def _check_merges(self, proposal: traitlets.Bunch) -> list[list[int]]:
        try:
            merges = check_merges(proposal["value"])
        except (TypeError, ValueError) as exc:
            raise traitlets.TraitError(str(exc)) from None
        if self.n_merges > len(merges):
            raise traitlets.TraitError(
                f"merges must hold at least n_merges = {self.n_merges} merges, got {len(merges)}: "
                "set n_merges first"
            )
        return merges

    @traitlets.validate("rule")
    def _check_rule(self, proposal: traitlets.Bunch) -> str | None:
        try:
            return _check_rule(proposal["value"])
        except ValueError as exc:
            raise traitlets.TraitError(str(exc)) from None

    @traitlets.validate("text")
    def _check_text(self, proposal: traitlets.Bunch) -> str:
        try:
            return check_text(proposal["value"])
        except (TypeError, ValueError) as exc:
            raise traitlets.TraitError(str(exc)) from None

    @traitlets.validate("n_merges")
    def _check_n_merges(self, proposal: traitlets.Bunch) -> int:
        return self._checked_index(proposal, range(len(self.merges) + 1))

    @traitlets.validate("samples")
    def _check_samples(self, proposal: traitlets.Bunch) -> dict[str, str]:
        try:
            return _check_samples(proposal["value"])
        except (TypeError, ValueError) as exc:
            raise traitlets.TraitError(str(exc)) from None

    @traitlets.validate("max_text")
    def _check_max_text(self, proposal: traitlets.Bunch) -> int:
        return self._checked_index(proposal, [MAX_TEXT])

    @property
    def tokens(self) -> list[int]:
        """The ids of :attr:`text` after the first :attr:`n_merges` merges (:func:`attnlib.tokens.encode`)."""
        return tokens.encode(self.text, [tuple(m) for m in self.merges[: self.n_merges]], rule=self.rule)

    @property
    def counts(self) -> dict[str, Any]:
        """What the page writes beside the tokens: ``bytes``, ``characters``, ``tokens`` and
        ``characters_per_token`` (``None`` for no token), by :mod:`attnlib.tokens`."""
        n = len(self.tokens)
        return {
            "bytes": len(tokens.utf8(self.text)),
            "characters": len(self.text),
            "tokens": n,
            "characters_per_token": len(self.text) / n if n else None,
        }


def tokens_explorer(
    merges: Sequence[Sequence[int]],
    *,
    text: str | None = None,
    n_merges: int | None = None,
    rule: str | None = "gpt2",
    samples: Mapping[str, str] | None = None,
    style: str = "light",
) -> TokensExplorer:
    """Lesson 17's explorer of a merge table: a text as tokens, a slider over the merges.

    Parameters
    ----------
    merges : list of (int, int)
        The table, as :func:`attnlib.tokens.train` returns it: token ``256 + i`` joins merge
        ``i``'s two tokens, each an id below ``256 + i``; at most :data:`MAX_MERGES`.
    text : str, optional
        The text shown first, at most :data:`MAX_TEXT` characters. Default: the first sample's.
    n_merges : int, optional
        How many merges apply at first, from 0 to ``len(merges)``. Default: all of them.
    rule : None, "gpt2" or "smollm"
        The pre-tokenizer the table was trained with (:func:`attnlib.tokens.pretokenize`).
    samples : dict of str to str, optional
        The texts the picker offers, by name (at most :data:`MAX_SAMPLES`). Default: :data:`SAMPLES`.
    style : {"light", "dark"}

    Returns
    -------
    TokensExplorer
    """
    table = check_merges(merges)
    rule = _check_rule(rule)
    offered = _check_samples(SAMPLES if samples is None else samples)
    if text is None:
        text = next(iter(offered.values()), "")
    text = check_text(text)
    if n_merges is None:
        n_merges = len(table)
    if not is_number(n_merges, whole=True):
        raise TypeError(f"n_merges must be a whole number, got {n_merges!r}")
    if not 0 <= n_merges <= len(table):
        raise ValueError(f"n_merges must be from 0 to {len(table)} (the merges given), got {n_merges}")
    return TokensExplorer(
        merges=table,
        rule=rule,
        samples=offered,
        text=text,
        n_merges=int(n_merges),
        style_name=style,
    )
