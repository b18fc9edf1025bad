"""Lesson 11's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

import numpy as np

from attention_lessons.kit.checks.wording import as_printed
from attnlib import backward


def score_direction() -> list[str]:
    """The question "which way does a score move?": the weighted mean of da, and ds of key 1."""
    a_row, da = np.array([0.5, 0.3, 0.2]), np.array([-1.0, -0.2, -0.5])
    return [f"{a_row @ da:.2f}", as_printed(backward.softmax_backward(a_row, da)[1], 3)]
