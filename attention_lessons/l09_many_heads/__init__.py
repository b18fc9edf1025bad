"""Lesson 09 · Many heads: multi-head attention, cross-attention and padding:
its figures, explorer, self-checks and data."""
