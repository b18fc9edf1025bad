"""Lesson 10's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

from attention_lessons.kit.checks.wording import as_printed
from attnlib import positions


def sinusoidal_row() -> list[str]:
    """The self-check's PE[100, :4] for d_model = 8."""
    return [as_printed(value) for value in positions.sinusoidal(101, 8)[100, :4]]
