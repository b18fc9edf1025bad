"""The answer explorer of lesson 16: every head of SmolLM2 over answers it generated, sinks marked.

Lesson 13's head explorer (:mod:`attention_lessons.l13_real_model.widgets`, its ES module ``heads.js``) on a
causal model: a prompt in the chat template, the answer the model wrote greedily after it, and
every layer's and head's weights over those tokens, the first token labelled as the sink and the
head's mean weight on it stated. Python runs the model for a few prompts when the explorer is
made, so a page without a kernel shows them; a prompt typed into the box is answered by Python (a
kernel is needed), within a length limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import traitlets

from attention_lessons.kit.widgets.inputs import WholeNumber
from attention_lessons.l13_real_model.widgets import HeadExplorer
from attnlib.model import llama
from attnlib.validation import is_number

__all__ = ["MAX_TOKENS", "N_NEW", "PROMPTS", "SYSTEM", "AnswerExplorer", "answer_entry", "answer_explorer"]

#: The most tokens of prompt and answer together (the picture stays readable, the state ~1 MB).
MAX_TOKENS = 32
#: The most tokens the model writes for a prompt.
N_NEW = 10
#: Each weight is sent to the page as a whole number of 1/SCALE (the picture shows 2 decimals):
#: two prompts then weigh about 0.9 MB, within the book's page budget.
SCALE = 100
#: The system message: short, so that the template leaves room for the answer.
SYSTEM = "Be brief."
#: The prompts precomputed when the explorer is made.
PROMPTS = ("What is the capital of France?", "Name three colours.")


#: The sizes a learner may set: (lowest, highest) of ``n_new`` and of ``max_tokens`` (the
#: explorer's traits hold the same bounds).
SIZES = {"n_new": (1, 32), "max_tokens": (16, 48)}
_N_NEW_LOW, _N_NEW_HIGH = SIZES["n_new"]
_MAX_TOKENS_LOW, _MAX_TOKENS_HIGH = SIZES["max_tokens"]


def _check_sizes(**sizes: object) -> None:
    """A ValueError naming the first of ``n_new`` or ``max_tokens`` outside :data:`SIZES`."""
    for name, value in sizes.items():
        low, high = SIZES[name]
        if not is_number(value, whole=True) or not low <= value <= high:
            raise ValueError(f"{name} must be a whole number from {low} to {high}, got {value!r:.60}")


def _short(text: str) -> str:
    """``text`` quoted, its first 40 characters only."""
    return repr(text if len(text) <= 40 else text[:40] + "…")


def answer_entry(
    model: llama.LlamaModel, prompt: str, *, n_new: int = N_NEW, max_tokens: int = MAX_TOKENS
) -> dict[str, Any]:
    """One prompt as the explorer ships it: the chat's tokens, the answer's, every head's weights.

    Parameters
    ----------
    model : attnlib.model.llama.LlamaModel
    prompt : str
        The user's message; the chat template adds :data:`SYSTEM` and the assistant's turn.
    n_new : int
        The most tokens the model writes (greedy, stopping at its end token), fewer where
        ``max_tokens`` leaves less room.
    max_tokens : int
        Prompts whose template takes ``max_tokens`` or more tokens raise ``ValueError``.

    Raises
    ------
    TypeError
        ``prompt`` is not a string.
    ValueError
        ``prompt`` is empty, too long, or holds a lone surrogate.

    Returns
    -------
    dict
        ``text`` (the prompt); ``tokens`` (list of str, n: the template's and the answer's, each as
        it reads, a new line as ``\\n``); ``n_prompt`` (int); ``answer`` (str); ``scale``
        (:data:`SCALE`); ``attentions`` (n_layers × n_heads × n rows, row ``i`` the ``i + 1``
        weights of keys 0 … i times ``scale``, rounded to whole numbers: the keys after it have
        weight 0).
    """
    _check_sizes(n_new=n_new, max_tokens=max_tokens)
    if not isinstance(prompt, str):
        raise TypeError(f"a prompt must be a string, got {prompt!r:.60}")
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"the prompt {_short(prompt)} holds {exc.object[exc.start]!r} at index {exc.start}, half of a "
            "surrogate pair and not a character; type the prompt again"
        ) from None
    if not prompt.strip():
        raise ValueError("the prompt is empty: type a question")
    ids = model.chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}])
    if len(ids) >= max_tokens:
        raise ValueError(
            f"the prompt {_short(prompt)} takes {len(ids)} tokens in the chat template; the limit here is "
            f"{max_tokens - 1}, to leave room for an answer. Shorten it."
        )
    new = llama.generate(model, ids, min(n_new, max_tokens - len(ids)))
    both = np.concatenate([ids, new])
    _, weights = llama.forward_with_weights(model, both)
    rounded = np.rint(np.stack(weights).astype(np.float64) * SCALE).astype(np.int64).tolist()
    return {
        "text": prompt,
        "tokens": [model.decode([int(t)]).replace("\n", "\\n") for t in both],
        "n_prompt": len(ids),
        "answer": model.decode(new, skip_special=True),
        "scale": SCALE,
        "attentions": [[[row[: i + 1] for i, row in enumerate(head)] for head in layer] for layer in rounded],
    }


class AnswerExplorer(HeadExplorer):
    """Every head of SmolLM2 over a few prompts and the answers it wrote; the page selects one.

    Use :func:`answer_explorer` to make one. The traits are :class:`HeadExplorer`'s (``sentences``
    holds :func:`answer_entry` dicts; ``text`` is a typed prompt, which Python answers), and
    ``mark_sink`` (the page labels the first token as the sink and states the head's mean weight
    on it), ``noun`` (``"prompt"``) and ``n_new`` (the most tokens an answer gets).
    """

    summary = "Answer explorer: every head of SmolLM2-135M-Instruct over answers it generated"

    mark_sink = traitlets.Bool(True).tag(sync=True)
    noun = traitlets.Unicode("prompt").tag(sync=True)
    n_new = WholeNumber(N_NEW, min=_N_NEW_LOW, max=_N_NEW_HIGH).tag(sync=True)
    max_tokens = WholeNumber(MAX_TOKENS, min=_MAX_TOKENS_LOW, max=_MAX_TOKENS_HIGH).tag(sync=True)

    def _entry(self, text: str) -> dict[str, Any]:
        return answer_entry(self._model, text, n_new=self.n_new, max_tokens=self.max_tokens)


def answer_explorer(
    model: llama.LlamaModel | None = None,
    prompts: Sequence[str] = PROMPTS,
    *,
    layer: int = 0,
    head: int = 0,
    view: str = "lines",
    n_new: int = N_NEW,
    max_tokens: int = MAX_TOKENS,
    style: str = "light",
) -> AnswerExplorer:
    """Explore every head of SmolLM2 over answers it generated: pick a prompt, a layer and a head.

    Parameters
    ----------
    model : attnlib.model.llama.LlamaModel, optional
        Default: :func:`attnlib.model.llama.load_smollm2`.
    prompts : sequence of str
        Answered and run when the explorer is made, so a page without a kernel shows them.
    layer, head : int
        Start values, from 0.
    view : {"lines", "heatmap"}
    n_new : int
        The most tokens an answer gets, 1 to 32 (also for typed prompts).
    max_tokens : int
        The most tokens of prompt and answer together, 16 to 48.
    style : {"light", "dark"}

    Returns
    -------
    AnswerExplorer
    """
    if model is None:
        model = llama.load_smollm2()
    _check_sizes(n_new=n_new, max_tokens=max_tokens)
    if isinstance(prompts, str) or not prompts or not all(isinstance(p, str) for p in prompts):
        raise TypeError(f"prompts must be a non-empty list of prompts (str), got {prompts!r:.80}")
    c = model.config
    for name, value, size in (("layer", layer, c.n_layers), ("head", head, c.n_heads)):
        if not is_number(value, whole=True):
            raise TypeError(f"{name} must be a whole number (not True or False), got {value!r}")
        if not 0 <= value < size:
            raise ValueError(f"{name} must be from 0 to {size - 1}, got {value}")
    entries = [answer_entry(model, p, n_new=n_new, max_tokens=max_tokens) for p in prompts]
    return AnswerExplorer(
        model,
        sentences=entries,
        layer=layer,
        head=head,
        view=view,
        n_layers=c.n_layers,
        n_heads=c.n_heads,
        n_new=n_new,
        max_tokens=max_tokens,
        model_name="SmolLM2-135M-Instruct",
        style_name=style,
    )
