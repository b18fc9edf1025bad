"""Lesson 06 · The output: its figures, explorer, self-checks and data."""
