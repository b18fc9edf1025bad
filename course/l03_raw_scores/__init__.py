"""Lesson 03 · Raw scores: its figures, explorer, self-checks and data."""
