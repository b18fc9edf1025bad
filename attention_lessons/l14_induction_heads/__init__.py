"""Lesson 14 · Induction heads: its figures, explorer, self-checks and data."""
