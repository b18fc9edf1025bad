"""Lesson 16's model: SmolLM2-135M in NumPy (attnlib.model.llama) beside transformers on the same threads.

    .venv/bin/python benchmarks/llama.py                     # 1 and 2 threads, 3 repeats, 32 new tokens
    .venv/bin/python benchmarks/llama.py --threads 1 --repeats 5 --new 64 --no-transformers

For each number of BLAS threads, a fresh process (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``
and ``MKL_NUM_THREADS`` set before NumPy or PyTorch is imported, ``torch.set_num_threads``) runs:

1. **Loading**: :func:`attnlib.model.llama.load_smollm2` (the SHA-256, GGUF parsing, dequantizing
   to float32, the tokenizer), once (goal: at most 5 s).
2. **Prefill**: one pass over a 100-token prompt that fills every layer's KV cache and gives the
   next token (``generate(…, 1)``), the median of ``--repeats``.
3. **Decode**: ``generate(…, 1 + new)`` greedy with the cache; the time per new token is
   ``(t(1 + new) − t(1)) / new``, the median of ``--repeats``.
4. **Memory**: the process's peak resident memory (``ru_maxrss``) after loading and generating
   (goal: at most 1.2 GiB), read before step 5 allocates its arrays.
5. **Bandwidth**: ``np.copyto`` of a 256 MiB float32 array, bytes read and written per second
   (STREAM's copy), the median of 5, measured in the same process.

The memory-bound limit of decoding is the bytes each new token reads (every float32 weight once,
the embedding as the unembedding, and the cache's keys and values at the mean context) divided by
that bandwidth (goal: decoding within 1.3× of it). The arithmetic intensity is the floating-point
operations of a pass (twice the multiplications: :func:`attnlib.counting.decoder_pass_multiplications`,
the MLP and the unembedding) per byte read, for a decode step and for the prefill.

transformers' ``LlamaForCausalLM`` reads the same GGUF (float32, eager attention, its own KV
cache) and is timed the same way in its own process. Writes ``benchmarks/results/llama.json`` with
the machine and the load average before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "llama.json"
PROMPT_TOKENS = 100
GOALS = {"load_seconds": 5.0, "peak_rss_gib": 1.2, "decode_over_bandwidth_limit": 1.3}
PROMPT = (
    "Attention lets every token of a sentence look at every other token and decide how much of "
    "each to take. A language model reads a prompt, one token after another, and for each new "
    "token it computes a query, compares it with the keys of all earlier tokens, turns the scores "
    "into weights with a softmax and adds up the values. The keys and values of earlier tokens do "
    "not change, so a decoder keeps them in a cache. Generating a token then costs one pass over "
    "that token alone: it reads every weight of the model once, and the cache."
)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def worker(kind: str, threads: int, repeats: int, new: int) -> dict:
    """One implementation on ``threads`` threads, in this (fresh) process."""
    import resource
    import time

    import numpy as np

    from attnlib.model import llama

    start = time.perf_counter()
    model = llama.load_smollm2()
    load_seconds = time.perf_counter() - start
    ids = model.encode(PROMPT)[:PROMPT_TOKENS]
    assert len(ids) == PROMPT_TOKENS, len(ids)
    if kind == "numpy":

        def run(n_new: int) -> list[int]:
            return llama.generate(model, ids, n_new, stop_at_eos=False).tolist()

    else:
        import torch
        import transformers

        torch.set_num_threads(threads)
        start = time.perf_counter()
        ref = transformers.AutoModelForCausalLM.from_pretrained(
            os.path.dirname(model.path),
            gguf_file=os.path.basename(model.path),
            dtype=torch.float32,
            attn_implementation="eager",
        ).eval()
        load_seconds = time.perf_counter() - start
        prompt = torch.from_numpy(ids)[None]

        def run(n_new: int) -> list[int]:
            with torch.no_grad():
                out = ref.generate(prompt, max_new_tokens=n_new, min_new_tokens=n_new, do_sample=False)
            return out[0, len(ids) :].tolist()

    run(2)  # warm up
    prefill, whole, tokens = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        run(1)
        prefill.append(time.perf_counter() - start)
        start = time.perf_counter()
        tokens = run(1 + new)
        whole.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # before the bandwidth's arrays
    source = np.ones(64 * 2**20, dtype=np.float32)
    target = np.empty_like(source)
    copies = []
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(target, source)
        copies.append(time.perf_counter() - start)
    return {
        "kind": kind,
        "threads": threads,
        "load_seconds": load_seconds,
        "prefill_seconds": prefill,
        "generate_seconds": whole,
        "median_prefill_seconds": _median(prefill),
        "decode_seconds_per_token": (_median(whole) - _median(prefill)) / new,
        "peak_rss_bytes": peak,
        "copy_bandwidth_bytes_per_second": 2 * source.nbytes / _median(copies),
        "tokens": tokens,
    }


def traffic(new: int) -> dict:
    """Bytes read, operations and arithmetic intensity of a decode step and of the prefill."""
    from attnlib.counting import decoder_pass_multiplications
    from attnlib.model import llama

    c = llama.LlamaConfig(30, 9, 3, 64, 576, 1536, 49152, 8192, 100000.0, 1e-5)
    weights = 4 * c.n_parameters  # every float32 weight once; the embedding as the unembedding
    per_token_cache = 2 * c.n_layers * c.n_kv_heads * c.d_head * 4
    context = PROMPT_TOKENS + 1 + new / 2  # the mean context of the decode steps

    def operations(rows: int, keys: int) -> int:
        attention = decoder_pass_multiplications(c.shape, rows, keys)["total"]
        return 2 * (attention + c.n_layers * 3 * rows * c.d_model * c.d_mlp + c.d_model * c.vocab_size)

    decode_bytes = weights + per_token_cache * context
    prefill_bytes = weights + per_token_cache * PROMPT_TOKENS
    decode_ops, prefill_ops = operations(1, round(context)), operations(PROMPT_TOKENS, PROMPT_TOKENS)
    return {
        "weights_bytes": weights,
        "cache_bytes_per_token_of_context": per_token_cache,
        "mean_context": context,
        "decode_bytes_per_token": decode_bytes,
        "decode_operations_per_token": decode_ops,
        "decode_arithmetic_intensity": decode_ops / decode_bytes,
        "prefill_tokens": PROMPT_TOKENS,
        "prefill_bytes": prefill_bytes,
        "prefill_operations": prefill_ops,
        "prefill_arithmetic_intensity": prefill_ops / prefill_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--new", type=int, default=32, help="new tokens decoded per repeat")
    parser.add_argument("--no-transformers", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--worker", choices=["numpy", "transformers"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.threads[0], args.repeats, args.new)))
        return

    sys.path.insert(0, str(ROOT / "tools"))
    from machine import machine_description  # tools/machine.py

    load_before = os.getloadavg()
    kinds = ["numpy"] + ([] if args.no_transformers else ["transformers"])
    runs = []
    for threads in args.threads:
        for kind in kinds:
            env = os.environ | {
                name: str(threads) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
            }
            env |= {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
            command = [sys.executable, __file__, "--worker", kind, "--threads", str(threads)]
            command += ["--repeats", str(args.repeats), "--new", str(args.new)]
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = runs[-1]
            per_token = r["decode_seconds_per_token"]
            print(
                f"{kind:>12} {threads} thread(s): load {r['load_seconds']:.2f} s, "
                f"prefill {PROMPT_TOKENS} tokens {r['median_prefill_seconds'] * 1000:.0f} ms, "
                f"decode {per_token * 1000:.1f} ms/token ({1 / per_token:.1f} tokens/s), "
                f"peak RSS {r['peak_rss_bytes'] / 2**30:.2f} GiB"
            )
    load_after = os.getloadavg()
    bytes_ops = traffic(args.new)
    summary = {}
    for threads in args.threads:
        ours = next(r for r in runs if r["kind"] == "numpy" and r["threads"] == threads)
        limit = bytes_ops["decode_bytes_per_token"] / ours["copy_bandwidth_bytes_per_second"]
        entry = {
            "numpy_tokens_per_second": 1 / ours["decode_seconds_per_token"],
            "bandwidth_limit_seconds_per_token": limit,
            "decode_over_bandwidth_limit": ours["decode_seconds_per_token"] / limit,
        }
        theirs = [r for r in runs if r["kind"] == "transformers" and r["threads"] == threads]
        if theirs:
            entry["transformers_tokens_per_second"] = 1 / theirs[0]["decode_seconds_per_token"]
            entry["numpy_over_transformers_speed"] = (
                entry["numpy_tokens_per_second"] / entry["transformers_tokens_per_second"]
            )
            entry["same_tokens"] = ours["tokens"] == theirs[0]["tokens"]
        summary[str(threads)] = entry
        print(
            f"{threads} thread(s): copy bandwidth {ours['copy_bandwidth_bytes_per_second'] / 1e9:.1f} GB/s, "
            f"{bytes_ops['decode_bytes_per_token'] / 1e6:.0f} MB per token "
            f"→ limit {limit * 1000:.1f} ms/token; "
            f"numpy at {entry['decode_over_bandwidth_limit']:.2f}× the limit"
            + (f", {entry['numpy_over_transformers_speed']:.2f}× transformers' speed" if theirs else "")
        )
    print(
        f"arithmetic intensity: decode {bytes_ops['decode_arithmetic_intensity']:.2f} operations per byte, "
        f"prefill of {PROMPT_TOKENS} tokens {bytes_ops['prefill_arithmetic_intensity']:.1f}"
    )
    print("load average (1, 5, 15 min) before: " + ", ".join(f"{x:.2f}" for x in load_before))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "machine": machine_description(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "load_before": load_before,
        "load_after": load_after,
        "goals": GOALS,
        "prompt_tokens": PROMPT_TOKENS,
        "new_tokens": args.new,
        "repeats": args.repeats,
        "traffic": bytes_ops,
        "summary": summary,
        "runs": runs,
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")


if __name__ == "__main__":
    main()
