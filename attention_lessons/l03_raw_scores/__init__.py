"""Lesson 03 · Raw scores: Q Kᵀ: its figures, explorer, self-checks and data."""
