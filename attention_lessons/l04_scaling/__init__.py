"""Lesson 04 · Scaling by √d_k: its figures, explorer, self-checks and data."""
