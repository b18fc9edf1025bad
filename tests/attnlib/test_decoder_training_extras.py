"""attnlib.decoder's training extras for lesson 18: dropout (its statistics, its backward pass
against finite differences and PyTorch, the whole decoder's gradient through it) and float32
(it stays float32 end to end, within a bound from the rounding of the float64 results)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnlib.backward import attention_backward
from attnlib.decoder import (
    DecoderConfig,
    check_parameters,
    dropout,
    dropout_backward,
    forward,
    generate,
    init_parameters,
    loss_and_gradients,
    next_token_losses,
    train,
)
from attnlib.decoder.forward_pass import forward_steps

U32 = 2.0**-24  # float32's unit roundoff

CONFIGS = {
    "rope": DecoderConfig(
        vocab_size=11, n_ctx=8, d_model=16, n_heads=4, n_layers=2, d_mlp=24, layer_norm=True, positions="rope"
    ),
    "residual+gqa": DecoderConfig(
        vocab_size=11, n_ctx=8, d_model=16, n_heads=4, n_layers=2, d_mlp=24, layer_norm=True, n_kv_heads=2
    ),
    "attention-only, positions in attention": DecoderConfig(
        vocab_size=11, n_ctx=8, d_model=16, n_heads=2, n_layers=2, positions="attention"
    ),
}


def setup(config, seed, dtype=np.float64, batch=3):
    """Parameters at their initial scale, gains and biases moved off 1 and 0 (so their gradients are
    tested), in ``dtype``; and tokens."""
    rng = np.random.default_rng(seed)
    params = init_parameters(config, seed)
    for name, value in params.items():
        if name.endswith((".gain", ".bias")) or ".b_" in name:
            params[name] = value + 0.3 * rng.normal(size=value.shape)
    tokens = rng.integers(0, config.vocab_size, size=(batch, config.n_ctx))
    return {name: value.astype(dtype) for name, value in params.items()}, tokens


# --- dropout, alone ---------------------------------------------------------------------------


def test_rate_0_is_the_identity_and_draws_nothing():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    before = rng.bit_generator.state
    out, keep = dropout(x, 0.0, rng)
    assert out is x and keep.dtype == bool and keep.shape == x.shape and keep.all()
    assert rng.bit_generator.state == before
    assert dropout(x, 0, None)[0] is x  # no generator needed when nothing is drawn
    np.testing.assert_array_equal(dropout_backward(x, keep, 0.0), x)


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.9])
def test_the_kept_fraction_is_binomial_and_the_rest_scaled(rate):
    x = np.full((1000, 1000), 3.0, dtype=np.float32)
    out, keep = dropout(x, rate, np.random.default_rng(2))
    # N = 10⁶ independent draws kept with chance 1 − rate: within 5 standard deviations
    N = x.size
    assert abs(keep.mean() - (1 - rate)) <= 5 * math.sqrt(rate * (1 - rate) / N)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out[~keep], 0.0)
    np.testing.assert_array_equal(out[keep], np.float32(3.0) / np.float32(1 - rate))


@pytest.mark.parametrize("rate", [0.2, 0.7])
def test_the_expected_value_is_kept(rate):
    x = np.random.default_rng(3).normal(size=40)
    draws = 20_000
    out, _ = dropout(np.broadcast_to(x, (draws, 40)), rate, np.random.default_rng(4))
    # each entry is x/(1 − rate) with chance 1 − rate, else 0: mean x, variance x² rate/(1 − rate)
    sd = np.abs(x) * math.sqrt(rate / (1 - rate) / draws)
    assert (np.abs(out.mean(axis=0) - x) <= 5 * sd).all()


def test_dropout_backward_is_the_slope_with_the_mask_fixed():
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(2, 4, 6))
    rate, seed = 0.4, 6

    def f(x):  # the same seed draws the same mask whatever x holds
        return float((w * dropout(x, rate, np.random.default_rng(seed))[0]).sum())

    _, keep = dropout(x, rate, np.random.default_rng(seed))
    assert 0 < keep.sum() < keep.size
    grad = dropout_backward(w, keep, rate)
    # f is linear in x: a central difference with any step h is its slope, but for the rounding of
    # f, within γ_26·Σ|terms| of the exact value (Higham §3.1: x ± h, the division and the product,
    # then a sum of 24 terms); with h = 1 the terms are at most |w|(|x| + 1)/(1 − rate)
    h = 1.0
    tolerance = 2 * 26 * 2**-53 * (np.abs(w) * (np.abs(x) + h) / (1 - rate)).sum() / (2 * h)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = h
        slope = (f(x + step) - f(x - step)) / (2 * h)
        assert abs(slope - grad[index]) <= tolerance, index
    np.testing.assert_array_equal(grad[~keep], 0.0)


@pytest.mark.reference
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dropout_backward_is_torchs_gradient(dtype):
    torch = pytest.importorskip(
        "torch",
        reason="PyTorch is not installed; install it with: .venv/bin/pip install -r requirements-torch.txt",
    )
    F = torch.nn.functional
    rng = np.random.default_rng(7)
    x = (0.5 + rng.random((5, 7, 9))).astype(dtype)  # no zero entries: torch's zeros are its mask
    d_out = rng.normal(size=x.shape).astype(dtype)
    p = 0.3
    # torch's own dropout: its mask read from its output
    torch.manual_seed(0)
    xt = torch.tensor(x, requires_grad=True)
    out = F.dropout(xt, p=p, training=True)
    out.backward(torch.from_numpy(d_out))
    keep = (out != 0).numpy()
    assert 0 < keep.mean() < 1
    # torch multiplies by 1/(1 − p) rounded, we divide by 1 − p: at most 2 roundings apart
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(dropout_backward(d_out, keep, p), xt.grad.numpy(), rtol=2 * eps, atol=0)
    np.testing.assert_allclose(x * keep / (1 - p), out.detach().numpy(), rtol=2 * eps, atol=0)
    # the same mask through autograd as x·mask/(1 − p): the same roundings as ours, bit for bit
    xt = torch.tensor(x, requires_grad=True)
    (xt * torch.from_numpy(keep) / (1 - p)).backward(torch.from_numpy(d_out))
    np.testing.assert_array_equal(dropout_backward(d_out, keep, p), xt.grad.numpy())


# --- dropout in the decoder ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["rope", "residual+gqa", "attention-only, positions in attention"])
def test_the_masks_are_drawn_at_nanogpts_places_in_the_order_of_the_pass(kind):
    config = CONFIGS[kind]
    params, tokens = setup(config, 8)
    rate = 0.25
    run = forward_steps(config, params, tokens, dropout=rate, rng=np.random.default_rng(9))
    again = np.random.default_rng(9)
    shape = (*tokens.shape, config.d_model)
    places = 1 + config.n_layers * (2 if config.d_mlp else 1)  # the embeddings, each attention and MLP
    expected = [again.random(shape) >= rate for _ in range(places)]
    got = [run.embed_keep] + [
        keep for layer in run.layers for keep in (layer.attn_keep, layer.mlp_keep) if keep is not None
    ]
    assert len(got) == places
    for mask, drawn in zip(got, expected, strict=True):
        np.testing.assert_array_equal(mask, drawn)
    embedded = params["embed"][tokens]
    if config.positions == "residual":
        embedded = embedded + params["pos_embed"][: tokens.shape[1]]
    np.testing.assert_array_equal(run.residuals[0], embedded * run.embed_keep / (1 - rate))


def test_without_dropout_nothing_changes():
    config = CONFIGS["rope"]
    params, tokens = setup(config, 10)
    loss, grads = loss_and_gradients(config, params, tokens)
    rng = np.random.default_rng(11)
    before = rng.bit_generator.state
    loss0, grads0 = loss_and_gradients(config, params, tokens, dropout=0.0, rng=rng)
    assert rng.bit_generator.state == before  # nothing drawn
    assert loss0 == loss
    for name, grad in grads.items():
        np.testing.assert_array_equal(grads0[name], grad, err_msg=name)
    # inference never drops: every mask of its pass keeps everything
    run = forward_steps(config, params, tokens)
    assert run.embed_keep.all() and all(k.attn_keep.all() and k.mlp_keep.all() for k in run.layers)
    np.testing.assert_array_equal(forward(config, params, tokens).logits, run.logits)


@pytest.mark.parametrize("kind", ["rope", "residual+gqa"])
def test_the_decoders_gradient_with_dropout_is_the_slope_with_the_masks_fixed(kind):
    config = DecoderConfig(
        **{**dataclasses.asdict(CONFIGS[kind]), "d_model": 8, "n_heads": 2, "n_kv_heads": None}
    )
    params, tokens = setup(config, 12, batch=2)
    rate, seed = 0.3, 13

    def loss(p):  # the same seed draws the same masks at every call
        return loss_and_gradients(config, p, tokens, dropout=rate, rng=np.random.default_rng(seed))

    value, grads = loss(params)
    assert value != loss_and_gradients(config, params, tokens)[0]  # the masks matter
    rng = np.random.default_rng(14)
    eps = 1e-6
    for name, array in params.items():
        for _ in range(3):  # three entries of every parameter
            index = tuple(int(rng.integers(0, size)) for size in array.shape)
            moved = []
            for sign in (1, -1):
                p = {**params, name: array.copy()}
                p[name][index] += sign * eps
                moved.append(loss(p)[0])
            slope = (moved[0] - moved[1]) / (2 * eps)
            # each loss (about 2.7) rounds within a few u = 1.1e-16 of its value: over 2ε, a few
            # times u·L/ε ≈ 3e-10 (6e-10 measured); the truncation ε²·L'''/6 is far smaller
            assert grads[name][index] == pytest.approx(slope, abs=1e-8), f"{name}{index}"


def test_train_with_dropout():
    config = CONFIGS["rope"]

    def batches(rng):
        return rng.integers(0, config.vocab_size, size=(2, config.n_ctx))

    plain = train(config, batches, steps=3, seed=1)
    again = train(config, batches, steps=3, seed=1, dropout=0.0)
    np.testing.assert_array_equal(again.losses, plain.losses)
    for name, value in plain.params.items():
        np.testing.assert_array_equal(again.params[name], value, err_msg=name)
    dropped = train(config, batches, steps=3, seed=1, dropout=0.5)
    assert dropped.losses[0] != plain.losses[0]  # the same first batch, through masks
    assert not np.array_equal(dropped.params["unembed"], plain.params["unembed"])


@pytest.mark.parametrize(
    ("rate", "error", "message"),
    [
        (1.0, ValueError, r"dropout is the chance that an entry is dropped: at least 0 and below 1, got 1.0"),
        (-0.1, ValueError, r"dropout is the chance .* got -0.1"),
        (float("nan"), ValueError, r"dropout must be a finite number, got nan"),
        (True, TypeError, r"dropout must be a real number such as 0.1, got True"),
        ("0.1", TypeError, r"dropout must be a real number"),
    ],
)
def test_a_bad_rate_is_named(rate, error, message):
    config = CONFIGS["rope"]
    params, tokens = setup(config, 15)
    rng = np.random.default_rng(0)
    with pytest.raises(error, match=message):
        loss_and_gradients(config, params, tokens, dropout=rate, rng=rng)
    with pytest.raises(error, match=message):
        train(config, [tokens], steps=1, dropout=rate)
    with pytest.raises(error, match=message.replace("dropout", "rate")):
        dropout(np.ones(3), rate, rng)
    with pytest.raises(error, match=message.replace("dropout", "rate")):
        dropout_backward(np.ones(3), np.ones(3, dtype=bool), rate)


def test_dropout_needs_a_generator():
    config = CONFIGS["rope"]
    params, tokens = setup(config, 16)
    with pytest.raises(
        ValueError, match=r"dropout=0.1 draws its masks with rng: pass rng=np.random.default_rng"
    ):
        loss_and_gradients(config, params, tokens, dropout=0.1)
    with pytest.raises(TypeError, match=r"rng must be a numpy.random.Generator .*, got 42"):
        loss_and_gradients(config, params, tokens, dropout=0.1, rng=42)
    with pytest.raises(ValueError, match=r"rate=0.5 draws its masks with rng"):
        dropout(np.ones(3), 0.5, None)
    with pytest.raises(ValueError, match=r"keep must be dropout's boolean mask, of d_out's shape \(3,\)"):
        dropout_backward(np.ones(3), np.ones(3), 0.5)
    with pytest.raises(ValueError, match=r"keep must be dropout's boolean mask"):
        dropout_backward(np.ones(3), np.ones(4, dtype=bool), 0.5)


# --- float32 --------------------------------------------------------------------------------------


def test_float32_parameters_are_the_float64_draws_rounded():
    config = CONFIGS["rope"]
    wide, narrow = init_parameters(config, 3), init_parameters(config, 3, dtype=np.float32)
    assert init_parameters(config, 3, dtype="float32").keys() == narrow.keys() == wide.keys()
    for name, value in wide.items():
        assert narrow[name].dtype == np.float32
        np.testing.assert_array_equal(narrow[name], value.astype(np.float32), err_msg=name)
    for bad in (np.float16, np.int64, np.complex128, None, "nonsense"):
        with pytest.raises(ValueError, match=r"dtype must be np\.float32 or np\.float64"):
            init_parameters(config, dtype=bad)


def test_check_parameters_keeps_float32_only_when_every_parameter_is():
    config = CONFIGS["rope"]
    wide, narrow = init_parameters(config), init_parameters(config, dtype=np.float32)
    assert {a.dtype for a in check_parameters(config, narrow).values()} == {np.dtype(np.float32)}
    mixed = check_parameters(config, {**narrow, "unembed": wide["unembed"]})
    assert {a.dtype for a in mixed.values()} == {np.dtype(np.float64)}
    as_lists = {name: value.tolist() for name, value in narrow.items()}
    assert {a.dtype for a in check_parameters(config, as_lists).values()} == {np.dtype(np.float64)}


def arrays_in(obj, path="run"):
    """Every array a ForwardSteps holds, by where it sits (its layers', their attention steps')."""
    if isinstance(obj, np.ndarray):
        yield path, obj
    elif dataclasses.is_dataclass(obj):
        for field in dataclasses.fields(obj):
            yield from arrays_in(getattr(obj, field.name), f"{path}.{field.name}")
    elif isinstance(obj, tuple | list):
        for i, item in enumerate(obj):
            yield from arrays_in(item, f"{path}[{i}]")


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_float32_stays_float32_end_to_end(kind):
    config = CONFIGS[kind]
    params, tokens = setup(config, 17, np.float32)
    run = forward_steps(config, params, tokens, dropout=0.2, rng=np.random.default_rng(0))
    floats = [(path, a.dtype) for path, a in arrays_in(run) if a.dtype.kind == "f"]
    assert floats and all(dtype == np.float32 for _, dtype in floats), [
        f for f in floats if f[1] != np.float32
    ]
    loss, grads = loss_and_gradients(config, params, tokens, dropout=0.2, rng=np.random.default_rng(0))
    assert isinstance(loss, float) and math.isfinite(loss)
    assert {name: g.dtype for name, g in grads.items()} == {name: np.dtype(np.float32) for name in params}
    out = forward(config, params, tokens, window=3, sinks=1)
    assert {a.dtype for a in (out.logits, out.weights, out.residuals, out.head_outputs)} == {
        np.dtype(np.float32)
    }
    assert next_token_losses(config, params, tokens).dtype == np.float32
    assert generate(config, params, tokens[:, :2], 3, window=3, sinks=1).shape == (3, 5)
    # the attention's backward pass alone (lesson 11's) keeps float32 too
    Q, K, V, dZ = np.random.default_rng(1).normal(size=(4, 2, 5, 3)).astype(np.float32)
    assert {g.dtype for g in attention_backward(Q, K, V, dZ, causal=True)} == {np.dtype(np.float32)}


def rounding_paths(config: DecoderConfig, batch: int, n: int, scores: list[float]) -> tuple[float, float]:
    """Σ √m over the float32 sums of m terms on a value's path: to the logits, and on to a gradient.

    Forward, each layer sums d_model terms in its LayerNorm's mean and variance, in the query, key
    and value projections and in ``W_o`` (``n_heads·d_head = d_model`` terms), d_head in a score,
    n in weights·values; its MLP another LayerNorm, d_model in ``W_in``, d_mlp in ``W_out``; then
    the final LayerNorm and the unembedding. The softmax turns a score's absolute error into its
    weight's relative error, twice (the score and its row's largest both carry it), and a score of
    size S carries the relative errors of its query and key as an absolute error S times larger:
    the sums on the way to a score (the LayerNorm, the query and key projections, the score's own)
    count ``1 + 2S`` times, S the layer's largest ``|score|`` (``scores[layer]``). Backward, the
    same path reversed: vocab terms in the softmax's normaliser and in ``d_logits · unembedᵀ``; in
    each layer the LayerNorms' two means, d_model and d_mlp terms through the MLP, d_model in
    ``dz``, n in ``dV``, d_head in ``dA``, n in the softmax's row sum, in ``dQ`` and in ``dK``,
    d_model in the layer input's gradient, and ``batch·n`` in every weight's gradient, a sum over
    all positions.
    """
    d, ln = config.d_model, [config.d_model] * 2 if config.layer_norm else []
    root_sum = lambda sums: sum(math.sqrt(m) for m in sums)  # noqa: E731
    mlp = [*ln, d, config.d_mlp] if config.d_mlp else []
    to_logits = sum((1 + 2 * S) * root_sum([*ln, d, d, config.d_head]) for S in scores)  # to the scores
    to_logits += config.n_layers * root_sum([d, n, d, *mlp]) + root_sum([*ln, d])  # V, A·V, W_o, MLP; out
    back_mlp = [*ln, d, config.d_mlp, batch * n] if config.d_mlp else []
    back_attn = [*ln, d, n, config.d_head, n, n, n, d, batch * n]
    to_grads = [config.vocab_size] * 2 + ln + config.n_layers * (back_mlp + back_attn) + [batch * n]
    return to_logits, to_logits + root_sum(to_grads)


@pytest.mark.reference
@pytest.mark.parametrize("kind", list(CONFIGS))
@pytest.mark.parametrize(("seed", "scale"), [(0, 1.0), (1, 1.0), (2, 3.0)])
def test_float32_agrees_with_float64_within_the_rounding_bound(kind, seed, scale):
    """The same parameters (float32 numbers, exact in float64), the same dropout masks, both dtypes;
    ``scale`` multiplies the query and key weights (3: scores up to ten times those at the start).

    The bound follows :func:`attnlib.model.llama.float32_tolerance`: a float32 sum of m terms is
    within about √m·u of the exact sum, relative to its terms (u = 2⁻²⁴; Higham and Mary 2019),
    and the errors of the sums on a value's path (:func:`rounding_paths`, with the softmax's
    amplification) add, to first order, as if none ever cancelled another, relative to the largest
    entry of what is compared: ``u · Σ√m · max|exact|``. The float64 result is exact to 10⁻¹⁶, so
    the bound is not doubled. The loss is within twice the logits' bound (the target's logit and
    the log-sum-exp) and the sums over the vocabulary and over the positions.
    """
    config = CONFIGS[kind]
    params, tokens = setup(config, 18 + seed, np.float32)
    for name in params:
        if name.endswith(("W_q", "W_k")):
            params[name] = params[name] * np.float32(scale)
    wide = {name: value.astype(np.float64) for name, value in params.items()}
    batch, n = tokens.shape

    def masks():  # the same masks in both dtypes: they are drawn in float64 either way
        return {"dropout": 0.2, "rng": np.random.default_rng(seed)}

    exact = forward_steps(config, wide, tokens, **masks())
    scores = [float(np.abs(k.steps.scaled_scores).max()) for k in exact.layers]
    to_logits, to_grads = rounding_paths(config, batch, n, scores)
    logits = forward_steps(config, params, tokens, **masks()).logits
    assert np.abs(logits - exact.logits).max() <= U32 * to_logits * np.abs(exact.logits).max()

    loss32, grads32 = loss_and_gradients(config, params, tokens, **masks())
    loss64, grads64 = loss_and_gradients(config, wide, tokens, **masks())
    loss_bound = U32 * (2 * to_logits + math.sqrt(config.vocab_size) + math.sqrt(batch * n))
    assert abs(loss32 - loss64) <= loss_bound * max(np.abs(exact.logits).max(), loss64)
    for name, grad in grads64.items():
        assert np.abs(grads32[name] - grad).max() <= U32 * to_grads * np.abs(grad).max(), name
