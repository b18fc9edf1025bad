"""Lesson 01 · Embeddings: tokens as vectors: its figures, explorer, self-checks and data."""
