"""Naive attention, tiled attention and PyTorch's fused CPU kernel: time and peak extra memory.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/attention.py   # the full table (many minutes)
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/attention.py --quick   # n up to 1024

``OPENBLAS_NUM_THREADS`` (recorded in the JSON) sets the threads of NumPy's BLAS; PyTorch keeps
its own thread pool. On a busy machine NumPy's BLAS threads, which spin while they wait, slowed
each block's small matrix products many times over (1.5 s instead of 0.18 s for the tiled
version at 8 heads, n = 1024), so the table was measured with one BLAS thread.

For float32 inputs of d = 64, batch·heads of 1 and 8, n = 256 … 8192, causal and not:

- time: the median (and the fastest) of interleaved repeats (naive, tiled, PyTorch, PyTorch on
  one thread, naive, tiled, …) in this process, and each numpy version's ratio to PyTorch's
  median ("t": PyTorch with its threads, "t1": on one thread);
- exactness: the largest relative difference between the tiled and the naive output;
- peak extra memory: ``tracemalloc`` for the numpy versions (numpy reports its allocations to
  it), and for PyTorch the growth of a separate process's peak resident set during one call
  (Linux: the peak is reset through ``/proc/self/clear_refs`` just before the call).

Prints a table and the three goals of issue 12 with where each stands, and writes
``benchmarks/results/attention.json`` with the machine it ran on and the load average
(``os.getloadavg``, as ``uptime`` prints it) before, during and after the run: on a shared
machine the times are only as good as that load. The naive version is left out where its
intermediates would not fit in ``--naive-limit`` GiB.
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
BLOCK_Q, BLOCK_K = 256, 512  # tiled_attention's defaults

TORCH_PEAK = """
import re, sys, torch
n, bh, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, bh, n, 64, generator=g) for _ in range(3))
torch.nn.functional.scaled_dot_product_attention(q[..., :8, :], k[..., :8, :], v[..., :8, :])  # warm up
def status(field):
    text = open("/proc/self/status").read()
    return int(re.search(field + r":\\s+(\\d+) kB", text).group(1)) * 1024
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak resident set size (VmHWM) to the current one
before = status("VmRSS")
torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
print(status("VmHWM") - before)
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


def timings(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds of every repeat of every call, the calls interleaved, after one warm-up call each."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()
    for _ in range(repeats):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return times


def relative_difference(got: np.ndarray, expected: np.ndarray) -> float:
    """``max |got − expected| / max |expected|``, in float64."""
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64)).max()
    return float(diff / np.abs(expected.astype(np.float64)).max())


def float64_difference(n: int, causal: bool) -> float:
    """The same comparison in float64 (one head), where the goal is 1e-12."""
    Q, K, V = (a.astype(np.float64) for a in inputs(n, 1))
    naive = scaled_dot_product_attention(Q, K, V, causal=causal)[0]
    return relative_difference(tiled_attention(Q, K, V, causal=causal), naive)


def one_thread(torch: object, call: Callable[[], object]) -> object:
    """``call()`` with PyTorch limited to one thread, as NumPy's element-wise work always is."""
    threads = torch.get_num_threads()  # type: ignore[attr-defined]
    torch.set_num_threads(1)  # type: ignore[attr-defined]
    try:
        return call()
    finally:
        torch.set_num_threads(threads)  # type: ignore[attr-defined]


def contenders(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, causal: bool, naive: bool
) -> dict[str, Callable[[], object]]:
    """The calls to time on one input: tiled, PyTorch (4-D, so its fused kernel; with its threads
    and with one thread) and naive."""
    import torch

    tq = [torch.from_numpy(a) for a in (Q, K, V)]
    calls: dict[str, Callable[[], object]] = {
        "tiled": lambda: tiled_attention(Q, K, V, block_q=BLOCK_Q, block_k=BLOCK_K, causal=causal),
        "torch": lambda: torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=causal),
        "torch1": lambda: one_thread(
            torch, lambda: torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=causal)
        ),
    }
    if naive:
        calls["naive"] = lambda: scaled_dot_product_attention(Q, K, V, causal=causal)
    return calls


def goals(rows: list[dict], float64: dict[str, float]) -> list[str]:
    """The three goals of issue 12, each with where it stands in ``rows``."""
    diffs = [r["float32_relative_difference"] for r in rows if r["float32_relative_difference"] is not None]
    lines = [
        f"exact: float32 largest relative difference {max(diffs):.1e} (goal 2e-6); "
        f"float64 {max(float64.values()):.1e} (goal 1e-12)"
    ]
    at_8192 = [r for r in rows if r["n"] == 8192 and r["peak_bytes"]["naive"]]
    for r in at_8192:
        share = r["peak_bytes"]["tiled"] / r["peak_bytes"]["naive"]
        lines.append(
            f"memory: n=8192 bh={r['batch_heads']} causal={r['causal']}: "
            f"tiled {share:.2%} of naive (goal ≤ 5%)"
        )
    timed = [r for r in rows if 1024 <= r["n"] <= 4096]
    if timed:
        ratios = [r["seconds"]["tiled"] / r["seconds"]["torch"] for r in timed]
        met = sum(ratio <= 1.0 for ratio in ratios)
        lines.append(
            f"time: n=1024…4096 tiled/torch from {min(ratios):.2f} to {max(ratios):.2f}, "
            f"median {statistics.median(ratios):.2f}; ≤ 1.0 in {met} of {len(ratios)} cases (goal: all)"
        )
        single = [r["seconds"]["tiled"] / r["seconds"]["torch1"] for r in timed]
        lines.append(
            f"      against PyTorch on one thread: from {min(single):.2f} to {max(single):.2f}, "
            f"median {statistics.median(single):.2f}"
        )
    return lines


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
    load_before = os.getloadavg()
    rows = []
    header = " ".join(
        [
            f"{'bh':>3} {'n':>5} {'causal':>6} |",
            *(f"{name:>9}" for name in ("naive ms", "tiled ms", "torch ms", "torch1 ms")),
            f"| {'naive/t':>7} {'tiled/t':>7} {'tiled/t1':>8} |",
            *(f"{name:>9}" for name in ("naive MiB", "tiled MiB", "torch MiB")),
            f"{'tiled/naive':>11} | {'rel diff':>8} {'load':>5}",
        ]
    )
    print(header)
    print("-" * len(header))
    for bh in (1, 8):
        for n in sizes:
            for causal in (False, True):
                naive_fits = naive_bytes(n, bh) <= args.naive_limit * 2**30
                Q, K, V = inputs(n, bh)
                calls = contenders(Q, K, V, causal=causal, naive=naive_fits)
                times = timings(calls, repeats)
                seconds = {name: statistics.median(values) for name, values in times.items()}
                peaks = {
                    "tiled": peak_numpy(calls["tiled"]),
                    "naive": peak_numpy(calls["naive"]) if naive_fits else None,
                    "torch": peak_torch(n, bh, causal),
                }
                difference = None
                if naive_fits:
                    difference = relative_difference(calls["tiled"](), calls["naive"]()[0])  # type: ignore[index]
                row = {
                    "batch_heads": bh,
                    "n": n,
                    "causal": causal,
                    "seconds": {name: seconds.get(name) for name in ("naive", "tiled", "torch", "torch1")},
                    "fastest_seconds": {
                        name: min(times[name]) if name in times else None
                        for name in ("naive", "tiled", "torch", "torch1")
                    },
                    "peak_bytes": peaks,
                    "float32_relative_difference": difference,
                    "load_1min": os.getloadavg()[0],
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
                diff = f"{difference:8.1e}" if difference is not None else f"{'—':>8}"
                single = seconds["tiled"] / seconds["torch1"]
                cells = [
                    f"{bh:>3} {n:>5} {causal!s:>6} |",
                    *(ms[name] for name in ("naive", "tiled", "torch", "torch1")),
                    f"| {ratio['naive']} {ratio['tiled']} {single:8.2f} |",
                    *(mib[name] for name in ("naive", "tiled", "torch")),
                    f"{share} | {diff} {row['load_1min']:5.1f}",
                ]
                print(" ".join(cells), flush=True)
    float64 = {f"n={n} causal={c}": float64_difference(n, c) for n in (256, 1000) for c in (False, True)}
    load_after = os.getloadavg()
    print(f"\nload average (1, 5, 15 min) before: {load_before}, after: {load_after}")
    for line in goals(rows, float64):
        print(line)
    machine = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "date": time.strftime("%Y-%m-%d"),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "machine": machine,
                "command": " ".join([Path(sys.executable).name, *sys.argv]),
                "load_before": load_before,
                "load_after": load_after,
                "d": D,
                "block_q": BLOCK_Q,
                "block_k": BLOCK_K,
                "repeats": repeats,
                "float64_relative_difference": float64,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
