"""Self-checks of lesson 16, a real language model: the learner writes the pieces of a Llama block
as functions, and each check calls the learner's function on the exercise's own inputs (the real
model's tensors) and compares what it returns with :mod:`attnlib.model.llama`'s.

- :func:`check_rms_norm` and its table :data:`RMS_NORM_MISTAKES`;
- :func:`check_swiglu` and :data:`SWIGLU_MISTAKES`;
- :func:`check_rotate` and :data:`ROTATE_MISTAKES`;
- :func:`check_attention` and :data:`ATTENTION_MISTAKES` (grouped-query attention, lesson 15);
- :func:`check_block` and :data:`BLOCK_MISTAKES`;
- each check keeps the learner's function, when it passes, in the lesson's own dictionary
  (``keep=your_parts``), under the part of :class:`attnlib.model.llama.Parts` it is, and takes it out
  when a later check of the same part fails: what the lesson then runs the model on.

Each check runs the learner's function on several cases: the lesson's prompt pass (``n`` queries,
positions ``0 … n − 1``) and what the model also runs, decoding with the KV cache (one query, the
last token's, at a later position) and, for the rotation, scattered positions, for the attention,
a mask it is given. A function right on the prompt only would pass a prompt-only check and then
break the model's answer. Each row of a table *makes* its mistake on a case's inputs
(:class:`~attention_lessons.kit.checks.mistakes.Mistake`); when the learner's function returns what a row
returns, the check names that mistake. The right numbers are never shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from attention_lessons.kit.checks.functions import kept, listed, not_a_function
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import numpy_index, shape_text
from attnlib.core import softmax
from attnlib.model import llama
from attnlib.positions import rope
from attnlib.validation import as_real

__all__ = [
    "ATTENTION_MISTAKES",
    "BLOCK_MISTAKES",
    "RMS_NORM_MISTAKES",
    "ROTATE_MISTAKES",
    "SWIGLU_MISTAKES",
    "FunctionExercise",
    "attention_sublayer",
    "check_attention",
    "check_block",
    "check_function",
    "check_rms_norm",
    "check_rotate",
    "check_swiglu",
]

#: Relative tolerance of a learner's float32 (or float64) result against attnlib's float32 one.
RTOL = 1e-3


@dataclass(frozen=True)
class FunctionExercise:
    """One call of a learner's function: what it computes, its inputs, and attnlib's answer.

    Attributes
    ----------
    name : str
        The learner's function, as the lesson names it (``my_rms_norm``).
    what : str
        What it computes, for the messages (``RMSNorm``).
    args : tuple
        The positional inputs (float32 arrays, numbers); the learner's function receives copies.
    kwargs : dict
        The keyword inputs.
    right : np.ndarray
        attnlib's result on these inputs.
    case : str
        Which of the check's cases this is, for the messages: ``""`` for the lesson's own inputs
        (the prompt pass), else a phrase such as ``"decoding (one query at position 37)"``.
    weights : np.ndarray or None
        For a function that returns ``(output, weights)``: attnlib's weights; ``None`` for a
        function that returns one array.
    """

    name: str
    what: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    right: np.ndarray = field(default_factory=lambda: np.zeros(0))
    case: str = ""
    weights: np.ndarray | None = None

    @property
    def atol(self) -> float:
        """The absolute tolerance: :data:`RTOL` of the right result's largest entry."""
        return RTOL * max(1.0, float(np.max(np.abs(self.right))))


def _copies(values: Sequence[object]) -> list[object]:
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _in_case(ex: FunctionExercise, lead: str, rest: str) -> CheckResult:
    """``lead: rest``, with the case after ``lead`` unless it is the lesson's own inputs."""
    return failed(f"{lead}, {ex.case}: {rest}" if ex.case else f"{lead}: {rest}")


def _result(returned: object, ex: FunctionExercise) -> tuple[np.ndarray, np.ndarray | None] | CheckResult:
    """The learner's result as float64 arrays (the output; the weights where a pair is due), or why not."""
    if returned is None:
        return failed(f"Nothing returned: {ex.name} returns None; end it with `return` and the {ex.what}.")
    weights = None
    if ex.weights is not None:
        if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
            return failed(
                f"Return the pair (output, weights): {ex.name} returned {type(returned).__name__}, "
                "and the model reads both (it keeps the weights to draw them), so end with "
                "`return output, weights`."
            )
        returned, weights = returned
    try:
        arr = np.asarray(returned, dtype=np.float64)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        return failed(f"Not an array: {ex.name} returned {type(returned).__name__}, not numbers.")
    return arr, weights


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return bool(a.shape == b.shape and np.allclose(a, b, rtol=RTOL, atol=atol))


def _check_case(
    answer: Callable, ex: FunctionExercise, mistakes: Sequence[Mistake[FunctionExercise]]
) -> CheckResult | None:
    """``None`` when the learner's function gives attnlib's result on this case, else why not."""
    try:
        returned = answer(*_copies(ex.args), **{k: _copies([v])[0] for k, v in ex.kwargs.items()})
    except Exception as error:  # a learner's function may raise anything; the message says what
        return _in_case(ex, f"Your {ex.name} raised {type(error).__name__}", _one_line(error))
    read = _result(returned, ex)
    if isinstance(read, CheckResult):
        return read
    arr, weights = read
    if arr.shape != ex.right.shape:
        return _in_case(
            ex,
            "Wrong shape",
            f"{ex.what} of these inputs has shape {shape_text(ex.right.shape)}; "
            f"{ex.name} returned {shape_text(arr.shape)}.",
        )
    if not np.isfinite(arr).all():
        return _in_case(
            ex,
            "Not finite",
            f"{ex.name} returned NaN or an infinity; every entry of {ex.what} is finite here.",
        )
    if not _close(arr, ex.right, ex.atol):

        def fits(wrong: object) -> bool:
            candidate = np.asarray(wrong, dtype=np.float64)
            return _close(arr, candidate, ex.atol) and not _close(candidate, ex.right, ex.atol)

        found = matching(mistakes, ex, fits)
        if found:
            return failed(describe("", found, ex))
        off = np.unravel_index(int(np.argmax(np.abs(arr - ex.right))), arr.shape)
        return _in_case(
            ex,
            "Not yet",
            f"{ex.name} differs from attnlib's {ex.what}, most at numpy index {numpy_index(off)}; "
            "compare it with the formula line by line.",
        )
    if ex.weights is not None and not _close(weights, ex.weights, RTOL):
        if weights.shape != ex.weights.shape:
            return _in_case(
                ex,
                "The weights have the wrong shape",
                f"{shape_text(weights.shape)}, not {shape_text(ex.weights.shape)} (heads, queries, keys); "
                "return (output, weights) in that order.",
            )
        return _in_case(
            ex,
            "Your output is right but your weights are not",
            "return the softmax of the masked, scaled "
            "scores (each row summing to 1), the weights your output was made with.",
        )
    return None


def check_function(
    answer: object,
    cases: Sequence[FunctionExercise],
    mistakes: Sequence[Mistake[FunctionExercise]],
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Call the learner's function on each case and compare its result with ``case.right``.

    Parameters
    ----------
    answer : callable
        The learner's function.
    cases : sequence of FunctionExercise
        The inputs and the right results: the lesson's own inputs first, then what else the model
        runs the function on (decoding with the cache, other positions, a mask).
    mistakes : sequence of Mistake
        The table whose rows make the likely mistakes on a case.
    keep : dict, optional
        The lesson's record of the learner's functions that passed: the function is put in it
        under its part (``my_rms_norm`` under ``"rms_norm"``) when it passes, and its part taken
        out when it fails (the learner has changed the function since), so that the model never
        runs a function whose last check failed.

    Returns
    -------
    CheckResult
        Passed when every entry of every case is within ``case.atol`` of attnlib's; otherwise, for
        the first case that fails, the shape, the error the function raised, the mistake of the
        table that gives these numbers, or the first entry that is off.
    """
    first = cases[0]
    result = not_a_function(answer, first.name, "…")
    for ex in cases if result is None else ():
        result = _check_case(answer, ex, mistakes)
        if result is not None:
            break
    if result is None:
        also = [ex.case for ex in cases[1:]]
        result = passed(
            f"Correct: {first.name} gives attnlib's {first.what} on these inputs"
            + (f" and {also[0]}" if len(also) == 1 else f", {listed(also)}" if also else "")
            + f", every entry within {RTOL:g}."
        )
    return kept(answer, first.name, result, keep)


def _float32(value: object, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float32)


def _positive(value: object, name: str) -> float:
    """A finite number above 0 that the exercise passes (ε, the rotation's base), or an error naming it."""
    number = as_real(value, name)
    if number <= 0:
        raise ValueError(f"{name} must be a finite number above 0, got {value}")
    return number


# --- RMSNorm ------------------------------------------------------------------------------------


def _mean_square(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x.astype(np.float64) ** 2, axis=axis, keepdims=True)


def _rms_wrong(normalise: Callable[[np.ndarray, float], np.ndarray], *, weight: str = "times") -> Callable:
    def wrong(ex: FunctionExercise) -> np.ndarray:
        x, w, eps = ex.args
        y = normalise(x.astype(np.float64), eps)
        return {"times": y * w, "none": y, "one plus": y * (1 + w)}[weight]

    return wrong


#: What a learner's RMSNorm may compute instead of ``x / sqrt(mean(x²) + eps) · weight``.
RMS_NORM_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You subtracted the mean (that is LayerNorm)",
        "RMSNorm divides by the root of the mean square and subtracts nothing: x / sqrt(mean(x²) + eps).",
        _rms_wrong(lambda x, eps: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)),
    ),
    Mistake(
        "You left out the weight",
        "after dividing, multiply by the layer's weight, one number per feature.",
        _rms_wrong(lambda x, eps: x / np.sqrt(_mean_square(x) + eps), weight="none"),
    ),
    Mistake(
        "You multiplied by 1 + weight",
        "this file stores the weight itself (Gemma's files store weight − 1): multiply by the weight.",
        _rms_wrong(lambda x, eps: x / np.sqrt(_mean_square(x) + eps), weight="one plus"),
    ),
    Mistake(
        "You divided by the mean square, not by its square root",
        "the root mean square is sqrt(mean(x²) + eps).",
        _rms_wrong(lambda x, eps: x / (_mean_square(x) + eps)),
    ),
    Mistake(
        "You divided by the root of the sum of squares, not of their mean",
        "take the mean of x² over the features (divide the sum by d_model) before the square root.",
        _rms_wrong(lambda x, eps: x / np.sqrt(np.sum(x**2, axis=-1, keepdims=True) + eps)),
    ),
    Mistake(
        "You normalised over the tokens (axis 0), not over the features",
        "each token's vector is normalised on its own: the mean is over the last axis.",
        _rms_wrong(lambda x, eps: x / np.sqrt(_mean_square(x, axis=0) + eps)),
    ),
    Mistake(
        "You divided by the standard deviation (x.std()), which subtracts the mean inside",
        "RMSNorm's root is of the mean of x² itself, not of the variance: sqrt(mean(x²) + eps).",
        _rms_wrong(lambda x, eps: x / np.sqrt(x.var(-1, keepdims=True) + eps)),
    ),
    Mistake(
        "You added eps outside the square root",
        "eps goes under the root, sqrt(mean(x²) + eps); it matters for rows as small as √eps, as here.",
        _rms_wrong(lambda x, eps: x / (np.sqrt(_mean_square(x)) + eps)),
    ),
)


def check_rms_norm(
    answer: object,
    x: object,
    weight: object,
    eps: float,
    *,
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Check the learner's ``rms_norm(x, weight, eps)`` against :func:`attnlib.model.llama.rms_norm`.

    Parameters
    ----------
    answer : callable
        ``answer(x, weight, eps)`` → (n, d_model).
    x : (n, d_model)
        The rows to normalise (the lesson passes the embeddings of a prompt).
    weight : (d_model,)
        The layer's weight.
    eps : float
        The small number under the root (the file's ``norm_eps``).
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    x32, w32 = _float32(x, "x"), _float32(weight, "weight")
    if x32.ndim != 2 or w32.shape != x32.shape[-1:]:
        raise ValueError(f"x must be (n, d_model) and weight (d_model,), got {x32.shape} and {w32.shape}")
    eps = _positive(eps, "eps")
    small = x32 / np.sqrt(_mean_square(x32) / eps).astype(np.float32)  # every row's RMS is √eps
    cases = [
        FunctionExercise(
            "my_rms_norm", "RMSNorm", (rows, w32, eps),
            right=np.asarray(llama.rms_norm(rows, w32, eps), np.float64), case=case,
        )
        for rows, case in ((x32, ""), (small, "on rows as small as √eps (the same rows, scaled)"))
    ]  # fmt: skip
    return check_function(answer, cases, RMS_NORM_MISTAKES, keep)


# --- SwiGLU -------------------------------------------------------------------------------------


def _silu(z: np.ndarray) -> np.ndarray:
    return z / (1 + np.exp(-z))


def _gelu(z: np.ndarray, *, tanh: bool = False) -> np.ndarray:
    """GELU, exact (``z · Φ(z)``) or GPT-2's tanh approximation: two ways a learner writes it."""
    if tanh:
        return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
    return 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))


def _mlp_wrong(combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable:
    def wrong(ex: FunctionExercise) -> np.ndarray:
        x, W_gate, W_up, W_down = (a.astype(np.float64) for a in ex.args)
        return combine(x @ W_gate, x @ W_up) @ W_down

    return wrong


#: What a learner's SwiGLU may compute instead of ``(silu(x W_gate) ⊙ x W_up) W_down``.
SWIGLU_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You put the SiLU on the up projection, not on the gate",
        "the gate goes through SiLU: silu(x W_gate) ⊙ (x W_up).",
        _mlp_wrong(lambda g, u: g * _silu(u)),
    ),
    Mistake(
        "You used ReLU instead of SiLU",
        "SiLU(z) = z · sigmoid(z) = z / (1 + e^(−z)), smooth and slightly negative below 0.",
        _mlp_wrong(lambda g, u: np.maximum(g, 0) * u),
    ),
    Mistake(
        "You used the sigmoid instead of SiLU",
        "SiLU(z) is z · sigmoid(z): multiply the sigmoid by z itself.",
        _mlp_wrong(lambda g, u: u / (1 + np.exp(-g))),
    ),
    Mistake(
        "You left out the up projection (no gating)",
        "SwiGLU multiplies two projections of x, element by element: silu(x W_gate) ⊙ (x W_up).",
        _mlp_wrong(lambda g, u: _silu(g)),
    ),
    Mistake(
        "You added the two projections instead of multiplying them",
        "the gate multiplies the up projection element by element: silu(x W_gate) ⊙ (x W_up).",
        _mlp_wrong(lambda g, u: _silu(g) + u),
    ),
    Mistake(
        "You used GELU (GPT-2's activation) instead of SiLU",
        "Llama's gate is SiLU(z) = z · sigmoid(z) = z / (1 + e^(−z)); GELU is z · Φ(z), close but not equal.",
        _mlp_wrong(lambda g, u: _gelu(g) * u),
    ),
    Mistake(
        "You used GELU (GPT-2's activation) instead of SiLU",
        "Llama's gate is SiLU(z) = z · sigmoid(z) = z / (1 + e^(−z)); GELU is z · Φ(z), close but not equal.",
        _mlp_wrong(lambda g, u: _gelu(g, tanh=True) * u),
    ),
    Mistake(
        "You took the SiLU of the product",
        "only the gate goes through SiLU, then it multiplies the up projection: silu(x W_gate) ⊙ (x W_up).",
        _mlp_wrong(lambda g, u: _silu(g * u)),
    ),
)


def check_swiglu(
    answer: object,
    x: object,
    W_gate: object,
    W_up: object,
    W_down: object,
    *,
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Check the learner's ``swiglu(x, W_gate, W_up, W_down)`` against :func:`attnlib.model.llama.swiglu`.

    Parameters
    ----------
    answer : callable
        ``answer(x, W_gate, W_up, W_down)`` → (n, d_model).
    x : (n, d_model)
    W_gate, W_up : (d_model, d_mlp)
    W_down : (d_mlp, d_model)
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    args = tuple(
        _float32(a, name) for a, name in ((x, "x"), (W_gate, "W_gate"), (W_up, "W_up"), (W_down, "W_down"))
    )
    x32, g32, u32, d32 = args
    if (
        x32.ndim != 2
        or g32.shape != u32.shape
        or g32.shape[:1] != x32.shape[1:]
        or d32.shape != g32.shape[::-1]
    ):
        raise ValueError(
            "x must be (n, d_model), W_gate and W_up (d_model, d_mlp), W_down (d_mlp, d_model); got "
            f"{x32.shape}, {g32.shape}, {u32.shape}, {d32.shape}"
        )
    right = np.asarray(llama.swiglu(*args), np.float64)
    return check_function(
        answer, [FunctionExercise("my_swiglu", "SwiGLU", args, right=right)], SWIGLU_MISTAKES, keep
    )


# --- the rotation -------------------------------------------------------------------------------


def _rotated(
    ex: FunctionExercise,
    *,
    pairing: str = "half",
    base: float | None = None,
    shift: float = 0.0,
    sign: float = 1.0,
    counted: bool = False,
) -> np.ndarray:
    x, positions, right_base = ex.args
    if counted:  # the positions 0 … n − 1 the prompt has, whatever was given
        positions = np.arange(x.shape[-2])
    angle_positions = sign * (np.asarray(positions, np.float64) + shift)
    return rope(
        x.astype(np.float64), angle_positions, base=right_base if base is None else base, pairing=pairing
    )


def _slow_frequencies(ex: FunctionExercise) -> np.ndarray:
    """Pair ``i`` turned by ``base**(−i/d)`` instead of ``base**(−2i/d)``: the base squared."""
    x, positions, base = ex.args
    return rope(x.astype(np.float64), np.asarray(positions, np.float64), base=base**0.5, pairing="half")


#: What a learner's rotation may compute instead of llama's (pairs ``(i, i + d/2)``, the file's base).
ROTATE_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You rotated adjacent pairs (2i, 2i + 1)",
        'these weights pair dimension i with dimension i + d_head/2 (rotate_half, pairing="half" in '
        "attnlib.positions.rope).",
        lambda ex: _rotated(ex, pairing="interleaved"),
    ),
    Mistake(
        "You used the base 10,000 of the RoPE paper",
        "this model's base is {ex.args[2]:,.0f} (the file's rope.freq_base).",
        lambda ex: _rotated(ex, base=10000.0) if ex.args[2] != 10000.0 else None,
    ),
    Mistake(
        "You rotated the wrong way",
        "pair i at position p turns by +p·θᵢ: (x₁cos − x₂sin, x₁sin + x₂cos).",
        lambda ex: _rotated(ex, sign=-1.0),
    ),
    Mistake(
        "You counted the positions from 1",
        "use the positions given: the first token is at position 0 and is not rotated.",
        lambda ex: _rotated(ex, shift=1.0),
    ),
    Mistake(
        "Your frequencies are base^(−i/d), not base^(−2i/d)",
        "pair i turns by θᵢ = base^(−2i/d_head), i = 0 … d_head/2 − 1.",
        _slow_frequencies,
    ),
    Mistake(
        "Your frequencies are base^(−2i/(d/2)), not base^(−2i/d)",
        "pair i turns by θᵢ = base^(−2i/d_head) with d_head the whole width (i counts the d_head/2 pairs).",
        lambda ex: _rotated(ex, base=ex.args[2] ** 2),
    ),
    Mistake(
        "You ignored positions (you rotated by 0, 1, …, n − 1)",
        "rotate row k by positions[k], the position you are given; with the KV cache the one new "
        "token's query is at a later position than 0.",
        lambda ex: _rotated(ex, counted=True),
    ),
)

#: Where the rotation check also puts the queries: the one token decoding writes, and scattered
#: positions (up to 1,000: float32 angles stay within the check's tolerance).
DECODE_POSITION = 37
SCATTERED_SEED = 16


def check_rotate(
    answer: object,
    x: object,
    positions: object,
    base: float,
    *,
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Check the learner's ``rotate(x, positions, base)`` against :func:`attnlib.model.llama.rotate`.

    Parameters
    ----------
    answer : callable
        ``answer(x, positions, base)`` → (H, n, d_head).
    x : (H, n, d_head)
        Queries or keys of several heads.
    positions : (n,) int
    base : float
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    x32 = _float32(x, "x")
    pos = np.asarray(positions)
    if x32.ndim != 3 or x32.shape[-1] % 2 or pos.shape != x32.shape[1:2] or pos.dtype.kind not in "iu":
        raise ValueError(
            f"x must be (H, n, d_head) with d_head even and positions (n,) integers, got {x32.shape} and "
            f"{pos.shape} {pos.dtype}"
        )
    base = _positive(base, "base")
    n = x32.shape[1]
    scattered = np.sort(np.random.default_rng(SCATTERED_SEED).choice(np.arange(1, 1000), n, replace=False))
    cases = [
        (x32, pos, ""),
        (
            x32[:, -1:],
            np.array([DECODE_POSITION]),
            f"when decoding (one query, at position {DECODE_POSITION})",
        ),
        (x32, scattered, f"at scattered positions ({_positions_text(scattered)})"),
    ]
    exercises = [
        FunctionExercise(
            "my_rotate", "rotation", (rows, at, base),
            right=np.asarray(llama.rotate(rows, at, base), np.float64), case=case,
        )
        for rows, at, case in cases
    ]  # fmt: skip
    return check_function(answer, exercises, ROTATE_MISTAKES, keep)


def _positions_text(positions: np.ndarray) -> str:
    shown = ", ".join(str(int(p)) for p in positions[:4])
    return shown + (", …" if len(positions) > 4 else "")


# --- grouped-query attention --------------------------------------------------------------------


def _gqa(
    ex: FunctionExercise,
    *,
    kv_of: str = "repeat",
    masked: str = "-inf",
    scale: str = "sqrt",
    axis: int = -1,
    causal_from: str = "end",
    given_mask: bool = True,
) -> np.ndarray:
    Q, K, V = (a.astype(np.float64) for a in ex.args)
    mask = ex.kwargs.get("mask") if given_mask else None
    if mask is None:  # causal: the n queries are the last n of the n_k tokens (or, wrongly, the first n)
        n, n_k = Q.shape[1], K.shape[1]
        mask = np.arange(n_k)[None, :] <= np.arange(n_k - n, n_k)[:, None] + (n - n_k) * (
            causal_from == "start"
        )
    group = Q.shape[0] // K.shape[0]
    index = np.arange(Q.shape[0]) // group if kv_of == "repeat" else np.arange(Q.shape[0]) % K.shape[0]
    K, V = K[index], V[index]
    d = Q.shape[-1]
    s = Q @ np.swapaxes(K, -1, -2) * {"sqrt": 1 / np.sqrt(d), "none": 1.0, "d": 1 / d}[scale]
    if masked != "no":
        s = np.where(mask, s, -np.inf if masked == "-inf" else 0.0)
    return softmax(s, axis=axis) @ V


#: What a learner's grouped-query attention may compute instead of llama's.
ATTENTION_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "Query head h took key/value head h mod n_kv_heads",
        "consecutive query heads share a key/value head: head h uses key/value head h // (n_heads / "
        "n_kv_heads), as np.repeat(K, group, axis=0) makes them (np.tile interleaves them).",
        lambda ex: _gqa(ex, kv_of="tile") if ex.args[1].shape[0] > 1 else None,
    ),
    Mistake(
        "You left out the mask",
        "set the scores where the mask is False to −∞ before the softmax (mask=None: causal, each "
        "query sees the keys up to its own token), so no query sees a later key.",
        lambda ex: _gqa(ex, masked="no"),
    ),
    Mistake(
        "You masked by multiplying by 0 (a masked score of 0 still gets weight)",
        "e⁰ = 1, so a key whose score is 0 keeps its share; set masked scores to −∞ "
        "(np.where(mask, scores, -np.inf)), whose exponential is 0.",
        lambda ex: _gqa(ex, masked="zero"),
    ),
    Mistake(
        "Your mask assumes the queries are the first n tokens; with a cache they are the last n",
        "np.tril(np.ones((n, n_k))) lets query i see keys 0 … i; decoding with the KV cache, the one "
        "query is the newest token and sees every cached key. Query i is token n_k − n + i: it sees "
        "keys j ≤ n_k − n + i.",
        lambda ex: _gqa(ex, causal_from="start"),
    ),
    Mistake(
        "You ignored the mask you were given",
        "when mask is an array, use it as it is (True: may attend); build the causal mask only when "
        "mask is None. The model passes windows and sinks as masks.",
        lambda ex: _gqa(ex, given_mask=False) if "mask" in ex.kwargs else None,
    ),
    Mistake(
        "You did not scale the scores",
        "divide the scores by √d_head before the softmax (lesson 04).",
        lambda ex: _gqa(ex, scale="none"),
    ),
    Mistake(
        "You divided the scores by d_head, not by √d_head",
        "the scale is 1/√d_head (lesson 04).",
        lambda ex: _gqa(ex, scale="d"),
    ),
    Mistake(
        "Softmax over the queries (axis −2), not over the keys",
        "each query's weights over the keys sum to 1: softmax along the last axis.",
        lambda ex: _gqa(ex, axis=-2),
    ),
)

#: The window of the mask the attention check also passes in (the model's windows and sinks are masks).
CHECK_WINDOW = 4


def check_attention(
    answer: object,
    Q: object,
    K: object,
    V: object,
    mask: object = None,
    *,
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Check the learner's ``attention(Q, K, V, mask=...)`` against
    :func:`attnlib.model.llama.grouped_query_attention`: the output and the weights.

    Besides the inputs given, the check runs the two other calls the model makes: decoding with
    the KV cache (the last query alone against every key) and, when the inputs given are a whole
    prompt without a mask, a mask passed in (a window of the :data:`CHECK_WINDOW` latest keys).

    Parameters
    ----------
    answer : callable
        ``answer(Q, K, V, mask=mask)`` → ``(output, weights)``: (H, n, d_head) and (H, n, n_k).
    Q : (H, n, d_head)
    K, V : (H_kv, n_k, d_head), H a multiple of H_kv
    mask : (n, n_k) bool, optional
        True where a query may attend to a key; ``None`` (the learner's function is then called
        without it): causal, the ``n`` queries being the last ``n`` of the ``n_k`` keys' tokens, as
        :func:`attnlib.model.llama.generate` calls it.
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    Q32, K32, V32 = _float32(Q, "Q"), _float32(K, "K"), _float32(V, "V")
    if (
        Q32.ndim != 3 or K32.shape != V32.shape or K32.ndim != 3 or Q32.shape[0] % K32.shape[0]
        or Q32.shape[-1] != K32.shape[-1] or Q32.shape[1] > K32.shape[1]
    ):  # fmt: skip
        raise ValueError(
            f"Q must be (H, n, d_head) and K, V (H_kv, n_k, d_head) with H a multiple of H_kv and n ≤ n_k, "
            f"got {Q32.shape}, {K32.shape}, {V32.shape}"
        )
    n, n_k = Q32.shape[1], K32.shape[1]
    given = {}
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (n, n_k):
            raise ValueError(f"mask must be None or a ({n}, {n_k}) bool array, got {m.shape} {m.dtype}")
        given = {"mask": m}
    calls = [((Q32, K32, V32), given, "")]
    calls.append(
        (
            (Q32[:, -1:], K32, V32),
            {},
            f"when decoding with the KV cache (one query, the newest token's, against {n_k} keys)",
        )
    )
    if mask is None and n == n_k > CHECK_WINDOW:
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        calls.append(
            ((Q32, K32, V32), {"mask": (j <= i) & (j > i - CHECK_WINDOW)},
             f"with a mask passed in (a window of the {CHECK_WINDOW} latest keys)")
        )  # fmt: skip
    cases = []
    for args, kwargs, case in calls:
        right, weights = llama.grouped_query_attention(*args, **kwargs)
        cases.append(
            FunctionExercise(
                "my_attention", "grouped-query attention", args, kwargs, right=np.asarray(right, np.float64),
                case=case, weights=np.asarray(weights, np.float64),
            )
        )  # fmt: skip
    return check_function(answer, cases, ATTENTION_MISTAKES, keep)


# --- the block ----------------------------------------------------------------------------------


def attention_sublayer(w: dict, config: llama.LlamaConfig) -> Callable[[np.ndarray], np.ndarray]:
    """The attention sublayer the block receives as ``attn``: (n, d_model) → (n, d_model).

    The normalised rows become queries, keys and values, the queries and keys are rotated by their
    positions 0 … n − 1, grouped-query attention (causal) mixes the values, and ``W_o`` writes the
    heads back, all with attnlib's functions.
    """
    c = config

    def attn(a: np.ndarray) -> np.ndarray:
        n = a.shape[0]
        heads = lambda M, h: (a @ M).reshape(n, h, c.d_head).transpose(1, 0, 2)  # noqa: E731
        positions = np.arange(n)
        Q = llama.rotate(heads(w["W_q"], c.n_heads), positions, c.rope_base)
        K = llama.rotate(heads(w["W_k"], c.n_kv_heads), positions, c.rope_base)
        out, _ = llama.grouped_query_attention(Q, K, heads(w["W_v"], c.n_kv_heads))
        return out.transpose(1, 0, 2).reshape(n, c.n_heads * c.d_head) @ w["W_o"]

    return attn


def _block_wrong(
    attn_input: str = "norm",
    mlp_input: str = "norm",
    *,
    residual: tuple[bool, bool] = (True, True),
    post_norm: bool = False,
    mlp_weight: str = "mlp_norm",
    normed_stream: int = 0,
) -> Callable[[FunctionExercise], np.ndarray]:
    """A wrong block; ``normed_stream``: how many of the sublayers (1: attention's, 2: both) add
    their output to the normalised row instead of to the stream (``x = norm(x); x = x + attn(x)``)."""

    def wrong(ex: FunctionExercise) -> np.ndarray:
        x, w, attn, _, eps = ex.args
        norm = lambda v, name: llama.rms_norm(v, w[name], eps)  # noqa: E731
        mlp = lambda v: llama.swiglu(v, w["W_gate"], w["W_up"], w["W_down"])  # noqa: E731
        if post_norm:
            h = norm(x + attn(x), "attn_norm")
            return norm(h + mlp(h), "mlp_norm")
        if normed_stream:
            x = norm(x, "attn_norm")
            h = x + attn(x)
            h = norm(h, "mlp_norm") if normed_stream == 2 else h
            return h + mlp(h if normed_stream == 2 else norm(h, "mlp_norm"))
        normed = norm(x, "attn_norm") if attn_input == "norm" else x
        a = attn(normed)
        h = x + a if residual[0] else a
        if mlp_input == "attention's input":
            return h + mlp(normed)
        source = h if mlp_input != "parallel" else x
        m = mlp(norm(source, mlp_weight) if mlp_input != "raw" else source)
        return h + m if residual[1] else m

    return wrong


#: What a learner's block may compute instead of ``x + attn(norm₁(x))``, then ``+ mlp(norm₂(·))``.
BLOCK_MISTAKES: tuple[Mistake[FunctionExercise], ...] = (
    Mistake(
        "You left out the residual around the attention",
        "add the attention's output to x: x = x + attn(rms_norm(x, w['attn_norm'], eps)).",
        _block_wrong(residual=(False, True)),
    ),
    Mistake(
        "You left out the residual around the MLP",
        "add the MLP's output to the stream: x = x + swiglu(rms_norm(x, w['mlp_norm'], eps), …).",
        _block_wrong(residual=(True, False)),
    ),
    Mistake(
        "You normalised after each sublayer (post-norm, the original transformer's order)",
        "Llama normalises each sublayer's input and adds its output to the stream: x + attn(norm(x)).",
        _block_wrong(post_norm=True),
    ),
    Mistake(
        "You fed the MLP the block's input, not the stream after attention (a parallel block)",
        "the MLP reads x after the attention's output was added to it.",
        _block_wrong(mlp_input="parallel"),
    ),
    Mistake(
        "You used the attention's norm weight for the MLP too",
        "each sublayer has its own RMSNorm weight: w['attn_norm'] before attention, w['mlp_norm'] after.",
        _block_wrong(mlp_weight="attn_norm"),
    ),
    Mistake(
        "You left out the norms",
        "normalise each sublayer's input with parts.rms_norm and the layer's weight.",
        _block_wrong(attn_input="raw", mlp_input="raw"),
    ),
    Mistake(
        "You wrote the norm into the residual stream (x = norm(x), then x = x + attn(x))",
        "the norm is only the sublayer's input; the stream itself is never normalised inside a block: "
        "x = x + attn(rms_norm(x, …)).",
        _block_wrong(normed_stream=1),
    ),
    Mistake(
        "You wrote the norm into the residual stream (x = norm(x), then x = x + attn(x))",
        "the norm is only the sublayer's input; the stream itself is never normalised inside a block: "
        "x = x + attn(rms_norm(x, …)).",
        _block_wrong(normed_stream=2),
    ),
    Mistake(
        "Your MLP reads the attention's normalised input, not the stream after attention",
        "after x = x + attn(…), normalise the new x with w['mlp_norm'] and give that to the MLP.",
        _block_wrong(mlp_input="attention's input"),
    ),
)


def check_block(
    answer: object,
    x: object,
    w: dict,
    config: llama.LlamaConfig,
    *,
    keep: MutableMapping[str, Callable] | None = None,
) -> CheckResult:
    """Check the learner's ``block(x, w, attn, parts, eps)`` against :func:`attnlib.model.llama.block`.

    Parameters
    ----------
    answer : callable
        ``answer(x, w, attn, parts, eps)`` → (n, d_model): one layer of the residual stream.
    x : (n, d_model)
        The residual stream entering the layer.
    w : dict of str to array
        The layer's weights by short name (``attn_norm``, ``W_q``, …, ``W_down``).
    config : LlamaConfig
        The model's sizes (the attention sublayer's heads, the rotation's base, ``norm_eps``).
    keep : dict, optional
        The lesson's record of the learner's functions that passed (:func:`check_function`).
    """
    x32 = _float32(x, "x")
    if x32.ndim != 2 or x32.shape[1] != config.d_model:
        raise ValueError(f"x must be (n, d_model = {config.d_model}), got {x32.shape}")
    missing = sorted(
        {"attn_norm", "W_q", "W_k", "W_v", "W_o", "mlp_norm", "W_gate", "W_up", "W_down"} - set(w)
    )
    if missing:
        raise ValueError(f"w must hold the layer's weights by short name; {missing} are missing")
    attn = attention_sublayer(w, config)
    args = (x32, dict(w), attn, llama.Parts(), float(config.norm_eps))
    right = np.asarray(llama.block(*args), np.float64)
    return check_function(
        answer, [FunctionExercise("my_block", "block", args, right=right)], BLOCK_MISTAKES, keep
    )
