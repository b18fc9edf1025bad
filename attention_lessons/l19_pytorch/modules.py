"""Lesson 19's models in PyTorch: lesson 18's GPT and SmolLM2 as ``nn.Module``s, and LoRA.

These are the reference modules: the lesson runs them wherever the learner's own have not passed
their checks yet (``checks.py`` compares the learner's with attnlib's NumPy, never with these), and
``tools/l19_lora.py`` fine-tunes SmolLM2 with them. The names follow the lesson's text:

- lesson 18's GPT: :class:`Attention` (RoPE on neighbouring pairs, a causal mask), :class:`MLP`,
  :class:`Block` (pre-LN, nanoGPT's two lines), :class:`GPT`; :func:`gpt_state_dict` turns
  attnlib's parameters into the modules' (``nn.Linear`` keeps ``W`` as ``(out, in)``: attnlib's
  ``W.T``), :func:`attnlib_names` turns the modules' names back, for gradients;
- SmolLM2: :class:`RMSNorm`, :class:`SwiGLU`, :class:`LlamaAttention` (grouped-query, rotate-half
  RoPE, a KV cache), :class:`LlamaBlock`, :class:`Llama`; :func:`llama_from` builds it on
  :func:`attnlib.model.llama.load_smollm2`'s float32 weights without copying them;
  :func:`generate` decodes greedily with the cache;
- :class:`LoRALinear`: a frozen ``nn.Linear`` plus ``B A``, scaled by ``α / r``;
  :func:`add_lora` wraps the chosen projections of every layer.

Every class takes the sizes it needs and keeps its float dtype from ``torch.get_default_dtype()``
or a ``.to(dtype)`` afterwards, as PyTorch's own modules do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from attnlib.decoder import DecoderConfig
from attnlib.decoder.block import LN_EPS
from attnlib.model.llama import LlamaConfig
from attnlib.positions import rope_frequencies

__all__ = [
    "GPT",
    "MLP",
    "Attention",
    "Block",
    "KVCache",
    "Llama",
    "LlamaAttention",
    "LlamaBlock",
    "LoRALinear",
    "RMSNorm",
    "SwiGLU",
    "add_lora",
    "attnlib_names",
    "causal_mask",
    "evaluate",
    "generate",
    "gpt_state_dict",
    "llama_from",
    "next_token_loss",
    "parameter_groups",
    "rope_half",
    "rope_pairs",
    "train_step",
]


# --- lesson 18's GPT ---------------------------------------------------------------------------------


def rope_pairs(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """RoPE as lesson 18's model has it: neighbouring pairs ``(x[2i], x[2i+1])`` turned by ``p · θ_i``.

    Lesson 19 · 2. The angles are made in float64, as attnlib makes them, then cast to ``x``'s dtype.

    Parameters
    ----------
    x : (..., n, d_head)
    positions : (n,) int

    Returns
    -------
    (..., n, d_head)
    """
    angles = positions.to(torch.float64)[:, None] * torch.from_numpy(rope_frequencies(x.shape[-1]))
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """``(n_q, n_k)`` bool, True where a query may attend: the queries are the *last* ``n_q`` tokens.

    Lesson 19 · 2 (lesson 05's causal mask; with a cache, lesson 16 · 2's decode case).
    ``torch.ones(n_q, n_k).tril()`` is right only when ``n_q == n_k``.
    """
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)


class Attention(nn.Module):
    """Causal multi-head attention with RoPE: lesson 18's ``attn``, four ``nn.Linear`` without bias.

    Lesson 19 · 2. The modules.
    """

    def __init__(self, d_model: int, n_heads: int, *, fused: bool = False) -> None:
        super().__init__()
        self.n_heads, self.fused = n_heads, fused
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model, bias=False) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x : (B, n, d_model)`` → ``(B, n, d_model)``."""
        B, n, d = x.shape
        positions = torch.arange(n)
        q, k, v = (f(x).view(B, n, self.n_heads, -1).transpose(1, 2) for f in (self.q, self.k, self.v))
        q, k = rope_pairs(q, positions), rope_pairs(k, positions)
        if self.fused:  # lesson 12's FlashAttention, as PyTorch ships it
            z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            z = scores.masked_fill(~causal_mask(n, n), float("-inf")).softmax(dim=-1) @ v
        return self.o(z.transpose(1, 2).reshape(B, n, d))


class MLP(nn.Module):
    """``GELU(x W_in + b_in) W_out + b_out``, GELU's tanh form as attnlib's (lesson 15's model)."""

    def __init__(self, d_model: int, d_mlp: int) -> None:
        super().__init__()
        self.up, self.down = nn.Linear(d_model, d_mlp), nn.Linear(d_mlp, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x : (..., d_model)`` → ``(..., d_model)``."""
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class Block(nn.Module):
    """nanoGPT's block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``; dropout on each branch."""

    def __init__(self, c: DecoderConfig, *, dropout: float = 0.0, fused: bool = False) -> None:
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(c.d_model, eps=LN_EPS), nn.LayerNorm(c.d_model, eps=LN_EPS)
        self.attn, self.mlp = Attention(c.d_model, c.n_heads, fused=fused), MLP(c.d_model, c.d_mlp)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x : (B, n, d_model)`` → ``(B, n, d_model)``."""
        x = x + self.drop(self.attn(self.ln_1(x)))
        return x + self.drop(self.mlp(self.ln_2(x)))


class GPT(nn.Module):
    """Lesson 18's GPT: token embeddings, ``n_layers`` blocks, a last LayerNorm, an untied unembedding.

    Lesson 19 · 2. ``GPT(config)(ids)`` gives the logits ``(B, n, vocab_size)``.
    """

    def __init__(self, c: DecoderConfig, *, dropout: float = 0.0, fused: bool = False) -> None:
        super().__init__()
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(c, dropout=dropout, fused=fused) for _ in range(c.n_layers))
        self.ln_f = nn.LayerNorm(c.d_model, eps=LN_EPS)
        self.unembed = nn.Linear(c.d_model, c.vocab_size, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """``ids : (B, n)`` int → logits ``(B, n, vocab_size)``."""
        x = self.drop(self.embed(ids))
        for block in self.blocks:
            x = block(x)
        return self.unembed(self.ln_f(x))


#: attnlib's name of each part → the modules' (``{i}``: the layer), and whether it is transposed.
_GPT_NAMES = {
    "embed": ("embed.weight", False),
    "unembed": ("unembed.weight", True),
    "ln_final.gain": ("ln_f.weight", False),
    "ln_final.bias": ("ln_f.bias", False),
    "layer{i}.ln_attn.gain": ("blocks.{i}.ln_1.weight", False),
    "layer{i}.ln_attn.bias": ("blocks.{i}.ln_1.bias", False),
    "layer{i}.ln_mlp.gain": ("blocks.{i}.ln_2.weight", False),
    "layer{i}.ln_mlp.bias": ("blocks.{i}.ln_2.bias", False),
    "layer{i}.W_q": ("blocks.{i}.attn.q.weight", True),
    "layer{i}.W_k": ("blocks.{i}.attn.k.weight", True),
    "layer{i}.W_v": ("blocks.{i}.attn.v.weight", True),
    "layer{i}.W_o": ("blocks.{i}.attn.o.weight", True),
    "layer{i}.W_in": ("blocks.{i}.mlp.up.weight", True),
    "layer{i}.b_in": ("blocks.{i}.mlp.up.bias", False),
    "layer{i}.W_out": ("blocks.{i}.mlp.down.weight", True),
    "layer{i}.b_out": ("blocks.{i}.mlp.down.bias", False),
}


def _gpt_pairs(n_layers: int) -> Iterable[tuple[str, str, bool]]:
    for ours, (theirs, transposed) in _GPT_NAMES.items():
        layers = range(n_layers) if "{i}" in ours else [0]
        for i in layers:
            yield ours.format(i=i), theirs.format(i=i), transposed


def gpt_state_dict(params: Mapping[str, np.ndarray], n_layers: int) -> dict[str, torch.Tensor]:
    """attnlib's GPT parameters as :class:`GPT`'s ``state_dict``: the names mapped, matrices transposed.

    Lesson 19 · 2. ``nn.Linear`` computes ``x @ weight.T + bias`` with ``weight : (out, in)``;
    attnlib computes ``x @ W + b`` with ``W : (in, out)``. So ``weight = W.T``.
    """
    return {
        theirs: torch.from_numpy(np.ascontiguousarray(params[ours].T if transposed else params[ours]))
        for ours, theirs, transposed in _gpt_pairs(n_layers)
    }


def attnlib_names(tensors: Mapping[str, torch.Tensor], n_layers: int) -> dict[str, np.ndarray]:
    """:class:`GPT`'s tensors by name (gradients, parameters) back in attnlib's names and shapes."""
    return {
        ours: (tensors[theirs].T if transposed else tensors[theirs]).detach().numpy()
        for ours, theirs, transposed in _gpt_pairs(n_layers)
    }


def parameter_groups(model: nn.Module, weight_decay: float) -> list[dict[str, object]]:
    """nanoGPT's two groups for ``torch.optim.AdamW``: decay on matrices and embeddings, none on the rest.

    Lesson 19 · 3 (:func:`attnlib.optim.decays`' rule: every parameter of two or more axes decays).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]


def next_token_loss(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of ``model``'s logits against ``targets``, both ``(B, n)``. Lesson 19 · 3."""
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def evaluate(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> float:
    """The loss without dropout and without a graph, as a float; ``model`` is left in training mode.

    Lesson 19 · 3 (nanoGPT's ``estimate_loss``: ``model.eval()``, ``torch.no_grad()``, ``model.train()``).
    """
    model.eval()
    with torch.no_grad():
        loss = next_token_loss(model, inputs, targets).item()
    model.train()
    return loss


def train_step(
    model: nn.Module,
    optimiser: torch.optim.Optimizer,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    clip: float,
) -> float:
    """One step: zero the gradients, the loss, backward, clip to a global norm of ``clip``, step.

    Lesson 19 · 3 (lesson 18's loop in PyTorch; nanoGPT's ``train.py``). Returns the batch's loss.
    """
    optimiser.zero_grad(set_to_none=True)
    loss = next_token_loss(model, inputs, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimiser.step()
    return loss.item()


# --- SmolLM2 -------------------------------------------------------------------------------------------


def rope_half(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """RoPE with Llama's ``rotate_half`` pairing: component ``i`` with ``i + d/2``, by ``p · base^(−2i/d)``.

    Lesson 19 · 5 (lesson 16 · 2's rotation). Angles in float64, as attnlib makes them.

    Parameters
    ----------
    x : (..., n, d_head)
    positions : (n,) int
    base : float
    """
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.to(torch.float64)[:, None] * theta
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x²) + ε) · weight``: lesson 16's RMSNorm as a module."""

    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d_model)), eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x : (..., d_model)`` → the same shape."""
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    """``(silu(x W_gate) ⊙ x W_up) W_down``: lesson 16's MLP as a module."""

    def __init__(self, d_model: int, d_mlp: int) -> None:
        super().__init__()
        self.gate = nn.Linear(d_model, d_mlp, bias=False)
        self.up = nn.Linear(d_model, d_mlp, bias=False)
        self.down = nn.Linear(d_mlp, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x : (..., d_model)`` → the same shape."""
        return self.down(F.silu(self.gate(x)) * self.up(x))


class KVCache:
    """Each layer's rotated keys and values so far, ``(B, H_kv, n_k, d_head)``, grown by :meth:`extend`.

    Lesson 19 · 5 (lesson 15's KV cache, in tensors).
    """

    def __init__(self, n_layers: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    def __len__(self) -> int:
        return 0 if self.keys[0] is None else self.keys[0].shape[-2]

    def extend(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append this step's ``k, v`` to ``layer``'s and return all of them."""
        if self.keys[layer] is not None:
            k, v = torch.cat((self.keys[layer], k), dim=-2), torch.cat((self.values[layer], v), dim=-2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


class LlamaAttention(nn.Module):
    """Grouped-query attention with rotate-half RoPE and a KV cache: SmolLM2's attention as a module.

    Lesson 19 · 5. Query head ``h`` reads key/value head ``h // (H / H_kv)``.
    """

    def __init__(self, c: LlamaConfig, layer: int) -> None:
        super().__init__()
        self.c, self.layer = c, layer
        self.q = nn.Linear(c.d_model, c.n_heads * c.d_head, bias=False)
        self.k = nn.Linear(c.d_model, c.n_kv_heads * c.d_head, bias=False)
        self.v = nn.Linear(c.d_model, c.n_kv_heads * c.d_head, bias=False)
        self.o = nn.Linear(c.n_heads * c.d_head, c.d_model, bias=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """``x : (B, n, d_model)`` at ``positions (n,)`` → ``(B, n, d_model)``; with a cache, the
        queries attend to every key cached so far and this step's."""
        c, (B, n, _) = self.c, x.shape
        q = self.q(x).view(B, n, c.n_heads, c.d_head).transpose(1, 2)
        k = self.k(x).view(B, n, c.n_kv_heads, c.d_head).transpose(1, 2)
        v = self.v(x).view(B, n, c.n_kv_heads, c.d_head).transpose(1, 2)
        q, k = rope_half(q, positions, c.rope_base), rope_half(k, positions, c.rope_base)
        if cache is not None:
            k, v = cache.extend(self.layer, k, v)
        group = c.n_heads // c.n_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        mask = causal_mask(n, k.shape[-2])  # not is_causal=True: PyTorch's is top-left aligned
        z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o(z.transpose(1, 2).reshape(B, n, c.n_heads * c.d_head))


class LlamaBlock(nn.Module):
    """SmolLM2's layer: nanoGPT's two lines with RMSNorm, grouped-query attention and SwiGLU."""

    def __init__(
        self,
        c: LlamaConfig,
        layer: int,
        *,
        norm: type[nn.Module] = RMSNorm,
        attention: type[nn.Module] | None = None,
    ) -> None:
        super().__init__()
        attention = LlamaAttention if attention is None else attention
        self.attn_norm, self.mlp_norm = norm(c.d_model, c.norm_eps), norm(c.d_model, c.norm_eps)
        self.attn, self.mlp = attention(c, layer), SwiGLU(c.d_model, c.d_mlp)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """``x : (B, n, d_model)`` → the same shape."""
        x = x + self.attn(self.attn_norm(x), positions, cache)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    """SmolLM2-135M as modules: the embedding (tied to the output), 30 blocks, a last RMSNorm.

    Lesson 19 · 5. ``Llama(config)(ids, positions, cache)`` gives the logits ``(B, n, vocab_size)``.
    """

    def __init__(
        self, c: LlamaConfig, *, norm: type[nn.Module] = RMSNorm, attention: type[nn.Module] | None = None
    ) -> None:
        super().__init__()
        self.config = c
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        layers = range(c.n_layers)
        self.blocks = nn.ModuleList(LlamaBlock(c, i, norm=norm, attention=attention) for i in layers)
        self.norm = norm(c.d_model, c.norm_eps)

    def forward(
        self, ids: torch.Tensor, positions: torch.Tensor | None = None, cache: KVCache | None = None
    ) -> torch.Tensor:
        """``ids : (B, n)`` at ``positions`` (default ``0 … n−1``) → logits ``(B, n, vocab_size)``."""
        positions = torch.arange(ids.shape[-1]) if positions is None else positions
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, positions, cache)
        return self.norm(x) @ self.embed.weight.T  # tied: the embedding is the output matrix


#: attnlib's short name of each layer weight → the module's, under ``blocks.{i}.``.
_LLAMA_NAMES = {
    "attn_norm": "attn_norm.weight",
    "mlp_norm": "mlp_norm.weight",
    "W_q": "attn.q.weight",
    "W_k": "attn.k.weight",
    "W_v": "attn.v.weight",
    "W_o": "attn.o.weight",
    "W_gate": "mlp.gate.weight",
    "W_up": "mlp.up.weight",
    "W_down": "mlp.down.weight",
}


def llama_from(
    config: LlamaConfig,
    params: Mapping[str, np.ndarray],
    *,
    norm: type[nn.Module] = RMSNorm,
    attention: type[nn.Module] | None = None,
) -> Llama:
    """:class:`Llama` on attnlib's float32 weights (``load_smollm2().params``), sharing their memory.

    Lesson 19 · 5. attnlib keeps each matrix as ``W : (in, out)``, a transposed view of the file's
    ``(out, in)`` rows: ``W.T`` is what ``nn.Linear`` wants, and ``torch.from_numpy`` wraps it
    without a copy (``load_state_dict(assign=True)`` keeps the tensors given). ``norm`` and
    ``attention`` are the classes of those parts (the learner's, once they pass their checks).
    """
    state = {"embed.weight": params["embed"], "norm.weight": params["norm"]}
    for i in range(config.n_layers):
        for ours, theirs in _LLAMA_NAMES.items():
            array = params[f"layer{i}.{ours}"]
            state[f"blocks.{i}.{theirs}"] = array.T if array.ndim == 2 else array
    with torch.device("meta"):  # no memory for the weights about to be replaced
        model = Llama(config, norm=norm, attention=attention)
    model.load_state_dict({name: torch.from_numpy(a) for name, a in state.items()}, assign=True)
    return model.eval().requires_grad_(False)


@torch.no_grad()
def generate(model: Llama, ids: Iterable[int], n_new: int) -> list[int]:
    """``n_new`` greedy tokens after ``ids``: the prompt in one pass (prefill), then one token at a time
    against the cache (decode). Lesson 19 · 5."""
    ids = list(ids)
    cache = KVCache(len(model.blocks))
    logits = model(torch.tensor([ids]), torch.arange(len(ids)), cache)
    new: list[int] = []
    for _ in range(n_new):
        new.append(int(logits[0, -1].argmax()))
        position = torch.tensor([len(cache)])
        logits = model(torch.tensor([[new[-1]]]), position, cache)
    return new


# --- LoRA ------------------------------------------------------------------------------------------------


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank change: ``base(x) + (α / r) · x Aᵀ Bᵀ``.

    Lesson 19 · 6 (Hu et al., 2021). ``A : (r, in)`` starts random, ``B : (out, r)`` at zero, so the
    model is unchanged until the first step; only ``A`` and ``B`` learn. ``A`` is Gaussian as in the
    paper, of variance ``1/in`` (lesson 11's ``1/fan_in``, as nn.Linear and PEFT's kaiming-uniform
    ``A`` scale it up to a constant): ``x Aᵀ`` then has entries of about ``x``'s size whatever ``r``.
    """

    def __init__(
        self, base: nn.Linear, r: int, alpha: float, *, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        self.base, self.scale = base.requires_grad_(False), alpha / r
        like = {"dtype": base.weight.dtype}
        A = torch.randn(r, base.in_features, generator=generator, **like) / math.sqrt(base.in_features)
        self.A = nn.Parameter(A)
        self.B = nn.Parameter(torch.zeros(base.out_features, r, **like))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x : (..., in)`` → ``(..., out)``."""
        return self.base(x) + (x @ self.A.T) @ self.B.T * self.scale


def add_lora(
    model: Llama,
    r: int,
    alpha: float,
    *,
    targets: Iterable[str] = ("q", "v"),
    seed: int = 0,
    lora: type[nn.Module] = LoRALinear,
) -> int:
    """Freeze ``model`` and wrap each layer's ``targets`` projections in ``lora`` (:class:`LoRALinear`).

    Lesson 19 · 6. Returns the number of trainable parameters (LoRA's ``A`` and ``B``).
    """
    model.requires_grad_(False)
    generator = torch.Generator().manual_seed(seed)
    for block in model.blocks:
        for name in targets:
            setattr(block.attn, name, lora(getattr(block.attn, name), r, alpha, generator=generator))
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
