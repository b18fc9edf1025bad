"""Lesson 09 · Many heads: its figures, explorer, self-checks and data."""
