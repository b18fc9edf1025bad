"""Lesson 15 · Generating text: its figures, explorer, self-checks and data."""
