"""Lesson NN · Title: its figures, explorer, self-checks and data."""
