"""Lesson 19's self-checks of the GPT in PyTorch: each passes the learner's class or function written
right (in PyTorch, as the lesson's text writes it, not by calling the reference modules), says "No
answer yet" to None, names every mistake when a class or function written the way a learner would
write it makes it, and refuses in one line what is not a class, not an ``nn.Module``, takes other
arguments, does not load lesson 18's weights, raises, or returns the wrong kind of thing. The wrong
classes and functions here are written in PyTorch, independently of the checks' own rows (NumPy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention_lessons.l19_pytorch import checks, modules
from attnlib.decoder.forward_pass import forward_steps

# --- the learner's attention, right or with one mistake (``how``) --------------------------------------


def rotate_pairs(x, start=0, pairing="neighbours"):
    """RoPE as a learner writes it: each pair turned by position · 10000^(−2i/d)."""
    n, d = x.shape[-2:]
    theta = 10000 ** (-torch.arange(0, d, 2) / d)
    angles = torch.arange(start, start + n)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    if pairing == "half":
        a, b = x[..., : d // 2], x[..., d // 2 :]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class LearnerAttention(nn.Module):
    how: dict = {}  # noqa: RUF012 (each subclass sets its own)

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)

    def project(self, layer, x):
        how = self.how.get("weight")
        return (
            x @ layer.weight if how == "matmul" or (how == "matmul qkv" and layer is not self.o) else layer(x)
        )

    def forward(self, x):
        how = self.how
        B, n, d = x.shape
        H = self.n_heads
        d_head = d // H
        q, k, v = self.project(self.q, x), self.project(self.k, x), self.project(self.v, x)
        rope = how.get("rope", "qk")
        if rope == "before split":
            q, k = rotate_pairs(q), rotate_pairs(k)
        if how.get("split") == "view":
            q, k, v = q.view(B, H, n, d_head), k.view(B, H, n, d_head), v.view(B, H, n, d_head)
        else:
            q = q.view(B, n, H, d_head).transpose(1, 2)
            k = k.view(B, n, H, d_head).transpose(1, 2)
            v = v.view(B, n, H, d_head).transpose(1, 2)
        start, pairing = how.get("start", 0), how.get("pairing", "neighbours")
        if rope in ("qk", "q", "qkv"):
            q = rotate_pairs(q, start, pairing)
        if rope in ("qk", "k", "qkv"):
            k = rotate_pairs(k, start, pairing)
        if rope == "qkv":
            v = rotate_pairs(v, start, pairing)
        divide = {"d_head": math.sqrt(d_head), "none": 1, "d_model": math.sqrt(d), "d": d_head}
        scores = q @ k.transpose(-2, -1) / divide[how.get("scale", "d_head")]
        mask = torch.tril(torch.ones(n, n))
        kind = how.get("mask", "tril")
        if kind == "tril":
            scores = scores.masked_fill(mask == 0, float("-inf"))
        elif kind == "triu":
            scores = scores.masked_fill(torch.triu(torch.ones(n, n)) == 0, float("-inf"))
        elif kind == "transposed":
            scores = scores.masked_fill(mask.T == 0, float("-inf"))
        elif kind == "compared the wrong way":
            allowed = torch.arange(n) >= torch.arange(n)[:, None]
            scores = scores.masked_fill(~allowed, float("-inf"))
        elif kind == "inverted":
            scores = scores.masked_fill(mask == 1, float("-inf"))
        elif kind == "added":
            scores = scores + mask
        elif kind == "zero":
            scores = scores.masked_fill(mask == 0, 0.0)
        weights = F.softmax(scores, dim=how.get("softmax", -1))
        if kind == "after":
            weights = weights * mask
        z = weights @ v
        z = z.reshape(B, n, d) if how.get("merge") == "view" else z.transpose(1, 2).reshape(B, n, d)
        if how.get("output", True) is False:
            return z
        out = self.project(self.o, z)
        if how.get("returns") == "pair":
            return out, weights
        if how.get("returns") == "numpy":
            return out.detach().numpy()
        return out


def attention_with(**how) -> type:
    return type("MyAttention", (LearnerAttention,), {"how": how})


class SDPAAttention(LearnerAttention):
    """The same with PyTorch's fused attention, as section 2 shows it."""

    def forward(self, x):
        B, n, d = x.shape
        H = self.n_heads
        q, k, v = (f(x).view(B, n, H, d // H).transpose(1, 2) for f in (self.q, self.k, self.v))
        z = F.scaled_dot_product_attention(rotate_pairs(q), rotate_pairs(k), v, is_causal=True)
        return self.o(z.transpose(1, 2).contiguous().view(B, n, d))


# --- the learner's GPT ------------------------------------------------------------------------------------


class LearnerMLP(nn.Module):
    def __init__(self, d_model, d_mlp, approximate):
        super().__init__()
        self.up, self.down = nn.Linear(d_model, d_mlp), nn.Linear(d_mlp, d_model)
        self.approximate = approximate

    def forward(self, x):
        return self.down(F.gelu(self.up(x), approximate=self.approximate))


class LearnerBlock(nn.Module):
    def __init__(self, config, how):
        super().__init__()
        self.how = how
        self.ln_1, self.ln_2 = nn.LayerNorm(config.d_model), nn.LayerNorm(config.d_model)
        self.attn = attention_with(**how.get("attention", {}))(config.d_model, config.n_heads)
        self.mlp = LearnerMLP(config.d_model, config.d_mlp, how.get("gelu", "tanh"))

    def forward(self, x):
        how = self.how
        if how.get("norm") == "post":
            x = self.ln_1(x + self.attn(x))
            return self.ln_2(x + self.mlp(x))
        a = self.ln_1(x)
        x = self.attn(a) if how.get("residual") in ("none", "attn") else x + self.attn(a)
        m = (
            a
            if how.get("mlp_reads") == "ln_1 before"
            else self.ln_1(x)
            if how.get("mlp_reads")
            else self.ln_2(x)
        )
        return self.mlp(m) if how.get("residual") in ("none", "mlp") else x + self.mlp(m)


class LearnerGPT(nn.Module):
    how: dict = {}  # noqa: RUF012 (each subclass sets its own)

    def __init__(self, config):
        super().__init__()
        how = self.how
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = nn.ModuleList(LearnerBlock(config, how) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.unembed = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.drop = nn.Dropout(how.get("dropout", 0.0))
        if how.get("tied") == "assigned":
            self.unembed.weight = self.embed.weight

    def forward(self, ids):
        how = self.how
        x = self.drop(self.embed(ids))
        if how.get("functional dropout"):
            x = F.dropout(x, 0.1)
        for block in self.blocks:
            x = block(x)
        x = x if how.get("no ln_f") else self.ln_f(x)
        logits = x @ self.embed.weight.T if how.get("tied") == "embed" else self.unembed(x)
        if how.get("float"):
            logits = logits.float()
        if how.get("returns") == "pair":
            return logits, None
        if how.get("returns") == "last":
            return logits[:, [-1], :]
        return logits


def gpt_with(**how) -> type:
    return type("MyGPT", (LearnerGPT,), {"how": how})


# --- the learner's evaluation and training step -----------------------------------------------------------


def evaluate(model, inputs, targets):
    model.eval()
    with torch.no_grad():
        logits = model(inputs)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    return loss.item()


def evaluate_with(*, eval_=True, no_grad=True, item=True, reduction="mean", logits_at=slice(None),
                  targets_from="targets", shift=0, nll=False, softmax=False, flatten="same", perplexity=False,
                  run=True, ids="inputs"):  # fmt: skip
    def my_evaluate(model, inputs, targets):
        if eval_:
            model.eval()
        with torch.set_grad_enabled(not no_grad):
            if not run:
                return 0.0
            logits = model(inputs if ids == "inputs" else targets)
            labels = targets if targets_from == "targets" else inputs
            if shift == 1:
                logits, labels = logits[:, :-1], labels[:, 1:]
            elif shift == -1:
                logits, labels = logits[:, 1:], labels[:, :-1]
            logits, labels = logits[:, logits_at], labels[:, logits_at]
            V = logits.size(-1)
            if softmax:
                logits = logits.softmax(-1)
            flat_labels = labels.t().reshape(-1) if flatten == "transposed" else labels.reshape(-1)
            if nll:
                loss = F.nll_loss(logits.reshape(-1, V), flat_labels, reduction=reduction)
            else:
                loss = F.cross_entropy(logits.reshape(-1, V), flat_labels, reduction=reduction)
            if reduction == "none":
                loss = loss.view(labels.shape).sum(-1).mean()
            if perplexity:
                loss = loss.exp()
        return loss.item() if item else loss

    return my_evaluate


def train_step(model, optimiser, inputs, targets, clip):
    optimiser.zero_grad(set_to_none=True)
    logits = model(inputs)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimiser.step()
    return loss.item()


def train_step_with(*, order=("zero", "forward", "backward", "clip", "step"), clip_how="norm", norm_type=2.0,
                    reduction="mean", returns="loss", no_grad=False):  # fmt: skip
    def my_train_step(model, optimiser, inputs, targets, clip):
        state = {}
        for part in order:
            if part == "zero":
                optimiser.zero_grad()
            elif part == "forward":
                with torch.set_grad_enabled(not no_grad):
                    logits = model(inputs)
                    state["loss"] = F.cross_entropy(
                        logits.view(-1, logits.size(-1)), targets.view(-1), reduction=reduction
                    )
            elif part == "backward":
                state["loss"].backward()
            elif part == "clip" and clip_how == "norm":
                state["norm"] = torch.nn.utils.clip_grad_norm_(model.parameters(), clip, norm_type=norm_type)
            elif part == "clip" and clip_how == "value":
                torch.nn.utils.clip_grad_value_(model.parameters(), clip)
            elif part == "clip" and clip_how == "each":
                for p in model.parameters():
                    torch.nn.utils.clip_grad_norm_(p, clip)
            elif part == "step":
                optimiser.step()
        if returns == "tensor":
            return state["loss"]
        return state["norm"].item() if returns == "norm" else state["loss"].item()

    return my_train_step


# --- the right answers pass, empty ones are no answer yet -------------------------------------------------

CHECKS = {
    "attention": (checks.check_attention, "MyAttention", attention_with()),
    "gpt": (checks.check_gpt, "MyGPT", gpt_with()),
    "evaluate": (checks.check_evaluate, "my_evaluate", evaluate),
    "train_step": (checks.check_train_step, "my_train_step", train_step),
}


@pytest.mark.parametrize("name", CHECKS)
def test_l19_the_right_answer_passes_is_kept_and_none_is_no_answer_yet(name: str) -> None:
    check, called, right = CHECKS[name]
    yours = {}
    result = check(right, keep=yours)
    assert result.passed and result.message.startswith(f"Correct: {called}"), result
    assert yours == {name: right}
    failing = {
        "attention": attention_with(scale="none"),
        "gpt": gpt_with(gelu="none"),
        "evaluate": evaluate_with(item=False),
        "train_step": train_step_with(returns="tensor"),
    }[name]
    assert not check(failing, keep=yours).passed
    assert yours == {}, "a later check that fails takes the answer out"
    assert str(check(None)) == f"✘ No answer yet: {called} is None; replace it with your own computation."
    assert str(check(...)).startswith(f"✘ No answer yet: {called} is ...")


def test_l19_other_right_forms_pass() -> None:
    assert checks.check_attention(SDPAAttention).passed
    assert checks.check_attention(modules.Attention).passed
    assert checks.check_gpt(modules.GPT).passed
    # dropout modules: the check calls model.eval(), as any code comparing logits does
    assert checks.check_gpt(gpt_with(dropout=0.1)).passed

    @torch.no_grad()
    def decorated(model, inputs, targets):
        model.eval()
        logits = model(inputs)
        loss = F.cross_entropy(logits.transpose(1, 2), targets).item()
        model.train()  # nanoGPT's estimate_loss puts training back: allowed, not required
        return loss

    def inference(model, inputs, targets):
        model.eval()
        with torch.inference_mode():
            return F.cross_entropy(model(inputs).flatten(0, 1), targets.flatten()).item()

    assert checks.check_evaluate(decorated).passed
    assert checks.check_evaluate(inference).passed
    # zeroing at the end of the step, or with zeros instead of None, is the same step
    assert checks.check_train_step(
        train_step_with(order=("forward", "backward", "clip", "step", "zero"))
    ).passed

    def zeros(model, optimiser, inputs, targets, clip):
        model.zero_grad(set_to_none=False)
        return train_step(model, optimiser, inputs, targets, clip)

    assert checks.check_train_step(zeros).passed


def test_l19_positions_from_one_give_the_same_model() -> None:
    """RoPE is relative: every position shifted by one changes no score, so no check can tell."""
    assert checks.check_attention(attention_with(start=1)).passed
    assert checks.check_gpt(gpt_with(attention={"start": 1})).passed


def test_l19_the_numpy_rows_without_a_mistake_are_attnlibs() -> None:
    for ex in checks._attention_cases():
        right = checks.attention_numpy(ex.inputs, checks._layer_weights(0), 4)
        assert np.abs(right - ex.right).max() <= 1e-13 * np.abs(ex.right).max()
    for ex in checks._gpt_cases():
        right = forward_steps(checks._config(), checks._params64(), ex.inputs).logits
        assert np.abs(checks.gpt_numpy(ex.inputs) - right).max() <= 1e-13 * np.abs(right).max()


def test_l19_the_float32_bound_holds_the_reference_with_room_and_refuses_float32_in_float64() -> None:
    ex = checks._gpt_cases()[-1]
    model = modules.GPT(checks._config())
    model.load_state_dict(modules.gpt_state_dict(checks._run().params, 4))
    with torch.no_grad():
        logits = model(torch.from_numpy(ex.inputs)).numpy()
    assert np.abs(logits - ex.right).max() <= ex.atol / 10, "a tenth of the bound at most"
    assert ex.atol <= 1e-3 * np.abs(ex.right).max(), "far below what a mistake changes"


# --- every mistake is named -------------------------------------------------------------------------------

ATTENTION_MISTAKES = [
    ({"softmax": -2}, "Softmax over the wrong dim (the queries)"),
    ({"softmax": 1}, "Softmax over the wrong dim (the heads)"),
    ({"mask": "triu"}, "Your mask is the wrong way round"),
    ({"mask": "transposed"}, "Your mask is the wrong way round"),
    ({"mask": "compared the wrong way"}, "Your mask is the wrong way round"),
    ({"mask": "inverted"}, "Your mask hides the past"),
    ({"mask": "none"}, "No causal mask"),
    ({"mask": "added"}, "You added the 0/1 mask"),
    ({"mask": "zero"}, "You filled the future with 0"),
    ({"mask": "after"}, "You masked the weights after the softmax"),
    ({"scale": "none"}, "No 1/√d_head scaling"),
    ({"scale": "d_model"}, "You scaled by 1/√d_model"),
    ({"scale": "d"}, "You divided by d_head, not by its square root"),
    ({"split": "view", "merge": "view"}, "Heads split without the transpose"),
    ({"split": "view"}, "Heads split without the transpose"),
    ({"merge": "view"}, "Heads merged without the transpose back"),
    ({"pairing": "half"}, "RoPE with Llama's rotate-half pairing"),
    ({"rope": "q"}, "RoPE on the queries only"),
    ({"rope": "k"}, "RoPE on the keys only"),
    ({"rope": "qkv"}, "RoPE on the values too"),
    ({"rope": "none"}, "No RoPE"),
    ({"rope": "before split"}, "RoPE before the heads are split"),
    ({"weight": "matmul"}, "Your Linear's weight is used the wrong way round"),
    ({"weight": "matmul qkv"}, "Your Linear's weight is used the wrong way round"),
    ({"output": False}, "You left out the output projection"),
]


@pytest.mark.parametrize(("how", "named"), ATTENTION_MISTAKES, ids=[n for _, n in ATTENTION_MISTAKES])
def test_l19_each_attention_mistake_is_named(how, named) -> None:
    result = checks.check_attention(attention_with(**how))
    assert not result.passed and result.message.startswith(named), result
    assert " Seen on x of shape " in result.message and "\n" not in result.message


def test_l19_every_row_is_made_by_a_learner_class_or_function() -> None:
    """Each row of each table is named for at least one learner's class or function below."""
    for table, cases in (
        (checks.ATTENTION_MISTAKES, ATTENTION_MISTAKES),
        (checks.GPT_MISTAKES[: len(checks._GPT_ROWS)], GPT_MISTAKES),
        (checks.EVALUATE_MISTAKES, EVALUATE_MISTAKES),
        # not clipping at all is told by what optimiser.step() saw (the order test below)
        (
            [m for m in checks.TRAIN_STEP_MISTAKES if not m.name.startswith("You did not clip")],
            TRAIN_MISTAKES,
        ),
    ):
        named = {n for _, n in cases}
        for mistake in table:
            assert any(mistake.name.startswith(n) for n in named), mistake.name


GPT_MISTAKES = [
    ({"gelu": "none"}, "GELU's exact (erf) form instead of its tanh form"),
    ({"norm": "post"}, "Post-norm: your LayerNorm comes after the residual add"),
    ({"norm": "post", "no ln_f": True}, "Post-norm: your LayerNorm comes after the residual add"),
    ({"residual": "none"}, "No residual connections"),
    ({"residual": "attn"}, "No residual connection around the attention"),
    ({"residual": "mlp"}, "No residual connection around the MLP"),
    ({"no ln_f": True}, "The last LayerNorm is missing"),
    ({"mlp_reads": "ln_1"}, "Your MLP reads ln_1's output"),
    ({"mlp_reads": "ln_1 before"}, "Your MLP reads ln_1's output"),
    ({"tied": "embed"}, "Your unembedding is tied to the embedding"),
    ({"attention": {"softmax": -2}}, "In the attention: softmax over the wrong dim"),
    ({"attention": {"pairing": "half"}}, "In the attention: RoPE with Llama's rotate-half pairing"),
    ({"attention": {"mask": "none"}}, "In the attention: no causal mask"),
]


@pytest.mark.parametrize(("how", "named"), GPT_MISTAKES, ids=[n for _, n in GPT_MISTAKES])
def test_l19_each_gpt_mistake_is_named(how, named) -> None:
    result = checks.check_gpt(gpt_with(**how))
    assert not result.passed and result.message.startswith(named), result
    assert " Seen on token ids of shape " in result.message and "\n" not in result.message


def test_l19_a_model_that_computes_in_another_precision_is_told_so() -> None:
    result = checks.check_gpt(gpt_with(float=True))
    assert result.message.startswith("Your model computes in float32: MyGPT's forward returned logits"), (
        result
    )

    class Float32Angles(LearnerAttention):
        def forward(self, x):
            B, n, d = x.shape
            q, k, v = (f(x).view(B, n, 4, d // 4).transpose(1, 2) for f in (self.q, self.k, self.v))
            theta = 10000 ** (-torch.arange(0, d // 4, 2, dtype=torch.float32) / (d // 4))
            angles = torch.arange(n)[:, None] * theta

            def turn(t):
                even, odd = t[..., 0::2], t[..., 1::2]
                c, s = angles.cos(), angles.sin()
                return torch.stack((even * c - odd * s, even * s + odd * c), dim=-1).flatten(-2)

            z = F.scaled_dot_product_attention(turn(q), turn(k), v, is_causal=True)
            return self.o(z.transpose(1, 2).reshape(B, n, d))

    result = checks.check_attention(Float32Angles)
    assert result.message.startswith("Nearly, on x of shape (2, 16, 128)"), result
    assert "within float32's rounding of attnlib's but not float64's" in result.message


def test_l19_a_dropout_left_on_in_eval_mode_is_refused() -> None:
    result = checks.check_gpt(gpt_with(**{"functional dropout": True}))
    assert result.message.startswith(
        "Your MyGPT's forward gives different logits on two calls with the same input"
    ), result
    assert "training=self.training" in result.message


def test_l19_what_the_forward_returns_and_how_it_loads() -> None:
    said = {
        "pair": checks.check_attention(attention_with(returns="pair")),
        "numpy": checks.check_attention(attention_with(returns="numpy")),
        "gpt pair": checks.check_gpt(gpt_with(returns="pair")),
        "last": checks.check_gpt(gpt_with(returns="last")),
        "tied": checks.check_gpt(gpt_with(tied="assigned")),
    }
    assert said["pair"].message.startswith(
        "Return the output alone: MyAttention's forward returned a tuple"
    ), said
    assert "nn.MultiheadAttention's (output, weights)" in said["pair"].message
    assert said["numpy"].message.startswith("Not a tensor: MyAttention's forward returned a NumPy array")
    assert "(logits, loss) when given targets" in said["gpt pair"].message
    assert said["last"].message.startswith(
        "Wrong shape: MyGPT's forward returned logits of shape (2, 1, 512) on token ids of shape (2, 48) "
        "(B, n), where attnlib's logits have shape (2, 48, 512)."
    )
    assert "Return every position's logits" in said["last"].message
    assert said["tied"].message.startswith("Your unembed.weight shares its memory with embed.weight (tied")

    class Biased(LearnerAttention):
        def __init__(self, d_model, n_heads):
            super().__init__(d_model, n_heads)
            self.q = nn.Linear(d_model, d_model)

    result = checks.check_attention(Biased)
    assert result.message == (
        "MyAttention's parameters do not load lesson 18's weights: unexpected q.bias (the attention's "
        "nn.Linear layers have no bias: bias=False). The lesson names them self.q, self.k, self.v, self.o "
        "= nn.Linear(d_model, d_model, bias=False)."
    )

    class Renamed(LearnerGPT):
        def __init__(self, config):
            super().__init__(config)
            self.head = self.unembed
            del self.unembed

    result = checks.check_gpt(Renamed)
    assert result.message.startswith(
        "MyGPT's parameters do not load lesson 18's weights: missing unembed.weight; unexpected head.weight."
    ), result

    class Swapped(LearnerGPT):
        def __init__(self, config):
            super().__init__(config)
            self.blocks[0].mlp.up = nn.Linear(config.d_mlp, config.d_model)

    result = checks.check_gpt(Swapped)
    assert result.message.startswith(
        "MyGPT's blocks.0.mlp.up.weight has shape (128, 512); lesson 18's is (512, 128): nn.Linear("
    ), result

    class WithBuffer(LearnerAttention):  # a mask kept as a buffer is the learner's own: it loads
        def __init__(self, d_model, n_heads):
            super().__init__(d_model, n_heads)
            self.register_buffer("mask", torch.tril(torch.ones(128, 128)))

    assert checks.check_attention(WithBuffer).passed


def test_l19_bad_classes_are_told_in_one_line() -> None:
    def function(d_model, n_heads):
        return None

    class Plain:
        def __init__(self, d_model, n_heads):
            pass

    class Config(LearnerAttention):
        def __init__(self, config):
            super().__init__(config.d_model, config.n_heads)

    class NoSuper(nn.Module):
        def __init__(self, d_model, n_heads):
            self.q = nn.Linear(d_model, d_model, bias=False)

    class Raising(LearnerAttention):
        def forward(self, x):
            B, n, d = x.shape
            return self.o(self.q(x).transpose(1, 2).view(B, n, d))

    said = {
        "function": checks.check_attention(function),
        "plain": checks.check_attention(Plain),
        "instance": checks.check_attention(attention_with()(128, 4)),
        "config": checks.check_attention(Config),
        "no super": checks.check_attention(NoSuper),
        "raises": checks.check_attention(Raising),
        "gpt signature": checks.check_gpt(attention_with()),
    }
    assert said["function"].message == (
        "Not a class: MyAttention is a function; define it with `class MyAttention(nn.Module):`, its "
        "__init__(self, d_model, n_heads) and forward(self, x)."
    )
    assert said["plain"].message.startswith("Not an nn.Module: MyAttention is a class but not a subclass")
    assert said["instance"].message.startswith(
        "Pass the class itself, not a model: MyAttention is a MyAttention already made"
    )
    assert said["config"].message.startswith(
        "Wrong arguments: the lesson builds MyAttention(d_model, n_heads); yours is MyAttention(config)"
    )
    assert said["no super"].message.startswith("Your MyAttention(d_model, n_heads) raised AttributeError")
    assert said["no super"].message.endswith("call super().__init__() first in __init__.")
    assert said["raises"].message.startswith(
        "Your MyAttention's forward raised RuntimeError on x of shape (2, 16, 128) (B, n, d_model): view size"
    )
    assert "use .reshape(...), or .contiguous().view(...)" in said["raises"].message
    assert said["gpt signature"].message.startswith(
        "Wrong arguments: the lesson builds MyGPT(config); yours is MyGPT(d_model, n_heads)"
    )
    assert all("\n" not in r.message and not r.passed for r in said.values())


# --- evaluation ---------------------------------------------------------------------------------------------

EVALUATE_MISTAKES = [
    ({"reduction": "sum"}, "You summed the losses instead of averaging them"),
    ({"reduction": "none"}, "You summed the losses over the positions"),
    ({"shift": 1}, "You shifted the targets again"),
    ({"shift": -1}, "You shifted the targets the wrong way"),
    ({"shift": 1, "targets_from": "inputs"}, "You made the targets from the inputs"),
    ({"targets_from": "inputs"}, "You used the inputs as the targets"),
    ({"ids": "targets"}, "You ran the model on the targets"),
    ({"logits_at": slice(-1, None)}, "You took the loss of the last position only"),
    ({"nll": True}, "F.nll_loss on the logits: no log-softmax"),
    ({"softmax": True}, "You applied softmax before F.cross_entropy"),
    ({"flatten": "transposed"}, "Your logits and targets are flattened in different orders"),
    ({"perplexity": True}, "You returned the perplexity"),
]


@pytest.mark.parametrize(("how", "named"), EVALUATE_MISTAKES, ids=[n for _, n in EVALUATE_MISTAKES])
def test_l19_each_evaluation_mistake_is_named(how, named) -> None:
    result = checks.check_evaluate(evaluate_with(**how))
    assert not result.passed and result.message.startswith(named), result
    assert " Seen on inputs and targets of shape (4, 64)" in result.message


def test_l19_an_evaluation_in_training_mode_or_with_a_graph_is_refused() -> None:
    said = {
        "train": checks.check_evaluate(evaluate_with(eval_=False)),
        "graph": checks.check_evaluate(evaluate_with(no_grad=False)),
        "tensor": checks.check_evaluate(evaluate_with(item=False)),
        "never": checks.check_evaluate(evaluate_with(run=False)),
    }
    assert said["train"].message.startswith(
        "Your model was left in training mode (model.train()): dropout dropped 20%"
    )
    assert "call model.eval()" in said["train"].message
    assert said["graph"].message.startswith("Wrap the evaluation in torch.no_grad()")
    assert said["tensor"].message.startswith("Not a float: my_evaluate returned a tensor; return loss.item()")
    assert said["never"].message.startswith("Your my_evaluate never ran the model")

    def three_d(model, inputs, targets):
        model.eval()
        with torch.no_grad():
            return F.cross_entropy(model(inputs), targets).item()

    result = checks.check_evaluate(three_d)
    assert result.message.startswith("Your my_evaluate raised RuntimeError: Expected target size"), result
    assert "logits.view(-1, logits.size(-1)) and targets.view(-1)" in result.message
    result = checks.check_evaluate(lambda model, batch: 0.0)
    assert result.message.startswith("Wrong arguments: the lesson calls my_evaluate(model, inputs, targets)")


# --- the training step --------------------------------------------------------------------------------------

TRAIN_MISTAKES = [
    ({"order": ("forward", "backward", "clip", "step")}, "You did not zero the gradients"),
    ({"norm_type": 1.0}, "You clipped with the L1 norm"),
    ({"norm_type": math.inf}, "You clipped with the largest |gradient|"),
    ({"clip_how": "value"}, "You clipped each gradient's values"),
    ({"clip_how": "each"}, "You clipped each parameter's gradient by its own norm"),
    ({"reduction": "sum"}, "You summed the loss instead of averaging it"),
    ({"returns": "norm"}, "You returned the gradients' norm, not the loss"),
]


@pytest.mark.parametrize(("how", "named"), TRAIN_MISTAKES, ids=[n for _, n in TRAIN_MISTAKES])
def test_l19_each_training_step_mistake_is_named(how, named) -> None:
    result = checks.check_train_step(train_step_with(**how))
    assert not result.passed and result.message.startswith(named), result
    assert result.message.endswith(
        "Seen on two steps from lesson 18's weights, each on 4 windows of 64 tokens, clip 0.1."
    )


def test_l19_the_order_of_a_training_step_is_seen_by_the_optimiser() -> None:
    said = {
        "after": train_step_with(order=("zero", "forward", "backward", "step", "clip")),
        "no clip": train_step_with(order=("zero", "forward", "backward", "step")),
        "step first": train_step_with(order=("zero", "forward", "step", "backward", "clip")),
        "zeroed between": train_step_with(order=("forward", "backward", "clip", "zero", "step")),
        "no step": train_step_with(order=("zero", "forward", "backward", "clip")),
        "two steps": train_step_with(order=("zero", "forward", "backward", "clip", "step", "step")),
        "tensor": train_step_with(returns="tensor"),
        "no grad": train_step_with(no_grad=True),
    }
    said = {name: checks.check_train_step(step).message for name, step in said.items()}
    assert said["after"].startswith("You clipped after optimiser.step()"), said
    assert said["no clip"].startswith("Your optimiser.step() used the gradients unclipped"), said
    assert said["step first"].startswith(
        "Your optimiser.step() found no gradients: call loss.backward() before"
    )
    assert said["zeroed between"] == said["step first"]
    assert said["no step"].startswith("Your optimiser.step() never ran")
    assert said["two steps"].startswith("Your optimiser.step() ran 2 times in one training step")
    assert said["tensor"].startswith("Not a float: my_train_step returned a tensor; return loss.item()")
    assert said["no grad"].startswith("Your my_train_step raised RuntimeError: element 0 of tensors")
    assert "no torch.no_grad() around the training step" in said["no grad"]


def test_l19_the_checks_leave_torch_as_they_found_it() -> None:
    torch.manual_seed(5)
    before = (torch.get_default_dtype(), torch.get_num_threads(), torch.is_grad_enabled(), torch.rand(3))
    torch.manual_seed(5)
    for check, _, right in CHECKS.values():
        check(right)
    check_attention_failing = checks.check_attention(attention_with(returns="numpy"))
    assert not check_attention_failing.passed
    after = (torch.get_default_dtype(), torch.get_num_threads(), torch.is_grad_enabled(), torch.rand(3))
    assert before[:3] == after[:3]
    assert torch.equal(before[3], after[3]), "torch's random stream is the learner's: untouched"
