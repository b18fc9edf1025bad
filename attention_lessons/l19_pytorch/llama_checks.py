"""Self-checks of lesson 19's SmolLM2 in PyTorch: the learner writes its parts as ``nn.Module`` classes,
and each check makes the learner's class as the lesson makes it, puts weights into it, runs it and
compares what it returns with attnlib's NumPy (:mod:`attnlib.model.llama_parts`, lesson 16's parts).

- :func:`check_rms_norm` and its table :data:`RMS_NORM_MISTAKES`;
- :func:`check_llama_attention` and :data:`LLAMA_ATTENTION_MISTAKES`: the prompt pass, decoding with
  the KV cache (:class:`~attention_lessons.l19_pytorch.modules.KVCache`, filled beforehand with the
  earlier tokens' rotated keys), a chunk of tokens after the cache, and scattered positions;
- :func:`check_lora` and :data:`LORA_MISTAKES`;
- each check keeps the learner's class, when it passes, in the lesson's own dictionary
  (``keep=yours``) under ``"rms_norm"``, ``"llama_attention"`` or ``"lora_linear"``, and takes it out
  when a later check of it fails: what the lesson then builds SmolLM2 from.

The norm and the attention are made as :func:`~attention_lessons.l19_pytorch.modules.llama_from`
makes them: on the meta device (no memory), then the weights loaded by name with
``load_state_dict(assign=True)``; so a class that passes also loads the real model's weights. Each
row of a table *makes* its mistake on a case's inputs in NumPy
(:class:`~attention_lessons.kit.checks.mistakes.Mistake`), and the row that gives what the learner's
module returned is named; what only a module can get wrong (a weight that is no ``nn.Parameter``, a
gradient that does not flow, a cache not extended, a base layer that still learns) is told in one
line of its own. The right numbers are never shown. The checks draw their inputs from fixed seeds,
leave torch's random state, grad mode and default dtype as they were, and take well under a second.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import torch
from torch import nn

from attention_lessons.kit.checks.functions import a_type, kept, listed, one_line, wrong_arguments
from attention_lessons.kit.checks.mistakes import Mistake, describe, named_by_every_case
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import numpy_index, shape_text
from attention_lessons.l19_pytorch.classes import class_problem
from attention_lessons.l19_pytorch.modules import KVCache
from attnlib.model import llama
from attnlib.positions import rope

__all__ = [
    "LAYER",
    "LLAMA_ATTENTION_MISTAKES",
    "LORA_MISTAKES",
    "LORA_RTOL",
    "RMS_NORM_MISTAKES",
    "RTOL",
    "SMOLLM2",
    "AttentionCase",
    "LoRACase",
    "NormCase",
    "check_llama_attention",
    "check_lora",
    "check_rms_norm",
]

#: Relative tolerance of a float32 module against attnlib's float32 NumPy, at the scale of the largest
#: entry: a float32 sum of ``m`` terms is within about ``√m · 2⁻²⁴`` of the exact one (``1.4e-6`` for
#: SmolLM2's 576 features), and the attention chains five such sums (a projection, a score, the
#: weights times the values, the output projection, the softmax's); ``1e-4`` is ten times their
#: worst case (the reference modules are within ``1.2e-6`` of attnlib), and every mistake of the tables
#: moves the output by more than ``1e-2`` of its largest entry in one case at least.
RTOL = 1e-4

#: Relative tolerance of the LoRA check, which runs in float64 on sums of at most 24 terms.
LORA_RTOL = 1e-9

#: SmolLM2-135M's sizes, ``load_smollm2().config`` (its ε is the file's float32 1e-5; a model test
#: compares them): the checks use the real sizes without loading the 540 MB of weights.
SMOLLM2 = llama.LlamaConfig(
    n_layers=30, n_heads=9, n_kv_heads=3, d_head=64, d_model=576, d_mlp=1536, vocab_size=49152,
    n_ctx=8192, rope_base=100000.0, norm_eps=float(np.float32(1e-5)),
)  # fmt: skip

#: The layer the attention check makes (``MyLlamaAttention(config, LAYER)``): not 0, so that a module
#: that extends another layer's cache is seen.
LAYER = 7

Keep = MutableMapping[str, object] | None


# --- the learner's class: what it is, making it, calling it -----------------------------------------


@dataclass(frozen=True)
class Lesson:
    """How the lesson names, makes and calls one of the learner's classes, for the messages.

    Attributes
    ----------
    name : str
        The class as the lesson names it (``MyRMSNorm``).
    init : str
        Its constructor's parameters (``d_model, eps``).
    call : str
        How the model calls a made one (``norm(x)``).
    forward : str
        The parameters of its ``forward`` (``x, positions, cache=None``).
    key : str
        Its name in the lesson's dictionary of the classes that passed (``rms_norm``).
    what : str
        What it computes, for the messages (``RMSNorm``).
    """

    name: str
    init: str
    call: str
    forward: str
    key: str
    what: str


NORM = Lesson("MyRMSNorm", "d_model, eps", "norm(x)", "x", "rms_norm", "RMSNorm")
ATTENTION = Lesson(
    "MyLlamaAttention", "config, layer", "attn(x, positions, cache)", "x, positions, cache=None",
    "llama_attention", "attention",
)  # fmt: skip
LORA = Lesson("MyLoRALinear", "base, r, alpha, generator=None", "lora(x)", "x", "lora_linear", "LoRA layer")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Warnings silenced and NumPy's floating-point errors ignored, for the learner's code."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _said(error: Exception) -> str:
    """An error's message on one line, without its last full stop (the check's message goes on)."""
    return one_line(error).rstrip(".!")


#: Why a tensor made in ``__init__`` breaks the model, as the norm's and the attention's checks say it.
_META = (
    "the lesson makes your class on the meta device (no memory) and then loads only its weights, so a "
    "tensor made in __init__ stays empty: make it in forward"
)


def _hint(error: Exception) -> str:
    """Advice for the errors a learner's module meets."""
    text = str(error)
    if "before Module.__init__() call" in text:
        return "; call super().__init__() first in __init__"
    return f"; {_META}" if "meta" in text else ""


def _made(
    answer: type,
    lesson: Lesson,
    args: tuple,
    kwargs: Mapping[str, object] | None = None,
    *,
    shown: str,
    meta: bool = False,
    seed: int = 0,
) -> nn.Module | CheckResult:
    """``answer(*args, **kwargs)``, on the meta device if ``meta``, or a failed result saying why not.

    Torch's random state is restored afterwards (the module's own initialisation draws from it,
    seeded with ``seed`` meanwhile).
    """
    kwargs = dict(kwargs or {})
    wrong = wrong_arguments(answer, args, kwargs)
    if wrong is not None:
        return failed(
            f"Wrong arguments: the lesson makes {lesson.name}({lesson.init}); yours is {lesson.name}{wrong}."
        )
    try:
        with torch.random.fork_rng(devices=[]), _quiet():
            torch.manual_seed(seed)
            with torch.device("meta") if meta else contextlib.nullcontext():
                module = answer(*args, **kwargs)
    except Exception as error:  # a learner's class may raise anything; the message says what
        return failed(f"Your {shown} raised {type(error).__name__}: {_said(error)}{_hint(error)}.")
    if not isinstance(module, nn.Module):
        return failed(f"Not an nn.Module: {shown} made {a_type(module)}.")
    return module


def _called(
    module: nn.Module, lesson: Lesson, args: tuple, case: str, hint: Callable[[Exception], str] = _hint
) -> object:
    """What the module's forward returns on ``args``, or a failed result (its arguments, an error and
    ``hint(error)``, advice for it)."""
    wrong = wrong_arguments(module.forward, args)
    if wrong is not None:
        return failed(
            f"Wrong arguments: the lesson calls your {lesson.name} as {lesson.call}; your forward is "
            f"forward{wrong}."
        )
    try:
        with torch.random.fork_rng(devices=[]), _quiet():
            return module(*args)
    except Exception as error:  # a learner's module may raise anything; the message says what
        return failed(
            f"Your {lesson.name} raised {type(error).__name__} {case}: {_said(error)}{hint(error)}."
        )


def _tensor(
    returned: object, lesson: Lesson, shape: tuple[int, ...], case: str
) -> torch.Tensor | CheckResult:
    """The module's output if it is a finite tensor of ``shape``, else why not."""
    if returned is None:
        return failed(
            f"Nothing returned: your {lesson.name}'s forward returns None; end it with `return` and "
            f"the {lesson.what}'s output."
        )
    if isinstance(returned, nn.Parameter):
        return failed(
            f"Your {lesson.name} returned a new nn.Parameter: a Parameter is a leaf of its own, so no "
            "gradient flows back through it to the weights or to x; return the tensor you computed."
        )
    if isinstance(returned, (tuple, list)):
        return failed(
            f"Not a tensor: your {lesson.name} returned {a_type(returned)}; return the {lesson.what}'s "
            "output alone, one torch.Tensor."
        )
    if not isinstance(returned, torch.Tensor):
        return failed(
            f"Not a tensor: your {lesson.name} returned {a_type(returned)}; compute with torch "
            "operations and return the torch.Tensor, so that gradients flow through it."
        )
    if returned.is_meta:
        return failed(f"Your {lesson.name} returned a tensor on the meta device: {_META}.")
    if tuple(returned.shape) != shape:
        return failed(
            f"Wrong shape {case}: the {lesson.what}'s output has shape {shape_text(shape)}; yours "
            f"returned {shape_text(tuple(returned.shape))}."
        )
    if not bool(torch.isfinite(returned.detach()).all()):
        return failed(
            f"Not finite {case}: your {lesson.name} returned NaN or an infinity; every entry is finite here."
        )
    return returned


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    """``a`` is ``b`` within ``rtol`` at the scale of ``b``'s largest entry (as the kit compares)."""
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return bool(a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol * scale))


def _float_array(t: torch.Tensor) -> np.ndarray:
    """A float64 copy of ``t`` (never a view of a parameter that changes later)."""
    return t.detach().to("cpu", torch.float64, copy=True).numpy()


def _first(problem: CheckResult | None, then: Callable[[], CheckResult | None]) -> CheckResult | None:
    """``problem``, or if it is ``None`` what ``then()`` finds (a failed CheckResult is falsy: no ``or``)."""
    return then() if problem is None else problem


@dataclass(frozen=True)
class Run:
    """What one case of a check got from the learner's module.

    Attributes
    ----------
    output : np.ndarray or CheckResult
        The output as float64, or why there is none to compare.
    after : CheckResult or None
        What is wrong besides the output (a cache, a gradient, a dtype), said only when the output
        is right.
    """

    output: np.ndarray | CheckResult
    after: CheckResult | None = None


def _verdict(
    runs: Sequence[Run], cases: Sequence[object], mistakes: Sequence[Mistake], lesson: Lesson, rtol: float
) -> CheckResult | None:
    """``None`` when every case's output is attnlib's and nothing else is wrong, else why not.

    The first case that fails decides. Where its output is a mistake's, the other cases narrow the
    mistakes down (the kit's :func:`~attention_lessons.kit.checks.mistakes.named_by_every_case`).
    """
    outputs = [run.output for run in runs]
    for k, (run, ex) in enumerate(zip(runs, cases, strict=True)):
        if isinstance(run.output, CheckResult):
            return run.output
        if _close(run.output, ex.right, rtol):
            if run.after is not None:
                return run.after
            continue
        learner = run.output
        found = named_by_every_case(
            mistakes, cases, outputs, k, lambda a, b, _: _close(np.asarray(a), np.asarray(b), rtol)
        )
        if not found:
            off = np.unravel_index(int(np.argmax(np.abs(learner - ex.right))), learner.shape)
            return failed(
                f"Not yet, {ex.case}: your {lesson.name}'s output differs from attnlib's {lesson.what}, most "
                f"at numpy index {numpy_index(off)}; compare your forward with the formula line by line."
            )
        return failed(f"{describe('', found, ex)} Seen {ex.case}.")
    return None


def _parameter(
    module: nn.Module, lesson: Lesson, attr: str, shape: tuple[int, ...], made: str
) -> nn.Parameter | CheckResult:
    """``module.<attr>`` if it is an ``nn.Parameter`` of ``shape``, else why not (``made``: its making)."""
    value = getattr(module, attr, None)
    if value is None:
        return failed(f"Your {lesson.name} has no {attr}: make it in __init__, self.{attr} = {made}.")
    if not isinstance(value, nn.Parameter):
        kind = "a plain tensor" if isinstance(value, torch.Tensor) else a_type(value)
        return failed(
            f"Your {lesson.name}'s {attr} is {kind}, not an nn.Parameter: model.parameters() and "
            f"state_dict() do not list it, so no weights could be loaded into it and no optimiser would "
            f"train it; make it self.{attr} = {made}."
        )
    if tuple(value.shape) != shape:
        return failed(
            f"Your {lesson.name}'s {attr} has shape {shape_text(tuple(value.shape))}, not "
            f"{shape_text(shape)}; make it self.{attr} = {made}."
        )
    return value


def _loaded(module: nn.Module, lesson: Lesson, state: Mapping[str, np.ndarray]) -> CheckResult | None:
    """Load ``state`` into ``module`` as ``llama_from`` does (by name, ``assign=True``), or say why not."""
    names = set(module.state_dict())
    if names != set(state):
        extra = sorted(names - set(state))
        told = f"has {listed(extra)} besides" if extra else "lacks some of"
        return failed(
            f"Your {lesson.name}'s state_dict() {told} {listed(sorted(state))}: the lesson loads the "
            f"model's weights by these names and no others, and {_META}."
        )
    try:
        module.load_state_dict(
            {k: torch.from_numpy(np.array(v, order="C")) for k, v in state.items()}, assign=True
        )
    except Exception as error:  # a learner's module may refuse its own weights
        return failed(
            f"Loading the weights into your {lesson.name} raised {type(error).__name__}: {one_line(error)}."
        )
    return None


# --- RMSNorm ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormCase:
    """One call of the learner's RMSNorm: its rows, its weight, attnlib's output, the case in words."""

    x: np.ndarray  # (B, n, d_model) float32
    weight: np.ndarray  # (d_model,) float32
    eps: float
    right: np.ndarray  # (B, n, d_model) float64
    case: str
    label: str


def _normalised(
    divide: Callable[[np.ndarray, float], np.ndarray], *, weight: str = "times"
) -> Callable[[NormCase], np.ndarray]:
    def wrong(ex: NormCase) -> np.ndarray:
        x = ex.x.astype(np.float64)
        y = x / divide(x, ex.eps)
        return {"times": y * ex.weight, "none": y, "one plus": y * (1 + ex.weight)}[weight]

    return wrong


def _ms(x: np.ndarray, axis: int | None = -1) -> np.ndarray:
    return np.mean(x * x, axis=axis, keepdims=True)


def _centred(x: np.ndarray, eps: float, ddof: int = 0) -> np.ndarray:
    """What LayerNorm divides by after subtracting the mean: the root of the variance plus ε."""
    return np.sqrt(x.var(-1, keepdims=True, ddof=ddof) + eps)


def _layer_norm(ddof: int) -> Callable[[NormCase], np.ndarray]:
    def wrong(ex: NormCase) -> np.ndarray:
        x = ex.x.astype(np.float64)
        return (x - x.mean(-1, keepdims=True)) / _centred(x, ex.eps, ddof) * ex.weight

    return wrong


_LAYER_NORM = (
    "You subtracted the mean (that is LayerNorm)",
    "RMSNorm subtracts nothing; it divides by the root mean square: "
    "x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight.",
)
_STD = (
    "You divided by the standard deviation (x.std() or x.var()), which subtracts the mean inside",
    "RMSNorm's root is of the mean of x² itself: "
    "torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps).",
)
_SUM = (
    "You divided by the root of the sum of squares (or x.norm()), not of their mean",
    "take the mean of x² over the features, x.pow(2).mean(dim=-1, keepdim=True), before the square root.",
)

#: What a learner's RMSNorm may compute instead of ``x / sqrt(mean(x²) + eps) · weight``.
RMS_NORM_MISTAKES: tuple[Mistake[NormCase], ...] = (
    Mistake(*_LAYER_NORM, _layer_norm(0)),
    Mistake(*_LAYER_NORM, _layer_norm(1)),
    Mistake(*_STD, _normalised(lambda x, eps: _centred(x, eps))),
    Mistake(*_STD, _normalised(lambda x, eps: _centred(x, eps, 1))),
    Mistake(
        "You left out the weight",
        "after dividing, multiply by self.weight, one number per feature (a layer's attn_norm or mlp_norm).",
        _normalised(lambda x, eps: np.sqrt(_ms(x) + eps), weight="none"),
    ),
    Mistake(
        "You multiplied by 1 + weight",
        "SmolLM2's file stores the weight itself (Gemma's store weight − 1): multiply by self.weight.",
        _normalised(lambda x, eps: np.sqrt(_ms(x) + eps), weight="one plus"),
    ),
    Mistake(
        "You divided by the mean square, not by its square root",
        "the root mean square is sqrt(mean(x²) + eps): torch.rsqrt(… + self.eps) multiplies by its inverse.",
        _normalised(lambda x, eps: _ms(x) + eps),
    ),
    Mistake(*_SUM, _normalised(lambda x, eps: np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps))),
    Mistake(*_SUM, _normalised(lambda x, eps: np.sqrt(np.sum(x * x, axis=-1, keepdims=True)))),
    Mistake(
        "You added eps outside the square root",
        "eps goes under the root, sqrt(mean(x²) + eps); it matters for rows as small as √eps, as here.",
        _normalised(lambda x, eps: np.sqrt(_ms(x)) + eps),
    ),
    Mistake(
        "You took the mean over the whole tensor (x.pow(2).mean() without a dim)",
        "each token's vector is normalised on its own: mean(dim=-1, keepdim=True), over the features.",
        _normalised(lambda x, eps: np.sqrt(_ms(x, None) + eps)),
    ),
    Mistake(
        "You normalised over the tokens (dim 1), not over the features",
        "each token's vector is normalised on its own: the mean is over the last dim, dim=-1.",
        _normalised(lambda x, eps: np.sqrt(_ms(x, 1) + eps)),
    ),
    Mistake(
        "You normalised over the batch (dim 0), not over the features",
        "each token's vector is normalised on its own: the mean is over the last dim, dim=-1.",
        _normalised(lambda x, eps: np.sqrt(_ms(x, 0) + eps)),
    ),
)

#: The seed of the norm check's rows, weight and upstream gradient.
NORM_SEED = 1916


@cache
def _norm_cases() -> tuple[NormCase, ...]:
    """Two batches of 2 × 4 rows of the residual stream's width: rows of realistic spread (RMS from 0.03
    to 30, a shared offset, three large features, as a residual stream has), and the same rows scaled
    to an RMS of √ε, where ε decides; a random weight around 1."""
    c, rng = SMOLLM2, np.random.default_rng(NORM_SEED)
    rows = rng.standard_normal((2, 4, c.d_model)) + rng.normal(0.3, 0.5, c.d_model)
    rows[..., [13, 200, 444]] *= 8.0
    rows *= 10.0 ** rng.uniform(-1.5, 1.5, size=(2, 4, 1))
    weight = rng.normal(1.0, 0.5, c.d_model).astype(np.float32)
    small = rows / np.sqrt(_ms(rows) / c.norm_eps)
    cases = []
    for x, case, label in (
        (rows, "on rows of the residual stream's spread", "rows of the residual stream's spread"),
        (small, "on rows as small as √eps (the same rows, scaled)", "rows as small as √eps"),
    ):
        x32 = x.astype(np.float32)
        right = np.asarray(llama.rms_norm(x32, weight, c.norm_eps), np.float64)
        cases.append(NormCase(x32, weight, c.norm_eps, right, case, label))
    return tuple(cases)


def _norm_gradients(ex: NormCase, upstream: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gradients of ``sum(rms_norm(x) * upstream)`` with respect to the weight and to ``x``, in
    float64: ``y = x · r · w`` with ``r = (mean(x²) + ε)^(−1/2)``, so ``∂/∂x = r·u − x·r³·mean(x·u)``
    with ``u = w · upstream``."""
    x = ex.x.astype(np.float64)
    r = 1 / np.sqrt(_ms(x) + ex.eps)
    u = ex.weight * upstream
    d_weight = (x * r * upstream).sum(axis=(0, 1))
    d_x = r * u - x * r**3 * np.mean(x * u, axis=-1, keepdims=True)
    return d_weight, d_x


def _norm_run(module: nn.Module, weight: nn.Parameter, ex: NormCase) -> Run:
    """The learner's norm on one case: its output, then its gradients and dtype."""
    x = torch.from_numpy(ex.x.copy()).requires_grad_(True)
    weight.grad = None
    with torch.enable_grad():
        out = _called(module, NORM, (x,), ex.case)
        out = out if isinstance(out, CheckResult) else _tensor(out, NORM, ex.right.shape, ex.case)
        if isinstance(out, CheckResult):
            return Run(out)
        upstream = np.random.default_rng(NORM_SEED + 1).standard_normal(ex.x.shape).astype(np.float32)
        after = _norm_backward(out, x, weight, ex, upstream)
    return Run(_float_array(out), _first(after, lambda: _dtype_problem(out, NORM, ex.case)))


def _norm_backward(
    out: torch.Tensor, x: torch.Tensor, weight: nn.Parameter, ex: NormCase, upstream: np.ndarray
) -> CheckResult | None:
    """Why the gradients through the learner's norm are not RMSNorm's, or ``None``."""
    cut = failed(
        f"Your MyRMSNorm's output is right but its gradients are not RMSNorm's {ex.case}: part of forward "
        "leaves autograd (.detach(), .data, .item(), NumPy, torch.tensor(…) of a tensor); compute with "
        "torch operations on x and self.weight throughout."
    )
    if not out.requires_grad:
        return cut
    try:
        with _quiet():
            (out * torch.from_numpy(upstream)).sum().backward()
    except Exception as error:  # a learner's forward may build a graph that cannot run backwards
        return failed(
            f"Backpropagating through your MyRMSNorm raised {type(error).__name__}: {one_line(error)}."
        )
    if weight.grad is None or x.grad is None:
        return cut
    d_weight, d_x = _norm_gradients(ex, upstream)
    if not (_close(_float_array(weight.grad), d_weight, RTOL) and _close(_float_array(x.grad), d_x, RTOL)):
        return cut
    return None


def _dtype_problem(out: torch.Tensor, lesson: Lesson, case: str) -> CheckResult | None:
    if out.dtype == torch.float32:
        return None
    return failed(
        f"Your {lesson.name} returned {str(out.dtype).removeprefix('torch.')} for float32 inputs {case}: "
        "keep the input's dtype (the model's next nn.Linear is float32 and refuses float64)."
    )


def check_rms_norm(MyRMSNorm: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``MyRMSNorm(d_model, eps)`` against :func:`attnlib.model.llama_parts.rms_norm`.

    The check makes ``MyRMSNorm(576, 1e-5)`` on the meta device and loads a random weight into it as
    ``weight`` (as the lesson loads SmolLM2's ``attn_norm``), then runs it on two batches of float32
    rows (:func:`_norm_cases`: the residual stream's spread, and rows as small as √ε) and compares
    its output with attnlib's within :data:`RTOL`; its gradients (with respect to the weight and to
    ``x``) with RMSNorm's; and its dtype (float32 in, float32 out).

    Parameters
    ----------
    MyRMSNorm : type
        The learner's class: ``__init__(self, d_model, eps)`` with ``self.weight`` an ``nn.Parameter``
        of shape ``(d_model,)``, and ``forward(self, x)`` with ``x : (..., d_model)``.
    keep : dict, optional
        The lesson's record of the classes that passed: ``MyRMSNorm`` is put in it under
        ``"rms_norm"`` when it passes, and taken out when it fails.

    Returns
    -------
    CheckResult
    """
    return kept(MyRMSNorm, NORM.key, _rms_norm_verdict(MyRMSNorm), keep)


def _rms_norm_verdict(answer: object) -> CheckResult:
    c = SMOLLM2
    problem = class_problem(answer, NORM.name, NORM.init, NORM.forward)
    if problem is not None:
        return problem
    module = _made(
        answer, NORM, (c.d_model, c.norm_eps), shown=f"MyRMSNorm({c.d_model}, {c.norm_eps:g})", meta=True
    )
    if isinstance(module, CheckResult):
        return module
    cases = _norm_cases()
    weight = _parameter(module, NORM, "weight", (c.d_model,), "nn.Parameter(torch.ones(d_model))")
    problem = (
        weight if isinstance(weight, CheckResult) else _loaded(module, NORM, {"weight": cases[0].weight})
    )
    if problem is not None:
        return problem
    runs = [_norm_run(module, module.weight, ex) for ex in cases]
    problem = _verdict(runs, cases, RMS_NORM_MISTAKES, NORM, RTOL)
    if problem is not None:
        return problem
    return passed(
        f"Correct: MyRMSNorm gives attnlib's RMSNorm on {listed([ex.label for ex in cases])}, every entry "
        f"within {RTOL:g} of the largest, and its gradients flow to x and to the weight."
    )


# --- the attention ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionCase:
    """One call of the learner's attention: its inputs, attnlib's output and cache, the case in words.

    Attributes
    ----------
    x : (B, n, d_model) float32
        This step's rows (the normalised residual stream).
    positions : (n,) int64
        Their positions.
    cached : tuple of two (B, H_kv, n_c, d_head) float32 arrays, or None
        The earlier tokens' rotated keys and values, in the cache before the call.
    w : dict of str to array
        ``W_q, W_k, W_v, W_o`` as attnlib keeps them, ``(in, out)``.
    right : (B, n, d_model) float64
        attnlib's output.
    keys, values : (B, H_kv, n_k, d_head) float32, or None
        What the cache must hold after the call (``None``: no cache).
    case, label : str
        The case in words, for a failure's message and a pass's.
    """

    x: np.ndarray
    positions: np.ndarray
    cached: tuple[np.ndarray, np.ndarray] | None
    w: Mapping[str, np.ndarray]
    right: np.ndarray
    case: str
    label: str
    keys: np.ndarray | None = None
    values: np.ndarray | None = None
    config: llama.LlamaConfig = field(default=SMOLLM2)


def _heads(x: np.ndarray, M: np.ndarray, h: int, d_head: int) -> np.ndarray:
    """``(n, d_model) @ M`` split into ``h`` heads: ``(h, n, d_head)``."""
    return (x @ M).reshape(len(x), h, d_head).transpose(1, 0, 2)


def _attnlib_attention(
    x: np.ndarray,
    positions: np.ndarray,
    cached: tuple[np.ndarray, np.ndarray] | None,
    w: Mapping[str, np.ndarray],
    c: llama.LlamaConfig,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """attnlib's attention sublayer on each sequence of ``x`` (float32, lesson 16's parts), after the
    cached keys and values: the output, and the keys and values the cache then holds."""
    outs, keys, values = [], [], []
    for b in range(x.shape[0]):
        Q = llama.rotate(_heads(x[b], w["W_q"], c.n_heads, c.d_head), positions, c.rope_base)
        K = llama.rotate(_heads(x[b], w["W_k"], c.n_kv_heads, c.d_head), positions, c.rope_base)
        V = _heads(x[b], w["W_v"], c.n_kv_heads, c.d_head)
        if cached is not None:
            K, V = np.concatenate([cached[0][b], K], axis=1), np.concatenate([cached[1][b], V], axis=1)
        z, _ = llama.grouped_query_attention(Q, K, V)
        outs.append(z.transpose(1, 0, 2).reshape(len(x[b]), c.n_heads * c.d_head) @ w["W_o"])
        keys.append(K)
        values.append(V)
    return np.stack(outs), np.stack(keys), np.stack(values)


def _softmax(s: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(s - np.max(s, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _turned(x: np.ndarray, positions: np.ndarray, base: float, pairing: str) -> np.ndarray:
    return rope(x, np.asarray(positions, np.float64), base=base, pairing=pairing)


def _masked(s: np.ndarray, mask: str) -> np.ndarray:
    """The scores ``(H, n, n_k)`` masked as ``mask`` says: the queries are the last ``n`` tokens
    (``"causal"``), or wrongly the first ``n`` (``"first n"``: ``tril`` without offset, ``is_causal``)."""
    n, n_k = s.shape[-2:]
    last = np.arange(n_k)[None, :] <= np.arange(n_k - n, n_k)[:, None]
    first = np.arange(n_k)[None, :] <= np.arange(n)[:, None]
    return {
        "causal": lambda: np.where(last, s, -np.inf),
        "first n": lambda: np.where(first, s, -np.inf),
        "none": lambda: s,
        "zero": lambda: np.where(last, s, 0.0),
        "added": lambda: s + last,
        "added, first n": lambda: s + first,
    }[mask]()


def _attention(
    ex: AttentionCase,
    *,
    pairing: str = "half",
    base: float | None = None,
    counted: bool = False,
    kv_of: str = "repeat",
    mask: str = "causal",
    scale: str = "sqrt",
    axis: int = -1,
    cache: str = "used",
    split: str = "heads",
    merge: str = "heads",
) -> np.ndarray | None:
    """The attention sublayer in float64 with one mistake (the defaults: none); ``None`` where the
    mistake cannot be made on this case (a cache it needs, shapes that do not fit)."""
    c, w = ex.config, ex.w
    base = c.rope_base if base is None else base
    H, H_kv, d = c.n_heads, c.n_kv_heads, c.d_head
    if cache != "used" and ex.cached is None:
        return None
    outs = []
    for b in range(ex.x.shape[0]):
        x = ex.x[b].astype(np.float64)
        n = len(x)
        positions = np.arange(n) if counted else ex.positions
        q, k_raw, v = (
            (x @ w[name]).reshape(h, n, d) if split == "view" else _heads(x, w[name], h, d)
            for name, h in (("W_q", H), ("W_k", H_kv), ("W_v", H_kv))
        )
        q, k = _turned(q, positions, base, pairing), _turned(k_raw, positions, base, pairing)
        if ex.cached is not None and cache != "ignored":
            K0, V0 = (a[b].astype(np.float64) for a in ex.cached)
            v = np.concatenate([V0, v], axis=1)
            if cache == "used":
                k = np.concatenate([K0, k], axis=1)
            elif cache == "rotated again, at the step's positions" and n != 1:
                return None  # the step's n positions do not broadcast over the n_k keys
            else:  # this step's keys cached unrotated, then every key rotated
                k, n_k = np.concatenate([K0, k_raw], axis=1), K0.shape[1] + n
                again = np.repeat(positions, n_k) if cache.endswith("positions") else np.arange(n_k)
                k = _turned(k, again, base, pairing)
        index = np.arange(H) // (H // H_kv) if kv_of == "repeat" else np.arange(H) % H_kv
        factor = {"sqrt": 1 / math.sqrt(d), "none": 1.0, "d": 1 / d}[scale]
        s = _masked(q @ k[index].transpose(0, 2, 1) * factor, mask)
        z = _softmax(s, axis) @ v[index]
        merged = z.transpose(1, 0, 2).reshape(n, H * d) if merge == "heads" else z.reshape(n, H * d)
        outs.append(merged @ w["W_o"])
    return np.stack(outs)


_FIRST_N = (
    "Your mask assumes the queries are the first n tokens; with a cache they are the last n",
    "torch.ones(n, n_k).tril() and F.scaled_dot_product_attention(…, is_causal=True) (PyTorch's is_causal "
    "is top-left aligned) let query i see keys 0 … i; with a cache the n queries are the newest of the n_k "
    "tokens, so query i sees keys j ≤ n_k − n + i: tril(diagonal=n_k - n), passed as a bool attn_mask.",
)
_TWICE = (
    "You rotated the keys again after taking them from the cache",
    "the cache holds keys already rotated, each at its own position: rotate this step's k by its "
    "positions, then k, v = cache.extend(self.layer, k, v), and leave what extend returns as it is.",
)

#: What a learner's attention module may compute instead of SmolLM2's (rotate-half RoPE at the
#: positions given, grouped-query attention over the cache and this step, the causal mask of the
#: last ``n`` queries).
LLAMA_ATTENTION_MISTAKES: tuple[Mistake[AttentionCase], ...] = (
    Mistake(*_FIRST_N, lambda ex: _attention(ex, mask="first n")),
    Mistake(
        "You left out the mask",
        "each query sees the keys up to its own token: pass a bool attn_mask, True where a query may attend "
        "(the newest n of the n_k tokens: torch.ones(n, n_k, dtype=torch.bool).tril(diagonal=n_k - n)).",
        lambda ex: _attention(ex, mask="none"),
    ),
    Mistake(
        "Your mask is a float tensor of 0 and 1, which F.scaled_dot_product_attention adds to the scores",
        "a float attn_mask is added (0 where allowed, −inf where masked); a bool one says where a query may "
        "attend: make it with dtype=torch.bool.",
        lambda ex: _attention(ex, mask="added"),
    ),
    Mistake(
        "Your mask is a float tensor of 0 and 1, which F.scaled_dot_product_attention adds to the scores",
        "a float attn_mask is added (0 where allowed, −inf where masked); a bool one says where a query may "
        "attend: make it with dtype=torch.bool, and for the last n of the n_k tokens, "
        "tril(diagonal=n_k - n).",
        lambda ex: _attention(ex, mask="added, first n"),
    ),
    Mistake(
        "You masked with 0, not with −∞",
        "a masked score of 0 still gets the weight e⁰ = 1: scores.masked_fill(~mask, float('-inf')).",
        lambda ex: _attention(ex, mask="zero"),
    ),
    Mistake(
        "You ignored the positions (you rotated by 0, 1, …, n − 1)",
        "rotate q and k by the positions given, not by their order in x (after a cache, x's first token "
        "is not at position 0): rope_half(q, positions, base).",
        lambda ex: _attention(ex, counted=True),
    ),
    Mistake(
        "You rotated neighbouring pairs (2i, 2i + 1), as lesson 18's GPT does",
        "SmolLM2's weights pair component i with i + d_head/2 (rotate_half): first, second = x[..., :d/2], "
        "x[..., d/2:], then cat(first·cos − second·sin, first·sin + second·cos).",
        lambda ex: _attention(ex, pairing="interleaved"),
    ),
    Mistake(
        "You used the base 10,000 of the RoPE paper",
        "SmolLM2's is config.rope_base = {ex.config.rope_base:,.0f} (the file's rope.freq_base).",
        lambda ex: _attention(ex, base=10000.0),
    ),
    Mistake(
        "Query head h took key/value head h % n_kv_heads (repeat tiles the heads)",
        "k.repeat(1, group, 1, 1) lays the key/value heads out 0, 1, 2, 0, 1, 2, …; consecutive query "
        "heads share one: head h reads key/value head h // group, as k.repeat_interleave(group, dim=1) "
        "lays them out.",
        lambda ex: _attention(ex, kv_of="tile"),
    ),
    Mistake(
        "You did not use the cache: the new tokens attended only to themselves",
        "k, v = cache.extend(self.layer, k, v) appends this step's keys and values to the earlier tokens' "
        "and returns them all; attend over those.",
        lambda ex: _attention(ex, cache="ignored"),
    ),
    Mistake(*_TWICE, lambda ex: _attention(ex, cache="rotated again, at the step's positions")),
    Mistake(*_TWICE, lambda ex: _attention(ex, cache="rotated again, from 0")),
    Mistake(
        "You did not scale the scores",
        "divide them by √d_head before the softmax (lesson 04); F.scaled_dot_product_attention does it.",
        lambda ex: _attention(ex, scale="none"),
    ),
    Mistake(
        "You divided the scores by d_head, not by √d_head",
        "the scale is 1/√d_head (lesson 04).",
        lambda ex: _attention(ex, scale="d"),
    ),
    Mistake(
        "Softmax over the queries (dim −2), not over the keys",
        "each query's weights over the keys sum to 1: softmax(dim=-1).",
        lambda ex: _attention(ex, axis=-2),
    ),
    Mistake(
        "You split the heads with view(B, H, n, d_head)",
        "a token's projection holds its heads side by side: q.view(B, n, H, d_head).transpose(1, 2) gives "
        "(B, H, n, d_head).",
        lambda ex: _attention(ex, split="view"),
    ),
    Mistake(
        "You joined the heads without moving them back next to each other",
        "z is (B, H, n, d_head): z.transpose(1, 2).reshape(B, n, H * d_head) before self.o.",
        lambda ex: _attention(ex, merge="reshape"),
    ),
)

#: The attention check's seed, and where its cases put the tokens.
ATTENTION_SEED = 1919
CACHED, CHUNK, SCATTERED = 5, 3, (3, 17, 37, 64, 101)


def _attention_weights() -> dict[str, np.ndarray]:
    """Random float32 ``W_q, W_k, W_v, W_o`` as attnlib keeps them, of variance ``1/fan_in``."""
    c, rng = SMOLLM2, np.random.default_rng(ATTENTION_SEED)
    width, kv = c.n_heads * c.d_head, c.n_kv_heads * c.d_head
    shapes = {
        "W_q": (c.d_model, width),
        "W_k": (c.d_model, kv),
        "W_v": (c.d_model, kv),
        "W_o": (width, c.d_model),
    }
    return {name: (rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32) for name, s in shapes.items()}


def _positions_text(positions: Sequence[int]) -> str:
    return ", ".join(str(int(p)) for p in positions)


@cache
def _attention_cases() -> tuple[AttentionCase, ...]:
    """The prompt pass (two sequences of 6 tokens at 0 … 5), decoding one token after 5 cached, a chunk
    of 3 tokens after 5 cached, and a prompt at scattered positions; the rows are standard normal,
    as a normalised residual stream is."""
    c, w = SMOLLM2, _attention_weights()
    rng = np.random.default_rng(ATTENTION_SEED + 1)
    rows = lambda *shape: rng.standard_normal((*shape, c.d_model)).astype(np.float32)  # noqa: E731
    last = CACHED + CHUNK - 1
    calls = [
        (rows(2, 6), np.arange(6), None, "on the prompt pass (two sequences of 6 tokens, no cache)"),
        (rows(1, CACHED + 1), None, CACHED, f"when decoding with the KV cache (one token at position "
         f"{CACHED}, after {CACHED} cached)"),
        (rows(1, CACHED + CHUNK), None, CACHED, f"on a chunk of {CHUNK} tokens at positions {CACHED} … "
         f"{last} after {CACHED} cached"),
        (rows(1, len(SCATTERED)), np.array(SCATTERED), None, "on a prompt at scattered positions "
         f"({_positions_text(SCATTERED)})"),
    ]  # fmt: skip
    labels = ("the prompt pass", "decoding with the cache", "a chunk after the cache", "scattered positions")
    cases = []
    for (x, positions, n_cached, case), label in zip(calls, labels, strict=True):
        cached = None
        if n_cached is not None:
            _, keys, values = _attnlib_attention(x[:, :n_cached], np.arange(n_cached), None, w, c)
            cached, x = (keys, values), x[:, n_cached:]
            positions = np.arange(n_cached, n_cached + x.shape[1])
        right, keys, values = _attnlib_attention(x, positions, cached, w, c)
        cases.append(
            AttentionCase(
                x, positions.astype(np.int64), cached, w, np.asarray(right, np.float64), case, label,
                keys if cached is not None else None, values if cached is not None else None,
            )
        )  # fmt: skip
    return tuple(cases)


def _projections(module: nn.Module) -> dict[str, nn.Parameter] | CheckResult:
    """The learner's ``q, k, v, o`` weights if each is an ``nn.Linear``-like layer of SmolLM2's shape."""
    c = SMOLLM2
    width, kv = c.n_heads * c.d_head, c.n_kv_heads * c.d_head
    sizes = {"q": (c.d_model, width), "k": (c.d_model, kv), "v": (c.d_model, kv), "o": (width, c.d_model)}
    each = {"q": "n_heads", "k": "n_kv_heads", "v": "n_kv_heads"}
    words = {name: f"{heads} * config.d_head" for name, heads in each.items()}
    weights = {}
    for name, (fan_in, fan_out) in sizes.items():
        made = (
            f"nn.Linear(config.d_model, config.{words[name]}, bias=False)"
            if name != "o"
            else "nn.Linear(config.n_heads * config.d_head, config.d_model, bias=False)"
        )
        layer = getattr(module, name, None)
        weight = getattr(layer, "weight", None)
        if not isinstance(layer, nn.Module) or not isinstance(weight, nn.Parameter):
            return failed(
                f"Your MyLlamaAttention has no layer {name} with a weight: make it in __init__, "
                f"self.{name} = {made}; the lesson loads SmolLM2's weights into q, k, v and o."
            )
        if tuple(weight.shape) != (fan_out, fan_in):
            return failed(
                f"Your MyLlamaAttention's {name}.weight has shape {shape_text(tuple(weight.shape))}, not "
                f"{shape_text((fan_out, fan_in))} (out, in): make it {made}."
            )
        if getattr(layer, "bias", None) is not None:
            return failed(
                f"Your MyLlamaAttention's {name} has a bias; SmolLM2's projections have none: {made}."
            )
        weights[name] = weight
    return weights


def _cache_with(ex: AttentionCase) -> KVCache | None:
    """A fresh cache of SmolLM2's layers holding this case's earlier tokens in :data:`LAYER`."""
    if ex.cached is None:
        return None
    kv = KVCache(SMOLLM2.n_layers)
    kv.extend(LAYER, *(torch.from_numpy(a.copy()) for a in ex.cached))
    return kv


def _other_layer(kv: KVCache | None) -> CheckResult | None:
    others = [] if kv is None else [i for i, k in enumerate(kv.keys) if i != LAYER and k is not None]
    if not others:
        return None
    return failed(
        f"You extended layer {others[0]}'s cache, not this layer's: the check made MyLlamaAttention(config, "
        f"{LAYER}), and each layer keeps its own keys and values; keep layer as self.layer and call "
        "cache.extend(self.layer, k, v)."
    )


def _cache_problem(kv: KVCache, ex: AttentionCase) -> CheckResult | None:
    """Why the cache, after the call, does not hold the earlier tokens' and this step's rotated keys and
    values, or ``None``."""
    keys, values, c = kv.keys[LAYER], kv.values[LAYER], SMOLLM2
    n_c = ex.cached[0].shape[2]
    if keys is None or values is None or keys.shape[-2] == n_c:
        return failed(
            f"Your cache was not extended {ex.case}: call k, v = cache.extend(self.layer, k, v), which keeps "
            "this step's keys and values for the tokens that come next, and attend over what it returns."
        )
    if tuple(keys.shape) != ex.keys.shape or tuple(values.shape) != ex.values.shape:
        return failed(
            f"Your cache's keys have shape {shape_text(tuple(keys.shape))} {ex.case}, not (B, n_kv_heads, "
            f"n_k, d_head) = {shape_text(ex.keys.shape)}: extend it with k and v split into heads."
        )
    got = _float_array(keys)
    if not _close(got, ex.keys, RTOL):
        unrotated = np.stack([_heads(x, ex.w["W_k"], c.n_kv_heads, c.d_head) for x in ex.x]).astype(
            np.float64
        )
        if _close(got[:, :, n_c:], unrotated, RTOL):
            return failed(
                f"Your cache holds this step's keys before their rotation {ex.case}: rotate k by its "
                "positions first, then extend the cache; every key in it is rotated once, at its own "
                "position."
            )
        return failed(
            f"Your cache's keys {ex.case} are not the earlier tokens' followed by this step's rotated keys: "
            "rotate k, then k, v = cache.extend(self.layer, k, v), and change nothing in the cache."
        )
    if not _close(_float_array(values), ex.values, RTOL):
        return failed(
            f"Your cache's values {ex.case} are not the earlier tokens' followed by this step's: extend it "
            "with v split into heads, (B, n_kv_heads, n, d_head), as it comes from self.v."
        )
    return None


def _cache_hint(error: Exception) -> str:
    """Advice for an error of a call with a cache: tensors that do not fit the cache's."""
    if "Sizes of tensors must match" in str(error) or "must match the size" in str(error):
        return (
            "; the cache holds (B, n_kv_heads, n_k, d_head) tensors of keys already rotated: rotate this "
            "step's k, extend the cache with k and v before repeat_interleave, and rotate nothing it returns"
        )
    return _hint(error)


def _attention_run(module: nn.Module, ex: AttentionCase) -> Run:
    """The learner's attention on one case: its output, then its cache, autograd and dtype."""
    kv = _cache_with(ex)
    x, positions = torch.from_numpy(ex.x.copy()), torch.from_numpy(ex.positions.copy())
    with torch.enable_grad():
        out = _called(module, ATTENTION, (x, positions, kv), ex.case, _hint if kv is None else _cache_hint)
    out = out if isinstance(out, CheckResult) else _tensor(out, ATTENTION, ex.right.shape, ex.case)
    if isinstance(out, CheckResult):
        return Run(out)
    other = _other_layer(kv)
    if other is not None:
        return Run(other)
    after = None if kv is None else _cache_problem(kv, ex)
    if after is None and not out.requires_grad:
        after = failed(
            f"Your MyLlamaAttention's output is right but gradients do not flow through it {ex.case}: "
            "something in forward leaves autograd (.detach(), .data, NumPy, torch.tensor(…) of a tensor), "
            "so LoRA could not train q or v through it; compute with torch operations."
        )
    return Run(_float_array(out), _first(after, lambda: _dtype_problem(out, ATTENTION, ex.case)))


def check_llama_attention(MyLlamaAttention: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``MyLlamaAttention(config, layer)`` against attnlib's attention sublayer.

    The check makes ``MyLlamaAttention(SMOLLM2, LAYER)`` on the meta device and loads random float32
    weights (:func:`_attention_weights`, seeded) into ``q, k, v, o`` by name, as the lesson loads
    SmolLM2's, with SmolLM2's real sizes (9 query heads sharing 3 key/value heads, ``d_head`` 64,
    ``rope_base`` 100000) but not its weights, so it needs no model file. It then calls
    ``forward(x, positions, cache)`` on four cases (:func:`_attention_cases`): the prompt pass
    (positions ``0 … 5``, no cache), decoding one token at position 5 with a
    :class:`~attention_lessons.l19_pytorch.modules.KVCache` that already holds the first 5 tokens'
    rotated keys and values, a chunk of 3 tokens after those 5, and a prompt at scattered positions.
    Each output is compared with attnlib's NumPy (the projections, :func:`~attnlib.model.llama.rotate`,
    :func:`~attnlib.model.llama.grouped_query_attention`) within :data:`RTOL` of its largest entry,
    and after a call with a cache, the cache must hold the earlier keys and values followed by this
    step's rotated keys and values, in this layer only.

    Parameters
    ----------
    MyLlamaAttention : type
        The learner's class: ``__init__(self, config, layer)`` with ``q, k, v, o`` linear layers
        without bias, and ``forward(self, x, positions, cache=None)`` with ``x : (B, n, d_model)``,
        ``positions : (n,)`` and ``cache`` a ``KVCache`` or ``None``, returning ``(B, n, d_model)``.
    keep : dict, optional
        The lesson's record of the classes that passed (under ``"llama_attention"``).

    Returns
    -------
    CheckResult
    """
    return kept(MyLlamaAttention, ATTENTION.key, _attention_verdict(MyLlamaAttention), keep)


def _attention_verdict(answer: object) -> CheckResult:
    problem = class_problem(answer, ATTENTION.name, ATTENTION.init, ATTENTION.forward)
    if problem is not None:
        return problem
    module = _made(answer, ATTENTION, (SMOLLM2, LAYER), shown=f"MyLlamaAttention(config, {LAYER})", meta=True)
    if isinstance(module, CheckResult):
        return module
    cases = _attention_cases()
    weights = _projections(module)
    if isinstance(weights, CheckResult):
        return weights
    state = {f"{name}.weight": cases[0].w[f"W_{name}"].T for name in "qkvo"}
    problem = _loaded(module, ATTENTION, state)
    if problem is not None:
        return problem
    runs = [_attention_run(module, ex) for ex in cases]
    problem = _verdict(runs, cases, LLAMA_ATTENTION_MISTAKES, ATTENTION, RTOL)
    if problem is not None:
        return problem
    return passed(
        f"Correct: MyLlamaAttention gives attnlib's attention on {listed([ex.label for ex in cases])}, every "
        f"entry within {RTOL:g} of the largest, and extends the cache with this step's rotated keys."
    )


# --- LoRA ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoRACase:
    """One call of the learner's LoRA layer: the base layer's weights, ``A`` and ``B``, the input, the
    right output (float64)."""

    x: np.ndarray  # (3, 5, in)
    W: np.ndarray  # (out, in), as nn.Linear keeps it
    b: np.ndarray  # (out,)
    A: np.ndarray  # (r, in)
    B: np.ndarray  # (out, r)
    r: int
    alpha: float
    right: np.ndarray
    case: str
    label: str

    @property
    def scale(self) -> float:
        """``α / r``, which the advice of the scale's mistakes names."""
        return self.alpha / self.r


def _lora(
    ex: LoRACase, *, scale: str = "alpha / r", base: bool = True, bias: bool = True, whole: bool = False
) -> np.ndarray:
    """``base(x) + (α / r) · x Aᵀ Bᵀ`` with one mistake (the defaults: none)."""
    s = {"alpha / r": ex.alpha / ex.r, "r / alpha": ex.r / ex.alpha, "none": 1.0, "1 / r": 1 / ex.r,
         "alpha": ex.alpha}[scale]  # fmt: skip
    change = ex.x @ ex.A.T @ ex.B.T
    out = ex.x @ ex.W.T + (ex.b if bias else 0.0)
    if whole:
        return s * (out + change)
    return (out if base else 0.0) + s * change


_SCALE = "scale the change by α / r: self.scale = alpha / r (here {ex.alpha:g} / {ex.r} = {ex.scale:g})."

#: What a learner's LoRA layer may compute instead of ``base(x) + (α / r) · x Aᵀ Bᵀ``.
LORA_MISTAKES: tuple[Mistake[LoRACase], ...] = (
    Mistake(
        "You did not add the base layer's output",
        "LoRA adds a change to the frozen layer: "
        "return self.base(x) + self.scale * (x @ self.A.T @ self.B.T).",
        lambda ex: _lora(ex, base=False),
    ),
    Mistake(
        "You left out the base layer's bias",
        "the wrapped nn.Linear has a bias: self.base(x) computes x @ W.T + bias; add the change to that.",
        lambda ex: _lora(ex, bias=False),
    ),
    Mistake("Your scale is r / α, not α / r", _SCALE, lambda ex: _lora(ex, scale="r / alpha")),
    Mistake("You did not scale the change", _SCALE, lambda ex: _lora(ex, scale="none")),
    Mistake("Your scale is 1 / r, not α / r", _SCALE, lambda ex: _lora(ex, scale="1 / r")),
    Mistake("Your scale is α, not α / r", _SCALE, lambda ex: _lora(ex, scale="alpha")),
    Mistake(
        "You scaled the base layer's output too",
        "only the change is scaled: self.base(x) + self.scale * (x @ self.A.T @ self.B.T).",
        lambda ex: _lora(ex, whole=True),
    ),
)

#: The LoRA check's sizes and seed: a base ``nn.Linear(IN, OUT)`` in float64, rank ``R``, ``ALPHA``.
IN, OUT, R, ALPHA, LORA_SEED = 24, 16, 4, 8.0, 1921


@cache
def _lora_data() -> dict[str, np.ndarray]:
    """The base layer's weight and bias, the input, the ``A`` and ``B`` the check sets, a target."""
    rng = np.random.default_rng(LORA_SEED)
    return {
        "W": rng.standard_normal((OUT, IN)) / math.sqrt(IN),
        "b": rng.standard_normal(OUT),
        "x": rng.standard_normal((3, 5, IN)),
        "A": rng.standard_normal((R, IN)),
        "B": rng.standard_normal((OUT, R)),
        "target": rng.standard_normal((3, 5, OUT)),
    }


def _base() -> nn.Linear:
    """A fresh float64 ``nn.Linear(IN, OUT)`` holding the check's weight and bias (torch's random state
    left as it was)."""
    data = _lora_data()
    with torch.random.fork_rng(devices=[]):
        base = nn.Linear(IN, OUT, dtype=torch.float64)
    with torch.no_grad():
        base.weight.copy_(torch.from_numpy(data["W"]))
        base.bias.copy_(torch.from_numpy(data["b"]))
    return base


def _lora_made(
    answer: type, seed: int, generator: torch.Generator | None = None
) -> tuple[nn.Module, nn.Linear] | CheckResult:
    """The learner's layer around a fresh base, with ``generator`` (by default a new one seeded
    :data:`LORA_SEED`), torch's own random state seeded ``seed`` meanwhile, then made float64."""
    base = _base()
    generator = torch.Generator().manual_seed(LORA_SEED) if generator is None else generator
    shown = f"MyLoRALinear(base, {R}, {ALPHA:g}, generator=generator)"
    lora = _made(answer, LORA, (base, R, ALPHA), {"generator": generator}, shown=shown, seed=seed)
    if isinstance(lora, CheckResult):
        return lora
    return lora.to(torch.float64), base


def _low_rank(lora: nn.Module) -> tuple[nn.Parameter, nn.Parameter] | CheckResult:
    """The learner's ``A`` and ``B`` if both are registered parameters of LoRA's shapes, else why not."""
    for name in ("base", "A", "B"):
        if getattr(lora, name, None) is None:
            made = {"base": "base, the nn.Linear given", "A": "nn.Parameter(…) of shape (r, in)",
                    "B": "nn.Parameter(torch.zeros(out, r))"}[name]  # fmt: skip
            return failed(f"Your MyLoRALinear has no {name}: make it in __init__, self.{name} = {made}.")
    A, B = lora.A, lora.B
    if not (isinstance(A, torch.Tensor) and isinstance(B, torch.Tensor)):
        kind = a_type(A if not isinstance(A, torch.Tensor) else B)
        return failed(
            f"Your MyLoRALinear's A and B must be tensors, not {kind}: the lesson's A is (r, in) and B "
            "(out, r), each an nn.Parameter."
        )
    registered = {id(p) for p in lora.parameters()}
    if id(A) not in registered or id(B) not in registered:
        return failed(
            "Your A and B are plain tensors, not nn.Parameters: model.parameters() does not list them, so no "
            "optimiser would train them; make them self.A = nn.Parameter(…) and self.B = nn.Parameter(…)."
        )
    shapes = (tuple(A.shape), tuple(B.shape))
    if shapes != ((R, IN), (OUT, R)):
        return failed(_shapes_message(*shapes))
    return A, B


def _shapes_message(A: tuple[int, ...], B: tuple[int, ...]) -> str:
    right = (
        f"A : (r, in) = {shape_text((R, IN))} reads the input, B : (out, r) = {shape_text((OUT, R))} "
        "writes the output"
    )
    if (A, B) == ((IN, R), (R, OUT)):
        return (
            f"Your A and B are transposed, A {shape_text(A)} and B {shape_text(B)} (x @ A @ B): the lesson "
            f"lays them out as nn.Linear lays its weight, (out, in): {right}, and the change is "
            "x @ A.T @ B.T."
        )
    if (A, B) == ((R, OUT), (IN, R)):
        return (
            f"Your A and B have swapped roles, A {shape_text(A)} and B {shape_text(B)} (x @ B @ A): {right}; "
            "A is the one that starts random, B the one that starts at zero."
        )
    return (
        f"Your A has shape {shape_text(A)} and B {shape_text(B)} for r = {R}, in = {IN}, out = {OUT}: "
        f"{right}."
    )


def _frozen_problem(lora: nn.Module, base: nn.Linear, A: nn.Parameter, B: nn.Parameter) -> CheckResult | None:
    """Why not only ``A`` and ``B`` learn, or ``None``."""
    layer = lora.base if isinstance(lora.base, nn.Module) else base
    if any(p.requires_grad for p in layer.parameters()):
        return failed(
            "The base layer is not frozen: its weight and bias would learn too, which LoRA avoids (a few "
            "parameters learn, the model stays as it was); call self.base = base.requires_grad_(False)."
        )
    if not (A.requires_grad and B.requires_grad):
        return failed(
            "Your A and B do not learn (requires_grad is False): freeze the base layer only, "
            "base.requires_grad_(False), not the whole module."
        )
    others = [name for name, p in lora.named_parameters() if p.requires_grad and p is not A and p is not B]
    if others:
        return failed(f"Only A and B learn in LoRA; your MyLoRALinear also trains {listed(others)}.")
    return None


def _start_problem(A: np.ndarray, B: np.ndarray) -> CheckResult | None:
    """Why ``A`` and ``B`` as made are not LoRA's start (A random, B at zero), or ``None``."""
    a_zero, b_zero = not A.any(), not B.any()
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        return failed("Your A or B holds NaN or an infinity as made: start A random and B at zero.")
    if a_zero and b_zero:
        return failed(
            "A and B both start at zero: neither gets a gradient (B's is made of x Aᵀ, A's of B), so "
            "LoRA never learns; LoRA starts A random, torch.randn(r, in, generator=generator) / √in, "
            "and B at zero."
        )
    if a_zero:
        return failed(
            "B starts random and A at zero: the mirror of LoRA's start. It also leaves the layer unchanged "
            "and A would learn first, but Hu et al. (and PEFT) start A random and B at zero, the start the "
            "lesson's learning rate is for (Hayou et al., 2024, show that it allows larger stable learning "
            "rates and learns more efficiently); start A random, torch.randn(r, in, generator=generator) / "
            "√in, and B at zero."
        )
    if not b_zero:
        return failed(
            "B does not start at zero: then B A is not zero and the wrapped layer no longer starts as the "
            "model's; start B at zero, torch.zeros(out, r), and A random."
        )
    return None


def _generator_problem(answer: type, A: np.ndarray) -> CheckResult | None:
    """Why ``A`` (made with a generator seeded :data:`LORA_SEED`) does not come from the generator given.

    Made again with a generator seeded the same and torch's own state seeded otherwise, ``A`` must be
    the same; made a third time with that generator, already drawn from, it must differ (add_lora
    passes one generator to every layer).
    """
    generator = torch.Generator().manual_seed(LORA_SEED)
    advice = "draw it with torch.randn(r, in, generator=generator)"
    for k, same in enumerate((True, False)):
        made = _lora_made(answer, seed=2, generator=generator)
        if isinstance(made, CheckResult):
            return made
        again = getattr(made[0], "A", None)
        if not isinstance(again, torch.Tensor) or np.array_equal(_float_array(again), A) != same:
            return failed(
                f"Your A does not come from the generator given: {advice}, so that add_lora(…, seed=) makes "
                "the same A every time."
                if k == 0
                else f"Your A is the same whatever the generator given has drawn before: {advice}; add_lora "
                "passes one generator to every layer, so that each layer's A differs."
            )
    return None


def _outputs(lora: nn.Module, ex: LoRACase) -> Run:
    """The learner's layer on one case's input."""
    out = _called(lora, LORA, (torch.from_numpy(ex.x.copy()),), ex.case)
    out = out if isinstance(out, CheckResult) else _tensor(out, LORA, ex.right.shape, ex.case)
    return Run(out if isinstance(out, CheckResult) else _float_array(out))


def _lora_case(A: np.ndarray, B: np.ndarray, case: str, label: str) -> LoRACase:
    d = _lora_data()
    ex = LoRACase(d["x"], d["W"], d["b"], A, B, R, ALPHA, np.zeros(0), case, label)
    return LoRACase(d["x"], d["W"], d["b"], A, B, R, ALPHA, _lora(ex), case, label)


#: The learning rate of the LoRA check's one SGD step: small enough that any A a learner starts with
#: (even of entries about 10) lowers the squared loss.
LORA_LR = 1e-3


def _one_step(lora: nn.Module) -> tuple[float, np.ndarray | None, float]:
    """The loss of ``lora`` on the check's input and target, ``B``'s gradient, and the loss after one
    SGD step on the parameters that learn (written out: ``p -= lr · p.grad``)."""
    d = _lora_data()
    x, target = torch.from_numpy(d["x"].copy()), torch.from_numpy(d["target"])
    with torch.enable_grad():
        loss = ((lora(x) - target) ** 2).mean()
        loss.backward()
    grad = None if lora.B.grad is None else _float_array(lora.B.grad)
    with torch.no_grad():
        for p in lora.parameters():
            if p.requires_grad and p.grad is not None:
                p -= LORA_LR * p.grad
        after = ((lora(x) - target) ** 2).mean().item()
    return loss.item(), grad, after


def _learning_problem(answer: type) -> CheckResult | None:
    """Why one SGD step of a freshly made layer does not follow the loss's gradient, or ``None``.

    With ``B`` at zero, ``∂loss/∂B = scale · Σ Gᵀ (x Aᵀ)`` (``G = ∂loss/∂output``) and ``∂loss/∂A = 0``.
    """
    made = _lora_made(answer, seed=3)
    if isinstance(made, CheckResult):
        return made
    lora, _ = made
    try:
        with _quiet():
            before, grad, after = _one_step(lora)
    except Exception as error:  # a learner's module may fail backwards
        return failed(
            f"Training your MyLoRALinear one step raised {type(error).__name__}: {one_line(error)}."
        )
    d = _lora_data()
    A = _float_array(lora.A)  # after the step: A's gradient was zero, so it has not moved
    y = d["x"] @ d["W"].T + d["b"]
    G = 2 * (y - d["target"]) / y.size
    expected = (ALPHA / R) * np.einsum("bno,bnr->or", G, d["x"] @ A.T)
    if grad is None or not grad.any() or not _close(grad, expected, LORA_RTOL):
        return failed(
            "B does not get the loss's gradient: something in your forward leaves autograd (.detach(), "
            ".data, torch.tensor(…) of a tensor) or does not use self.A and self.B themselves; compute "
            "self.base(x) + self.scale * (x @ self.A.T @ self.B.T)."
        )
    if not after < before:
        return failed("One SGD step on A and B did not lower the loss: compute the change from A and B.")
    return None


def check_lora(MyLoRALinear: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``MyLoRALinear(base, r, alpha, generator=None)``: LoRA around a frozen layer.

    The check wraps a float64 ``nn.Linear(24, 16)`` with a bias, of fixed weights, with ``r = 4``,
    ``α = 8`` and a seeded ``torch.Generator``, and checks, in this order: ``A`` and ``B`` are
    registered ``nn.Parameter`` objects of shapes ``(r, in)`` and ``(out, r)``; the base's weight and bias
    are frozen and only ``A`` and ``B`` learn; ``B`` starts at zero and ``A`` random; ``A`` comes from
    the generator (made again with a generator seeded the same, and torch's own random state seeded
    differently, it is the same); the output equals the base's (``B`` at zero); with ``A`` and ``B``
    set to known values it equals ``base(x) + (α / r) · x Aᵀ Bᵀ`` within :data:`LORA_RTOL`; a freshly
    made layer's ``B`` gets the gradient of a squared loss, and one SGD step lowers the loss; and
    ``scale`` is ``α / r``.

    The start is the paper's (Hu et al., 2021: ``A`` random Gaussian, ``B`` zero; PEFT's too). The
    mirror, ``B`` random and ``A`` zero, also starts the layer unchanged and would learn (``A`` gets
    the first gradient), but it is refused with that said: the lesson's learning rate is for LoRA's
    start, and Hayou et al. (2024, "The Impact of Initialization on LoRA Finetuning Dynamics") show
    the two differ, LoRA's allowing larger stable learning rates. Both at zero never learn.

    Parameters
    ----------
    MyLoRALinear : type
        The learner's class: ``__init__(self, base, r, alpha, generator=None)`` keeping ``base``
        (frozen), ``A``, ``B`` and ``scale``, and ``forward(self, x)``.
    keep : dict, optional
        The lesson's record of the classes that passed (under ``"lora_linear"``).

    Returns
    -------
    CheckResult
    """
    return kept(MyLoRALinear, LORA.key, _lora_verdict(MyLoRALinear), keep)


def _lora_verdict(answer: object) -> CheckResult:
    problem = class_problem(answer, LORA.name, LORA.init, LORA.forward)
    if problem is not None:
        return problem
    made = _lora_made(answer, seed=1)
    if isinstance(made, CheckResult):
        return made
    lora, base = made
    pair = _low_rank(lora)
    if isinstance(pair, CheckResult):
        return pair
    A, B = pair
    start = _float_array(A), _float_array(B)
    problem = _first(_frozen_problem(lora, base, A, B), lambda: _start_problem(*start))
    if problem is not None:
        return problem
    problem = _generator_problem(answer, start[0])
    if problem is not None:
        return problem
    cases = [_lora_case(*start, "as made (B at zero)", "as made")]
    runs = [_outputs(lora, cases[0])]
    rng = _lora_data()
    with torch.no_grad():
        A.copy_(torch.from_numpy(rng["A"]))
        B.copy_(torch.from_numpy(rng["B"]))
    cases.append(_lora_case(rng["A"], rng["B"], "with A and B set to known values", "with A and B set"))
    runs.append(_outputs(lora, cases[1]))
    problem = _first(_verdict(runs, cases, LORA_MISTAKES, LORA, LORA_RTOL), lambda: _learning_problem(answer))
    if problem is not None:
        return problem
    scale = getattr(lora, "scale", None)
    if not (
        isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isclose(scale, ALPHA / R)
    ):
        has = "keeps no scale" if scale is None else f"its scale is {scale!r}"
        return failed(
            f"Your MyLoRALinear computes the right output, but {has}: keep α / r as self.scale, the "
            "attribute the lesson names."
        )
    return passed(
        "Correct: MyLoRALinear starts as the base layer (B at zero, A random from the generator), trains "
        f"only A and B, gives base(x) + (α / r)·x Aᵀ Bᵀ within {LORA_RTOL:g}, and B learns from a loss."
    )
