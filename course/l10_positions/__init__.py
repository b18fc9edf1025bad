"""Lesson 10 · Positions: its figures, explorer, self-checks and data."""
