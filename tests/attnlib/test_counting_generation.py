"""What generating text costs: the KV cache's bytes, the multiplications with and without it, and
the parameters of Llama-style decoders, as formulas, measured, and against published totals (lesson
15's own table of those models, in the kit, is checked in tests/lessons/l15_generating_text/)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.counting import (
    GENERATION_STEPS,
    DecoderShape,
    counted_generation,
    decoder_pass_multiplications,
    generation_multiplications,
    kv_cache_bytes,
    kv_cache_outgrows_weights,
    llama_parameter_counts,
)
from attnlib.multihead import multi_head_attention

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

#: Four Llama-style decoders as their config.json on the Hugging Face hub gives them (meta-llama/
#: Llama-2-7b-hf, Llama-2-70b-hf, mistralai/Mistral-7B-v0.1, meta-llama/Meta-Llama-3-8B), their
#: published parameter counts, and Mistral's sliding window.
PUBLISHED = {
    "Llama 2 7B": (
        DecoderShape(n_layers=32, d_model=4096, n_heads=32, n_kv_heads=32, d_mlp=11008, vocab=32000),
        6_738_415_616,
        None,
    ),
    "Llama 2 70B": (
        DecoderShape(n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_mlp=28672, vocab=32000),
        68_976_648_192,
        None,
    ),
    "Mistral 7B": (
        DecoderShape(n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_mlp=14336, vocab=32000),
        7_241_732_096,
        4096,
    ),
    "Llama 3 8B": (
        DecoderShape(n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_mlp=14336, vocab=128256),
        8_030_261_248,
        None,
    ),
}
LLAMA_2_7B, MISTRAL_7B = PUBLISHED["Llama 2 7B"][0], PUBLISHED["Mistral 7B"][0]


# --- DecoderShape -------------------------------------------------------------------------------


def test_shape_fills_in_the_defaults():
    shape = DecoderShape(n_layers=2, d_model=12, n_heads=4, d_mlp=0, vocab=7)
    assert (shape.n_kv_heads, shape.d_head, shape.tied_embeddings) == (4, 3, False)
    assert DecoderShape(n_layers=1, d_model=10, n_heads=4, d_mlp=8, vocab=3, d_head=5).d_head == 5


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"n_layers": 0}, ValueError, r"n_layers must be at least 1, got 0"),
        ({"d_model": 2.0}, TypeError, r"d_model must be a whole number, got 2\.0"),
        ({"d_mlp": -1}, ValueError, r"d_mlp must be at least 0, got -1"),
        ({"n_kv_heads": 3}, ValueError, r"n_kv_heads=3 does not divide n_heads=4"),
        ({"n_heads": 5}, ValueError, r"d_model=8 does not divide into n_heads=5 equal heads: give d_head"),
        ({"d_head": 0}, ValueError, r"d_head must be at least 1, got 0"),
        ({"tied_embeddings": 1}, TypeError, r"tied_embeddings must be True or False, got 1"),
    ],
)
def test_shape_names_bad_sizes(change, error, message):
    sizes = {"n_layers": 2, "d_model": 8, "n_heads": 4, "d_mlp": 16, "vocab": 10} | change
    with pytest.raises(error, match=message):
        DecoderShape(**sizes)


# --- the KV cache's bytes ---------------------------------------------------------------------------


def test_kv_cache_bytes_written_out():
    llama = LLAMA_2_7B
    assert kv_cache_bytes(llama, bytes_per_number=2) == 2 * 32 * 32 * 128 * 2 == 524_288  # 0.5 MiB a token
    assert kv_cache_bytes(llama, 4096, bytes_per_number=2) == 2 * 2**30  # 2 GiB at its 4,096 tokens
    assert kv_cache_bytes(llama, 4096, bytes_per_number=2, batch=8) == 16 * 2**30
    mistral = MISTRAL_7B  # 8 kv heads: a quarter of Llama 2's
    assert kv_cache_bytes(mistral, 4096, bytes_per_number=2) == 2**29
    assert kv_cache_bytes(mistral, 0, bytes_per_number=2) == 0


def test_a_window_stops_the_cache_from_growing():
    shape = DecoderShape(n_layers=2, d_model=8, n_heads=2, d_mlp=0, vocab=5)
    per_token = kv_cache_bytes(shape, bytes_per_number=8)
    assert [
        kv_cache_bytes(shape, n, bytes_per_number=8, window=4) // per_token for n in (1, 3, 4, 5, 100)
    ] == [
        1,
        3,
        4,
        4,
        4,
    ]
    assert kv_cache_bytes(shape, 100, bytes_per_number=8, window=4, sinks=2) == 6 * per_token


@pytest.mark.parametrize(
    ("n_layers", "n_heads", "n_kv_heads", "batch", "n_tokens"), [(3, 4, 2, 2, 11), (2, 4, 1, 1, 5)]
)
def test_kv_cache_bytes_equal_what_transformers_keeps(n_layers, n_heads, n_kv_heads, batch, n_tokens):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
    config = transformers.LlamaConfig(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=24,
        num_hidden_layers=n_layers,
        num_attention_heads=n_heads,
        num_key_value_heads=n_kv_heads,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        cache = model(torch.randint(0, 50, (batch, n_tokens)), use_cache=True).past_key_values
    kept = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    shape = DecoderShape(
        n_layers=n_layers, d_model=16, n_heads=n_heads, n_kv_heads=n_kv_heads, d_mlp=24, vocab=50
    )
    assert kv_cache_bytes(shape, n_tokens, bytes_per_number=4, batch=batch) == kept


# --- parameters of Llama-style decoders -------------------------------------------------------------


@pytest.mark.parametrize("key", PUBLISHED)
def test_the_published_configurations_give_the_published_totals(key):
    shape, parameters, _ = PUBLISHED[key]
    assert llama_parameter_counts(shape)["total"] == parameters


def test_llama_2_7b_part_by_part():
    counts = llama_parameter_counts(LLAMA_2_7B)
    assert counts == {
        "embedding": 32000 * 4096,
        "attention": 32 * 4 * 4096 * 4096,
        "mlp": 32 * 3 * 4096 * 11008,
        "norms": 65 * 4096,
        "unembedding": 32000 * 4096,
        "total": 6_738_415_616,
    }


@pytest.mark.parametrize("key", ["Llama 2 7B", "Llama 2 70B", "Mistral 7B", "Llama 3 8B", "tiny-tied"])
def test_parameter_count_equals_transformers_on_the_meta_device(key):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
    if key == "tiny-tied":
        shape = DecoderShape(
            n_layers=3, d_model=24, n_heads=6, n_kv_heads=2, d_mlp=40, vocab=99, tied_embeddings=True
        )
        window = None
    else:
        shape, _, window = PUBLISHED[key]
    config_class, model_class = (
        (transformers.MistralConfig, transformers.MistralForCausalLM)
        if window
        else (transformers.LlamaConfig, transformers.LlamaForCausalLM)
    )
    config = config_class(
        vocab_size=shape.vocab,
        hidden_size=shape.d_model,
        intermediate_size=shape.d_mlp,
        num_hidden_layers=shape.n_layers,
        num_attention_heads=shape.n_heads,
        num_key_value_heads=shape.n_kv_heads,
        tie_word_embeddings=shape.tied_embeddings,
    )
    with torch.device("meta"):  # shapes only: no memory for 70 billion numbers
        built = model_class(config)
    assert llama_parameter_counts(shape)["total"] == sum(p.numel() for p in built.parameters())


def test_tied_embeddings_count_the_matrix_once():
    untied = DecoderShape(n_layers=1, d_model=4, n_heads=2, d_mlp=8, vocab=10)
    tied = DecoderShape(n_layers=1, d_model=4, n_heads=2, d_mlp=8, vocab=10, tied_embeddings=True)
    assert llama_parameter_counts(untied)["total"] - llama_parameter_counts(tied)["total"] == 40


# --- when the cache outgrows the weights ------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "length"),
    [("Llama 2 7B", 25_706), ("Llama 2 70B", 421_001), ("Mistral 7B", 110_501), ("Llama 3 8B", 122_533)],
)
def test_cache_outgrows_the_weights_at(key, length):
    shape, parameters, _ = PUBLISHED[key]
    found = kv_cache_outgrows_weights(shape, parameters=parameters, bytes_per_number=2)
    weights = 2 * parameters
    assert found == length
    assert kv_cache_bytes(shape, length, bytes_per_number=2) > weights  # the definition: the first
    assert kv_cache_bytes(shape, length - 1, bytes_per_number=2) <= weights  # length past the weights


def test_cache_outgrows_sooner_in_bigger_numbers_or_batches_and_never_within_a_window():
    shape, parameters, window = PUBLISHED["Mistral 7B"]
    args = {"parameters": parameters}
    fp16 = kv_cache_outgrows_weights(shape, bytes_per_number=2, **args)
    assert (
        kv_cache_outgrows_weights(shape, bytes_per_number=4, weight_bytes_per_number=2, **args)
        == (fp16 + 1) // 2
    )
    assert kv_cache_outgrows_weights(shape, bytes_per_number=2, batch=8, **args) == 13_813
    assert kv_cache_outgrows_weights(shape, bytes_per_number=2, window=window, **args) is None
    small = DecoderShape(n_layers=1, d_model=2, n_heads=1, d_mlp=0, vocab=2)  # 4 numbers a token
    assert kv_cache_outgrows_weights(small, parameters=10, bytes_per_number=1, window=3) == 3
    assert kv_cache_outgrows_weights(small, parameters=12, bytes_per_number=1, window=3) is None


# --- multiplications: formula = measured --------------------------------------------------------------


def attention_only_layers(rng, n_layers, d_model, n_heads, n_kv_heads, d_head):
    return [
        {
            "W_q": rng.normal(size=(d_model, n_heads * d_head)) / np.sqrt(d_model),
            "W_k": rng.normal(size=(d_model, n_kv_heads * d_head)) / np.sqrt(d_model),
            "W_v": rng.normal(size=(d_model, n_kv_heads * d_head)) / np.sqrt(d_model),
            "W_o": rng.normal(size=(n_heads * d_head, d_model)) / np.sqrt(n_heads * d_head),
        }
        for _ in range(n_layers)
    ]


# (n_layers, d_model, n_heads, n_kv_heads, d_head, n_rows of X, prompt)
GENERATION_SHAPES = [
    (1, 4, 1, 1, 4, 5, 1),
    (2, 6, 2, 2, 3, 6, 1),
    (2, 6, 4, 2, 2, 7, 3),
    (3, 5, 4, 1, 2, 6, 2),
    (1, 8, 6, 3, 1, 4, 4),
]


@pytest.mark.parametrize("sizes", GENERATION_SHAPES, ids=["x".join(map(str, s)) for s in GENERATION_SHAPES])
def test_formula_equals_measured_with_and_without_a_cache(sizes):
    n_layers, d_model, n_heads, n_kv_heads, d_head, n, prompt = sizes
    rng = np.random.default_rng(sum(sizes))
    layers = attention_only_layers(rng, n_layers, d_model, n_heads, n_kv_heads, d_head)
    X = rng.normal(size=(n, d_model))
    shape = DecoderShape(
        n_layers=n_layers,
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        d_head=d_head,
        d_mlp=0,
        vocab=2,
    )
    n_new = n - prompt + 1
    results = {}
    for cache in (True, False):
        last, counts = counted_generation(
            X, layers, n_heads=n_heads, n_kv_heads=n_kv_heads, prompt=prompt, cache=cache
        )
        assert len(counts) == n_new and last.shape == (n_new, d_model)
        for k, measured in enumerate(counts):  # pass by pass
            t = prompt + k
            rows = 1 if cache and k > 0 else t
            assert measured == decoder_pass_multiplications(shape, rows, t), (cache, k)
        total = {step: sum(c[step] for c in counts) for step in counts[0]}
        assert total == generation_multiplications(shape, n_new, prompt=prompt, cache=cache)
        results[cache] = last
    # the cache changes the cost, not the result: both equal the attention-only decoder run at once
    x = X
    for W in layers:
        x = x + multi_head_attention(x, x, **W, n_heads=n_heads, n_kv_heads=n_kv_heads, causal=True)[0]
    np.testing.assert_allclose(results[True], x[prompt - 1 :], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[False], x[prompt - 1 :], rtol=1e-12, atol=1e-12)


def test_without_a_cache_each_token_costs_quadratically_with_it_linearly():
    shape = LLAMA_2_7B
    without = [decoder_pass_multiplications(shape, t, t)["scores q Kᵀ"] for t in (1, 2, 4, 8)]
    with_cache = [decoder_pass_multiplications(shape, 1, t)["scores q Kᵀ"] for t in (1, 2, 4, 8)]
    assert without == [w * t * t for w, t in zip([without[0]] * 4, (1, 2, 4, 8), strict=True)]
    assert with_cache == [with_cache[0] * t for t in (1, 2, 4, 8)]
    projections = decoder_pass_multiplications(shape, 1, 1000)["Q = x W_q"]
    assert projections == decoder_pass_multiplications(shape, 1, 1)["Q = x W_q"] == 32 * 4096 * 4096


def test_generation_totals_written_out():
    shape = DecoderShape(n_layers=1, d_model=2, n_heads=1, d_mlp=0, vocab=2)  # D = d = 2, H = G = 1
    # prompt 1, 3 new tokens: contexts 1, 2, 3
    assert generation_multiplications(shape, 3, cache=False) == {
        "Q = x W_q": 4 * 6,  # Σt = 6 rows, D·d = 4 each
        "K, V = x W_k, x W_v": 8 * 6,
        "scores q Kᵀ": 2 * 14,  # Σt² = 1 + 4 + 9 pairs, d = 2 each
        "weights · V": 2 * 14,
        "concat(heads) W_o": 4 * 6,
        "total": 24 + 48 + 28 + 28 + 24,
    }
    assert generation_multiplications(shape, 3, cache=True)["scores q Kᵀ"] == 2 * (1 + 2 + 3)
    assert generation_multiplications(shape, 1, prompt=5, cache=True) == generation_multiplications(
        shape, 1, prompt=5, cache=False
    )  # the first pass reads the whole prompt either way
    for n_new, prompt in [(1, 1), (7, 1), (5, 4), (30, 12)]:  # the closed form is the sum of the passes
        for cache in (True, False):
            passes = [
                decoder_pass_multiplications(shape, 1 if cache and t > prompt else t, t)
                for t in range(prompt, prompt + n_new)
            ]
            summed = {step: sum(p[step] for p in passes) for step in passes[0]}
            assert generation_multiplications(shape, n_new, prompt=prompt, cache=cache) == summed


def test_the_steps_are_named_in_order():
    shape = DecoderShape(n_layers=1, d_model=2, n_heads=1, d_mlp=0, vocab=2)
    assert list(decoder_pass_multiplications(shape, 1, 1)) == [*GENERATION_STEPS, "total"]


# --- bad input -------------------------------------------------------------------------------------

SHAPE = DecoderShape(n_layers=1, d_model=4, n_heads=2, d_mlp=0, vocab=3)
LAYER = {"W_q": np.ones((4, 4)), "W_k": np.ones((4, 4)), "W_v": np.ones((4, 4)), "W_o": np.ones((4, 4))}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: kv_cache_bytes({"n_layers": 1}, 2, bytes_per_number=2),
            TypeError,
            r"shape must be a DecoderShape, got dict",
        ),
        (
            lambda: kv_cache_bytes(SHAPE, 2, bytes_per_number=0),
            ValueError,
            r"bytes_per_number must be at least 1",
        ),
        (lambda: kv_cache_bytes(SHAPE, -1, bytes_per_number=2), ValueError, r"n_tokens must be at least 0"),
        (
            lambda: kv_cache_bytes(SHAPE, 2, bytes_per_number=2, window=0),
            ValueError,
            r"window must be at least 1",
        ),
        (
            lambda: kv_cache_bytes(SHAPE, 2, bytes_per_number=2.5),
            TypeError,
            r"bytes_per_number must be a whole number",
        ),
        (
            lambda: kv_cache_outgrows_weights(SHAPE, parameters=0, bytes_per_number=2),
            ValueError,
            r"parameters must be",
        ),
        (lambda: llama_parameter_counts(None), TypeError, r"shape must be a DecoderShape, got NoneType"),
        (
            lambda: decoder_pass_multiplications(SHAPE, 3, 2),
            ValueError,
            r"n_context=2 is smaller than n_rows=3",
        ),
        (lambda: decoder_pass_multiplications(SHAPE, 0, 2), ValueError, r"n_rows must be at least 1"),
        (
            lambda: generation_multiplications(SHAPE, 3, cache="yes"),
            TypeError,
            r"cache must be True or False",
        ),
        (lambda: generation_multiplications(SHAPE, 0, cache=True), ValueError, r"n_new must be at least 1"),
        (
            lambda: generation_multiplications(SHAPE, 2, prompt=0, cache=True),
            ValueError,
            r"prompt must be at least 1",
        ),
        (
            lambda: counted_generation(np.ones((3, 4)), [LAYER], n_heads=2, prompt=4, cache=True),
            ValueError,
            r"prompt=4 is longer than X",
        ),
        (
            lambda: counted_generation(np.ones(4), [LAYER], n_heads=2, cache=True),
            ValueError,
            r"X must be the embeddings",
        ),
        (
            lambda: counted_generation(np.ones((3, 4)), LAYER, n_heads=2, cache=True),
            TypeError,
            r"layers must be a non-empty sequence",
        ),
        (
            lambda: counted_generation(np.ones((3, 4)), [], n_heads=2, cache=True),
            TypeError,
            r"layers must be a non-empty sequence",
        ),
        (
            lambda: counted_generation(np.ones((3, 4)), [{"W_q": 1}], n_heads=2, cache=True),
            ValueError,
            r"layers\[0\] must be a dict of exactly",
        ),
        (
            lambda: counted_generation(
                np.ones((3, 4)), [LAYER | {"W_o": np.ones((4, 3))}], n_heads=2, cache=True
            ),
            ValueError,
            r"layers\[0\]: W_o must write back to the residual stream of width d_model=4",
        ),
        (
            lambda: counted_generation(np.ones((3, 4)), [LAYER], n_heads=2, n_kv_heads=3, cache=True),
            ValueError,
            r"n_kv_heads=3 does not divide",
        ),
        (
            lambda: counted_generation(np.full((3, 4), np.nan), [LAYER], n_heads=2, cache=True),
            ValueError,
            r"X has 12 non-finite",
        ),
        (
            lambda: counted_generation(np.ones((3, 4)), [LAYER], n_heads=2, cache=1),
            TypeError,
            r"cache must be True or False",
        ),
    ],
)
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()
