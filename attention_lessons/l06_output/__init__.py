"""Lesson 06 · The output: a weighted sum of values: its figures, explorer, self-checks and data."""
