"""Lesson 07 · The whole picture: its figures, explorer, self-checks and data."""
