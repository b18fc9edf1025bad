"""Lesson 19's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations


def function_bodies() -> list[str]:
    """A line of each class or function the learner writes, as the solution cells write it (code)."""
    return [
        'weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)',
        'return x + self.mlp.down(F.gelu(self.mlp.up(self.ln_2(x)), approximate="tanh"))',
        "return loss.item()",
        "torch.nn.utils.clip_grad_norm_(model.parameters(), clip)",
        "return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight",
        "k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)",
        "return self.base(x) + (x @ self.A.T) @ self.B.T * self.scale",
    ]
