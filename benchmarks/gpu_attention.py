"""PyTorch's scaled_dot_product_attention on a CUDA GPU, one backend at a time.

For each head size d, causal or not, sequence length n, backend (math, flash, memory-efficient,
cuDNN) and mode (forward, forward + backward) it records the median time of a call, the peak
memory allocated above the inputs, and the throughput in TFLOP/s. It also times one bf16
8192 x 8192 x 8192 matrix product, the card's practical ceiling. The table of
``attention_lessons/l12_attention_at_scale/gpu-sdpa-h100.json`` (lesson 12's data) was taken this way on
an H100; what each field means is in benchmarks/README.md.

Needs PyTorch with CUDA; on a machine without a CUDA GPU it says so and stops (exit status 0),
so CI, which has none, never runs it.

    python benchmarks/gpu_attention.py --json gpu.json
    python benchmarks/gpu_attention.py --d 64 --n-max 16384 --backends flash math
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

BACKENDS = ("math", "flash", "efficient", "cudnn")
MODES = ("fwd", "fwd+bwd")
BATCH, HEADS = 1, 16


def attention_flops(n: int, d: int, *, causal: bool, backward: bool) -> float:
    """FLOPs of one call: 4·B·H·n²·d (two products), halved when causal, ×3.5 with backward."""
    flops = 4.0 * BATCH * HEADS * n * n * d
    if causal:
        flops /= 2
    if backward:
        flops *= 3.5
    return flops


def median_ms(torch, call, repeats: int, warmup: int = 3) -> float:
    """Median time of ``call()`` in milliseconds, by CUDA events, after ``warmup`` calls."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def matmul_tflops(torch, size: int = 8192) -> float:
    """Throughput of one bf16 size³ matrix product (mean of 10 after 3 warm-ups)."""
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(torch, lambda: a @ b, repeats=10)
    return 2.0 * size**3 / (ms * 1e-3) / 1e12


def measure(torch, backend: str, mode: str, n: int, d: int, causal: bool) -> dict:
    """One row of the table: time, peak memory above the inputs and TFLOP/s, or the error."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    kinds = {
        "math": SDPBackend.MATH,
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
    }
    sdpa = torch.nn.functional.scaled_dot_product_attention
    backward = mode == "fwd+bwd"
    row = {"d": d, "causal": causal, "n": n, "backend": backend, "mode": mode}
    shape = (BATCH, HEADS, n, d)
    torch.cuda.empty_cache()
    try:
        q, k, v = (
            torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=backward) for _ in range(3)
        )
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        # Counted above the inputs: the output's gradient, and the gradients of Q, K and V,
        # which stay from one call to the next and accumulate.
        grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16) if backward else None

        def call() -> None:
            if backward:
                sdpa(q, k, v, is_causal=causal).backward(grad)
            else:
                with torch.no_grad():
                    sdpa(q, k, v, is_causal=causal)

        with sdpa_kernel([kinds[backend]]):
            ms = median_ms(torch, call, repeats=20 if n <= 16_384 else 5)
        peak = torch.cuda.max_memory_allocated() - before
    except torch.cuda.OutOfMemoryError:
        row["error"] = "out of memory"
        return row
    except RuntimeError as error:  # the backend has no kernel for these inputs
        row["error"] = str(error).splitlines()[0][:120]
        return row
    finally:
        q = k = v = grad = None
        torch.cuda.empty_cache()
    row["ms"] = round(ms, 4)
    row["peak_mib"] = round(peak / 2**20, 1)
    row["tflops"] = round(attention_flops(n, d, causal=causal, backward=backward) / (ms * 1e-3) / 1e12, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[64, 128], help="head sizes")
    parser.add_argument("--n-min", type=int, default=1024)
    parser.add_argument("--n-max", type=int, default=131_072)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--json", type=Path, help="write the table here")
    args = parser.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("PyTorch is not installed here: this benchmark needs PyTorch with CUDA. Nothing run.")
        return 0
    if not torch.cuda.is_available():
        print(f"PyTorch {torch.__version__} sees no CUDA GPU: this benchmark needs one. Nothing run.")
        return 0

    properties = torch.cuda.get_device_properties(0)
    info = {
        "gpu": properties.name,
        "sms": properties.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "matmul_bf16_8192_tflops": round(matmul_tflops(torch), 1),
    }
    print(", ".join(f"{key} {value}" for key, value in info.items()), flush=True)
    lengths = [n for n in (2**p for p in range(10, 18)) if args.n_min <= n <= args.n_max]
    rows = []
    print(f"{'d':>4} {'causal':>6} {'n':>7} {'backend':>9} {'mode':>7} {'ms':>10} {'MiB':>9} {'TFLOP/s':>8}")
    for d in args.d:
        for causal in (False, True):
            for n in lengths:
                for backend in args.backends:
                    for mode in MODES:
                        row = measure(torch, backend, mode, n, d, causal)
                        rows.append(row)
                        if "error" in row:
                            shown = f"{row['error'][:37]:>37}"
                        else:
                            shown = f"{row['ms']:>10.3f} {row['peak_mib']:>9.1f} {row['tflops']:>8.1f}"
                        print(f"{d:>4} {causal!s:>6} {n:>7} {backend:>9} {mode:>7} {shown}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"info": info, "rows": rows}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
