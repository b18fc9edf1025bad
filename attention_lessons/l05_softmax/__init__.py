"""Lesson 05 · Softmax, row by row: its figures, explorer, self-checks and data."""
