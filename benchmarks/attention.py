"""Naive attention, tiled attention and PyTorch's fused CPU kernel: time and peak extra memory.

    .venv/bin/python benchmarks/attention.py               # the full table (takes several minutes)
    .venv/bin/python benchmarks/attention.py --quick       # n up to 1024, fewer repeats

For float32 inputs of d = 64, batch·heads of 1 and 8, n = 256 … 8192, causal and not:

- time: the median of interleaved repeats (naive, tiled, PyTorch, naive, tiled, …) in this
  process, and each numpy version's ratio to PyTorch's time;
- peak extra memory: ``tracemalloc`` for the numpy versions (numpy reports its allocations to
  it), and for PyTorch the growth of a separate process's peak RSS during one call.

Prints a table and writes ``benchmarks/results/attention.json`` with the machine it ran on.
The naive version is left out where its intermediates would not fit in ``--naive-limit`` GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from attnlib import scaled_dot_product_attention
from attnlib.efficient import tiled_attention

RESULTS = Path(__file__).parent / "results" / "attention.json"
D = 64
BLOCK = 256

TORCH_PEAK = """
import resource, sys, torch
n, bh, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, bh, n, 64, generator=g) for _ in range(3))
torch.nn.functional.scaled_dot_product_attention(q[..., :8, :], k[..., :8, :], v[..., :8, :])  # warm up
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024)
"""


def inputs(n: int, bh: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n * 10 + bh)
    return tuple(rng.standard_normal((1, bh, n, D), dtype=np.float32) for _ in range(3))  # type: ignore[return-value]


def naive_bytes(n: int, bh: int) -> int:
    """About what the naive version holds at once: raw, scaled, masked scores, exps and weights."""
    return 6 * bh * n * n * 4


def peak_numpy(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def peak_torch(n: int, bh: int, causal: bool) -> int:
    out = subprocess.run(
        [sys.executable, "-c", TORCH_PEAK, str(n), str(bh), "1" if causal else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip())


def medians(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():  # warm up
        call()
    for _ in range(repeats):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def contenders(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, causal: bool, naive: bool
) -> dict[str, Callable[[], object]]:
    """The calls to time on one input: tiled, PyTorch (4-D, so its fused kernel) and naive."""
    import torch

    tq = [torch.from_numpy(a) for a in (Q, K, V)]
    calls: dict[str, Callable[[], object]] = {
        "tiled": lambda: tiled_attention(Q, K, V, block_q=BLOCK, block_k=BLOCK, causal=causal),
        "torch": lambda: torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=causal),
    }
    if naive:
        calls["naive"] = lambda: scaled_dot_product_attention(Q, K, V, causal=causal)
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n up to 1024 and 3 repeats")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--naive-limit", type=float, default=8.0, help="GiB the naive version may use")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    import torch

    sizes = [256, 512, 1024] if args.quick else [256, 512, 1024, 2048, 4096, 8192]
    repeats = 3 if args.quick else args.repeats
    rows = []
    header = f"{'bh':>3} {'n':>5} {'causal':>6} | {'naive ms':>9} {'tiled ms':>9} {'torch ms':>9} | "
    header += f"{'naive/t':>7} {'tiled/t':>7} | {'naive MiB':>9} {'tiled MiB':>9} {'torch MiB':>9} "
    header += f"{'tiled/naive':>11}"
    print(header)
    print("-" * len(header))
    for bh in (1, 8):
        for n in sizes:
            for causal in (False, True):
                naive_fits = naive_bytes(n, bh) <= args.naive_limit * 2**30
                calls = contenders(*inputs(n, bh), causal=causal, naive=naive_fits)
                seconds = medians(calls, repeats)
                peaks = {
                    "tiled": peak_numpy(calls["tiled"]),
                    "naive": peak_numpy(calls["naive"]) if naive_fits else None,
                    "torch": peak_torch(n, bh, causal),
                }
                row = {
                    "batch_heads": bh,
                    "n": n,
                    "causal": causal,
                    "seconds": {name: seconds.get(name) for name in ("naive", "tiled", "torch")},
                    "peak_bytes": peaks,
                }
                rows.append(row)
                ms = {
                    k: (f"{v * 1e3:9.1f}" if v is not None else f"{'—':>9}")
                    for k, v in row["seconds"].items()
                }
                ratio = {
                    k: (f"{v / seconds['torch']:7.2f}" if v is not None else f"{'—':>7}")
                    for k, v in row["seconds"].items()
                }
                mib = {k: (f"{v / 2**20:9.1f}" if v is not None else f"{'—':>9}") for k, v in peaks.items()}
                share = f"{peaks['tiled'] / peaks['naive']:11.3%}" if peaks["naive"] else f"{'—':>11}"
                print(
                    f"{bh:>3} {n:>5} {causal!s:>6} | {ms['naive']} {ms['tiled']} {ms['torch']} | "
                    f"{ratio['naive']} {ratio['tiled']} | {mib['naive']} {mib['tiled']} {mib['torch']} "
                    f"{share}",
                    flush=True,
                )
    machine = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "date": time.strftime("%Y-%m-%d"),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps({"machine": machine, "d": D, "block": BLOCK, "repeats": repeats, "rows": rows}, indent=1)
        + "\n"
    )
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
