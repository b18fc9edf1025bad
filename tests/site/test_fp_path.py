"""The second floating-point path (``make second-path``) really is another path on this machine.

``make second-path`` re-runs the lessons under nbval and the reference tests with the Makefile's
``SECOND_FP_PATH``: OpenBLAS held to older kernels, NumPy's widest SIMD loops switched off,
PyTorch's vectorised kernels off. Stored outputs must survive it, which proves something only if
the sums there round differently from the first path's. This test, run on that path, computes the
same fingerprints here and in a child process without those variables, and fails if any part of
the path gives the first path's bits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.reference

#: The variables ``SECOND_FP_PATH`` (Makefile) sets; the first path is the environment without them.
PATH_VARIABLES = (
    "OPENBLAS_CORETYPE",
    "NPY_DISABLE_CPU_FEATURES",
    "ATEN_CPU_CAPABILITY",
    "MKL_ENABLE_INSTRUCTIONS",
)

FINGERPRINTS = """
import hashlib, json, numpy as np
def digest(a): return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
rng = np.random.default_rng(0)
A, B = rng.standard_normal((64, 300)), rng.standard_normal((300, 64))
# NumPy's SIMD loops for exp and tanh (softmax, GELU), in float64 and float32: which of them has a
# loop of its own depends on the CPU (float64's exp: AVX-512 only, so an AVX2 CPU gives libm's bits
# on both paths; float32's exp and float64's tanh: AVX2 too), so the part is all four together
loops = [f(a) for f in (np.exp, np.tanh) for a in (A, A.astype(np.float32))]
prints = {
    "BLAS matrix product (OpenBLAS)": digest(A @ B),
    "NumPy's exp and tanh, float64 and float32 (its SIMD loops)": " ".join(map(digest, loops)),
}
try:
    import torch
except ImportError:
    pass
else:
    prints["PyTorch's softmax (ATen's kernels)"] = digest(torch.softmax(torch.from_numpy(5 * A), -1).numpy())
print(json.dumps(prints))
"""


def fingerprints(env: dict[str, str]) -> dict[str, str]:
    """SHA-256 of a few results whose last bits depend on the kernels, computed under ``env``."""
    done = subprocess.run(
        [sys.executable, "-c", FINGERPRINTS], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(
    not any(name in os.environ for name in PATH_VARIABLES), reason="runs on the second path: make second-path"
)
def test_every_part_of_the_second_path_rounds_differently_from_the_first():
    second = fingerprints(dict(os.environ))
    first = fingerprints({k: v for k, v in os.environ.items() if k not in PATH_VARIABLES})
    same = [part for part in first if first[part] == second[part]]
    setting = {name: os.environ.get(name) for name in PATH_VARIABLES}
    assert not same, (
        f"on this CPU the second path ({setting}) gives the first path's bits in: {', '.join(same)}; "
        "choose settings of SECOND_FP_PATH (Makefile) that change them here"
    )


def test_the_fingerprints_are_the_same_twice_on_one_path():
    """What makes a difference above mean something: one path gives the same bits every time."""
    env = dict(os.environ)
    assert fingerprints(env) == fingerprints(env)
