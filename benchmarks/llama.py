"""Lesson 16's model, SmolLM2-135M, decoded three ways, interleaved: attnlib (NumPy, float32),
transformers (PyTorch, float32) and llama.cpp (its own 4-bit kernels, where it is installed),
beside what this machine's memory and arithmetic allow.

    .venv/bin/python benchmarks/llama.py                       # 1 and 2 threads, 9 rounds, 32 new tokens
    .venv/bin/python benchmarks/llama.py --threads 1 --rounds 5 --contenders numpy llama.cpp
    .venv/bin/python benchmarks/llama.py --contenders numpy numpy-separate \
        --output benchmarks/results/llama_weights_buffer.json     # what the one buffer gains

For each number of threads, every contender runs in a fresh process of its own
(``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set before NumPy or
PyTorch is imported; ``torch.set_num_threads``; llama.cpp's ``n_threads``), loads the model once
(its load time, goal ≤ 5 s for attnlib), warms up, and then waits. The parent then times them in
rounds, one after another, A B C A B C …, so that a busy minute of a shared machine falls on every
contender alike; each figure is the median over the rounds. A round of a contender:

1. **Prefill**: one pass over a 100-token prompt that fills the KV cache and gives the next token.
2. **Decode**: greedy, the prompt and ``1 + new`` tokens; the time per new token is
   ``(t(1 + new) − t(1)) / new``.

Between rounds the NumPy worker measures the memory: **copy** (``np.copyto`` of 256 MiB: bytes
read and written per second, STREAM's copy) and **read** (``np.add.reduce`` of 256 MiB: bytes read
per second, nothing written), and once the arithmetic: a float32 matrix product of 2,048 × 2,048
on the same threads (operations per second). Their ratio, operations per byte read, is the
**balance point**: a pass that does fewer operations per byte than that waits for memory.

``numpy-separate`` is attnlib with its weights loaded as it loaded them until 2026-11-30, each in
an array of its own (``read_gguf`` and ``params_from_tensors`` without their buffer), beside
``numpy``, whose weights are views of one buffer in huge pages (``load_smollm2``,
:func:`attnlib.model.llama_file.weights_buffer`): the same numbers and strides, so the same tokens,
and what the layout alone changes. It is not a default contender (lesson 16 shows the three engines).

Limits: decoding reads every weight once per token, and the KV cache. For attnlib and transformers
the weights are float32 (``4 · n_parameters`` bytes); llama.cpp reads the file's 4- and 8-bit
blocks as stored (the GGUF's tensor bytes) and keeps its cache in float16. A contender's **limit**
is its bytes per token over the read bandwidth; the decode time over that limit says how close it
comes (goal: attnlib within 1.3×). Writes ``attention_lessons/l16_real_language_model/llama.json`` (the
lesson's data) with the machine, the load average before and after, every round, and the medians.

llama.cpp is an anchor, not a dependency: ``pip install llama-cpp-python==0.3.36`` builds it from
source (about 17 minutes on 2 cores); without it the benchmark times the other two.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = (
    Path(__file__).resolve().parents[1] / "attention_lessons" / "l16_real_language_model" / "llama.json"
)  # lesson 16 reads it
PROMPT_TOKENS = 100
GOALS = {"load_seconds": 5.0, "peak_rss_gib": 1.2, "decode_over_read_limit": 1.3}
CONTENDERS = ("numpy", "transformers", "llama.cpp")  # the default, which lesson 16 shows
CHOICES = (*CONTENDERS, "numpy-separate")
BANDWIDTH_MIB = 256
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


# --- the workers: one contender each, in a process of its own ------------------------------------


def _separate_arrays():
    """SmolLM2 as ``load_smollm2`` loaded it until 2026-11-30: each weight an array of its own."""
    from attnlib.model import llama
    from attnlib.model.gguf import find_smollm2, read_gguf, tokenizer_from_metadata

    path = find_smollm2()
    metadata, tensors = read_gguf(path)
    config = llama.config_from_metadata(metadata)
    params = llama.params_from_tensors(config, tensors)
    return llama.LlamaModel(config, params, metadata, str(path), tokenizer_from_metadata(metadata))


def _loader(kind: str, threads: int):
    """Load ``kind``'s model; return ``run(n_new) → tokens`` and the load time in seconds."""
    import time

    import numpy as np

    from attnlib.model import llama

    start = time.perf_counter()
    model = _separate_arrays() if kind == "numpy-separate" else llama.load_smollm2()
    load_seconds = time.perf_counter() - start
    ids = model.encode(PROMPT)[:PROMPT_TOKENS]
    assert len(ids) == PROMPT_TOKENS, len(ids)
    if kind in ("numpy", "numpy-separate"):
        return (lambda n_new: llama.generate(model, ids, n_new, stop_at_eos=False).tolist()), load_seconds
    start = time.perf_counter()
    if kind == "transformers":
        import torch
        import transformers

        torch.set_num_threads(threads)
        ref = transformers.AutoModelForCausalLM.from_pretrained(
            os.path.dirname(model.path),
            gguf_file=os.path.basename(model.path),
            dtype=torch.float32,
            attn_implementation="eager",
        ).eval()
        prompt = torch.from_numpy(ids)[None]

        def run(n_new: int) -> list[int]:
            with torch.no_grad():
                out = ref.generate(prompt, max_new_tokens=n_new, min_new_tokens=n_new, do_sample=False)
            return out[0, len(ids) :].tolist()

        return run, time.perf_counter() - start
    import llama_cpp

    cpp = llama_cpp.Llama(
        model_path=model.path,
        n_ctx=256,
        n_batch=128,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    vocab = cpp.n_vocab()

    def run_cpp(n_new: int) -> list[int]:
        cpp.reset()
        cpp.eval(ids.tolist())
        out: list[int] = []
        while True:
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(cpp.ctx, -1), shape=(vocab,))
            out.append(int(np.argmax(logits)))
            if len(out) == n_new:
                return out
            cpp.eval(out[-1:])

    return run_cpp, time.perf_counter() - start


def _memory_and_arithmetic() -> dict:
    """Copy and read bandwidth (bytes per second) and float32 matrix-product speed (operations per second)."""
    import time

    import numpy as np

    source = np.ones(BANDWIDTH_MIB * 2**20 // 4, dtype=np.float32)
    target = np.empty_like(source)
    copies, reads = [], []
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(target, source)
        copies.append(time.perf_counter() - start)
        start = time.perf_counter()
        np.add.reduce(source)
        reads.append(time.perf_counter() - start)
    a = np.ones((2048, 2048), dtype=np.float32)
    a @ a  # warm up
    products = []
    for _ in range(3):
        start = time.perf_counter()
        a @ a
        products.append(time.perf_counter() - start)
    return {
        "copy_bytes_per_second": 2 * source.nbytes / _median(copies),
        "read_bytes_per_second": source.nbytes / _median(reads),
        "matmul_operations_per_second": 2 * 2048**3 / _median(products),
    }


def worker(kind: str, threads: int, new: int) -> None:
    """Serve the parent: load, warm up, then answer ``run`` and ``memory`` lines with JSON lines."""
    import resource
    import time

    run, load_seconds = _loader(kind, threads)
    run(2)  # warm up
    print(json.dumps({"load_seconds": load_seconds}), flush=True)
    for line in sys.stdin:
        if line.strip() == "run":
            start = time.perf_counter()
            run(1)
            prefill = time.perf_counter() - start
            start = time.perf_counter()
            tokens = run(1 + new)
            whole = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            answer = {
                "prefill_seconds": prefill,
                "generate_seconds": whole,
                "tokens": tokens,
                "peak_rss_bytes": peak,
            }
        else:
            answer = _memory_and_arithmetic()
        print(json.dumps(answer), flush=True)


# --- the parent: start the workers, interleave them, summarise ----------------------------------


def traffic(new: int) -> dict:
    """Bytes read, operations and arithmetic intensity of a decode step and of the prefill."""
    from gguf import GGUFReader

    from attnlib.counting import decoder_pass_multiplications
    from attnlib.model import llama
    from attnlib.model.llama_file import find_smollm2

    c = llama.LlamaConfig(30, 9, 3, 64, 576, 1536, 49152, 8192, 100000.0, 1e-5)
    weights = 4 * c.n_parameters  # every float32 weight once; the embedding as the unembedding
    stored = sum(int(t.n_bytes) for t in GGUFReader(find_smollm2()).tensors)  # llama.cpp reads these
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
        "stored_weights_bytes": stored,
        "cache_bytes_per_token_of_context": per_token_cache,
        "mean_context": context,
        "decode_bytes_per_token": decode_bytes,
        "stored_decode_bytes_per_token": stored + per_token_cache // 2 * context,  # float16 cache
        "decode_operations_per_token": decode_ops,
        "decode_arithmetic_intensity": decode_ops / decode_bytes,
        "prefill_tokens": PROMPT_TOKENS,
        "prefill_bytes": prefill_bytes,
        "prefill_operations": prefill_ops,
        "prefill_arithmetic_intensity": prefill_ops / prefill_bytes,
    }


class Worker:
    """A contender's process: ``ask("run")`` or ``ask("memory")`` returns its JSON answer."""

    def __init__(self, kind: str, threads: int, new: int) -> None:
        env = os.environ | {
            name: str(threads) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
        }
        env |= {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        command = [sys.executable, __file__, "--worker", kind, "--threads", str(threads), "--new", str(new)]
        self.kind, self.threads = kind, threads
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.load_seconds = self._answer()["load_seconds"]

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.kind} worker ({self.threads} threads) stopped")
        return json.loads(line)

    def ask(self, what: str) -> dict:
        self.process.stdin.write(what + "\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def _available(kind: str) -> bool:
    module = {"transformers": "transformers", "llama.cpp": "llama_cpp"}.get(kind, "numpy")
    return importlib.util.find_spec(module) is not None


def measure(threads: int, kinds: list[str], rounds: int, new: int) -> dict:
    """Every contender on ``threads`` threads, ``rounds`` rounds interleaved."""
    workers = [Worker(kind, threads, new) for kind in kinds]  # all loaded before the first round
    try:
        rows = {w.kind: [] for w in workers}
        memory = []
        for _ in range(rounds):
            for w in workers:
                rows[w.kind].append(w.ask("run"))
            memory.append(workers[0].ask("memory"))
    finally:
        for w in workers:
            w.close()
    result = {"threads": threads, "memory_rounds": memory}
    for key in ("copy_bytes_per_second", "read_bytes_per_second", "matmul_operations_per_second"):
        result[key] = _median([m[key] for m in memory])
    result["contenders"] = {}
    for w in workers:
        runs = rows[w.kind]
        prefill = _median([r["prefill_seconds"] for r in runs])
        whole = _median([r["generate_seconds"] for r in runs])
        result["contenders"][w.kind] = {
            "load_seconds": w.load_seconds,
            "median_prefill_seconds": prefill,
            "decode_seconds_per_token": (whole - prefill) / new,
            # the first round's: the NumPy worker's bandwidth arrays (512 MiB) count in every later one
            "peak_rss_bytes": runs[0]["peak_rss_bytes"],
            "tokens": runs[-1]["tokens"],
            "rounds": [{k: r[k] for k in ("prefill_seconds", "generate_seconds")} for r in runs],
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--new", type=int, default=32, help="new tokens decoded per round")
    parser.add_argument("--contenders", nargs="+", choices=CHOICES, default=list(CONTENDERS))
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--worker", choices=CHOICES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.threads[0], args.new)
        return

    sys.path.insert(0, str(ROOT / "tools"))
    from machine import machine_description  # tools/machine.py

    kinds = ["numpy"] + [k for k in args.contenders if k != "numpy" and _available(k)]
    missing = [k for k in args.contenders if k not in kinds]
    if missing:
        print(f"not installed, not timed: {', '.join(missing)}")
    load_before = os.getloadavg()
    bytes_ops = traffic(args.new)
    by_threads = {}
    for threads in args.threads:
        m = by_threads[str(threads)] = measure(threads, kinds, args.rounds, args.new)
        ours = m["contenders"]["numpy"]
        print(
            f"{threads} thread(s): read {m['read_bytes_per_second'] / 1e9:.1f} GB/s, copy "
            f"{m['copy_bytes_per_second'] / 1e9:.1f} GB/s, float32 products "
            f"{m['matmul_operations_per_second'] / 1e9:.0f} GFLOP/s → balance point "
            f"{m['matmul_operations_per_second'] / m['read_bytes_per_second']:.1f} operations per byte"
        )
        for kind, r in m["contenders"].items():
            read = bytes_ops[
                "stored_decode_bytes_per_token" if kind == "llama.cpp" else "decode_bytes_per_token"
            ]
            r["read_limit_seconds_per_token"] = read / m["read_bytes_per_second"]
            r["decode_over_read_limit"] = r["decode_seconds_per_token"] / r["read_limit_seconds_per_token"]
            r["same_tokens_as_numpy"] = r["tokens"] == ours["tokens"]
            decode, limit = r["decode_seconds_per_token"] * 1e3, r["read_limit_seconds_per_token"] * 1e3
            print(
                f"  {kind:>14}: load {r['load_seconds']:.2f} s, prefill {PROMPT_TOKENS} tokens "
                f"{r['median_prefill_seconds'] * 1e3:.0f} ms, decode {decode:.1f} ms/token "
                f"({r['decode_over_read_limit']:.2f}× its read limit of {limit:.1f} ms), "
                f"peak RSS {r['peak_rss_bytes'] / 2**30:.2f} GiB"
                + ("" if r["same_tokens_as_numpy"] else ", other tokens than attnlib's")
            )
    load_after = os.getloadavg()
    print(
        f"arithmetic intensity: decode {bytes_ops['decode_arithmetic_intensity']:.2f} operations per byte, "
        f"prefill of {PROMPT_TOKENS} tokens {bytes_ops['prefill_arithmetic_intensity']:.1f}"
    )
    print("load average (1, 5, 15 min) before: " + ", ".join(f"{x:.2f}" for x in load_before))
    print("load average (1, 5, 15 min) after: " + ", ".join(f"{x:.2f}" for x in load_after))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "machine": machine_description(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "load_before": load_before,
        "load_after": load_after,
        "goals": GOALS,
        "prompt_tokens": PROMPT_TOKENS,
        "new_tokens": args.new,
        "rounds": args.rounds,
        "traffic": bytes_ops,
        "threads": by_threads,
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")


if __name__ == "__main__":
    main()
