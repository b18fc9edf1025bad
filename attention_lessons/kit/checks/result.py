"""The verdict of a self-check: passed or not, and one line for the learner."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CheckResult", "failed", "passed"]

PASS_MARK, FAIL_MARK = "✔", "✘"
MARKDOWN_SPECIAL = "\\`*_[]<>#|"


@dataclass(frozen=True, repr=False)
class CheckResult:
    """The verdict of a check: passed or not, and a one-line message for the learner.

    ``str()`` and ``repr()`` give the same friendly line (``✔ Correct: ...`` or ``✘ ...``), with
    no memory address, so a cell that ends with a check shows the same text on every run; in
    Jupyter the verdict is rendered as Markdown. ``bool(result)`` is ``result.passed``.

    Attributes
    ----------
    passed : bool
        Whether the answer is right.
    message : str
        What is right, or which mistake the answer most likely contains and how to fix it.
    """

    passed: bool
    message: str

    def __post_init__(self) -> None:
        if not isinstance(self.passed, (bool, np.bool_)):
            raise TypeError(f"passed must be True or False, got {self.passed!r}")
        if not isinstance(self.message, str):
            raise TypeError(f"message must be a string, got {self.message!r}")
        if "\n" in self.message:
            raise ValueError("message must be a single line")
        object.__setattr__(self, "passed", bool(self.passed))

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return f"{PASS_MARK if self.passed else FAIL_MARK} {self.message}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        escaped = "".join(f"\\{c}" if c in MARKDOWN_SPECIAL else c for c in self.message)
        return f"**{PASS_MARK if self.passed else FAIL_MARK}** {escaped}"


def passed(message: str) -> CheckResult:
    """A passed verdict."""
    return CheckResult(True, message)


def failed(message: str) -> CheckResult:
    """A failed verdict; the message starts with a capital even if it starts with a name ("the mask")."""
    return CheckResult(False, message[:1].upper() + message[1:])
