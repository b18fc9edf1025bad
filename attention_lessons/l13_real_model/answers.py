"""Lesson 13's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations

from attention_lessons.l13_real_model.checks import AttentionLayer


def attention_parameters() -> list[str]:
    """One attention layer of all-MiniLM-L6-v2: four 384 × 384 matrices and their biases."""
    return [str(4 * 384**2 + 4 * 384)]


def most_attended() -> list[str]:
    """The token that *cat* attends to most in layer 1, head 8."""
    return ["most to 'sat'"]


def bert_d_k() -> list[str]:
    """BERT-base's d_k, read off its config."""
    return [str(AttentionLayer(768, 12, 3072).d_k)]
