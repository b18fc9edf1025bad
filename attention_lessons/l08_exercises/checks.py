"""Check operation counts: :func:`check_operation_counts` and its table of counting mistakes.

The counts follow one convention, stated in :data:`COUNTING_CONVENTION`: the one of
:mod:`attnlib.counting` (its formulas, and :func:`attnlib.counting.counted_attention`, which
counts every operation as it computes), which is also the convention of the course's original
exercise 2 on operation counts, where the scaling is "dividing by √d_k … n_q n_k times".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from attention_lessons.kit.checks.answers import placeholder, read_number
from attention_lessons.kit.checks.attention import check_attention
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.scale import check_scale
from attention_lessons.kit.checks.values import check_shape
from attention_lessons.l08_exercises.masks import CAUSAL_MISTAKES, check_causal_mask
from attnlib.counting import OPERATIONS, STEPS, operation_counts

#: With the checks lesson 08 shares with other lessons (so the notebook reads them from one module).
__all__ = [
    "CAUSAL_MISTAKES",
    "COUNTING_CONVENTION",
    "COUNT_MISTAKES",
    "CountExercise",
    "check_attention",
    "check_causal_mask",
    "check_operation_counts",
    "check_scale",
    "check_shape",
]

#: The steps of :data:`attnlib.counting.STEPS`, by name.
SCORES_STEP, SCALE_STEP, ROW_MAX_STEP, SOFTMAX_STEP, WEIGHTED_SUM_STEP = STEPS

#: What the exercise's counts include, said once (lessons and messages quote it).
COUNTING_CONVENTION = (
    "counted as attnlib.counting and the course's original exercise 2 count: the scaling is n_q·n_k "
    "divisions by √d_k plus one square root and the softmax normalisation n_q·n_k divisions, so neither "
    "is a multiplication, and the stable softmax's subtraction of the row maximum is left out"
)


@dataclass(frozen=True)
class CountExercise:
    """The shapes of an operation-count exercise, and attnlib's counts step by step."""

    n_q: int
    n_k: int
    d_k: int
    d_v: int
    steps: Mapping[str, Mapping[str, int]]

    def step(self, name: str, op: str) -> int:
        """How many operations ``op`` the step ``name`` takes."""
        return self.steps[name][op]

    def total(self, op: str) -> int:
        """The right total of ``op``."""
        return sum(counts[op] for counts in self.steps.values())


def _only(ex: CountExercise, step: str) -> dict[str, int]:
    """The multiplications of one step only: the other step left out."""
    return {"multiplications": ex.step(step, "multiplications")}


#: The mistakes :func:`check_operation_counts` recognises, one count at a time: ``wrong(ex)`` gives
#: the counts that mistake leads to (only the operations it changes).
COUNT_MISTAKES: tuple[Mistake[CountExercise], ...] = (
    Mistake(
        "You counted Q Kᵀ but not weights · V",
        "the weighted sum of the values takes multiplications too.",
        lambda ex: _only(ex, SCORES_STEP),
    ),
    Mistake(
        "You counted weights · V but not Q Kᵀ",
        "every score q·k is a dot product, made of multiplications too.",
        lambda ex: _only(ex, WEIGHTED_SUM_STEP),
    ),
    Mistake(
        "You counted the scaling as multiplications",
        "computing it as a multiplication by 1/√d_k, as attnlib.scale_scores does, is fair, but this "
        "exercise counts the scaling as divisions by √d_k, so it is not in the multiplications.",
        lambda ex: {
            "multiplications": ex.total("multiplications") + ex.n_q * ex.n_k,
            "divisions": ex.total("divisions") - ex.n_q * ex.n_k,
        },
    ),
    Mistake(
        "You counted the divisions as multiplications",
        "this exercise counts the scaling and the softmax normalisation as divisions, so neither is in "
        "the multiplications.",
        lambda ex: {"multiplications": ex.total("multiplications") + 2 * ex.n_q * ex.n_k},
    ),
    Mistake(
        "You used d_k for weights · V too",
        "each of its n_q·d_v entries sums n_k products of a weight and a value; d_v, not d_k, counts the "
        "entries of a value vector.",
        lambda ex: {
            "multiplications": ex.n_q * ex.n_k * 2 * ex.d_k,
            "additions": ex.total("additions") + ex.n_q * (ex.d_k - ex.d_v) * (ex.n_k - 1),
        },
    ),
    Mistake(
        "You used d_v for Q Kᵀ too",
        "each score is a dot product of two vectors of length d_k.",
        lambda ex: {
            "multiplications": ex.n_q * ex.n_k * 2 * ex.d_v,
            "additions": ex.total("additions") + ex.n_q * ex.n_k * (ex.d_v - ex.d_k),
        },
    ),
    Mistake(
        "You counted one addition per term",
        "a sum of m numbers takes m − 1 additions, not m.",
        lambda ex: {"additions": ex.total("additions") + ex.n_q * ex.n_k + ex.n_q + ex.n_q * ex.d_v},
    ),
    Mistake(
        "You left out the softmax's sums",
        "each row of exponentials is added up to normalise it.",
        lambda ex: {"additions": ex.total("additions") - ex.step(SOFTMAX_STEP, "additions")},
    ),
    Mistake(
        "You left out the additions of Q Kᵀ",
        "each score q·k adds up d_k products.",
        lambda ex: {"additions": ex.total("additions") - ex.step(SCORES_STEP, "additions")},
    ),
    Mistake(
        "You left out the additions of weights · V",
        "each output entry adds up n_k weighted values.",
        lambda ex: {"additions": ex.total("additions") - ex.step(WEIGHTED_SUM_STEP, "additions")},
    ),
    Mistake(
        "You counted the stable softmax's subtractions as additions",
        "this exercise leaves out the subtraction of each row's maximum.",
        lambda ex: {"additions": ex.total("additions") + ex.n_q * ex.n_k},
    ),
    Mistake(
        "You took one square root per score",
        "√d_k is the same for every score: one square root.",
        lambda ex: {"square roots": ex.n_q * ex.n_k},
    ),
    Mistake(
        "You counted the scaling as a division by 1/√d_k computed once",
        "this exercise counts one division by √d_k per score.",
        lambda ex: {"divisions": ex.total("divisions") - ex.n_q * ex.n_k + 1},
    ),
)

#: The counts every answer gives.
MAIN_COUNTS = ("multiplications", "additions")

#: What to say about a wrong count that no mistake of the table explains: nothing about the answer.
HINTS = {
    "multiplications": "Count the multiplications step by step: Q Kᵀ, the scaling, the softmax, weights · V.",
    "additions": "Count the sums step by step (Q Kᵀ, the softmax, weights · V); a sum of m numbers takes "
    "m − 1 additions.",
}


def check_operation_counts(
    answer: Mapping[str, object], n_q: int, n_k: int, d_k: int, d_v: int
) -> CheckResult:
    """Check the multiplications and additions of attention against :mod:`attnlib.counting`.

    The right totals are those of ``operation_counts(n_q, n_k, d_k, d_v, stable=False)``, counted
    by :data:`COUNTING_CONVENTION`: the scaling by ``1/√d_k`` is ``n_q·n_k`` divisions plus one
    square root and the softmax normalisation ``n_q·n_k`` divisions, so neither is a
    multiplication.

    Parameters
    ----------
    answer : mapping
        ``{"multiplications": ..., "additions": ...}``; other keys of
        :data:`attnlib.counting.OPERATIONS` (``"divisions"``, ``"exponentials"``,
        ``"square roots"``) are checked too if given.
    n_q, n_k, d_k, d_v : int
        The shapes: ``Q`` is ``(n_q, d_k)``, ``K`` is ``(n_k, d_k)``, ``V`` is ``(n_k, d_v)``.

    Returns
    -------
    CheckResult
        Passed, or for each wrong count the single mistakes of :data:`COUNT_MISTAKES` that give
        it; otherwise a hint that names no count. The right counts are never shown.
    """
    counts = operation_counts(n_q, n_k, d_k, d_v, stable=False)
    exercise = CountExercise(n_q, n_k, d_k, d_v, counts.steps)
    missing = placeholder(answer, "the answer")
    if missing is not None:
        return missing
    if not isinstance(answer, Mapping):
        return failed(
            'Give the counts as a dict: {"multiplications": ..., "additions": ...}; got '
            f"{type(answer).__name__}."
        )
    unknown = [key for key in answer if key not in OPERATIONS]
    if unknown:
        return failed(
            f"Unknown key {unknown[0]!r}: use 'multiplications' and 'additions' (also allowed: "
            f"{', '.join(repr(op) for op in OPERATIONS[2:])})."
        )
    absent = [key for key in MAIN_COUNTS if key not in answer]
    if absent:
        return failed(f"The answer has no {absent[0]!r} entry.")

    given: dict[str, int] = {}
    for op in OPERATIONS:
        if op not in answer:
            continue
        value = read_number(answer[op], f"answer[{op!r}]")
        if isinstance(value, CheckResult):
            return value
        if not value.is_integer() or value < 0:
            return failed(f"answer[{op!r}] is {value:g}; a count is a whole number, 0 or more.")
        given[op] = int(value)
    if all(given[op] == exercise.total(op) for op in given):
        listed = " and ".join(f"{got} {op}" for op, got in given.items())
        shapes = f"n_q={n_q}, n_k={n_k}, d_k={d_k}, d_v={d_v}"
        return passed(f"Correct: {listed} for {shapes}, {COUNTING_CONVENTION}.")
    return failed(_verdicts(given, exercise))


def _explanations(
    op: str, given: Mapping[str, int], exercise: CountExercise
) -> tuple[Mistake[CountExercise], ...]:
    """The mistakes that give the learner's wrong count of ``op``; those that explain both main
    counts at once are preferred."""
    got = given[op]

    def fits(wrong: object) -> bool:
        assert isinstance(wrong, Mapping)
        return wrong.get(op) == got != exercise.total(op) and all(
            wrong.get(other, given[other]) == given[other] for other in MAIN_COUNTS
        )

    found = matching(COUNT_MISTAKES, exercise, fits)
    both = [mistake for mistake in found if all(op in mistake.wrong(exercise) for op in MAIN_COUNTS)]
    return tuple(both or found)


def _verdicts(given: Mapping[str, int], exercise: CountExercise) -> str:
    """One sentence per group of counts: right, explained by the same mistakes, or not yet."""
    groups: dict[tuple[Mistake[CountExercise], ...] | None, list[str]] = {}
    for op, got in given.items():
        key = None if got == exercise.total(op) else _explanations(op, given, exercise)
        groups.setdefault(key, []).append(op)
    sentences = []
    for found, ops in groups.items():
        label = " and ".join(f"{op} ({given[op]})" if found is not None else op for op in ops)
        label = label[0].upper() + label[1:]
        if found is None:
            sentences.append(f"{label}: right.")
        elif found:
            several = ". Several mistakes give this" if len(found) > 1 else ""
            sentences.append(describe(f"{label}: not it{several}", found, exercise))
        else:
            hints = " ".join(HINTS.get(op, "Count it step by step.") for op in ops)
            sentences.append(f"{label}: not yet. {hints}")
    return " ".join(sentences)
