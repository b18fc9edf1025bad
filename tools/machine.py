"""What a benchmark or a training script records about the machine it ran on.

The CPU matters beyond speed: another CPU adds in another order, so the last bits of its sums,
and so a trained model's file and its SHA-256, differ (``make second-path``).
"""

from __future__ import annotations

import ctypes
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np


def floating_point_path() -> dict[str, Any]:
    """The CPU and the kernels NumPy computes with on it: what decides the last bits of a sum.

    ``cpu`` is the model name Linux reports; ``numpy_simd`` the SIMD extensions NumPy's own loops
    use beyond its baseline; ``openblas_core`` the kernels OpenBLAS chose (None where it cannot
    be asked).
    """
    return {
        "cpu": _cpu_name(),
        "numpy_simd": np.show_config(mode="dicts")["SIMD Extensions"].get("found", []),
        "openblas_core": _openblas_core(),
    }


def machine_description(**extra: Any) -> dict[str, Any]:
    """The machine, its floating-point path, the versions and the BLAS threads, plus ``extra``.

    ``cores_used`` are the cores this process may run on: fewer than ``cpu_count`` under
    ``taskset`` or in a container.
    """
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        **floating_point_path(),
        "cpu_count": os.cpu_count(),
        "cores_used": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        **extra,
        "date": time.strftime("%Y-%m-%d"),
    }


def _cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _openblas_core() -> str | None:
    """The kernels NumPy's OpenBLAS chose (``SkylakeX``, ``Haswell``, ``Zen`` …), asked of the
    library NumPy's wheel ships."""
    for library in Path(np.__file__).parent.parent.glob("numpy.libs/libscipy_openblas*.so*"):
        corename = getattr(ctypes.CDLL(str(library)), "scipy_openblas_get_corename64_", None)
        if corename is not None:
            corename.restype = ctypes.c_char_p
            return corename().decode()
    return None
