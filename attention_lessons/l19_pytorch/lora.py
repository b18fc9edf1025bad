"""Lesson 19's LoRA run: SmolLM2 fine-tuned on Shakespeare, measured on *Hamlet*, and read back.

``tools/l19_lora.py`` trains it with these functions and writes ``lora_run.npz``; the lesson reads
that file (:func:`load_run`, its SHA-256 checked against :data:`LORA_SHA256`) and puts the adapter
on a fresh model (:func:`apply_adapter`).

- the data: :func:`token_streams`, lesson 18's training text (the works but *Hamlet*) and *Hamlet*,
  in SmolLM2's own tokens (:func:`encode_text`); :func:`evaluation_windows`, fixed windows of a
  stream; :func:`random_batch`, the training batches;
- the loss: :func:`next_token_loss`, :func:`window_losses` and :func:`evaluate` (nats per token on
  fixed windows) and, through lesson 18's
  :func:`~attention_lessons.l18_training_gpt.data.bits_per_character`, :func:`bits_per_char`;
- training: :class:`LoRASettings`, :func:`learning_rate`, :func:`make_optimizer` (AdamW on LoRA's
  ``A`` and ``B`` only), :func:`train_step` (the loss, the gradients, clipping, the update);
- the adapter: :func:`adapter_arrays` (every ``A`` and ``B`` by layer and projection),
  :func:`apply_adapter` (wrap a :class:`~attention_lessons.l19_pytorch.modules.Llama` and fill it);
- greedy text and its margins: :func:`generate_with_leads`, :func:`lead_tolerance`;
- float32's bounds for the tests: :func:`lead_tolerance` (a logit), :func:`loss_tolerance` (a mean
  loss), :func:`update_bound` (what AdamW's first, sign-like step lets another CPU change);
- the committed run: :class:`LoRARun`, :func:`run_from_arrays`, :func:`load_run`.

Shapes: ``B`` windows of ``n`` tokens, ``V = 49,152`` token ids, ``r`` LoRA's rank.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields

import numpy as np
import torch
from torch.nn import functional as F

from attention_lessons.kit.committed import read_committed
from attention_lessons.l17_tokens import corpus
from attention_lessons.l18_training_gpt.data import HELD_OUT, bits_per_character, training_text
from attention_lessons.l19_pytorch.modules import KVCache, Llama, LoRALinear, add_lora
from attnlib.decoder.gpt import evaluation_windows as _stream_windows
from attnlib.model.llama import LlamaConfig, LlamaModel, float32_tolerance

__all__ = [
    "LORA_FILE",
    "LORA_SHA256",
    "N_PARAMETERS",
    "LoRARun",
    "LoRASettings",
    "SmolStreams",
    "adapter_arrays",
    "apply_adapter",
    "bits_per_char",
    "encode_text",
    "evaluate",
    "evaluation_windows",
    "generate_with_leads",
    "lead_tolerance",
    "learning_rate",
    "load_run",
    "lora_layers",
    "loss_tolerance",
    "make_optimizer",
    "next_token_loss",
    "random_batch",
    "run_from_arrays",
    "token_streams",
    "train_step",
    "update_bound",
    "window_losses",
]

PACKAGE = "attention_lessons.l19_pytorch"
SCRIPT = "tools/l19_lora.py"
LORA_FILE = "lora_run.npz"
#: The file's SHA-256, as ``tools/l19_lora.py`` printed it.
LORA_SHA256 = "fcc60290dc97b2a523bad372f90870298ffaa7c2b535501c2958f891992a0ec2"
#: SmolLM2-135M's parameters (the embedding counted once: it is also the output matrix).
N_PARAMETERS = 134_515_008


# --- the data ------------------------------------------------------------------------------------------

#: Where a long text may be cut for the tokenizer: between the two newlines of a blank line that a
#: letter follows. SmolLM2's cut (a digit alone, then GPT-2's rule) makes the second newline a piece
#: of its own there, so the pieces' tokens are the whole text's.
_BREAK = re.compile(r"\n(?=\n[A-Za-z])")


def encode_text(tokenizer: LlamaModel, text: str, piece: int = 20_000) -> np.ndarray:
    """``tokenizer.encode(text)``, a piece of about ``piece`` characters at a time.

    Lesson 19 · 6. The tokenizers library holds every piece of a text at once: the 4.9 million
    characters of the training text whole would take 0.8 GB for a moment, and keep half of it.
    Cut at :data:`_BREAK`, the tokens are the same (the tests compare on *Hamlet*).

    Returns
    -------
    (N,) int64
    """
    pieces, start = [], 0
    while start < len(text):
        cut = _BREAK.search(text, start + piece)
        end = len(text) if cut is None else cut.end()
        pieces.append(tokenizer.encode(text[start:end]))
        start = end
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class SmolStreams:
    """Lesson 18's two texts in SmolLM2's tokens.

    Attributes
    ----------
    train_ids, val_ids : (N,) int64
        The works but *Hamlet*, and *Hamlet*.
    train_chars, val_chars : int
        Their lengths in characters, for bits per character.
    """

    train_ids: np.ndarray
    val_ids: np.ndarray
    train_chars: int
    val_chars: int


def token_streams(tokenizer: LlamaModel, *, train: bool = True) -> SmolStreams:
    """The training text and *Hamlet* as lesson 18's data module reads them, in SmolLM2's tokens.

    Lesson 19 · 6. About 3 s for the 1.5 million training tokens; ``train=False`` leaves them out
    (an empty stream) where only *Hamlet* is needed.
    """
    held_out = corpus.shakespeare([HELD_OUT])
    text = training_text() if train else ""
    return SmolStreams(
        encode_text(tokenizer, text), encode_text(tokenizer, held_out), len(text), len(held_out)
    )


def evaluation_windows(ids: np.ndarray, n_ctx: int, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` evenly spaced windows of ``ids`` and their targets, the same at every evaluation.

    Lesson 19 · 6 (lesson 18's :func:`attnlib.decoder.gpt.evaluation_windows`, as tensors).

    Returns
    -------
    inputs, targets : (count, n_ctx) int64
    """
    inputs, targets = _stream_windows(ids, n_ctx, count)
    return torch.from_numpy(inputs.astype(np.int64)), torch.from_numpy(targets.astype(np.int64))


def random_batch(
    ids: np.ndarray, batch_size: int, n_ctx: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` windows of ``n_ctx`` tokens at random starts, and the same windows one token on.

    Lesson 19 · 6. The starts come from ``generator`` (PyTorch's Mersenne Twister): the same seed
    draws the same batches on any machine.

    Returns
    -------
    x, y : (B, n_ctx) int64
    """
    starts = torch.randint(0, len(ids) - n_ctx, (batch_size,), generator=generator)
    window = starts[:, None] + torch.arange(n_ctx + 1)
    tokens = torch.from_numpy(np.asarray(ids, dtype=np.int64))[window]
    return tokens[:, :-1], tokens[:, 1:]


# --- the loss ------------------------------------------------------------------------------------------


def next_token_loss(model: Llama, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of ``model``'s next-token predictions, in nats per token.

    Parameters
    ----------
    x, y : (B, n) int64
        Inputs and targets (the inputs one token on).

    Returns
    -------
    () float
    """
    logits = model(x)  # (B, n, V)
    return F.cross_entropy(logits.flatten(0, 1), y.flatten())


@torch.no_grad()
def window_losses(
    model: Llama, windows: tuple[torch.Tensor, torch.Tensor], batch_size: int = 4
) -> np.ndarray:
    """Each window's mean next-token loss, in nats per token.

    Lesson 19 · 6. Under ``torch.no_grad()``: no graph is kept, so ``batch_size`` windows' logits
    (``batch_size · n · V`` floats, 100 MB for 4 · 128) are the largest array.

    Parameters
    ----------
    windows : (inputs, targets), each (count, n) int64

    Returns
    -------
    (count,) float64
    """
    inputs, targets = windows
    losses = []
    for start in range(0, len(inputs), batch_size):
        logits = model(inputs[start : start + batch_size])  # (b, n, V)
        y = targets[start : start + batch_size]
        per_token = F.cross_entropy(logits.transpose(1, 2), y, reduction="none")  # (b, n)
        losses.append(per_token.mean(dim=1).double())
    return torch.cat(losses).numpy()


def evaluate(model: Llama, windows: tuple[torch.Tensor, torch.Tensor], batch_size: int = 4) -> float:
    """The mean next-token loss over every position of ``windows``, in nats per token.

    Lesson 19 · 6. The mean of :func:`window_losses` (every window has ``n`` positions).
    """
    return float(window_losses(model, windows, batch_size).mean())


def loss_tolerance(config: LlamaConfig, n_ctx: int, largest: float, s: LoRASettings | None = None) -> float:
    """How far two float32 runs may move a mean next-token loss whose logits reach ``largest``.

    A loss is ``logsumexp(z) − z_y``: each term moves by at most the logits' bound
    (:func:`lead_tolerance`), so the loss by twice it; the sum of ``V`` exponentials in the
    logarithm adds ``√V·u`` (relative to the sum, so absolute in its logarithm), and the mean
    over ``n_ctx`` positions ``√n_ctx·u`` of the loss; each doubled, as the model's bound is.
    """
    u = 2**-24
    softmax = 2 * (math.sqrt(config.vocab_size) + math.sqrt(n_ctx) * largest) * u
    return 2 * lead_tolerance(config, n_ctx, largest, s) + softmax


def bits_per_char(nats_per_token: float, stream: np.ndarray, n_chars: int) -> float:
    """A loss on ``stream``'s windows in bits per character, as lesson 18 converts its own.

    Lesson 19 · 6. Lesson 18's :func:`~attention_lessons.l18_training_gpt.data.bits_per_character`
    with the whole stream's tokens per character (SmolLM2 spends fewer tokens on a text than lesson
    18's 512-token tokenizer, so its nats per token compare only so).
    """
    return bits_per_character(nats_per_token, len(stream), n_chars)


# --- training ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoRASettings:
    """How the committed run trains (``tools/l19_lora.py``'s docstring says why each).

    Attributes
    ----------
    r, alpha : LoRA's rank and scale (the change is ``(α / r) · B A``).
    targets : the attention projections wrapped in each layer (``"q"``, ``"k"``, ``"v"``, ``"o"``).
    steps, batch_size, n_ctx : the training: ``steps`` batches of ``batch_size`` windows of ``n_ctx``.
    learning_rate, warmup, final_fraction : AdamW's rate rises over ``warmup`` steps, then falls on a
        cosine to ``final_fraction`` of itself at the last step.
    weight_decay, clip : AdamW's decoupled decay; the gradients' global norm is clipped to ``clip``.
    seed : ``A``'s random start and the batches.
    eval_every, eval_windows : *Hamlet*'s loss on ``eval_windows`` fixed windows every ``eval_every`` steps.
    n_new : greedy tokens written after each prompt, before and after training.
    threads : ``torch.set_num_threads``.
    """

    r: int = 8
    alpha: float = 16.0
    targets: tuple[str, ...] = ("q", "v")
    steps: int = 120
    batch_size: int = 4
    n_ctx: int = 128
    learning_rate: float = 1e-3
    warmup: int = 10
    final_fraction: float = 0.1
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    eval_every: int = 40
    eval_windows: int = 32
    n_new: int = 40
    threads: int = 1

    def arrays(self) -> dict[str, np.ndarray]:
        """The settings as ``setting.<name>`` arrays (the targets as one string, ``"q,v"``)."""
        return {
            f"setting.{name}": np.array(",".join(value) if name == "targets" else value)
            for name, value in asdict(self).items()
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> LoRASettings:
        """The settings :meth:`arrays` saved."""
        values = {f.name: np.asarray(arrays[f"setting.{f.name}"]).item() for f in fields(cls)}
        return cls(**values | {"targets": tuple(str(values["targets"]).split(","))})


def learning_rate(step: int, s: LoRASettings) -> float:
    """The rate of step ``step`` (counted from 0): a linear warmup, then a cosine to ``final_fraction``."""
    if step < s.warmup:
        return s.learning_rate * (step + 1) / s.warmup
    progress = (step - s.warmup) / max(1, s.steps - 1 - s.warmup)
    return s.learning_rate * (
        s.final_fraction + (1 - s.final_fraction) * 0.5 * (1 + math.cos(math.pi * progress))
    )


def lora_layers(model: Llama) -> dict[str, LoRALinear]:
    """Every LoRA layer of ``model`` (a projection with an ``A`` and a ``B``: a
    :class:`~attention_lessons.l19_pytorch.modules.LoRALinear`, or the learner's) by its name,
    ``"layer{i}.{projection}"``: ``"layer0.q"`` … ``"layer29.v"``."""
    return {
        f"layer{i}.{name}": module
        for i, block in enumerate(model.blocks)
        for name, module in block.attn.named_children()
        if isinstance(getattr(module, "A", None), torch.Tensor)
        and isinstance(getattr(module, "B", None), torch.Tensor)
    }


def make_optimizer(model: Llama, s: LoRASettings) -> torch.optim.AdamW:
    """AdamW on LoRA's ``A`` and ``B`` only: the 134.5 million weights underneath are not given to it."""
    trainable = [p for layer in lora_layers(model).values() for p in (layer.A, layer.B)]
    return torch.optim.AdamW(trainable, lr=s.learning_rate, weight_decay=s.weight_decay)


def train_step(
    model: Llama, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, lr: float, clip: float
) -> tuple[float, float, float]:
    """One step: the batch's loss, its gradients, clipping to ``clip``, AdamW's update at rate ``lr``.

    Lesson 19 · 6. Backpropagation runs through all 30 layers (the gradient must reach layer 0's
    ``B``), but computes no gradient for a frozen weight. The gradients stay in each parameter's
    ``.grad`` until the next step.

    Returns
    -------
    loss, grad_norm, largest : float
        The batch's loss before the update, in nats per token; the gradients' norm before
        clipping; the largest ``|logit|`` (for :func:`loss_tolerance`).
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    logits = model(x)  # (B, n, V)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    largest = logits.detach().abs().max().item()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    params = [p for group in optimizer.param_groups for p in group["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()
    return loss.item(), norm.item(), largest


def update_bound(
    first: Sequence[torch.Tensor], second: Sequence[torch.Tensor], lr: float, delta: float
) -> float:
    """How far another CPU's second loss may lie from this one's, through AdamW's first update.

    AdamW's first step moves each parameter by ``lr · g / (|g| + ε)`` (its moments are ``g`` and
    ``g²``): ``±lr`` wherever ``|g| ≫ ε``, whatever ``g``'s size. Another CPU computes each ``g``
    within ``delta``: where ``|g| ≤ delta`` its sign may differ, and the update by up to ``2·lr``;
    elsewhere by at most ``lr·ε·delta / (|g| − delta + ε)²`` (the slope of ``g / (|g| + ε)``).
    To first order the second batch's loss then moves by the sum of those changes times its own
    gradient's entries.

    Parameters
    ----------
    first, second : lists of tensors
        The trainable parameters' gradients at the first and the second step (same shapes).
    lr : the first step's rate.
    delta : a bound on a gradient entry's float32 error.
    """
    eps = 1e-8  # torch.optim.AdamW's default
    total = 0.0
    for g1, g2 in zip(first, second, strict=True):
        size = g1.double().abs()
        change = torch.where(size <= delta, 2 * lr, lr * eps * delta / (size - delta + eps) ** 2)
        total += float((change * g2.double().abs()).sum())
    return total


# --- the adapter ---------------------------------------------------------------------------------------


def adapter_arrays(model: Llama) -> dict[str, np.ndarray]:
    """Every LoRA matrix of ``model`` as float32: ``"lora.layer{i}.{projection}.A"`` ``(r, in)`` and
    ``".B"`` ``(out, r)``, copies."""
    return {
        f"lora.{name}.{part}": getattr(layer, part).detach().numpy().astype(np.float32, copy=True)
        for name, layer in lora_layers(model).items()
        for part in ("A", "B")
    }


def apply_adapter(
    model: Llama, arrays: Mapping[str, np.ndarray], *, lora: type[torch.nn.Module] = LoRALinear
) -> Llama:
    """Wrap ``model``'s projections in ``lora`` as the run did and fill them with its ``A`` and ``B``.

    Lesson 19 · 6. ``arrays`` are a run's (:attr:`LoRARun.arrays`, or what
    :func:`adapter_arrays` gave with ``setting.*`` beside it). ``model`` must be a fresh
    :func:`~attention_lessons.l19_pytorch.modules.llama_from`: its weights are shared, not copied,
    so a second model for the comparison costs no memory. ``lora`` is the class of the wrapped
    layers (the learner's ``MyLoRALinear`` once it passes its check). Returns ``model``, frozen, in
    eval mode.
    """
    s = LoRASettings.from_arrays(arrays)
    if lora_layers(model):
        raise ValueError("model already has LoRA layers: apply the adapter to a fresh llama_from(...)")
    add_lora(model, s.r, s.alpha, targets=s.targets, seed=s.seed, lora=lora)
    layers = lora_layers(model)
    expected = {f"lora.{name}.{part}" for name in layers for part in ("A", "B")}
    found = {name for name in arrays if name.startswith("lora.")}
    if found != expected:
        raise ValueError(f"the adapter's matrices are not this model's: {sorted(found ^ expected)[:4]} …")
    with torch.no_grad():
        for name, layer in layers.items():
            for part in ("A", "B"):
                getattr(layer, part).copy_(torch.from_numpy(np.asarray(arrays[f"lora.{name}.{part}"])))
    return model.eval().requires_grad_(False)


# --- greedy text and its margins -----------------------------------------------------------------------


@torch.no_grad()
def generate_with_leads(model: Llama, ids: Sequence[int], n_new: int) -> tuple[list[int], np.ndarray]:
    """:func:`~attention_lessons.l19_pytorch.modules.generate`'s greedy tokens, and at each step the
    lead of the chosen logit over the runner-up and the largest logit's size.

    Returns
    -------
    new : list of n_new int
    margins : (n_new, 2) float64
        Column 0, the lead; column 1, the largest ``|logit|`` of that step (for :func:`lead_tolerance`).
    """
    ids = list(ids)
    cache = KVCache(len(model.blocks))
    logits = model(torch.tensor([ids]), torch.arange(len(ids)), cache)[0, -1]
    new: list[int] = []
    margins = []
    for _ in range(n_new):
        top = logits.topk(2)
        margins.append((float(top.values[0] - top.values[1]), float(logits.abs().max())))
        new.append(int(logits.argmax()))
        logits = model(torch.tensor([[new[-1]]]), torch.tensor([len(cache)]), cache)[0, -1]
    return new, np.array(margins, dtype=np.float64).reshape(n_new, 2)


def lead_tolerance(
    config: LlamaConfig, n_tokens: int, largest: float, s: LoRASettings | None = None
) -> float:
    """How far two float32 runs may move a logit of size up to ``largest``, with LoRA or without.

    :func:`attnlib.model.llama.float32_tolerance` for the model, plus, with an adapter (``s``), its
    extra sums: each wrapped projection adds one of ``d_model`` terms (``x Aᵀ``) and one of ``r``
    (``… Bᵀ``) per layer, bounded the same way. A greedy token whose lead is above this is the same
    on another CPU, as long as the tokens before it were.
    """
    bound = float32_tolerance(config, n_tokens, largest)
    if s is not None:
        extra = config.n_layers * len(s.targets) * (math.sqrt(config.d_model) + math.sqrt(s.r))
        bound += 2 * extra * 2**-24 * largest
    return bound


# --- the committed run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoRARun:
    """The committed LoRA run.

    Lesson 19 · 6. Attributes (``S`` steps, ``E`` evaluations, ``P`` prompts):

    settings : LoRASettings
    arrays : dict of str to array
        Everything in the file; :func:`apply_adapter` reads the adapter from it.
    trainable : int
        LoRA's parameters (460,800 for ``r = 8`` on ``q`` and ``v``), against :data:`N_PARAMETERS`.
    losses, grad_norms, learning_rates, largest_logits : (S,)
        Each training batch's loss before its update, the gradients' norm before clipping, the rate,
        and the batch's largest ``|logit|``.
    step_seconds, step_cpu_seconds : (S,)
        Each step's wall time and CPU time (``time.process_time``) in seconds.
    second_loss_update_bound : float
        :func:`update_bound` for the second loss, as the run computed it.
    eval_steps : (E,) int
    val_losses : (E,)
        *Hamlet*'s loss on the fixed windows at those steps, nats per token (step 0: SmolLM2 as it comes).
    val_window_losses : (E, eval_windows)
        Each window's.
    val_tokens, val_chars : int
        *Hamlet*'s length in SmolLM2's tokens and in characters (for bits per character).
    prompts : list of str
    before, after : list of P lists of int
        The greedy continuations of each prompt without the adapter and with it.
    before_margins, after_margins : (P, n_new, 2)
        Each step's lead and largest |logit| (:func:`generate_with_leads`).
    seconds : float
        The whole run's wall time, evaluations and generations included.
    machine : dict
        The machine, its floating-point path, the versions, the threads, the load and the date.
    """

    settings: LoRASettings
    arrays: dict[str, np.ndarray] = field(repr=False)
    trainable: int
    losses: np.ndarray = field(repr=False)
    grad_norms: np.ndarray = field(repr=False)
    learning_rates: np.ndarray = field(repr=False)
    largest_logits: np.ndarray = field(repr=False)
    step_seconds: np.ndarray = field(repr=False)
    step_cpu_seconds: np.ndarray = field(repr=False)
    second_loss_update_bound: float
    eval_steps: np.ndarray
    val_losses: np.ndarray
    val_window_losses: np.ndarray = field(repr=False)
    val_tokens: int
    val_chars: int
    prompts: list[str]
    before: list[list[int]] = field(repr=False)
    after: list[list[int]] = field(repr=False)
    before_margins: np.ndarray = field(repr=False)
    after_margins: np.ndarray = field(repr=False)
    seconds: float
    machine: dict = field(repr=False)

    @property
    def val_bits_per_char(self) -> np.ndarray:
        """:attr:`val_losses` in bits per character (lesson 18's conversion)."""
        return self.val_losses * self.val_tokens / self.val_chars / math.log(2)

    @property
    def minutes(self) -> float:
        """The run's wall time, in minutes."""
        return self.seconds / 60


def run_from_arrays(arrays: Mapping[str, np.ndarray]) -> LoRARun:
    """A :class:`LoRARun` from the arrays ``tools/l19_lora.py`` saves."""
    arrays = {name: np.asarray(value) for name, value in arrays.items()}
    prompts = ast.literal_eval(str(arrays["prompts"]))
    return LoRARun(
        settings=LoRASettings.from_arrays(arrays),
        arrays=arrays,
        trainable=int(arrays["trainable"]),
        losses=arrays["losses"],
        grad_norms=arrays["grad_norms"],
        learning_rates=arrays["learning_rates"],
        largest_logits=arrays["largest_logits"],
        step_seconds=arrays["step_seconds"],
        step_cpu_seconds=arrays["step_cpu_seconds"],
        second_loss_update_bound=float(arrays["second_loss_update_bound"]),
        eval_steps=arrays["eval_steps"],
        val_losses=arrays["val_losses"],
        val_window_losses=arrays["val_window_losses"],
        val_tokens=int(arrays["val_tokens"]),
        val_chars=int(arrays["val_chars"]),
        prompts=prompts,
        before=arrays["before"].tolist(),
        after=arrays["after"].tolist(),
        before_margins=arrays["before_margins"],
        after_margins=arrays["after_margins"],
        seconds=float(arrays["seconds"]),
        machine=json.loads(str(arrays["machine"])),
    )


def load_run() -> LoRARun:
    """The committed run, its SHA-256 checked against :data:`LORA_SHA256`.

    Lesson 19 · 6. LoRA.
    """
    raw = read_committed(PACKAGE, LORA_FILE, LORA_SHA256, SCRIPT)
    with np.load(io.BytesIO(raw)) as arrays:
        return run_from_arrays(dict(arrays))
