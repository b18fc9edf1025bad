"""What every benchmark records about the machine beside its figures (``results/*.json``)."""

from __future__ import annotations

import os
import platform
import time
from typing import Any

import numpy as np


def machine_description(**extra: Any) -> dict[str, Any]:
    """The machine, the versions and the BLAS threads a benchmark ran with, plus ``extra``.

    ``cores_used`` are the cores this process may run on: fewer than ``cpu_count`` under
    ``taskset`` or in a container.
    """
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "cores_used": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        **extra,
        "date": time.strftime("%Y-%m-%d"),
    }
