"""Naive attention, tiled attention and PyTorch's fused CPU kernel, like for like: time and memory.

    .venv/bin/python benchmarks/attention.py            # the full table (many minutes)
    .venv/bin/python benchmarks/attention.py --quick    # n up to 1024
    .venv/bin/python benchmarks/attention.py --blocks   # only the block sizes of tiled_attention

Every contender runs with the same threads: the script measures twice, each time in a fresh
process,

- ``1``: one thread for everything: ``OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=MKL_NUM_THREADS=1``
  (NumPy's BLAS reads them at import) and ``torch.set_num_threads(1)``;
- ``default``: those variables unset, so NumPy's BLAS and PyTorch each take their default (one
  thread per core).

NumPy's element-wise steps (maximum, subtract, ``exp``) run on one thread in both.

For float32 inputs of d = 64, batch·heads of 1 (n = 256 … 8192) and 8 (n = 256 … 4096), causal
and not:

- time: the median (and the fastest) of interleaved repeats (naive, tiled, PyTorch, naive, …)
  in the same process, and the ratio of each numpy version to PyTorch under the same threads;
- exactness: the largest relative difference between the tiled and the naive output;
- peak extra memory (measured once, in the one-thread process): ``tracemalloc`` for the numpy
  versions, and for PyTorch the growth of a separate process's peak resident set during one call
  (Linux: the peak is reset through ``/proc/self/clear_refs`` just before the call);
- the block sizes: ``tiled_attention`` with query and key blocks of 256, 512 and 1024 against
  PyTorch, one head, n = 2048 … 8192, printing the best pair of each case; the default blocks of
  ``attnlib.efficient`` were chosen from those (see ``BLOCK_Q`` there).

Writes ``attention_lessons/l12_attention_at_scale/attention.json`` (the lesson's data) with the machine and
the load average (``os.getloadavg``) before and after each process: on a shared machine the times are
only as good as that load. The naive version is left out where its intermediates would not fit in
``--naive-limit`` GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np  # in a measuring process, imported after its thread variables are set

from attnlib import scaled_dot_product_attention
from attnlib.efficient import BLOCK_K, BLOCK_Q, tiled_attention

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from machine import machine_description  # tools/machine.py

RESULTS = (
    Path(__file__).resolve().parents[1] / "attention_lessons" / "l12_attention_at_scale" / "attention.json"
)  # lesson 12 reads it
D = 64
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
SETTINGS = ("1", "default")
BLOCK_CHOICES = (256, 512, 1024)

TORCH_PEAK = """
import re, sys, torch
n, bh, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
torch.set_num_threads(1)
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


def environment(setting: str) -> dict[str, str]:
    """The environment of a measuring process: one thread everywhere, or the libraries' defaults."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if setting == "1":
        env.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n up to 1024 and 3 repeats")
    parser.add_argument("--blocks", action="store_true", help="only the block sizes (kept in the results)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--naive-limit", type=float, default=2.0, help="GiB the naive version may use")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--worker", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("--worker-output", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.worker_output.write_text(json.dumps(measure(args)))
        return
    previous = json.loads(args.output.read_text()) if args.output.exists() else {}
    measured: dict[str, Any] = {}
    for setting in SETTINGS:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "result.json"
            command = [
                sys.executable,
                __file__,
                *sys.argv[1:],
                "--worker",
                setting,
                "--worker-output",
                str(out),
            ]
            subprocess.run(command, env=environment(setting), check=True)
            measured[setting] = json.loads(out.read_text())
    results = {
        "machine": measured["1"]["machine"],
        "command": " ".join([Path(sys.executable).name, "benchmarks/attention.py", *sys.argv[1:]]),
        "d": D,
        "threads": {s: measured[s]["threads"] for s in SETTINGS},
        "load": {s: measured[s]["load"] for s in SETTINGS},
    }
    if args.blocks:
        results |= {k: v for k, v in previous.items() if k not in results and k != "blocks"}
    else:
        results |= {
            "block_q": measured["1"]["block_q"],
            "block_k": measured["1"]["block_k"],
            "repeats": measured["1"]["repeats"],
            "float64_relative_difference": measured["1"]["float64_relative_difference"],
            "rows": measured["1"]["rows"] + measured["default"]["rows"],
            "blocks": previous.get("blocks", []),
        }
    if args.blocks:
        results["blocks"] = measured["1"]["blocks"] + measured["default"]["blocks"]
        results["load"] = {s: measured[s]["load"] for s in SETTINGS}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwritten to {args.output}")


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Everything one measuring process measures, under its thread setting."""
    import torch

    if args.worker == "1":
        torch.set_num_threads(1)
    load = {"before": os.getloadavg()}
    result: dict[str, Any] = {
        "machine": machine_description(torch=torch.__version__),
        "threads": {
            "torch": torch.get_num_threads(),
            **{name: os.environ.get(name) for name in THREAD_VARIABLES},
        },
    }
    if args.blocks:
        result["blocks"] = block_rows(torch, args.worker)
    else:
        sizes = [256, 512, 1024] if args.quick else [256, 512, 1024, 2048, 4096, 8192]
        repeats = 3 if args.quick else args.repeats
        rows = []
        for bh in (1, 8):
            for n in [s for s in sizes if bh == 1 or s <= 4096]:  # 8 heads up to 4096: the machine is shared
                for causal in (False, True):
                    rows.append(table_row(torch, args, bh, n, causal, repeats))
        result |= {"rows": rows, "repeats": repeats, "block_q": BLOCK_Q, "block_k": BLOCK_K}
        if args.worker == "1":
            result["float64_relative_difference"] = {
                f"n={n} causal={c}": float64_difference(n, c) for n in (256, 1000) for c in (False, True)
            }
    load["after"] = os.getloadavg()
    result["load"] = load
    return result


def inputs(n: int, bh: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n * 10 + bh)
    return tuple(rng.standard_normal((1, bh, n, D), dtype=np.float32) for _ in range(3))  # type: ignore[return-value]


def table_row(
    torch: Any, args: argparse.Namespace, bh: int, n: int, causal: bool, repeats: int
) -> dict[str, Any]:
    """One row of the table: the three contenders on one input, under this process's threads."""
    naive_fits = 6 * bh * n * n * 4 <= args.naive_limit * 2**30  # raw, scaled, masked scores, exps, weights
    Q, K, V = inputs(n, bh)
    tq = [torch.from_numpy(a) for a in (Q, K, V)]
    calls: dict[str, Callable[[], object]] = {
        "tiled": lambda: tiled_attention(Q, K, V, causal=causal),
        "torch": lambda: torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=causal),
    }
    if naive_fits:
        calls["naive"] = lambda: scaled_dot_product_attention(Q, K, V, causal=causal)
    times = timings(calls, repeats)
    seconds = {
        name: statistics.median(times[name]) if name in times else None
        for name in ("naive", "tiled", "torch")
    }
    row = {
        "threads": args.worker,
        "batch_heads": bh,
        "n": n,
        "causal": causal,
        "seconds": seconds,
        "fastest_seconds": {name: min(times[name]) if name in times else None for name in seconds},
        "peak_bytes": None,
        "float32_relative_difference": None,
        "load_1min": os.getloadavg()[0],
    }
    if args.worker == "1":
        row["peak_bytes"] = {
            "tiled": peak_numpy(calls["tiled"]),
            "naive": peak_numpy(calls["naive"]) if naive_fits else None,
            "torch": peak_torch(n, bh, causal),
        }
        if naive_fits:
            row["float32_relative_difference"] = relative_difference(calls["tiled"](), calls["naive"]()[0])  # type: ignore[index]
    ratio = {k: f"{v / seconds['torch']:5.2f}" if v else "    —" for k, v in seconds.items()}
    print(
        f"threads {args.worker:>7} bh {bh} n {n:5} causal {causal!s:5}  "
        f"torch {seconds['torch'] * 1e3:8.1f} ms  "
        f"tiled/torch {ratio['tiled']}  naive/torch {ratio['naive']}  load {row['load_1min']:.1f}",
        flush=True,
    )
    return row


def block_rows(torch: Any, setting: str) -> list[dict[str, Any]]:
    """tiled_attention with every pair of block sizes against PyTorch: one head, n = 2048 … 8192."""
    rows = []
    for n in (2048, 4096, 8192):
        for causal in (False, True):
            Q, K, V = inputs(n, 1)
            tq = [torch.from_numpy(a) for a in (Q, K, V)]
            calls: dict[str, Callable[[], object]] = {
                "torch": lambda tq=tq, causal=causal: torch.nn.functional.scaled_dot_product_attention(
                    *tq, is_causal=causal
                )
            }
            for bq in BLOCK_CHOICES:
                for bk in BLOCK_CHOICES:
                    calls[f"{bq}x{bk}"] = lambda bq=bq, bk=bk, qkv=(Q, K, V), causal=causal: tiled_attention(
                        *qkv, block_q=bq, block_k=bk, causal=causal
                    )
            times = timings(calls, 3)
            seconds = {name: statistics.median(values) for name, values in times.items()}
            rows.append(
                {
                    "threads": setting,
                    "n": n,
                    "causal": causal,
                    "seconds": seconds,
                    "load_1min": os.getloadavg()[0],
                }
            )
            best = min((k for k in seconds if k != "torch"), key=seconds.__getitem__)
            print(f"blocks: threads {setting:>7} n {n:5} causal {causal!s:5}  best {best} "
                  f"{seconds[best] / seconds['torch']:.2f} × torch", flush=True)  # fmt: skip
    return rows


def relative_difference(got: np.ndarray, expected: np.ndarray) -> float:
    """``max |got − expected| / max |expected|``, in float64."""
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64)).max()
    return float(diff / np.abs(expected.astype(np.float64)).max())


def float64_difference(n: int, causal: bool) -> float:
    """The same comparison in float64 (one head), where the goal is 1e-12."""
    Q, K, V = (a.astype(np.float64) for a in inputs(n, 1))
    naive = scaled_dot_product_attention(Q, K, V, causal=causal)[0]
    return relative_difference(tiled_attention(Q, K, V, causal=causal), naive)


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


if __name__ == "__main__":
    main()
