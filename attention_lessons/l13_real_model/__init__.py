"""Lesson 13 · A real model: its figures, explorer, self-checks and data."""
