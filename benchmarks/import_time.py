"""How long ``import attnlib`` takes beside ``import numpy`` (which it cannot avoid).

    .venv/bin/python benchmarks/import_time.py [repeats]

Each import runs in a fresh interpreter (so nothing is cached in the process); the table gives
the median wall time of the repeats, and the ratio attnlib / numpy. Also lists the heavy modules
that ``import attnlib`` loads (there should be none).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

HEAVY = ("matplotlib", "seaborn", "ipywidgets", "pandas", "IPython", "scipy", "torch")


def median_import_seconds(statement: str, repeats: int) -> float:
    """Median wall time of ``python -c statement`` over ``repeats`` fresh interpreters."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(repeats: int = 21) -> None:
    baseline = median_import_seconds("pass", repeats)
    numpy_s = median_import_seconds("import numpy", repeats)
    attnlib_s = median_import_seconds("import attnlib", repeats)
    probe = f"import sys, attnlib; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    heavy = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    print(f"median of {repeats} fresh interpreters (interpreter start-up alone: {baseline * 1e3:.1f} ms)")
    print(f"{'statement':<16}{'wall ms':>10}{'minus start-up':>16}")
    for name, seconds in (("import numpy", numpy_s), ("import attnlib", attnlib_s)):
        print(f"{name:<16}{seconds * 1e3:>10.1f}{(seconds - baseline) * 1e3:>16.1f}")
    print(f"ratio attnlib / numpy (minus start-up): {(attnlib_s - baseline) / (numpy_s - baseline):.2f}")
    print(f"heavy modules loaded by import attnlib: {heavy.stdout.strip() or 'none'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
