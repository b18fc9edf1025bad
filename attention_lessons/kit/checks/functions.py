"""Self-checks of a function the learner writes: call it on several cases, compare, name the mistake.

An exercise such as "write ``my_merge(ids, pair, new_id)``" is checked by calling the learner's
function on several cases (:class:`FunctionExercise`: the inputs, attnlib's answer, the case in
words) and comparing what it returns, read as :class:`Returns` says, with attnlib's answer. Where
they differ, each row of the exercise's table of :class:`~attention_lessons.kit.checks.mistakes.Mistake`
*makes* its mistake on the case's inputs, and the row that returns what the learner's function
returned is named. The right answer is never shown. Every other way of failing is told in one
line: no function yet, not a function, other arguments than the lesson's, an error raised, nothing
returned, the wrong kind of thing returned, an input changed in place where the lesson keeps it.

- :func:`judge_function`: all of that, for a lesson's ``check_*``; a function that passes is kept
  in the lesson's dictionary (``keep=``) under its name without ``my_``, and taken out when a later
  check of it fails, so that the lesson never runs a function whose last check failed;
- its steps, for the checks of a random function, which compare properties of its draws rather
  than an answer (lesson 18's batches): :func:`not_a_function`, :func:`call`, :func:`kept`;
- numbers and arrays: :func:`numeric_returns` reads what a function returns, one :class:`Output`
  or a tuple of them (a number, an array with its shape and dtype, a dict of arrays), compares
  them within a relative tolerance and says where they differ.

>>> cases = [FunctionExercise("my_double", "x", "number", (2,), 4, "x = 2", "2")]
>>> same = Returns("number", "double", lambda value, ex: value, differ=lambda value, ex: "it is off")
>>> judge_function(lambda x: 2 * x, cases, (), same)
✔ Correct: my_double gives attnlib's double on all 1 cases: 2.
>>> judge_function(lambda x, y: x, cases, (), same)
✘ Wrong arguments: the lesson calls my_double(x); yours is my_double(x, y) (missing a required argument: 'y').
"""

from __future__ import annotations

import copy
import inspect
import numbers
import operator
import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from attention_lessons.kit.checks.answers import placeholder
from attention_lessons.kit.checks.mistakes import Mistake, describe, named_by_every_case
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import numpy_index, shape_text

__all__ = [
    "FunctionExercise",
    "Output",
    "Returns",
    "a_type",
    "call",
    "judge_function",
    "kept",
    "listed",
    "not_a_function",
    "numeric_returns",
    "one_line",
    "wrong_arguments",
]


@dataclass(frozen=True)
class FunctionExercise:
    """One call of a learner's function: its inputs, and attnlib's answer.

    Attributes
    ----------
    name : str
        The learner's function, as the lesson names it (``my_train``).
    params : str
        Its parameters, as the lesson writes them (``text, n_merges``), for the messages.
    kind : str
        What it returns, as the check's :class:`Returns` names it (``"ids"``, ``"arrays"``).
    args : tuple
        The positional inputs; the learner's function receives deep copies.
    right : object
        attnlib's answer, in the form the check compares.
    case : str
        The inputs in words, for the messages (``'"aaaaa" with the pair (97, 97), new_id 256'``).
    label : str
        The case in a few words, for the message of a function that passes (``'"aaaaa"'``); cases
        may share a label, which the message then gives once.
    kwargs : dict
        The keyword inputs (deep copies too).
    """

    name: str
    params: str
    kind: str
    args: tuple
    right: object
    case: str
    label: str
    kwargs: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Returns:
    """What a learner's function returns: how a check reads it, compares it and says how it differs.

    Attributes
    ----------
    kind : str
        A short name (``"ids"``), :attr:`FunctionExercise.kind`.
    what : str
        What the function returns, in words (``"token ids"``), for the messages.
    read : callable
        ``read(returned, exercise)``: the returned value in the form compared, or a failed
        :class:`CheckResult` saying what is wrong with its kind (a dict where a list is due).
    agree : callable
        ``agree(learner, answer)``: whether the learner's value (read) is ``answer``, the right
        one or a mistake's; ``==`` unless a tolerance is needed.
    differ : callable
        ``differ(learner, exercise)``: where the learner's value differs from ``exercise.right``,
        in words that show none of the right answer.
    """

    kind: str
    what: str
    read: Callable[[object, FunctionExercise], object]
    agree: Callable[[object, object], bool] = operator.eq
    differ: Callable[[object, FunctionExercise], str] = lambda learner, ex: "it differs from attnlib's"


# --- words --------------------------------------------------------------------------------------------


def one_line(text: object, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters (an error's message, for a check's line)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def a_type(value: object) -> str:
    """The type of ``value`` with its article: ``a list``, ``an int``.

    >>> a_type([]), a_type(3), a_type(np.zeros(2))
    ('a list', 'an int', 'an ndarray')
    """
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' or name == 'ndarray' else 'a'} {name}"


def listed(phrases: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _no_hint(error: Exception) -> str:
    return ""


# --- calling the learner's function -------------------------------------------------------------------


def not_a_function(answer: object, name: str, params: str) -> CheckResult | None:
    """A failed result when ``answer`` is no function yet (``None``, ``...``) or no function at all."""
    missing = placeholder(answer, name)
    if missing is None and not callable(answer):
        return failed(f"Not a function: {name} is {a_type(answer)}; define it with `def {name}({params}):`.")
    return missing


def wrong_arguments(call: Callable, args: Sequence, kwargs: Mapping[str, object] | None = None) -> str | None:
    """Why ``call`` cannot take these arguments, as its signature and the reason (``(x, y) (missing a
    required argument: 'y')``), or ``None``: also where its signature cannot be read (a builtin),
    since calling it will tell.

    >>> def my_softmax(x, axis):
    ...     pass
    >>> wrong_arguments(my_softmax, ([1.0],))
    "(x, axis) (missing a required argument: 'axis')"
    >>> wrong_arguments(my_softmax, ([1.0],), {"axis": -1}) is None
    True
    """
    try:
        signature = inspect.signature(call)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*args, **(kwargs or {}))
    except TypeError as error:
        return f"{signature} ({one_line(error)})"
    return None


def _wrong_arguments(answer: Callable, ex: FunctionExercise) -> CheckResult | None:
    """A failed result when ``answer`` cannot be called as the lesson calls it, else ``None``."""
    wrong = wrong_arguments(answer, ex.args, ex.kwargs)
    if wrong is None:
        return None
    return failed(f"Wrong arguments: the lesson calls {ex.name}({ex.params}); yours is {ex.name}{wrong}.")


def _changed(given: object, kept_copy: object) -> bool:
    """Whether an input (an array, or a dict or sequence of them) was changed by the learner's function."""
    if isinstance(kept_copy, np.ndarray):
        return not (
            isinstance(given, np.ndarray)
            and given.shape == kept_copy.shape
            and np.array_equal(given, kept_copy, equal_nan=kept_copy.dtype.kind in "fc")
        )
    if isinstance(kept_copy, Mapping):
        return (
            not isinstance(given, Mapping)
            or given.keys() != kept_copy.keys()
            or any(_changed(given[k], v) for k, v in kept_copy.items())
        )
    return False


def _in_place(args: tuple, kwargs: Mapping[str, object], ex: FunctionExercise) -> str | None:
    """The name of the first input the learner's function changed, or ``None``."""
    names = [p.strip() for p in ex.params.split(",")]
    for i, value in enumerate(ex.args):
        if _changed(args[i], value):
            return names[i] if i < len(names) else f"argument {i + 1}"
    return next((k for k, value in ex.kwargs.items() if _changed(kwargs[k], value)), None)


def call(
    answer: Callable,
    ex: FunctionExercise,
    returns: Returns,
    *,
    hint: Callable[[Exception], str] = _no_hint,
    in_place: str | None = None,
) -> object:
    """What the learner's function returns on this case, read as ``returns`` says, or a failed result.

    The function gets deep copies of the inputs, and runs with NumPy's warnings silenced (an
    overflow is judged by what it returns, not printed). It fails, in one line, when it cannot be
    called with the lesson's arguments, raises (its error's message, then ``hint(error)``, a
    lesson's advice for the errors its learners meet), returns ``None`` or the wrong kind of thing,
    or, where ``in_place`` gives the advice, changes an input in place.
    """
    wrong_arguments = _wrong_arguments(answer, ex)
    if wrong_arguments is not None:
        return wrong_arguments
    args, kwargs = copy.deepcopy(ex.args), copy.deepcopy(dict(ex.kwargs))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            returned = answer(*args, **kwargs)
    except Exception as error:  # a learner's function may raise anything; the message says what
        return failed(
            f"Your {ex.name} raised {type(error).__name__} on {ex.case}: {one_line(error)}{hint(error)}."
        )
    if returned is None:
        return failed(
            f"Nothing returned: {ex.name} returns None; end it with `return` and the {returns.what}."
        )
    changed = _in_place(args, kwargs, ex) if in_place else None
    if changed is not None:
        return failed(f"Your {ex.name} changed {changed} in place on {ex.case}: {in_place}")
    return returns.read(returned, ex)


def _verdict(
    answer: Callable,
    cases: Sequence[FunctionExercise],
    mistakes: Sequence[Mistake[FunctionExercise]],
    returns: Returns,
    hint: Callable[[Exception], str],
    in_place: str | None,
) -> CheckResult | None:
    """``None`` when the learner's function gives attnlib's answer on every case, else why not.

    The first case it fails decides the message. Where its answer there is a mistake's, the other
    cases narrow the mistakes down: of several rows that give the same there, those that also give
    what the function returns on every other case are named.
    """
    outcomes = [call(answer, ex, returns, hint=hint, in_place=in_place) for ex in cases]
    failing = next(
        (
            k
            for k, got in enumerate(outcomes)
            if isinstance(got, CheckResult) or not returns.agree(got, cases[k].right)
        ),
        None,
    )
    if failing is None:
        return None
    ex, learner = cases[failing], outcomes[failing]
    if isinstance(learner, CheckResult):
        return learner
    found = named_by_every_case(mistakes, cases, outcomes, failing, lambda a, b, _: returns.agree(a, b))
    if not found:
        return failed(f"Not yet, on {ex.case}: {returns.differ(learner, ex)}.")
    return failed(f"{describe('', found, ex)} Seen on {ex.case}.")


def kept(
    answer: object, name: str, result: CheckResult, keep: MutableMapping[str, Callable] | None
) -> CheckResult:
    """``result``, after keeping ``answer`` in ``keep`` under ``name`` without ``my_`` when it passed,
    or taking that name out when it failed (the learner has changed the function since)."""
    if keep is not None:
        part = name.removeprefix("my_")
        if result.passed:
            keep[part] = answer  # type: ignore[assignment]
        else:
            keep.pop(part, None)
    return result


def judge_function(
    answer: object,
    cases: Sequence[FunctionExercise],
    mistakes: Sequence[Mistake[FunctionExercise]],
    returns: Returns,
    *,
    keep: MutableMapping[str, Callable] | None = None,
    hint: Callable[[Exception], str] = _no_hint,
    in_place: str | None = None,
) -> CheckResult:
    """Call the learner's function on each case and compare what it returns with ``case.right``.

    Parameters
    ----------
    answer : callable
        The learner's function.
    cases : sequence of FunctionExercise
        The inputs and attnlib's answers, all of the same function.
    mistakes : sequence of Mistake
        The table whose rows make the likely mistakes on a case.
    returns : Returns
        How what the function returns is read, compared and told apart.
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`kept`).
    hint : callable, optional
        ``hint(error)``: advice appended to the message of an error the function raised (``""``).
    in_place : str, optional
        The advice for a function that changes one of its inputs in place, where the lesson keeps
        them; by default a function may (it receives copies).

    Returns
    -------
    CheckResult
        Passed when the function returns attnlib's answer on every case (as ``returns.agree``
        compares); otherwise, for the first case that fails: the arguments it does not take, the
        error it raised, what is wrong with the kind of thing it returned, the mistake of the
        table that returns the same, or where its answer differs.
    """
    first = cases[0]
    result = not_a_function(answer, first.name, first.params)
    if result is None:
        result = _verdict(answer, cases, mistakes, returns, hint, in_place)  # type: ignore[arg-type]
    if result is None:
        labels = listed(list(dict.fromkeys(ex.label for ex in cases)))
        result = passed(
            f"Correct: {first.name} gives attnlib's {returns.what} on all {len(cases)} cases: {labels}."
        )
    return kept(answer, first.name, result, keep)


# --- numbers and arrays ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Output:
    """One of the things a learner's function returns, as :func:`numeric_returns` reads it.

    Attributes
    ----------
    name : str
        Its name in the lesson (``"d_logits"``).
    like : str
        What has its shape, with the verb (``"the logits have"``), for the message of a wrong shape.
    kind : str
        ``"floats"`` (an array of real numbers), ``"ints"`` (an array of integers), ``"mask"`` (an
        array of True/False, or of 0 and 1), ``"arrays"`` (a dict of float arrays, its keys those
        of the right answer), ``"number"`` (one real number) or ``"truth"`` (True or False).
    """

    name: str
    like: str = ""
    kind: str = "floats"


def _read_array(value: object, out: Output, ex: FunctionExercise) -> np.ndarray | CheckResult:
    if isinstance(value, (str, bytes)) or value is None:
        return failed(
            f"Not an array: {ex.name} returned {a_type(value)} as {out.name}; return a NumPy array."
        )
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return failed(f"Not an array: {ex.name}'s {out.name} is ragged or not made of numbers.")
    if out.kind == "mask" and (
        array.dtype.kind == "b" or (array.dtype.kind in "iuf" and np.isin(array, (0, 1)).all())
    ):
        return array.astype(bool)
    if out.kind == "ints" and array.dtype.kind not in "iu":
        return failed(
            f"Not integers: {ex.name} returned {out.name} of dtype {array.dtype}; it must be an array of "
            "integers."
        )
    if array.dtype.kind == "b" or array.dtype.kind not in "iuf":
        expected = "True/False (or 0 and 1)" if out.kind == "mask" else "real numbers"
        return failed(f"Not {expected}: {ex.name} returned {out.name} of dtype {array.dtype}.")
    return array if out.kind == "ints" else array.astype(np.float64)


def _read_number(value: object, out: Output, ex: FunctionExercise) -> float | CheckResult:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray)):
        return failed(f"Not a number: {ex.name} returned {a_type(value)} as {out.name}; return one number.")
    if np.ndim(value) and np.size(value) != 1:
        return failed(
            f"Not one number: {ex.name} returned {out.name} of shape {shape_text(np.shape(value))}; "
            "return one number (a mean or a sum is one)."
        )
    return float(np.asarray(value, dtype=np.float64).reshape(()))


def _read_truth(value: object, out: Output, ex: FunctionExercise) -> bool | CheckResult:
    if not isinstance(value, (bool, np.bool_)):
        return failed(f"Not True or False: {ex.name} returned {a_type(value)}; return a bool.")
    return bool(value)


def _read_arrays(value: object, out: Output, ex: FunctionExercise) -> dict[str, np.ndarray] | CheckResult:
    if not isinstance(value, Mapping):
        return failed(
            f"Not a dict: {ex.name} returned {a_type(value)} as {out.name}; return a dict of arrays."
        )
    read = {}
    for key, array in value.items():
        one = _read_array(array, Output(f"{out.name}[{key!r}]"), ex)
        if isinstance(one, CheckResult):
            return one
        read[key] = one
    return read


READ = {
    "floats": _read_array,
    "ints": _read_array,
    "mask": _read_array,
    "number": _read_number,
    "truth": _read_truth,
    "arrays": _read_arrays,
}


def _read_outputs(returned: object, ex: FunctionExercise, outputs: Sequence[Output]) -> object:
    """The outputs read, a tuple (one output: itself), or a failed result."""
    if len(outputs) == 1:
        return READ[outputs[0].kind](returned, outputs[0], ex)
    if isinstance(returned, (tuple, list)) and len(returned) == len(outputs):
        values = returned
    else:
        names = ", ".join(out.name for out in outputs)
        got = f"{len(returned)} things" if isinstance(returned, (tuple, list)) else a_type(returned)
        return failed(f"Return ({names}): {ex.name} returned {got}; end it with `return {names}`.")
    read = []
    for value, out in zip(values, outputs, strict=True):
        one = READ[out.kind](value, out, ex)
        if isinstance(one, CheckResult):
            return one
        read.append(one)
    return tuple(read)


def _close(a: object, b: object, rtol: float) -> bool:
    """Whether ``a`` is ``b`` within ``rtol`` at the scale of ``b``'s largest entry; a ``b`` that is not
    finite (a mistake's overflow) is matched by any ``a`` that is not finite either."""
    if isinstance(b, Mapping):
        return isinstance(a, Mapping) and a.keys() == b.keys() and all(_close(a[k], b[k], rtol) for k in b)
    if isinstance(b, bool) or (isinstance(b, np.ndarray) and b.dtype == bool):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
    a_arr, b_arr = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape:
        return False
    if not np.isfinite(b_arr).all():
        return not np.isfinite(a_arr).all()
    scale = float(np.max(np.abs(b_arr))) if b_arr.size else 0.0
    return bool(np.isfinite(a_arr).all() and np.allclose(a_arr, b_arr, rtol=rtol, atol=rtol * scale))


def _differ_one(a: object, b: object, out: Output, ex: FunctionExercise, rtol: float) -> str:
    """How the learner's ``a`` differs from the right ``b``, for one output (showing none of ``b``)."""
    if isinstance(b, Mapping):
        missing, extra = sorted(set(b) - set(a)), sorted(set(a) - set(b))  # type: ignore[arg-type]
        if missing or extra:
            return f"{ex.name}'s {out.name} has the keys {sorted(a)}, not those given"  # type: ignore[arg-type]
        key = next(k for k in b if not _close(a[k], b[k], rtol))  # type: ignore[index]
        return _differ_one(a[key], b[key], Output(f"{out.name}[{key!r}]", "the array given has"), ex, rtol)  # type: ignore[index]
    if isinstance(b, bool):
        return f"{ex.name} returned {a}"
    a_arr, b_arr = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape:
        got, right = shape_text(a_arr.shape), shape_text(b_arr.shape)
        return f"{ex.name} returned {out.name} of shape {got}, but {out.like} shape {right}"
    if not np.isfinite(a_arr).all():
        return f"{ex.name}'s {out.name} holds NaN or an infinity, where attnlib's is finite"
    if not a_arr.ndim:
        return f"{ex.name}'s {out.name} is too {'high' if a_arr > b_arr else 'low'}"
    worst = np.unravel_index(int(np.argmax(np.abs(a_arr - b_arr))), a_arr.shape)
    return f"{ex.name}'s {out.name} differs from attnlib's, most at numpy index {numpy_index(worst)}"


def numeric_returns(what: str, outputs: Sequence[Output], *, rtol: float = 1e-6) -> Returns:
    """A :class:`Returns` for a function that returns numbers: one :class:`Output`, or a tuple of them.

    The learner's outputs are read (a tuple of the right length, each of the right kind and dtype)
    and compared with the right ones within ``rtol`` of each one's largest entry; a wrong shape is
    told against what has the right shape (``my_cross_entropy returned d_logits of shape (2, 5),
    but the logits have shape (2, 3, 5)``), a NaN or infinity as such, else where it is most off.

    >>> outputs = [Output("loss", kind="number"), Output("d_x", "x has")]
    >>> returns = numeric_returns("loss and gradient", outputs)
    >>> ex = FunctionExercise("my_f", "x", "numbers", (np.ones(3),), (1.0, np.ones(3)), "three ones", "ones")
    >>> returns.read((1.0, np.ones(2)), ex)[1].shape, returns.differ((1.0, np.ones(2)), ex)
    ((2,), 'my_f returned d_x of shape (2,), but x has shape (3,)')
    """

    def read(returned: object, ex: FunctionExercise) -> object:
        return _read_outputs(returned, ex, outputs)

    def agree(learner: object, answer: object) -> bool:
        return all(
            _close(a, b, rtol) for a, b in zip(_tuple(learner, outputs), _tuple(answer, outputs), strict=True)
        )

    def differ(learner: object, ex: FunctionExercise) -> str:
        pairs = zip(_tuple(learner, outputs), _tuple(ex.right, outputs), outputs, strict=True)
        return next(_differ_one(a, b, out, ex, rtol) for a, b, out in pairs if not _close(a, b, rtol))

    return Returns("numbers", what, read, agree, differ)


def _tuple(value: object, outputs: Sequence[Output]) -> tuple:
    """The outputs as a tuple (a function with one output returns it alone)."""
    return (value,) if len(outputs) == 1 else value  # type: ignore[return-value]
