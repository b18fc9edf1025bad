"""Lesson 08 · Exercises: its figures, explorer, self-checks and data."""
