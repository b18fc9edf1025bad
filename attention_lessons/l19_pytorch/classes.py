"""The door of lesson 19's self-checks that take a class (:mod:`.checks`, :mod:`.llama_checks`): is
the learner's answer an ``nn.Module`` class? It says why not in one line, or gives ``None``; whether
the class takes the lesson's arguments, the kit's
:func:`~attention_lessons.kit.checks.functions.wrong_arguments` says.

>>> from torch import nn
>>> class MyNorm(nn.Module):
...     def __init__(self, d_model, eps):
...         super().__init__()
>>> class_problem(MyNorm, "MyNorm", "d_model, eps", "x") is None
True
>>> print(class_problem(MyNorm(4, 1e-5), "MyNorm", "d_model, eps", "x").message[:60])
Pass the class itself, not a model: MyNorm is a MyNorm alrea
"""

from __future__ import annotations

from torch import nn

from attention_lessons.kit.checks.answers import placeholder
from attention_lessons.kit.checks.functions import a_type
from attention_lessons.kit.checks.result import CheckResult, failed

__all__ = ["class_problem"]


def class_problem(answer: object, name: str, init: str, forward: str) -> CheckResult | None:
    """A failed result when ``answer`` is no answer yet, a module already made, not a class, or not an
    ``nn.Module``; ``None`` when it is an ``nn.Module`` class (lesson 19 · 2. The model as modules).

    Parameters
    ----------
    answer : object
        What the learner passed to the check.
    name : str
        The class's name in the lesson (``MyAttention``).
    init, forward : str
        The parameters of its ``__init__`` and its ``forward``, after ``self`` (``d_model, n_heads``).
    """
    missing = placeholder(answer, name)
    if missing is not None:
        return missing
    if isinstance(answer, nn.Module):
        return failed(
            f"Pass the class itself, not a model: {name} is a {type(answer).__name__} already made; the "
            f"check makes its own {name}({init})."
        )
    if not isinstance(answer, type):
        return failed(
            f"Not a class: {name} is {a_type(answer)}; define it with `class {name}(nn.Module):`, its "
            f"__init__(self, {init}) and forward(self, {forward})."
        )
    if not issubclass(answer, nn.Module):
        return failed(
            f"Not an nn.Module: {name} is a class but not a subclass of nn.Module; write "
            f"`class {name}(nn.Module):` and call super().__init__() first in __init__."
        )
    return None
