"""Lesson 02 · Queries, keys and values: its figures, explorer, self-checks and data."""
