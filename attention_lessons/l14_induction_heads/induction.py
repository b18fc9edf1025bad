"""Induction heads: the data, the scores that find them, ablation and composition (lesson 14).

An induction head (Elhage et al. 2021; Olsson et al. 2022) completes ``… A B … A`` with ``B``: at
the second ``A`` it attends to the token *after* the first ``A`` and copies it. In a two-layer
attention-only transformer it takes two heads: a **previous-token head** in layer 0 writes into
each position which token came before it, and the **induction head** in layer 1 matches its
query (the current token) against those keys (K-composition).

- :func:`repeated_sequences`: random tokens whose second half repeats the first, where only an
  induction mechanism can lower the loss on the second half below ``ln(vocab)``.
- :func:`previous_token_scores`, :func:`induction_scores`: each head's mean weight on the key
  those heads would choose.
- :func:`half_losses`, :func:`in_context_score`: the loss on each half, and the repeated half's
  minus the first half's (Olsson et al.'s in-context-learning score, for sequences this short).
- :func:`phase_change_step`: when the repeated half's loss fell below half of ``ln(vocab)``.
- :func:`earlier_token_mass`: the probability a model puts on tokens already in the sequence (the
  plateau's "bag of earlier tokens").
- :func:`ablation_losses`: the repeated half's loss with each head zeroed.
- :func:`token_ov_circuit`: what a head's value and output matrices copy, in token space.
- :func:`composition_scores`: how much a layer-1 head's keys (or queries, or values) read what a
  layer-0 head writes, from the weights alone.
- :func:`load_induction_run`: the committed run of ``tools/train_induction.py``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from attention_lessons.kit.committed import read_committed
from attnlib.decoder import (
    DecoderConfig,
    check_parameters,
    check_tokens,
    forward,
    next_token_losses,
)
from attnlib.decoder.config import as_config, as_mapping, read_npz
from attnlib.training import log_softmax
from attnlib.validation import (
    LARGEST,
    as_distributions,
    as_positive_int,
    as_real_array,
    as_seed,
    as_whole_array,
    is_number,
)

__all__ = [
    "RUN_FILE",
    "RUN_SHA256",
    "Ablation",
    "InductionRun",
    "ablation_losses",
    "composition_baseline",
    "composition_scores",
    "earlier_token_mass",
    "half_losses",
    "in_context_score",
    "induction_batch",
    "induction_scores",
    "induction_targets",
    "load_induction_run",
    "phase_change_step",
    "previous_token_scores",
    "repeated_sequences",
    "run_from_arrays",
    "token_k_circuit",
    "token_ov_circuit",
]


# --- the data ---------------------------------------------------------------------------------


def _random_half(rng: np.random.Generator, batch: int, half: int, vocab_size: int) -> np.ndarray:
    """(batch, half) random tokens, no token equal to the one before it."""
    tokens = rng.integers(0, vocab_size, size=(batch, half))
    steps = rng.integers(1, vocab_size, size=(batch, half - 1))  # never 0: each token differs from the last
    tokens[:, 1:] = (tokens[:, :1] + np.cumsum(steps, axis=1)) % vocab_size
    return tokens


def repeated_sequences(batch: int, half: int, vocab_size: int, seed: int = 0) -> np.ndarray:
    """Random token sequences whose second half repeats the first.

    Each half is ``half`` uniformly random tokens, none equal to the token just before it (so a
    previous-token pattern and an induction pattern never point at the same key).

    Returns
    -------
    (batch, 2·half) int64
        ``tokens[:, half:] == tokens[:, :half]``.
    """
    b = as_positive_int(batch, "batch", maximum=LARGEST)
    h = as_positive_int(half, "half", minimum=2, maximum=LARGEST)
    v = as_positive_int(vocab_size, "vocab_size", minimum=2, maximum=LARGEST)
    first = _random_half(np.random.default_rng(as_seed(seed)), b, h, v)
    return np.concatenate([first, first], axis=1)


def induction_batch(
    rng: np.random.Generator, batch: int, n_ctx: int, vocab_size: int, *, shortest: int = 2
) -> np.ndarray:
    """A training batch: random tokens, each row ending with a random-length segment said twice.

    A row is ``n_ctx − 2L`` random tokens, then ``L`` random tokens, then the same ``L`` again,
    with ``L`` drawn between ``shortest`` and ``n_ctx // 2`` for each row. Because the repeat
    starts at a different place in each row, no head can find "the token after the last time
    this token appeared" by its position alone: the model must grow the two-head circuit. (With
    the repeat always at the same offset, a single layer-1 head learns that offset instead.)

    Returns
    -------
    (batch, n_ctx) int64
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a NumPy generator, np.random.default_rng(seed), got {rng!r:.60}")
    b = as_positive_int(batch, "batch", maximum=LARGEST)
    n = as_positive_int(n_ctx, "n_ctx", minimum=4, maximum=LARGEST)
    longest = n // 2
    low = as_positive_int(shortest, "shortest", minimum=1)
    if low > longest:
        raise ValueError(f"shortest={low} is longer than half of n_ctx={n}")
    tokens = _random_half(rng, b, n, as_positive_int(vocab_size, "vocab_size", minimum=2, maximum=LARGEST))
    lengths = rng.integers(low, longest + 1, size=b)
    for row, length in enumerate(lengths):
        tokens[row, n - length :] = tokens[row, n - 2 * length : n - length]
    return tokens


# --- scores from attention weights ------------------------------------------------------------


def _as_weights(weights: npt.ArrayLike) -> np.ndarray:
    """Weights as (n_layers, B, n_heads, n, n); (n_layers, n_heads, n, n) is a batch of one."""
    w = as_real_array(weights, "weights")
    if w.ndim == 4:
        w = w[:, None]
    if w.ndim != 5 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 2:
        raise ValueError(
            "weights must have shape (n_layers, batch, n_heads, n, n) as DecoderOutput.weights, or "
            f"(n_layers, n_heads, n, n) for one sequence, with n ≥ 2; got shape {np.shape(weights)}"
        )
    return as_distributions(w, "weights")  # each query's weights over the keys: probabilities


def previous_token_scores(weights: npt.ArrayLike) -> np.ndarray:
    """Each head's mean weight on the key just before the query.

    Parameters
    ----------
    weights : (n_layers, B, n_heads, n, n) or (n_layers, n_heads, n, n)
        Attention weights, rows = queries (:attr:`attnlib.decoder.DecoderOutput.weights`).

    Returns
    -------
    (n_layers, n_heads)
        The mean of ``weights[..., i, i − 1]`` over queries ``i = 1 … n−1`` and the batch: 1 for a
        perfect previous-token head.
    """
    w = _as_weights(weights)
    n = w.shape[-1]
    return w[..., np.arange(1, n), np.arange(n - 1)].mean(axis=(1, 3))


def induction_targets(tokens: npt.ArrayLike) -> np.ndarray:
    """Where an induction head looks: for each query, the keys right after an earlier occurrence.

    Parameters
    ----------
    tokens : (B, n) or (n,) integers

    Returns
    -------
    (B, n, n) bool
        ``[b, i, j]`` is True when ``tokens[b, j − 1] == tokens[b, i]`` and ``j ≤ i`` (the token
        after an earlier occurrence of the current token). A query whose token has not appeared
        before has no target.
    """
    t = as_whole_array(tokens, "tokens")
    if t.ndim not in (1, 2) or t.shape[-1] == 0:
        raise ValueError(f"tokens must be integer token ids of shape (B, n) or (n,), got {t.dtype} {t.shape}")
    t = t.reshape(-1, t.shape[-1])
    n = t.shape[1]
    same = t[:, :, None] == t[:, None, :-1]  # [b, i, j−1]: the key before j holds the query's token
    targets = np.zeros((t.shape[0], n, n), dtype=bool)
    targets[:, :, 1:] = same & np.tri(n, n - 1, k=-1, dtype=bool)  # the earlier token j − 1 < i
    return targets


def induction_scores(weights: npt.ArrayLike, tokens: npt.ArrayLike) -> np.ndarray:
    """Each head's mean weight on the tokens that followed earlier occurrences of the current token.

    On :func:`repeated_sequences`, query ``i`` of the second half puts weight on key
    ``i − half + 1``: the token after the current token's first appearance.

    Parameters
    ----------
    weights : (n_layers, B, n_heads, n, n) or (n_layers, n_heads, n, n)
    tokens : (B, n) or (n,) integers
        The tokens the weights were computed on.

    Returns
    -------
    (n_layers, n_heads)
        For each query whose token appeared before, the total weight on the keys of
        :func:`induction_targets`, averaged over those queries (and the batch): 1 for a perfect
        induction head. 0 when no query has a target.
    """
    w = _as_weights(weights)
    targets = induction_targets(tokens)
    if targets.shape != (w.shape[1], *w.shape[-2:]):
        raise ValueError(
            f"tokens of shape {np.shape(tokens)} do not match weights of shape {np.shape(weights)} "
            "(one sequence of n tokens per batch row)"
        )
    has_target = targets.any(axis=-1)  # (B, n)
    if not has_target.any():
        return np.zeros(w.shape[0:3:2])
    on_target = (w * targets[None, :, None]).sum(axis=-1)  # (n_layers, B, n_heads, n)
    return (on_target * has_target[None, :, None]).sum(axis=(1, 3)) / has_target.sum()


# --- losses -----------------------------------------------------------------------------------


def half_losses(position_losses: npt.ArrayLike, half: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean loss on the first half's tokens and on the repeated half's.

    Parameters
    ----------
    position_losses : (..., 2·half − 1)
        The loss of each prediction (position ``i`` predicts token ``i + 1``), as
        :func:`attnlib.decoder.next_token_losses` or ``DecoderRun.position_losses`` give.
    half : int

    Returns
    -------
    first, repeated : (...)
        ``first``: tokens ``1 … half − 1``, which nothing before them predicts (``≈ ln(vocab)``
        for a model that learned the task). ``repeated``: tokens ``half + 1 … 2·half − 1``, each
        the token after an earlier occurrence of the one before it. Token ``half`` (the repeat's
        first) is in neither: the token before it has not appeared yet.
    """
    losses = as_real_array(position_losses, "position_losses")
    h = as_positive_int(half, "half", minimum=2)
    if losses.shape[-1] != 2 * h - 1:
        raise ValueError(
            f"position_losses must have 2·half − 1 = {2 * h - 1} entries on its last axis, "
            f"got shape {losses.shape}"
        )
    return losses[..., : h - 1].mean(axis=-1), losses[..., h:].mean(axis=-1)


def in_context_score(position_losses: npt.ArrayLike, half: int) -> np.ndarray:
    """Olsson et al.'s in-context-learning score: the loss late in the sequence minus early.

    Here "late" is the repeated half and "early" the first half (:func:`half_losses`): about 0
    before the induction heads form, about ``−ln(vocab)`` once they copy perfectly.
    """
    first, repeated = half_losses(position_losses, half)
    return repeated - first


def phase_change_step(repeated_half_loss: npt.ArrayLike, vocab_size: int, *, window: int = 25) -> int | None:
    """The first step at which the repeated half's loss has fallen below half of ``ln(vocab_size)``.

    The loss is averaged over ``window`` steps first (the running mean of the steps ``s − window
    + 1 … s``), so one lucky batch does not count.

    Parameters
    ----------
    repeated_half_loss : (steps,)
        The loss on the repeated half at each step, such as ``InductionRun.repeated_half_loss``.
    vocab_size : int
    window : int

    Returns
    -------
    int or None
        The step, or None if the loss never fell that far.
    """
    losses = as_real_array(repeated_half_loss, "repeated_half_loss")
    v = as_positive_int(vocab_size, "vocab_size", minimum=2)
    w = as_positive_int(window, "window")
    if losses.ndim != 1 or losses.size < w:
        raise ValueError(
            f"repeated_half_loss must be one loss per step, at least window={w}, got shape {losses.shape}"
        )
    running = np.convolve(losses, np.ones(w) / w, mode="valid")  # running[k]: steps k … k + w − 1
    below = np.flatnonzero(running < np.log(v) / 2)
    return int(below[0]) + w - 1 if below.size else None


def earlier_token_mass(
    config: DecoderConfig, params: Mapping[str, npt.ArrayLike], tokens: npt.ArrayLike
) -> np.ndarray:
    """The probability each prediction puts on tokens that already appeared in the sequence.

    A model that has learned "the next token is probably one I have already seen" without knowing
    which one (a bag of earlier tokens, the plateau before induction heads form) puts much of its
    probability there; so does an induction head, on exactly the right one.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    tokens : (B, n) or (n,) integers

    Returns
    -------
    (B, n − 1)
        ``[b, i]``: the total probability that position ``i``'s prediction (of token ``i + 1``)
        puts on the tokens among ``tokens[b, 0 … i]``, aligned with
        :func:`attnlib.decoder.next_token_losses` (so :func:`half_losses` averages it by half).
    """
    p = check_parameters(config, params)
    t = check_tokens(config, tokens)
    probs = np.exp(log_softmax(forward(config, p, t).logits[:, :-1]))  # (B, n − 1, vocab)
    n = t.shape[1]
    seen = np.zeros(probs.shape, dtype=bool)
    rows = np.arange(t.shape[0])
    for i in range(n - 1):  # the tokens up to position i, cumulatively
        if i:
            seen[:, i] = seen[:, i - 1]
        seen[rows, i, t[:, i]] = True
    return (probs * seen).sum(axis=-1)


def _halves(tokens: np.ndarray) -> int:
    if tokens.shape[1] % 2 or tokens.shape[1] < 4:
        raise ValueError(
            f"tokens must have an even length of at least 4 (two halves), got shape {tokens.shape}"
        )
    return tokens.shape[1] // 2


class Ablation(NamedTuple):
    """The repeated half's loss with every head, and with each head zeroed in turn."""

    baseline: float
    losses: np.ndarray  # (n_layers, n_heads)


def ablation_losses(
    config: DecoderConfig, params: Mapping[str, npt.ArrayLike], tokens: npt.ArrayLike
) -> Ablation:
    """The loss on the repeated half of ``tokens`` with each head's output zeroed.

    Parameters
    ----------
    config : DecoderConfig
    params : dict of str to array
    tokens : (B, 2·half) integers
        Sequences whose second half repeats the first (:func:`repeated_sequences`).

    Returns
    -------
    Ablation
        ``baseline``: the loss with every head; ``losses[layer, head]``: with that head zeroed.
    """
    p = check_parameters(config, params)
    t = check_tokens(config, tokens)
    half = _halves(t)

    def repeated_loss(ablate: tuple[tuple[int, int], ...]) -> float:
        return float(half_losses(next_token_losses(config, p, t, ablate=ablate).mean(axis=0), half)[1])

    losses = np.array(
        [
            [repeated_loss(((layer, head),)) for head in range(config.n_heads)]
            for layer in range(config.n_layers)
        ]
    )
    return Ablation(repeated_loss(()), losses)


# --- composition from the weights -------------------------------------------------------------


def _head_matrices(
    config: DecoderConfig, p: dict[str, np.ndarray], layer: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each head's QK and OV circuits of ``layer``: (n_heads, d_model, d_model) twice.

    With row vectors, head ``h``'s score of query ``x_i`` for key ``x_j`` is ``x_i W_QK x_jᵀ``
    with ``W_QK = W_q^h (W_k^h)ᵀ``, and it writes ``(weighted x) W_OV`` with ``W_OV = W_v^h W_o^h``.
    """
    d, dh, H, group = config.d_model, config.d_head, config.n_heads, config.group_size
    name = f"layer{layer}."
    W_q = p[name + "W_q"].reshape(d, H, dh).transpose(1, 0, 2)  # (H, d_model, d_head)
    W_k = np.repeat(p[name + "W_k"].reshape(d, config.kv_heads, dh).transpose(1, 0, 2), group, axis=0)
    W_v = np.repeat(p[name + "W_v"].reshape(d, config.kv_heads, dh).transpose(1, 0, 2), group, axis=0)
    W_o = p[name + "W_o"].reshape(H, dh, d)  # (H, d_head, d_model)
    return W_q @ W_k.transpose(0, 2, 1), W_v @ W_o


def composition_scores(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    *,
    kind: str = "K",
    writer_layer: int = 0,
    reader_layer: int = 1,
) -> np.ndarray:
    """Elhage et al.'s composition scores between every writer head and every reader head.

    For K-composition, with the reader's QK circuit ``W_QK`` and the writer's OV circuit
    ``W_OV`` (both d_model × d_model, row vectors: see the module's docstring)::

        score = ‖W_QK W_OVᵀ‖_F / (‖W_QK‖_F ‖W_OV‖_F)

    It is large when what the writer head writes lands in the directions the reader's keys read.
    Q-composition uses ``W_OV W_QK``, V-composition ``W_OV(writer) W_OV(reader)``. The scores read
    the weights only (LayerNorms and MLPs are not included); compare them with
    :func:`composition_baseline`, the score of random matrices of the same shapes.

    Returns
    -------
    (n_heads, n_heads)
        ``[writer head, reader head]``, between 0 and 1; 0 where either circuit is zero.
    """
    p = check_parameters(config, params)
    if kind not in ("K", "Q", "V"):
        raise ValueError(f"kind must be 'K', 'Q' or 'V', got {kind!r}")
    for name, layer in (("writer_layer", writer_layer), ("reader_layer", reader_layer)):
        if not (is_number(layer, whole=True) and 0 <= layer < config.n_layers):
            raise ValueError(f"{name} must be a layer from 0 to {config.n_layers - 1}, got {layer!r}")
    if writer_layer >= reader_layer:
        raise ValueError(
            f"writer_layer={writer_layer} must come before reader_layer={reader_layer}: a head reads "
            "only what earlier layers wrote"
        )
    _, ov_writer = _head_matrices(config, p, writer_layer)
    qk_reader, ov_reader = _head_matrices(config, p, reader_layer)
    return _scores(kind, qk_reader, ov_reader, ov_writer)


def _scores(kind: str, qk_reader: np.ndarray, ov_reader: np.ndarray, ov_writer: np.ndarray) -> np.ndarray:
    """``[writer, reader]`` scores from the circuits, (heads, d_model, d_model) each."""
    reader = ov_reader if kind == "V" else qk_reader
    scores = np.zeros((ov_writer.shape[0], reader.shape[0]))
    for w, ov in enumerate(ov_writer):
        for r, m in enumerate(reader):
            sizes = np.linalg.norm(ov) * np.linalg.norm(m)
            if sizes > 0:  # a head whose circuit is zero composes with nothing: score 0
                # K: the score x_i W_QK (y W_OV)ᵀ reads the writer's output through the keys;
                # Q: (y W_OV) W_QK x_jᵀ through the queries; V: y W_OV(writer) W_OV(reader)
                product = m @ ov.T if kind == "K" else ov @ m
                scores[w, r] = np.linalg.norm(product) / sizes
    return scores


def token_k_circuit(
    config: DecoderConfig,
    params: Mapping[str, npt.ArrayLike],
    writer: tuple[int, int],
    reader: tuple[int, int],
) -> np.ndarray:
    """The K-composition of two heads in token space: ``embed W_QK(reader) W_OV(writer)ᵀ embedᵀ``.

    Entry ``[a, b]`` is the part of the reader head's score, for a query holding token ``a``, that
    comes from the writer head having copied token ``b`` into the key's position (row vectors:
    see the module's docstring). When the writer is a previous-token head, ``b`` is the token
    before the key, and a matrix whose rows peak on the diagonal makes the reader an induction
    head: a query for ``a`` looks at the keys that follow an earlier ``a``. Like
    :func:`composition_scores` it reads the weights only; it is exact for a model without
    LayerNorm whose residual stream holds only the token embeddings (``positions="attention"``;
    with ``positions="residual"`` their share of each term is left out).

    Parameters
    ----------
    writer, reader : (layer, head)
        The writer must be in an earlier layer than the reader.

    Returns
    -------
    (vocab_size, vocab_size)
        ``[query token, token the writer copied into the key]``.
    """
    p = check_parameters(config, params)
    if config.layer_norm:
        raise ValueError("token_k_circuit needs a model without LayerNorm: the circuit is not linear")
    heads = {name: _as_head(config, head, name) for name, head in (("writer", writer), ("reader", reader))}
    if heads["writer"][0] >= heads["reader"][0]:
        raise ValueError(
            f"writer={writer} must be in an earlier layer than reader={reader}: a head reads only "
            "what earlier layers wrote"
        )
    _, ov_writer = _head_matrices(config, p, heads["writer"][0])
    qk_reader, _ = _head_matrices(config, p, heads["reader"][0])
    embed = p["embed"]
    return embed @ qk_reader[heads["reader"][1]] @ ov_writer[heads["writer"][1]].T @ embed.T


def token_ov_circuit(
    config: DecoderConfig, params: Mapping[str, npt.ArrayLike], head: tuple[int, int]
) -> np.ndarray:
    """What a head copies, in token space: ``embed W_OV unembed``.

    Entry ``[a, b]`` is how much the head, attending to a key holding token ``a``, raises the
    logit of token ``b`` through its direct path to the output (row vectors: see the module's
    docstring). A matrix whose rows peak on the diagonal copies: looking at an ``a`` makes the
    model predict ``a``. It reads the weights only and leaves out what the head's value reads
    from earlier heads; exact for the direct path of a model without LayerNorm.

    Returns
    -------
    (vocab_size, vocab_size)
        ``[token attended to, token predicted]``.
    """
    p = check_parameters(config, params)
    if config.layer_norm:
        raise ValueError("token_ov_circuit needs a model without LayerNorm: the circuit is not linear")
    layer, index = _as_head(config, head, "head")
    _, ov = _head_matrices(config, p, layer)
    return p["embed"] @ ov[index] @ p["unembed"]


def _as_head(config: DecoderConfig, head: object, name: str) -> tuple[int, int]:
    """``head`` as (layer, head) of ``config``'s model (a tuple, a list or an array of two whole
    numbers), or a ValueError naming ``name``."""
    if isinstance(head, list) or (isinstance(head, np.ndarray) and head.ndim == 1):
        head = tuple(head)
    if not (
        isinstance(head, tuple)
        and len(head) == 2
        and all(is_number(i, whole=True) for i in head)
        and 0 <= head[0] < config.n_layers
        and 0 <= head[1] < config.n_heads
    ):
        raise ValueError(
            f"{name} must be (layer, head) with layer < {config.n_layers} and head < "
            f"{config.n_heads}, got {head!r}"
        )
    return int(head[0]), int(head[1])


def composition_baseline(
    config: DecoderConfig, *, kind: str = "K", samples: int = 200, seed: int = 0
) -> float:
    """The mean composition score of random Gaussian weights of ``config``'s shapes.

    A trained pair of heads that compose scores well above it; unrelated heads score near it.
    """
    config = as_config(config)
    if kind not in ("K", "Q", "V"):
        raise ValueError(f"kind must be 'K', 'Q' or 'V', got {kind!r}")
    count = as_positive_int(samples, "samples", maximum=LARGEST)
    rng = np.random.default_rng(as_seed(seed))
    d, dh = config.d_model, config.d_head
    values = []
    for _ in range(count):
        q, k, v1, v2 = (rng.normal(size=(d, dh)) for _ in range(4))
        o1, o2 = rng.normal(size=(dh, d)), rng.normal(size=(dh, d))
        qk, ov_w, ov_r = q @ k.T, v1 @ o1, v2 @ o2
        values.append(_scores(kind, qk[None], ov_r[None], ov_w[None])[0, 0])
    return float(np.mean(values))


# --- the committed run ------------------------------------------------------------------------

#: The committed run's file, in the package's data directory.
RUN_FILE = "induction_run.npz"
#: Its SHA-256; ``tools/train_induction.py`` prints it when it writes a new run. The committed run's
#: CPU was not recorded; a re-run on another CPU gives the same run to 2e-11 and another hash.
RUN_SHA256 = "d626f8efc4ccec777ba15b8703b43805bfe740d34cba91a7a1c8ac8247aa612f"


@dataclass(frozen=True)
class InductionRun:
    """The committed training run of ``tools/train_induction.py``.

    Attributes
    ----------
    config : DecoderConfig
    params : dict of str to ndarray
        The parameters after training.
    half : int
        The probe's and the evaluation's half length (sequences of ``2·half`` tokens).
    settings : dict
        How it was trained: ``steps``, ``batch``, ``learning_rate``, ``seed``, ``shortest``.
    loss : (steps,)
        The training loss before each step's update.
    first_half_loss, repeated_half_loss : (steps,)
        The loss on the evaluation batch's first half and repeated half before each update
        (:func:`half_losses`).
    snapshot_steps : (n_snapshots,) int
    probe : (2·half,) int
        A fixed repeated sequence (:func:`repeated_sequences`).
    probe_weights : (n_snapshots, n_layers, n_heads, 2·half, 2·half)
        Every head's weights on ``probe`` at each snapshot.
    """

    config: DecoderConfig
    params: dict[str, np.ndarray]
    half: int
    settings: dict[str, float]
    loss: np.ndarray
    first_half_loss: np.ndarray
    repeated_half_loss: np.ndarray
    snapshot_steps: np.ndarray
    probe: np.ndarray
    probe_weights: np.ndarray

    @property
    def in_context_score(self) -> np.ndarray:
        """The repeated half's loss minus the first half's, at every step."""
        return self.repeated_half_loss - self.first_half_loss


def load_induction_run(path: str | None = None) -> InductionRun:
    """Load the committed run (or the ``.npz`` at ``path``, as ``tools/train_induction.py`` writes it).

    The committed file's SHA-256 is checked against :data:`RUN_SHA256`.
    """
    if path is None:
        raw = read_committed(
            "attention_lessons.l14_induction_heads", RUN_FILE, RUN_SHA256, "tools/train_induction.py"
        )
        return run_from_arrays(np.load(io.BytesIO(raw)))
    return read_npz(path, run_from_arrays, "a run as tools/train_induction.py writes it")


def run_from_arrays(arrays: Mapping[str, np.ndarray]) -> InductionRun:
    """An :class:`InductionRun` from the arrays ``tools/train_induction.py`` saves."""
    arrays = as_mapping(arrays)
    config = DecoderConfig(  # a size saved as 2.5 is refused by name, not cut to 2
        **{name: _saved_number(arrays, f"config.{name}") for name in _CONFIG_FIELDS},
        positions=str(arrays["config.positions"]),
    )
    params = {name.removeprefix("param."): arrays[name] for name in arrays if name.startswith("param.")}
    half = as_positive_int(_saved_number(arrays, "half"), "half", minimum=2)
    steps = as_whole_array(arrays["snapshot_steps"], "snapshot_steps", minimum=0)
    probe = as_whole_array(arrays["probe"], "probe", minimum=0)
    weights = as_real_array(arrays["probe_weights"], "probe_weights")
    expected = (len(steps), config.n_layers, config.n_heads, 2 * half, 2 * half)
    if steps.ndim != 1 or probe.shape != (2 * half,) or weights.shape != expected:
        raise ValueError(
            f"the run's snapshot_steps {steps.shape}, probe {probe.shape} and probe_weights "
            f"{weights.shape} do not fit its config and half={half}: expected (s,), {(2 * half,)}, {expected}"
        )
    as_distributions(weights, "probe_weights")  # each row sums to 1
    return InductionRun(
        config,
        check_parameters(config, params),
        half,
        {
            name.removeprefix("setting."): arrays[name].item()
            for name in arrays
            if name.startswith("setting.")
        },
        arrays["loss"],
        arrays["first_half_loss"],
        arrays["repeated_half_loss"],
        steps,
        probe,
        weights,
    )


def _saved_number(arrays: Mapping[str, np.ndarray], name: str) -> object:
    """The number saved as ``name`` (a 0-d array), as Python has it: ``2.5`` stays a float."""
    return np.asarray(arrays[name]).item()


_CONFIG_FIELDS = ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_mlp")
