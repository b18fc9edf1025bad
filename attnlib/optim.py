"""AdamW, its learning-rate schedule and gradient clipping: how lesson 18's GPT learns.

Lesson 18 · 4. The optimiser. One step of one array in NumPy, in ``torch.optim.AdamW``'s
order: the decay first (decoupled from the gradient, Loshchilov and Hutter 2019), then Adam's step
(Kingma and Ba 2015). On the first step ``m̂ = g`` and ``v̂ = g²``: every entry moves by about ``lr``.

>>> lr, wd, beta1, beta2, eps, t = 0.1, 0.01, 0.9, 0.999, 1e-8, 1
>>> W, g = np.array([1.0, -2.0]), np.array([0.5, -3.0])
>>> m, v = np.zeros(2), np.zeros(2)
>>> W_decayed = W * (1 - lr * wd)                       # W − lr·wd·W
>>> m = beta1 * m + (1 - beta1) * g                     # a running mean of the gradients
>>> v = beta2 * v + (1 - beta2) * g * g                 # a running mean of their squares
>>> W_new = W_decayed - lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
>>> np.round(W_new, 6)                                  # 0.999 − 0.1 and −1.998 + 0.1
array([ 0.899, -1.898])
>>> stepped, m_new, v_new = adamw_step(W, g, np.zeros(2), np.zeros(2), 1, learning_rate=lr)
>>> bool(np.array_equal(stepped, W_new) and np.array_equal(m_new, m) and np.array_equal(v_new, v))
True

A training step of lesson 18, in the order of nanoGPT's ``train.py``::

    optimiser = AdamW(6e-4, weight_decay=0.1)            # once: it keeps m and v per name
    lr = learning_rate_at(step, peak=6e-4, warmup=100, total=2000, floor=6e-5)
    grads, norm = clip_by_global_norm(grads, 1.0)        # norm: watch it for spikes
    params = optimiser.step(params, grads, learning_rate=lr)

Every public function checks its arguments; the private bodies trust them. float32 arrays stay
float32 (the settings are Python floats, which NumPy rounds to the arrays' dtype); integers are
computed as float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_positive_int, as_real, as_real_array

__all__ = ["AdamW", "adamw_step", "clip_by_global_norm", "decays", "global_norm", "learning_rate_at"]

#: Arrays by name (``"layer0.W_q"``): the parameters, their gradients, AdamW's m and v.
Arrays = dict[str, np.ndarray]


def _at_least(value: object, name: str, low: float, *, strictly: bool = False) -> float:
    """``value`` as a finite float ``≥ low`` (``> low`` if ``strictly``), or an error naming ``name``."""
    number = as_real(value, name, example="0.001")
    if number < low or (strictly and number == low):
        raise ValueError(f"{name} must be {'above' if strictly else 'at least'} {low}, got {number}")
    return number


def _settings(beta1: object, beta2: object, eps: object, weight_decay: object) -> tuple[float, ...]:
    """AdamW's settings checked: betas in [0, 1), ``eps > 0``, ``weight_decay ≥ 0``."""
    b1, b2 = as_real(beta1, "beta1", example="0.9"), as_real(beta2, "beta2", example="0.999")
    for name, beta in (("beta1", b1), ("beta2", b2)):
        if not 0 <= beta < 1:
            raise ValueError(f"{name} must lie in [0, 1) (how slowly a running mean forgets), got {beta}")
    return b1, b2, _at_least(eps, "eps", 0.0, strictly=True), _at_least(weight_decay, "weight_decay", 0.0)


def _like(name: str, array: np.ndarray, other_name: str, other: np.ndarray) -> None:
    """Raise unless ``other`` has the shape and dtype of ``array``, naming both."""
    if other.shape != array.shape:
        raise ValueError(f"{other_name} has shape {other.shape} but {name} has shape {array.shape}")
    if other.dtype != array.dtype:
        raise TypeError(f"{other_name} has dtype {other.dtype} but {name} has dtype {array.dtype}")


def adamw_step(
    param: npt.ArrayLike,
    grad: npt.ArrayLike,
    m: npt.ArrayLike,
    v: npt.ArrayLike,
    step: int,
    *,
    learning_rate: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.01,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One AdamW update of one array, in ``torch.optim.AdamW``'s order.

    Lesson 18 · 4. The optimiser. With ``g = grad`` and ``t = step``::

        param ← param − lr·wd·param              decoupled weight decay, before the Adam step
        m ← β₁ m + (1 − β₁) g                    a running mean of the gradients
        v ← β₂ v + (1 − β₂) g²                   a running mean of their squares
        param ← param − lr · m̂ / (√v̂ + ε)        m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ)

    Parameters
    ----------
    param, grad, m, v : (...) of one dtype
        The array, its gradient, its running means after ``step − 1`` updates (zeros at first).
    step : int
        ``t = 1, 2, …``: the number of this update.
    learning_rate, beta1, beta2, eps, weight_decay : float
        ``lr ≥ 0`` (a schedule's floor may be 0), betas in [0, 1), ``ε > 0``, ``wd ≥ 0``.

    Returns
    -------
    param, m, v : (...) new arrays; the given ones are not changed.
    """
    lr = _at_least(learning_rate, "learning_rate", 0.0)
    settings = _settings(beta1, beta2, eps, weight_decay)
    t = as_positive_int(step, "step")
    p = as_real_array(param, "param")
    arrays = {"grad": as_real_array(grad, "grad"), "m": as_real_array(m, "m"), "v": as_real_array(v, "v")}
    for name, array in arrays.items():
        _like("param", p, name, array)
    if (arrays["v"] < 0).any():
        raise ValueError("v has negative entries; it is a running mean of squared gradients")
    return _adamw(p, *arrays.values(), t, lr, *settings)


def _adamw(
    param: np.ndarray,
    grad: np.ndarray,
    m: np.ndarray,
    v: np.ndarray,
    t: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`adamw_step` of checked arguments."""
    param = param * (1 - lr * weight_decay)  # torch's form of param − lr·wd·param: exact when wd = 0
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad * grad
    m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
    return param - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def decays(name: str, array: npt.ArrayLike) -> bool:
    """Whether weight decay applies to ``array``: nanoGPT's rule, every array of two or more axes.

    Lesson 18 · 4. The optimiser. Matrices and embeddings decay; gains and biases (one axis) do
    not. ``name`` is unused here; another rule given to :class:`AdamW` may choose by it.
    """
    return np.ndim(array) >= 2


class AdamW:
    """The AdamW optimiser over a dict of named arrays, with ``torch.optim.AdamW``'s defaults.

    Lesson 18 · 4. The optimiser. Each array takes :func:`adamw_step`: with ``weight_decay`` if
    ``decays(name, array)`` (by default :func:`decays`: matrices and embeddings), else with none, as
    nanoGPT's two parameter groups.

    Parameters
    ----------
    learning_rate : float
        ``lr > 0``, for the steps given none; the other settings are :func:`adamw_step`'s.
    decays : function (name, array) -> bool

    Attributes
    ----------
    t : int
        The number of steps taken.
    m, v : dict of str to ndarray
        The running means by name, as in :class:`attnlib.training.Adam`.
    """

    def __init__(
        self,
        learning_rate: float = 1e-3,
        *,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        decays: Callable[[str, np.ndarray], bool] = decays,
    ) -> None:
        self.learning_rate = _at_least(learning_rate, "learning_rate", 0.0, strictly=True)
        self.beta1, self.beta2, self.eps, self.weight_decay = _settings(beta1, beta2, eps, weight_decay)
        if not callable(decays):
            raise TypeError(f"decays must be a function (name, array) -> bool, got {decays!r}")
        self.decays = decays
        self.t = 0
        self.m: Arrays = {}
        self.v: Arrays = {}

    def step(self, params: Arrays, grads: Arrays, *, learning_rate: float | None = None) -> Arrays:
        """The parameters after one step: a new dict of new arrays (the given ones are not changed).

        Lesson 18 · 4. The optimiser. ``grads`` holds the gradient of each array of ``params``,
        by the same names; ``learning_rate`` (``≥ 0``, :func:`learning_rate_at`'s value) replaces the
        optimiser's for this step only. Nothing changes if an argument is refused.
        """
        lr = self.learning_rate if learning_rate is None else _at_least(learning_rate, "learning_rate", 0.0)
        checked = _named_pairs(params, grads)
        for name, (p, _) in checked.items():
            if name in self.m:
                _like(f"params[{name!r}]", p, f"the running mean m[{name!r}] of earlier steps", self.m[name])
        decayed = {name: self.decays(name, p) for name, (p, _) in checked.items()}
        self.t += 1
        updated = {}
        for name, (p, g) in checked.items():
            m, v = self.m.get(name, np.zeros_like(p)), self.v.get(name, np.zeros_like(p))
            wd = self.weight_decay if decayed[name] else 0.0
            updated[name], self.m[name], self.v[name] = _adamw(
                p, g, m, v, self.t, lr, self.beta1, self.beta2, self.eps, wd
            )
        return updated


def _named_arrays(arrays: object, name: str) -> Arrays:
    """A dict of finite float arrays, or an error naming the entry (``grads['W_q'] has … NaN``)."""
    if not isinstance(arrays, Mapping):
        raise TypeError(f"{name} must be a dict of arrays by name, got {type(arrays).__name__}")
    return {key: as_real_array(value, f"{name}[{key!r}]") for key, value in arrays.items()}


def _named_pairs(params: object, grads: object) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each parameter with its gradient, checked: the same names, shapes and dtypes."""
    p, g = _named_arrays(params, "params"), _named_arrays(grads, "grads")
    if p.keys() != g.keys():
        raise ValueError(
            f"grads must name the same arrays as params: only in params {[k for k in p if k not in g]}, "
            f"only in grads {[k for k in g if k not in p]}"
        )
    for name in p:
        _like(f"params[{name!r}]", p[name], f"grads[{name!r}]", g[name])
    return {name: (p[name], g[name]) for name in p}


def learning_rate_at(step: int, *, peak: float, warmup: int, total: int, floor: float = 0.0) -> float:
    """The learning rate after ``step`` updates: a linear warmup, then a cosine down to ``floor``.

    Lesson 18 · 4. The optimiser: the learning-rate schedule (nanoGPT's ``get_lr``)::

        step < warmup:           peak · (step + 1) / warmup
        warmup ≤ step < total:   floor + ½ (peak − floor) (1 + cos(π (step − warmup) / (total − warmup)))
        step ≥ total:            floor

    ``step`` counts the updates done so far, from 0; ``0 ≤ warmup < total`` and ``0 ≤ floor ≤ peak``.
    The rate is ``peak`` at steps ``warmup − 1`` and ``warmup``, and ``floor`` from ``total`` on.
    """
    t = as_positive_int(step, "step", minimum=0)
    top = _at_least(peak, "peak", 0.0, strictly=True)
    w = as_positive_int(warmup, "warmup", minimum=0)
    n = as_positive_int(total, "total")
    low = _at_least(floor, "floor", 0.0)
    if w >= n:
        raise ValueError(f"warmup must be less than total (the cosine needs a step), got {w} ≥ {n}")
    if low > top:
        raise ValueError(f"floor must be at most peak ({top}), got {low}")
    if t < w:
        return top * (t + 1) / w
    if t < n:
        return low + 0.5 * (top - low) * (1 + math.cos(math.pi * (t - w) / (n - w)))
    return low


def global_norm(grads: Arrays) -> float:
    """``√(Σ g²)`` over every entry of every array: the size of the whole gradient.

    Lesson 18 · 4. The optimiser: clipping the gradients. Computed in float64 whatever the arrays'
    dtype (float32's squares overflow above about 1.8e19).
    """
    return _norm(_named_arrays(grads, "grads"))


def _norm(grads: Arrays) -> float:
    """:func:`global_norm` of checked arrays."""
    return math.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads.values()))


def clip_by_global_norm(grads: Arrays, max_norm: float) -> tuple[Arrays, float]:
    """Scale every gradient by one factor so that their global norm is at most about ``max_norm``.

    Lesson 18 · 4. The optimiser: clipping the gradients, ``torch.nn.utils.clip_grad_norm_``'s rule::

        coef = max_norm / (norm + 1e-6),  g ← g · coef  where coef < 1

    A spike in the gradient then moves the parameters no further than ``max_norm`` allows, in the
    same direction. Returns new arrays (the given ones times ``min(coef, 1)``) and the norm before
    clipping (:func:`global_norm`), ``max_norm > 0``.
    """
    limit = _at_least(max_norm, "max_norm", 0.0, strictly=True)
    arrays = _named_arrays(grads, "grads")
    norm = _norm(arrays)
    coef = min(limit / (norm + 1e-6), 1.0)  # × 1.0 changes nothing
    return {name: g * coef for name, g in arrays.items()}, norm
