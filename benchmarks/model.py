"""How long all-MiniLM-L6-v2 takes in attnlib: one sentence of 12 tokens through all 6 layers.

    .venv/bin/python benchmarks/model.py                 # 200 repeats
    .venv/bin/python benchmarks/model.py --repeats 50

Times :meth:`attnlib.model.Model.encode` (every layer's hidden states and every head's weights,
tokenisation excluded) and, when torch and transformers are installed, transformers' BertModel
(eager attention, ``output_attentions=True``) on the same tokens in the same process, the two
interleaved. Prints the median wall-clock time and the median CPU time of this process (less
sensitive to other processes on a shared machine), the load average before and after, and the
same again in a child process with one BLAS thread (``OPENBLAS_NUM_THREADS=1``), since on a
busy 2-core machine BLAS threads waiting for each other can cost more than they save on
matrices this small. The target of the lesson: at most 50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from attnlib.model import load_model

SENTENCE = "The quick brown fox jumps over the lazy dog."
TARGET_MS = 50.0


def measure(call: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def reference_call(model_dir: str, tokens) -> Callable[[], object] | None:
    """transformers' BertModel on the same tokens, or None without torch/transformers."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    transformers.logging.set_verbosity_error()
    bert = transformers.BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    ids = torch.from_numpy(tokens.input_ids[None])
    mask = torch.from_numpy(tokens.attention_mask[None].astype("int64"))

    def call() -> object:
        with torch.no_grad():
            return bert(input_ids=ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)

    return call


def run(repeats: int, with_reference: bool) -> None:
    model = load_model(download=False)
    tokens = model.tokenize(SENTENCE)
    n = len(tokens.tokens)
    if n != 12:
        raise SystemExit(f"the benchmark sentence must be 12 tokens long, it is {n}: {tokens.tokens}")
    calls: dict[str, Callable[[], object]] = {"attnlib.model": lambda: model.encode(tokens)}
    reference = reference_call(str(model.directory), tokens) if with_reference else None
    if reference is not None:
        calls["transformers BertModel (eager)"] = reference
    for call in calls.values():  # warm up
        for _ in range(5):
            call()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    load_before = os.getloadavg()
    for _ in range(repeats):
        for name, call in calls.items():
            times[name].append(measure(call))
    load_after = os.getloadavg()
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(f"\n{n} tokens, 6 layers, {repeats} repeats; OPENBLAS_NUM_THREADS={threads}; {os.cpu_count()} CPUs")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    print(f"{'':32s} {'median wall ms':>15s} {'median CPU ms':>14s}")
    medians = {}
    for name, pairs in times.items():
        wall = statistics.median(p[0] for p in pairs) * 1e3
        cpu = statistics.median(p[1] for p in pairs) * 1e3
        medians[name] = wall
        print(f"{name:32s} {wall:15.2f} {cpu:14.2f}")
    if len(medians) == 2:
        ours, theirs = medians.values()
        print(f"ratio attnlib / transformers (wall): {ours / theirs:.2f}")
    verdict = "within" if medians["attnlib.model"] <= TARGET_MS else "OVER"
    print(f"attnlib.model: {medians['attnlib.model']:.2f} ms, {verdict} the target of {TARGET_MS:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--no-reference", action="store_true", help="time attnlib only")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    run(args.repeats, not args.no_reference)
    if not args.child:
        one_thread = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        command = [sys.executable, __file__, "--child", "--repeats", str(args.repeats)]
        if args.no_reference:
            command.append("--no-reference")
        subprocess.run(command, env=one_thread, check=True)


if __name__ == "__main__":
    main()
