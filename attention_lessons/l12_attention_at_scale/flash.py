"""The pictures of lesson 12's FlashAttention sections: memory traffic, and PyTorch's GPU backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from attention_lessons.kit.plots.artists import number
from attention_lessons.kit.plots.descriptions import Table, describe, join_sentences
from attention_lessons.kit.plots.palette import BACKEND_LOOKS, color
from attention_lessons.kit.plots.styles import figure, style_context
from attnlib.counting import hbm_traffic
from attnlib.validation import as_positive_int

__all__ = ["LOOP_NAMES", "gpu_backends_figure", "traffic_figure"]

#: How the figures name the loops of :func:`attnlib.counting.hbm_traffic`.
LOOP_NAMES = {
    "standard": "standard (S and P in HBM)",
    "kv-outer": "tiled, K/V blocks outside (FlashAttention-1)",
    "q-outer": "tiled, Q blocks outside (FlashAttention-2)",
}
_LOOKS = {
    "standard": ("o", "-", color("naive attention")),
    "kv-outer": ("s", "--", color("tiled attention")),
    "q-outer": ("D", "-", color("tiled attention")),
}


def traffic_figure(sizes: Sequence[int], *, d: int, sram: int, style: str = "light") -> Figure:
    """Numbers moved between HBM and SRAM against n, for each loop of :func:`hbm_traffic`, on log axes.

    Parameters
    ----------
    sizes : sequence of int
        Sequence lengths n.
    d : int
        Head size.
    sram : int
        ``M``, the on-chip memory in numbers.
    style : {"light", "dark"}
    """
    n = [as_positive_int(s, "sizes entry") for s in sizes]
    totals = {
        loop: np.array([hbm_traffic(s, d, sram=sram, loop=loop).total for s in n], float)
        for loop in LOOP_NAMES
    }
    fig, axes = figure(1, 1, figsize=(7.0, 4.0), style=style)
    ax = axes[0][0]
    with style_context(style):
        for loop, values in totals.items():
            marker, line, colour = _LOOKS[loop]
            ax.loglog(n, values, linestyle=line, marker=marker, base=2, color=colour, label=LOOP_NAMES[loop])
        ax.set_title(f"HBM reads + writes of one head, d = {d}, SRAM of {sram:,} numbers")
        ax.set_xlabel("sequence length n")
        ax.set_ylabel("numbers moved")
        ax.grid(True, which="major", alpha=0.4)
        ax.legend(fontsize=8)
    ratios = {loop: totals["standard"][-1] / totals[loop][-1] for loop in ("kv-outer", "q-outer")}
    text = join_sentences(
        [
            f"Numbers read from and written to HBM by attention of one head against n from {n[0]} to "
            f"{n[-1]}, d = {d}, an SRAM of {sram} numbers, on log axes; all three lines grow like n²",
            f"At n = {n[-1]} the standard algorithm moves {number(totals['standard'][-1])}, "
            f"FlashAttention-1's loop {number(totals['kv-outer'][-1])} "
            f"({number(ratios['kv-outer'])} times fewer) and "
            f"FlashAttention-2's {number(totals['q-outer'][-1])} ({number(ratios['q-outer'])} times fewer)",
        ]
    )
    table = Table(
        caption="Numbers moved between HBM and SRAM",
        columns=tuple(LOOP_NAMES.values()),
        rows=tuple(str(s) for s in n),
        cells=tuple(tuple(number(totals[loop][i]) for loop in LOOP_NAMES) for i in range(len(n))),
        corner="n",
    )
    describe(fig, text, [table])
    return fig


def gpu_backends_figure(
    results: Mapping[str, Any], *, d: int = 64, causal: bool = False, mode: str = "fwd", style: str = "light"
) -> Figure:
    """PyTorch's GPU backends: TFLOP/s and peak memory against n, from ``gpu-sdpa-h100.json``.

    Parameters
    ----------
    results : mapping
        ``info`` (the GPU) and ``rows``, each with ``d``, ``causal``, ``n``, ``backend``, ``mode``
        and either ``tflops`` and ``peak_mib``, or ``error``.
    d : int
    causal : bool
    mode : {"fwd", "fwd+bwd"}
    style : {"light", "dark"}
    """
    rows = [r for r in results["rows"] if r["d"] == d and r["causal"] == causal and r["mode"] == mode]
    if not rows:
        raise ValueError(f"the results have no rows with d = {d}, causal = {causal}, mode = {mode!r}")
    backends = [b for b in BACKEND_LOOKS if any(r["backend"] == b for r in rows)]
    fig, axes = figure(1, 2, figsize=(11.0, 4.0), style=style)
    ax_t, ax_m = axes[0]
    failed: list[str] = []
    with style_context(style):
        for backend in backends:
            ok = [r for r in rows if r["backend"] == backend and "error" not in r]
            meaning, marker, linestyle = BACKEND_LOOKS[backend]
            look = {"marker": marker, "linestyle": linestyle, "color": color(meaning), "label": backend}
            ax_t.semilogx([r["n"] for r in ok], [r["tflops"] for r in ok], base=2, **look)
            ax_m.loglog([r["n"] for r in ok], [r["peak_mib"] for r in ok], base=2, **look)
            errors = [r for r in rows if r["backend"] == backend and "error" in r]
            if errors:
                first = min(errors, key=lambda r: r["n"])
                failed.append(f"{backend} fails from n = {first['n']} ({first['error']})")
                note = f"{backend}: {first['error']}\nfrom n = {first['n']:,}"
                last = (ok[-1]["n"], ok[-1]["peak_mib"])
                ax_m.annotate(note, last, xytext=(8, -4), textcoords="offset points", fontsize=8, va="top")
        passes = "forward" if mode == "fwd" else "forward + backward"
        kind = f"d = {d}, {'causal' if causal else 'no mask'}, {passes}"
        ax_t.set_title(f"Speed, {kind}")
        ax_t.set_xlabel("sequence length n")
        ax_t.set_ylabel("TFLOP/s")
        ax_t.set_ylim(bottom=0)
        ax_m.set_title("Peak memory above the inputs")
        ax_m.set_xlabel("sequence length n")
        ax_m.set_ylabel("MiB")
        for ax in (ax_t, ax_m):
            ax.grid(True, which="major", alpha=0.4)
        ax_t.legend(fontsize=8)

    def span(backend: str, key: str) -> str:
        values = [r[key] for r in rows if r["backend"] == backend and key in r]
        return f"{number(min(values))}–{number(max(values))}"

    text = join_sentences(
        [
            f"PyTorch's scaled_dot_product_attention on an {results['info']['gpu']}, bf16, {kind}, "
            f"each backend forced alone, against n from {min(r['n'] for r in rows)} to "
            f"{max(r['n'] for r in rows)}",
            "TFLOP/s: " + "; ".join(f"{b} {span(b, 'tflops')}" for b in backends),
            "Peak memory in MiB: " + "; ".join(f"{b} {span(b, 'peak_mib')}" for b in backends),
            "; ".join(failed) if failed else "Every backend ran at every n",
        ]
    )
    sizes = sorted({r["n"] for r in rows})

    def cell(n: int, backend: str, key: str) -> str:
        row = next((r for r in rows if r["n"] == n and r["backend"] == backend), None)
        return "–" if row is None else row.get("error", number(row.get(key, float("nan"))))

    table = Table(
        caption=f"TFLOP/s and peak MiB, {kind}",
        columns=tuple(f"{b} TFLOP/s" for b in backends) + tuple(f"{b} MiB" for b in backends),
        rows=tuple(str(n) for n in sizes),
        cells=tuple(
            tuple(cell(n, b, "tflops") for b in backends) + tuple(cell(n, b, "peak_mib") for b in backends)
            for n in sizes
        ),
        corner="n",
    )
    describe(fig, text, [table])
    return fig
