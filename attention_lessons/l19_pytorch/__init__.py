"""Lesson 19 · The same model in PyTorch: the learner's GPT as nn.Modules, SmolLM2 in them, LoRA."""
