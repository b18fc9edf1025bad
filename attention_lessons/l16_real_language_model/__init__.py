"""Lesson 16 · A real language model: its self-checks (the learner's RMSNorm, SwiGLU, rotation,
grouped-query attention and block against attnlib's), its figures and its committed data."""
