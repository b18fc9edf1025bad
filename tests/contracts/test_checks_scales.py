"""Every numeric self-check, at small and large right answers: 0 and each named mistake are refused.

The rule (:func:`attention_lessons.kit.checks.values.number_verdict`): an answer passes when it differs from
the right one by less than one unit of the last place asked, ``10**-decimals``, or of the right
answer's second significant digit when the asked places would keep fewer than two of them. This
test does not trust the checks' own arithmetic: it spies on what each check compares (the right
answer, the decimals asked and the wrong answers of its table of mistakes), then calls the check
with the right answer rounded as asked (it must pass), with 0 and with each named mistake (each
must be refused unless it lies within that unit of the right answer), at several scales of the
exercise's inputs.

The checks are found in the lessons' modules (``attention_lessons/l*/checks.py``, ``grouping_checks.py``) and
the kit (``attention_lessons/kit/checks``): every function named ``check_*``. A new check needs a row in
:data:`CASES` (its inputs at several scales) or in :data:`NOT_NUMERIC` (why no tolerance is
involved); a check in neither fails the test that names it.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from conftest import declared

import attention_lessons
import attention_lessons.kit.checks as kit_checks
from attention_lessons.kit.checks import values as values_module
from attention_lessons.kit.checks.mistakes import matching as original_matching

ROOT = Path(attention_lessons.__file__).parent


def _check_modules() -> list[object]:
    names = [f"attention_lessons.kit.checks.{m.name}" for m in pkgutil.iter_modules(kit_checks.__path__)]
    names += ["attention_lessons.kit.checks"]
    for lesson in sorted(ROOT.glob("l[0-9]*")):
        names += [
            f"attention_lessons.{lesson.name}.{path.stem}" for path in sorted(lesson.glob("*checks.py"))
        ]
    return [importlib.import_module(name) for name in names]


def _all_checks() -> dict[str, Callable[..., object]]:
    """Every function named ``check_*`` of those modules, by ``module.name`` of its definition."""
    found: dict[str, Callable[..., object]] = {}
    for module in _check_modules():
        for name, function in vars(module).items():
            if name.startswith("check_") and inspect.isfunction(function):
                found[f"{function.__module__}.{name}"] = function
    return found


# --- the exercises at several scales -------------------------------------------------------------------

RNG = np.random.default_rng(30)
Q = RNG.integers(-2, 3, size=(3, 4)).astype(float)
K = RNG.integers(-2, 3, size=(4, 4)).astype(float)
V = RNG.integers(-3, 4, size=(4, 2)).astype(float)
SMALL, LARGE = 1e-5, 1e5


#: ``module.check`` → the exercise's inputs ``(args, kwargs)`` after the answer, small to large right
#: answers: the kit's here, each lesson's as its tests declare them (``CHECK_CASES`` in
#: ``tests/lessons/lNN_slug/declared.py``, keyed by ``module.check`` of the lesson's folder).
CASES: dict[str, list[tuple[tuple[object, ...], dict[str, object]]]] = {
    "attention_lessons.kit.checks.values.check_value": [
        ((right,), {"decimals": d, "mistakes": {"half": right / 2, "double": 2 * right, "squared": right**2}})
        for right in (3e-7, 0.0047, 0.031, 0.7310585786, 12.5, 937.5, 9.5e6)
        for d in (0, 2, 4)
    ],
    "attention_lessons.kit.checks.scale.check_scale": [
        ((d_k,), {"n_k": 3, "d_v": 5, "d_model": 4 * d_k, "decimals": d})
        for d_k in (1, 2, 64, 10**6, 10**12)
        for d in (2, 4)
    ],
    "attention_lessons.kit.checks.attention.check_attention": [
        ((Q * q, K, V * v), {"what": what, "causal": causal, "decimals": 2})
        for q in (0.1, 1.0)
        for v in (SMALL, 1.0, LARGE)
        for what in ("scores", "scaled_scores", "weights", "output")
        for causal in (False, True)
    ],
    "attention_lessons.kit.checks.heads.check_head_scale": [
        ((d_model, heads), {"decimals": d})
        for d_model, heads in ((8, 2), (512, 8), (10**8, 2))
        for d in (2, 4)
    ],
    **{
        f"attention_lessons.{folder}.{name}": cases
        for folder, declared_cases in declared("CHECK_CASES").items()
        for name, cases in declared_cases.items()
    },
}

#: Checks that compare no number with a tolerance, and why: each is exact, so 0 or a mistake passes
#: only where it *is* the right answer. The kit's here, each lesson's in its declared.py.
NOT_NUMERIC = {
    "attention_lessons.kit.checks.values.check_shape": "a shape: whole numbers compared exactly",
    **{
        f"attention_lessons.{folder}.{name}": why
        for folder, declared_reasons in declared("NOT_NUMERIC").items()
        for name, why in declared_reasons.items()
    },
}


#: Checks whose right answers are never small although not whole numbers, and why.
NO_SMALL_ANSWER = {
    f"attention_lessons.{folder}.{name}": why
    for folder, declared_reasons in declared("NO_SMALL_ANSWER").items()
    for name, why in declared_reasons.items()
}


# --- spying on what a check compares --------------------------------------------------------------------


@dataclass
class Seen:
    """What one call of a check compared: the right answer, the decimals asked, the wrong answers."""

    right: object = None
    decimals: int | None = None
    wrongs: list[object] = field(default_factory=list)
    array: bool = False


@contextlib.contextmanager
def _spy(seen: Seen) -> Iterator[None]:
    """Patch ``number_verdict``, ``entry_unit`` and ``matching`` wherever a check module imported them."""
    verdict, unit = values_module.number_verdict, values_module.entry_unit

    def spy_verdict(answer, right, *, decimals, name, mistakes):
        seen.right, seen.decimals = right, decimals
        seen.wrongs = [wrong for _, wrong in mistakes]
        return verdict(answer, right, decimals=decimals, name=name, mistakes=mistakes)

    def spy_unit(right, decimals):
        seen.right, seen.decimals, seen.array = np.asarray(right, dtype=float), decimals, True
        return unit(right, decimals)

    def spy_matching(table, exercise, fits):
        for mistake in table:
            with np.errstate(all="ignore"):
                wrong = mistake.wrong(exercise)
                if isinstance(wrong, Mapping) and hasattr(exercise, "stage"):  # check_attention's stages
                    wrong = exercise.stage(wrong)
            if wrong is not None:
                seen.wrongs.append(wrong)
        return original_matching(table, exercise, fits)

    patched = []
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("attention_lessons."):
            continue
        for name, original, spy in (
            ("number_verdict", verdict, spy_verdict),
            ("entry_unit", unit, spy_unit),
            ("matching", original_matching, spy_matching),
        ):
            if getattr(module, name, None) is original:
                patched.append((module, name, original))
                setattr(module, name, spy)
    try:
        yield
    finally:
        for module, name, original in patched:
            setattr(module, name, original)


def _seen(check, args, kwargs) -> Seen:
    """What ``check`` compares for these inputs: call it with an answer far from any, under the spy."""
    seen = Seen()
    with _spy(seen):
        check(np.float64(-7.77e300), *args, **kwargs)  # a number: number checks reach their mistakes
        if seen.array:
            far = np.asarray(seen.right) + 1e9  # the right shape, far away: array checks reach their mistakes
            seen.wrongs = []
            check(far, *args, **kwargs)
    return seen


def rounding(right: float, decimals: int) -> tuple[float, int]:
    """The unit a learner's rounding may be off by, and the places to round to, written out again
    independently of the kit: ``decimals`` places, at least two significant digits."""
    places = decimals
    if right != 0:
        first = int(f"{abs(right):.16e}".split("e")[1])
        places = max(decimals, 2 - 1 - first)
    return 10.0**-places, places


def _far(a: object, b: object, unit: float) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape != b.shape or not bool(np.all(np.abs(a - b) < unit * (1 + 1e-9)))


# --- the tests -----------------------------------------------------------------------------------------


def test_every_check_of_every_lesson_has_a_case():
    checks = _all_checks()
    missing = sorted(set(checks) - set(CASES) - set(NOT_NUMERIC))
    assert not missing, f"checks with no case in CASES or NOT_NUMERIC of {__name__}: {missing}"
    stale = sorted((set(CASES) | set(NOT_NUMERIC)) - set(checks))
    assert not stale, f"cases of checks that no longer exist: {stale}"
    assert len(CASES) >= 14


@pytest.mark.parametrize("qualname", sorted(CASES))
def test_zero_and_each_mistake_are_refused_at_every_scale(qualname):
    check = _all_checks()[qualname]
    sizes = []
    whole = True  # every right answer is made of whole numbers (counts, sizes): none is small
    tried = 0
    for args, kwargs in CASES[qualname]:
        seen = _seen(check, args, kwargs)
        assert seen.decimals is not None, f"{qualname}{args} compares no number: move it to NOT_NUMERIC"
        right = np.asarray(seen.right, dtype=float)
        size = float(np.max(np.abs(right))) if right.size else 0.0
        sizes.append(size)
        whole = whole and bool(np.all(right == np.round(right)))
        unit, places = rounding(size, int(seen.decimals))
        where = f"{qualname} with {args}, {kwargs}"

        # the right answer rounded as asked (to more places only where the asked ones keep < 2 digits)
        rounded = np.round(right, places) if right.ndim else round(float(right), places)
        assert check(rounded, *args, **kwargs).passed, f"{where}: the right answer rounded to {places} places"

        zero = np.zeros_like(right) if right.ndim else 0.0
        verdict = check(zero, *args, **kwargs)
        assert not verdict.passed or not _far(zero, right, unit), f"{where}: 0 passes: {verdict}"
        assert seen.wrongs, f"{where}: no mistake of its table applies"
        for wrong in seen.wrongs:
            verdict = check(wrong, *args, **kwargs)
            tried += 1
            if verdict.passed:
                assert not _far(wrong, right, unit), f"{where}: the mistake {wrong!r} passes: {verdict}"
    assert tried
    nonzero = [s for s in sizes if s > 0]
    assert min(nonzero) < 0.05 or whole or qualname in NO_SMALL_ANSWER, (
        f"{qualname}: no case has a right answer below 0.05 ({sizes}); add one to CHECK_CASES, or say "
        "why there is none in NO_SMALL_ANSWER of the lesson's declared.py"
    )
    assert max(sizes) >= 0.5, sizes


def test_whole_numbers_off_by_one_and_the_asked_rounding_of_a_small_number():
    """Before: ``decimals=0`` accepted 11 for 12 (a difference of 1 was allowed), and 0.00 for 0.0047."""
    from attention_lessons.kit.checks import check_value

    assert not check_value(11, 12, decimals=0).passed
    assert check_value(12, 12, decimals=0).passed
    assert check_value(0.0047, 0.0047213, decimals=2).passed
    assert check_value(0.00472, 0.0047213, decimals=2).passed
    for wrong in (0, 0.0, 0.01, 0.0024, 0.0094):
        assert not check_value(
            wrong, 0.0047213, decimals=2, mistakes={"half": 0.00236, "double": 0.00944}
        ).passed
    assert check_value(0.73, 0.7310585786).passed  # unchanged where 2 decimals keep 2 digits
    assert check_value(0.74, 0.7310585786).passed  # a difference under one unit of the last place
    assert not check_value(0.72, 0.7310585786).passed
