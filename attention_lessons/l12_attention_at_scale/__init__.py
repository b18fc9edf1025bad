"""Lesson 12 · Attention at scale: its figures, explorer, self-checks and data."""
