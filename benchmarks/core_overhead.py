"""What the argument checks cost: attnlib's attention against the eight NumPy lines of its docstring.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/core_overhead.py                       # this attnlib
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/core_overhead.py --compare /other/repo   # and another

Every time is CPU time of the process (``time.process_time``), so that the time it waits for a
core on a shared machine is not counted, with one BLAS thread (recorded in the JSON): NumPy's
BLAS threads spin while they wait, and make the BERT forward's time swing from run to run.

Times, in one process:

- ``attention_steps`` and ``scaled_dot_product_attention`` against the plain ``attention`` of
  ``attnlib.core``'s module docstring, on its example (two queries of d_k = 4, the keys are the
  queries), with and without the causal mask: the median over interleaved repeats of the mean CPU
  time of ``--number`` calls, and the ratio to the plain version (the goal of issue 18: at most 3×);
- lesson 11's training run (``train(Model(), steps=300)``), median of ``--runs``;
- the BERT forward of ``benchmarks/model.py`` (all-MiniLM-L6-v2, 12 tokens), median of 50
  calls, when the model's files are installed;
- under ``cProfile``, the calls of ``check_finite`` per training step and per forward, and the
  share of the time spent inside ``attnlib.validation``'s functions.

``--compare PATH`` runs the same measurements in a child process whose ``attnlib`` comes from
``PATH`` (another checkout), and prints both side by side. Writes
``benchmarks/results/core_overhead.json``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np

import attnlib
from attnlib.core import attention_steps, scaled_dot_product_attention
from attnlib.training import Model, train

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from machine import machine_description  # tools/machine.py

RESULTS = Path(__file__).parent / "results" / "core_overhead.json"
Q = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])  # the docstring's example
V = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
CAUSAL = np.tri(2, dtype=bool)


def attention(Q, K, V, mask=None):  # attnlib.core's docstring, line for line
    scores = Q @ np.swapaxes(K, -1, -2)
    scores = scores / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    return weights @ V, weights


CALLS: dict[str, Callable[[], object]] = {
    "plain (docstring)": lambda: attention(Q, Q, V),
    "attention_steps": lambda: attention_steps(Q, Q, V),
    "scaled_dot_product_attention": lambda: scaled_dot_product_attention(Q, Q, V),
    "plain, causal": lambda: attention(Q, Q, V, CAUSAL),
    "attention_steps, causal": lambda: attention_steps(Q, Q, V, causal=True),
}
BASE = {name: "plain, causal" if "causal" in name else "plain (docstring)" for name in CALLS}


def cpu_seconds(call: Callable[[], object], number: int = 1) -> float:
    """CPU seconds of this process for ``number`` calls: the time it waits for a core is not counted."""
    return timeit.Timer(call, timer=time.process_time).timeit(number)


def small_calls(repeats: int, number: int) -> dict[str, float]:
    """Median CPU microseconds per call of each of :data:`CALLS`, repeats interleaved."""
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    for _ in range(repeats):
        for name, call in CALLS.items():
            times[name].append(cpu_seconds(call, number) / number * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


def profiled(call: Callable[[], object], units: int) -> dict[str, float]:
    """``check_finite`` calls per unit and the share of time inside ``attnlib.validation``."""
    profile = cProfile.Profile()
    profile.runcall(call)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(tottime for _, _, tottime, _, _ in stats.values())
    finite = sum(calls for (path, _, fn), (_, calls, *_) in stats.items() if fn == "check_finite")
    outer = [  # validation functions not called by another validation function: no double count
        cumtime
        for (path, _, _), (_, _, _, cumtime, callers) in stats.items()
        if path.endswith("validation.py") and not any(c[0].endswith("validation.py") for c in callers)
    ]
    return {"check_finite_per_unit": finite / units, "validation_share": sum(outer) / total}


def bert() -> Callable[[], object] | None:
    try:
        from attnlib.model import load_model

        model = load_model(download=False)
    except Exception:  # no model files, or no safetensors/tokenizers: skip this part
        return None
    tokens = model.tokenize("The quick brown fox jumps over the lazy dog.")
    return lambda: model.encode(tokens)


def measure(repeats: int, number: int, runs: int) -> dict[str, object]:
    small = small_calls(repeats, number)
    result: dict[str, object] = {
        "attnlib": str(Path(attnlib.__file__).parent),
        "microseconds": small,
        "ratio": {name: small[name] / small[BASE[name]] for name in CALLS},
    }
    lesson_11 = [cpu_seconds(lambda: train(Model(), steps=300, seed=0)) for _ in range(runs)]
    result["training_s"] = statistics.median(lesson_11)
    result["training_profile"] = profiled(lambda: train(Model(), steps=30, seed=0), 30)
    encode = bert()
    if encode is not None:
        encode()
        result["bert_ms"] = statistics.median(cpu_seconds(encode) * 1e3 for _ in range(50))
        result["bert_profile"] = profiled(encode, 1)
    return result


def rows(result: dict[str, object]) -> dict[str, str]:
    ratio, small = result["ratio"], result["microseconds"]
    out = {f"{name} µs (× plain)": f"{us:.1f} ({ratio[name]:.2f}×)" for name, us in small.items()}
    out["lesson 11 training, 300 steps, CPU s"] = f"{result['training_s']:.2f}"
    for part, unit in (("training", "step"), ("bert", "forward")):
        if f"{part}_profile" in result:
            p = result[f"{part}_profile"]
            out[f"{part}: check_finite calls per {unit}"] = f"{p['check_finite_per_unit']:.0f}"
            out[f"{part}: share of time in validation"] = f"{p['validation_share']:.1%}"
    if "bert_ms" in result:
        out["BERT forward, 12 tokens, CPU ms"] = f"{result['bert_ms']:.2f}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=201)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="lesson 11 training runs")
    parser.add_argument("--compare", type=Path, help="another checkout whose attnlib to measure too")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = ["--repeats", str(args.repeats), "--number", str(args.number), "--runs", str(args.runs)]
    load_before = os.getloadavg()
    results = {"this": measure(args.repeats, args.number, args.runs)}
    if args.child:
        print(json.dumps(results["this"]))
        return
    if args.compare is not None:
        env = {**os.environ, "PYTHONPATH": str(args.compare.resolve())}
        child = subprocess.run(
            [sys.executable, __file__, "--child", *sizes], env=env, check=True, capture_output=True, text=True
        )
        results["compared"] = json.loads(child.stdout)
    table = {key: rows(result) for key, result in results.items()}
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    print(f"OPENBLAS_NUM_THREADS={threads}")
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    print(f"small calls: median of {args.repeats} interleaved repeats of {args.number} calls each\n")
    names = {key: results[key]["attnlib"] for key in results}
    print(f"{'':46s}" + "".join(f"{key:>22s}" for key in table))
    for label in table["this"]:
        print(f"{label:46s}" + "".join(f"{column.get(label, '-'):>22s}" for column in table.values()))
    print("\n" + "\n".join(f"{key}: {path}" for key, path in names.items()))
    record = {"machine": machine_description(), **vars(args)}
    record["OPENBLAS_NUM_THREADS"] = threads
    record.update(compare=str(args.compare), load_before=load_before, load_after=os.getloadavg())
    record["results"] = results
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
