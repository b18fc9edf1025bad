"""The pieces around the attention: LayerNorm and GELU (tanh form), each with its backward pass.

Lesson 14's model has neither; lesson 15's has both in every layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LN_EPS", "LayerNormSteps", "gelu_backward", "gelu_tanh", "layer_norm", "layer_norm_backward"]

#: The ε under the square root of every LayerNorm (PyTorch's default).
LN_EPS = 1e-5
_GELU_C = math.sqrt(2.0 / math.pi)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form: ``x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`` (PyTorch's ``approximate='tanh'``).

    Lesson 15's model has an MLP with this GELU in each layer.

    Computed as ``x · σ(2u)`` with ``u`` the tanh's argument (the same function: ``(1 + tanh u)/2
    = σ(2u)``), since NumPy's ``exp`` is several times faster than its ``tanh``.
    ``attnlib.model.gelu`` is the exact erf form that BERT uses.
    """
    return x * _sigmoid_2u(x)


def _sigmoid_2u(x: np.ndarray) -> np.ndarray:
    """``σ(2u) = 1 / (1 + exp(−2u))``, ``u = √(2/π) (x + 0.044715 x³)``; ``2u`` clipped to ±60 (past
    that, σ is 0 or 1 to 26 digits), so ``exp`` never overflows."""
    two_u = np.clip(2.0 * _GELU_C * x * (1.0 + 0.044715 * (x * x)), -60.0, 60.0)
    return 1.0 / (1.0 + np.exp(-two_u))


def gelu_backward(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    """``d_out · GELU'(x)``: ``σ + 2x σ(1 − σ) u'`` with ``σ = σ(2u)``, ``u' = √(2/π)(1 + 3·0.044715 x²)``.

    Lesson 15's model was trained through it.
    """
    s = _sigmoid_2u(x)
    return d_out * (s + 2.0 * x * s * (1.0 - s) * _GELU_C * (1.0 + 3 * 0.044715 * (x * x)))


@dataclass
class LayerNormSteps:
    """One LayerNorm's forward pass, kept for its backward pass."""

    x_hat: np.ndarray  # (x − mean) / σ
    inv_sigma: np.ndarray  # 1/√(var + ε), (..., 1)
    gain: np.ndarray


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, LayerNormSteps]:
    """``(x − mean) / √(var + ε) · gain + bias`` over the last axis, and what its backward pass needs.

    Lesson 15's model has one before each attention and MLP, and before the unembedding.
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_sigma = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)
    x_hat = centred * inv_sigma
    return x_hat * gain + bias, LayerNormSteps(x_hat, inv_sigma, gain)


def layer_norm_backward(norm: LayerNormSteps, d_out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dx, d_gain, d_bias of a LayerNorm from the gradient of its output.

    Lesson 15's model was trained through it.
    """
    d_hat = d_out * norm.gain
    dx = norm.inv_sigma * (
        d_hat
        - d_hat.mean(axis=-1, keepdims=True)
        - norm.x_hat * (d_hat * norm.x_hat).mean(axis=-1, keepdims=True)
    )
    flat = d_out.reshape(-1, d_out.shape[-1])
    return dx, (flat * norm.x_hat.reshape(flat.shape)).sum(axis=0), flat.sum(axis=0)
