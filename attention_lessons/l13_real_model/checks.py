"""Self-checks of lesson 13 (a real model): the parameters of one attention layer, d_k from the
config, and which token a head attends to most from a given token.

- :func:`check_attention_parameters` and its table :data:`PARAMETER_MISTAKES`;
- :func:`check_d_k` and its table :data:`D_K_MISTAKES`;
- :func:`check_most_attended` and its table :data:`MOST_ATTENDED_MISTAKES`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attention_lessons.kit.checks.answers import placeholder
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.values import number_verdict
from attnlib.validation import as_positive_int

__all__ = [
    "D_K_MISTAKES",
    "MOST_ATTENDED_MISTAKES",
    "PARAMETER_MISTAKES",
    "AttentionLayer",
    "HeadExercise",
    "check_attention_parameters",
    "check_d_k",
    "check_most_attended",
]


@dataclass(frozen=True)
class AttentionLayer:
    """The sizes of one BERT self-attention layer."""

    d_model: int
    n_heads: int
    d_ff: int

    @property
    def d_k(self) -> int:
        """One head's width, ``d_model / n_heads``."""
        return self.d_model // self.n_heads

    @property
    def parameters(self) -> int:
        """W_q, W_k, W_v, W_o (d_model × d_model each) and their four biases (d_model each)."""
        return 4 * self.d_model * self.d_model + 4 * self.d_model


#: Wrong parameter counts of one attention layer, each with its cause.
PARAMETER_MISTAKES: tuple[Mistake[AttentionLayer], ...] = (
    Mistake(
        "You left out the biases",
        "each of the four projections adds its bias, one number per output column.",
        lambda ex: 4 * ex.d_model**2,
    ),
    Mistake(
        "You left out W_o",
        "after the heads are concatenated, the output projection W_o (and its bias) mixes them.",
        lambda ex: 3 * ex.d_model**2 + 3 * ex.d_model,
    ),
    Mistake(
        "You left out W_o and the biases",
        "count all four projections, W_q, W_k, W_v and W_o, each with its bias.",
        lambda ex: 3 * ex.d_model**2,
    ),
    Mistake(
        "You gave every head its own d_model × d_model matrices",
        "the heads share the projections (head h uses {ex.d_k} of W_q's columns), so the {ex.n_heads} heads "
        "together have one d_model × d_model W_q.",
        lambda ex: ex.n_heads * (4 * ex.d_model**2 + 4 * ex.d_model),
    ),
    Mistake(
        "You counted one head only",
        "a head uses d_k columns of W_q, W_k and W_v; the layer holds all the heads' columns, and W_o.",
        lambda ex: 3 * (ex.d_model * ex.d_k + ex.d_k),
    ),
    Mistake(
        "You counted the layer norm after attention too",
        "this question counts only the four projections and their biases.",
        lambda ex: 4 * ex.d_model**2 + 4 * ex.d_model + 2 * ex.d_model,
    ),
    Mistake(
        "You counted the feed-forward layer",
        "W_1 and W_2 (with d_ff) belong to the feed-forward block, not to attention.",
        lambda ex: 2 * ex.d_model * ex.d_ff + ex.d_ff + ex.d_model,
    ),
)

#: Wrong values of d_k read off the config, each with its cause.
D_K_MISTAKES: tuple[Mistake[AttentionLayer], ...] = (
    Mistake(
        "That is hidden_size, d_model",
        "the heads share it out, hidden_size / num_attention_heads columns each.",
        lambda ex: ex.d_model,
    ),
    Mistake(
        "That is the number of heads",
        "d_k is the width of one head, hidden_size / num_attention_heads.",
        lambda ex: ex.n_heads,
    ),
    Mistake(
        "That is √d_k, the divisor of the scores",
        "d_k itself is the width of one head's queries and keys.",
        lambda ex: math.sqrt(ex.d_k),
    ),
    Mistake(
        "You divided intermediate_size by the heads",
        "intermediate_size is the feed-forward layer's width; d_k comes from hidden_size.",
        lambda ex: ex.d_ff / ex.n_heads,
    ),
)


def _layer_sizes(config: object) -> AttentionLayer:
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be the dict of config.json, got {type(config).__name__}")
    sizes = {}
    for key in ("hidden_size", "num_attention_heads", "intermediate_size"):
        if key not in config:
            raise ValueError(f"config has no {key!r}: pass the dict read from the model's config.json")
        sizes[key] = as_positive_int(config[key], f"config[{key!r}]")
    if sizes["hidden_size"] % sizes["num_attention_heads"]:
        raise ValueError("config's hidden_size does not divide into num_attention_heads heads")
    return AttentionLayer(sizes["hidden_size"], sizes["num_attention_heads"], sizes["intermediate_size"])


def _verdict(
    answer: object, right: float, table: Sequence[Mistake[AttentionLayer]], ex: AttentionLayer, name: str
) -> CheckResult:
    """The verdict on a number about the layer: each mistake of ``table`` gives its wrong value."""
    pairs = [(m.message(ex), float(m.wrong(ex))) for m in table]  # type: ignore[arg-type]
    return number_verdict(answer, float(right), decimals=3, name=name, mistakes=pairs)


def check_attention_parameters(answer: object, config: Mapping[str, object]) -> CheckResult:
    """Check the number of parameters of one self-attention layer: W_q, W_k, W_v, W_o and their biases.

    Parameters
    ----------
    answer : int
        The learner's count.
    config : dict
        The model's ``config.json`` (``hidden_size``, ``num_attention_heads``, ``intermediate_size``).
    """
    ex = _layer_sizes(config)
    return _verdict(answer, ex.parameters, PARAMETER_MISTAKES, ex, "the parameters of one attention layer")


def check_d_k(answer: object, config: Mapping[str, object]) -> CheckResult:
    """Check d_k, one head's width of queries and keys, read off the model's ``config.json``.

    Parameters
    ----------
    answer : int
    config : dict
        The model's ``config.json``.
    """
    ex = _layer_sizes(config)
    return _verdict(answer, ex.d_k, D_K_MISTAKES, ex, "d_k")


@dataclass(frozen=True)
class HeadExercise:
    """One head's weights on a sentence and the token asked about."""

    weights: np.ndarray
    tokens: tuple[str, ...]
    query: int

    @property
    def token_asked(self) -> str:
        """The token the attention comes from, as the messages write it."""
        return self.token(self.query)

    def token(self, position: int) -> str:
        """A token and its position, as the messages write it."""
        return f"{self.tokens[position]!r} (position {position})"


#: Wrong readings of a head's weights: each gives the position the learner would pick.
MOST_ATTENDED_MISTAKES: tuple[Mistake[HeadExercise], ...] = (
    Mistake(
        "You read the column, not the row",
        "the attention from {ex.token_asked} is row {ex.query} of the weights (rows are queries); column "
        "{ex.query} says how much every token attends to it.",
        lambda ex: int(np.argmax(ex.weights[:, ex.query])),
    ),
    Mistake(
        "That is the token the head attends to least",
        "look for the largest weight in the row, not the smallest.",
        lambda ex: int(np.argmin(ex.weights[ex.query])),
    ),
    Mistake(
        "You counted positions from 1",
        "positions count from 0 here, with [CLS] at position 0, as numpy indexes the rows.",
        lambda ex: int(np.argmax(ex.weights[ex.query])) + 1,
    ),
)


def check_most_attended(answer: object, weights: object, tokens: Sequence[str], query: int) -> CheckResult:
    """Check which token a head attends to most from token ``query``.

    Parameters
    ----------
    answer : str or int
        The token (its text) or its position (0 = ``[CLS]``).
    weights : (n, n)
        The head's attention weights on the sentence (rows: queries, columns: keys).
    tokens : sequence of str, length n
        The sentence's tokens.
    query : int
        The position of the token the attention comes from.
    """
    ex = _head_exercise(weights, tokens, query)
    n = len(ex.tokens)
    right = int(np.argmax(ex.weights[query]))
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if isinstance(answer, (bool, np.bool_)):
        return failed(
            f"The answer is {answer}, a boolean; give a token (text) or its position (a whole number)."
        )
    if isinstance(answer, str):
        if answer not in ex.tokens:
            return failed(
                f"{answer!r} is not a token of this sentence; its tokens are {', '.join(ex.tokens)}."
            )
        positions = [p for p, t in enumerate(ex.tokens) if t == answer]
    elif isinstance(answer, numbers.Integral):
        if not 0 <= int(answer) < n:
            return failed(f"Position {answer} is outside the sentence: positions go from 0 to {n - 1}.")
        positions = [int(answer)]
    else:
        return failed(f"Give a token (text) or its position (a whole number); got {type(answer).__name__}.")
    if right in positions:
        return passed(
            f"Correct: from {ex.token(query)} this head attends most to {ex.token(right)}, "
            f"with weight {ex.weights[query, right]:.3f}."
        )
    found = matching(MOST_ATTENDED_MISTAKES, ex, lambda wrong: wrong in positions and wrong != right)
    if found:
        return failed(describe("Not this one", found, ex))
    given = max(positions, key=lambda p: ex.weights[query, p])
    return failed(
        f"Not yet: from {ex.token(query)} the head gives {ex.token(given)} weight "
        f"{ex.weights[query, given]:.3f}, not the largest of row {query}."
    )


def _head_exercise(weights: object, tokens: Sequence[str], query: object) -> HeadExercise:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be one head's (n, n) weights, got shape {w.shape}")
    if not np.isfinite(w).all() or not np.allclose(w.sum(axis=1), 1, atol=1e-4):
        raise ValueError("weights must be finite attention weights whose rows sum to 1")
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise TypeError("tokens must be a sequence of token strings")
    if len(tokens) != w.shape[0]:
        raise ValueError(f"tokens has {len(tokens)} entries, weights has {w.shape[0]} rows")
    position = as_positive_int(query, "query", minimum=0)
    if position >= w.shape[0]:
        raise ValueError(f"query must be a position from 0 to {w.shape[0] - 1}, got {position}")
    return HeadExercise(weights=w, tokens=tuple(tokens), query=position)
