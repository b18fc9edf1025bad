"""The head explorer of lesson 13: every head of a real model (all-MiniLM-L6-v2) on a sentence.

Pick a layer and a head; the sentence's tokens stand in two columns, each query on the left joined
to every key on the right by a line as opaque as the attention weight (bertviz's head view), or
the head's weights as a heatmap. Python runs the model (:mod:`attnlib.model`) and ships every
head of every layer for a few sentences, so the page only selects and a static page responds; a
sentence typed into the box is run by Python (a kernel is needed), within a length limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import traitlets

from attention_lessons.kit.examples import real_model_sentences
from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.inputs import WholeNumber
from attention_lessons.kit.widgets.modules import module_text
from attnlib.validation import is_number

__all__ = ["MAX_TOKENS", "HeadExplorer", "head_explorer", "sentence_entry"]

#: The longest sentence the explorer runs, in tokens with [CLS] and [SEP] (the picture stays readable).
MAX_TOKENS = 24
#: Decimals kept of each weight sent to the page (the picture shows 2).
DECIMALS = 6


def sentence_entry(model: Any, text: str, *, max_tokens: int = MAX_TOKENS) -> dict[str, Any]:
    """One sentence as the explorer ships it: its text, tokens and every head's weights.

    Parameters
    ----------
    model : attnlib.model.Model
    text : str
    max_tokens : int
        Longer sentences raise ``ValueError`` with their length and the limit.

    Raises
    ------
    TypeError
        ``text`` is not a string.
    ValueError
        ``text`` is too long, or holds a lone surrogate (not a character of Unicode text).

    Returns
    -------
    dict
        ``text``; ``tokens`` (list of str, n); ``attentions`` (n_layers × n_heads × n × n nested
        lists, rounded to 6 decimals).
    """
    if not isinstance(text, str):
        raise TypeError(f"a sentence must be a string, got {text!r}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"the sentence {text!r} holds {exc.object[exc.start]!r} at index {exc.start}, half of a "
            "surrogate pair and not a character; type the sentence again"
        ) from None
    run = model.run(text, max_tokens=max_tokens)
    return {
        "text": text,
        "tokens": list(run.tokens.tokens),
        "attentions": np.round(run.attentions.astype(np.float64), DECIMALS).tolist(),
    }


class HeadExplorer(Explorer):
    """Every head of every layer of a real model on a few sentences; the page selects one.

    Use :func:`head_explorer` to make one.

    Traits
    ------
    Inputs (synced; the front end sets them):

    sentence : int
        Index into ``sentences``.
    layer, head : int
        From 0 (numpy's indices, as in the lesson).
    view : str
        ``"lines"`` (two columns of tokens joined by lines) or ``"heatmap"``.
    text : str
        A sentence typed by the learner: Python runs it and appends it to ``sentences`` (or sets
        ``error`` when it is too long or empty).

    Set by Python (synced): ``sentences`` (list of :func:`sentence_entry` dicts), ``error``;
    set once: ``n_layers``, ``n_heads``, ``max_tokens``, ``model_name``, ``style_name``,
    ``themes``, ``colormaps``. The front end draws the selected head of the selected sentence.
    """

    _esm = module_text("attention_lessons.l13_real_model", "heads.js")
    summary = "Head explorer: every head of all-MiniLM-L6-v2 on a sentence"
    colormap_names = ("viridis",)

    sentences = traitlets.List(traitlets.Dict()).tag(sync=True)
    sentence = WholeNumber(0).tag(sync=True)
    layer = WholeNumber(0).tag(sync=True)
    head = WholeNumber(0).tag(sync=True)
    view = traitlets.Unicode("lines").tag(sync=True)
    text = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    n_layers = WholeNumber(6).tag(sync=True)
    n_heads = WholeNumber(12).tag(sync=True)
    max_tokens = WholeNumber(MAX_TOKENS).tag(sync=True)
    model_name = traitlets.Unicode("all-MiniLM-L6-v2").tag(sync=True)
    #: What the page calls an entry of ``sentences`` (its select, its box, its messages).
    noun = "sentence"

    def __init__(self, model: Any, **kwargs: Any) -> None:
        self._model = model
        super().__init__(**kwargs)

    @traitlets.validate("sentence")
    def _check_sentence(self, proposal: traitlets.Bunch) -> int:
        return self._checked_index(proposal, range(len(self.sentences)))

    @traitlets.validate("layer", "head")
    def _check_layer_head(self, proposal: traitlets.Bunch) -> int:
        size = self.n_layers if proposal["trait"].name == "layer" else self.n_heads
        return self._checked_index(proposal, range(size))

    @traitlets.validate("view")
    def _check_view(self, proposal: traitlets.Bunch) -> str:
        if proposal["value"] not in ("lines", "heatmap"):
            raise traitlets.TraitError(f"view must be 'lines' or 'heatmap', got {proposal['value']!r}")
        return str(proposal["value"])

    def _entry(self, text: str) -> dict[str, Any]:
        """What a typed text becomes in ``sentences`` (a subclass may run it otherwise)."""
        return sentence_entry(self._model, text, max_tokens=self.max_tokens)

    @traitlets.observe("text")
    def _new_text(self, change: traitlets.Bunch) -> None:
        text = change["new"].strip()
        if not text:
            self.error = f"Type a {self.noun} first."
            return
        try:
            entry = self._entry(text)
        except ValueError as exc:
            self.error = str(exc)
            return
        with self.hold_sync():
            self.error = ""
            self.sentences = [*self.sentences, entry]
            self.sentence = len(self.sentences) - 1


def head_explorer(
    model: Any = None,
    sentences: Sequence[str] | None = None,
    *,
    layer: int = 0,
    head: int = 0,
    view: str = "lines",
    max_tokens: int = MAX_TOKENS,
    style: str = "light",
) -> HeadExplorer:
    """Explore every head of a real model: pick a sentence, a layer and a head.

    Parameters
    ----------
    model : attnlib.model.Model, optional
        Default: :func:`attnlib.model.load_model`.
    sentences : sequence of str, optional
        Precomputed (every head of every layer), so a page without a kernel can show them.
        Default: :func:`attention_lessons.kit.examples.real_model_sentences`.
    layer, head : int
        Start values, from 0.
    view : {"lines", "heatmap"}
    max_tokens : int
        The longest sentence accepted (with [CLS] and [SEP]), also for typed ones; at most 64.
    style : {"light", "dark"}

    Returns
    -------
    HeadExplorer
    """
    if model is None:
        from attnlib.model import load_model

        model = load_model()
    if not is_number(max_tokens, whole=True) or not 3 <= max_tokens <= 64:
        raise ValueError(f"max_tokens must be a whole number from 3 to 64, got {max_tokens!r}")
    if sentences is None:
        sentences = real_model_sentences()
    if isinstance(sentences, str) or not sentences or not all(isinstance(s, str) for s in sentences):
        raise TypeError(f"sentences must be a non-empty list of sentences (str), got {sentences!r}")
    for name, value, size in (("layer", layer, model.config.n_layers), ("head", head, model.config.n_heads)):
        if not is_number(value, whole=True):
            raise TypeError(f"{name} must be a whole number (not True or False), got {value!r}")
        if not 0 <= value < size:
            raise ValueError(f"{name} must be from 0 to {size - 1}, got {value}")
    entries = [sentence_entry(model, s, max_tokens=max_tokens) for s in sentences]
    return HeadExplorer(
        model,
        sentences=entries,
        layer=layer,
        head=head,
        view=view,
        n_layers=model.config.n_layers,
        n_heads=model.config.n_heads,
        max_tokens=max_tokens,
        style_name=style,
    )
