"""Lesson 11 · Learning to attend: its figures, explorer, self-checks and data."""
