"""What lesson 18's training loop runs: the learner's parts that passed their checks, attnlib's for the rest.

Each self-check of :mod:`~attention_lessons.l18_training_gpt.checks` keeps a passing function in the
lesson's dictionary ``yours`` under its name without ``my_``; the loop of section 5 runs
``{**reference_parts(), **yours}``, so that a student copy with a part still unwritten trains too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from attnlib import optim
from attnlib.decoder.gpt import sample_batch
from attnlib.training import cross_entropy

__all__ = ["parts_in_use", "reference_parts"]


def reference_parts() -> dict[str, Callable]:
    """attnlib's function for each part the loop runs, with the learner's function's arguments.

    Lesson 18 · 5. Train it. (The loop's backward pass and dropout are the decoder's own: your
    LayerNorm backward and dropout are checked, and attnlib's run inside it.)
    """
    return {
        "batch": sample_batch,
        "cross_entropy": cross_entropy,
        "adamw_step": optim.adamw_step,
        "decays": optim.decays,
        "learning_rate": optim.learning_rate_at,
        "clip": optim.clip_by_global_norm,
    }


def parts_in_use(yours: Mapping[str, Callable]) -> str:
    """One line: which of the loop's parts are the learner's and which attnlib's.

    Lesson 18 · 5. Train it.
    """
    if not isinstance(yours, Mapping):
        raise TypeError(f"yours must be the lesson's dict of passed functions, got {type(yours).__name__}")
    loop = list(reference_parts())
    mine = [f"my_{name}" for name in loop if name in yours]
    theirs = [name for name in loop if name not in yours]
    said = [f"yours: {', '.join(mine)}" if mine else "none of yours yet"]
    if theirs:
        said.append(f"attnlib's: {', '.join(theirs)}")
    return "; ".join(said)
