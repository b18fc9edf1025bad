"""Lesson 18's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations


def function_bodies() -> list[str]:
    """A line of each function the learner writes, as the solution cells write it (code, not numbers)."""
    return [
        "starts = rng.integers(0, len(ids) - n_ctx, size=batch_size)",
        "onehot = np.arange(logits.shape[-1]) == targets[..., None]",
        "d_hat - d_hat.mean(axis=-1, keepdims=True) - x_hat * (d_hat * x_hat).mean(axis=-1, keepdims=True)",
        "param = param * (1 - learning_rate * weight_decay)",
        "return array.ndim >= 2",
        "return floor + 0.5 * (peak - floor) * (1 + np.cos(np.pi * progress))",
        "scale = min(1.0, max_norm / (norm + 1e-6))",
        "return x * keep / (1 - rate), keep",
        "return d_out * keep / (1 - rate)",
    ]
