"""How long all-MiniLM-L6-v2 takes in attnlib against PyTorch: 12 and 128 tokens, one thread each.

    .venv/bin/python benchmarks/model.py                 # 100 repeats, writes results/model.json
    .venv/bin/python benchmarks/model.py --repeats 20 --no-save

Times :meth:`attnlib.model.Model.encode` (every layer's hidden states and every head's weights,
tokenisation excluded) and, when torch and transformers are installed, transformers' BertModel
(eager attention, ``output_attentions=True``, ``output_hidden_states=True``) on the same tokens,
in the same process, the calls interleaved. Both run on one thread (``OPENBLAS_NUM_THREADS=1``,
``torch.set_num_threads(1)``): like for like, and steady on a shared machine. Prints the median
wall-clock and CPU time of each and their ratios (on a busy machine the CPU time is the steadier),
and the median time of :func:`load_model` (which reads the three files and checks their SHA-256
once). The lesson's target: at most 50 ms at 12 tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

if os.environ.get("OPENBLAS_NUM_THREADS") != "1":  # before NumPy is imported: re-run on one thread
    one_thread = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    os.execve(sys.executable, [sys.executable, *sys.argv], one_thread)

import numpy as np  # after the thread settings above

from attnlib.model import encode, load_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from machine import machine_description  # tools/machine.py

SENTENCE = "The quick brown fox jumps over the lazy dog."
LENGTHS = (12, 128)
TARGET_MS = 50.0
RESULTS = Path(__file__).parent / "results" / "model.json"


def measure(call: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def token_ids(model, n: int) -> np.ndarray:
    """``n`` token ids: [CLS], the sentence's word pieces repeated, [SEP]."""
    pieces = model.tokenize(SENTENCE).input_ids[1:-1]
    return np.concatenate([[101], np.resize(pieces, n - 2), [102]]).astype(np.int64)


def reference_call(model_dir: str, ids: np.ndarray) -> Callable[[], object] | None:
    """transformers' BertModel on ``ids``, one thread, or None without torch/transformers."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    bert = transformers.BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    tensor = torch.from_numpy(ids[None])
    mask = torch.ones_like(tensor)

    def call() -> object:
        with torch.no_grad():
            return bert(
                input_ids=tensor, attention_mask=mask, output_attentions=True, output_hidden_states=True
            )

    return call


def timed(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU milliseconds of each call, the calls interleaved after a warm-up."""
    for call in calls.values():
        for _ in range(3):
            call()
    pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            pairs[name].append(measure(call))
    return {
        name: {
            "wall_ms": statistics.median(p[0] for p in values) * 1e3,
            "cpu_ms": statistics.median(p[1] for p in values) * 1e3,
        }
        for name, values in pairs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--no-reference", action="store_true", help="time attnlib only")
    parser.add_argument("--no-save", action="store_true", help="print only, do not write the results")
    args = parser.parse_args()

    model = load_model(download=False)
    loads = [measure(lambda: load_model(download=False))[0] * 1e3 for _ in range(5)]
    print(f"load_model (read and verify the three files): median {statistics.median(loads):.0f} ms of 5")
    print(f"one thread each; {os.cpu_count()} CPUs; load average {os.getloadavg()}")
    print(f"{'tokens':>6s} {'':32s} {'median wall ms':>15s} {'median CPU ms':>14s}")
    rows = []
    for n in LENGTHS:
        ids = token_ids(model, n)
        calls: dict[str, Callable[[], object]] = {
            "attnlib.model": lambda ids=ids: encode(model.weights, model.config, ids)
        }
        reference = None if args.no_reference else reference_call(str(model.directory), ids)
        if reference is not None:
            calls["transformers BertModel (eager)"] = reference
        medians = timed(calls, args.repeats)
        for name, m in medians.items():
            print(f"{n:6d} {name:32s} {m['wall_ms']:15.2f} {m['cpu_ms']:14.2f}")
        ours = medians["attnlib.model"]
        row = {
            "tokens": n,
            "attnlib_ms": round(ours["wall_ms"], 2),
            "attnlib_cpu_ms": round(ours["cpu_ms"], 2),
        }
        if reference is not None:
            theirs = medians["transformers BertModel (eager)"]
            row |= {
                "pytorch_ms": round(theirs["wall_ms"], 2),
                "pytorch_cpu_ms": round(theirs["cpu_ms"], 2),
                "ratio": round(ours["wall_ms"] / theirs["wall_ms"], 2),
                "ratio_cpu": round(ours["cpu_ms"] / theirs["cpu_ms"], 2),
            }
            print(f"{n:6d} ratio attnlib / PyTorch: {row['ratio']:.2f} (wall), {row['ratio_cpu']:.2f} (CPU)")
        rows.append(row)
    at_12 = rows[0]["attnlib_ms"]
    verdict = "within" if at_12 <= TARGET_MS else "OVER"
    print(f"attnlib.model at 12 tokens: {at_12:.2f} ms, {verdict} the target of {TARGET_MS:.0f} ms")
    if not args.no_save:
        result = {
            "date": date.today().isoformat(),
            "machine": machine_description(),
            "what": "median wall time of one forward pass (all hidden states and attention weights), "
            f"one thread each, {args.repeats} interleaved repeats",
            "load_average_1_5_15_min": [round(v, 2) for v in os.getloadavg()],
            "load_model_ms": round(statistics.median(loads)),
            "forward": rows,
        }
        RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
