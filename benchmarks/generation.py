"""Lesson 15's text model generating: with the KV cache against without it, the cache's bytes, the training.

    .venv/bin/python benchmarks/generation.py               # 3 repeats of each, 512 new tokens
    .venv/bin/python benchmarks/generation.py --repeats 5 --new 256

1. Generation: the committed model (:func:`attention_lessons.l15_generating_text.text_model.load_text_model`)
   writes ``--new`` tokens (greedy) after a held-out prompt, with the cache (each new token runs the model on
   itself alone) and without it (each new token reruns the whole sequence). 512 tokens are more
   than the model's context (n_ctx = 128), so both use the same sliding window with attention
   sinks (``--window``, ``--sinks``; StreamingLLM's rolling cache with the cache); both must give
   the same tokens. The median of interleaved repeats of each, and the ratio (target: at least
   10×).
2. The cache's bytes at every step (:class:`attnlib.decoder.GenerationTrace`'s ``cache_bytes``,
   measured from the arrays) against :func:`attnlib.counting.kv_cache_bytes`, the formula
   2 · n_layers · n_kv_heads · d_head · 8 bytes · tokens kept: they must be equal.
3. The training: ``tools/train_decoder.py``'s wall time and final losses, read from the committed
   model's log (not re-run here).

NumPy's BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1``, set before NumPy is imported, as the
training script does). Writes ``attention_lessons/l15_generating_text/generation.json`` (the lesson's
data) with the machine and the load average before and after (the machine may be shared).
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

from attention_lessons.l15_generating_text.text_model import load_corpus, load_text_model
from attnlib.counting import kv_cache_bytes
from attnlib.decoder import generate, generate_with_trace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from machine import machine_description  # tools/machine.py

RESULTS = (
    Path(__file__).resolve().parents[1] / "attention_lessons" / "l15_generating_text" / "generation.json"
)  # lesson 15 reads it
PROMPT_CHARACTERS = 32
TARGET_SPEEDUP = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--new", type=int, default=512, help="tokens to generate")
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--sinks", type=int, default=4)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    load_before = os.getloadavg()

    model = load_text_model()
    config = model.config
    prompt_text = load_corpus().held_out[0][:PROMPT_CHARACTERS]
    prompt = model.vocabulary.encode(prompt_text)
    options = {"window": args.window, "sinks": args.sinks}

    def run(cached: bool) -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        tokens = generate(config, model.params, prompt, args.new, use_cache=cached, **options)
        return time.perf_counter() - start, tokens

    cached_times, recomputed_times = [], []
    for _ in range(args.repeats):  # interleaved, so a change of load touches both alike
        seconds, with_cache = run(True)
        cached_times.append(seconds)
        seconds, without = run(False)
        recomputed_times.append(seconds)
        np.testing.assert_array_equal(with_cache, without)  # the same tokens either way
    load_after = os.getloadavg()

    _, trace = generate_with_trace(config, model.params, prompt, args.new, **options)
    shape = config.shape
    itemsize = np.dtype(np.float64).itemsize
    per_token = kv_cache_bytes(shape, 1, bytes_per_number=itemsize)
    tokens_seen = len(prompt) + np.arange(args.new)  # when step k's query attends
    formula = [kv_cache_bytes(shape, n, bytes_per_number=itemsize, **options) for n in tokens_seen]
    assert np.array_equal(trace.cache_bytes, formula), (trace.cache_bytes, formula)

    cached, recomputed = statistics.median(cached_times), statistics.median(recomputed_times)
    speedup = recomputed / cached
    text = model.vocabulary.decode(with_cache)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in load_before))
    print(f"config: {config}")
    print(
        f"\ngenerating {args.new} tokens after a {len(prompt)}-token prompt (greedy), window {args.window} "
        f"+ {args.sinks} sinks (more than n_ctx = {config.n_ctx}), median of {args.repeats}:"
    )
    print(f"  with the KV cache:     {cached:.2f} s ({1000 * cached / args.new:.2f} ms per token)")
    print(f"  recomputing each step: {recomputed:.2f} s ({1000 * recomputed / args.new:.2f} ms per token)")
    print(f"  speed-up {speedup:.1f}× (target: at least {TARGET_SPEEDUP:.0f}×); the same tokens")
    print(
        f"\ncache: {per_token} bytes per token (2 · {config.n_layers} layers · {config.kv_heads} kv heads "
        f"· {config.d_head} · 8 bytes); at most {trace.cache_lengths.max()} tokens = "
        f"{trace.cache_bytes.max()} bytes, equal to the formula at every step"
    )
    final_train = float(model.train_loss[-50:].mean())
    print(
        f"\ntraining (tools/train_decoder.py, from the committed log): {model.settings['steps']} steps in "
        f"{model.seconds:.0f} s; training loss (last 50 steps) {final_train:.3f}, "
        f"held-out loss {model.validation_loss[-1]:.3f}"
    )
    print(f"\n{text!r}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "machine": machine_description(),
                "command": " ".join([Path(sys.executable).name, *sys.argv]),
                "load_before": load_before,
                "load_after": load_after,
                "config": repr(config),
                "generation": {
                    "prompt_tokens": len(prompt),
                    "new_tokens": args.new,
                    "window": args.window,
                    "sinks": args.sinks,
                    "repeats": args.repeats,
                    "cached_seconds": cached_times,
                    "recomputed_seconds": recomputed_times,
                    "median_cached_seconds": cached,
                    "median_recomputed_seconds": recomputed,
                    "speedup": speedup,
                    "target_speedup": TARGET_SPEEDUP,
                    "same_tokens": True,
                    "text": text,
                },
                "cache": {
                    "bytes_per_token": per_token,
                    "max_tokens": int(trace.cache_lengths.max()),
                    "max_bytes": int(trace.cache_bytes.max()),
                    "equal_to_formula": True,
                },
                "training": {
                    "steps": model.settings["steps"],
                    "batch": model.settings["batch"],
                    "seconds": model.seconds,
                    "final_train_loss_last_50": final_train,
                    "final_validation_loss": float(model.validation_loss[-1]),
                },
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
