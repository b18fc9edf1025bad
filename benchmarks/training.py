"""How long lesson 11's trainings take: the budget is 10 seconds on a 2-core machine.

    .venv/bin/python benchmarks/training.py              # 5 repeats of each run
    .venv/bin/python benchmarks/training.py --repeats 9

Times :func:`attnlib.training.train` as lesson 11 calls it: the previous-token model (d_k = 16,
300 steps; the 10 s budget is for it), and the two runs of the √d_k experiment (d_k = 256, with
and without the scale), which the lesson repeats for 3 seeds.
Repeats are interleaved (run A, run B, run C, reference, run A, …) and the median is reported,
with the final loss (the same every repeat: training is seeded) and each run's time as a
multiple of a fixed numpy reference workload timed in the same process, a figure that depends
less on how loaded the machine is. The load average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

from attnlib.training import Model, train

BUDGET_SECONDS = 10.0

#: The runs of lesson 11, as the lesson makes them.
RUNS: dict[str, Callable[[], float]] = {
    "previous token, d_k=16, 300 steps": lambda: train(Model(), steps=300, seed=0).final_loss,
    "d_k=256 scaled, 300 steps": lambda: train(Model(d_k=256), steps=300, seed=0).final_loss,
    "d_k=256 unscaled, 300 steps": lambda: train(Model(d_k=256, scale=1.0), steps=300, seed=0).final_loss,
}


def reference() -> float:
    """A fixed numpy workload: 2000 products of 64 × 64 matrices."""
    a = np.random.default_rng(0).normal(size=(64, 64))
    b = a
    for _ in range(2000):
        b = a @ b
        b /= np.abs(b).max()
    return float(b[0, 0])


def timed(function: Callable[[], float]) -> tuple[float, float]:
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    times: dict[str, list[float]] = {name: [] for name in [*RUNS, "reference"]}
    losses: dict[str, float] = {}
    for _ in range(args.repeats):
        for name, run in RUNS.items():
            seconds, losses[name] = timed(run)
            times[name].append(seconds)
        times["reference"].append(timed(reference)[0])

    ref = statistics.median(times["reference"])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"median of {args.repeats} interleaved repeats; reference workload: {ref:.3f} s\n")
    print(f"{'run':<36} {'median s':>9} {'min s':>7} {'of 10 s':>8} {'× ref':>7} {'final loss':>11}")
    for name in RUNS:
        median = statistics.median(times[name])
        print(
            f"{name:<36} {median:>9.3f} {min(times[name]):>7.3f} {median / BUDGET_SECONDS:>8.1%} "
            f"{median / ref:>7.2f} {losses[name]:>11.5f}"
        )
    model = statistics.median(times[next(iter(RUNS))])
    pair = sum(statistics.median(times[name]) for name in list(RUNS)[1:])
    print(f"\nthe lesson's model (section 3): {model:.3f} s, budget {BUDGET_SECONDS:.0f} s")
    print(f"section 4 trains the d_k=256 pair for 3 seeds: about {3 * pair:.1f} s")


if __name__ == "__main__":
    main()
