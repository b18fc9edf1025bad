"""attnlib.optim against PyTorch: AdamW step for step with ``torch.optim.AdamW`` (nanoGPT's two
parameter groups, a learning rate that changes every step), the schedule against torch's
schedulers, and clipping against ``torch.nn.utils.clip_grad_norm_``. Every tolerance is a bound
on the rounding, derived in the test that uses it."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch",
    reason="PyTorch is not installed; install it with: .venv/bin/pip install -r requirements-torch.txt",
)

from attnlib.optim import AdamW, clip_by_global_norm, decays, learning_rate_at  # noqa: E402

pytestmark = pytest.mark.reference

#: A small GPT's arrays: matrices and embeddings (they decay) and gains and biases (they do not).
SHAPES = {
    "embed": (11, 6),
    "layer0.W_q": (6, 6),
    "layer0.W_o": (6, 6),
    "layer0.ln.gain": (6,),
    "layer0.b_out": (6,),
    "unembed": (6, 11),
}
STEPS, WARMUP, PEAK, FLOOR = 64, 8, 1e-2, 1e-3
BETA1, BETA2, EPS, WD = 0.9, 0.999, 1e-8, 0.1


def torch_adamw(params: dict[str, np.ndarray]) -> tuple[dict, torch.optim.AdamW]:
    """Tensors of ``params``, and torch's AdamW over them in nanoGPT's two groups."""
    tensors = {name: torch.nn.Parameter(torch.from_numpy(p.copy())) for name, p in params.items()}
    groups = [
        {"params": [t for n, t in tensors.items() if decays(n, params[n])], "weight_decay": WD},
        {"params": [t for n, t in tensors.items() if not decays(n, params[n])], "weight_decay": 0.0},
    ]
    return tensors, torch.optim.AdamW(groups, lr=PEAK, betas=(BETA1, BETA2), eps=EPS)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adamw_is_torchs_adamw_step_for_step(dtype):
    # The bound. Both sides compute the same real numbers in another order (torch: m by lerp,
    # lr/(1 − β₁ᵗ) as one factor, √v/√(1 − β₂ᵗ)); each operation rounds each side by at most eps/2
    # of its result, so the two differ by at most eps times it per operation. Per entry and step t:
    #   m: 3 roundings a side of terms up to |m| + |g|, and 1 − (1 − β₁) ≠ β₁ by eps:
    #      δm_t ≤ β₁ δm_{t−1} + 4 eps (|m_{t−1}| + |g_t|)            (no relative bound: m may cancel)
    #   v: 4 roundings of positive terms: relatively δv_t/v_t ≤ δv_{t−1}/v_{t−1} + 4 eps ≤ 4 t eps
    #   the update u = lr m̂/(√v̂ + ε): about 8 roundings (float32 adds the casts of the scalars), v's
    #      error halved by the square root, m's divided as m is: δu ≤ (8 + 2t) eps |u| + lr δm/(b₁(√v̂ + ε))
    #   the parameter p·(1 − lr·wd) − u: 2 roundings, and the error so far shrinks by 1 − lr·wd:
    #      e_t ≤ (1 − lr·wd) e_{t−1} + eps (|p_{t−1}| + |p_t|) + δu
    # The magnitudes are read from our run (float64); the bound is checked at every step.
    rng = np.random.default_rng(18)
    eps = float(np.finfo(dtype).eps)
    params = {name: rng.normal(size=shape).astype(dtype) for name, shape in SHAPES.items()}
    tensors, theirs = torch_adamw(params)
    ours = AdamW(PEAK, beta1=BETA1, beta2=BETA2, eps=EPS, weight_decay=WD)
    bound = {name: np.zeros(shape) for name, shape in SHAPES.items()}
    m_bound = {name: np.zeros(shape) for name, shape in SHAPES.items()}
    worst = 0.0
    for step in range(STEPS):
        lr = learning_rate_at(step, peak=PEAK, warmup=WARMUP, total=STEPS, floor=FLOOR)
        grads = {}
        for name, p in params.items():  # gradients of all sizes: a normal's times 1e-3 to 10
            grads[name] = (rng.normal(size=p.shape) * 10.0 ** rng.uniform(-3, 1)).astype(dtype)
        before, m_before = params, {n: ours.m.get(n, np.zeros_like(p)) for n, p in params.items()}
        params = ours.step(params, grads, learning_rate=lr)
        for group in theirs.param_groups:
            group["lr"] = lr
        for name, tensor in tensors.items():
            tensor.grad = torch.from_numpy(grads[name].copy())
        theirs.step()

        t = ours.t
        b1, b2 = 1 - BETA1**t, 1 - BETA2**t
        for name, tensor in tensors.items():
            p0, p1, g, m0, m, v = (
                np.abs(a.astype(np.float64))
                for a in (before[name], params[name], grads[name], m_before[name], ours.m[name], ours.v[name])
            )
            wd = WD if decays(name, before[name]) else 0.0
            denominator = np.sqrt(v / b2) + EPS
            u = lr * (m / b1) / denominator
            m_bound[name] = BETA1 * m_bound[name] + 4 * eps * (m0 + g)
            bound[name] = (
                (1 - lr * wd) * bound[name]
                + eps * (p0 + p1)
                + (8 + 2 * t) * eps * u
                + lr * m_bound[name] / (b1 * denominator)
            )
            state = theirs.state[tensor]
            error = np.abs(params[name] - tensor.detach().numpy())
            assert (error <= bound[name]).all(), f"step {t}, {name}: {(error / bound[name]).max():.3g} bounds"
            assert (np.abs(ours.m[name] - state["exp_avg"].numpy()) <= m_bound[name]).all(), (t, name)
            assert (np.abs(ours.v[name] - state["exp_avg_sq"].numpy()) <= 4 * t * eps * v).all(), (t, name)
            worst = max(worst, float((error / bound[name]).max()))
    assert 0 < worst <= 1  # the two did differ (in the last bits), within the bound


SCHEDULES = [  # (peak, floor, warmup, total)
    (1e-2, 1e-3, 8, 64),
    (6e-4, 6e-5, 100, 2000),  # nanoGPT's shape, scaled down
    (1.0, 0.0, 0, 5),  # no warmup, down to 0
    (1.0, 0.0, 1, 5),  # a warmup of one step: the peak at once
    (3e-3, 3e-3, 3, 9),  # floor = peak: constant
]


@pytest.mark.parametrize(("peak", "floor", "warmup", "total"), SCHEDULES, ids=str)
def test_the_schedule_is_torchs_linear_warmup_then_cosine(peak, floor, warmup, total):
    # SequentialLR of LinearLR, CosineAnnealingLR, then ConstantLR at the floor (CosineAnnealingLR
    # alone climbs back up after T_max). LinearLR's factor goes from start_factor at its epoch 0
    # to end_factor at total_iters, so peak·(step + 1)/warmup is start 1/warmup, end 1 and
    # total_iters = warmup − 1: the peak at step warmup − 1, and the cosine starts at the peak at
    # step warmup, as in ours. Torch's schedulers step recursively (each rate from the previous
    # one): every step rounds a handful of times, at most about 4 eps of the peak in all (near the
    # cosine's end a ratio of small numbers, but it multiplies a difference as small), and errors
    # carry over without growing (each factor is at most 1 after the warmup, and the warmup's
    # relative errors just add): at step s, |theirs − ours| ≤ 4 (s + 2) eps peak, with ours.
    p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    optimiser = torch.optim.SGD([p], lr=peak)
    schedulers, milestones = [], []
    lr_scheduler = torch.optim.lr_scheduler
    if warmup:
        schedulers.append(lr_scheduler.LinearLR(optimiser, 1 / warmup, 1.0, total_iters=warmup - 1))
        milestones.append(warmup)
    schedulers.append(lr_scheduler.CosineAnnealingLR(optimiser, T_max=total - warmup, eta_min=floor))
    schedulers.append(lr_scheduler.ConstantLR(optimiser, factor=floor / peak, total_iters=10**9))
    schedule = lr_scheduler.SequentialLR(optimiser, schedulers, milestones=[*milestones, total])
    eps = np.finfo(np.float64).eps
    for step in range(total + 10):
        ours = learning_rate_at(step, peak=peak, warmup=warmup, total=total, floor=floor)
        theirs = optimiser.param_groups[0]["lr"]
        assert abs(ours - theirs) <= 4 * (step + 2) * eps * peak, (step, ours, theirs)
        optimiser.step()
        schedule.step()


@pytest.mark.parametrize(("scale", "max_norm"), [(1.0, 1.0), (100.0, 0.5), (1.0, 1e3)], ids=str)
def test_clipping_is_torchs_clip_grad_norm(scale, max_norm):
    # The norm: N squares summed and a square root, on each side at most (N + 2) eps/2 of it.
    # The clipped gradients: the same coefficient, max_norm/(norm + 1e-6), then one product:
    # (N + 5) eps of each entry together. Below max_norm both leave the gradients as they are.
    rng = np.random.default_rng(int(scale))
    grads = {name: rng.normal(size=shape) * scale for name, shape in SHAPES.items()}
    tensors = [torch.zeros(shape, dtype=torch.float64, requires_grad=True) for shape in SHAPES.values()]
    for tensor, g in zip(tensors, grads.values(), strict=True):
        tensor.grad = torch.from_numpy(g.copy())
    their_norm = float(torch.nn.utils.clip_grad_norm_(tensors, max_norm))
    clipped, norm = clip_by_global_norm(grads, max_norm)
    n = sum(g.size for g in grads.values())
    eps = np.finfo(np.float64).eps
    assert abs(norm - their_norm) <= (n + 2) * eps * norm
    for tensor, (name, g) in zip(tensors, clipped.items(), strict=True):
        if norm < max_norm:
            np.testing.assert_array_equal(g, grads[name])
            np.testing.assert_array_equal(tensor.grad.numpy(), grads[name])
        else:
            np.testing.assert_allclose(g, tensor.grad.numpy(), rtol=(n + 5) * eps, atol=0)
    assert (norm < max_norm) == (max_norm == 1e3)  # the cases are what they say
