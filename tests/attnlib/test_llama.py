"""attnlib.model.llama on small random models: the parts against their formulas, Q4_1 and Q8_0 against
the gguf package, the KV cache against the whole pass, windows and sinks, sampling, bad input. The
real file is in test_llama_file.py; the comparison with transformers in
tests/course/test_llama_reference.py."""

from __future__ import annotations

import dataclasses
import math
import mmap

import numpy as np
import pytest

from attnlib.core import causal_mask, scaled_dot_product_attention
from attnlib.decoder import KVCache
from attnlib.model import llama
from attnlib.model.gguf import dequantize_q4_1, dequantize_q8_0, read_gguf
from attnlib.model.llama_file import unpermute, weights_buffer
from attnlib.positions import rope

gguf = pytest.importorskip("gguf", reason="pip install -r requirements.txt")

CONFIG = llama.LlamaConfig(
    n_layers=2,
    n_heads=4,
    n_kv_heads=2,
    d_head=8,
    d_model=16,
    d_mlp=24,
    vocab_size=40,
    n_ctx=64,
    rope_base=100.0,
    norm_eps=1e-5,
)
U32 = 2.0**-24


@pytest.fixture(scope="module")
def model():
    return llama.LlamaModel.random(CONFIG, seed=1)


def tokens(n, seed=0, vocab=CONFIG.vocab_size):
    return np.random.default_rng(seed).integers(0, vocab, n)


# --- Q4_1 and Q8_0 -------------------------------------------------------------------------------


def random_blocks(rng, rows, blocks, kind):
    """Bytes of ``rows × blocks`` blocks with finite float16 scales (and minima) and random numbers."""
    scales = rng.normal(scale=0.05, size=(rows, blocks, 2 if kind == "Q4_1" else 1)).astype(np.float16)
    body = rng.integers(0, 256, size=(rows, blocks, 16 if kind == "Q4_1" else 32), dtype=np.uint8)
    return np.concatenate([scales.view(np.uint8), body], axis=-1).reshape(rows, -1)


@pytest.mark.parametrize(("kind", "ours"), [("Q4_1", dequantize_q4_1), ("Q8_0", dequantize_q8_0)])
def test_dequantization_is_the_gguf_packages(kind, ours):
    data = random_blocks(np.random.default_rng(0), rows=7, blocks=5, kind=kind)
    expected = gguf.quants.dequantize(data, gguf.GGMLQuantizationType[kind])
    got = ours(data)
    assert got.dtype == np.float32 and got.shape == (7, 5 * 32)
    np.testing.assert_array_equal(got, expected)


def test_q4_1_is_scale_times_nibble_plus_minimum():
    d, m, q = np.float16(0.25), np.float16(-2.0), np.arange(32) % 16
    block = np.concatenate([np.array([d, m]).view(np.uint8), (q[:16] | (q[16:] << 4)).astype(np.uint8)])
    np.testing.assert_array_equal(dequantize_q4_1(block), 0.25 * q + -2.0)


@pytest.mark.parametrize("data", [np.zeros(19, np.uint8), np.zeros(20, np.float32), np.uint8(3)])
def test_dequantize_names_bytes_that_are_not_whole_blocks(data):
    with pytest.raises(ValueError, match="dequantize_q4_1 takes bytes"):
        dequantize_q4_1(data)


@pytest.mark.parametrize(("kind", "ours"), [("Q4_1", dequantize_q4_1), ("Q8_0", dequantize_q8_0)])
def test_dequantization_writes_into_out_the_same_numbers(kind, ours):
    data = random_blocks(np.random.default_rng(0), rows=7, blocks=5, kind=kind)
    buffer = np.full(7 * 5 * 32 + 3, np.nan, dtype=np.float32)
    out = buffer[1:-2].reshape(7, 5 * 32)  # C-contiguous, not at the start of its buffer
    assert ours(data, out=out) is out
    np.testing.assert_array_equal(out, ours(data))
    assert np.isnan(buffer[[0, -2, -1]]).all()  # nothing written outside it


def read_only(a):
    a.flags.writeable = False
    return a


@pytest.mark.parametrize(
    "out",
    [
        np.empty((7, 160), np.float64),
        np.empty((7, 159), np.float32),
        np.empty((160, 7), np.float32).T,  # the right shape, not C-contiguous
        read_only(np.empty((7, 160), np.float32)),
        [[0.0] * 160] * 7,
    ],
)
def test_dequantize_names_an_out_it_cannot_write_into(out):
    with pytest.raises(ValueError, match=r"dequantize_q8_0's out must be a writeable C-contiguous float32"):
        dequantize_q8_0(random_blocks(np.random.default_rng(0), rows=7, blocks=5, kind="Q8_0"), out=out)


# --- the weights in one buffer -------------------------------------------------------------------


def test_weights_buffer_is_float32_zeros_in_huge_pages_where_the_system_has_them():
    buffer = weights_buffer(1000)
    assert buffer.shape == (1000,) and buffer.dtype == np.float32 and buffer.flags.writeable
    assert not buffer.any()
    assert in_a_memory_map(buffer) == hasattr(mmap, "MADV_HUGEPAGE")
    assert weights_buffer(0).shape == (0,)
    with pytest.raises(ValueError, match="size must be at least 0"):
        weights_buffer(-1)
    with pytest.raises(TypeError, match="size must be a whole number"):
        weights_buffer(2.0)


def in_a_memory_map(buffer):
    return isinstance(getattr(buffer.base, "obj", None), mmap.mmap)  # np.frombuffer keeps a memoryview


def root(a):
    """The array that owns ``a``'s memory (the end of its chain of views)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def offset(a, buffer):
    """Where ``a`` starts in ``buffer``, in numbers."""
    return (a.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]) // buffer.itemsize


def test_read_gguf_dequantizes_every_tensor_into_one_buffer_in_order(tmp_path):
    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(tmp_path / "four.gguf", "llama")
    writer.add_tensor("odd", rng.normal(size=5).astype(np.float32))  # 5 numbers: 11 of padding after
    for name, kind, rows in [("q4", "Q4_1", 3), ("q8", "Q8_0", 4)]:
        quant = gguf.GGMLQuantizationType[kind]
        writer.add_tensor(name, random_blocks(rng, rows, 2, kind), raw_dtype=quant)
    writer.add_tensor("matrix", rng.normal(size=(3, 7)).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    sizes = []
    buffer = None

    def allocate(size):
        nonlocal buffer
        sizes.append(size)
        buffer = np.full(size + 4, np.nan, dtype=np.float32)
        return buffer

    _, separate = read_gguf(tmp_path / "four.gguf", sha256=None)
    _, tensors = read_gguf(tmp_path / "four.gguf", sha256=None, allocate=allocate)
    assert sizes == [16 + 3 * 64 + 4 * 64 + 32]  # each tensor padded to 16 numbers
    assert [offset(t, buffer) for t in tensors.values()] == [0, 16, 16 + 3 * 64, 16 + 7 * 64]
    for name, tensor in tensors.items():
        assert root(tensor) is buffer and tensor.flags.c_contiguous
        np.testing.assert_array_equal(tensor, separate[name])
        assert tensor.shape == separate[name].shape
    assert np.isnan(buffer[5:16]).all() and np.isnan(buffer[16 + 7 * 64 + 21 :]).all()  # padding left alone
    with pytest.raises(ValueError, match=r"allocate\(496\) must return a writeable contiguous 1-D float32"):
        read_gguf(tmp_path / "four.gguf", sha256=None, allocate=lambda size: np.zeros(size))


# A GGUF's config gives d_head = d_model / n_heads, and its float32 ε must be CONFIG's exactly
TINY = dataclasses.replace(CONFIG, d_head=CONFIG.d_model // CONFIG.n_heads, norm_eps=2.0**-17)


@pytest.fixture(scope="module")
def tiny():
    return llama.LlamaModel.random(TINY, seed=2)


#: Each layer's weights under the names llama.cpp's converter gives them in a GGUF.
FILE_NAMES = {
    "attn_norm": "attn_norm",
    "W_q": "attn_q",
    "W_k": "attn_k",
    "W_v": "attn_v",
    "W_o": "attn_output",
    "mlp_norm": "ffn_norm",
    "W_gate": "ffn_gate",
    "W_up": "ffn_up",
    "W_down": "ffn_down",
}


def tiny_llama_gguf(path, model):
    """``model`` written as a Llama GGUF as llama.cpp's converter writes one (float32 here): matrices
    ``(out, in)``, the query and key rows permuted; a tokenizer of a few made-up tokens."""
    c = model.config
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_block_count(c.n_layers)
    writer.add_head_count(c.n_heads)
    writer.add_head_count_kv(c.n_kv_heads)
    writer.add_embedding_length(c.d_model)
    writer.add_feed_forward_length(c.d_mlp)
    writer.add_context_length(c.n_ctx)
    writer.add_vocab_size(c.vocab_size)
    writer.add_rope_freq_base(c.rope_base)
    writer.add_layer_norm_rms_eps(c.norm_eps)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["a", "b", "ab"] + [f"t{i}" for i in range(3, c.vocab_size)])
    writer.add_token_merges(["a b"])
    writer.add_tensor("token_embd.weight", model.params["embed"])
    heads = {"W_q": c.n_heads, "W_k": c.n_kv_heads}
    for layer in range(c.n_layers):
        for name, file_name in FILE_NAMES.items():
            w = model.params[f"layer{layer}.{name}"]
            w = w if w.ndim == 1 else w.T
            w = llama_cpp_permute(w, heads[name]) if name in heads else w
            writer.add_tensor(f"blk.{layer}.{file_name}.weight", np.ascontiguousarray(w))
    writer.add_tensor("output_norm.weight", model.params["norm"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_the_loader_puts_the_weights_in_one_buffer_with_the_layout_of_separate_arrays(tiny, tmp_path):
    tiny_llama_gguf(tmp_path / "tiny.gguf", tiny)
    loaded = llama.load_smollm2(tmp_path / "tiny.gguf", sha256=None)
    assert loaded.config == TINY
    _, tensors = read_gguf(tmp_path / "tiny.gguf", sha256=None)
    separate = llama.params_from_tensors(TINY, tensors)  # as the loader did before the one buffer
    buffer = root(loaded.params["embed"])
    assert buffer.size == sum(w.size for w in loaded.params.values())  # every size a multiple of 16
    assert in_a_memory_map(buffer) == hasattr(mmap, "MADV_HUGEPAGE")
    for name, w in loaded.params.items():
        assert root(w) is buffer
        assert (w.shape, w.strides, w.dtype) == (separate[name].shape, separate[name].strides, np.float32)
        np.testing.assert_array_equal(w, tiny.params[name])
        np.testing.assert_array_equal(w, separate[name])
    ids = tokens(20)  # the same numbers and strides, so the same logits bit for bit
    before = dataclasses.replace(loaded, params=separate)
    np.testing.assert_array_equal(llama.forward(loaded, ids), llama.forward(before, ids))


def test_params_from_tensors_in_place_unpermutes_inside_the_tensors(tiny, tmp_path):
    tiny_llama_gguf(tmp_path / "tiny.gguf", tiny)
    _, tensors = read_gguf(tmp_path / "tiny.gguf", sha256=None)
    before = {name: t.copy() for name, t in tensors.items()}
    separate = llama.params_from_tensors(TINY, tensors)
    assert all(np.array_equal(tensors[name], t) for name, t in before.items())  # left unchanged
    params = llama.params_from_tensors(TINY, tensors, in_place=True)
    for name, w in params.items():
        assert w.strides == separate[name].strides
        np.testing.assert_array_equal(w, separate[name])
    assert np.shares_memory(params["layer1.W_q"], tensors["blk.1.attn_q.weight"])
    np.testing.assert_array_equal(tensors["blk.1.attn_q.weight"], params["layer1.W_q"].T)
    with pytest.raises(TypeError, match="in_place"):
        llama.params_from_tensors(TINY, tensors, in_place="yes")


# --- the parts against their formulas ------------------------------------------------------------


def test_rms_norm_is_its_formula_and_stays_float32():
    x = np.random.default_rng(0).normal(size=(5, 16)).astype(np.float32)
    g = np.random.default_rng(1).normal(size=16).astype(np.float32)
    out = llama.rms_norm(x, g, 1e-5)
    x64 = x.astype(np.float64)
    expected = x64 / np.sqrt((x64**2).mean(axis=-1, keepdims=True) + 1e-5) * g
    assert out.dtype == np.float32
    # a mean of 16 squares, a square root, a division and a product: a few dozen roundings
    np.testing.assert_allclose(out, expected, rtol=64 * U32, atol=0)


def test_swiglu_is_its_formula_and_never_overflows():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 16)).astype(np.float32)
    Wg, Wu, Wd = (rng.normal(size=s).astype(np.float32) for s in [(16, 24), (16, 24), (24, 16)])
    a, b = x.astype(np.float64) @ Wg, x.astype(np.float64) @ Wu
    expected = (a / (1 + np.exp(-a)) * b) @ Wd
    out = llama.swiglu(x, Wg, Wu, Wd)
    assert out.dtype == np.float32
    scale = np.abs(a / (1 + np.exp(-a)) * b).sum(axis=-1, keepdims=True) * np.abs(Wd).max()
    assert (np.abs(out - expected) <= 2 * (16 + 24 + 8) * U32 * scale).all()
    with np.errstate(all="raise"):  # a very negative gate: silu → 0 without an overflow warning
        assert np.all(llama.swiglu(np.full((1, 16), -1e4, np.float32), Wg * 0 + 1, Wu, Wd) == 0)


def test_rotate_is_lesson_10s_rope_with_the_half_pairing():
    x = np.random.default_rng(0).normal(size=(3, 7, 8)).astype(np.float32)
    positions = np.arange(7) * 5
    out = llama.rotate(x, positions, 100.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, rope(x, positions, base=100.0, pairing="half"), rtol=0, atol=8 * U32 * 4)


def llama_cpp_permute(W, n_heads):
    """llama.cpp's convert_hf_to_gguf.py ``permute``: each head's rows reordered for neighbouring pairs."""
    return W.reshape(n_heads, 2, W.shape[0] // n_heads // 2, *W.shape[1:]).swapaxes(1, 2).reshape(W.shape)


def test_the_loader_undoes_llama_cpps_permutation_and_the_two_pairings_agree():
    rng = np.random.default_rng(0)
    W_hf = rng.normal(size=(3 * 8, 16))  # 3 heads of 8, rotate_half order
    W_file = llama_cpp_permute(W_hf, 3)
    np.testing.assert_array_equal(unpermute(W_file, 3), W_hf)
    x = rng.normal(size=(5, 16))
    q_half = (x @ W_hf.T).reshape(5, 3, 8).transpose(1, 0, 2)
    q_pairs = (x @ W_file.T).reshape(5, 3, 8).transpose(1, 0, 2)
    a = rope(q_half, pairing="half")
    b = rope(q_pairs, pairing="interleaved")
    np.testing.assert_allclose(a @ a.swapaxes(-1, -2), b @ b.swapaxes(-1, -2), rtol=1e-12, atol=1e-12)
    mixed = rope(q_pairs, pairing="half")  # the file's rows with rotate_half: other scores
    assert np.abs(mixed @ mixed.swapaxes(-1, -2) - a @ a.swapaxes(-1, -2)).max() > 0.1


def test_grouped_query_attention_is_attention_with_repeated_key_value_heads():
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(6, 5, 8)).astype(np.float32)
    K, V = (rng.normal(size=(2, 5, 8)).astype(np.float32) for _ in range(2))
    out, weights = llama.grouped_query_attention(Q, K, V)
    ref, ref_w = scaled_dot_product_attention(
        Q.astype(np.float64),
        np.repeat(K, 3, axis=0),
        np.repeat(V, 3, axis=0),
        mask=causal_mask(5),
    )
    assert out.dtype == weights.dtype == np.float32
    np.testing.assert_allclose(weights, ref_w, rtol=0, atol=64 * U32)
    np.testing.assert_allclose(out, ref, rtol=0, atol=64 * U32 * np.abs(V).max())


# --- the model: the parts together, the cache, windows and sinks ---------------------------------


def plain_forward(model, ids):
    """The model in float64, written out without attnlib's parts (each head's attention on its own)."""
    c, p = model.config, {k: v.astype(np.float64) for k, v in model.params.items()}
    n, d = len(ids), c.d_head

    def norm(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + c.norm_eps) * g

    def rot(v, pos):
        th = c.rope_base ** (-np.arange(0, d, 2) / d)
        ang = pos[:, None] * th
        a, b = v[:, : d // 2], v[:, d // 2 :]
        return np.concatenate([a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)], -1)

    x, pos = p["embed"][ids], np.arange(n, dtype=np.float64)
    for layer in range(c.n_layers):
        w = {k.split(".", 1)[1]: v for k, v in p.items() if k.startswith(f"layer{layer}.")}
        a = norm(x, w["attn_norm"])
        heads = []
        for h in range(c.n_heads):
            g = h // (c.n_heads // c.n_kv_heads)
            q = rot(a @ w["W_q"][:, h * d : (h + 1) * d], pos)
            k = rot(a @ w["W_k"][:, g * d : (g + 1) * d], pos)
            s = np.where(np.tri(n, dtype=bool), q @ k.T / math.sqrt(d), -np.inf)
            e = np.exp(s - s.max(-1, keepdims=True))
            heads.append(e / e.sum(-1, keepdims=True) @ (a @ w["W_v"][:, g * d : (g + 1) * d]))
        x = x + np.concatenate(heads, -1) @ w["W_o"]
        m = norm(x, w["mlp_norm"])
        gate = m @ w["W_gate"]
        x = x + (gate / (1 + np.exp(-gate)) * (m @ w["W_up"])) @ w["W_down"]
    return norm(x, p["norm"]) @ p["embed"].T


def test_forward_is_the_model_written_out_and_stays_float32(model):
    ids = tokens(20)
    logits = llama.forward(model, ids)
    expected = plain_forward(model, ids)
    assert logits.dtype == np.float32 and logits.shape == (20, CONFIG.vocab_size)
    bound = llama.float32_tolerance(CONFIG, 20, float(np.abs(expected).max()))
    np.testing.assert_allclose(logits, expected, rtol=0, atol=bound)


def test_generate_with_the_cache_is_greedy_decoding_by_whole_passes(model):
    prompt = tokens(5, seed=3)
    new = llama.generate(model, prompt, 12, stop_at_eos=False)
    sequence = list(prompt)
    for _ in range(12):
        sequence.append(int(np.argmax(llama.forward(model, np.array(sequence))[-1])))
    assert new.tolist() == sequence[5:] and new.dtype == np.int64


def test_the_cache_gives_the_whole_pass_logits(model):
    """Decoding one token at a time against the cache, the logits of every step are the whole
    pass's, to float32's rounding (the sums run in another order: a row at a time)."""
    prompt = tokens(6, seed=4)
    new, logits = llama.generate_with_logits(model, prompt, 10, stop_at_eos=False)
    assert logits.shape == (10, CONFIG.vocab_size) and logits.dtype == np.float32
    whole = llama.forward(model, np.concatenate([prompt, new]))[5:15]
    bound = llama.float32_tolerance(CONFIG, 16, float(np.abs(whole).max()))
    np.testing.assert_allclose(logits, whole, rtol=0, atol=bound)


def test_a_learners_parts_are_used(model):
    ids = tokens(9)
    calls = []

    def my_rms_norm(x, weight, eps):
        calls.append("rms_norm")
        return llama.rms_norm(x, weight, eps)

    def my_block(x, w, attn, parts, eps):
        calls.append("block")
        return llama.block(x, w, attn, parts, eps)

    parts = llama.Parts(rms_norm=my_rms_norm, block=my_block)
    np.testing.assert_array_equal(llama.forward(model, ids, parts=parts), llama.forward(model, ids))
    assert calls.count("block") == CONFIG.n_layers and calls.count("rms_norm") == 2 * CONFIG.n_layers + 1
    broken = llama.Parts(swiglu=lambda x, g, u, d: np.zeros_like(x))
    assert not np.allclose(llama.forward(model, ids, parts=broken), llama.forward(model, ids))


def test_forward_with_weights_gives_each_layers_causal_rows(model):
    logits, weights = llama.forward_with_weights(model, tokens(7))
    np.testing.assert_array_equal(logits, llama.forward(model, tokens(7)))
    assert len(weights) == CONFIG.n_layers
    for w in weights:
        assert w.shape == (CONFIG.n_heads, 7, 7) and w.dtype == np.float32
        np.testing.assert_allclose(w.sum(-1), 1.0, rtol=0, atol=16 * U32)
        assert (w[:, ~np.tri(7, dtype=bool)] == 0).all()


def test_ablating_every_head_is_zeroing_w_o(model):
    ids = tokens(8)
    every = [(layer, h) for layer in range(CONFIG.n_layers) for h in range(CONFIG.n_heads)]
    zeroed = {k: (v * 0 if k.endswith("W_o") else v) for k, v in model.params.items()}
    silent = llama.LlamaModel(CONFIG, zeroed, model.metadata, "", None)
    np.testing.assert_array_equal(llama.forward(model, ids, ablate=every), llama.forward(silent, ids))
    assert not np.array_equal(llama.forward(model, ids, ablate=[(1, 2)]), llama.forward(model, ids))


def test_sinks_in_the_cache_are_the_rolling_caches_tokens():
    """One layer: the last query of a whole pass with a window and sinks (keys_at="cache") sees
    what the model sees when run on the rolling cache's tokens alone, in cache order."""
    one = llama.LlamaModel.random(llama.LlamaConfig(1, 4, 2, 8, 16, 24, 40, 64, 100.0, 1e-5), seed=2)
    ids, s, w = tokens(30, seed=5), 3, 6
    rolled = llama.forward(one, ids, window=w, sinks=s)
    original = llama.forward(one, ids, window=w, sinks=s, keys_at="original")
    for i in range(s + w, 30):
        kept = ids[list(range(s)) + list(range(i - w + 1, i + 1))]
        alone = llama.forward(one, kept)[-1]
        bound = llama.float32_tolerance(one.config, s + w, float(np.abs(alone).max()))
        np.testing.assert_allclose(rolled[i], alone, rtol=0, atol=bound)
    assert np.abs(rolled - original)[s + w :].max() > 1e-3  # the sinks' distances differ
    early = rolled[: s + w - 1]  # a query before the cache is full sits at its own position
    bound = llama.float32_tolerance(one.config, 30, float(np.abs(early).max()))
    np.testing.assert_allclose(early, original[: s + w - 1], rtol=0, atol=bound)


def test_window_weights_stay_inside_the_window_and_the_sinks(model):
    _, weights = llama.forward_with_weights(model, tokens(20), window=4, sinks=2)
    i, j = np.arange(20)[:, None], np.arange(20)[None, :]
    hidden = ~((j <= i) & ((j > i - 4) | (j < 2)))
    for w in weights:
        assert w.shape == (CONFIG.n_heads, 20, 20) and (w[:, hidden] == 0).all()
        np.testing.assert_allclose(w.sum(-1), 1.0, rtol=0, atol=16 * U32)


# --- sampling ------------------------------------------------------------------------------------


def test_next_token_probabilities_greedy_temperature_top_k_top_p():
    z = np.array([2.0, 1.0, 0.5, -1.0, 3.0])
    np.testing.assert_array_equal(llama.next_token_probabilities(z, temperature=0), [0, 0, 0, 0, 1])
    e = np.exp(z / 2.0)
    np.testing.assert_allclose(llama.next_token_probabilities(z, temperature=2.0), e / e.sum(), rtol=1e-12)
    top2 = llama.next_token_probabilities(z, temperature=1.0, top_k=2)
    assert set(np.flatnonzero(top2)) == {0, 4}
    p = np.exp(z) / np.exp(z).sum()  # sorted: 4 (0.59), 0 (0.22), 1 (0.08) …
    nucleus = llama.next_token_probabilities(z, temperature=1.0, top_p=0.7)
    assert set(np.flatnonzero(nucleus)) == {0, 4}
    np.testing.assert_allclose(nucleus[[0, 4]], p[[0, 4]] / p[[0, 4]].sum(), rtol=1e-12)
    assert np.count_nonzero(llama.next_token_probabilities(z, temperature=1.0, top_p=0.01)) == 1
    assert np.count_nonzero(llama.next_token_probabilities(z, temperature=1.0, top_p=1.0)) == 5


def test_top_p_keeps_the_nucleus_of_what_top_k_kept():
    # T 1.7, top-k 10, top-p 0.5: the nucleus of the 10 kept, renormalised, as transformers and
    # llama.cpp apply their filters in turn (of the whole distribution it would keep all 10)
    z = np.array([3.0, 2.9, 2.8, 2.0, 1.9, 1.8, 1.7, 1.6, 1.5, 1.4] + [1.3] * 40)
    p = llama.next_token_probabilities(z, temperature=1.7, top_k=10, top_p=0.5)
    kept = np.exp(z[:10] / 1.7) / np.exp(z[:10] / 1.7).sum()
    n = int(np.searchsorted(np.cumsum(kept), 0.5) + 1)  # the fewest whose share of the 10 reaches 0.5
    assert np.count_nonzero(p) == n < 10
    np.testing.assert_allclose(p[:n], kept[:n] / kept[:n].sum(), rtol=1e-12)


def test_sampling_is_seeded_and_follows_top_k(model):
    prompt = tokens(4)
    a = llama.generate(model, prompt, 10, temperature=1.0, seed=7, stop_at_eos=False)
    b = llama.generate(model, prompt, 10, temperature=1.0, seed=7, stop_at_eos=False)
    np.testing.assert_array_equal(a, b)
    greedy = llama.generate(model, prompt, 10, stop_at_eos=False)
    np.testing.assert_array_equal(
        llama.generate(model, prompt, 10, temperature=1.0, top_k=1, stop_at_eos=False), greedy
    )


def test_generation_stops_after_the_end_token(model):
    prompt = tokens(4)
    first = int(llama.generate(model, prompt, 1)[0])
    ends = llama.LlamaModel(CONFIG, model.params, {"tokenizer.ggml.eos_token_id": first}, "", None)
    assert llama.generate(ends, prompt, 10).tolist() == [first]
    assert len(llama.generate(ends, prompt, 10, stop_at_eos=False)) == 10


# --- bad input -----------------------------------------------------------------------------------

BAD_IDS = [
    ([], ValueError, "empty"),
    ("hello", TypeError, "model.encode"),
    ([1.5, 2.0], TypeError, "whole numbers"),
    ([[1, 2]], ValueError, "1-D"),
    ([1, 40], ValueError, "from 0 to 39"),
    ([-1], ValueError, "from 0 to 39"),
    (np.zeros(65, int), ValueError, "context of 64"),
    ([None], ValueError, "ids is ragged, mixes types"),
]


@pytest.mark.parametrize(("ids", "error", "message"), BAD_IDS)
def test_bad_prompts_are_named(model, ids, error, message):
    with pytest.raises(error, match=message):
        llama.forward(model, ids)
    if "context" not in message:
        with pytest.raises(error, match=message):
            llama.generate(model, ids, 3)


BAD_GENERATE = [
    (dict(n_new=10**30), ValueError, "context of 64"),
    (dict(n_new=62), ValueError, "plus n_new=62"),
    (dict(n_new=-1), ValueError, "n_new must be at least 0"),
    (dict(n_new=2.0), TypeError, "n_new must be a whole number"),
    (dict(temperature=-0.5), ValueError, "temperature must be 0"),
    (dict(temperature=float("nan")), ValueError, "temperature"),
    (dict(temperature=float("inf")), ValueError, "temperature"),
    (dict(temperature="hot"), TypeError, "temperature must be a real number"),
    (dict(temperature=1.0, top_k=0), ValueError, "top_k must be at least 1"),
    (dict(temperature=1.0, top_k=41), ValueError, "top_k must be from 1 to"),
    (dict(temperature=1.0, top_k=2.5), TypeError, "top_k must be a whole number"),
    (dict(temperature=1.0, top_p=0.0), ValueError, r"top_p must be in \(0, 1\]"),
    (dict(temperature=1.0, top_p=1.5), ValueError, r"top_p must be in \(0, 1\]"),
    (dict(temperature=1.0, top_p=float("nan")), ValueError, r"top_p must be a finite number"),
    (dict(temperature=1.0, top_p="most"), TypeError, "top_p must be a real number"),
    (dict(seed=-1), ValueError, "seed must be"),
    (dict(stop_at_eos="yes"), TypeError, "stop_at_eos"),
    (dict(parts="mine"), TypeError, "parts must be"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_GENERATE)
def test_bad_generation_settings_are_named(model, kwargs, error, message):
    kwargs = {"n_new": 3} | kwargs
    with pytest.raises(error, match=message):
        llama.generate(model, [1, 2, 3], **kwargs)


BAD_FORWARD = [
    (dict(window=0), ValueError, "window must be at least 1"),
    (dict(window=2.5), TypeError, "window must be a whole number"),
    (dict(sinks=2), ValueError, "needs a window"),
    (dict(window=3, sinks=-1), ValueError, "sinks must be at least 0"),
    (dict(keys_at="somewhere"), ValueError, "keys_at"),
    (dict(ablate=[(2, 0)]), ValueError, "does not have"),
    (dict(ablate=[(0, 4)]), ValueError, "does not have"),
    (dict(ablate=[1, 2]), TypeError, r"\(layer, head\) pairs"),
    (dict(parts=object()), TypeError, "parts must be"),
    (dict(window=3, sinks="2"), TypeError, "sinks must be a whole number"),
    (dict(window=3, sinks=None), TypeError, "sinks must be a whole number"),
    (dict(keys_at=["cache"]), ValueError, "keys_at"),
    (dict(ablate=[(1.9, 0)]), TypeError, "pairs of whole numbers"),  # not layer 1
    (dict(ablate=[("1", 0)]), TypeError, "pairs of whole numbers"),
    (dict(ablate=[(True, 0)]), TypeError, "pairs of whole numbers"),
    (dict(ablate="01"), TypeError, "pairs of whole numbers"),
    (dict(ablate=[(0, 1, 2)]), TypeError, "pairs of whole numbers"),
    (dict(ablate=3), TypeError, "pairs of whole numbers"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_FORWARD)
def test_bad_forward_settings_are_named(model, kwargs, error, message):
    with pytest.raises(error, match=message):
        llama.forward(model, [1, 2, 3, 4, 5], **kwargs)


@pytest.mark.parametrize("keys_at", ["cache", "original"])
def test_more_sinks_than_tokens_make_every_token_a_sink(model, keys_at):
    ids = tokens(5)
    np.testing.assert_array_equal(
        llama.forward(model, ids, window=2, sinks=9, keys_at=keys_at),
        llama.forward(model, ids, window=2, sinks=5, keys_at=keys_at),
    )


@pytest.mark.parametrize(
    "mask", ["causal", np.ones((3, 3)), np.ones((2, 3), bool), [[True, False, False]] * 3], ids=str
)
def test_grouped_query_attention_refuses_what_is_not_a_mask(mask):
    Q = np.ones((4, 3, 8), np.float32)
    K = np.ones((2, 3, 8), np.float32)
    with pytest.raises(ValueError, match=r"mask must be None \(causal\) or a \(3, 3\) bool array"):
        llama.grouped_query_attention(Q, K, K, mask=mask)


@pytest.mark.parametrize(
    ("logits", "message"),
    [(np.array([1.0, np.nan]), "logits has 1 non-finite entry"), (np.zeros((2, 3)), "one finite row"),
     (np.array([]), "one finite row")],
)  # fmt: skip
def test_next_token_probabilities_wants_one_finite_row(logits, message):
    with pytest.raises(ValueError, match=message):
        llama.next_token_probabilities(logits, temperature=1.0)


def test_the_tokenizers_entries_name_bad_text_and_flags(model):
    with pytest.raises(ValueError, match="half of a surrogate pair"):
        model.encode("caf\ud800e")
    with pytest.raises(TypeError, match="skip_special must be True or False"):
        model.decode([1, 2], skip_special="yes")


def test_positions_move_tokens_and_only_distances_matter(model):
    ids = tokens(6)
    same = llama.forward(model, ids, positions=np.arange(6))
    np.testing.assert_array_equal(same, llama.forward(model, ids))
    shifted = llama.forward(model, ids, positions=np.arange(6) + 40)  # every distance the same
    np.testing.assert_allclose(shifted, llama.forward(model, ids), atol=1e-4)
    gap = np.arange(6) + 30 * (np.arange(6) >= 2)  # the tokens after two sinks, 30 places later
    moved = llama.forward(model, ids, window=2, sinks=2, keys_at="original", positions=gap)
    assert not np.allclose(moved[3:], llama.forward(model, ids, window=2, sinks=2, keys_at="original")[3:])
    np.testing.assert_allclose(  # before the gap, nothing changes
        moved[:2], llama.forward(model, ids, window=2, sinks=2, keys_at="original")[:2], atol=1e-6
    )


@pytest.mark.parametrize(
    ("positions", "error", "message"),
    [(np.arange(5), ValueError, r"\(6,\) whole numbers"), (np.arange(6.0), TypeError, "whole numbers"),
     ([0, 1, 1, 2, 3, 4], ValueError, "increase"), (np.arange(6) - 1, ValueError, "increase from 0")],
)  # fmt: skip
def test_bad_positions_are_named(model, positions, error, message):
    with pytest.raises(error, match=message):
        llama.forward(model, tokens(6), positions=positions)


def test_positions_with_sinks_in_the_cache_are_refused(model):
    with pytest.raises(ValueError, match="needs keys_at='original'"):
        llama.forward(model, tokens(6), window=2, sinks=2, positions=np.arange(6) + 9)


def test_a_prompt_longer_than_a_prefill_block_gives_the_whole_pass_logits(model, monkeypatch):
    monkeypatch.setattr(llama, "PREFILL_BLOCK", 3)  # 10 tokens: blocks of 3, 3, 3, 1
    prompt = tokens(10)
    new, logits = llama.generate_with_logits(model, prompt, 4, stop_at_eos=False)
    whole = llama.forward(model, np.concatenate([prompt, new[:-1]]))[len(prompt) - 1 :]
    np.testing.assert_allclose(logits, whole, atol=llama.float32_tolerance(CONFIG, 14, np.abs(whole).max()))


def test_the_llama_cache_holds_what_lesson_15s_kv_cache_holds():
    """The two caches (``LlamaKVCache``, written into arrays made once; ``attnlib.decoder.KVCache``,
    grown by concatenating), given the same keys and values block by block (a prefill of 5, then
    single tokens and a block of 2), hold the same ones in the same order, in the same bytes."""
    rng = np.random.default_rng(0)
    ours, lesson_15 = llama.LlamaKVCache(CONFIG, capacity=9), KVCache(CONFIG.n_layers)
    for m in (5, 1, 1, 2):
        lesson_15.add_tokens(m)
        for layer in range(CONFIG.n_layers):
            K, V = (rng.normal(size=(CONFIG.n_kv_heads, m, CONFIG.d_head)).astype(np.float32) for _ in "KV")
            held, kept = ours.append(layer, K, V), lesson_15.append(layer, K[None], V[None])
            for a, b in zip(held, kept, strict=True):
                np.testing.assert_array_equal(a, b[0])
        ours.length += m
    assert ours.length == lesson_15.length == 9
    assert ours.K[:, :, :9].nbytes + ours.V[:, :, :9].nbytes == lesson_15.nbytes
