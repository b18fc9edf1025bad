"""Lesson 00 · Start here: its figures, explorer, self-checks and data."""
