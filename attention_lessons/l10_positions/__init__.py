"""Lesson 10 · Positions: attention cannot see word order until we tell it:
its figures, explorer, self-checks and data."""
