"""Self-checks of lesson 14 (induction heads): which head is which, where the induction head looks
on a new sequence, and what the model predicts next.

- :func:`check_head_roles` and its table :data:`ROLE_MISTAKES`;
- :func:`check_induction_position` and its table :data:`POSITION_MISTAKES`;
- :func:`check_next_token` and its table :data:`NEXT_TOKEN_MISTAKES`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attention_lessons.kit.checks.answers import placeholder
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attnlib.validation import as_positive_int, as_real_array

__all__ = [
    "NEXT_TOKEN_MISTAKES",
    "POSITION_MISTAKES",
    "ROLE_MISTAKES",
    "HeadScores",
    "RepeatExercise",
    "check_head_roles",
    "check_induction_position",
    "check_next_token",
]

Head = tuple[int, int]
ROLES = ("previous_token", "induction")


@dataclass(frozen=True)
class HeadScores:
    """Every head's previous-token and induction score, each (n_layers, n_heads)."""

    previous: np.ndarray
    induction: np.ndarray

    def best(self, scores: np.ndarray, layer: int | None = None) -> Head:
        """The (layer, head) with the highest score, in ``layer`` only where given."""
        if layer is not None:
            return (layer, int(np.argmax(scores[layer])))
        flat = int(np.argmax(scores))
        return (flat // scores.shape[1], flat % scores.shape[1])

    def runner_up(self, scores: np.ndarray) -> Head:
        """The (layer, head) with the second highest score."""
        flat = int(np.argsort(scores, axis=None)[-2])
        return (flat // scores.shape[1], flat % scores.shape[1])

    @property
    def right(self) -> dict[str, Head]:
        """The head with the highest previous-token score and the one with the highest induction score."""
        return {"previous_token": self.best(self.previous), "induction": self.best(self.induction)}


def _swapped(ex: HeadScores) -> dict[str, Head]:
    right = ex.right
    return {"previous_token": right["induction"], "induction": right["previous_token"]}


def _transposed(ex: HeadScores) -> dict[str, Head]:
    return {role: (head, layer) for role, (layer, head) in ex.right.items()}


#: Wrong namings of the two heads, each giving the whole answer a learner would write.
ROLE_MISTAKES: tuple[Mistake[HeadScores], ...] = (
    Mistake(
        "You swapped the two heads",
        "the previous-token head sends each position to the one just before it (the diagonal below "
        "the main one); the induction head sends it to the token after the earlier copy of the "
        "current token (a stripe one past the diagonal of the repeat). Compare each head's two scores.",
        _swapped,
    ),
    Mistake(
        "You wrote (head, layer)",
        "write each head as (layer, head), layer first, both counted from 0 as numpy indexes.",
        _transposed,
    ),
    Mistake(
        "You counted layers and heads from 1",
        "they count from 0 here, as numpy indexes the weights' axes.",
        lambda ex: {role: (layer + 1, head + 1) for role, (layer, head) in ex.right.items()},
    ),
    Mistake(
        "You looked for the induction head in layer 0",
        "a layer-0 head sees only the tokens themselves and their positions; to find the token after "
        "an earlier copy it needs a key that already holds its previous token, which a layer-0 head "
        "writes for layer 1 to read.",
        lambda ex: {**ex.right, "induction": ex.best(ex.induction, layer=0)},
    ),
    Mistake(
        "You named the weaker induction head",
        "more than one head can learn the induction pattern; the induction head asked for is the one "
        "with the highest induction score.",
        lambda ex: {**ex.right, "induction": ex.runner_up(ex.induction)},
    ),
    Mistake(
        "You took the induction head for the previous-token head",
        "on the repeated half an induction head's stripe also runs parallel to the diagonal, but one "
        "block to the left; the previous-token head's is right below the diagonal from the start.",
        lambda ex: {**ex.right, "previous_token": ex.right["induction"]},
    ),
)


def _read_head(value: object, role: str) -> Head | str:
    """A (layer, head) pair of whole numbers from the answer (a tuple, a list or an array), or the
    reason it is not one."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = tuple(value.tolist())
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        return f"the {role} head must be a pair (layer, head), got {value!r}"
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        return f"the {role} head must be two whole numbers (layer, head), got {value!r}"
    return (int(value[0]), int(value[1]))


def check_head_roles(answer: object, previous: object, induction: object) -> CheckResult:
    """Check which head is the previous-token head and which the induction head.

    Parameters
    ----------
    answer : dict
        ``{"previous_token": (layer, head), "induction": (layer, head)}``, counted from 0.
    previous, induction : (n_layers, n_heads)
        Every head's previous-token score and induction score.
    """
    p = as_real_array(previous, "previous", dtype=np.float64)
    i = as_real_array(induction, "induction", dtype=np.float64)
    if p.ndim != 2 or p.shape != i.shape or p.size == 0:
        raise ValueError(
            "previous and induction must both be (n_layers, n_heads) scores of at least one head, "
            f"got shapes {p.shape} and {i.shape}"
        )
    ex = HeadScores(p, i)
    right = ex.right
    if right["previous_token"] == right["induction"]:
        raise ValueError("one head has both the highest previous-token and the highest induction score")
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if not isinstance(answer, Mapping) or set(answer) != set(ROLES):
        return failed(
            f'Give a dict {{"previous_token": (layer, head), "induction": (layer, head)}}; got {answer!r}.'
        )
    given: dict[str, Head] = {}
    for role in ROLES:
        head = _read_head(answer[role], role.replace("_", "-"))
        if isinstance(head, str):
            return failed(head + ".")
        given[role] = head
    if _tied_best(given, p, i):  # the highest of each score, or one of the heads tied for it
        right = given
    found = matching(ROLE_MISTAKES, ex, lambda wrong: wrong == given and wrong != right)
    if found:
        return failed(describe("Not yet", found, ex))
    for role, (layer, head) in given.items():
        if not (0 <= layer < p.shape[0] and 0 <= head < p.shape[1]):
            return failed(
                f"The {role.replace('_', '-')} head {(layer, head)} is not in this model: layers go from 0 "
                f"to {p.shape[0] - 1}, heads from 0 to {p.shape[1] - 1}."
            )
    if given == right:
        (pl, ph), (il, ih) = right["previous_token"], right["induction"]
        return passed(
            f"Correct: head {ph} of layer {pl} attends to the previous token (score "
            f"{p[pl, ph]:.2f}), and head {ih} of layer {il} to the token after the earlier copy "
            f"(induction score {i[il, ih]:.2f})."
        )
    wrong_roles = [role for role in ROLES if given[role] != right[role]]
    said = "; ".join(
        f"the head you named {role.replace('_', '-')} has a previous-token score of "
        f"{p[given[role]]:.2f} and an induction score of {i[given[role]]:.2f}"
        for role in wrong_roles
    )
    return failed(f"Not yet: {said}. Look for the head whose score of that kind stands out.")


def _tied_best(given: dict[str, Head], previous: np.ndarray, induction: np.ndarray) -> bool:
    """Whether the two heads named differ and each has the highest score of its kind (a tie allowed)."""
    if given["previous_token"] == given["induction"]:
        return False
    for role, scores in (("previous_token", previous), ("induction", induction)):
        layer, head = given[role]
        if (
            not (0 <= layer < scores.shape[0] and 0 <= head < scores.shape[1])
            or scores[layer, head] < scores.max()
        ):
            return False
    return True


@dataclass(frozen=True)
class RepeatExercise:
    """A token sequence and the position asked about (whose token occurred before)."""

    tokens: tuple[int, ...]
    query: int

    @property
    def earlier(self) -> int:
        """The most recent earlier position holding the query's token."""
        return max(p for p in range(self.query) if self.tokens[p] == self.tokens[self.query])

    @property
    def first(self) -> int:
        """The first position holding the query's token."""
        return self.tokens.index(self.tokens[self.query])

    @property
    def right(self) -> int:
        """Where an induction head looks: the position after the earlier copy."""
        return self.earlier + 1


#: Wrong positions for where the induction head looks, each with its cause.
POSITION_MISTAKES: tuple[Mistake[RepeatExercise], ...] = (
    Mistake(
        "That is the earlier copy of the token itself",
        "the induction head looks one further, at the token that came *after* the earlier copy: "
        "that is the one worth predicting next.",
        lambda ex: ex.earlier,
    ),
    Mistake(
        "That is the previous position",
        "that is where the previous-token head of layer 0 looks; the induction head of layer 1 "
        "looks at the token after the earlier copy of the current one.",
        lambda ex: ex.query - 1,
    ),
    Mistake(
        "That is the position itself",
        "a query rarely attends to itself here; look for the earlier copy of its token and step one on.",
        lambda ex: ex.query,
    ),
    Mistake(
        "You counted positions from 1",
        "positions count from 0 here, as numpy indexes the sequence.",
        lambda ex: ex.right + 1,
    ),
    Mistake(
        "That follows the first copy, not the latest",
        "where the token occurred more than once, the induction head follows its most recent copy.",
        lambda ex: ex.first + 1,
    ),
)


def _repeat_exercise(tokens: object, query: object) -> RepeatExercise:
    if isinstance(tokens, (str, bytes)):
        raise TypeError("tokens must be a sequence of token ids (whole numbers)")
    ids = np.asarray(tokens)
    if ids.ndim != 1 or ids.size < 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"tokens must be a 1-D sequence of at least 2 token ids, got {tokens!r}")
    position = as_positive_int(query, "query", minimum=0)
    if position >= ids.size:
        raise ValueError(f"query must be a position from 0 to {ids.size - 1}, got {position}")
    if int(ids[position]) not in ids[:position].tolist():
        raise ValueError(f"the token at position {position} does not occur before it: no induction to do")
    return RepeatExercise(tuple(int(t) for t in ids.tolist()), position)


def _read_whole(answer: object, what: str) -> int | CheckResult:
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Integral):
        return failed(f"Give {what} as a whole number; got {answer!r}.")
    return int(answer)


def check_induction_position(answer: object, tokens: object, query: int) -> CheckResult:
    """Check where an induction head looks from position ``query`` of a new sequence.

    Parameters
    ----------
    answer : int
        The key position, from 0.
    tokens : sequence of int
        The sequence's token ids.
    query : int
        The position the attention comes from; its token must occur earlier in ``tokens``.
    """
    ex = _repeat_exercise(tokens, query)
    given = _read_whole(answer, "a position")
    if isinstance(given, CheckResult):
        return given
    if not 0 <= given <= ex.query:
        return failed(
            f"Position {given} is not a key position {ex.query} can see: causal attention reaches "
            f"positions 0 to {ex.query}."
        )
    if given == ex.right:
        return passed(
            f"Correct: token {ex.tokens[ex.query]} last occurred at position {ex.earlier}, so the "
            f"induction head looks at position {ex.right}, the token that followed it."
        )
    found = matching(POSITION_MISTAKES, ex, lambda wrong: wrong == given and wrong != ex.right)
    if found:
        return failed(describe("Not this one", found, ex))
    return failed(
        f"Not yet: find where token {ex.tokens[ex.query]} occurred before position {ex.query}, "
        "then take the position after it."
    )


#: Wrong predictions of the next token, each with its cause.
NEXT_TOKEN_MISTAKES: tuple[Mistake[RepeatExercise], ...] = (
    Mistake(
        "That repeats the last token",
        "the model copies what *followed* the earlier copy of the last token, not the token itself.",
        lambda ex: ex.tokens[ex.query],
    ),
    Mistake(
        "That came before the earlier copy",
        "the induction head looks one position after the earlier copy, not one before it.",
        lambda ex: ex.tokens[ex.earlier - 1] if ex.earlier > 0 else None,
    ),
    Mistake(
        "That is the token before the last one",
        "the previous token is what the previous-token head reads; the prediction is what came "
        "after the earlier copy of the last token.",
        lambda ex: ex.tokens[ex.query - 1],
    ),
    Mistake(
        "That follows the first copy, not the latest",
        "where the token occurred more than once, the induction head follows its most recent copy.",
        lambda ex: ex.tokens[ex.first + 1],
    ),
)


def check_next_token(answer: object, tokens: object) -> CheckResult:
    """Check which token a model with an induction head predicts after ``tokens``.

    Parameters
    ----------
    answer : int
        A token id.
    tokens : sequence of int
        The prompt; its last token must occur earlier in it.
    """
    ex = _repeat_exercise(tokens, max(int(np.size(tokens)) - 1, 0))
    right = ex.tokens[ex.earlier + 1]
    given = _read_whole(answer, "a token id")
    if isinstance(given, CheckResult):
        return given
    if given == right:
        return passed(
            f"Correct: the last token {ex.tokens[ex.query]} was followed by {right} at position "
            f"{ex.earlier + 1}, so the induction head copies {right}."
        )
    if given not in ex.tokens:
        return failed(
            f"Token {given} does not occur in the prompt: an induction head can only copy a token it can see."
        )
    found = matching(NEXT_TOKEN_MISTAKES, ex, lambda wrong: wrong == given and wrong != right)
    if found:
        return failed(describe("Not this one", found, ex))
    return failed(
        f"Not yet: find the earlier copy of the last token ({ex.tokens[ex.query]}) "
        "and read the token after it."
    )
