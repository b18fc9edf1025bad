"""Lesson 17 · Tokens: byte-pair encoding written by the learner, checked against a real tokenizer."""
