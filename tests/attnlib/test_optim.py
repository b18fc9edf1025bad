"""attnlib.optim on cases worked by hand: Adam's first step moves every entry by the learning rate,
weight decay alone shrinks by ``1 − lr·wd``, the schedule's edges, clipping, nanoGPT's decay rule,
dtypes, and the errors a learner meets. ``test_optim_reference.py`` compares with PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlib.optim import AdamW, adamw_step, clip_by_global_norm, decays, global_norm, learning_rate_at
from attnlib.training import Adam

LR, EPS = 0.1, 1e-8


def test_the_first_step_moves_each_entry_by_the_learning_rate_against_its_gradient():
    W, g = np.array([1.0, -2.0, 3.0, 0.5]), np.array([1e-3, -5.0, 0.0, 2.0])
    stepped, m, v = adamw_step(W, g, np.zeros(4), np.zeros(4), 1, learning_rate=LR, weight_decay=0.0)
    # m̂ = g and v̂ = g², so the step is lr·g/(|g| + ε): lr·sign(g) less lr·ε/|g| (1e-6 at |g| = 1e-3)
    np.testing.assert_allclose(stepped, W - LR * np.sign(g), rtol=0, atol=LR * EPS / 1e-3)
    assert stepped[2] == W[2]  # no gradient, no step
    # 1 − β as a float: fl(0.999) is off by up to 1.1e-16, which is 1.1e-13 of 0.001
    np.testing.assert_allclose(m, 0.1 * g, rtol=1.2e-13)
    np.testing.assert_allclose(v, 0.001 * g * g, rtol=1.2e-13)
    assert W[0] == 1.0 and g[1] == -5.0  # the given arrays are not changed


def test_a_constant_gradient_keeps_moving_by_the_learning_rate():
    # with g constant, m = (1 − β₁ᵗ) g and v = (1 − β₂ᵗ) g²: the bias corrections give m̂ = g, v̂ = g²
    optimiser, params = AdamW(LR, weight_decay=0.0), {"b": np.array([0.0, 0.0])}
    for step in range(1, 6):
        params = optimiser.step(params, {"b": np.array([3.0, -0.5])})
        # each step is lr·|g|/(|g| + ε): short of lr by lr·ε/|g|, 2e-8 of it at |g| = 0.5
        np.testing.assert_allclose(params["b"], [-LR * step, LR * step], rtol=EPS / 0.5 + 1e-14)
    assert optimiser.t == 5 and set(optimiser.m) == set(optimiser.v) == {"b"}


def test_weight_decay_alone_shrinks_by_one_minus_lr_times_wd():
    W = np.array([[2.0, -4.0], [0.5, 0.0]])
    stepped, m, v = adamw_step(W, np.zeros_like(W), np.zeros_like(W), np.zeros_like(W), 1, learning_rate=LR)
    np.testing.assert_array_equal(stepped, W * (1 - LR * 0.01))
    assert not m.any() and not v.any()


def test_adamw_decays_the_matrices_only_and_a_rule_may_choose_by_name():
    params = {"embed": np.ones((3, 2)), "W_q": np.ones((2, 2)), "ln.gain": np.ones(2), "b": np.ones(2)}
    zeros = {name: np.zeros_like(p) for name, p in params.items()}
    stepped = AdamW(LR, weight_decay=0.5).step(params, zeros)
    assert {name: float(p.flat[0]) for name, p in stepped.items()} == {
        "embed": 0.95, "W_q": 0.95, "ln.gain": 1.0, "b": 1.0
    }  # fmt: skip
    by_name = AdamW(LR, weight_decay=0.5, decays=lambda name, array: name == "b").step(params, zeros)
    assert {name: float(p.flat[0]) for name, p in by_name.items()} == {
        "embed": 1.0, "W_q": 1.0, "ln.gain": 1.0, "b": 0.95
    }  # fmt: skip


def test_decays_is_nanogpts_rule_two_axes_or_more():
    assert decays("wte", np.zeros((50, 8))) and decays("W", np.zeros((2, 3, 4)))
    assert not decays("ln_f.weight", np.zeros(8)) and not decays("bias", np.zeros(3))


def test_a_learning_rate_given_to_step_holds_for_that_step_only():
    optimiser, g = AdamW(LR, weight_decay=0.0), {"w": np.array([1.0])}
    params = optimiser.step({"w": np.array([0.0])}, g, learning_rate=0.5)
    np.testing.assert_allclose(params["w"], [-0.5], rtol=1e-7)
    np.testing.assert_allclose(optimiser.step(params, g)["w"], [-0.5 - LR], rtol=1e-7)
    assert optimiser.learning_rate == LR
    assert optimiser.step(params, g, learning_rate=0.0)["w"] == params["w"]  # a schedule's floor of 0


def test_adam_is_adamw_without_decay_bit_for_bit():
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    adam, adamw, ours = Adam(0.05), AdamW(0.05, weight_decay=0.0), dict(params)
    for _ in range(10):
        grads = {name: rng.normal(size=p.shape) for name, p in params.items()}
        params, ours = adam.step(params, grads), adamw.step(ours, grads)
        for name in params:
            np.testing.assert_array_equal(params[name], ours[name])
            np.testing.assert_array_equal(adam.m[name], adamw.m[name])
            np.testing.assert_array_equal(adam.v[name], adamw.v[name])


def test_float32_stays_float32_and_integers_are_computed_as_float64():
    W = np.ones((2, 2), np.float32)
    assert all(a.dtype == np.float32 for a in adamw_step(W, W, W, W, 3, learning_rate=np.float64(0.1)))
    stepped = AdamW(weight_decay=0.1).step({"W": W, "b": W[0]}, {"W": W, "b": W[0]}, learning_rate=0.01)
    assert {a.dtype for a in stepped.values()} == {np.dtype(np.float32)}
    clipped, _ = clip_by_global_norm({"W": W * 100}, 1.0)
    assert clipped["W"].dtype == np.float32
    assert adamw_step([1, 2], [1, -1], [0, 0], [0, 0], 1, learning_rate=1)[0].dtype == np.float64


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (0, 0.25),  # peak · (0 + 1) / 4
        (2, 0.75),
        (3, 1.0),  # the end of the warmup reaches the peak …
        (4, 1.0),  # … where the cosine starts
        (8, 0.55),  # halfway down: floor + ½ (peak − floor)
        (11, 0.1 + 0.45 * (1 + math.cos(math.pi * 7 / 8))),
        (12, 0.1),  # the floor at total …
        (1000, 0.1),  # … and after
    ],
)
def test_the_schedule_warms_up_linearly_then_follows_a_cosine_to_the_floor(step, expected):
    lr = learning_rate_at(step, peak=1.0, warmup=4, total=12, floor=0.1)
    assert lr == pytest.approx(expected, rel=0, abs=1e-15)  # a few roundings of numbers up to 1


def test_the_schedule_without_warmup_starts_at_the_peak_and_a_floor_at_the_peak_is_constant():
    assert learning_rate_at(0, peak=3e-4, warmup=0, total=10) == 3e-4
    assert learning_rate_at(10, peak=3e-4, warmup=0, total=10) == 0.0
    assert {learning_rate_at(s, peak=0.5, warmup=2, total=5, floor=0.5) for s in range(2, 9)} == {0.5}


def test_global_norm_is_the_norm_of_every_entry_together():
    assert global_norm({"a": np.array([3.0, 4.0]), "b": np.array([[12.0]])}) == 13.0
    assert global_norm({"big": np.full(4, 1e20, np.float32)}) == pytest.approx(2e20)  # no float32 overflow
    assert global_norm({}) == 0.0


def test_clipping_leaves_small_gradients_and_scales_large_ones_to_max_norm():
    small = {"a": np.array([3.0, 4.0]), "b": np.array([0.0])}
    clipped, norm = clip_by_global_norm(small, 5.5)
    assert norm == 5.0 and all(np.array_equal(clipped[k], small[k]) for k in small)
    assert clipped["a"] is not small["a"]  # new arrays
    large = {"a": np.array([30.0, 40.0]), "b": np.array([[0.0, -120.0]])}  # norm 130
    clipped, norm = clip_by_global_norm(large, 1.3)
    assert norm == 130.0
    np.testing.assert_allclose(clipped["a"], [0.3, 0.4], rtol=1e-8)  # coef = 1.3 / (130 + 1e-6)
    assert global_norm(clipped) == pytest.approx(1.3, rel=1e-8) and global_norm(clipped) < 1.3
    assert large["a"][0] == 30.0  # the given arrays are not changed


P, G = {"layer0.W_q": np.ones((2, 3)), "b": np.ones(3)}, {"layer0.W_q": np.ones((2, 3)), "b": np.ones(3)}


def with_entry(grads, name, value):
    changed = {k: v.copy() for k, v in grads.items()}
    changed[name].flat[1] = value
    return changed


BAD = {
    "names": (lambda: AdamW().step(P, {"layer0.W_q": G["layer0.W_q"], "c": G["b"]}), ValueError,
              r"grads must name the same arrays as params: only in params \['b'\], only in grads \['c'\]"),
    "shape": (lambda: AdamW().step(P, {**G, "layer0.W_q": np.ones((3, 2))}), ValueError,
              r"grads\['layer0.W_q'\] has shape \(3, 2\) but params\['layer0.W_q'\] has shape \(2, 3\)"),
    "dtype": (lambda: AdamW().step(P, {**G, "b": np.ones(3, np.float32)}), TypeError,
              r"grads\['b'\] has dtype float32 but params\['b'\] has dtype float64"),
    "nan": (lambda: AdamW().step(P, with_entry(G, "layer0.W_q", np.nan)), ValueError,
            r"grads\['layer0.W_q'\] has 1 non-finite entry; the first is NaN at index \(0, 1\)"),
    "inf": (lambda: clip_by_global_norm(with_entry(G, "b", -np.inf), 1.0), ValueError,
            r"grads\['b'\] has 1 non-finite entry; the first is -inf"),
    "not a dict": (lambda: global_norm([np.ones(2)]), TypeError, "grads must be a dict of arrays by name"),
    "lr 0": (lambda: AdamW(0.0), ValueError, r"learning_rate must be above 0\.0, got 0\.0"),
    "lr nan": (lambda: AdamW(float("nan")), ValueError, "learning_rate must be a finite number, got nan"),
    "lr text": (lambda: AdamW("1e-3"), TypeError, "learning_rate must be a real number"),
    "step lr": (lambda: AdamW().step(P, G, learning_rate=-1e-3), ValueError,
                r"learning_rate must be at least 0\.0, got -0\.001"),
    "beta1": (lambda: AdamW(beta1=1.0), ValueError, r"beta1 must lie in \[0, 1\) .*got 1\.0"),
    "beta2": (lambda: adamw_step(P["b"], G["b"], G["b"], G["b"], 1, learning_rate=LR, beta2=-0.1),
              ValueError, r"beta2 must lie in \[0, 1\)"),
    "eps": (lambda: AdamW(eps=0), ValueError, r"eps must be above 0\.0, got 0"),
    "weight_decay": (lambda: AdamW(weight_decay=-0.1), ValueError, r"weight_decay must be at least 0\.0"),
    "decays": (lambda: AdamW(decays=True), TypeError, "decays must be a function"),
    "step 0": (lambda: adamw_step(P["b"], G["b"], G["b"], G["b"], 0, learning_rate=LR), ValueError,
               "step must be at least 1, got 0"),
    "m shape": (lambda: adamw_step(P["b"], G["b"], np.ones(2), G["b"], 1, learning_rate=LR), ValueError,
                r"m has shape \(2,\) but param has shape \(3,\)"),
    "v negative": (lambda: adamw_step(P["b"], G["b"], G["b"], -G["b"], 1, learning_rate=LR), ValueError,
                   "v has negative entries"),
    "max_norm": (lambda: clip_by_global_norm(G, 0.0), ValueError, r"max_norm must be above 0\.0, got 0\.0"),
    "warmup": (lambda: learning_rate_at(0, peak=1.0, warmup=10, total=10), ValueError,
               "warmup must be less than total .*got 10 ≥ 10"),
    "floor": (lambda: learning_rate_at(0, peak=1.0, warmup=1, total=10, floor=2.0), ValueError,
              r"floor must be at most peak \(1\.0\), got 2\.0"),
    "floor < 0": (lambda: learning_rate_at(0, peak=1.0, warmup=1, total=10, floor=-1.0), ValueError,
                  "floor must be at least 0"),
    "step < 0": (lambda: learning_rate_at(-1, peak=1.0, warmup=1, total=10), ValueError,
                 "step must be at least 0, got -1"),
    "peak": (lambda: learning_rate_at(0, peak=0, warmup=1, total=10), ValueError, "peak must be above 0"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_bad_arguments_are_named(case):
    call, error, message = BAD[case]
    with pytest.raises(error, match=message):
        call()


def test_a_refused_step_changes_nothing_and_a_changed_shape_is_named():
    optimiser = AdamW()
    optimiser.step(P, G)
    with pytest.raises(ValueError, match="NaN"):
        optimiser.step(P, with_entry(G, "b", np.nan))
    assert optimiser.t == 1
    with pytest.raises(ValueError, match=r"the running mean m\['b'\] of earlier steps has shape \(3,\) but "):
        optimiser.step({**P, "b": np.ones(4)}, {**G, "b": np.ones(4)})
    assert optimiser.t == 1 and optimiser.m["b"].shape == (3,)
