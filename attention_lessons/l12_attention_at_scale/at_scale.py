"""The pictures of lesson 12, attention at scale: the n² wall, the online softmax block by block,
the blocks tiled attention computes or skips, and the benchmark against PyTorch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attention_lessons.kit.plots.artists import number
from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.palette import color
from attention_lessons.kit.plots.styles import figure, style_context
from attnlib.counting import operation_counts, tile_counts, tiled_bytes, weights_bytes
from attnlib.efficient import online_softmax, tile_schedule
from attnlib.validation import as_positive_int, as_real_array

__all__ = [
    "benchmark_figure",
    "memory_wall_figure",
    "online_softmax_figure",
    "online_softmax_path_figure",
    "tiles_figure",
]

GIB = 2**30


def memory_wall_figure(
    sizes: Sequence[int],
    *,
    d: int = 64,
    block: int = 128,
    laptop_gib: float = 16.0,
    style: str = "light",
) -> Figure:
    """Memory and operations of attention against the sequence length n, on log axes.

    Left: the float32 weights of one head (:func:`attnlib.counting.weights_bytes`) beside what
    tiled attention holds (:func:`attnlib.counting.tiled_bytes`), and a laptop's memory. Right:
    the arithmetic operations (:func:`attnlib.counting.operation_counts`, all kinds added up).

    Parameters
    ----------
    sizes : sequence of int
        The sequence lengths n (queries = keys).
    d : int
        ``d_k = d_v``.
    block : int
        Block size of the tiled version (square blocks).
    laptop_gib : float
        The memory line drawn, in GiB.
    style : {"light", "dark"}
    """
    n = np.array([as_positive_int(s, "sizes entry") for s in sizes])
    naive = np.array([weights_bytes(int(s), int(s)) for s in n]) / GIB
    tiled = np.array([tiled_bytes(int(s), int(s), d, d, block_q=block, block_k=block) for s in n]) / GIB
    ops = np.array([sum(operation_counts(int(s), int(s), d, d).totals().values()) for s in n], dtype=float)
    fig, axes = figure(1, 2, figsize=(10.0, 3.8), style=style)
    ax_m, ax_o = axes[0]
    with style_context(style):
        ax_m.loglog(n, naive, "o-", base=2, color=color("naive attention"), label="the weights n × n (naive)")
        ax_m.loglog(n, tiled, "s-", base=2, color=color("tiled attention"), label=f"tiled, blocks of {block}")
        edge = mpl.rcParams["axes.edgecolor"]  # a reference line, not a meaning: the axes' own colour
        ax_m.axhline(laptop_gib, color=edge, linestyle="--", label=f"a laptop's {laptop_gib:g} GiB")
        ax_m.set_title("Memory of one head, float32")
        ax_m.set_xlabel("sequence length n")
        ax_m.set_ylabel("GiB")
        ax_m.legend(fontsize=8, loc="upper left")
        ax_o.loglog(n, ops, "o-", base=2, color=color("naive attention"))
        ax_o.set_title(f"Operations of one head, d = {d}")
        ax_o.set_xlabel("sequence length n")
        ax_o.set_ylabel("operations")
        for ax in (ax_m, ax_o):
            ax.grid(True, which="major", alpha=0.4)
    over = [int(s) for s, gib in zip(n, naive, strict=True) if gib > laptop_gib]
    wall = (
        f"pass a laptop's {laptop_gib:g} GiB from n = {over[0]}" if over else f"stay under {laptop_gib:g} GiB"
    )
    text = join_sentences(
        [
            f"Memory and operations of one attention head (d = {d}) against the sequence length n, from "
            f"{n[0]} to {n[-1]}, on log axes",
            f"The n × n float32 weights grow from {number(naive[0])} to {number(naive[-1])} GiB and {wall}; "
            f"tiled attention with blocks of {block} holds {number(tiled[0])} to {number(tiled[-1])} GiB",
            f"Operations grow from {number(ops[0])} to {number(ops[-1])}",
        ]
    )
    table = Table(
        caption="Memory and operations of one head",
        columns=("naive weights (GiB)", "tiled (GiB)", "operations"),
        rows=tuple(str(s) for s in n), cells=tuple(
            (number(a), number(b), number(c)) for a, b, c in zip(naive, tiled, ops, strict=True)
        ), corner="n",
    )  # fmt: skip
    describe(fig, text, [table])
    return fig


def online_softmax_figure(scores: npt.ArrayLike, block_size: int, *, style: str = "light") -> Figure:
    """One row of scores read block by block: the running maximum and the running sum.

    Left: the scores as bars, the blocks marked, and the running maximum ``m`` after each block
    as a step line. Right: the running sum ``l`` after each block, each point labelled with the
    factor ``exp(m_before − m)`` it applied to the sum before (where the maximum grew).

    Parameters
    ----------
    scores : (n_k,)
    block_size : int
    style : {"light", "dark"}
    """
    s = as_real_array(scores, "scores").astype(np.float64)
    states = list(online_softmax(s, block_size))
    fig, axes = figure(1, 2, figsize=(10.0, 3.6), style=style)
    ax_s, ax_l = axes[0]
    with style_context(style):
        ax_s.bar(np.arange(s.size), s, 0.6, color=color("scaled score"))
        for st in states[1:]:
            ax_s.axvline(st.start - 0.5, color=mpl.rcParams["grid.color"], linestyle=":", linewidth=1)
        for st in states:
            ax_s.hlines(st.maximum, st.start - 0.5, st.stop - 0.5, color=color("running maximum"), lw=2.5)
        ax_s.axhline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        ax_s.set_title(f"Scores, blocks of {block_size}; running maximum m")
        ax_s.set_xlabel("key j")
        ax_s.set_ylabel("score")
        blocks = np.arange(1, len(states) + 1)
        ax_l.plot(blocks, [st.total for st in states], "o-", color=color("tiled attention"))
        for b, st in zip(blocks[1:], states[1:], strict=True):
            if st.rescale < 1:
                ax_l.annotate(f"× {st.rescale:.3f}", (b, st.total), textcoords="offset points", xytext=(0, 8),
                              ha="center", fontsize=9, color=mpl.rcParams["text.color"])  # fmt: skip
        ax_l.set_xticks(blocks)
        ax_l.set_title("Running sum l = Σ exp(s_j − m)")
        ax_l.set_xlabel("blocks read")
        ax_l.set_ylabel("l")
    grew = [
        f"× {st.rescale:.3f} after block {b}"
        for b, st in enumerate(states, start=1)
        if b > 1 and st.rescale < 1
    ]
    text = join_sentences(
        [
            f"One row of {s.size} scores read in {len(states)} blocks of {block_size}: the running maximum m "
            f"after each block is {', '.join(number(st.maximum) for st in states)}; the running sum l is "
            f"{', '.join(number(st.total) for st in states)}",
            f"Where the maximum grew, the sum before was rescaled: {'; '.join(grew)}" if grew else
            "The maximum never grew after the first block, so the sum was never rescaled",
        ]
    )  # fmt: skip
    table = Table(
        caption="The online softmax, block by block", columns=("keys", "maximum m", "sum l", "rescale"),
        rows=tuple(str(b) for b in range(1, len(states) + 1)),
        cells=tuple(
            (f"{st.start}–{st.stop - 1}", number(st.maximum), number(st.total), f"{st.rescale:.3f}")
            for st in states
        ), corner="block",
    )  # fmt: skip
    describe(fig, text, [table])
    return fig


def tiles_figure(n: int, block: int, *, style: str = "light") -> Figure:
    """The blocks of scores tiled attention computes, without a mask and with a causal mask.

    Computed blocks are coloured; under the causal mask the blocks on the diagonal are computed
    and partly masked (hatched), and the blocks above it are skipped (left blank).

    Parameters
    ----------
    n : int
        Queries and keys.
    block : int
        Square blocks of ``block`` queries × ``block`` keys.
    style : {"light", "dark"}
    """
    size, b = as_positive_int(n, "n"), as_positive_int(block, "block")
    fig, axes = figure(1, 2, figsize=(8.0, 4.0), style=style)
    said: list[str] = []
    with style_context(style):
        for ax, causal in zip(axes[0], (False, True), strict=True):
            schedule = tile_schedule(size, size, block_q=b, block_k=b, causal=causal)
            edge = mpl.rcParams["axes.edgecolor"]
            for qb in schedule:
                for j0, j1 in qb.key_blocks:
                    partly = causal and j1 - 1 > qb.start  # on the diagonal: computed, partly masked
                    corner, width, height = (j0, qb.start), j1 - j0, qb.stop - qb.start
                    look = {"alpha": 0.55, "hatch": "//"} if partly else {"alpha": 0.9}
                    ax.add_patch(
                        Rectangle(corner, width, height, fc=color("tiled attention"), edgecolor=edge, **look)
                    )
            counts = tile_counts(size, size, block_q=b, block_k=b, causal=causal)
            computed, total = counts.computed, counts.blocks
            ax.set_xlim(0, size)
            ax.set_ylim(size, 0)
            ax.set_aspect("equal")
            ax.set_xlabel("keys")
            ax.set_ylabel("queries")
            kind = "causal" if causal else "no mask"
            ax.set_title(f"{kind}: {computed} of {total} blocks computed")
            said.append(f"{kind}: {computed} of {total} blocks computed")
    describe(
        fig,
        join_sentences(
            [
                f"The blocks of {b} × {b} scores that tiled attention computes for {size} queries and keys",
                "; ".join(said),
                "Under the causal mask the blocks on the diagonal are partly masked (hatched) and those "
                "above it are skipped (blank)",
            ]
        ),
    )
    return fig


#: The thread settings of ``benchmarks/attention.py``, as the figures name them.
THREAD_SETTINGS = {"1": "one thread each", "default": "default threads each"}
_NAMES = {"naive": "naive attnlib", "tiled": "tiled attnlib", "torch": "PyTorch"}
_MARKERS = {"naive": "o", "tiled": "s", "torch": "^"}  # a shape as well as a colour


def benchmark_figure(results: Mapping[str, Any], *, batch_heads: int = 8, style: str = "light") -> Figure:
    """Time (one thread each; default threads each) and peak memory against n, no mask.

    Parameters
    ----------
    results : mapping
        The JSON written by ``benchmarks/attention.py``: ``rows`` with ``threads`` ("1" or
        "default"), ``n``, ``batch_heads``, ``causal``, ``seconds`` (naive, tiled, torch) and, in
        the one-thread rows, ``peak_bytes``.
    batch_heads : int
        Which rows to draw.
    style : {"light", "dark"}
    """
    rows = [r for r in results["rows"] if r["batch_heads"] == batch_heads and not r["causal"]]
    if not rows:
        raise ValueError(f"the results have no rows with batch_heads = {batch_heads}")
    colors = {"naive": color("naive attention"), "tiled": color("tiled attention"), "torch": color("PyTorch")}
    fig, axes = figure(1, 3, figsize=(13.0, 3.8), style=style)
    with style_context(style):
        for ax, setting in zip(axes[0][:2], THREAD_SETTINGS, strict=True):
            chosen = [r for r in rows if r["threads"] == setting]
            for key in _NAMES:
                points = [(r["n"], r["seconds"][key]) for r in chosen if r["seconds"].get(key) is not None]
                if points:
                    x, y = zip(*points, strict=True)
                    ax.loglog(x, np.array(y) * 1e3, "-", marker=_MARKERS[key], base=2, color=colors[key],
                              label=_NAMES[key])  # fmt: skip
            ax.set_title(f"Time, {batch_heads} heads, {THREAD_SETTINGS[setting]}")
            ax.set_xlabel("n")
            ax.set_ylabel("ms (median)")
            ax.grid(True, alpha=0.4)
        axes[0][0].legend(fontsize=8)
        ax = axes[0][2]
        measured = [r for r in rows if r["peak_bytes"]]
        for key in _NAMES:
            points = [(r["n"], r["peak_bytes"][key]) for r in measured if r["peak_bytes"].get(key)]
            if points:
                x, y = zip(*points, strict=True)
                ax.loglog(x, np.array(y) / 2**20, "-", marker=_MARKERS[key], base=2, color=colors[key],
                          label=_NAMES[key])  # fmt: skip
        ax.set_title(f"Peak extra memory, {batch_heads} heads")
        ax.set_xlabel("n")
        ax.set_ylabel("MiB")
        ax.grid(True, alpha=0.4)
        ax.legend(fontsize=8)
    text, table = benchmark_description(rows, batch_heads)
    describe(fig, text, [table])
    return fig


def benchmark_description(rows: Sequence[Mapping[str, Any]], batch_heads: int) -> tuple[str, Table]:
    """The text alternative of :func:`benchmark_figure`: the times at the largest n, and a table."""
    largest = max(r["n"] for r in rows)

    def at(row: Mapping[str, Any]) -> str:
        times = ", ".join(
            f"{_NAMES[k]} {number(row['seconds'][k] * 1e3)} ms" for k in _NAMES if row["seconds"].get(k)
        )
        return f"{THREAD_SETTINGS[row['threads']]}: {times}"

    text = join_sentences(
        [
            f"Median time and peak extra memory of attention without a mask against n for {batch_heads} "
            f"heads, n from {min(r['n'] for r in rows)} to {largest}, on log axes",
            f"At n = {largest}, " + "; ".join(at(r) for r in rows if r["n"] == largest),
            "Every measurement is in the table below the figure",
        ]
    )
    columns = [f"{_NAMES[k]} (ms)" for k in _NAMES] + [f"{_NAMES[k]} (MiB)" for k in _NAMES]
    table = Table(
        caption=f"Median time and peak extra memory, {batch_heads} heads, no mask", columns=tuple(columns),
        rows=tuple(f"n = {r['n']}, {THREAD_SETTINGS[r['threads']]}" for r in rows),
        cells=tuple(
            tuple(_measured(r["seconds"].get(k), 1e3) for k in _NAMES)
            + tuple(_measured((r["peak_bytes"] or {}).get(k), 2.0**-20) for k in _NAMES)
            for r in rows
        ),
        corner="run",
    )  # fmt: skip
    return text, table


def _measured(value: float | None, unit: float) -> str:
    return "–" if value is None else number(value * unit)


def online_softmax_path_figure(
    scores: npt.ArrayLike, values: npt.ArrayLike, block_size: int, *, style: str = "light"
) -> Figure:
    """One query row read block by block: the running maximum, the numbers per block, the output's path.

    Left: the scores as bars, the blocks marked, the running maximum ``m`` as a step line, and
    under each block the running sum ``l`` after it and the factor ``exp(m_before − m)`` it applied.
    Right: the partial output ``o / l`` after each block (numbered points joined by a line) walking
    to the exact ``softmax(s) V`` (the ring), where the last block lands.

    Parameters
    ----------
    scores : (n_k,)
    values : (n_k, 2)
        The values in 2D.
    block_size : int
    style : {"light", "dark"}
    """
    s = as_real_array(scores, "scores").astype(np.float64)
    v = as_real_array(values, "values").astype(np.float64)
    if v.ndim != 2 or v.shape != (s.size, 2):
        raise ValueError(f"values must have shape (n_k, 2) = ({s.size}, 2), got shape {v.shape}")
    states = list(online_softmax(s, block_size, v))
    path = np.array([st.output for st in states])
    weights = np.exp(s - s.max())
    exact = weights @ v / weights.sum()
    fig, axes = figure(1, 2, figsize=(11.0, 4.2), style=style)
    ax_s, ax_o = axes[0]
    with style_context(style):
        text_color = mpl.rcParams["text.color"]
        ax_s.bar(np.arange(s.size), s, 0.6, color=color("scaled score"), label="scores s_j")
        for st in states[1:]:
            ax_s.axvline(st.start - 0.5, color=mpl.rcParams["grid.color"], linestyle=":", linewidth=1)
        for i, st in enumerate(states):
            ax_s.hlines(st.maximum, st.start - 0.5, st.stop - 0.5, color=color("running maximum"), lw=2.5,
                        label="running maximum m" if i == 0 else None)  # fmt: skip
            middle = (st.start + st.stop - 1) / 2
            factor = "—" if i == 0 else f"× {st.rescale:.3f}"
            ax_s.annotate(f"l = {st.total:.2f}\n{factor}", (middle, 0), xycoords=("data", "axes fraction"),
                          xytext=(0, -36), textcoords="offset points", ha="center", va="top", fontsize=9,
                          color=text_color)  # fmt: skip
        ax_s.axhline(0, color=mpl.rcParams["axes.edgecolor"], linewidth=0.8)
        ax_s.set_title(f"Scores in blocks of {block_size}: m, and per block l and the rescale")
        ax_s.set_xlabel("key j", labelpad=2)
        ax_s.set_ylabel("score")
        ax_s.legend(fontsize=8, loc="upper left")
        ax_o.scatter(v[:, 0], v[:, 1], s=12, color=mpl.rcParams["grid.color"], label="values v_j", zorder=1)
        ax_o.plot(path[:, 0], path[:, 1], "-", marker="s", color=color("tiled attention"),
                  label="o / l after each block", zorder=2)  # fmt: skip
        for b, (x, y) in enumerate(path, start=1):
            ax_o.annotate(
                str(b), (x, y), xytext=(6, 6), textcoords="offset points", fontsize=9, color=text_color
            )
        ax_o.scatter([exact[0]], [exact[1]], s=260, facecolors="none", edgecolors=text_color, linewidths=1.5,
                     label="softmax(s) V (the ring)", zorder=3)  # fmt: skip
        ax_o.set_title("The partial output o / l")
        ax_o.set_xlabel("dimension 1")
        ax_o.set_ylabel("dimension 2")
        ax_o.legend(fontsize=8)
    grew = [
        f"× {st.rescale:.3f} at block {b}" for b, st in enumerate(states, start=1) if b > 1 and st.rescale < 1
    ]
    text = join_sentences(
        [
            f"One query row of {s.size} scores read in {len(states)} blocks of {block_size}: the running "
            f"maximum m after each block is {', '.join(number(st.maximum) for st in states)}, the running "
            f"sum l is {', '.join(number(st.total) for st in states)}, and the sum was rescaled "
            + ("; ".join(grew) if grew else "never"),
            "The partial output o / l moves through "
            + ", ".join(f"({number(x)}, {number(y)})" for x, y in path)
            + f" and lands on the exact softmax(s) V = ({number(exact[0])}, {number(exact[1])}), "
            "drawn as a ring",
        ]
    )  # fmt: skip
    table = Table(
        caption="The online softmax of one row, block by block",
        columns=("keys", "maximum m", "sum l", "rescale", "o / l"),
        rows=tuple(str(b) for b in range(1, len(states) + 1)),
        cells=tuple(
            (f"{st.start}–{st.stop - 1}", number(st.maximum), number(st.total), f"{st.rescale:.3f}",
             f"({number(x)}, {number(y)})")
            for st, (x, y) in zip(states, path, strict=True)
        ), corner="block",
    )  # fmt: skip
    describe(fig, text, [table])
    return fig
