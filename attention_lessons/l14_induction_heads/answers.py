"""Lesson 14's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

from attention_lessons.l14_induction_heads import induction


def induction_position() -> list[str]:
    """Where the self-check asks the induction head to look: the key after the earlier copy."""
    half = induction.load_induction_run().half
    sequence = induction.repeated_sequences(1, half, 16, seed=7)[0]  # the lesson's new sequence
    query = half + 3
    earlier = max(p for p in range(query) if sequence[p] == sequence[query])
    return [f"the induction head looks at position {earlier + 1}"]
