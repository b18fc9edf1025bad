"""What the test cells of a graded assignment call (``tools/grading/``, nbgrader).

An assignment asks for a function (``attention_by_hand(Q, K, V)``, ...); its test cells check
what the function returns with the lesson's self-checks, first on the lesson's inputs (visible to
the student), then on fresh random inputs with attnlib's functions switched off (hidden, nbgrader's
``### BEGIN HIDDEN TESTS``). A check's verdict is true when the answer is right and carries the
message that names the mistake, so a test is ``assert result, result.message``.

Switched off means: while the student's function runs, every function defined in attnlib raises
:class:`AttnlibCalledError`, wherever the student can reach it (attnlib's modules, the course's
modules that imported one, and the student's own namespace, ``globals()`` of the notebook). A
question that asks a student to compute something gives no credit to an answer that asks attnlib
for it; the checks, which do use attnlib, run after the function, with attnlib back on.

>>> import numpy as np, attnlib
>>> def by_hand(x):
...     return np.exp(x) / np.exp(x).sum()
>>> call_without_attnlib(by_hand, {}, np.zeros(2))
array([0.5, 0.5])
>>> try:
...     call_without_attnlib(lambda x: attnlib.softmax(x), {}, np.zeros(2))
... except AttnlibCalledError as error:
...     print(str(error).split(":")[0])
your function called attnlib.core.softmax
>>> attnlib.softmax(np.zeros(2))  # back on
array([0.5, 0.5])
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from types import FunctionType
from typing import Any

import numpy as np

from attention_lessons.kit.checks.result import CheckResult

__all__ = ["AttnlibCalledError", "attnlib_switched_off", "call_without_attnlib", "on_new_inputs", "require"]

#: How many fresh random inputs a hidden test tries.
TRIES = 3


class AttnlibCalledError(RuntimeError):
    """Raised by an attnlib function called while attnlib is switched off."""


def _attnlib_functions() -> dict[int, FunctionType]:
    """Every function defined in a loaded attnlib module, by ``id``."""
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "attnlib" or name.startswith("attnlib.")):
            continue
        for value in vars(module).values():
            if isinstance(value, FunctionType) and value.__module__.startswith("attnlib"):
                found[id(value)] = value
    return found


def _refusing(function: FunctionType) -> Callable[..., Any]:
    """A stand-in for ``function`` that raises :class:`AttnlibCalledError` naming it."""

    def refuse(*args: object, **kwargs: object) -> Any:
        raise AttnlibCalledError(
            f"your function called {function.__module__}.{function.__qualname__}: this question asks you "
            "to compute it yourself (numpy is fine), so it gets no credit"
        )

    return refuse


@contextmanager
def attnlib_switched_off(namespace: MutableMapping[str, object]) -> Iterator[None]:
    """Within the block, every attnlib function raises :class:`AttnlibCalledError`.

    Parameters
    ----------
    namespace : mutable mapping
        The student's namespace (``globals()`` of the notebook): a name bound there to an attnlib
        function (``from attnlib import softmax``) is switched off too.
    """
    functions = _attnlib_functions()
    holders = [namespace] + [
        vars(module)
        for name, module in list(sys.modules.items())
        if module is not None and name.split(".")[0] in ("attnlib", "attention_lessons")
    ]
    replaced: list[tuple[MutableMapping[str, object], str, object]] = []
    try:
        for holder in holders:
            for name, value in list(holder.items()):
                if isinstance(value, FunctionType) and id(value) in functions:
                    holder[name] = _refusing(value)
                    replaced.append((holder, name, value))
        yield
    finally:
        for holder, name, value in reversed(replaced):
            holder[name] = value


def call_without_attnlib(
    function: Callable[..., Any], namespace: MutableMapping[str, object], *args: object
) -> Any:
    """``function(*args)`` with attnlib switched off (:func:`attnlib_switched_off`)."""
    with attnlib_switched_off(namespace):
        return function(*args)


def require(result: CheckResult, where: str = "") -> None:
    """Fail (``AssertionError``) with the check's message, after ``where``, when ``result`` is false.

    The message names the mistake the answer most likely contains, in the self-check's words; it
    never shows the right answer.
    """
    if not isinstance(result, CheckResult):
        raise TypeError(f"require takes a self-check's verdict (a CheckResult), got {result!r}")
    if not result:
        raise AssertionError(f"{where}{result.message}")


def on_new_inputs(
    function: Callable[..., Any],
    namespace: MutableMapping[str, object],
    inputs: Callable[[np.random.Generator], tuple[object, ...]],
    check: Callable[..., CheckResult],
    tries: int = TRIES,
) -> None:
    """Run the student's ``function`` on ``tries`` fresh random inputs with attnlib switched off.

    Parameters
    ----------
    function : callable
        The student's function.
    namespace : mutable mapping
        The student's namespace, ``globals()``.
    inputs : callable
        ``inputs(rng)`` gives a fresh tuple of arguments for ``function``.
    check : callable
        ``check(answer, *arguments)`` gives the self-check's verdict on what ``function`` returned.
    tries : int
        How many inputs.

    Raises
    ------
    AssertionError
        On the first input whose answer is wrong, with the check's message and the inputs' shapes.
    AttnlibCalledError
        The function called attnlib.
    """
    rng = np.random.default_rng()  # fresh inputs, other than the ones the student saw
    for _ in range(tries):
        arguments = inputs(rng)
        answer = call_without_attnlib(function, namespace, *arguments)
        shapes = ", ".join(str(np.shape(argument)) for argument in arguments)
        require(check(answer, *arguments), f"{function.__name__} on new inputs of shapes {shapes}: ")
