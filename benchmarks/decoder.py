"""Lesson 14's decoder: training to the phase change (budget 60 s), and a step against PyTorch.

    .venv/bin/python benchmarks/decoder.py               # 3 repeats of the training, 7 of the steps
    .venv/bin/python benchmarks/decoder.py --repeats 5

1. Training to the phase change: ``tools/train_induction.py``'s run (the committed config and
   settings, the evaluation batch measured at every step as there), for as many steps as the
   committed run needed to reach its phase change
   (:func:`attention_lessons.l14_induction_heads.induction.phase_change_step`: the repeated half's loss, a
   running mean of 25 steps, below half of ln(vocab)). Training is seeded, so every repeat takes the
   same steps; the median wall time is reported, and each repeat checks that it reproduces the
   committed run's losses.
2. One training step's forward and backward pass (:func:`attnlib.decoder.loss_and_gradients`,
   argument checks included) against the same model in PyTorch (autograd, float64, CPU) in this
   process, on the training batch's shape: the median of interleaved repeats of ``--calls``
   calls each, and the ratio.

Both run NumPy's BLAS on one thread (``OPENBLAS_NUM_THREADS=1``, set here before NumPy is imported,
as the training script does: the matrices are tiny, and on a busy 2-core machine BLAS threads
spend far longer waiting for each other than multiplying) and PyTorch on one thread
(``torch.set_num_threads(1)``). Writes ``benchmarks/results/decoder.json`` with the machine and
the load average before and after.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from attention_lessons.l14_induction_heads.induction import (
    induction_batch,
    load_induction_run,
    phase_change_step,
)
from attnlib.decoder import init_parameters, loss_and_gradients

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import train_induction
from machine import machine_description  # tools/machine.py

BUDGET_SECONDS = 60.0
RESULTS = Path(__file__).parent / "results" / "decoder.json"


def torch_step(torch, config, params, tokens):
    """A function that runs the same forward and backward pass in PyTorch, and its gradients."""
    F = torch.nn.functional
    W = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    t = torch.from_numpy(tokens)
    B, n = tokens.shape
    H, dh = config.n_heads, config.d_head

    def step():
        for w in W.values():
            w.grad = None
        x = W["embed"][t]
        pos = W["pos_embed"][:n]
        for layer in range(config.n_layers):
            p = f"layer{layer}."
            qk_in = x + pos
            q = (qk_in @ W[p + "W_q"]).view(B, n, H, dh).transpose(1, 2)
            k = (qk_in @ W[p + "W_k"]).view(B, n, H, dh).transpose(1, 2)
            v = (x @ W[p + "W_v"]).view(B, n, H, dh).transpose(1, 2)
            z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + z.transpose(1, 2).reshape(B, n, H * dh) @ W[p + "W_o"]
        logits = x @ W["unembed"]
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, config.vocab_size), t[:, 1:].reshape(-1))
        loss.backward()
        return loss.item(), {name: w.grad.numpy() for name, w in W.items()}

    return step


def timed_calls(function, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="trainings to the phase change")
    parser.add_argument("--step-repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50, help="forward+backward calls per step repeat")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    load_before = os.getloadavg()

    committed = load_induction_run()
    config = committed.config
    reached = phase_change_step(committed.repeated_half_loss, config.vocab_size)
    steps = reached + 1  # entry s of the log is measured after s updates: one step more to see it
    training_times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        arrays = train_induction.training_run(steps)
        training_times.append(time.perf_counter() - start)
        np.testing.assert_allclose(
            arrays["repeated_half_loss"], committed.repeated_half_loss[:steps], rtol=1e-9
        )
    assert phase_change_step(arrays["repeated_half_loss"], config.vocab_size) == reached

    import torch

    torch.set_num_threads(1)
    params = init_parameters(config, seed=0)
    tokens = induction_batch(
        np.random.default_rng(0), committed.settings["batch"], config.n_ctx, config.vocab_size
    )
    ours = lambda: loss_and_gradients(config, params, tokens)  # noqa: E731
    theirs = torch_step(torch, config, params, tokens)
    loss, grads = ours()
    reference_loss, reference_grads = theirs()
    worst = max(float(np.abs(grads[name] - reference_grads[name]).max()) for name in grads)
    assert abs(loss - reference_loss) < 1e-12 and worst < 1e-10, (loss, reference_loss, worst)
    numpy_times, torch_times = [], []
    for _ in range(args.step_repeats):
        numpy_times.append(timed_calls(ours, args.calls))
        torch_times.append(timed_calls(theirs, args.calls))
    load_after = os.getloadavg()

    training = statistics.median(training_times)
    numpy_ms, torch_ms = 1000 * statistics.median(numpy_times), 1000 * statistics.median(torch_times)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"numpy {np.__version__}, torch {torch.__version__}"
    )
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in load_before))
    print(f"config: {config}")
    print(
        f"\ntraining to the phase change (the repeated half's loss below ln(vocab)/2 after {reached} "
        f"updates): {steps} steps, median of {args.repeats}:"
    )
    print(
        f"  {training:.1f} s (fastest {min(training_times):.1f} s), "
        f"{training / BUDGET_SECONDS:.0%} of the 60 s budget"
    )
    print(f"  {1000 * training / steps:.1f} ms per step (forward, backward, Adam, the evaluation batch)")
    print(f"\nforward + backward, batch {tokens.shape}, median of {args.step_repeats} × {args.calls} calls:")
    print(
        f"  attnlib.decoder {numpy_ms:.2f} ms, PyTorch {torch_ms:.2f} ms: "
        f"numpy / PyTorch = {numpy_ms / torch_ms:.2f}"
    )
    print(
        f"  same loss and gradients: |Δloss| = {abs(loss - reference_loss):.1e}, "
        f"largest |Δgrad| = {worst:.1e}"
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "machine": machine_description(
                    torch=torch.__version__, torch_threads=torch.get_num_threads()
                ),
                "command": " ".join([Path(sys.executable).name, *sys.argv]),
                "load_before": load_before,
                "load_after": load_after,
                "config": repr(config),
                "settings": committed.settings,
                "training": {
                    "phase_change_step": reached,
                    "steps": steps,
                    "repeats": args.repeats,
                    "seconds": training_times,
                    "median_seconds": training,
                    "budget_seconds": BUDGET_SECONDS,
                },
                "step": {
                    "batch": list(tokens.shape),
                    "repeats": args.step_repeats,
                    "calls": args.calls,
                    "numpy_ms": [1000 * t for t in numpy_times],
                    "torch_ms": [1000 * t for t in torch_times],
                    "median_numpy_ms": numpy_ms,
                    "median_torch_ms": torch_ms,
                    "numpy_over_torch": numpy_ms / torch_ms,
                    "largest_gradient_difference": worst,
                },
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
