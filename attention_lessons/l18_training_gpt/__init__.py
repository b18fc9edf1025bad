"""Lesson 18 · Train your own GPT: the learner's training loop in numpy, on lesson 17's Shakespeare."""
