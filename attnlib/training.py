"""A tiny attention model, trained in numpy: where W_q, W_k and W_v come from.

The task is **"output the previous token"**: given a sequence of random tokens
``t_0 … t_{n−1}``, the output at position ``i ≥ 1`` must name ``t_{i−1}``. The right attention
pattern is known in advance: every query should put its weight on the key just before it, the
sub-diagonal of the weights. Nothing in the model says so; it has to learn it.

The model is one attention layer, causal, on fixed token embeddings plus the sinusoidal
positions of lesson 10 (:func:`attnlib.positions.sinusoidal`)::

    X = E[tokens] + P                         (B, n, d_model)
    Q = X W_q,  K = X W_k,  V = X W_v         (B, n, d_k), (B, n, d_k), (B, n, d_v)
    Z, A = attention(Q, K, V, causal, scale)  (B, n, d_v), (B, n, n)
    logits = Z W_o                            (B, n, vocab)
    loss = mean cross-entropy of logits[:, 1:] against tokens[:, :-1]

Training runs that forward pass, then the backward pass written out (the cross-entropy's
gradient ``softmax(logits) − onehot``, through ``W_o``, through attention with
:func:`attnlib.backward.steps_backward`, through the three projections), then one Adam step.
Everything is float64 and seeded: the same arguments give the same run.

The loss and its gradient in NumPy (lesson 11 · 3. Training): ``−log softmax(logits)[target]``,
and ``softmax(logits) − onehot``:

>>> logits, targets = np.array([[2.0, 0.0, -1.0]]), np.array([0])
>>> p = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
>>> loss, d_logits = cross_entropy(logits, targets)
>>> bool(np.isclose(loss, -np.log(p[0, 0]))), bool(np.allclose(d_logits, p - [[1.0, 0.0, 0.0]]))
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attnlib.backward import steps_backward
from attnlib.core import AttentionSteps, attention_steps
from attnlib.optim import adamw_step
from attnlib.positions import sinusoidal
from attnlib.validation import as_positive_int, as_real, as_real_array, as_seed, is_number

__all__ = [
    "PARAMETER_NAMES",
    "Adam",
    "Forward",
    "Gradients",
    "Model",
    "TrainingRun",
    "cross_entropy",
    "forward",
    "gradients",
    "init_parameters",
    "log_softmax",
    "previous_token_batch",
    "token_labels",
    "train",
]

#: The learned matrices, in the order of the forward pass.
PARAMETER_NAMES: tuple[str, ...] = ("W_q", "W_k", "W_v", "W_o")


def _model(value: object) -> Model:
    if not isinstance(value, Model):
        raise TypeError(f"model must be an attnlib.training.Model, got {type(value).__name__}")
    return value


def _positive_float(value: object, name: str) -> float:
    number = as_real(value, name, example="0.5")
    if number <= 0:
        raise ValueError(f"{name} must be a positive number, got {number}")
    return number


@dataclass(frozen=True)
class Model:
    """The shape of the model and its fixed (not learned) inputs.

    Lesson 11 · 2. A model small enough to train in a cell.

    Attributes
    ----------
    vocab_size : int
        Number of different tokens.
    length : int
        Tokens per sequence, ``n``.
    d_model : int
        Width of the embeddings and positions.
    d_k, d_v : int
        Width of the queries and keys, and of the values.
    scale : float or None
        Multiplies the scores; ``None`` is the transformer's ``1/√d_k``, ``1.0`` is no scaling.
    seed : int
        Seed of the token embeddings ``E`` (the parameters have their own seed).
    embeddings : (vocab_size, d_model)
        ``E``: one fixed random vector of length about 1 per token.
    positions : (length, d_model)
        ``P``: :func:`attnlib.positions.sinusoidal`, added to the embeddings.
    """

    vocab_size: int = 8
    length: int = 8
    d_model: int = 16
    d_k: int = 16
    d_v: int = 16
    scale: float | None = None
    seed: int = 0
    embeddings: np.ndarray = field(init=False, repr=False, compare=False)
    positions: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "length", "d_model", "d_k", "d_v"):
            as_positive_int(getattr(self, name), name)
        as_positive_int(self.vocab_size, "vocab_size", minimum=2)
        as_positive_int(self.length, "length", minimum=2)
        if self.scale is not None:
            _positive_float(self.scale, "scale")
        rng = np.random.default_rng(as_seed(self.seed))
        embeddings = rng.normal(size=(self.vocab_size, self.d_model)) / math.sqrt(self.d_model)
        object.__setattr__(self, "embeddings", embeddings)
        object.__setattr__(self, "positions", sinusoidal(self.length, self.d_model))

    @property
    def shapes(self) -> dict[str, tuple[int, int]]:
        """The shape of each learned matrix, by name."""
        return {
            "W_q": (self.d_model, self.d_k),
            "W_k": (self.d_model, self.d_k),
            "W_v": (self.d_model, self.d_v),
            "W_o": (self.d_v, self.vocab_size),
        }

    def embed(self, tokens: npt.ArrayLike) -> np.ndarray:
        """``X = E[tokens] + P``: (B, n) tokens → (B, n, d_model)."""
        t = self.check_tokens(tokens)
        return self.embeddings[t] + self.positions

    def check_tokens(self, tokens: npt.ArrayLike) -> np.ndarray:
        """``tokens`` as an integer array (B, n) of ids in ``0 … vocab_size − 1``, or a clear error."""
        t = np.asarray(tokens)
        if t.dtype.kind not in "iu":
            raise TypeError(f"tokens must be integers (token ids), got dtype {t.dtype}")
        if t.ndim != 2 or t.shape[1] != self.length:
            raise ValueError(f"tokens must have shape (batch, {self.length}), got shape {t.shape}")
        if t.shape[0] == 0:
            raise ValueError(
                f"tokens has no sequences (shape {t.shape}): the loss is a mean over at least one sequence"
            )
        if t.size and (t.min() < 0 or t.max() >= self.vocab_size):
            raise ValueError(f"tokens must be ids from 0 to {self.vocab_size - 1}, got {t.min()} … {t.max()}")
        return t

    def check_parameters(self, parameters: dict[str, npt.ArrayLike]) -> dict[str, np.ndarray]:
        """The four matrices as float64 arrays of the right shapes, or a clear error."""
        if not isinstance(parameters, dict) or set(parameters) != set(PARAMETER_NAMES):
            given = sorted(parameters) if isinstance(parameters, dict) else type(parameters).__name__
            raise ValueError(f"parameters must be a dict with exactly {PARAMETER_NAMES}, got {given}")
        checked = {}
        for name, shape in self.shapes.items():
            W = as_real_array(parameters[name], name).astype(np.float64, copy=False)
            if W.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got shape {W.shape}")
            checked[name] = W
        return checked


def init_parameters(model: Model, seed: int = 0) -> dict[str, np.ndarray]:
    """Random starting matrices: normal entries of variance ``1/fan_in`` (LeCun's initialisation).

    With it, the queries and keys have entries of size about 1 whatever ``d_model``, so the raw
    scores grow like ``d_k``, as in lesson 04.

    Returns
    -------
    dict of str to ndarray
        ``W_q``, ``W_k`` (d_model, d_k), ``W_v`` (d_model, d_v), ``W_o`` (d_v, vocab_size).
    """
    shapes = _model(model).shapes
    rng = np.random.default_rng(as_seed(seed))
    return {name: rng.normal(size=shape) / math.sqrt(shape[0]) for name, shape in shapes.items()}


def previous_token_batch(model: Model, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """A batch of uniformly random token sequences, (batch_size, length) integers.

    Lesson 11 · 2. A model small enough to train in a cell.

    ``rng`` is a NumPy generator, ``np.random.default_rng(seed)``; it advances with every batch.
    """
    checked = _model(model)
    size = as_positive_int(batch_size, "batch_size")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}")
    return _batch(checked, size, rng)


def _batch(model: Model, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`previous_token_batch` of checked arguments."""
    return rng.integers(0, model.vocab_size, size=(batch_size, model.length))


def token_labels(tokens: npt.ArrayLike) -> list[str]:
    """Names for a sequence's tokens, position first: ``[3, 0, 3]`` → ``["0:D", "1:A", "2:D"]``.

    Lesson 11 · 2. A model small enough to train in a cell.
    """
    ids = np.asarray(tokens)
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or (ids.size and (ids.min() < 0 or ids.max() >= 26)):
        raise ValueError(f"tokens must be one sequence of ids from 0 to 25, got {ids.tolist()!r}")
    return [f"{position}:{chr(ord('A') + int(token))}" for position, token in enumerate(ids)]


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """``log softmax(logits)`` over the last axis, stable: ``s − log Σ exp(s)`` with ``s = logits − max``.

    Lesson 11 · 3. Training (and lesson 14 · 1, the next-token loss): the cross-entropy reads it at the
    target.

    Parameters
    ----------
    logits : (..., vocab) finite floats

    Returns
    -------
    (..., vocab)
        The log-probabilities; ``exp`` of a row sums to 1.
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of the rows of ``logits`` against integer ``targets``, and its gradient.

    Lesson 11 · 3. Training.

    Parameters
    ----------
    logits : (..., vocab)
    targets : (...) integers

    Returns
    -------
    loss : float
        ``mean(−log softmax(logits)[target])``.
    d_logits : (..., vocab)
        ``(softmax(logits) − onehot(targets)) / count``: the gradient of the loss.
    """
    log_probs = log_softmax(logits)
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    onehot = np.arange(logits.shape[-1]) == targets[..., None]
    return float(-picked.mean()), (np.exp(log_probs) - onehot) / targets.size


@dataclass(frozen=True)
class Forward:
    """The forward pass of a batch, every intermediate kept for the backward pass.

    Lesson 11 · 2. A model small enough to train in a cell.

    Attributes
    ----------
    X : (B, n, d_model)
    Q, K : (B, n, d_k)
    V : (B, n, d_v)
    weights : (B, n, n)
        The attention weights ``A`` (causal: zero above the diagonal).
    Z : (B, n, d_v)
        The attention output.
    logits : (B, n, vocab_size)
    loss : float
        Mean cross-entropy of ``logits[:, 1:]`` against ``tokens[:, :-1]``.
    attention : AttentionSteps
        Every step of the attention (``weights`` and ``Z`` are its weights and output).
    """

    X: np.ndarray
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    weights: np.ndarray
    Z: np.ndarray
    logits: np.ndarray
    loss: float
    attention: AttentionSteps = field(repr=False, compare=False)


def forward(model: Model, parameters: dict[str, npt.ArrayLike], tokens: npt.ArrayLike) -> Forward:
    """Run the model on ``tokens`` (B, n) and compute the previous-token loss.

    Lesson 11 · 2. A model small enough to train in a cell.
    """
    checked = _model(model)
    return _forward(checked, checked.check_parameters(parameters), checked.check_tokens(tokens))


def _forward(model: Model, p: dict[str, np.ndarray], t: np.ndarray) -> Forward:
    """:func:`forward` on checked parameters and tokens."""
    X = model.embeddings[t] + model.positions  # (B, n, d_model)
    Q, K, V = X @ p["W_q"], X @ p["W_k"], X @ p["W_v"]
    steps = attention_steps(Q, K, V, causal=True, scale=model.scale)
    logits = steps.output @ p["W_o"]
    loss, _ = cross_entropy(logits[:, 1:], t[:, :-1])
    return Forward(X, Q, K, V, steps.weights, steps.output, logits, loss, steps)


@dataclass(frozen=True)
class Gradients:
    """The loss and its gradient with respect to every learned matrix.

    Lesson 11 · 3. Training.

    Attributes
    ----------
    loss : float
    grads : dict of str to ndarray
        ``dW_q``, … under the names of :data:`PARAMETER_NAMES`, shaped like the matrices.
    forward : Forward
        The forward pass they came from.
    """

    loss: float
    grads: dict[str, np.ndarray]
    forward: Forward


def gradients(model: Model, parameters: dict[str, npt.ArrayLike], tokens: npt.ArrayLike) -> Gradients:
    """The loss on ``tokens`` and its gradients, by the backward pass written out.

    Lesson 11 · 3. Training.
    """
    checked = _model(model)
    return _gradients(checked, checked.check_parameters(parameters), checked.check_tokens(tokens))


def _gradients(model: Model, p: dict[str, np.ndarray], t: np.ndarray) -> Gradients:
    """:func:`gradients` on checked parameters and tokens."""
    f = _forward(model, p, t)
    d_logits = np.zeros_like(f.logits)  # position 0 has no previous token: no loss, no gradient
    _, d_logits[:, 1:] = cross_entropy(f.logits[:, 1:], t[:, :-1])

    dZ = d_logits @ p["W_o"].T  # (B, n, d_v)
    dQ, dK, dV = steps_backward(f.attention, f.Q, f.K, f.V, dZ)  # through attention, its forward reused
    Xt = np.swapaxes(f.X, -1, -2)  # (B, d_model, n)
    grads = {  # one product per sequence, summed over the batch
        "W_q": (Xt @ dQ).sum(axis=0),  # Xᵀ dQ: (d_model, d_k)
        "W_k": (Xt @ dK).sum(axis=0),
        "W_v": (Xt @ dV).sum(axis=0),
        "W_o": (np.swapaxes(f.Z, -1, -2) @ d_logits).sum(axis=0),  # Zᵀ dlogits: (d_v, vocab_size)
    }
    return Gradients(f.loss, grads, f)


class Adam:
    """The Adam optimiser (Kingma and Ba, 2015), written out.

    Lesson 11 · 3. Training.

    For each matrix ``W`` with gradient ``g`` at step ``t = 1, 2, …``::

        m ← β₁ m + (1 − β₁) g          (a running mean of the gradients)
        v ← β₂ v + (1 − β₂) g²         (a running mean of their squares)
        W ← W − lr · m̂ / (√v̂ + ε)      m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ)

    Each entry moves by about ``lr`` per step whatever the size of its gradient, so a layer
    whose gradients are tiny still learns, only with noisier steps.
    Each step is :func:`attnlib.optim.adamw_step` without weight decay (lesson 18's AdamW adds it).

    Parameters
    ----------
    learning_rate : float
        ``lr``, the size of a step.
    beta1, beta2 : float
        How slowly the two running means forget (the paper's defaults).
    """

    def __init__(self, learning_rate: float = 0.01, *, beta1: float = 0.9, beta2: float = 0.999) -> None:
        self.learning_rate = _positive_float(learning_rate, "learning_rate")
        for name, beta in (("beta1", beta1), ("beta2", beta2)):
            if not _positive_float(beta, name) < 1:
                raise ValueError(f"{name} must lie between 0 and 1, got {beta}")
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), 1e-8
        self.t = 0
        self.m: dict[str, np.ndarray] = {}
        self.v: dict[str, np.ndarray] = {}

    def step(self, parameters: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The parameters after one step (new arrays; the given ones are not changed)."""
        self.t += 1
        updated = {}
        for name, W in parameters.items():
            m, v = self.m.get(name, np.zeros_like(W)), self.v.get(name, np.zeros_like(W))
            updated[name], self.m[name], self.v[name] = adamw_step(
                W, grads[name], m, v, self.t, learning_rate=self.learning_rate,
                beta1=self.beta1, beta2=self.beta2, eps=self.eps, weight_decay=0.0,
            )  # fmt: skip
        return updated


def _probe(model: Model, rng: np.random.Generator) -> np.ndarray:
    """A sequence to watch: distinct tokens where the vocabulary allows, so every key is recognisable."""
    if model.length <= model.vocab_size:
        return rng.permutation(model.vocab_size)[: model.length]
    return _batch(model, 1, rng)[0]


@dataclass(frozen=True)
class TrainingRun:
    """What :func:`train` recorded.

    Lesson 11 · 3. Training.

    Attributes
    ----------
    model : Model
    losses : (steps + 1,)
        The training loss on each step's batch before its update; the last entry is the loss on
        a fresh batch after the last update.
    grad_norms : dict of str to (steps,)
        The size (Frobenius norm) of each matrix's gradient at each step.
    snapshot_steps : (n_snapshots,) int
        The steps whose parameters were saved (0 = before training).
    snapshots : list of dict
        The parameters after that many updates, one dict per entry of ``snapshot_steps``.
    probe : (length,) int
        A fixed token sequence (seeded; no token twice when ``length <= vocab_size``) whose
        attention weights :meth:`weights_at` shows.
    """

    model: Model
    losses: np.ndarray
    grad_norms: dict[str, np.ndarray]
    snapshot_steps: np.ndarray
    snapshots: list[dict[str, np.ndarray]]
    probe: np.ndarray

    @property
    def final_loss(self) -> float:
        """The loss after training (on a fresh batch)."""
        return float(self.losses[-1])

    def parameters_at(self, step: int) -> dict[str, np.ndarray]:
        """The saved parameters after ``step`` updates (one of ``snapshot_steps``)."""
        if not is_number(step, whole=True):
            raise TypeError(
                f"step must be a whole number, one of {self.snapshot_steps.tolist()}; got {step!r}"
            )
        matches = np.flatnonzero(self.snapshot_steps == step)
        if matches.size == 0:
            raise ValueError(f"step {step!r} was not saved; saved steps: {self.snapshot_steps.tolist()}")
        return self.snapshots[int(matches[0])]

    def weights_at(self, step: int, tokens: npt.ArrayLike | None = None) -> np.ndarray:
        """The attention weights (n, n) of ``tokens`` (default: the probe) with the parameters of ``step``.

        ``tokens`` is one sequence of ``length`` token ids, shape ``(length,)``.
        """
        sequence = self.probe if tokens is None else np.asarray(tokens)
        if sequence.ndim != 1:
            raise ValueError(
                f"tokens must be one sequence of shape ({self.model.length},), got shape {sequence.shape}"
            )
        return forward(self.model, self.parameters_at(step), sequence[None, :]).weights[0]


def train(
    model: Model,
    *,
    steps: int = 300,
    batch_size: int = 32,
    learning_rate: float = 0.02,
    seed: int = 0,
    snapshot_every: int = 10,
    start: dict[str, npt.ArrayLike] | None = None,
) -> TrainingRun:
    """Train ``model`` on the previous-token task with Adam; save the parameters now and then.

    Parameters
    ----------
    model : Model
    steps : int
        Number of updates, each on a fresh random batch.
    batch_size : int
        Sequences per batch.
    learning_rate : float
        Adam's step size.
    seed : int
        Seed of the starting parameters, the batches and the probe sequence.
    snapshot_every : int
        Save the parameters every that many steps (and at step 0 and the last step).
    start : dict of str to array_like, optional
        The starting parameters (shapes as :func:`init_parameters`); by default
        ``init_parameters(model, seed)``. Lesson 11 (section 4) nudges them in their 15th digit to
        tell a chaotic run from a steady one.

    Returns
    -------
    TrainingRun
    """
    _model(model)
    n_steps = as_positive_int(steps, "steps")
    every = as_positive_int(snapshot_every, "snapshot_every")
    size = as_positive_int(batch_size, "batch_size")
    rng = np.random.default_rng(as_seed(seed))
    if start is None:
        parameters = init_parameters(model, seed)
    else:
        parameters = {name: W.copy() for name, W in model.check_parameters(start).items()}
    optimiser = Adam(learning_rate)
    probe = _probe(model, rng)
    losses, norms = [], {name: [] for name in PARAMETER_NAMES}
    saved_steps, snapshots = [0], [parameters]
    for step in range(1, n_steps + 1):
        result = _gradients(model, parameters, _batch(model, size, rng))
        losses.append(result.loss)
        for name in PARAMETER_NAMES:
            norms[name].append(float(np.linalg.norm(result.grads[name])))
        parameters = optimiser.step(parameters, result.grads)
        if step % every == 0 or step == n_steps:
            saved_steps.append(step)
            snapshots.append(parameters)
    losses.append(_forward(model, parameters, _batch(model, size, rng)).loss)
    return TrainingRun(
        model,
        np.array(losses),
        {name: np.array(values) for name, values in norms.items()},
        np.array(saved_steps),
        snapshots,
        probe,
    )
