"""What the argument checks cost lesson 15's generation: this attnlib against another revision's.

    .venv/bin/python benchmarks/generation_overhead.py                 # against HEAD's attnlib
    .venv/bin/python benchmarks/generation_overhead.py --ref HEAD~3 --rounds 9

The other revision's ``attnlib/`` is taken with ``git archive REF attnlib`` into a temporary folder.
Each round runs two child processes, one after the other, the old attnlib first (``PYTHONPATH``
puts it before this checkout) and then this one: A B A B …, so that a change in the machine's
load touches both alike. Each child loads lesson 15's committed text model from arrays the parent
wrote (so that the child needs nothing but ``attnlib.decoder``) and times ``--calls`` calls of
each workload in CPU time (``time.process_time``: the time a process waits for a core on a shared
machine is not counted), with one BLAS thread. The workloads:

- ``window``: 512 tokens, greedy, after a 33-token held-out prompt, with the rolling cache of
  a window of 64 and 4 sinks (``benchmarks/generation.py``'s run);
- ``sampled``: 100 tokens drawn at temperature 0.8 with the whole cache (lesson 15 · 1's run).

Both revisions must write the same tokens (their SHA-256 is compared). Printed and written to
``benchmarks/results/generation_overhead.json``: the median CPU seconds of each side over all
rounds and calls, the speed-up (old / new), the calls of ``attnlib.validation``'s functions per
generated token (one profiled call each), the machine and the load average before and after.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy is imported, here and in the children

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "generation_overhead.json"
WORKLOADS = {
    "window": {"n_new": 512, "window": 64, "sinks": 4, "temperature": 0.0},
    "sampled": {"n_new": 100, "temperature": 0.8, "seed": 0},
}
PROMPT_CHARACTERS = 32


def child(arrays: Path, calls: int) -> dict[str, object]:
    """In a child process: time each workload with the ``attnlib`` that ``sys.path`` finds first."""
    import attnlib
    from attnlib.decoder import DecoderConfig, generate

    data = np.load(arrays)
    config = DecoderConfig(**json.loads(str(data["config"])))
    params = {name[len("param:") :]: data[name] for name in data.files if name.startswith("param:")}
    prompt = data["prompt"]
    result: dict[str, object] = {"attnlib": str(Path(attnlib.__file__).parent)}
    for name, settings in WORKLOADS.items():
        n_new = settings["n_new"]
        options = {key: value for key, value in settings.items() if key != "n_new"}
        seconds = []
        for _ in range(calls):
            start = time.process_time()
            tokens = generate(config, params, prompt, n_new, **options)
            seconds.append(time.process_time() - start)
        profile = cProfile.Profile()
        profile.runcall(generate, config, params, prompt, n_new, **options)
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        checks = sum(n for (path, _, _), (_, n, *_) in stats.items() if path.endswith("validation.py"))
        result[name] = {
            "seconds": seconds,
            "tokens_sha256": hashlib.sha256(np.asarray(tokens, dtype=np.int64).tobytes()).hexdigest(),
            "validation_calls_per_token": checks / n_new,
        }
    return result


def write_arrays(path: Path) -> int:
    """Lesson 15's committed model and a held-out prompt, as plain arrays; the prompt's length."""
    sys.path.insert(0, str(ROOT))
    from attention_lessons.l15_generating_text.text_model import load_corpus, load_text_model

    model = load_text_model()
    prompt = model.vocabulary.encode(load_corpus().held_out[0][:PROMPT_CHARACTERS])
    params = {f"param:{name}": value for name, value in model.params.items()}
    np.savez(path, config=json.dumps(vars(model.config)), prompt=prompt, **params)
    return len(prompt)


def run_child(attnlib_parent: Path, arrays: Path, calls: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(attnlib_parent)}
    command = [sys.executable, __file__, "--child", str(arrays), "--calls", str(calls)]
    done = subprocess.run(command, env=env, cwd=attnlib_parent, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="the git revision whose attnlib is the old one")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3, help="calls of each workload in each child")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.calls)))
        return

    sys.path.insert(0, str(ROOT / "tools"))
    from machine import machine_description  # tools/machine.py

    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.ref, "attnlib"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        commit = subprocess.run(
            ["git", "rev-parse", args.ref], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.strip()
        arrays = Path(tmp) / "model.npz"
        prompt_tokens = write_arrays(arrays)
        load_before = os.getloadavg()
        sides: dict[str, list[dict[str, object]]] = {"old": [], "new": []}
        for _ in range(args.rounds):  # A B A B …
            sides["old"].append(run_child(old, arrays, args.calls))
            sides["new"].append(run_child(ROOT, arrays, args.calls))
        load_after = os.getloadavg()

    old_paths = {str(run["attnlib"]) for run in sides["old"]}
    assert all(path.startswith(str(old)) for path in old_paths), f"the old side imported {old_paths}"
    assert all(Path(str(run["attnlib"])) == ROOT / "attnlib" for run in sides["new"])
    table = {}
    for name, settings in WORKLOADS.items():
        times = {side: [t for run in runs for t in run[name]["seconds"]] for side, runs in sides.items()}
        hashes = {run[name]["tokens_sha256"] for runs in sides.values() for run in runs}
        assert len(hashes) == 1, f"{name}: the two revisions wrote different tokens"
        medians = {side: statistics.median(t) for side, t in times.items()}
        table[name] = {
            "settings": settings,
            "seconds": times,
            "median_seconds": medians,
            "ms_per_token": {side: 1000 * m / settings["n_new"] for side, m in medians.items()},
            "speedup": medians["old"] / medians["new"],
            "faster_by": 1 - medians["new"] / medians["old"],
            "validation_calls_per_token": {
                side: runs[0][name]["validation_calls_per_token"] for side, runs in sides.items()
            },
            "same_tokens": True,
        }

    print(f"old: attnlib of {args.ref} ({commit[:10]}); new: {ROOT / 'attnlib'}")
    print("load average (1, 5, 15 min) before: " + ", ".join(f"{x:.2f}" for x in load_before))
    print("load average (1, 5, 15 min) after:  " + ", ".join(f"{x:.2f}" for x in load_after))
    print(
        f"{args.rounds} rounds (old, new) × {args.calls} calls; median CPU seconds, one BLAS thread; "
        f"prompt {prompt_tokens} tokens\n"
    )
    print(f"{'workload':10s} {'old s':>8s} {'new s':>8s} {'old ms/tok':>11s} {'new ms/tok':>11s} "
          f"{'speed-up':>9s} {'checks/tok old → new':>22s}")  # fmt: skip
    for name, row in table.items():
        m, per, calls = row["median_seconds"], row["ms_per_token"], row["validation_calls_per_token"]
        print(
            f"{name:10s} {m['old']:8.3f} {m['new']:8.3f} {per['old']:11.3f} {per['new']:11.3f} "
            f"{row['speedup']:8.2f}× {calls['old']:10.0f} → {calls['new']:<8.0f}"
        )
    print("\nboth revisions wrote the same tokens")
    record = {
        "machine": machine_description(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "ref": args.ref,
        "commit": commit,
        "rounds": args.rounds,
        "calls": args.calls,
        "timer": "time.process_time",
        "load_before": load_before,
        "load_after": load_after,
        "prompt_tokens": prompt_tokens,
        "workloads": table,
    }
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
