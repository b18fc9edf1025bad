"""attnlib.decoder: gradients against PyTorch autograd and finite differences, generation with and
without the cache, ablation, training, and the errors a learner meets."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from attnlib.counting import kv_cache_bytes
from attnlib.decoder import (
    MAX_NEW_TOKENS,
    DecoderConfig,
    KVCache,
    check_parameters,
    forward,
    generate,
    generate_with_trace,
    init_parameters,
    loss_and_gradients,
    next_token_losses,
    parameter_shapes,
    pool_kv_heads,
    train,
    visible_keys,
)
from attnlib.decoder.block import block

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

ATTENTION_ONLY = DecoderConfig(vocab_size=7, n_ctx=6, d_model=8, n_heads=2, n_layers=2)
CONFIGS = {
    "attention-only": ATTENTION_ONLY,
    "mlp": DecoderConfig(vocab_size=6, n_ctx=5, d_model=6, n_heads=3, n_layers=2, d_mlp=10),
    "layer-norm": DecoderConfig(vocab_size=5, n_ctx=7, d_model=8, n_heads=2, n_layers=2, layer_norm=True),
    "mlp+layer-norm+gqa": DecoderConfig(
        vocab_size=9, n_ctx=6, d_model=8, n_heads=4, n_layers=2, d_mlp=12, layer_norm=True, n_kv_heads=2
    ),
    "multi-query": DecoderConfig(vocab_size=6, n_ctx=6, d_model=6, n_heads=3, n_layers=1, n_kv_heads=1),
    "rope+mlp+layer-norm+gqa": DecoderConfig(
        vocab_size=8,
        n_ctx=7,
        d_model=16,
        n_heads=4,
        n_layers=2,
        d_mlp=10,
        layer_norm=True,
        n_kv_heads=2,
        positions="rope",
    ),
    "positions-in-attention": DecoderConfig(
        vocab_size=7,
        n_ctx=6,
        d_model=8,
        n_heads=2,
        n_layers=2,
        d_mlp=6,
        layer_norm=True,
        positions="attention",
    ),
}


def random_setup(config, seed, batch=3, n=None):
    """Parameters with the gains and biases moved off 1 and 0 (so their gradients are tested) and tokens."""
    rng = np.random.default_rng(seed)
    params = init_parameters(config, seed)
    for name, value in params.items():
        if name.endswith((".gain", ".bias")) or ".b_" in name:
            params[name] = value + 0.3 * rng.normal(size=value.shape)
    tokens = rng.integers(0, config.vocab_size, size=(batch, n or config.n_ctx))
    return params, tokens


def torch_loss(torch, config, params, tokens):
    """The same decoder written with torch's modules' functions; returns the loss and the tensors."""
    F = torch.nn.functional
    W = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    t = torch.from_numpy(tokens)
    B, n = tokens.shape
    H, Hkv, dh, d = config.n_heads, config.kv_heads, config.d_head, config.d_model

    def norm(x, name):
        return F.layer_norm(x, (d,), W[name + ".gain"], W[name + ".bias"], eps=1e-5)

    in_attention = config.positions == "attention"
    x = W["embed"][t] if config.positions != "residual" else W["embed"][t] + W["pos_embed"][:n]
    # RoPE, RoFormer's interleaved pairs (x[2i], x[2i+1]) turned by position · 10000^(−2i/d_head)
    angles = torch.arange(n, dtype=torch.float64)[:, None] * 10000.0 ** (
        -torch.arange(0, dh, 2, dtype=torch.float64) / dh
    )
    cos, sin = torch.cos(angles), torch.sin(angles)

    def rotate(x):
        if config.positions != "rope":
            return x
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)

    for layer in range(config.n_layers):
        p = f"layer{layer}."
        a = norm(x, p + "ln_attn") if config.layer_norm else x
        qk_in = a + W["pos_embed"][:n] if in_attention else a
        q = rotate((qk_in @ W[p + "W_q"]).view(B, n, H, dh).transpose(1, 2))
        k = rotate((qk_in @ W[p + "W_k"]).view(B, n, Hkv, dh).transpose(1, 2))
        v = (a @ W[p + "W_v"]).view(B, n, Hkv, dh).transpose(1, 2)
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=Hkv != H)
        x = x + z.transpose(1, 2).reshape(B, n, H * dh) @ W[p + "W_o"]
        if config.d_mlp:
            m = norm(x, p + "ln_mlp") if config.layer_norm else x
            x = (
                x
                + F.gelu(m @ W[p + "W_in"] + W[p + "b_in"], approximate="tanh") @ W[p + "W_out"]
                + W[p + "b_out"]
            )
    if config.layer_norm:
        x = norm(x, "ln_final")
    logits = x @ W["unembed"]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, config.vocab_size), t[:, 1:].reshape(-1))
    return loss, logits, W


@pytest.mark.parametrize("kind", list(CONFIGS))
@pytest.mark.parametrize("seed", range(3))
def test_loss_and_gradients_match_pytorch_autograd(kind, seed):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    config = CONFIGS[kind]
    params, tokens = random_setup(config, seed, n=config.n_ctx - seed % 2)
    loss, grads = loss_and_gradients(config, params, tokens)
    reference, logits, W = torch_loss(torch, config, params, tokens)
    reference.backward()
    assert loss == pytest.approx(reference.item(), abs=1e-12)
    np.testing.assert_allclose(forward(config, params, tokens).logits, logits.detach().numpy(), atol=1e-12)
    assert set(grads) == set(params)
    for name, grad in grads.items():
        assert grad.dtype == np.float64 and grad.shape == params[name].shape, name
        np.testing.assert_allclose(grad, W[name].grad.numpy(), atol=1e-10, rtol=0, err_msg=f"{kind}: {name}")


@pytest.mark.parametrize(
    "kind", ["attention-only", "mlp+layer-norm+gqa", "positions-in-attention", "rope+mlp+layer-norm+gqa"]
)
def test_gradients_match_central_finite_differences(kind):
    config = CONFIGS[kind]
    params, tokens = random_setup(config, 7, batch=2, n=5)
    _, grads = loss_and_gradients(config, params, tokens)
    rng = np.random.default_rng(0)
    eps = 1e-6
    for name, value in params.items():
        for _ in range(4):  # four entries of every parameter
            index = tuple(int(rng.integers(0, size)) for size in value.shape)
            shifted = []
            for sign in (1, -1):
                moved = {**params, name: value.copy()}
                moved[name][index] += sign * eps
                shifted.append(loss_and_gradients(config, moved, tokens)[0])
            numeric = (shifted[0] - shifted[1]) / (2 * eps)
            assert grads[name][index] == pytest.approx(numeric, abs=1e-8), f"{name}{index}"


def test_unused_rows_get_zero_gradient():
    params, tokens = random_setup(ATTENTION_ONLY, 1, n=4)
    tokens[:] = np.minimum(tokens, 5)  # token 6 never appears
    _, grads = loss_and_gradients(ATTENTION_ONLY, params, tokens)
    assert not grads["embed"][6].any()
    assert not grads["pos_embed"][4:].any()  # positions 4 and 5 are not used by 4-token sequences
    assert grads["pos_embed"][:4].any()


def test_parameter_names_and_shapes():
    config = CONFIGS["mlp+layer-norm+gqa"]
    shapes = parameter_shapes(config)
    assert shapes["embed"] == (9, 8) and shapes["pos_embed"] == (6, 8) and shapes["unembed"] == (8, 9)
    assert (
        shapes["layer1.W_q"] == (8, 8) and shapes["layer1.W_k"] == (8, 4) and shapes["layer1.W_v"] == (8, 4)
    )
    assert (
        shapes["layer0.W_o"] == (8, 8) and shapes["layer0.W_in"] == (8, 12) and shapes["layer0.b_out"] == (8,)
    )
    assert {"layer0.ln_attn.gain", "layer1.ln_mlp.bias", "ln_final.gain"} <= set(shapes)
    assert set(parameter_shapes(ATTENTION_ONLY)) == {
        "embed",
        "pos_embed",
        "unembed",
        *(f"layer{layer}.W_{m}" for layer in range(2) for m in "qkvo"),
    }
    params = init_parameters(config, seed=3)
    assert {name: p.shape for name, p in params.items()} == shapes
    assert all(p.dtype == np.float64 for p in params.values())
    np.testing.assert_array_equal(params["ln_final.gain"], 1.0)
    np.testing.assert_array_equal(params["layer0.b_in"], 0.0)
    np.testing.assert_array_equal(init_parameters(config, seed=3)["layer1.W_q"], params["layer1.W_q"])
    assert not np.array_equal(init_parameters(config, seed=4)["layer1.W_q"], params["layer1.W_q"])


def test_forward_outputs_fit_together():
    config = CONFIGS["mlp"]
    params, tokens = random_setup(config, 2)
    out = forward(config, params, tokens)
    B, n = tokens.shape
    assert out.logits.shape == (B, n, config.vocab_size)
    assert out.weights.shape == (config.n_layers, B, config.n_heads, n, n)
    assert out.residuals.shape == (config.n_layers + 1, B, n, config.d_model)
    assert out.head_outputs.shape == (config.n_layers, B, config.n_heads, n, config.d_model)
    np.testing.assert_allclose(out.weights.sum(axis=-1), 1.0)
    assert not np.triu(out.weights, k=1).any()  # causal
    np.testing.assert_allclose(out.residuals[0], params["embed"][tokens] + params["pos_embed"][:n])
    np.testing.assert_allclose(out.logits, out.residuals[-1] @ params["unembed"])
    # a single sequence is a batch of one, and each sequence is computed on its own
    single = forward(config, params, tokens[1])
    np.testing.assert_allclose(single.logits[0], out.logits[1], atol=1e-12)
    # the attention-only model's layer adds exactly the sum of its heads' writes
    params, tokens = random_setup(ATTENTION_ONLY, 2)
    out = forward(ATTENTION_ONLY, params, tokens)
    np.testing.assert_allclose(
        out.residuals[1] - out.residuals[0], out.head_outputs[0].sum(axis=1), atol=1e-12
    )


@pytest.mark.parametrize("kind", ["mlp+layer-norm+gqa", "positions-in-attention"])
def test_block_is_one_layer_of_the_forward_pass(kind):
    """block() run layer after layer on the embedding gives forward's residual stream, bit for bit."""
    config = CONFIGS[kind]
    params, tokens = random_setup(config, 5)
    out = forward(config, params, tokens)
    positions = np.arange(tokens.shape[1])
    x = out.residuals[0]
    for layer in range(config.n_layers):
        x, steps = block(config, params, layer, x, visible_keys(positions, positions), positions=positions)
        np.testing.assert_array_equal(x, out.residuals[layer + 1])
        np.testing.assert_array_equal(steps.steps.weights, out.weights[layer])


def test_next_token_losses_average_to_the_loss():
    config = CONFIGS["mlp"]
    params, tokens = random_setup(config, 3)
    losses = next_token_losses(config, params, tokens)
    assert losses.shape == (tokens.shape[0], tokens.shape[1] - 1) and (losses > 0).all()
    assert losses.mean() == pytest.approx(loss_and_gradients(config, params, tokens)[0], rel=1e-12)
    logits = forward(config, params, tokens).logits
    log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    assert losses[1, 2] == pytest.approx(-log_p[1, 2, tokens[1, 3]])
    ablated = next_token_losses(config, params, tokens, ablate=[(0, 1)])
    assert not np.allclose(ablated, losses)


def test_positions_in_attention_stay_out_of_the_residual_stream():
    config = CONFIGS["positions-in-attention"]
    params, tokens = random_setup(config, 4)
    out = forward(config, params, tokens)
    np.testing.assert_array_equal(out.residuals[0], params["embed"][tokens])
    moved = {**params, "pos_embed": params["pos_embed"] + 1.0}
    assert not np.allclose(forward(config, moved, tokens).weights, out.weights)  # they steer the heads


def test_ablating_a_head_removes_exactly_its_write():
    params, tokens = random_setup(ATTENTION_ONLY, 4)
    full = forward(ATTENTION_ONLY, params, tokens)
    cut = forward(ATTENTION_ONLY, params, tokens, ablate=[(1, 0)])
    assert not cut.head_outputs[1, :, 0].any()
    np.testing.assert_allclose(cut.residuals[1], full.residuals[1])  # layer 0 untouched
    np.testing.assert_allclose(cut.residuals[2], full.residuals[2] - full.head_outputs[1, :, 0], atol=1e-12)
    # zeroing that head's rows of W_o is the same ablation
    zeroed = {**params, "layer1.W_o": params["layer1.W_o"].copy()}
    zeroed["layer1.W_o"][: ATTENTION_ONLY.d_head] = 0.0
    np.testing.assert_allclose(forward(ATTENTION_ONLY, zeroed, tokens).logits, cut.logits, atol=1e-12)
    assert not np.allclose(cut.logits, full.logits)


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_generate_with_and_without_the_cache_agree(kind):
    config = CONFIGS[kind]
    params, tokens = random_setup(config, 5)
    prompt = tokens[0, :2]
    n_new = config.n_ctx - 2
    greedy = generate(config, params, prompt, n_new)
    assert greedy.shape == (config.n_ctx,) and greedy.dtype == np.int64
    np.testing.assert_array_equal(greedy[:2], prompt)
    np.testing.assert_array_equal(greedy, generate(config, params, prompt, n_new, use_cache=False))
    # greedy: each new token is the argmax of the model's logits on what came before
    logits = forward(config, params, greedy).logits[0]
    np.testing.assert_array_equal(greedy[2:], logits[1:-1].argmax(axis=-1))
    sampled = generate(config, params, tokens[:, :1], n_new + 1, temperature=1.5, seed=9)
    assert sampled.shape == (tokens.shape[0], config.n_ctx)
    np.testing.assert_array_equal(
        sampled, generate(config, params, tokens[:, :1], n_new + 1, temperature=1.5, seed=9, use_cache=False)
    )
    assert not np.array_equal(
        sampled, generate(config, params, tokens[:, :1], n_new + 1, temperature=1.5, seed=10)
    )


def test_sampling_follows_the_softmax():
    config = DecoderConfig(vocab_size=3, n_ctx=2, d_model=2, n_heads=1, n_layers=1)
    params = {name: np.zeros(shape) for name, shape in parameter_shapes(config).items()}
    params["embed"] = np.eye(3, 2)  # token 0 → (1, 0)
    params["unembed"] = np.array([[0.0, math.log(2.0), math.log(5.0)], [0.0, 0.0, 0.0]])
    logits = np.log([1.0, 2.0, 5.0])
    for temperature in (1.0, 0.5, 2.0, 3.0):  # T ≠ 1: dividing by T, not multiplying, is checked
        drawn = generate(config, params, np.zeros((4000, 1), dtype=int), 1, temperature=temperature, seed=1)
        expected = np.exp(logits / temperature) / np.exp(logits / temperature).sum()
        # 4000 draws: each frequency within 4.5 standard deviations (at most 0.035) of its probability
        np.testing.assert_allclose(np.bincount(drawn[:, 1], minlength=3) / 4000, expected, atol=0.035)
    assert (generate(config, params, [0], 1)[1]) == 2


@pytest.mark.parametrize("temperature", [1e-3, 1e-300, 1e-308, 1e-320, 5e-324])
def test_a_tiny_temperature_is_greedy_without_warnings(temperature):
    """(logits − max) / T: the largest logit never becomes +inf, the others −inf (exp → 0)."""
    config = DecoderConfig(vocab_size=3, n_ctx=2, d_model=2, n_heads=1, n_layers=1)
    params = {name: np.zeros(shape) for name, shape in parameter_shapes(config).items()}
    params["embed"] = np.eye(3, 2)
    params["unembed"] = np.array([[0.0, 3.0, 1.0], [0.0, 0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = generate(config, params, np.zeros((50, 1), dtype=int), 1, temperature=temperature)
    np.testing.assert_array_equal(drawn[:, 1], 1)
    params["unembed"] = np.array([[5.0, 5.0, 1.0], [0.0, 0.0, 0.0]])  # a tie: drawn evenly, as T → 0
    tied = generate(config, params, np.zeros((400, 1), dtype=int), 1, temperature=temperature)[:, 1]
    assert set(tied.tolist()) == {0, 1} and 120 < (tied == 0).sum() < 280


def test_n_new_is_limited_for_rope_models():
    config = DecoderConfig(vocab_size=3, n_ctx=4, d_model=4, n_heads=1, n_layers=1, positions="rope")
    params = init_parameters(config, seed=0)
    with pytest.raises(ValueError, match="n_new=100001 is more than MAX_NEW_TOKENS=100,000"):
        generate(config, params, [0], MAX_NEW_TOKENS + 1)
    with pytest.raises(ValueError, match=r"n_new=\d+ is more than MAX_NEW_TOKENS"):
        generate(config, params, [0], 10**30, window=2)
    assert generate(config, params, [0], 9).shape == (10,)  # past n_ctx: RoPE runs on


def test_kv_cache_grows_one_row_per_token():
    config = CONFIGS["mlp+layer-norm+gqa"]
    cache = KVCache(config.n_layers)
    assert cache.length == 0 and cache.nbytes == 0
    K = np.ones((1, config.kv_heads, 3, config.d_head))
    np.testing.assert_array_equal(cache.add_tokens(3), [0, 1, 2])
    keys, values = cache.append(0, K, 2 * K)
    assert cache.length == 3 and keys.shape == (1, 2, 3, 2)
    np.testing.assert_array_equal(cache.add_tokens(1), [3])
    keys, values = cache.append(0, K[:, :, :1], 2 * K[:, :, :1])
    assert cache.length == 4 and values.shape == (1, 2, 4, 2)
    assert cache.nbytes == 2 * 4 * 2 * 2 * 8  # layer 0 only so far
    cache.evict()  # no window: it keeps everything
    assert cache.length == 4


def test_a_rolling_cache_keeps_the_sinks_and_the_last_window_minus_one():
    cache = KVCache(2, window=4, sinks=2)
    for step in range(9):
        cache.add_tokens(1)
        for layer in range(2):
            cache.append(layer, np.full((1, 1, 1, 2), float(step)), np.zeros((1, 1, 1, 2)))
        assert cache.length == min(step + 1, 2 + 4)  # while the new token attends: sinks + window
        cache.evict()
        assert cache.length == min(step + 1, 2 + 4 - 1)
    np.testing.assert_array_equal(cache.positions, [0, 1, 6, 7, 8])
    np.testing.assert_array_equal(cache.keys[1][0, 0, :, 0], [0, 1, 6, 7, 8])
    assert cache.seen == 9 and cache.nbytes == 2 * 2 * 1 * 2 * 8 * 5


def test_visible_keys_is_the_window_and_the_sinks():
    seen = visible_keys(np.arange(8), np.arange(8), window=3, sinks=2)
    for i in range(8):
        assert set(np.flatnonzero(seen[i])) == ({0, 1} | set(range(i - 2, i + 1))) & set(range(i + 1))
    np.testing.assert_array_equal(visible_keys(np.arange(5), np.arange(5)), np.tri(5, dtype=bool))
    np.testing.assert_array_equal(visible_keys([4], [0, 3, 4], window=2), [[False, True, True]])
    with pytest.raises(ValueError, match="sinks=2 needs a window"):
        visible_keys([1], [0], sinks=2)
    with pytest.raises(ValueError, match="window must be at least 1"):
        visible_keys([1], [0], window=0)


@pytest.mark.parametrize("kind", ["rope+mlp+layer-norm+gqa", "mlp+layer-norm+gqa", "positions-in-attention"])
@pytest.mark.parametrize(("window", "sinks"), [(None, 0), (3, 0), (3, 1), (4, 2)])
def test_windowed_generation_with_and_without_the_cache_agree(kind, window, sinks):
    config = CONFIGS[kind]
    params, tokens = random_setup(config, 6, batch=2)
    rope = config.positions == "rope"
    n_new = 3 * config.n_ctx if rope else config.n_ctx - 3  # RoPE with a window: to any length
    options = {"window": window, "sinks": sinks, "temperature": 1.0, "seed": 4}
    cached, trace = generate_with_trace(config, params, tokens[:, :3], n_new, **options)
    recomputed, again = generate_with_trace(config, params, tokens[:, :3], n_new, use_cache=False, **options)
    np.testing.assert_array_equal(generate(config, params, tokens[:, :3], n_new, **options), cached)
    np.testing.assert_array_equal(cached, recomputed)
    np.testing.assert_allclose(trace.logits, again.logits, atol=1e-12)
    assert len(trace.weights) == len(trace.key_positions) == n_new
    for step, (keys, weights, other) in enumerate(
        zip(trace.key_positions, trace.weights, again.weights, strict=True)
    ):
        i = 2 + step  # the query's position
        expected = np.flatnonzero(visible_keys([i], np.arange(i + 1), window=window, sinks=sinks)[0])
        np.testing.assert_array_equal(keys, expected)
        np.testing.assert_array_equal(again.key_positions[step], expected)
        assert weights.shape == (config.n_layers, 2, config.n_heads, len(expected))
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
        np.testing.assert_allclose(weights, other, atol=1e-12)
    longest = 2 + n_new if window is None else min(2 + n_new, sinks + window)
    assert trace.cache_lengths.max() == longest
    # the cache's bytes: 2 (K and V) · layers · key/value heads · d_head · 8 bytes · tokens · batch
    shape = config.shape
    formula = [
        kv_cache_bytes(shape, i + 1, bytes_per_number=8, batch=2, window=window, sinks=sinks)
        for i in range(2, 2 + n_new)
    ]
    np.testing.assert_array_equal(trace.cache_bytes, formula)
    assert again.cache_bytes is None
    # the whole sequence with the same window and sinks gives each step's logits
    logits = forward(config, params, cached, window=window, sinks=sinks).logits
    np.testing.assert_allclose(logits[:, 2:-1].swapaxes(0, 1), trace.logits, atol=1e-10)


def test_the_cache_bytes_follow_the_formula():
    config = CONFIGS["rope+mlp+layer-norm+gqa"]
    cache = KVCache(config.n_layers, window=4, sinks=1)
    for step in range(10):
        cache.add_tokens(1)
        for layer in range(config.n_layers):
            new = np.zeros((1, config.kv_heads, 1, config.d_head))  # float64, as the decoder's
            cache.append(layer, new, new)
        per_token = 2 * config.n_layers * config.kv_heads * config.d_head * 8
        assert cache.nbytes == per_token * cache.length
        assert cache.nbytes == kv_cache_bytes(config.shape, step + 1, bytes_per_number=8, window=4, sinks=1)
        cache.evict()
    assert cache.length == 1 + 4 - 1


def test_rope_runs_past_the_trained_context_and_learned_positions_do_not():
    config = CONFIGS["rope+mlp+layer-norm+gqa"]
    params, tokens = random_setup(config, 2, batch=1, n=3 * config.n_ctx)
    out = forward(config, params, tokens)
    assert out.logits.shape == (1, 3 * config.n_ctx, config.vocab_size)
    # a score depends on the distance only: the same tokens later give the same logits (two layers
    # with a window of 4 read 2 · 3 tokens back, so positions 16 and 20 see the same tokens)
    repeated = np.concatenate([tokens[:, :5], np.tile(tokens[:, :4], 5)], axis=1)
    logits = forward(config, params, repeated, window=4).logits
    np.testing.assert_allclose(logits[:, 16], logits[:, 20], atol=1e-10)
    assert not np.allclose(logits[:, 16], forward(config, params, repeated).logits[:, 16])
    assert "pos_embed" not in params
    with pytest.raises(ValueError, match="more than the model's n_ctx"):
        loss_and_gradients(config, params, tokens)  # training stays within n_ctx
    learned = CONFIGS["mlp+layer-norm+gqa"]
    learned_params, _ = random_setup(learned, 2)
    with pytest.raises(ValueError, match="more than the model's n_ctx"):
        forward(learned, learned_params, np.zeros((1, learned.n_ctx + 1), dtype=int), window=3)


def test_with_sinks_a_long_window_pass_equals_the_rolling_cache_and_differs_from_without():
    config = CONFIGS["rope+mlp+layer-norm+gqa"]
    params, tokens = random_setup(config, 3, batch=1, n=4 * config.n_ctx)
    plain = next_token_losses(config, params, tokens, window=4)
    sinks = next_token_losses(config, params, tokens, window=4, sinks=2)
    dense = next_token_losses(config, params, tokens)
    assert plain.shape == sinks.shape == dense.shape == (1, 4 * config.n_ctx - 1)
    np.testing.assert_allclose(plain[:, :4], dense[:, :4])  # the first 4 queries see everything anyway
    np.testing.assert_allclose(sinks[:, :6], dense[:, :6])
    assert not np.allclose(sinks[:, 6:], plain[:, 6:])


def test_pooling_key_value_heads():
    config = CONFIGS["rope+mlp+layer-norm+gqa"].__class__(
        **{**vars(CONFIGS["rope+mlp+layer-norm+gqa"]), "n_kv_heads": None}
    )
    params, tokens = random_setup(config, 8)
    same_config, same = pool_kv_heads(config, params, config.n_heads)
    assert same_config.kv_heads == config.n_heads
    np.testing.assert_array_equal(
        forward(same_config, same, tokens).logits, forward(config, params, tokens).logits
    )
    pooled_config, pooled = pool_kv_heads(config, params, 2)
    assert pooled_config.kv_heads == 2 and pooled_config.n_heads == config.n_heads
    dh = config.d_head
    for w in ("W_k", "W_v"):
        full = params[f"layer1.{w}"]
        assert pooled[f"layer1.{w}"].shape == (config.d_model, 2 * dh)
        # key/value head 1 of the pooled model is the mean of heads 2 and 3
        np.testing.assert_allclose(
            pooled[f"layer1.{w}"][:, dh : 2 * dh], (full[:, 2 * dh : 3 * dh] + full[:, 3 * dh : 4 * dh]) / 2
        )
    np.testing.assert_array_equal(pooled["layer0.W_q"], params["layer0.W_q"])
    mqa_config, mqa = pool_kv_heads(pooled_config, pooled, 1)  # pooling twice = pooling all at once
    np.testing.assert_allclose(mqa["layer0.W_k"], pool_kv_heads(config, params, 1)[1]["layer0.W_k"])
    assert forward(mqa_config, mqa, tokens).logits.shape == (tokens.shape[0], config.n_ctx, config.vocab_size)
    with pytest.raises(ValueError, match="n_kv_heads=3 must divide the model's 4 key/value heads"):
        pool_kv_heads(config, params, 3)


def test_training_lowers_the_loss_and_is_reproducible():
    config = DecoderConfig(vocab_size=5, n_ctx=8, d_model=8, n_heads=2, n_layers=2)

    def copy_previous(rng):  # token i + 1 repeats token i: learnable by a previous-token head
        first = rng.integers(0, 5, size=(16, 4))
        return np.repeat(first, 2, axis=1)

    run = train(
        config, copy_previous, steps=60, learning_rate=0.02, seed=1, snapshot_every=20, probe=np.arange(5)
    )
    assert run.losses.shape == (60,) and run.position_losses.shape == (60, 7)
    np.testing.assert_allclose(run.position_losses.mean(axis=1), run.losses)
    assert run.losses[-5:].mean() < run.losses[:5].mean() - 0.8
    # the copies (positions 0, 2, … predict their own token) are learned, the fresh tokens cannot be
    assert run.position_losses[-5:, 0::2].mean() < 0.6 < math.log(5) < run.position_losses[-5:, 1::2].mean()
    np.testing.assert_array_equal(run.snapshot_steps, [0, 20, 40, 60])
    assert run.probe_weights.shape == (4, 2, 2, 5, 5)
    np.testing.assert_array_equal(run.parameters_at(0)["embed"], init_parameters(config, 1)["embed"])
    np.testing.assert_allclose(run.probe_weights[-1], forward(config, run.params, np.arange(5)).weights[:, 0])
    fixed = copy_previous(np.random.default_rng(99))
    again = train(
        config,
        copy_previous,
        steps=60,
        learning_rate=0.02,
        seed=1,
        measure=lambda params: next_token_losses(config, params, fixed).mean(),
    )
    np.testing.assert_array_equal(again.losses, run.losses)
    assert again.measurements.shape == (60,) and run.measurements is None
    assert again.measurements[0] == pytest.approx(
        next_token_losses(config, run.parameters_at(0), fixed).mean()
    )
    assert again.measurements[-1] < again.measurements[0] - 0.8
    np.testing.assert_array_equal(again.snapshot_steps, [0, 60])
    with pytest.raises(ValueError, match="step 30 was not saved"):
        run.parameters_at(30)
    # an iterable of batches; it must last
    batches = [copy_previous(np.random.default_rng(i)) for i in range(3)]
    assert train(config, batches, steps=3).losses.shape == (3,)
    with pytest.raises(ValueError, match="batches ran out after 3 of 4 steps"):
        train(config, batches, steps=4)


def test_training_that_diverges_says_so():
    config = DecoderConfig(vocab_size=5, n_ctx=4, d_model=4, n_heads=1, n_layers=1)
    with pytest.raises(
        FloatingPointError, match=r"training diverged at step 2 .*; try a smaller learning_rate"
    ):
        train(config, lambda rng: rng.integers(0, 5, size=(2, 4)), steps=3, learning_rate=1e300)


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"vocab_size": 1}, ValueError, "vocab_size must be at least 2"),
        ({"n_ctx": 0}, ValueError, "n_ctx must be at least 1"),
        ({"d_model": 2.5}, TypeError, "d_model must be a whole number"),
        ({"n_heads": 3}, ValueError, "d_model=8 does not divide into n_heads=3"),
        ({"n_layers": True}, TypeError, "n_layers must be a whole number"),
        ({"d_mlp": -1}, ValueError, "d_mlp must be at least 0"),
        ({"layer_norm": 1}, TypeError, "layer_norm must be True or False"),
        ({"n_kv_heads": 3, "n_heads": 4}, ValueError, "n_kv_heads=3 must divide n_heads=4"),
        ({"n_kv_heads": 0}, ValueError, "n_kv_heads must be at least 1"),
        (
            {"positions": "rotary"},
            ValueError,
            r"positions must be one of \('residual', 'attention', 'rope'\)",
        ),
        ({"positions": "rope", "d_model": 6}, ValueError, "d_head = d_model // n_heads must be even"),
    ],
)
def test_bad_configs_name_the_field(fields, error, message):
    base = {"vocab_size": 5, "n_ctx": 4, "d_model": 8, "n_heads": 2, "n_layers": 1}
    with pytest.raises(error, match=message):
        DecoderConfig(**{**base, **fields})


@pytest.mark.parametrize(
    ("tokens", "error", "message"),
    [
        ([[0.0, 1.0]], TypeError, "tokens must be integers"),
        ([[0, 7]], ValueError, "tokens must be ids from 0 to 6, got 0 … 7"),
        ([[-1, 2]], ValueError, "tokens must be ids from 0 to 6, got -1 … 2"),
        (np.zeros((1, 7), dtype=int), ValueError, "7 positions, more than the model's n_ctx=6"),
        (np.zeros((2, 2, 2), dtype=int), ValueError, r"shape \(batch, n\) or \(n,\)"),
        (np.zeros((1, 0), dtype=int), ValueError, r"n ≥ 1, got shape \(1, 0\)"),
        (3, ValueError, r"shape \(batch, n\) or \(n,\)"),
    ],
)
def test_bad_tokens_are_named(tokens, error, message):
    params = init_parameters(ATTENTION_ONLY)
    with pytest.raises(error, match=message):
        forward(ATTENTION_ONLY, params, tokens)
    with pytest.raises(error, match=message):
        loss_and_gradients(ATTENTION_ONLY, params, tokens)


def test_bad_parameters_are_named():
    params = init_parameters(ATTENTION_ONLY)
    tokens = [[0, 1, 2]]
    missing = {k: v for k, v in params.items() if k != "layer1.W_k"}
    with pytest.raises(ValueError, match=r"missing \['layer1.W_k'\]"):
        forward(ATTENTION_ONLY, missing, tokens)
    with pytest.raises(ValueError, match=r"unknown \['layer2.W_q'\]"):
        forward(ATTENTION_ONLY, {**params, "layer2.W_q": params["layer1.W_q"]}, tokens)
    wrong = {**params, "layer0.W_o": np.zeros((8, 4))}
    with pytest.raises(
        ValueError,
        match=r"params\['layer0.W_o'\] must have shape \(8, 8\) for this config, got shape \(8, 4\)",
    ):
        loss_and_gradients(ATTENTION_ONLY, wrong, tokens)
    nan = {**params, "unembed": params["unembed"].copy()}
    nan["unembed"][2, 3] = np.nan
    with pytest.raises(
        ValueError, match=r"params\['unembed'\] has 1 non-finite entry; the first is NaN at index \(2, 3\)"
    ):
        forward(ATTENTION_ONLY, nan, tokens)
    with pytest.raises(TypeError, match="params must be a dict"):
        check_parameters(ATTENTION_ONLY, [params["embed"]])
    with pytest.raises(TypeError, match=r"config must be an attnlib\.decoder\.DecoderConfig"):
        forward({"vocab_size": 7}, params, tokens)
    # float32 parameters are computed in float32 (lesson 18), a mix of float32 and float64 in float64
    as32 = {k: v.astype(np.float32) for k, v in params.items()}
    assert forward(ATTENTION_ONLY, as32, tokens).logits.dtype == np.float32
    mixed = {**as32, "unembed": params["unembed"]}
    assert forward(ATTENTION_ONLY, mixed, tokens).logits.dtype == np.float64


def test_bad_arguments_are_named():
    params = init_parameters(ATTENTION_ONLY)
    with pytest.raises(ValueError, match="at least 2 positions for a next-token loss"):
        loss_and_gradients(ATTENTION_ONLY, params, [3])
    with pytest.raises(ValueError, match=r"ablate names \(layer 2, head 0\); the model has layers 0 … 1"):
        forward(ATTENTION_ONLY, params, [1, 2], ablate=[(2, 0)])
    with pytest.raises(TypeError, match=r"ablate must hold \(layer, head\) pairs"):
        forward(ATTENTION_ONLY, params, [1, 2], ablate=[1])
    with pytest.raises(
        ValueError, match="prompt's 4 tokens plus n_new=3 make 7, more than the model's n_ctx=6"
    ):
        generate(ATTENTION_ONLY, params, [1, 2, 3, 4], 3)
    with pytest.raises(ValueError, match="prompt must be ids from 0 to 6"):
        generate(ATTENTION_ONLY, params, [1, 9], 1)
    with pytest.raises(ValueError, match="temperature must be 0"):
        generate(ATTENTION_ONLY, params, [1], 1, temperature=-1.0)
    with pytest.raises(ValueError, match="sinks=1 needs a window"):
        generate(ATTENTION_ONLY, params, [1], 1, sinks=1)
    with pytest.raises(ValueError, match="positions='rope' does not"):
        generate(ATTENTION_ONLY, params, [1, 2], 5, window=2)
    with pytest.raises(TypeError, match="use_cache must be True or False"):
        generate(ATTENTION_ONLY, params, [1], 1, use_cache="yes")
    with pytest.raises(TypeError, match="n_new must be a whole number"):
        generate(ATTENTION_ONLY, params, [1], 1.0)
    np.testing.assert_array_equal(generate(ATTENTION_ONLY, params, [1, 2], 0), [1, 2])
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        init_parameters(ATTENTION_ONLY, seed=-1)
    with pytest.raises(TypeError, match="batches must be a function"):
        train(ATTENTION_ONLY, 3, steps=1)
    with pytest.raises(ValueError, match="probe must be one sequence"):
        train(ATTENTION_ONLY, lambda rng: [[1, 2]], steps=1, probe=[[1, 2], [2, 3]])
    with pytest.raises(ValueError, match="batch must be ids from 0 to 6"):
        train(ATTENTION_ONLY, lambda rng: [[1, 8]], steps=1)
