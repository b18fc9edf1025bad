"""Lesson 19's checks of SmolLM2's parts in PyTorch (attention_lessons.l19_pytorch.llama_checks): each
passes the right class, written as a learner would, and the lesson's reference module; says "No answer
yet" to None; names every mistake of its tables when a learner's class makes it; says in one line what
is wrong with what is not a class of the lesson's shape; keeps the class that passes and drops it when
a later check of it fails; and leaves torch's global state as it found it."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from attention_lessons.l19_pytorch import llama_checks as checks  # noqa: E402
from attention_lessons.l19_pytorch import modules  # noqa: E402


def learner(cls: type, name: str, /, **how: object) -> type:
    """A learner's class: ``cls`` with its choices ``how`` (a mistake, or none), named as the lesson does."""
    return type(name, (cls,), {"how": how})


# --- RMSNorm, as a learner writes it -------------------------------------------------------------------


class Norm(nn.Module):
    how: ClassVar[dict] = {}

    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.eps = eps

    def forward(self, x):
        h, w, eps = self.how, self.weight, self.eps
        if h.get("layer_norm") == "F":
            return F.layer_norm(x, x.shape[-1:], w, eps=eps)
        if h.get("layer_norm") == "by hand":
            return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps) * w
        ms = {
            None: lambda: x.pow(2).mean(dim=-1, keepdim=True),
            "std": lambda: x.var(-1, keepdim=True, unbiased=False),
            "std unbiased": lambda: x.var(-1, keepdim=True),
            "sum": lambda: x.pow(2).sum(dim=-1, keepdim=True),
            "whole": lambda: x.pow(2).mean(),
            "tokens": lambda: x.pow(2).mean(dim=1, keepdim=True),
            "batch": lambda: x.pow(2).mean(dim=0, keepdim=True),
        }[h.get("ms")]()
        if h.get("norm"):
            y = x / x.norm(dim=-1, keepdim=True)
        elif h.get("eps_outside"):
            y = x / (ms.sqrt() + eps)
        elif h.get("no_root"):
            y = x / (ms + eps)
        else:
            root = torch.rsqrt(ms + eps)
            y = x * (root.detach() if h.get("detach") else root)
        y = {"times": y * w, "none": y, "one plus": y * (1 + w)}[h.get("weight", "times")]
        if h.get("returns") == "parameter":
            return nn.Parameter(y)
        if h.get("returns") == "numpy":
            return y.detach().numpy()
        if h.get("returns") == "float64":
            return y.double()
        return y


RIGHT_NORM = learner(Norm, "MyRMSNorm")

NORM_MISTAKES = [
    {"layer_norm": "F"}, {"layer_norm": "by hand"}, {"ms": "std"}, {"ms": "std unbiased"}, {"weight": "none"},
    {"weight": "one plus"}, {"no_root": True}, {"ms": "sum"}, {"norm": True}, {"eps_outside": True},
    {"ms": "whole"}, {"ms": "tokens"}, {"ms": "batch"},
]  # fmt: skip


# --- the attention, as a learner writes it -------------------------------------------------------------


def rotated(t, positions, base, pairs=False):
    """RoPE in torch: rotate-half (Llama's) or neighbouring pairs (lesson 18's GPT)."""
    d = t.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.to(torch.float64)[:, None] * theta
    cos, sin = angles.cos().to(t.dtype), angles.sin().to(t.dtype)
    if pairs:
        even, odd = t[..., 0::2], t[..., 1::2]
        return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)
    first, second = t[..., : d // 2], t[..., d // 2 :]
    return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)


class Attention(nn.Module):
    how: ClassVar[dict] = {}

    def __init__(self, config, layer):
        super().__init__()
        c, h = config, self.how
        self.c, self.layer = c, layer
        self.q = nn.Linear(c.d_model, c.n_heads * c.d_head, bias=bool(h.get("bias")))
        self.k = nn.Linear(c.d_model, c.n_kv_heads * c.d_head, bias=False)
        self.v = nn.Linear(c.d_model, c.n_kv_heads * c.d_head, bias=False)
        self.o = nn.Linear(c.n_heads * c.d_head, c.d_model, bias=False)
        if h.get("buffer"):
            self.register_buffer("theta", torch.ones(c.d_head // 2), persistent=h["buffer"] == "persistent")

    def split(self, t, heads):
        B, n, _ = t.shape
        if self.how.get("split") == "view":
            return t.view(B, heads, n, self.c.d_head)
        return t.view(B, n, heads, self.c.d_head).transpose(1, 2)

    def turn(self, t, positions):
        h = self.how
        positions = torch.arange(t.shape[-2]) if h.get("counted") else positions
        if h.get("buffer") == "meta":  # a table made in __init__, left on the meta device
            positions = positions * self.theta[0]
        return rotated(t, positions, h.get("base", self.c.rope_base), pairs=bool(h.get("pairs")))

    def keys_and_values(self, k, v, positions, cache):
        h = self.how
        if cache is None or h.get("cache") == "ignored":
            return self.turn(k, positions), v
        if h.get("cache") == "not extended":
            k = self.turn(k, positions)
            return torch.cat((cache.keys[self.layer], k), dim=-2), torch.cat(
                (cache.values[self.layer], v), dim=-2
            )
        if h.get("cache") == "layer 0":
            return cache.extend(0, self.turn(k, positions), v)
        if h.get("cache") == "rotated after, at the positions":
            k, v = cache.extend(self.layer, k, v)
            return self.turn(k, positions), v
        if h.get("cache") == "after repeat":
            k, v = self.turn(k, positions).repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1)
            return cache.extend(self.layer, k, v)
        if h.get("cache") == "rotated after, from 0":
            k, v = cache.extend(self.layer, k, v)
            return self.turn(k, torch.arange(k.shape[-2])), v
        return cache.extend(self.layer, self.turn(k, positions), v)

    def mask(self, n, n_k):
        m = self.how.get("mask")
        if m in ("tril", "tril float"):
            mask = torch.ones(n, n_k).tril()
            return mask if m == "tril float" else mask.bool()
        mask = modules.causal_mask(n, n_k)
        return mask.float() if m == "float" else mask

    def attend(self, q, k, v):
        h, n, n_k = self.how, q.shape[-2], k.shape[-2]
        if h.get("mask") == "is_causal":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if h.get("mask") == "none":
            return F.scaled_dot_product_attention(q, k, v)
        if not any(key in h for key in ("scale", "dim", "zero")):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask(n, n_k))
        d = q.shape[-1]
        scores = q @ k.transpose(-2, -1) * {None: 1 / math.sqrt(d), "none": 1.0, "d": 1 / d}[h.get("scale")]
        allowed = self.mask(n, n_k)
        scores = scores.masked_fill(~allowed, 0.0 if h.get("zero") else float("-inf"))
        return scores.softmax(dim=h.get("dim", -1)) @ v

    def forward(self, x, positions, cache=None):
        c, h = self.c, self.how
        B, n, _ = x.shape
        q = self.turn(self.split(self.q(x), c.n_heads), positions)
        k, v = self.split(self.k(x), c.n_kv_heads), self.split(self.v(x), c.n_kv_heads)
        k, v = self.keys_and_values(k, v, positions, cache)
        group = c.n_heads // c.n_kv_heads
        if h.get("cache") == "after repeat" and cache is not None:
            pass  # repeated before the cache
        elif h.get("tile"):
            k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
        else:
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        z = self.attend(q, k, v)
        z = z.reshape(B, n, -1) if h.get("merge") == "reshape" else z.transpose(1, 2).reshape(B, n, -1)
        out = self.o(z)
        if h.get("returns") == "pair":
            return out, None
        return out.detach() if h.get("detach") else out


RIGHT_ATTENTION = learner(Attention, "MyLlamaAttention")

ATTENTION_MISTAKES = [
    {"mask": "tril"}, {"mask": "none"}, {"mask": "float"}, {"mask": "tril float"}, {"zero": True},
    {"counted": True}, {"pairs": True}, {"base": 10000.0}, {"tile": True}, {"cache": "ignored"},
    {"cache": "rotated after, at the positions"}, {"cache": "rotated after, from 0"}, {"scale": "none"},
    {"scale": "d"}, {"dim": -2}, {"split": "view"}, {"merge": "reshape"},
]  # fmt: skip


# --- LoRA, as a learner writes it ----------------------------------------------------------------------


class LoRA(nn.Module):
    how: ClassVar[dict] = {}

    def __init__(self, base, r, alpha, generator=None):
        super().__init__()
        h = self.how
        self.base = base if h.get("unfrozen") else base.requires_grad_(False)
        self.scale = {None: alpha / r, "r / alpha": r / alpha, "none": 1.0, "1 / r": 1 / r, "alpha": alpha}[
            h.get("scale")
        ]
        d_in, d_out = base.in_features, base.out_features
        made = torch.Generator().manual_seed(99) if h.get("own generator") else generator
        A = torch.randn(r, d_in, generator=made if "global" not in h else None) / math.sqrt(d_in)
        B = torch.zeros(d_out, r)
        if h.get("start") == "both zero":
            A = torch.zeros(r, d_in)
        elif h.get("start") == "mirror":
            A, B = torch.zeros(r, d_in), torch.randn(d_out, r, generator=generator)
        elif h.get("start") == "B random":
            B = torch.randn(d_out, r, generator=generator)
        if h.get("shapes") == "transposed":
            A, B = A.T.contiguous(), B.T.contiguous()
        elif h.get("shapes") == "roles":
            A, B = B.T.contiguous(), A.T.contiguous()
        if h.get("plain"):
            self.A, self.B = A.requires_grad_(), B.requires_grad_()
        else:
            self.A, self.B = nn.Parameter(A), nn.Parameter(B)
        if h.get("extra"):
            self.gate = nn.Parameter(torch.ones(()))
        if h.get("all frozen"):
            self.requires_grad_(False)
        if h.get("scale name"):
            self.scaling = self.scale
            del self.scale

    def forward(self, x):
        h = self.how
        s = getattr(self, "scale", None) or self.scaling
        B = self.B.detach() if h.get("detach") else self.B
        if h.get("shapes") == "transposed":
            change = x @ self.A @ B
        elif h.get("shapes") == "roles":
            change = x @ B @ self.A
        else:
            change = x @ self.A.T @ B.T
        if h.get("merged no bias"):
            return F.linear(x, self.base.weight + s * B @ self.A)
        if h.get("whole"):
            return s * (self.base(x) + change)
        return (0 if h.get("no base") else self.base(x)) + s * change


RIGHT_LORA = learner(LoRA, "MyLoRALinear")

LORA_MISTAKES = [
    {"no base": True}, {"merged no bias": True}, {"scale": "r / alpha"}, {"scale": "none"},
    {"scale": "1 / r"}, {"scale": "alpha"}, {"whole": True},
]  # fmt: skip


#: Each check: the check, the learner's class, its name, the lesson's reference, the table, the learner's
#: choices that make each row of the table.
CHECKS = {
    "rms_norm": (
        checks.check_rms_norm, Norm, "MyRMSNorm", modules.RMSNorm, checks.RMS_NORM_MISTAKES, NORM_MISTAKES,
    ),
    "llama_attention": (
        checks.check_llama_attention, Attention, "MyLlamaAttention", modules.LlamaAttention,
        checks.LLAMA_ATTENTION_MISTAKES, ATTENTION_MISTAKES,
    ),
    "lora_linear": (
        checks.check_lora, LoRA, "MyLoRALinear", modules.LoRALinear, checks.LORA_MISTAKES, LORA_MISTAKES,
    ),
}  # fmt: skip


# --- the right classes, the reference, bad input --------------------------------------------------------


@pytest.mark.parametrize("key", CHECKS)
def test_the_right_class_and_the_reference_pass_and_are_kept(key):
    check, base, name, reference, _, _ = CHECKS[key]
    right = learner(base, name)
    yours = {}
    result = check(right, keep=yours)
    assert result.passed and str(result).startswith(f"✔ Correct: {name}"), result
    assert yours == {key: right}
    assert check(reference).passed, check(reference)


@pytest.mark.parametrize("key", CHECKS)
def test_a_later_failure_takes_the_class_out(key):
    check, base, name, _, _, mistakes = CHECKS[key]
    yours = {}
    assert check(learner(base, name), keep=yours).passed
    assert not check(learner(base, name, **mistakes[0]), keep=yours).passed
    assert yours == {}


@pytest.mark.parametrize("key", CHECKS)
def test_what_is_not_a_class_of_the_lessons_shape_is_told_in_one_line(key):
    check, base, name, _, _, _ = CHECKS[key]

    class NotAModule:
        pass

    class TakesOther(nn.Module):
        def __init__(self, size):
            super().__init__()

    class NoSuper(base):
        def __init__(self, *args, **kwargs):
            self.weight = nn.Parameter(torch.ones(3))

    assert str(check(None)) == f"✘ No answer yet: {name} is None; replace it with your own computation."
    assert check(...).message.startswith("No answer yet")
    assert check(lambda x: x).message.startswith(
        f"Not a class: {name} is a function; define it with `class {name}"
    )
    assert check(3).message.startswith(f"Not a class: {name} is an int")
    assert check(NotAModule).message.startswith(f"Not an nn.Module: {name} is a class but not a subclass")
    instance = modules.RMSNorm(4, 1e-5)
    assert check(instance).message.startswith("Pass the class itself")
    wrong = check(TakesOther)
    assert (
        wrong.message.startswith(f"Wrong arguments: the lesson makes {name}(") and "(size)" in wrong.message
    )
    no_super = check(NoSuper).message
    assert "raised AttributeError" in no_super and "call super().__init__() first" in no_super
    for result in (check(None), check(TakesOther), check(NoSuper)):
        assert "\n" not in result.message


# --- RMSNorm's mistakes ---------------------------------------------------------------------------------


def test_every_norm_mistake_is_named():
    assert len(NORM_MISTAKES) == len(checks.RMS_NORM_MISTAKES)
    for mistake, how in zip(checks.RMS_NORM_MISTAKES, NORM_MISTAKES, strict=True):
        result = checks.check_rms_norm(learner(Norm, "MyRMSNorm", **how))
        assert not result.passed and result.message.startswith(mistake.name), (how, result)


def test_eps_outside_the_root_is_seen_on_rows_as_small_as_sqrt_eps():
    result = checks.check_rms_norm(learner(Norm, "MyRMSNorm", eps_outside=True))
    assert result.message.startswith("You added eps outside the square root")


@pytest.mark.parametrize(
    ("how", "start"),
    [
        ({"returns": "parameter"}, "Your MyRMSNorm returned a new nn.Parameter: a Parameter is a leaf"),
        ({"returns": "numpy"}, "Not a tensor: your MyRMSNorm returned an ndarray"),
        ({"returns": "float64"}, "Your MyRMSNorm returned float64 for float32 inputs"),
        ({"detach": True}, "Your MyRMSNorm's output is right but its gradients are not RMSNorm's"),
    ],
)
def test_what_only_a_module_gets_wrong_in_the_norm(how, start):
    result = checks.check_rms_norm(learner(Norm, "MyRMSNorm", **how))
    assert not result.passed and result.message.startswith(start), result


def test_a_weight_that_is_no_parameter_or_of_another_shape_is_told():
    class Plain(Norm):
        def __init__(self, d_model, eps):
            super().__init__(d_model, eps)
            del self.weight
            self.weight = torch.ones(d_model)

    class Row(Norm):
        def __init__(self, d_model, eps):
            super().__init__(d_model, eps)
            self.weight = nn.Parameter(torch.ones(1, d_model))

    class NoWeight(Norm):
        def __init__(self, d_model, eps):
            super().__init__(d_model, eps)
            del self.weight
            self.gain = nn.Parameter(torch.ones(d_model))

    class Buffer(Norm):
        def __init__(self, d_model, eps):
            super().__init__(d_model, eps)
            self.register_buffer("eps_tensor", torch.tensor(eps))

    assert checks.check_rms_norm(Plain).message.startswith(
        "Your MyRMSNorm's weight is a plain tensor, not an nn.Par"
    )
    assert checks.check_rms_norm(Row).message.startswith(
        "Your MyRMSNorm's weight has shape (1, 576), not (576,)"
    )
    assert checks.check_rms_norm(NoWeight).message.startswith(
        "Your MyRMSNorm has no weight: make it in __init__"
    )
    assert "state_dict() has eps_tensor besides weight" in checks.check_rms_norm(Buffer).message


def test_a_norm_that_raises_or_returns_nothing_says_so():
    class Raises(Norm):
        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(dim=-1) + self.eps) * self.weight  # no keepdim

    class Nothing(Norm):
        def forward(self, x):
            x * self.weight

    raised = checks.check_rms_norm(Raises).message
    assert raised.startswith("Your MyRMSNorm raised RuntimeError on rows of the residual stream's spread:")
    assert checks.check_rms_norm(Nothing).message.startswith(
        "Nothing returned: your MyRMSNorm's forward returns None"
    )


# --- the attention's mistakes ---------------------------------------------------------------------------


def test_every_attention_mistake_is_named():
    assert len(ATTENTION_MISTAKES) == len(checks.LLAMA_ATTENTION_MISTAKES)
    for mistake, how in zip(checks.LLAMA_ATTENTION_MISTAKES, ATTENTION_MISTAKES, strict=True):
        result = checks.check_llama_attention(learner(Attention, "MyLlamaAttention", **how))
        assert not result.passed and result.message.startswith(mistake.name), (how, result)


def test_is_causal_with_a_cache_is_the_top_left_mask_and_the_message_says_why():
    """PyTorch's is_causal=True is top-left aligned: right for the prompt pass, wrong when decoding."""
    result = checks.check_llama_attention(learner(Attention, "MyLlamaAttention", mask="is_causal"))
    assert result.message.startswith("Your mask assumes the queries are the first n tokens; with a cache")
    assert "is_causal is top-left aligned" in result.message and "tril(diagonal=n_k - n)" in result.message
    assert result.message.endswith(
        "Seen when decoding with the KV cache (one token at position 5, after 5 cached)."
    )


@pytest.mark.parametrize(
    ("how", "start"),
    [
        ({"cache": "not extended"}, "Your cache was not extended when decoding with the KV cache"),
        ({"cache": "layer 0"}, "You extended layer 0's cache, not this layer's"),
        ({"detach": True}, "Your MyLlamaAttention's output is right but gradients do not flow through it"),
        ({"returns": "pair"}, "Not a tensor: your MyLlamaAttention returned a tuple"),
        ({"bias": True}, "Your MyLlamaAttention's q has a bias; SmolLM2's projections have none"),
        ({"buffer": "persistent"}, "Your MyLlamaAttention's state_dict() has theta besides"),
    ],
)
def test_what_only_a_module_gets_wrong_in_the_attention(how, start):
    result = checks.check_llama_attention(learner(Attention, "MyLlamaAttention", **how))
    assert not result.passed and result.message.startswith(start), result


def test_a_tensor_made_in_init_is_left_on_the_meta_device_as_the_lesson_makes_the_class():
    result = checks.check_llama_attention(learner(Attention, "MyLlamaAttention", buffer="meta"))
    assert not result.passed and "meta device" in result.message and "make it in forward" in result.message


def test_keys_cached_unrotated_are_told():
    class Unrotated(Attention):
        """Rotates the keys it attends with, but caches them before their rotation."""

        def keys_and_values(self, k, v, positions, cache):
            if cache is None:
                return self.turn(k, positions), v
            old_k, old_v = cache.keys[self.layer], cache.values[self.layer]
            cache.extend(self.layer, k, v)
            return torch.cat((old_k, self.turn(k, positions)), -2), torch.cat((old_v, v), -2)

    result = checks.check_llama_attention(learner(Unrotated, "MyLlamaAttention"))
    assert result.message.startswith("Your cache holds this step's keys before their rotation"), result


def test_keys_repeated_before_the_cache_raise_with_advice():
    result = checks.check_llama_attention(learner(Attention, "MyLlamaAttention", cache="after repeat"))
    assert result.message.startswith(
        "Your MyLlamaAttention raised RuntimeError when decoding with the KV cache"
    )
    assert "extend the cache with k and v before repeat_interleave" in result.message


def test_a_missing_projection_or_another_forward_is_told():
    class NoO(Attention):
        def __init__(self, config, layer):
            super().__init__(config, layer)
            del self.o

    class NoCache(Attention):
        def forward(self, x, positions):
            return super().forward(x, positions)

    assert checks.check_llama_attention(NoO).message.startswith(
        "Your MyLlamaAttention has no layer o with a weight"
    )
    wrong = checks.check_llama_attention(NoCache).message
    assert wrong.startswith(
        "Wrong arguments: the lesson calls your MyLlamaAttention as attn(x, positions, cache)"
    )


# --- LoRA's mistakes --------------------------------------------------------------------------------------


def test_every_lora_mistake_is_named():
    assert len(LORA_MISTAKES) == len(checks.LORA_MISTAKES)
    for mistake, how in zip(checks.LORA_MISTAKES, LORA_MISTAKES, strict=True):
        result = checks.check_lora(learner(LoRA, "MyLoRALinear", **how))
        assert not result.passed and result.message.startswith(mistake.name.format(ex=None)), (how, result)


@pytest.mark.parametrize(
    ("how", "start"),
    [
        ({"start": "both zero"}, "A and B both start at zero: neither gets a gradient"),
        ({"start": "mirror"}, "B starts random and A at zero: the mirror of LoRA's start"),
        ({"start": "B random"}, "B does not start at zero"),
        ({"unfrozen": True}, "The base layer is not frozen"),
        ({"all frozen": True}, "Your A and B do not learn (requires_grad is False)"),
        ({"extra": True}, "Only A and B learn in LoRA; your MyLoRALinear also trains gate"),
        ({"shapes": "transposed"}, "Your A and B are transposed, A (24, 4) and B (4, 16) (x @ A @ B)"),
        ({"shapes": "roles"}, "Your A and B have swapped roles, A (4, 16) and B (24, 4) (x @ B @ A)"),
        ({"plain": True}, "Your A and B are plain tensors, not nn.Parameters"),
        ({"global": True}, "Your A does not come from the generator given"),
        ({"own generator": True}, "Your A is the same whatever the generator given has drawn before"),
        ({"detach": True}, "B does not get the loss's gradient"),
        ({"scale name": True}, "Your MyLoRALinear computes the right output, but keeps no scale"),
    ],
)
def test_what_only_a_module_gets_wrong_in_lora(how, start):
    result = checks.check_lora(learner(LoRA, "MyLoRALinear", **how))
    assert not result.passed and result.message.startswith(start), result


def test_the_mirrored_start_is_refused_with_its_reason():
    """B random and A zero would learn (A gets the first gradient): the message says so, and why LoRA's
    start is the lesson's."""
    message = checks.check_lora(learner(LoRA, "MyLoRALinear", start="mirror")).message
    assert "A would learn first" in message and "Hu et al." in message and "Hayou et al., 2024" in message


# --- every mistake is far from the right answer; the checks leave torch as they found it ----------------


@pytest.mark.parametrize(
    ("cases", "table", "rtol"),
    [
        (checks._norm_cases, checks.RMS_NORM_MISTAKES, checks.RTOL),
        (checks._attention_cases, checks.LLAMA_ATTENTION_MISTAKES, checks.RTOL),
        (lambda: [checks._lora_case(*(checks._lora_data()[k] for k in "AB"), "", "")], checks.LORA_MISTAKES,
         checks.LORA_RTOL),
    ],
)  # fmt: skip
def test_each_mistake_moves_the_output_far_beyond_the_tolerance(cases, table, rtol):
    """RTOL's comment: every mistake moves the output by more than 1e-2 of its largest entry in one case at
    least (100 times RTOL), and the mistakes made without one are the right answer within 1e-6."""
    for mistake in table:
        moved = [
            float(np.max(np.abs(wrong - ex.right)) / np.max(np.abs(ex.right)))
            for ex in cases()
            if (wrong := mistake.wrong(ex)) is not None
        ]
        assert max(moved) > 100 * checks.RTOL, (mistake.name, moved)
    for ex in checks._attention_cases():
        assert np.max(np.abs(checks._attention(ex) - ex.right)) < 1e-6 * np.max(np.abs(ex.right))
    assert rtol <= checks.RTOL


def test_the_checks_leave_torchs_state_and_repeat_their_verdicts():
    state, dtype, grad = torch.get_rng_state(), torch.get_default_dtype(), torch.is_grad_enabled()
    verdicts = []
    with torch.no_grad():
        for key, (check, base, name, _, _, mistakes) in CHECKS.items():
            verdicts.append([str(check(learner(base, name, **how))) for how in ({}, mistakes[1])])
            assert torch.is_grad_enabled() is False, key
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_default_dtype() == dtype and torch.is_grad_enabled() == grad
    again = [
        [str(check(learner(base, name, **how))) for how in ({}, mistakes[1])]
        for check, base, name, _, _, mistakes in CHECKS.values()
    ]
    assert verdicts == again
    assert all(v[0].startswith("✔") and v[1].startswith("✘") for v in verdicts)
