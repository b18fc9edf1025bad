"""Self-checks of lesson 10 (positions), each with its table of mistakes.

- :func:`check_sinusoidal`: a few entries of a sinusoidal encoding computed by hand
  (``PE[3, :4]``); :data:`SINUSOIDAL_MISTAKES` makes each likely slip (sine and cosine swapped,
  ``i`` where the exponent has ``2i``, degrees for radians, ...).
- :func:`check_shifted_score`: the score of a query and a key rotated by RoPE after both
  positions moved by the same amount; :data:`SHIFT_MISTAKES` moves only one of them, forgets the
  rotation, flips the distance.
- :func:`check_rotated_values`: why RoPE leaves v alone: what rotating v as well would change (the
  outputs, not the weights); :data:`VALUE_ROTATION_MISTAKES` names the weights and "nothing".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attention_lessons.kit.checks.answers import placeholder, read_array
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.values import entry_unit, number_verdict
from attention_lessons.kit.checks.wording import shape_text
from attnlib.positions import EXACT_POSITIONS, rope, sinusoidal
from attnlib.validation import as_positive_int, as_real

__all__ = [
    "SHIFT_MISTAKES",
    "SINUSOIDAL_MISTAKES",
    "VALUE_ROTATION_MISTAKES",
    "EncodingExercise",
    "ShiftExercise",
    "check_rotated_values",
    "check_shifted_score",
    "check_sinusoidal",
]


# --- PE[p, :columns] -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodingExercise:
    """Entries ``PE[position, :columns]`` of the sinusoidal encodings of width ``d_model``."""

    position: int
    d_model: int
    columns: int
    base: float

    def row(
        self,
        *,
        position: float | None = None,
        d_model: int | None = None,
        exponent: Callable[[np.ndarray], np.ndarray] | None = None,
        swapped: bool = False,
        times: bool = False,
        degrees: bool = False,
    ) -> np.ndarray:
        """``PE[position, :columns]`` computed with the formula changed as a mistake changes it.

        ``exponent(j)`` gives, for the column indices ``j``, what multiplies ``1/d_model`` in the
        exponent (``2i`` for both columns of pair ``i`` in the right formula).
        """
        p = self.position if position is None else position
        d = self.d_model if d_model is None else d_model
        j = np.arange(self.columns)
        power = (j - j % 2 if exponent is None else exponent(j)) / d
        angle = p * self.base**power if times else p / self.base**power
        if degrees:
            angle = np.deg2rad(angle)
        even = (j % 2 == 0) != swapped
        return np.where(even, np.sin(angle), np.cos(angle))


#: The slips of a sinusoidal encoding by hand, most likely first; ``wrong`` gives the entries.
SINUSOIDAL_MISTAKES: tuple[Mistake[EncodingExercise], ...] = (
    Mistake(
        "Sine and cosine swapped",
        "the even columns 0, 2, … hold the sines and the odd columns 1, 3, … the cosines.",
        lambda ex: ex.row(swapped=True),
    ),
    Mistake(
        "Used i instead of 2i in the exponent",
        "columns 2i and 2i+1 share the angle p / base^(2i/d_model): the exponent of pair i is 2i/d_model, "
        "so columns 2 and 3 use 2/d_model.",
        lambda ex: ex.row(exponent=lambda j: j // 2),
    ),
    Mistake(
        "Each column its own frequency",
        "a sine and the cosine after it share one angle: columns 2i and 2i+1 both use the exponent "
        "2i/d_model, not their own column index.",
        lambda ex: ex.row(exponent=lambda j: j),
    ),
    Mistake(
        "2i with i the column index",
        "i counts pairs of columns, not columns: column j belongs to pair i = j // 2, whose exponent "
        "is 2i/d_model.",
        lambda ex: ex.row(exponent=lambda j: 2 * j),
    ),
    Mistake(
        "Used d = {ex.columns} instead of d_model = {ex.d_model}",
        "the exponent divides by the width of the whole encoding, d_model, even when you compute only "
        "its first {ex.columns} columns.",
        lambda ex: ex.row(d_model=ex.columns) if ex.columns != ex.d_model else None,
    ),
    Mistake(
        "Multiplied by base^(2i/d_model) instead of dividing",
        "the angle is p / base^(2i/d_model): the later columns turn more slowly, not faster.",
        lambda ex: ex.row(times=True),
    ),
    Mistake(
        "Degrees instead of radians",
        "the angle is in radians: set your calculator to radians (numpy's sin and cos take radians).",
        lambda ex: ex.row(degrees=True),
    ),
    Mistake(
        "Off by one position",
        "row p of PE is position p, counted from 0 like the tokens: PE[{ex.position}] is position "
        "{ex.position}.",
        lambda ex: ex.row(position=ex.position - 1),
    ),
    Mistake(
        "Off by one position",
        "row p of PE is position p, counted from 0 like the tokens: PE[{ex.position}] is position "
        "{ex.position}.",
        lambda ex: ex.row(position=ex.position + 1),
    ),
)


def check_sinusoidal(
    answer: object,
    position: int,
    d_model: int,
    *,
    columns: int | None = None,
    base: float = 10000.0,
    decimals: int = 3,
) -> CheckResult:
    """Check ``PE[position, :columns]`` of :func:`attnlib.positions.sinusoidal`, computed by hand.

    Parameters
    ----------
    answer : array_like, shape (columns,)
        The learner's entries.
    position : int
        The row of ``PE`` (positions count from 0).
    d_model : int
        The width of the encodings (the exponent divides by it).
    columns : int, optional
        How many leading columns the answer holds (default: all ``d_model``).
    base : float
        The wavelength base (10000 in the paper).
    decimals : int
        Decimals asked, each entry compared by :func:`attention_lessons.kit.checks.values.entry_unit`'s rule.

    Returns
    -------
    CheckResult
        Passed; or the mistake of :data:`SINUSOIDAL_MISTAKES` that gives these entries; otherwise a
        wrong shape or the first column that is off. The right entries are never shown.
    """
    ex = EncodingExercise(
        position=as_positive_int(position, "position", minimum=0),
        d_model=as_positive_int(d_model, "d_model"),
        columns=0,
        base=as_real(base, "base"),
    )
    if ex.position > EXACT_POSITIONS:
        raise ValueError(
            f"position must be at most 2**53 = {EXACT_POSITIONS:,} (float64 tells no larger position "
            f"from the next one), got a {len(str(ex.position))}-digit position"
        )
    n_columns = ex.d_model if columns is None else as_positive_int(columns, "columns")
    if n_columns > ex.d_model:
        raise ValueError(f"columns must be at most d_model = {ex.d_model}, got {n_columns}")
    ex = EncodingExercise(ex.position, ex.d_model, n_columns, ex.base)
    right = sinusoidal(1, ex.d_model, base=ex.base, start=ex.position)[0, : ex.columns]
    atol = entry_unit(right, decimals)
    name = f"PE[{ex.position}, :{ex.columns}]"
    arr = read_array(answer, name)
    if isinstance(arr, CheckResult):
        return arr
    if arr.shape != right.shape:
        return failed(
            f"Wrong shape: {name} holds {ex.columns} numbers, shape ({ex.columns},); yours is "
            f"{shape_text(arr.shape)}."
        )
    if not np.isfinite(arr).all():
        return failed(f"{name} has NaN or an infinity; every entry is a sine or a cosine, between −1 and 1.")
    if np.allclose(arr, right, rtol=0.0, atol=atol):
        return passed(f"Correct: every entry of {name} is within {atol:g} of attnlib's.")

    def fits(wrong: object) -> bool:
        candidate = np.asarray(wrong)
        return bool(
            np.allclose(arr, candidate, rtol=0.0, atol=atol)
            and not np.allclose(candidate, right, rtol=0.0, atol=atol)
        )

    found = matching(SINUSOIDAL_MISTAKES, ex, fits)
    if found:
        return failed(describe("", found, ex))
    column = int(np.argmax(~np.isclose(arr, right, rtol=0.0, atol=atol)))
    kind = "sin" if column % 2 == 0 else "cos"
    pair = column // 2
    return failed(
        f"Not yet: column {column} is off. It is "
        f"{kind}({ex.position} / {ex.base:g}^({2 * pair}/{ex.d_model})), in radians; check that entry again."
    )


# --- a score after both positions move -------------------------------------------------------------


@dataclass(frozen=True)
class ShiftExercise:
    """A query at position ``m`` and a key at ``n``, both moved by ``shift``, rotated by RoPE."""

    q: np.ndarray
    k: np.ndarray
    m: float
    n: float
    shift: float
    base: float

    def score(self, m: float, n: float) -> float:
        """``rope(q, m) · rope(k, n)``."""
        return float(rope(self.q, [m], base=self.base) @ rope(self.k, [n], base=self.base))


#: What a learner may predict for the score after the shift, most likely first.
SHIFT_MISTAKES: tuple[Mistake[ShiftExercise], ...] = (
    Mistake(
        "Moved only the query",
        "both positions move by {ex.shift:g}: the query's and the key's.",
        lambda ex: ex.score(ex.m + ex.shift, ex.n),
    ),
    Mistake(
        "Moved only the key",
        "both positions move by {ex.shift:g}: the query's and the key's.",
        lambda ex: ex.score(ex.m, ex.n + ex.shift),
    ),
    Mistake(
        "Left out the rotation",
        "with RoPE the score is rope(q, m) · rope(k, n), not q · k: rotate both before the dot product.",
        lambda ex: float(ex.q @ ex.k),
    ),
    Mistake(
        "Swapped the positions",
        "the score depends on the signed distance m − n: the query stays at the query's position and "
        "the key at the key's.",
        lambda ex: ex.score(ex.n + ex.shift, ex.m + ex.shift),
    ),
    Mistake(
        "Added the shift to the score",
        "the shift moves positions, which turn the vectors; it is not added to the score.",
        lambda ex: ex.score(ex.m, ex.n) + ex.shift,
    ),
)


def check_shifted_score(
    answer: object,
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    m: float,
    n: float,
    shift: float,
    *,
    base: float = 10000.0,
    decimals: int = 3,
) -> CheckResult:
    """Check the predicted score ``rope(q, m + shift) · rope(k, n + shift)``.

    Parameters
    ----------
    answer : float
        The learner's prediction.
    q, k : array_like, shape (d,)
        The query and the key, ``d`` even.
    m, n : float
        Their positions before the shift.
    shift : float
        How far both positions move.
    base : float
        RoPE's frequency base.
    decimals : int
        Decimals asked, compared by :func:`attention_lessons.kit.checks.values.number_verdict`'s rule.

    Returns
    -------
    CheckResult
        Passed; or the mistake of :data:`SHIFT_MISTAKES` that gives the number; otherwise too
        high or too low. The right score is never shown.
    """
    query = np.asarray(rope(q, [0.0], base=base), dtype=np.float64)  # validates q and base
    key = np.asarray(rope(k, [0.0], base=base), dtype=np.float64)
    if query.shape != key.shape or query.ndim != 1:
        raise ValueError(
            f"q and k must be single vectors of the same length, got shapes {np.shape(q)} and {np.shape(k)}"
        )
    ex = ShiftExercise(
        q=query,
        k=key,
        m=as_real(m, "m"),
        n=as_real(n, "n"),
        shift=as_real(shift, "shift"),
        base=float(base),
    )
    right = ex.score(ex.m + ex.shift, ex.n + ex.shift)
    mistakes = [
        (mistake.message(ex), wrong) for mistake in SHIFT_MISTAKES if (wrong := mistake.wrong(ex)) is not None
    ]
    name = f"the score after moving both positions by {ex.shift:g}"
    return number_verdict(answer, right, decimals=decimals, name=name, mistakes=mistakes)


# --- what rotating v would change ------------------------------------------------------------------

#: The words a learner may use for what changes.
_CHANGES = {
    "output": {"outputs"},
    "outputs": {"outputs"},
    "z": {"outputs"},
    "weight": {"weights"},
    "weights": {"weights"},
    "score": {"weights"},
    "scores": {"weights"},
    "both": {"outputs", "weights"},
    "neither": set(),
    "nothing": set(),
    "none": set(),
}
_CHANGE_FILLERS = {"a", "an", "and", "only", "the", "would", "change", "changes", "&", "+", "plus"}
RIGHT_CHANGE = frozenset({"outputs"})
_NO_WEIGHT = (
    "a weight is the softmax of the scores q · k / √d_k, and v is not in them: every weight stays as it is. "
    "So rotating v cannot make the weights depend on positions."
)

#: What a learner may say rotating v (as well as q and k) would change; ``wrong`` gives the set.
VALUE_ROTATION_MISTAKES: tuple[Mistake[frozenset[str]], ...] = (
    Mistake(
        "Rotating v changes no weight",
        _NO_WEIGHT,
        lambda right: frozenset({"weights"}),
    ),
    Mistake(
        "Rotating v changes no weight",
        _NO_WEIGHT,
        lambda right: right | {"weights"},
    ),
    Mistake(
        "Something does change",
        "an output is the weighted sum of the values: rotated values, the same weights, other outputs. "
        "Position would be mixed into the content the output carries, and still no weight would see it.",
        lambda right: frozenset(),
    ),
)


def check_rotated_values(answer: object) -> CheckResult:
    """Check what rotating v by its position, as well as q and k, would change: the outputs, not the weights.

    Parameters
    ----------
    answer : str or collection of str
        ``"outputs"``, ``"the weights"``, ``"both"``, ``"neither"``, ``["outputs", "weights"]``, ...

    Returns
    -------
    CheckResult
        Passed, or the mistake of :data:`VALUE_ROTATION_MISTAKES` the answer makes, or what could not
        be read.
    """
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if isinstance(answer, str):
        words: Iterable[object] = re.split(r"[\s,;/]+", answer.strip().lower())
    elif isinstance(answer, (list, tuple, set, frozenset)):
        words = answer
    else:
        return failed(f'Give your answer as text, such as "weights" or "both"; got {type(answer).__name__}.')
    chosen: set[str] = set()
    read = False
    for word in words:
        if not isinstance(word, str):
            return failed(f'Each entry must be text, such as "outputs" or "weights"; got {word!r}.')
        token = word.strip().lower().strip(".!?\"'")
        if not token or token in _CHANGE_FILLERS:
            continue
        if token not in _CHANGES:
            return failed(f'Could not read {word!r}: answer "outputs", "weights", "both" or "neither".')
        chosen |= _CHANGES[token]
        read = True
    if not read:
        return failed('Answer "outputs", "weights", "both" or "neither".')
    if chosen == RIGHT_CHANGE:
        return passed(
            "Correct: the outputs change and every weight stays the same, so rotating v would put "
            "positions into the content, never into the weights. RoPE turns only q and k."
        )
    found = matching(VALUE_ROTATION_MISTAKES, RIGHT_CHANGE, lambda wrong: wrong == frozenset(chosen))
    return failed(describe("", found, RIGHT_CHANGE))
