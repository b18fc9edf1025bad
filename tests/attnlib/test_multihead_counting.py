"""Operation and parameter counts of multi-head attention: formula = measured."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import multi_head_error

from attnlib.counting import (
    MULTI_HEAD_STEPS,
    OPERATIONS,
    STEPS,
    counted_multi_head_attention,
    matmul_counts,
    multi_head_operation_counts,
    multi_head_parameter_counts,
    operation_counts,
)
from attnlib.multihead import multi_head_attention

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

# (n_q, n_k, d_model, d_kv, n_heads, d_k, d_v, d_out)
SHAPES = [
    (1, 1, 1, 1, 1, 1, 1, 1),
    (3, 3, 4, 4, 2, 2, 2, 4),
    (2, 5, 3, 2, 3, 1, 2, 5),
    (4, 2, 6, 5, 2, 3, 4, 1),
    (5, 4, 8, 8, 4, 2, 2, 8),
]


def weights(rng, n_q, n_k, d_model, d_kv, n_heads, d_k, d_v, d_out):
    X_q, X_kv = rng.normal(size=(n_q, d_model)), rng.normal(size=(n_k, d_kv))
    W = {
        "W_q": rng.normal(size=(d_model, n_heads * d_k)),
        "W_k": rng.normal(size=(d_kv, n_heads * d_k)),
        "W_v": rng.normal(size=(d_kv, n_heads * d_v)),
        "W_o": rng.normal(size=(n_heads * d_v, d_out)),
    }
    return X_q, X_kv, W


@pytest.mark.parametrize("stable", [True, False], ids=["stable", "textbook"])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_formula_equals_measured_and_the_counter_computes_multi_head_attention(shape, stable):
    n_q, n_k, d_model, d_kv, n_heads, d_k, d_v, d_out = shape
    X_q, X_kv, W = weights(np.random.default_rng(sum(shape)), *shape)
    out, w, measured = counted_multi_head_attention(X_q, X_kv, **W, n_heads=n_heads, stable=stable)
    formula = multi_head_operation_counts(
        n_q, n_k, d_model, n_heads=n_heads, d_k=d_k, d_v=d_v, d_kv=d_kv, d_out=d_out, stable=stable
    )
    assert list(formula.steps) == list(measured.steps) == list(MULTI_HEAD_STEPS)
    assert {s: dict(c) for s, c in formula.steps.items()} == {s: dict(c) for s, c in measured.steps.items()}
    expected_out, expected_w = multi_head_attention(X_q, X_kv, **W, n_heads=n_heads)
    bound = multi_head_error(X_q, X_kv, W, n_heads, np.float64)  # two codes: twice it
    np.testing.assert_allclose(out, expected_out, rtol=0, atol=2 * bound.output)
    np.testing.assert_allclose(w, expected_w, rtol=0, atol=2 * bound.weights)


def test_the_counts_written_out():
    n, d_model, h = 5, 8, 4
    steps = multi_head_operation_counts(n, n, d_model, n_heads=h, stable=False).steps
    assert steps["Q = X_q W_q"] == {**dict.fromkeys(OPERATIONS, 0), "multiplications": 320, "additions": 280}
    assert steps["scores Q Kᵀ"]["multiplications"] == h * n * n * (d_model // h) == 200
    assert steps["scale by 1/√d_k"]["square roots"] == h  # every head its own √d_k
    assert steps["softmax: exp and normalise"]["exponentials"] == h * n * n == 100
    assert steps["concat(heads) W_o"]["multiplications"] == n * d_model * d_model
    assert matmul_counts(2, 3, 4) == {"multiplications": 24, "additions": 16}


@pytest.mark.parametrize(("n", "d_model"), [(6, 12), (10, 64), (1, 8)])
def test_h_heads_of_width_d_model_over_h_cost_the_multiplications_of_one_head(n, d_model):
    one = multi_head_operation_counts(n, n, d_model, n_heads=1)
    for h in (h for h in range(2, d_model + 1) if d_model % h == 0):
        many = multi_head_operation_counts(n, n, d_model, n_heads=h)
        assert many.totals()["multiplications"] == one.totals()["multiplications"]
        # what does grow with h: the softmax works on h score matrices of n × n
        assert many.totals()["exponentials"] == h * one.totals()["exponentials"]
    single = operation_counts(n, n, d_model, d_model)
    for step in STEPS:
        assert one.steps[step] == single.steps[step]


def test_parameter_counts():
    assert multi_head_parameter_counts(512, n_heads=8) == {
        "W_q": 512 * 512,
        "W_k": 512 * 512,
        "W_v": 512 * 512,
        "W_o": 512 * 512,
        "total": 4 * 512 * 512,
    }
    counts = multi_head_parameter_counts(6, n_heads=2, d_k=4, d_v=3, d_kv=5, d_out=7)
    _, _, W = weights(np.random.default_rng(0), 1, 1, 6, 5, 2, 4, 3, 7)
    assert {name: counts[name] for name in W} == {name: W[name].size for name in W}
    assert counts["total"] == sum(W[name].size for name in W)


@pytest.mark.parametrize(("d_model", "n_heads", "kdim"), [(8, 2, None), (12, 3, 5), (6, 6, None), (4, 1, 7)])
def test_parameter_count_equals_pytorch(d_model, n_heads, kdim):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, kdim=kdim, vdim=kdim)
    measured = sum(p.numel() for p in mha.parameters())
    assert multi_head_parameter_counts(d_model, n_heads=n_heads, d_kv=kdim)["total"] == measured


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: multi_head_operation_counts(3, 3, 6, n_heads=4), ValueError, "n_heads=4"),
        (lambda: multi_head_operation_counts(3, 3, 6, n_heads=0), ValueError, "n_heads"),
        (lambda: multi_head_operation_counts(3, 3, 6, n_heads=True), TypeError, "n_heads"),
        (lambda: multi_head_operation_counts(0, 3, 6, n_heads=2), ValueError, "n_q"),
        (lambda: multi_head_parameter_counts(6, n_heads=2.5), TypeError, "n_heads"),
        (lambda: multi_head_parameter_counts(6, n_heads=2, d_k=0), ValueError, "d_k"),
        (lambda: matmul_counts(2, 0, 3), ValueError, "m"),
    ],
)
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"X_q": np.ones((2, 2, 4))}, "X_q"),
        ({"W_q": np.ones((3, 4))}, "W_q"),
        ({"W_q": np.ones((4, 3)), "W_k": np.ones((4, 3))}, "W_q"),
        ({"W_k": np.ones((4, 2))}, "W_k"),
        ({"W_o": np.ones((3, 4))}, "W_o"),
        ({"n_heads": 0}, "n_heads"),
    ],
)
def test_counter_names_bad_arguments(change, words):
    args = {"X_q": np.ones((3, 4)), "X_kv": np.ones((3, 4)), "n_heads": 2}
    args |= {name: np.ones((4, 4)) for name in ("W_q", "W_k", "W_v", "W_o")}
    with pytest.raises(ValueError, match=words):
        counted_multi_head_attention(**(args | change))


# --- grouped-query attention: n_kv_heads ----------------------------------------------------------

# (n_q, n_k, d_model, d_kv, n_heads, n_kv_heads, d_k, d_v, d_out)
GQA_SHAPES = [
    (3, 3, 4, 4, 2, 1, 2, 2, 4),
    (2, 5, 3, 2, 4, 2, 1, 2, 5),
    (4, 2, 6, 5, 6, 3, 2, 1, 3),
    (3, 4, 8, 8, 4, 1, 2, 2, 8),
]


@pytest.mark.parametrize("shape", GQA_SHAPES, ids=["x".join(map(str, s)) for s in GQA_SHAPES])
def test_grouped_formula_equals_measured_and_the_counter_computes_grouped_attention(shape):
    n_q, n_k, d_model, d_kv, n_heads, n_kv_heads, d_k, d_v, d_out = shape
    rng = np.random.default_rng(sum(shape))
    X_q, X_kv = rng.normal(size=(n_q, d_model)), rng.normal(size=(n_k, d_kv))
    W = {
        "W_q": rng.normal(size=(d_model, n_heads * d_k)),
        "W_k": rng.normal(size=(d_kv, n_kv_heads * d_k)),
        "W_v": rng.normal(size=(d_kv, n_kv_heads * d_v)),
        "W_o": rng.normal(size=(n_heads * d_v, d_out)),
    }
    out, w, measured = counted_multi_head_attention(X_q, X_kv, **W, n_heads=n_heads, n_kv_heads=n_kv_heads)
    formula = multi_head_operation_counts(
        n_q, n_k, d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, d_k=d_k, d_v=d_v, d_kv=d_kv, d_out=d_out
    )
    assert {s: dict(c) for s, c in formula.steps.items()} == {s: dict(c) for s, c in measured.steps.items()}
    expected_out, expected_w = multi_head_attention(X_q, X_kv, **W, n_heads=n_heads, n_kv_heads=n_kv_heads)
    bound = multi_head_error(X_q, X_kv, W, n_heads, np.float64, n_kv_heads=n_kv_heads)  # two codes
    np.testing.assert_allclose(out, expected_out, rtol=0, atol=2 * bound.output)
    np.testing.assert_allclose(w, expected_w, rtol=0, atol=2 * bound.weights)
    counts = multi_head_parameter_counts(
        d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, d_k=d_k, d_v=d_v, d_kv=d_kv, d_out=d_out
    )
    assert {name: counts[name] for name in W} == {name: W[name].size for name in W}


def test_grouped_heads_shrink_only_the_key_and_value_projections():
    plain = multi_head_operation_counts(16, 16, 64, n_heads=8)
    grouped = multi_head_operation_counts(16, 16, 64, n_heads=8, n_kv_heads=2)
    for step in MULTI_HEAD_STEPS:
        shrinks = step in ("K = X_kv W_k", "V = X_kv W_v")
        assert (grouped.steps[step] == plain.steps[step]) != shrinks, step
    assert (
        grouped.steps["K = X_kv W_k"]["multiplications"] * 4 == plain.steps["K = X_kv W_k"]["multiplications"]
    )
    assert multi_head_parameter_counts(64, n_heads=8, n_kv_heads=2)["total"] == 2 * 64**2 + 2 * 64**2 // 4
    assert multi_head_parameter_counts(64, n_heads=8, n_kv_heads=None) == multi_head_parameter_counts(
        64, n_heads=8
    )


@pytest.mark.parametrize(("d_model", "n_heads", "n_kv_heads"), [(64, 8, 2), (48, 4, 1), (32, 4, 4)])
def test_grouped_parameter_count_equals_a_llama_attention_layer(d_model, n_heads, n_kv_heads):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
    config = transformers.LlamaConfig(
        hidden_size=d_model, num_attention_heads=n_heads, num_key_value_heads=n_kv_heads, num_hidden_layers=1
    )
    with torch.device("meta"):
        layer = transformers.models.llama.modeling_llama.LlamaAttention(config, layer_idx=0)
    measured = sum(p.numel() for p in layer.parameters())
    assert multi_head_parameter_counts(d_model, n_heads=n_heads, n_kv_heads=n_kv_heads)["total"] == measured


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: multi_head_operation_counts(3, 3, 8, n_heads=4, n_kv_heads=3),
            ValueError,
            "n_kv_heads=3 does not",
        ),
        (
            lambda: multi_head_parameter_counts(8, n_heads=4, n_kv_heads=0),
            ValueError,
            "n_kv_heads must be at",
        ),
        (
            lambda: multi_head_parameter_counts(8, n_heads=4, n_kv_heads=2.0),
            TypeError,
            "n_kv_heads must be a",
        ),
        (
            lambda: counted_multi_head_attention(
                *[np.ones((2, 4))] * 2, *[np.ones((4, 4))] * 4, n_heads=2, n_kv_heads=4
            ),
            ValueError,
            "n_kv_heads=4 does not divide n_heads=2",
        ),
    ],
)
def test_grouped_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()
