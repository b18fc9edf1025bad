"""Self-checks of lesson 19, the same model in PyTorch: the learner ports lesson 18's GPT to
``torch.nn.Module``s and writes its evaluation and its training step, and each check runs the
learner's code on lesson 18's committed weights and compares it with attnlib's NumPy.

- :func:`check_attention` (the class ``MyAttention``) and its table :data:`ATTENTION_MISTAKES`;
- :func:`check_gpt` (the class ``MyGPT``) and :data:`GPT_MISTAKES`;
- :func:`check_evaluate` (``my_evaluate``) and :data:`EVALUATE_MISTAKES`;
- :func:`check_train_step` (``my_train_step``) and :data:`TRAIN_STEP_MISTAKES`;
- each check keeps the learner's answer, when it passes, in the lesson's own dictionary
  (``keep=yours``) under ``"attention"``, ``"gpt"``, ``"evaluate"`` or ``"train_step"``, and takes it
  out when a later check of it fails (the kit's :func:`~attention_lessons.kit.checks.functions.kept`):
  what the lesson then runs.

The classes are built by the check, with the sizes the lesson gives (``MyAttention(d_model,
n_heads)``, ``MyGPT(config)``), and loaded with the committed run's weights
(:func:`attention_lessons.l18_training_gpt.runs.load_run`, turned into the modules' names by
:func:`~attention_lessons.l19_pytorch.modules.gpt_state_dict`): their outputs are compared with
attnlib's public NumPy functions in float64, where the two differ only by rounding (about 1e-14 of
the largest entry), within :data:`RTOL64` of each output's largest entry; the GPT's logits also in
float32, within the bound of :func:`float32_bound`. As in lessons 16 and 18, each row of a table
*makes* its mistake on a case's inputs (in NumPy), and the row that gives what the learner's code
gave is named; the right numbers are never shown. Everything else is told in one line: no answer
yet, not a class or not an ``nn.Module``, a constructor or function that takes other arguments,
parameters that do not load (missing or unexpected names, other shapes, tied weights), an error
raised (its last line), something other than a tensor or a float returned, another shape or dtype.

What the checks decide for the learner:

- a model is compared in evaluation mode: :func:`check_attention` and :func:`check_gpt` call
  ``model.eval()`` and run under ``torch.no_grad()`` themselves, as any code that compares logits
  does (the classes may have dropout, as :class:`~attention_lessons.l19_pytorch.modules.GPT`
  does); a model whose output still changes from one call to the next (``F.dropout(x, p)``, whose
  ``training`` is True unless given) is refused;
- :func:`check_evaluate` gives ``my_evaluate`` a model in training mode with dropout 0.2, so that
  it must call ``model.eval()`` and ``torch.no_grad()`` itself; putting the model back in training
  mode afterwards is not required (nanoGPT's ``estimate_loss`` does, with ``model.train()``; the
  lesson's loop calls ``model.train()`` before each step instead, so either way works);
- RoPE is relative: positions that start at 1 (or at any offset) change no score, so a model
  counting its positions from 1 gives the same logits and passes.

The checks run PyTorch on one thread with float64 as its default dtype, gradients on and its random
state forked (so the learner's own random stream is untouched), and restore all of them after.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import torch
from torch import nn

from attention_lessons.kit.checks.functions import (
    a_type,
    kept,
    listed,
    not_a_function,
    one_line,
    wrong_arguments,
)
from attention_lessons.kit.checks.mistakes import Mistake, describe, matching, named_by_every_case
from attention_lessons.kit.checks.result import CheckResult, failed, passed
from attention_lessons.kit.checks.wording import numpy_index, shape_text
from attention_lessons.l18_training_gpt.runs import load_run
from attention_lessons.l19_pytorch.classes import class_problem
from attention_lessons.l19_pytorch.modules import GPT, attnlib_names, gpt_state_dict
from attnlib.core import scaled_dot_product_attention
from attnlib.decoder import DecoderConfig
from attnlib.decoder.block import gelu_tanh, layer_norm
from attnlib.decoder.forward_pass import forward_steps
from attnlib.decoder.gpt import loss_and_gradients, sample_batch, windows_loss
from attnlib.model import gelu
from attnlib.multihead import merge_heads, split_heads
from attnlib.optim import AdamW, clip_by_global_norm, global_norm
from attnlib.positions import rope, rope_frequencies, rotate_pairs
from attnlib.training import log_softmax

__all__ = [
    "ATTENTION_MISTAKES",
    "EVALUATE_DROPOUT",
    "EVALUATE_MISTAKES",
    "GPT_MISTAKES",
    "PARAMS_RTOL",
    "RTOL64",
    "STEP_CLIP",
    "TRAIN_STEP_MISTAKES",
    "U32",
    "AttentionSlip",
    "GPTSlip",
    "ModuleCase",
    "attention_numpy",
    "check_attention",
    "check_evaluate",
    "check_gpt",
    "check_train_step",
    "float32_bound",
    "gpt_numpy",
]

#: Relative tolerance of a learner's float64 output, at the scale of its largest entry. PyTorch and
#: attnlib compute the same float64 sums in other orders: by :func:`float32_bound`'s reasoning with
#: float64's u = 2⁻⁵³ the logits then differ by about 8e-13 of the largest, and by 9e-12 even if
#: every sum of m terms were off by its worst, m·u; measured, 2e-14. 1e-10 is ten times that worst
#: case, and far below the smallest change a mistake of the tables makes (6e-4 of the largest logit,
#: GELU's erf form; every other row 0.28 or more).
RTOL64 = 1e-10
#: A float64 output off by less than this (relative to its largest entry) but more than
#: :data:`RTOL64` is within float32's rounding: some step computed in float32.
FLOAT32_NEAR = 1e-4
#: float32's unit roundoff, 2⁻²⁴.
U32 = 2.0**-24
#: Relative tolerance of the training step's losses and parameters after two steps (float64). The
#: gradients agree to about 1e-12 of each array's largest entry; AdamW divides each by its running
#: root mean square, so a parameter moves by at most about the learning rate per step, and the
#: measured difference after two steps is 2e-12 of each array's largest entry.
PARAMS_RTOL = 1e-9
#: The ``clip`` :func:`check_train_step` gives: not lesson 18's 1.0, under which the largest single
#: gradient of its batches (about 0.16, of a global norm about 4.7) is clipped neither by the norm of
#: the largest entry (``norm_type=inf``) nor by ``clip_grad_value_``, so those mistakes would give the
#: same step as no clipping at all; at 0.1 every way of clipping gives a step of its own.
STEP_CLIP = 0.1
#: The dropout of the model :func:`check_evaluate` gives the learner, left in training mode.
EVALUATE_DROPOUT = 0.2
SEED = 19

Keep = MutableMapping[str, Callable] | None


# --- the committed model -------------------------------------------------------------------------------


@cache
def _run() -> object:
    return load_run()


def _config() -> DecoderConfig:
    return _run().config  # type: ignore[attr-defined]


@cache
def _params64() -> dict[str, np.ndarray]:
    """The committed run's parameters in float64 (float32 numbers, exact in float64)."""
    return {name: value.astype(np.float64) for name, value in _run().params.items()}  # type: ignore[attr-defined]


def _layer_weights(layer: int) -> dict[str, np.ndarray]:
    """Layer ``layer``'s attention matrices ``W_q … W_o``, float64, ``(in, out)`` as attnlib keeps them."""
    return {name: _params64()[f"layer{layer}.{name}"] for name in ("W_q", "W_k", "W_v", "W_o")}


def _state(params: Mapping[str, np.ndarray], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    return {name: value.to(dtype) for name, value in gpt_state_dict(params, _config().n_layers).items()}


# --- PyTorch's settings while a check runs --------------------------------------------------------------


@contextlib.contextmanager
def _torch_settings(dtype: torch.dtype = torch.float64) -> Iterator[None]:
    """One thread, ``dtype`` as the default, gradients on, a forked random state; all restored after."""
    threads, default, grad = torch.get_num_threads(), torch.get_default_dtype(), torch.is_grad_enabled()
    torch.set_num_threads(1)
    torch.set_default_dtype(dtype)
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(SEED)
            torch.set_grad_enabled(True)
            yield
    finally:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(default)
        torch.set_num_threads(threads)


# --- the learner's class: built, loaded, run ------------------------------------------------------------

#: Advice for the errors PyTorch raises on a learner's module, by a piece of their message.
_ERROR_HINTS = {
    "before Module.__init__() call": "call super().__init__() first in __init__",
    "view size is not compatible": (
        "after transpose the tensor is not contiguous: use .reshape(...), or .contiguous().view(...)"
    ),
    "must have the same dtype": (
        "a tensor made with a fixed dtype meets the model's: make new tensors in x's (dtype=x.dtype)"
    ),
    "expect parameter to have scalar type": (
        "a tensor in another dtype than the model's parameters: make new tensors in x's dtype (no .float() "
        "or dtype=torch.float32 in forward)"
    ),
    "expected scalar type": (
        "a tensor made with a fixed dtype meets the model's: make new tensors in x's (dtype=x.dtype)"
    ),
    "Expected target size": (
        "F.cross_entropy takes logits (N, V) and targets (N,): logits.view(-1, logits.size(-1)) and "
        "targets.view(-1)"
    ),
    "does not require grad": (
        "the loss has no graph: no torch.no_grad() around the training step, and no .item() or "
        ".detach() before loss.backward()"
    ),
}


def _last_line(error: Exception) -> str:
    """The last line of an error's message (PyTorch's say what went wrong last), with advice."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    text = one_line(lines[-1] if lines else type(error).__name__)
    hint = next((advice for part, advice in _ERROR_HINTS.items() if part in str(error)), "")
    return f"{text}; {hint}" if hint else text


def _build(answer: type, name: str, params: str, args: tuple) -> nn.Module | CheckResult:
    """``answer(*args)``, or why it cannot be built as the lesson builds it."""
    wrong = wrong_arguments(answer, args)
    if wrong is not None:
        return failed(f"Wrong arguments: the lesson builds {name}({params}); yours is {name}{wrong}.")
    try:
        return answer(*args)
    except Exception as error:  # a learner's constructor may raise anything; the message says what
        return failed(f"Your {name}({params}) raised {type(error).__name__}: {_last_line(error)}.")


def _listed_keys(keys: Sequence[str], most: int = 4) -> str:
    shown = listed(list(keys[:most])) if len(keys) <= most else ", ".join(keys[:most])
    return shown if len(keys) <= most else f"{shown} and {len(keys) - most} more"


def _load(model: nn.Module, state: Mapping[str, torch.Tensor], name: str, names: str) -> CheckResult | None:
    """Load ``state`` into the learner's ``model``, or say plainly why its parameters are not those.

    Buffers the learner keeps (a mask, RoPE's angles) are the learner's own and stay; every
    parameter must be one of ``state``'s, of its shape, and none may share another's memory.
    """
    theirs = model.state_dict(keep_vars=True)
    buffers = {key for key, _ in model.named_buffers()}
    missing = [key for key in state if key not in theirs]
    unexpected = [key for key in theirs if key not in state and key not in buffers]
    if missing or unexpected:
        parts = ([f"missing {_listed_keys(missing)}"] if missing else []) + (
            [f"unexpected {_listed_keys(unexpected)}"] if unexpected else []
        )
        biases = any(key.endswith(("q.bias", "k.bias", "v.bias", "o.bias")) for key in unexpected)
        advice = " (the attention's nn.Linear layers have no bias: bias=False)" if biases else ""
        return failed(
            f"{name}'s parameters do not load lesson 18's weights: {'; '.join(parts)}{advice}. The lesson "
            f"names them {names}."
        )
    for key, value in state.items():
        if tuple(theirs[key].shape) != tuple(value.shape):
            layout = (
                ": nn.Linear(in_features, out_features) keeps its weight as (out_features, in_features)"
                if value.ndim == 2
                else ""
            )
            return failed(
                f"{name}'s {key} has shape {shape_text(tuple(theirs[key].shape))}; lesson 18's is "
                f"{shape_text(tuple(value.shape))}{layout}."
            )
    shared: dict[int, str] = {}
    for key in state:
        pointer = theirs[key].data_ptr()
        if pointer in shared:
            return failed(
                f"Your {key} shares its memory with {shared[pointer]} (tied weights): lesson 18's model "
                "keeps them apart; give each its own nn.Linear or nn.Embedding, and compute the logits "
                "with self.unembed."
            )
        shared[pointer] = key
    with torch.no_grad():
        model.load_state_dict(state, strict=False)
    return None


@dataclass(frozen=True)
class ModuleCase:
    """One run of a learner's module: its input, attnlib's output, and how close it must be.

    Attributes
    ----------
    name : str
        The learner's class (``MyAttention``).
    what : str
        What its forward returns, for the messages (``"output"``, ``"logits"``).
    inputs : np.ndarray
        The input: ``x (B, n, d_model)`` float64, or token ids ``(B, n)``.
    right : np.ndarray
        attnlib's output, float64.
    case : str
        The input in words, for the messages.
    label : str
        The case in a few words, for the message of a class that passes.
    dtype : torch.dtype
        The dtype the model is built and run in.
    atol : float
        The largest difference allowed from ``right`` (and from a mistake's output).
    shapes : dict
        Shapes the learner's output may wrongly have, with what each says (a hint).
    """

    name: str
    what: str
    inputs: np.ndarray
    right: np.ndarray
    case: str
    label: str
    dtype: torch.dtype = torch.float64
    atol: float = 0.0
    shapes: Mapping[tuple[int, ...], str] = field(default_factory=dict)


def _output(returned: object, ex: ModuleCase) -> np.ndarray | CheckResult:
    """The learner's forward's result as a float64 array, or why it is not the tensor due."""
    call = f"{ex.name}'s forward"
    if returned is None:
        return failed(f"Nothing returned: {call} returns None; end it with `return` and the {ex.what}.")
    if isinstance(returned, (tuple, list)):
        return failed(
            f"Return the {ex.what} alone: {call} returned {a_type(returned)} of {len(returned)} on "
            f"{ex.case}; {ex.shapes.get((), '')}"
        )
    if isinstance(returned, np.ndarray):
        return failed(
            f"Not a tensor: {call} returned a NumPy array; stay in torch (no .numpy() in forward), whose "
            "autograd follows tensors only."
        )
    if not isinstance(returned, torch.Tensor):
        return failed(f"Not a tensor: {call} returned {a_type(returned)}; return the {ex.what} tensor.")
    if returned.dtype != ex.dtype:
        return failed(
            f"Your model computes in {str(returned.dtype).removeprefix('torch.')}: {call} returned "
            f"{ex.what} of that dtype although the check built it in {str(ex.dtype).removeprefix('torch.')} "
            f"(model.to(dtype), and {str(ex.dtype).removeprefix('torch.')} the default dtype); a .float(), "
            "a .double() or a tensor made with a fixed dtype in __init__ or forward changes it: make new "
            "tensors in x's dtype."
        )
    try:
        array = returned.detach().cpu().numpy().astype(np.float64)
    except (RuntimeError, TypeError, ValueError) as error:  # a tensor NumPy cannot read (a meta tensor)
        return failed(f"Not readable: {call} returned a tensor NumPy cannot read ({_last_line(error)}).")
    if array.shape != ex.right.shape:
        hint = ex.shapes.get(array.shape, "")
        return failed(
            f"Wrong shape: {call} returned {ex.what} of shape {shape_text(array.shape)} on {ex.case}, where "
            f"attnlib's {ex.what} {'have' if ex.what.endswith('s') else 'has'} shape "
            f"{shape_text(ex.right.shape)}{'. ' + hint if hint else '.'}"
        )
    return array


def _run_module(model: nn.Module, ex: ModuleCase) -> np.ndarray | CheckResult:
    """The learner's model on the case's input, under ``torch.no_grad()``, read as :func:`_output` says."""
    try:
        with torch.no_grad():
            returned = model(torch.from_numpy(ex.inputs.copy()))
    except Exception as error:  # a learner's forward may raise anything; the message says what
        return failed(
            f"Your {ex.name}'s forward raised {type(error).__name__} on {ex.case}: {_last_line(error)}."
        )
    return _output(returned, ex)


def _outputs(model: nn.Module, cases: Sequence[ModuleCase]) -> list[np.ndarray | CheckResult] | CheckResult:
    """The model's output on each case, or a failed result where the first case's output changes from
    one call to the next (a dropout that ``model.eval()`` does not turn off)."""
    outputs = [_run_module(model, ex) for ex in cases]
    first = outputs[0]
    if isinstance(first, np.ndarray):
        again = _run_module(model, cases[0])
        if isinstance(again, np.ndarray) and not np.array_equal(again, first, equal_nan=True):
            return failed(
                f"Your {cases[0].name}'s forward gives different {cases[0].what} on two calls with the same "
                "input, in evaluation mode: a dropout still drops after model.eval(). F.dropout(x, p) drops "
                "unless given training=self.training; use nn.Dropout modules, which model.eval() turns off."
            )
    return outputs


def _agree(a: np.ndarray, b: object, atol: float) -> bool:
    """Whether ``a`` is ``b`` within ``atol``; NaN and infinities (a mistake's) sit at the same places."""
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    finite = np.isfinite(b)
    if not np.array_equal(np.isfinite(a), finite):
        return False
    return bool(np.all(np.abs(a[finite] - b[finite]) <= atol))


def _not_yet(got: np.ndarray, ex: ModuleCase) -> CheckResult:
    """Where the learner's output differs, when no mistake of the table gives it."""
    if not np.isfinite(got).all():
        return failed(
            f"Not finite, on {ex.case}: {ex.name}'s {ex.what} holds NaN or an infinity, where attnlib's is "
            "finite (a query whose every key is masked, or an overflow)."
        )
    off = np.abs(got - ex.right)
    scale = float(np.abs(ex.right).max())
    if ex.dtype == torch.float64 and off.max() <= FLOAT32_NEAR * scale:
        return failed(
            f"Nearly, on {ex.case}: {ex.name}'s {ex.what} is within float32's rounding of attnlib's but not "
            f"float64's (off by {off.max() / scale:.1e} of the largest entry, where float64 allows "
            f"{RTOL64:g}): a step computes in float32 (a .float(), or a tensor made with "
            "dtype=torch.float32); make new tensors in x's dtype."
        )
    worst = np.unravel_index(int(np.argmax(off)), off.shape)
    return failed(
        f"Not yet, on {ex.case}: {ex.name}'s {ex.what} differs from attnlib's, most at numpy index "
        f"{numpy_index(worst)}; compare each step with the lesson's."
    )


def _module_verdict(
    outputs: Sequence[np.ndarray | CheckResult], cases: Sequence[ModuleCase], mistakes: Sequence[Mistake]
) -> CheckResult | None:
    """``None`` when every output is attnlib's within its case's tolerance, else why not.

    The first case that fails decides; where its output is a mistake's, the other cases narrow
    the rows down (the kit's :func:`~attention_lessons.kit.checks.mistakes.named_by_every_case`).
    """
    failing = next(
        (
            k
            for k, got in enumerate(outputs)
            if isinstance(got, CheckResult) or not _agree(got, cases[k].right, cases[k].atol)
        ),
        None,
    )
    if failing is None:
        return None
    ex, got = cases[failing], outputs[failing]
    if isinstance(got, CheckResult):
        return got
    found = named_by_every_case(mistakes, cases, outputs, failing, lambda a, b, case: _agree(a, b, case.atol))
    if not found:
        return _not_yet(got, ex)
    return failed(f"{describe('', found, ex)} Seen on {ex.case}.")


def _labels(cases: Sequence[ModuleCase]) -> str:
    return listed(list(dict.fromkeys(ex.label for ex in cases)))


# --- 1. the attention ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionSlip:
    """How one causal RoPE attention is computed: right by default, or with one porting mistake.

    Attributes
    ----------
    projection : str
        ``"right"`` (``x W``, what ``self.q(x)`` computes), ``"transposed"`` (``x @ self.q.weight``
        for all four layers: ``x Wᵀ``) or ``"transposed qkv"`` (the three, then ``self.o``).
    split, merge : str
        ``"right"`` (``view(B, n, H, d_head).transpose(1, 2)`` and back) or ``"view"`` (straight
        to ``(B, H, n, d_head)``, or from it to ``(B, n, d_model)``, without the transpose).
    rope : str
        Which of q, k, v are rotated (``"qk"``, ``"q"``, ``"k"``, ``"qkv"``, ``"none"``),
        ``"half"`` (Llama's rotate-half pairing on q and k), or ``"before split"`` (q and k rotated
        as whole ``d_model`` vectors, then split).
    scale : str
        ``"d_head"`` (``1/√d_head``), ``"none"``, ``"d_model"`` (``1/√d_model``), ``"d"`` (``1/d_head``).
    mask : str
        ``"causal"``, ``"future"`` (each query sees itself and later keys: ``triu``, or the causal
        mask transposed), ``"past hidden"`` (the causal mask's True filled), ``"none"``, ``"added"``
        (the 0/1 mask added to the scores), ``"zero"`` (filled with 0), ``"after"`` (the weights
        multiplied by the mask after the softmax).
    softmax : int
        The dim of ``(B, H, n_q, n_k)`` the softmax runs over (-1; -2 the queries, 1 the heads).
    output : bool
        Whether ``self.o`` is applied.
    """

    projection: str = "right"
    split: str = "right"
    merge: str = "right"
    rope: str = "qk"
    scale: str = "d_head"
    mask: str = "causal"
    softmax: int = -1
    output: bool = True


def _softmax(scores: np.ndarray, axis: int) -> np.ndarray:
    """PyTorch's softmax: a row (along ``axis``) of −∞ only gives NaN, as ``torch.softmax`` does."""
    with np.errstate(all="ignore"):
        e = np.exp(scores - scores.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def _masked(scores: np.ndarray, mode: str) -> np.ndarray:
    n = scores.shape[-1]
    causal = np.tri(n, dtype=bool)
    if mode == "causal":
        return np.where(causal, scores, -np.inf)
    if mode == "future":
        return np.where(causal.T, scores, -np.inf)
    if mode == "past hidden":
        return np.where(causal, -np.inf, scores)
    if mode == "added":
        return scores + causal
    if mode == "zero":
        return np.where(causal, scores, 0.0)
    return scores  # "none", "after"


def _turned(x: np.ndarray, pairing: str = "interleaved") -> np.ndarray:
    """RoPE at positions ``0 … n − 1`` along axis −2, with the trusting
    :func:`attnlib.positions.rotate_pairs` (a mistake's NaN passes through, as in PyTorch)."""
    n, d = x.shape[-2:]
    return rotate_pairs(x, np.arange(n)[:, None] * rope_frequencies(d), pairing)


def attention_numpy(
    x: np.ndarray, w: Mapping[str, np.ndarray], n_heads: int, slip: AttentionSlip = AttentionSlip()
) -> np.ndarray:
    """Lesson 18's attention on ``x (B, n, d_model)`` with the weights ``w`` (``W_q … W_o``, ``(in, out)``),
    made with ``slip``'s mistake: what a learner's ``MyAttention`` with that mistake returns.

    Without a slip it is attnlib's attention (:func:`_attnlib_attention`) to float64's rounding. It
    splits and merges the heads and rotates with reshapes and :func:`attnlib.positions.rotate_pairs`,
    which take NaN as it comes (a mistake's fully masked rows give NaN, as PyTorch's softmax does).
    """
    B, n, d_model = x.shape
    d_head = d_model // n_heads
    turned = {"transposed": ("W_q", "W_k", "W_v", "W_o"), "transposed qkv": ("W_q", "W_k", "W_v")}
    W = {name: m.T if name in turned.get(slip.projection, ()) else m for name, m in w.items()}
    q, k, v = x @ W["W_q"], x @ W["W_k"], x @ W["W_v"]
    if slip.rope == "before split":
        q, k = _turned(q), _turned(k)
    if slip.split == "view":
        q, k, v = (a.reshape(B, n_heads, n, d_head) for a in (q, k, v))
    else:
        q, k, v = (a.reshape(B, n, n_heads, d_head).swapaxes(1, 2) for a in (q, k, v))
    pairing = "half" if slip.rope == "half" else "interleaved"
    if slip.rope in ("qk", "q", "qkv", "half"):
        q = _turned(q, pairing)
    if slip.rope in ("qk", "k", "qkv", "half"):
        k = _turned(k, pairing)
    if slip.rope == "qkv":
        v = _turned(v)
    divide = {"d_head": math.sqrt(d_head), "none": 1.0, "d_model": math.sqrt(d_model), "d": d_head}
    scores = _masked(q @ k.swapaxes(-1, -2) / divide[slip.scale], slip.mask)
    weights = _softmax(scores, slip.softmax)
    if slip.mask == "after":
        weights = weights * np.tri(n)
    z = weights @ v
    joined = z.reshape(B, n, d_model) if slip.merge == "view" else z.swapaxes(1, 2).reshape(B, n, d_model)
    return joined @ W["W_o"] if slip.output else joined


def _attnlib_attention(x: np.ndarray, w: Mapping[str, np.ndarray], n_heads: int) -> np.ndarray:
    """attnlib's answer: the heads split (lesson 09), q and k rotated by RoPE on neighbouring pairs at
    positions ``0 … n − 1`` (:func:`attnlib.positions.rope`'s interleaved pairing, what the decoder's
    ``attend`` rotates with), causal scaled dot-product attention, the heads merged, ``W_o``."""
    Q, K, V = (split_heads(x @ w[name], n_heads) for name in ("W_q", "W_k", "W_v"))
    out, _ = scaled_dot_product_attention(rope(Q, pairing="interleaved"), rope(K), V, causal=True)
    return merge_heads(out) @ w["W_o"]


_SPLIT = (
    "split each token's vector into heads, then move the heads forward: q.view(B, n, n_heads, d_head)"
    ".transpose(1, 2), and back with z.transpose(1, 2).reshape(B, n, d_model)"
)
_SOFTMAX = (
    "each query's weights are over the keys, the last dim of the scores (B, H, n_q, n_k): softmax(dim=-1)."
)
_BOTH = (
    "rotate the queries and the keys, each by its own position: their score then depends on their distance."
)

#: Each row: what the message says, and the attention that makes the mistake.
_ATTENTION_ROWS: tuple[tuple[str, str, AttentionSlip], ...] = (
    ("Softmax over the wrong dim (the queries)", _SOFTMAX, AttentionSlip(softmax=-2)),
    ("Softmax over the wrong dim (the heads)", _SOFTMAX, AttentionSlip(softmax=1)),
    (
        "Your mask is the wrong way round: each query sees itself and the tokens after it",
        "a query may attend to itself and the tokens before it: keep the lower triangle, "
        "torch.tril(torch.ones(n, n, dtype=torch.bool)), and fill the rest: scores.masked_fill(~mask, "
        "float('-inf')) (not triu, nor the mask transposed).",
        AttentionSlip(mask="future"),
    ),
    (
        "Your mask hides the past and the token itself, not the future",
        "masked_fill fills where its mask is True: fill the future, scores.masked_fill(~causal, "
        "float('-inf')) with causal the lower triangle (or fill torch.triu(..., diagonal=1)).",
        AttentionSlip(mask="past hidden"),
    ),
    (
        "No causal mask",
        "a token may not read the tokens after it: fill the scores above the diagonal with −inf before "
        "the softmax (or F.scaled_dot_product_attention(q, k, v, is_causal=True)).",
        AttentionSlip(mask="none"),
    ),
    (
        "You added the 0/1 mask to the scores",
        "adding ones and zeros only shifts the scores; fill the future with −inf instead: "
        "scores.masked_fill(~mask, float('-inf')).",
        AttentionSlip(mask="added"),
    ),
    (
        "You filled the future with 0, not −inf",
        "a score of 0 still gets a weight after the softmax; fill with float('-inf'), whose weight is 0.",
        AttentionSlip(mask="zero"),
    ),
    (
        "You masked the weights after the softmax",
        "zeroing weights after the softmax leaves rows that no longer sum to 1; mask the scores before "
        "it, with −inf.",
        AttentionSlip(mask="after"),
    ),
    (
        "No 1/√d_head scaling",
        "scale the scores before the softmax (lesson 04): q @ k.transpose(-2, -1) / math.sqrt(d_head), "
        "d_head = d_model // n_heads.",
        AttentionSlip(scale="none"),
    ),
    (
        "You scaled by 1/√d_model instead of 1/√d_head",
        "each head's scores are dot products of d_head components: divide by math.sqrt(d_model // n_heads).",
        AttentionSlip(scale="d_model"),
    ),
    (
        "You divided by d_head, not by its square root",
        "the scale is 1/√d_head: divide by math.sqrt(d_head).",
        AttentionSlip(scale="d"),
    ),
    (
        "Heads split without the transpose (view(B, n_heads, n, d_head))",
        f"that cuts the sequence's rows, not each token's vector: {_SPLIT}.",
        AttentionSlip(split="view", merge="view"),
    ),
    (
        "Heads split without the transpose (view(B, n_heads, n, d_head))",
        f"that cuts the sequence's rows, not each token's vector: {_SPLIT}.",
        AttentionSlip(split="view"),
    ),
    (
        "Heads merged without the transpose back",
        "z is (B, n_heads, n, d_head): bring the tokens forward before joining the heads, "
        "z.transpose(1, 2).reshape(B, n, d_model).",
        AttentionSlip(merge="view"),
    ),
    (
        "RoPE with Llama's rotate-half pairing",
        "lesson 18's model turns neighbouring pairs (x[2i], x[2i+1]): even, odd = x[..., 0::2], "
        "x[..., 1::2], rotated, then put back in place with torch.stack((..., ...), dim=-1).flatten(-2); "
        "rotate_half pairs x[i] with x[i + d/2], SmolLM2's (section 5).",
        AttentionSlip(rope="half"),
    ),
    ("RoPE on the queries only", _BOTH, AttentionSlip(rope="q")),
    ("RoPE on the keys only", _BOTH, AttentionSlip(rope="k")),
    (
        "RoPE on the values too",
        "only the queries and keys are rotated: positions steer where a head looks, not what it reads.",
        AttentionSlip(rope="qkv"),
    ),
    (
        "No RoPE",
        "lesson 18's model has no position embedding: its only sense of order is RoPE on the queries and "
        "keys, at positions torch.arange(n).",
        AttentionSlip(rope="none"),
    ),
    (
        "RoPE before the heads are split",
        "rotate each head's (n, d_head) vectors, after the split: the frequencies 10000^(−2i/d_head) run "
        "over one head's pairs.",
        AttentionSlip(rope="before split"),
    ),
    (
        "Your Linear's weight is used the wrong way round (x @ self.q.weight)",
        "nn.Linear keeps its weight as (out, in) and computes x @ weight.T: call the layer, self.q(x), "
        "rather than multiplying by its weight.",
        AttentionSlip(projection="transposed"),
    ),
    (
        "Your Linear's weight is used the wrong way round (x @ self.q.weight)",
        "nn.Linear keeps its weight as (out, in) and computes x @ weight.T: call the layer, self.q(x), "
        "rather than multiplying by its weight.",
        AttentionSlip(projection="transposed qkv"),
    ),
    (
        "You left out the output projection self.o",
        "the heads' outputs, joined, go through self.o: self.o(z.transpose(1, 2).reshape(B, n, d_model)).",
        AttentionSlip(output=False),
    ),
)


def _attention_wrong(slip: AttentionSlip) -> Callable[[ModuleCase], np.ndarray]:
    return lambda ex: attention_numpy(ex.inputs, _layer_weights(0), _config().n_heads, slip)


#: What a learner's ``MyAttention`` may compute instead of lesson 18's attention.
ATTENTION_MISTAKES: tuple[Mistake[ModuleCase], ...] = tuple(
    Mistake(name, advice, _attention_wrong(slip)) for name, advice, slip in _ATTENTION_ROWS
)


def _attention_shapes(B: int, n: int) -> dict[tuple[int, ...], str]:
    c = _config()
    return {
        (): "the block adds it to the stream, x + self.attn(self.ln_1(x)): return the output only (not "
        "nn.MultiheadAttention's (output, weights)).",
        (
            B,
            c.n_heads,
            n,
            c.d_head,
        ): "Merge the heads back, z.transpose(1, 2).reshape(B, n, d_model), then self.o.",
        (B, c.n_heads, n, n): "Those are the weights: return weights @ v, merged and projected by self.o.",
    }


@cache
def _attention_cases() -> tuple[ModuleCase, ...]:
    c = _config()
    rng = np.random.default_rng(SEED)
    cases = []
    for B, n, case, label in (
        (2, 16, "x of shape (2, 16, 128) (B, n, d_model)", "B = 2, n = 16"),
        (1, 1, "x of shape (1, 1, 128): one token", "one token"),
        (1, c.n_ctx, f"x of shape (1, {c.n_ctx}, 128): a whole context", f"a whole context of {c.n_ctx}"),
    ):
        x = rng.normal(0.0, 1.0, (B, n, c.d_model))
        right = _attnlib_attention(x, _layer_weights(0), c.n_heads)
        cases.append(
            ModuleCase(
                "MyAttention",
                "output",
                x,
                right,
                case,
                label,
                torch.float64,
                RTOL64 * float(np.abs(right).max()),
                _attention_shapes(B, n),
            )
        )
    return tuple(cases)


def _attention_verdict(answer: type) -> CheckResult | None:
    c = _config()
    model = _build(answer, "MyAttention", "d_model, n_heads", (c.d_model, c.n_heads))
    if isinstance(model, CheckResult):
        return model
    model = model.to(torch.float64).eval()
    state = {
        f"{name}.weight": torch.from_numpy(w.T.copy())
        for name, w in zip("qkvo", _layer_weights(0).values(), strict=True)
    }
    loaded = _load(
        model,
        state,
        "MyAttention",
        "self.q, self.k, self.v, self.o = nn.Linear(d_model, d_model, bias=False)",
    )
    if loaded is not None:
        return loaded
    cases = _attention_cases()
    outputs = _outputs(model, cases)
    return (
        outputs if isinstance(outputs, CheckResult) else _module_verdict(outputs, cases, ATTENTION_MISTAKES)
    )


def check_attention(MyAttention: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``MyAttention(d_model, n_heads)`` against attnlib's causal RoPE attention.

    The check builds it in float64 with lesson 18's sizes, loads layer 0's weights of the committed
    run into ``self.q, self.k, self.v, self.o`` (``W.T``: ``nn.Linear`` keeps ``(out, in)``), puts
    it in evaluation mode and runs it on random rows ``x (B, n, d_model)``: two sequences of 16, one
    token, and a whole context of ``n_ctx``. attnlib's answer is made with its public functions
    (:func:`attnlib.multihead.split_heads`, :func:`attnlib.positions.rope` on neighbouring pairs,
    :func:`attnlib.core.scaled_dot_product_attention` with ``causal=True``,
    :func:`attnlib.multihead.merge_heads`); the learner's must be within :data:`RTOL64` of its
    largest entry.

    Parameters
    ----------
    MyAttention : type
        An ``nn.Module`` subclass: ``MyAttention(d_model, n_heads)``, ``forward(x)`` → ``(B, n, d_model)``.
    keep : dict, optional
        The lesson's record of the learner's answers that passed (``"attention"``).
    """
    result = class_problem(MyAttention, "MyAttention", "d_model, n_heads", "x")
    if result is None:
        with _torch_settings(torch.float64):
            result = _attention_verdict(MyAttention)  # type: ignore[arg-type]
    if result is None:
        cases = _attention_cases()
        result = passed(
            f"Correct: MyAttention gives attnlib's attention (layer 0 of lesson 18's model, in float64) on "
            f"all {len(cases)} cases: {_labels(cases)}, every entry within {RTOL64:g} of the largest."
        )
    return kept(MyAttention, "my_attention", result, keep)


# --- 2. the whole GPT ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GPTSlip:
    """How lesson 18's GPT is computed: right by default, or with one porting mistake.

    Attributes
    ----------
    attention : AttentionSlip
        Every layer's attention.
    gelu : str
        ``"tanh"`` (``F.gelu(x, approximate="tanh")``) or ``"erf"`` (``F.gelu``'s default).
    norm : str
        ``"pre"`` (``x + attn(ln_1(x))``), ``"post"`` (``ln_1(x + attn(x))``) or ``"post, no ln_f"``.
    residual : str
        ``"both"``, ``"none"``, ``"attention"`` or ``"mlp"`` (the one left out).
    final_norm : bool
        Whether ``ln_f`` comes before the unembedding.
    mlp_reads : str
        ``"ln_2"`` (``ln_2`` of the stream after the attention), ``"ln_1"`` (``ln_1``'s gain and bias
        on it) or ``"parallel"`` (``ln_1(x)`` from before the attention, GPT-J's parallel block).
    tied : bool
        Whether the logits are ``ln_f(x) @ embed.weight.T``.
    """

    attention: AttentionSlip = AttentionSlip()
    gelu: str = "tanh"
    norm: str = "pre"
    residual: str = "both"
    final_norm: bool = True
    mlp_reads: str = "ln_2"
    tied: bool = False


def _mlp(p: Mapping[str, np.ndarray], name: str, m: np.ndarray, form: str) -> np.ndarray:
    act = gelu_tanh if form == "tanh" else gelu
    return act(m @ p[name + "W_in"] + p[name + "b_in"]) @ p[name + "W_out"] + p[name + "b_out"]


def gpt_numpy(ids: np.ndarray, slip: GPTSlip = GPTSlip()) -> np.ndarray:
    """The committed GPT's logits on ``ids (B, n)`` in float64, made with ``slip``'s mistake: what a
    learner's ``MyGPT`` with that mistake returns. Without a slip, :func:`attnlib.decoder.forward`'s.
    """
    c, p = _config(), _params64()
    x = p["embed"][ids]
    for layer in range(c.n_layers):
        name, w = f"layer{layer}.", _layer_weights(layer)

        def ln(z: np.ndarray, which: str, name: str = name) -> np.ndarray:
            return layer_norm(z, p[f"{name}{which}.gain"], p[f"{name}{which}.bias"])[0]

        def attn(z: np.ndarray, w: dict = w) -> np.ndarray:
            return attention_numpy(z, w, c.n_heads, slip.attention)

        if slip.norm.startswith("post"):
            x = ln(x + attn(x), "ln_attn")
            x = ln(x + _mlp(p, name, x, slip.gelu), "ln_mlp")
            continue
        a = ln(x, "ln_attn")
        x1 = attn(a) + (0.0 if slip.residual in ("none", "attention") else x)
        m = a if slip.mlp_reads == "parallel" else ln(x1, "ln_attn" if slip.mlp_reads == "ln_1" else "ln_mlp")
        x = _mlp(p, name, m, slip.gelu) + (0.0 if slip.residual in ("none", "mlp") else x1)
    final = slip.final_norm and slip.norm != "post, no ln_f"
    h = layer_norm(x, p["ln_final.gain"], p["ln_final.bias"])[0] if final else x
    return h @ (p["embed"].T if slip.tied else p["unembed"])


_PRE_NORM = (
    "lesson 18's blocks are pre-norm, nanoGPT's two lines: x = x + self.attn(self.ln_1(x)), then "
    "x = x + self.mlp(self.ln_2(x)); the stream itself is never normalised, only what each branch reads"
)
_RESIDUAL = (
    "each branch adds to the stream: x = x + self.attn(self.ln_1(x)) and x = x + self.mlp(self.ln_2(x)), "
    "not x = self.attn(...)."
)

#: Each row: what the message says, and the GPT that makes the mistake.
_GPT_ROWS: tuple[tuple[str, str, GPTSlip], ...] = (
    (
        "GELU's exact (erf) form instead of its tanh form",
        "F.gelu(x) and nn.GELU() are the erf form by default; lesson 18's model uses the tanh "
        'approximation: F.gelu(x, approximate="tanh") (nn.GELU(approximate="tanh")).',
        GPTSlip(gelu="erf"),
    ),
    ("Post-norm: your LayerNorm comes after the residual add", _PRE_NORM + ".", GPTSlip(norm="post")),
    (
        "Post-norm: your LayerNorm comes after the residual add",
        _PRE_NORM + ", and ln_f closes them.",
        GPTSlip(norm="post, no ln_f"),
    ),
    ("No residual connections", _RESIDUAL, GPTSlip(residual="none")),
    ("No residual connection around the attention", _RESIDUAL, GPTSlip(residual="attention")),
    ("No residual connection around the MLP", _RESIDUAL, GPTSlip(residual="mlp")),
    (
        "The last LayerNorm is missing",
        "the stream is normalised once more before the unembedding: logits = self.unembed(self.ln_f(x)).",
        GPTSlip(final_norm=False),
    ),
    (
        "Your MLP reads ln_1's output",
        "the MLP has its own LayerNorm, of the stream after the attention's add: x = x + "
        "self.mlp(self.ln_2(x)).",
        GPTSlip(mlp_reads="ln_1"),
    ),
    (
        "Your MLP reads ln_1's output",
        "the MLP has its own LayerNorm, of the stream after the attention's add: x = x + "
        "self.mlp(self.ln_2(x)).",
        GPTSlip(mlp_reads="parallel"),
    ),
    (
        "Your unembedding is tied to the embedding (embed.weight used for the output)",
        "lesson 18's model has its own output matrix: logits = self.unembed(self.ln_f(x)).",
        GPTSlip(tied=True),
    ),
)


def _gpt_wrong(slip: GPTSlip) -> Callable[[ModuleCase], np.ndarray]:
    return lambda ex: gpt_numpy(ex.inputs, slip)


def _in_attention(name: str) -> str:
    """``"In the attention: softmax over …"``: an attention row's name, for the whole model."""
    return f"In the attention: {name if name.startswith('RoPE') else name[0].lower() + name[1:]}"


#: What a learner's ``MyGPT`` may compute instead of lesson 18's GPT: its own mistakes, then every
#: attention mistake of :data:`ATTENTION_MISTAKES` in every layer.
GPT_MISTAKES: tuple[Mistake[ModuleCase], ...] = tuple(
    Mistake(name, advice, _gpt_wrong(slip)) for name, advice, slip in _GPT_ROWS
) + tuple(
    Mistake(_in_attention(name), advice, _gpt_wrong(GPTSlip(attention=slip)))
    for name, advice, slip in _ATTENTION_ROWS
)


def float32_bound(config: DecoderConfig, n: int, scores: Sequence[float]) -> float:
    """How far float32 logits may lie from the exact ones, relative to the largest exact logit.

    The reasoning of ``tests/attnlib/test_decoder_training_extras.py``'s bound on attnlib's own
    float32 logits: a float32 sum of m terms is within about √m·u of the exact sum, relative to its
    terms (u = 2⁻²⁴; Higham and Mary 2019), and the errors of the sums on a value's path add as if
    none ever cancelled another. Each layer sums d_model terms in its LayerNorm's mean and
    variance, in the query and key projections, d_head in a score; the softmax turns a score's
    absolute error into its weight's relative error, and a score of size S carries its query's and
    key's relative errors S times over, so those sums count ``1 + 2S`` times (``scores``: each
    layer's largest ``|score|``). Then d_model in the value projection, n in weights · values,
    d_model in ``W_o``; the MLP's LayerNorm (two), d_model in ``W_in``, d_mlp in ``W_out``; the last
    LayerNorm and the unembedding.

    Returns
    -------
    float
        ``u · Σ√m``: for the lesson's model on 48 tokens, about 3.6e-4 (the logits differ by 6e-7
        of the largest, measured).
    """
    d = config.d_model
    roots = lambda sums: sum(math.sqrt(m) for m in sums)  # noqa: E731
    to_scores = roots([d, d, d, d, config.d_head])
    rest = roots([d, n, d, d, d, d, config.d_mlp])
    return U32 * (sum((1 + 2 * S) * to_scores + rest for S in scores) + roots([d, d, d]))


@cache
def _gpt_ids() -> tuple[tuple[np.ndarray, str, str], ...]:
    c = _config()
    rng = np.random.default_rng(SEED + 1)
    return (
        (rng.integers(0, c.vocab_size, (2, 48)), "token ids of shape (2, 48) (B, n)", "B = 2, n = 48"),
        (
            rng.integers(0, c.vocab_size, (1, c.n_ctx)),
            f"token ids of shape (1, {c.n_ctx}): a whole context",
            f"a whole context of {c.n_ctx}",
        ),
        (rng.integers(0, c.vocab_size, (1, 1)), "token ids of shape (1, 1): one token", "one token"),
    )


def _gpt_shapes(B: int, n: int) -> dict[tuple[int, ...], str]:
    V = _config().vocab_size
    last = "Return every position's logits: nanoGPT's forward keeps only the last one when it has no targets."
    return {
        (): "MyGPT(ids) gives the logits; nanoGPT's forward returns (logits, loss) when given targets, the "
        "lesson's only the logits.",
        (B, 1, V): last,
        (B, V): last,
    }


@cache
def _gpt_cases() -> tuple[ModuleCase, ...]:
    """The float64 cases, then the float32 one (the first ids again, against the float64 logits)."""
    c = _config()
    cases = []
    for ids, case, label in _gpt_ids():
        right = forward_steps(c, _params64(), ids).logits
        cases.append(
            ModuleCase(
                "MyGPT",
                "logits",
                ids,
                right,
                case,
                label,
                torch.float64,
                RTOL64 * float(np.abs(right).max()),
                _gpt_shapes(*ids.shape),
            )
        )
    ids, case, label = _gpt_ids()[0]
    steps = forward_steps(c, _params64(), ids)
    scores = [float(np.abs(layer.steps.scaled_scores).max()) for layer in steps.layers]
    bound = float32_bound(c, ids.shape[1], scores)
    cases.append(
        ModuleCase(
            "MyGPT",
            "logits",
            ids,
            steps.logits,
            f"{case}, in float32",
            "in float32",
            torch.float32,
            bound * float(np.abs(steps.logits).max()),
            _gpt_shapes(*ids.shape),
        )
    )
    return tuple(cases)


_GPT_NAMES = (
    "embed, blocks (each with ln_1, attn with q, k, v, o, ln_2, mlp with up and down), ln_f and unembed"
)


def _built_gpt(answer: type, dtype: torch.dtype) -> nn.Module | CheckResult:
    """The learner's GPT built (``dtype`` the default), moved to ``dtype``, loaded, in evaluation mode."""
    model = _build(answer, "MyGPT", "config", (_config(),))
    if isinstance(model, CheckResult):
        return model
    model = model.to(dtype).eval()
    loaded = _load(model, _state(_params64(), dtype), "MyGPT", _GPT_NAMES)
    return model if loaded is None else loaded


def _relative_bound(ex: ModuleCase) -> float:
    return ex.atol / float(np.abs(ex.right).max())


def _gpt_verdict(answer: type) -> CheckResult | None:
    cases = _gpt_cases()
    wide, narrow = [ex for ex in cases if ex.dtype == torch.float64], [cases[-1]]
    model = _built_gpt(answer, torch.float64)
    if isinstance(model, CheckResult):
        return model
    outputs = _outputs(model, wide)
    if isinstance(outputs, CheckResult):
        return outputs
    result = _module_verdict(outputs, wide, GPT_MISTAKES)
    if result is not None:
        return result
    with _torch_settings(torch.float32):
        model = _built_gpt(answer, torch.float32)
        if isinstance(model, CheckResult):
            return model
        return _module_verdict([_run_module(model, narrow[0])], narrow, GPT_MISTAKES)


def check_gpt(MyGPT: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``MyGPT(config)`` against :func:`attnlib.decoder.forward` on lesson 18's weights.

    The check builds it with the committed run's config, loads the run's parameters with
    :func:`~attention_lessons.l19_pytorch.modules.gpt_state_dict` (a load that fails is told plainly,
    naming the keys), calls ``model.eval()`` and compares its logits with attnlib's:

    - in float64 (float64 the default dtype, ``model.to(torch.float64)``, the parameters cast), on
      two sequences of 48 random tokens, a whole context and one token, within :data:`RTOL64` of the
      largest logit; and a second call must give the same logits (no dropout left on);
    - in float32 (the model built again with float32 the default, the committed float32 parameters),
      on the first ids, within :func:`float32_bound` of the largest logit.

    Parameters
    ----------
    MyGPT : type
        An ``nn.Module`` subclass: ``MyGPT(config)``, ``forward(ids)`` → logits ``(B, n, vocab_size)``,
        with the parts named as :class:`~attention_lessons.l19_pytorch.modules.GPT`'s.
    keep : dict, optional
        The lesson's record of the learner's answers that passed (``"gpt"``).
    """
    result = class_problem(MyGPT, "MyGPT", "config", "ids")
    if result is None:
        with _torch_settings(torch.float64):
            result = _gpt_verdict(MyGPT)  # type: ignore[arg-type]
    if result is None:
        cases = _gpt_cases()
        result = passed(
            f"Correct: MyGPT, loaded with lesson 18's weights, gives attnlib's logits in float64 on "
            f"{_labels(cases[:-1])}, every entry within {RTOL64:g} of the largest, and in float32 within "
            f"float32's rounding ({_relative_bound(cases[-1]):.1e} of the largest)."
        )
    return kept(MyGPT, "my_gpt", result, keep)


# --- the reference model the functions are given --------------------------------------------------------


def _reference_gpt(dropout: float) -> GPT:
    """Lesson 18's model as :class:`~attention_lessons.l19_pytorch.modules.GPT`, float64, the committed
    weights, in training mode (as a module is after construction and after a training step)."""
    model = GPT(_config(), dropout=dropout).to(torch.float64)
    with torch.no_grad():
        model.load_state_dict(_state(_params64(), torch.float64))
    return model.train()


@cache
def _stream() -> np.ndarray:
    return np.random.default_rng(SEED + 2).integers(0, _config().vocab_size, 20_000)


def _read_float(returned: object, name: str, what: str) -> float | CheckResult:
    """A Python float (or NumPy's), or why the learner's function did not return one."""
    if returned is None:
        return failed(f"Nothing returned: {name} returns None; end it with `return loss.item()`, {what}.")
    if isinstance(returned, torch.Tensor):
        return failed(
            f"Not a float: {name} returned a tensor; return loss.item(), a Python float: a tensor keeps "
            "its graph (and, on a GPU, the device's memory) alive."
        )
    if isinstance(returned, (bool, np.bool_)) or not isinstance(returned, numbers.Real):
        return failed(f"Not a float: {name} returned {a_type(returned)}; return {what} as loss.item().")
    return float(returned)


def _called(answer: Callable, name: str, args: tuple, params: str) -> object:
    """What ``answer(*args)`` returns, or a failed result (other arguments, an error raised)."""
    wrong = wrong_arguments(answer, args)
    if wrong is not None:
        return failed(f"Wrong arguments: the lesson calls {name}({params}); yours is {name}{wrong}.")
    try:
        return answer(*args)
    except Exception as error:  # a learner's function may raise anything; the message says what
        return failed(f"Your {name} raised {type(error).__name__}: {_last_line(error)}.")


# --- 3. evaluation -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluateCase:
    """One batch for ``my_evaluate``: inputs and targets (already shifted), attnlib's loss and logits."""

    inputs: np.ndarray
    targets: np.ndarray
    right: float
    case: str
    label: str

    @property
    def logits(self) -> np.ndarray:
        """attnlib's float64 logits of the inputs (the mistakes' rows start from them)."""
        return _logits(self.inputs)


@cache
def _logits_cached(key: bytes, shape: tuple[int, ...]) -> np.ndarray:
    return forward_steps(_config(), _params64(), np.frombuffer(key, dtype=np.int64).reshape(shape)).logits


def _logits(ids: np.ndarray) -> np.ndarray:
    """attnlib's float64 logits of ``ids``, computed once."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    return _logits_cached(ids.tobytes(), ids.shape)


def _token_losses(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    return -np.take_along_axis(log_softmax(logits), targets[..., None], axis=-1)[..., 0]


def _ce(logits: np.ndarray, targets: np.ndarray) -> float:
    return float(_token_losses(logits, targets).mean())


_MEAN = (
    "the loss is the mean of −log p over every position of every sequence: F.cross_entropy(logits.view(-1, "
    "V), targets.view(-1)), whose reduction is the mean"
)
_SHIFTED = (
    "the targets are already the next tokens (lesson 18's batch gives inputs and targets shifted by one): "
    "F.cross_entropy(logits.view(-1, V), targets.view(-1)), with no slicing."
)

#: What a learner's ``my_evaluate`` may return instead of the mean loss.
EVALUATE_MISTAKES: tuple[Mistake[EvaluateCase], ...] = (
    Mistake(
        "You summed the losses instead of averaging them",
        _MEAN + ".",
        lambda ex: float(_token_losses(ex.logits, ex.targets).sum()),
    ),
    Mistake(
        "You summed the losses over the positions",
        _MEAN + ".",
        lambda ex: float(_token_losses(ex.logits, ex.targets).sum(axis=-1).mean()),
    ),
    Mistake("You shifted the targets again", _SHIFTED, lambda ex: _ce(ex.logits[:, :-1], ex.targets[:, 1:])),
    Mistake(
        "You shifted the targets the wrong way",
        _SHIFTED,
        lambda ex: _ce(ex.logits[:, 1:], ex.targets[:, :-1]),
    ),
    Mistake(
        "You made the targets from the inputs", _SHIFTED, lambda ex: _ce(ex.logits[:, :-1], ex.inputs[:, 1:])
    ),
    Mistake("You used the inputs as the targets", _SHIFTED, lambda ex: _ce(ex.logits, ex.inputs)),
    Mistake(
        "You ran the model on the targets",
        "the logits are the model's on the inputs: model(inputs).",
        lambda ex: _ce(_logits(ex.targets), ex.targets),
    ),
    Mistake(
        "You took the loss of the last position only",
        "every position predicts its next token, and the loss averages all of them, not only logits[:, -1].",
        lambda ex: _ce(ex.logits[:, -1], ex.targets[:, -1]),
    ),
    Mistake(
        "F.nll_loss on the logits: no log-softmax",
        "F.nll_loss expects log-probabilities; F.cross_entropy takes the logits and applies log_softmax "
        "itself.",
        lambda ex: float(-np.take_along_axis(ex.logits, ex.targets[..., None], axis=-1).mean()),
    ),
    Mistake(
        "You applied softmax before F.cross_entropy",
        "F.cross_entropy takes the logits (it applies log_softmax itself): pass them, not probabilities.",
        lambda ex: _ce(np.exp(log_softmax(ex.logits)), ex.targets),
    ),
    Mistake(
        "Your logits and targets are flattened in different orders",
        "flatten both the same way: logits.view(-1, V) and targets.view(-1) (or logits.transpose(1, 2) "
        "with targets as they are).",
        lambda ex: _ce(ex.logits.reshape(-1, ex.logits.shape[-1]), ex.targets.T.reshape(-1)),
    ),
    Mistake(
        "You returned the perplexity, exp(loss)",
        "return the mean cross-entropy itself, in nats (the perplexity is its exponential).",
        lambda ex: math.exp(ex.right),
    ),
)


@cache
def _evaluate_cases() -> tuple[EvaluateCase, ...]:
    c = _config()
    rng = np.random.default_rng(SEED + 3)
    cases = []
    for B, n, label in ((4, 64, "4 windows of 64"), (2, c.n_ctx, f"2 whole windows of {c.n_ctx}")):
        inputs, targets = sample_batch(_stream(), B, n, rng)
        right = windows_loss(c, _params64(), (inputs, targets))
        case = f"inputs and targets of shape ({B}, {n}) (the targets shifted already, as sample_batch's)"
        cases.append(EvaluateCase(inputs.astype(np.int64), targets.astype(np.int64), right, case, label))
    return tuple(cases)


@dataclass
class _Watch:
    """What the learner's function did with the model: each forward pass's dropout and grad mode."""

    dropout: list[bool] = field(default_factory=list)
    grad: list[bool] = field(default_factory=list)

    def __call__(self, module: nn.Module, args: tuple) -> None:
        self.dropout.append(
            any(m.training and m.p > 0 for m in module.modules() if isinstance(m, nn.Dropout))
        )
        self.grad.append(torch.is_grad_enabled())


def _evaluate_once(answer: Callable, ex: EvaluateCase) -> float | CheckResult:
    """The learner's loss on one batch, or what was wrong with how it was computed."""
    model = _reference_gpt(EVALUATE_DROPOUT)
    watch = _Watch()
    handle = model.register_forward_pre_hook(watch)
    args = (model, torch.from_numpy(ex.inputs.copy()), torch.from_numpy(ex.targets.copy()))
    try:
        returned = _called(answer, "my_evaluate", args, "model, inputs, targets")
    finally:
        handle.remove()
    if isinstance(returned, CheckResult):
        return returned
    if not watch.grad:
        return failed("Your my_evaluate never ran the model: the logits are model(inputs).")
    if any(watch.dropout):
        return failed(
            f"Your model was left in training mode (model.train()): dropout dropped {EVALUATE_DROPOUT:.0%} "
            "of the activations in your evaluation (the check's model has dropout, in training mode as "
            "after a training step); call model.eval() before the forward pass, so that every activation "
            "is kept."
        )
    if any(watch.grad):
        return failed(
            "Wrap the evaluation in torch.no_grad(): your forward pass built a graph for a backward pass "
            "that never comes, holding every activation in memory (or decorate my_evaluate with "
            "@torch.no_grad())."
        )
    return _read_float(returned, "my_evaluate", "the mean loss")


def _evaluate_verdict(answer: Callable) -> CheckResult | None:
    for ex in _evaluate_cases():
        got = _evaluate_once(answer, ex)
        if isinstance(got, CheckResult):
            return got
        if abs(got - ex.right) <= PARAMS_RTOL * abs(ex.right):
            continue

        def fits(wrong: object, got: float = got, ex: EvaluateCase = ex) -> bool:
            return (
                abs(got - wrong) <= PARAMS_RTOL * abs(wrong)
                and abs(wrong - ex.right) > PARAMS_RTOL * ex.right
            )

        with np.errstate(all="ignore"):
            found = matching(EVALUATE_MISTAKES, ex, fits)
        if found:
            return failed(f"{describe('', found, ex)} Seen on {ex.case}.")
        return failed(
            f"Not yet, on {ex.case}: my_evaluate's loss is too {'high' if got > ex.right else 'low'}."
        )
    return None


def check_evaluate(my_evaluate: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``evaluate(model, inputs, targets)``: the mean loss in evaluation, as a float.

    The check gives it :class:`~attention_lessons.l19_pytorch.modules.GPT` with the committed
    weights in float64 and dropout :data:`EVALUATE_DROPOUT`, in **training mode**, and batches as
    :func:`attnlib.decoder.gpt.sample_batch` makes them (the targets already shifted), as int64
    tensors. A forward pre-hook sees how the model ran: with dropout active (``model.eval()``
    forgotten) or building a graph (``torch.no_grad()`` forgotten), each refused with its advice.
    The float returned must be attnlib's loss without dropout
    (:func:`attnlib.decoder.gpt.windows_loss`) within :data:`PARAMS_RTOL`. Putting the model back
    in training mode afterwards is neither required nor refused (the module docstring says why).

    Parameters
    ----------
    my_evaluate : callable
        ``my_evaluate(model, inputs, targets)`` → float.
    keep : dict, optional
        The lesson's record of the learner's answers that passed (``"evaluate"``).
    """
    result = not_a_function(my_evaluate, "my_evaluate", "model, inputs, targets")
    if result is None:
        with _torch_settings(torch.float64):
            result = _evaluate_verdict(my_evaluate)  # type: ignore[arg-type]
    if result is None:
        cases = _evaluate_cases()
        result = passed(
            f"Correct: my_evaluate gives attnlib's mean loss, without dropout and without a graph, on "
            f"{listed([ex.label for ex in cases])}, as a float."
        )
    return kept(my_evaluate, "my_evaluate", result, keep)


# --- 4. the training step ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Steps:
    """Two training steps from the committed weights: what each returned, each raw gradient's norm,
    and the parameters after both (attnlib's names, float64)."""

    returned: tuple[float, ...]
    norms: tuple[float, ...]
    params: dict[str, np.ndarray] = field(repr=False)


@dataclass(frozen=True)
class StepCase:
    """The training step's exercise: two batches, the clip, attnlib's two steps."""

    batches: tuple[tuple[np.ndarray, np.ndarray], ...]
    clip: float
    right: Steps
    case: str


def _settings() -> dict[str, float]:
    return _run().settings  # type: ignore[attr-defined]


def _clipped(g: dict[str, np.ndarray], clip: float, how: str) -> dict[str, np.ndarray]:
    """The gradients clipped as ``how`` says (``"l2"``, attnlib's and ``clip_grad_norm_``'s)."""
    if how == "none":
        return g
    if how == "l2":
        return clip_by_global_norm(g, clip)[0]
    if how == "each":
        return {name: clip_by_global_norm({name: v}, clip)[0][name] for name, v in g.items()}
    if how == "value":
        return {name: np.clip(v, -clip, clip) for name, v in g.items()}
    norm = (
        sum(float(np.abs(v).sum()) for v in g.values())
        if how == "l1"
        else max(float(np.abs(v).max()) for v in g.values())
    )
    coef = min(clip / (norm + 1e-6), 1.0)
    return {name: v * coef for name, v in g.items()}


def _adamw() -> AdamW:
    s = _settings()
    return AdamW(s["learning_rate"], beta1=s["beta1"], beta2=s["beta2"], weight_decay=s["weight_decay"])


@cache
def _right_gradients() -> tuple[tuple[float, dict[str, np.ndarray]], ...]:
    """The loss and raw gradients at each step of attnlib's right two steps: the first step's are every
    mistake's too, and the second's those of the mistakes that leave the first step as it is."""
    optimiser, p, found = _adamw(), _params64(), []
    for inputs, targets in _step_batches():
        found.append(loss_and_gradients(_config(), p, inputs, targets))
        p = optimiser.step(p, clip_by_global_norm(found[-1][1], STEP_CLIP)[0])
    return tuple(found)


#: The mistakes whose first step is the right one, so that their second gradient is the right one too.
_SAME_FIRST_STEP = ("right", "accumulate", "norm")


@cache
def _steps(how: str = "right") -> Steps:
    """attnlib's two steps (``loss_and_gradients``, ``clip_by_global_norm``, ``AdamW``), right or with
    one mistake: ``"accumulate"`` (no zero_grad), ``"sum"`` (the loss summed), ``"norm"`` (the norm
    returned), or a clipping other than the L2 norm's (:func:`_clipped`)."""
    optimiser, p, held, returned, norms = _adamw(), _params64(), None, [], []
    clipping = how if how in ("none", "each", "value", "l1", "inf") else "l2"
    for k, (inputs, targets) in enumerate(_step_batches()):
        if k == 0 or how in _SAME_FIRST_STEP:
            loss, g = _right_gradients()[k]
        else:
            loss, g = loss_and_gradients(_config(), p, inputs, targets)
        if how == "sum":
            loss, g = loss * targets.size, {name: v * targets.size for name, v in g.items()}
        if how == "accumulate" and held is not None:
            g = {name: held[name] + v for name, v in g.items()}
        norms.append(global_norm(g))
        held = _clipped(g, STEP_CLIP, clipping)
        p = optimiser.step(p, held)
        returned.append(norms[-1] if how == "norm" else loss)
    return Steps(tuple(returned), tuple(norms), p)


@cache
def _step_batches() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    rng = np.random.default_rng(SEED + 4)
    return tuple(tuple(a.astype(np.int64) for a in sample_batch(_stream(), 4, 64, rng)) for _ in range(2))  # type: ignore[misc]


@cache
def _step_case() -> StepCase:
    return StepCase(
        _step_batches(),
        STEP_CLIP,
        _steps(),
        f"two steps from lesson 18's weights, each on 4 windows of 64 tokens, clip {STEP_CLIP:g}",
    )


def _same_steps(a: Steps, b: Steps) -> bool:
    """Whether ``a`` is ``b``: the returned numbers and every parameter within :data:`PARAMS_RTOL`."""
    if not np.allclose(a.returned, b.returned, rtol=PARAMS_RTOL, atol=0.0):
        return False
    return all(
        np.all(np.abs(a.params[name] - v) <= PARAMS_RTOL * float(np.abs(v).max()))
        for name, v in b.params.items()
    )


_NORM = "torch.nn.utils.clip_grad_norm_(model.parameters(), clip) scales every gradient by one factor, from"
_CLIP_NORM = f"{_NORM} their global L2 norm (its default norm_type=2)."

#: What a learner's ``my_train_step`` may do instead of lesson 18's step, seen in what it returns
#: and in the parameters after two steps.
TRAIN_STEP_MISTAKES: tuple[Mistake[StepCase], ...] = (
    Mistake(
        "You did not zero the gradients",
        "loss.backward() adds to each .grad, so the second step used the first step's gradients as well: "
        "call optimiser.zero_grad() at the start of each step.",
        lambda ex: _steps("accumulate"),
    ),
    Mistake(
        "You did not clip the gradients (or clipped after optimiser.step())",
        f"clip between loss.backward() and optimiser.step(): {_CLIP_NORM}",
        lambda ex: _steps("none"),
    ),
    Mistake("You clipped with the L1 norm (norm_type=1)", _CLIP_NORM, lambda ex: _steps("l1")),
    Mistake("You clipped with the largest |gradient| (norm_type=inf)", _CLIP_NORM, lambda ex: _steps("inf")),
    Mistake("You clipped each gradient's values (clip_grad_value_)", _CLIP_NORM, lambda ex: _steps("value")),
    Mistake(
        "You clipped each parameter's gradient by its own norm",
        f"{_NORM} the norm of all of them together: call it once, on model.parameters().",
        lambda ex: _steps("each"),
    ),
    Mistake(
        "You summed the loss instead of averaging it",
        "the loss is the mean over every position: F.cross_entropy's default reduction='mean'.",
        lambda ex: _steps("sum"),
    ),
    Mistake(
        "You returned the gradients' norm, not the loss",
        "clip_grad_norm_ returns the norm before clipping; return the loss, loss.item().",
        lambda ex: _steps("norm"),
    ),
)


def _optimiser(model: nn.Module) -> torch.optim.AdamW:
    """``torch.optim.AdamW`` with lesson 18's settings: weight decay on the matrices and embeddings only."""
    s = _settings()
    weights = list(model.parameters())
    groups = [
        {"params": [w for w in weights if w.ndim >= 2], "weight_decay": s["weight_decay"]},
        {"params": [w for w in weights if w.ndim < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=s["learning_rate"], betas=(s["beta1"], s["beta2"]), eps=1e-8)


def _grad_norm(model: nn.Module) -> float | None:
    """The global L2 norm of the model's gradients, or ``None`` where there are none (all None or 0)."""
    grads = [w.grad for w in model.parameters() if w.grad is not None]
    norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
    return norm if norm > 0 else None


@dataclass
class _StepWatch:
    """The gradients' norm each time ``optimiser.step()`` ran (``None``: no gradients)."""

    model: nn.Module
    norms: list[float | None] = field(default_factory=list)

    def __call__(self, optimiser: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
        self.norms.append(_grad_norm(self.model))


def _first_step_order(watch: _StepWatch, model: nn.Module, ex: StepCase) -> CheckResult | None:
    """What the optimiser saw in the first step: whether step() ran once, on gradients clipped before."""
    if not watch.norms:
        return failed(
            "Your optimiser.step() never ran: after loss.backward() and clipping, call optimiser.step()."
        )
    if len(watch.norms) > 1:
        return failed(
            f"Your optimiser.step() ran {len(watch.norms)} times in one training step; call it once."
        )
    norm, raw = watch.norms[0], ex.right.norms[0]
    if norm is None:
        return failed(
            "Your optimiser.step() found no gradients: call loss.backward() before optimiser.step(), and "
            "zero the gradients before the backward pass, not between it and the step."
        )
    if raw > ex.clip and abs(norm - raw) <= 1e-6 * raw:
        after = _grad_norm(model)
        if after is not None and after <= ex.clip * (1 + 1e-6):
            return failed(
                "You clipped after optimiser.step(): the step used the gradients unclipped; call "
                "clip_grad_norm_ between loss.backward() and optimiser.step()."
            )
        return failed(
            "Your optimiser.step() used the gradients unclipped (their norm is above clip here): call "
            "torch.nn.utils.clip_grad_norm_(model.parameters(), clip) between loss.backward() and "
            "optimiser.step()."
        )
    return None


def _train_verdict(answer: Callable) -> CheckResult | None:
    ex = _step_case()
    model = _reference_gpt(0.0)
    optimiser = _optimiser(model)
    watch = _StepWatch(model)
    handle = optimiser.register_step_pre_hook(watch)
    returned = []
    try:
        for k, (inputs, targets) in enumerate(ex.batches):
            args = (
                model,
                optimiser,
                torch.from_numpy(inputs.copy()),
                torch.from_numpy(targets.copy()),
                ex.clip,
            )
            got = _called(answer, "my_train_step", args, "model, optimiser, inputs, targets, clip")
            if isinstance(got, CheckResult):
                return got
            loss = _read_float(got, "my_train_step", "the batch's loss")
            if isinstance(loss, CheckResult):
                return loss
            returned.append(loss)
            order = _first_step_order(watch, model, ex) if k == 0 else None
            if order is not None:
                return order
    finally:
        handle.remove()
    params = attnlib_names(dict(model.named_parameters()), _config().n_layers)
    learner = Steps(
        tuple(returned), (), {name: np.asarray(v, dtype=np.float64) for name, v in params.items()}
    )
    if _same_steps(learner, ex.right):
        return None
    found = matching(
        TRAIN_STEP_MISTAKES,
        ex,
        lambda wrong: _same_steps(learner, wrong) and not _same_steps(wrong, ex.right),
    )  # type: ignore[arg-type]
    if found:
        return failed(f"{describe('', found, ex)} Seen on {ex.case}.")
    if not np.allclose(learner.returned, ex.right.returned, rtol=PARAMS_RTOL, atol=0.0):
        return failed(f"Not yet, on {ex.case}: the losses my_train_step returned are not attnlib's.")
    worst = max(ex.right.params, key=lambda n: float(np.abs(learner.params[n] - ex.right.params[n]).max()))
    return failed(
        f"Not yet, on {ex.case}: the losses are right, but the parameters after two steps are not attnlib's "
        f"(most off: {worst}, in attnlib's names)."
    )


def check_train_step(my_train_step: object, *, keep: Keep = None) -> CheckResult:
    """Check the learner's ``train_step(model, optimiser, inputs, targets, clip)`` against attnlib's step.

    The check gives it :class:`~attention_lessons.l19_pytorch.modules.GPT` with the committed weights
    in float64 (no dropout), ``torch.optim.AdamW`` with lesson 18's settings (its peak learning
    rate, betas, weight decay 0.1 on the matrices and embeddings and none on the gains and biases:
    ``benchmarks/gpt_training.py``'s two groups) and two batches in turn, with ``clip``
    :data:`STEP_CLIP`. The
    two losses returned, and every parameter after the two steps, must be attnlib's
    (:func:`attnlib.decoder.gpt.loss_and_gradients`, :func:`attnlib.optim.clip_by_global_norm`,
    :class:`attnlib.optim.AdamW`) within :data:`PARAMS_RTOL`. A step pre-hook on the optimiser sees
    the gradients ``optimiser.step()`` gets: none (the step before ``backward``), or not clipped.

    Parameters
    ----------
    my_train_step : callable
        ``my_train_step(model, optimiser, inputs, targets, clip)`` → the batch's loss, a float.
    keep : dict, optional
        The lesson's record of the learner's answers that passed (``"train_step"``).
    """
    params = "model, optimiser, inputs, targets, clip"
    result = not_a_function(my_train_step, "my_train_step", params)
    if result is None:
        with _torch_settings(torch.float64):
            result = _train_verdict(my_train_step)  # type: ignore[arg-type]
    if result is None:
        result = passed(
            f"Correct: my_train_step gives attnlib's losses and, after two steps, its parameters "
            f"(loss_and_gradients, clip_by_global_norm, AdamW), every one within {PARAMS_RTOL:g}."
        )
    return kept(my_train_step, "my_train_step", result, keep)
