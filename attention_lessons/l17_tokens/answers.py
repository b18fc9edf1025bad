"""Lesson 17's hidden answers, as the lesson prints them (the manifest, ``lesson.toml``, lists them)."""

from __future__ import annotations


def function_bodies() -> list[str]:
    """A line of each function the learner writes, as the solution cells write it (code, not numbers)."""
    return [
        "counts[pair] = counts.get(pair, 0) + 1",
        "if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:",
        "pair = min(counts, key=lambda p: (-counts[p], p))",
        "pair = min(pairwise(ids), key=lambda p: rank.get(p, len(merges)))",
        'return b"".join(vocab[t] for t in ids).decode("utf-8", errors="replace")',
    ]
