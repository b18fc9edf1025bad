"""How fast does the playground answer a slider move? Plain Python; prints a table.

    .venv/bin/python benchmarks/widgets.py [--repeats 40] [--warmup 5]

Measured in one process, side by side (round robin, so that a busy machine slows every approach
alike), on lesson 07's four 2D tokens and its 2×2 figure (900 × 800 px PNG):

(a) one playground update: a slider value in → new PNG bytes ready. This is what a learner's
    drag costs: the attention steps, the figure changed in place, the changed artists drawn over
    a snapshot of the rest, the PNG encoded (``attnlib.widgets.playground(asynchronous=False)``,
    so the render happens inside the assignment to ``slider.value``).
(b) the common textbook approach: rebuild the same 2×2 figure from scratch with pyplot and
    seaborn (``annot=True`` heatmaps) and save it to PNG.
(c) for reference, the straightforward in-place update: ``plots.update_attention_figure`` and
    ``plots.png_bytes`` (a full draw with the layout engine and Pillow's PNG encoder).

The slider follows a drag: Token-1's x goes back and forth over [-1, 1.5] in steps of 0.05, so
some moves leave the current axis limits and make (a) redraw its whole figure, as in real use.
Reported: the median of ``--repeats`` runs of each after ``--warmup`` runs, and the ratio a/b.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")  # the textbook approach uses pyplot; no display here

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

import attnlib
from attnlib import examples, plots, widgets
from attnlib.projection import qkv

EXAMPLE = examples.four_tokens_2d()


def drag_path(n: int) -> list[float]:
    """Slider values of a drag: back and forth over [-1, 1.5] in steps of 0.05, never repeating."""
    forth = [round(v, 2) for v in np.arange(0.9, 1.5, 0.05)] + [
        round(v, 2) for v in np.arange(1.5, -1.0, -0.05)
    ]
    back = [round(v, 2) for v in np.arange(-1.0, 0.9, 0.05)]
    cycle = forth + back
    return [cycle[i % len(cycle)] for i in range(n)]


def steps_for(X: np.ndarray) -> attnlib.AttentionSteps:
    Q, K, V = qkv(X, EXAMPLE.W_q, EXAMPLE.W_k, EXAMPLE.W_v)
    return attnlib.attention_steps(Q, K, V)


def textbook_rebuild(X: np.ndarray) -> bytes:
    """The 2×2 figure from scratch, as tutorials write it: pyplot, seaborn, savefig."""
    steps = steps_for(X)
    tokens = list(EXAMPLE.tokens)
    colours = plots.OKABE_ITO[:4]
    fig, axes = plt.subplots(2, 2, figsize=(9, 8), layout="constrained")
    (ax_x, ax_s), (ax_w, ax_c) = axes
    zeros = np.zeros(len(X))
    for ax, points, alpha in ((ax_x, X, 1.0), (ax_c, X, 0.25), (ax_c, steps.output, 1.0)):
        ax.quiver(
            zeros, zeros, points[:, 0], points[:, 1],
            color=colours, angles="xy", scale_units="xy", scale=1, width=0.012, alpha=alpha,
        )  # fmt: skip
        for (x, y), token, colour in zip(points, tokens, colours, strict=True):
            ax.text(x, y, f" {token}", color=colour, alpha=alpha, fontsize=9, va="bottom")
    every = np.concatenate([X.ravel(), steps.output.ravel(), [0.0]])
    pad = 0.15 * max(every.max() - every.min(), 0.5)
    for ax, title in ((ax_x, "1. Embeddings X"), (ax_c, "4. Contextualized vectors (weights · V)")):
        ax.set_xlim(every.min() - pad, every.max() + pad)
        ax.set_ylim(every.min() - pad, every.max() + pad)
        ax.set_aspect("equal")
        ax.grid(True)
        ax.axhline(0, color="#555555", linewidth=0.8)
        ax.axvline(0, color="#555555", linewidth=0.8)
        ax.set_title(title)
    sns.heatmap(
        steps.raw_scores, annot=True, fmt=".2f", cmap="cividis", square=True, linewidths=0.5,
        xticklabels=tokens, yticklabels=tokens, ax=ax_s,
    )  # fmt: skip
    ax_s.set_title("2. Raw scores Q Kᵀ")
    sns.heatmap(
        steps.weights, annot=True, fmt=".2f", cmap="viridis", vmin=0, vmax=1, square=True, linewidths=0.5,
        xticklabels=tokens, yticklabels=tokens, ax=ax_w,
    )  # fmt: skip
    ax_w.set_title("3. Weights softmax(Q Kᵀ/√d_k)")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40, help="timed runs of each approach (at least 30)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs of each approach first")
    args = parser.parse_args(argv)
    if args.repeats < 30:
        parser.error("--repeats must be at least 30")

    explorer = widgets.playground(asynchronous=False)
    slider = explorer.sliders["Token-1 x"]
    reference = plots.attention_figure(steps_for(EXAMPLE.X), EXAMPLE.tokens, EXAMPLE.X)
    path = drag_path(args.warmup + args.repeats + 1)
    full_draws_before = 0

    def a_update(value: float) -> bytes:
        slider.value = value  # renders synchronously: the PNG is ready when this returns
        return explorer.image.value

    def b_rebuild(value: float) -> bytes:
        X = EXAMPLE.X.copy()
        X[0, 0] = value
        return textbook_rebuild(X)

    def c_inplace(value: float) -> bytes:
        X = EXAMPLE.X.copy()
        X[0, 0] = value
        plots.update_attention_figure(reference, steps_for(X), X)
        return plots.png_bytes(reference.figure)

    approaches: dict[str, Callable[[float], bytes]] = {"a": a_update, "b": b_rebuild, "c": c_inplace}
    times: dict[str, list[float]] = {name: [] for name in approaches}
    sizes: dict[str, int] = {}
    for i, value in enumerate(path[1:]):
        if i == args.warmup:
            assert explorer.renderer is not None
            full_draws_before = explorer.renderer.full_draws
        for name, run in approaches.items():  # round robin: load on the machine hits all alike
            start = time.perf_counter()
            png = run(value)
            elapsed = time.perf_counter() - start
            if i >= args.warmup:
                times[name].append(elapsed)
            sizes[name] = len(png)
    assert explorer.renderer is not None
    full_draws = explorer.renderer.full_draws - full_draws_before

    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    rows = [
        ("a", "playground update: slider value in → PNG bytes", median["a"]),
        ("b", "rebuild with pyplot + seaborn, savefig PNG", median["b"]),
        ("c", "in-place update + full savefig (reference)", median["c"]),
    ]
    versions = [
        f"attnlib {attnlib.__version__}",
        f"Python {platform.python_version()}",
        f"matplotlib {matplotlib.__version__}",
        f"seaborn {sns.__version__}",
        f"numpy {np.__version__}",
        f"{os.cpu_count()} CPUs ({platform.machine()})",
    ]
    print(" · ".join(versions))
    print(
        f"lesson 07 playground, 4 tokens, 900×800 px PNG · median of {args.repeats} runs each after "
        f"{args.warmup} warm-up runs, round robin in one process"
    )
    print()
    print(f"{'':3}{'approach':<50}{'median ms':>10}{'PNG kB':>9}")
    for key, label, value in rows:
        print(f"{key:<3}{label:<50}{value:>10.1f}{sizes[key] / 1000:>9.0f}")
    print()
    print(f"a/b = {median['a'] / median['b']:.3f}    (goal ≤ 0.2)")
    print(f"c/b = {median['c'] / median['b']:.3f}")
    print(
        f"(a) redrew its whole figure in {full_draws} of {args.repeats} timed moves (the axis limits changed)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
