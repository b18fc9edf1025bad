"""Lesson 01 · Embeddings: its figures, explorer, self-checks and data."""
