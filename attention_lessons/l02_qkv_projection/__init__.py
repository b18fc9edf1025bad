"""Lesson 02 · Queries, keys and values: three projections:
its figures, explorer, self-checks and data."""
