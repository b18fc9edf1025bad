"""The text alternatives of the two drawing tools' panels: a heatmap, and 2D vectors as arrows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attention_lessons.kit.plots.artists import MAX_LISTED
from attention_lessons.kit.plots.cells import format_cell
from attention_lessons.kit.plots.descriptions import Description, Table

__all__ = [
    "MAX_CELLS_LISTED",
    "heatmap_description",
    "largest_per_row",
    "listed_points",
    "point",
    "value_range",
    "vectors_description",
]

#: A heatmap with at most this many cells lists them all in its text; a larger one names its
#: largest cell per row (up to :data:`~attention_lessons.kit.plots.artists.MAX_LISTED` rows) or overall.
MAX_CELLS_LISTED = 12


def heatmap_description(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str | None,
    xlabel: str,
    ylabel: str,
    decimals: int,
    hidden: np.ndarray | None = None,
) -> Description:
    """What a heatmap of ``values`` (shape (n_rows, n_cols), −inf masked) shows, and its table.

    ``hidden`` (boolean, the shape of ``values``) marks the cells a mask hides as well.

    >>> d = heatmap_description(np.array([[0.62, 0.38]]), ["it"], ["animal", "street"],
    ...                         title="Weights", xlabel="keys", ylabel="queries", decimals=2)
    >>> d.text
    'Weights: heatmap of 1 query × 2 keys. it: animal 0.62, street 0.38.'
    """
    rows, cols = (
        [" ".join(str(r).split()) for r in row_labels],
        [" ".join(str(c).split()) for c in col_labels],
    )
    cell = [[format_cell(v, decimals) for v in row] for row in values.tolist()]
    n_rows, n_cols = values.shape
    shape = f"{_count(n_rows, ylabel, 'row')} × {_count(n_cols, xlabel, 'column')}"
    head = f"{title or 'Heatmap'}: heatmap of {shape}"
    sentences = [head]
    finite = np.where(np.isfinite(values), values, -np.inf)
    if values.size <= MAX_CELLS_LISTED:
        listed = [", ".join(f"{c} {v}" for c, v in zip(cols, line, strict=True)) for line in cell]
        sentences.append("; ".join(f"{r}: {line}" for r, line in zip(rows, listed, strict=True)))
    elif n_rows <= MAX_LISTED:
        best = np.argmax(finite, axis=1)
        largest = [f"{r}: {cols[j]} {cell[i][j]}" for i, (r, j) in enumerate(zip(rows, best, strict=True))]
        sentences.append("Largest in each row: " + "; ".join(largest))
    elif np.isfinite(values).any():
        top = np.unravel_index(np.argmax(finite), values.shape)
        low = np.unravel_index(np.argmin(np.where(np.isfinite(values), values, np.inf)), values.shape)
        sentences.append(
            f"Largest {cell[top[0]][top[1]]} ({rows[top[0]]}, {cols[top[1]]}); smallest "
            f"{cell[low[0]][low[1]]} ({rows[low[0]]}, {cols[low[1]]})"
        )
    masked = int(np.isneginf(values).sum())
    if masked:
        sentences.append(f"{masked} of {values.size} cells masked (−∞, hatched)")
    hidden_count = int(np.sum(hidden & np.isfinite(values))) if hidden is not None else 0
    if hidden_count:
        sentences.append(f"{hidden_count} of {values.size} cells hidden by the mask (hatched)")
        masked += hidden_count
    if values.size > MAX_CELLS_LISTED:
        sentences.append("Every value is in the table below the figure")
    table = Table(
        caption=title or "Heatmap",
        columns=tuple(cols),
        rows=tuple(rows),
        cells=tuple(tuple(line) for line in cell),
        corner=f"{ylabel} \\ {xlabel}",
    )
    short = f"{head}, values {value_range(values, decimals)}"
    if masked:
        short += f", {masked} masked"
    return Description(". ".join(sentences) + ".", (table,), short + ".")


def vectors_description(
    tips: np.ndarray, tails: np.ndarray, labels: Sequence[str], *, title: str | None
) -> Description:
    """What arrows from ``tails`` to ``tips`` (shape (n, 2)) show: listed if they are few, and a table.

    >>> vectors_description(np.array([[1.0, 0.5], [-0.2, 1.0]]), np.zeros((2, 2)), ["cat", "dog"],
    ...                     title="Two tokens").text
    'Two tokens: 2 arrows from the origin: cat (1.00, 0.50), dog (−0.20, 1.00).'
    """
    names = [str(label) or f"arrow {i + 1}" for i, label in enumerate(labels)]
    from_origin = not np.any(tails)

    head = f"{title + ': ' if title else ''}{len(names)} arrow{'s' if len(names) != 1 else ''}"
    head += " from the origin" if from_origin else ""
    table = Table(
        caption=title or "Arrows",
        columns=("x", "y") if from_origin else ("from x", "from y", "to x", "to y"),
        rows=tuple(names),
        cells=tuple(
            tuple(format_cell(float(v)) for v in (tip if from_origin else (*tail, *tip)))
            for tip, tail in zip(tips, tails, strict=True)
        ),
        corner="arrow",
    )
    if len(names) > MAX_LISTED:
        return Description(f"{head}. Their ends are in the table below the figure.", (table,), f"{head}.")
    if from_origin:
        listed = ", ".join(f"{n} {point(tip)}" for n, tip in zip(names, tips, strict=True))
    else:
        listed = ", ".join(
            f"{n} from {point(tail)} to {point(tip)}" for n, tip, tail in zip(names, tips, tails, strict=True)
        )
    return Description(f"{head}: {listed}.", (table,), f"{head}.")


def _count(n: int, label: str, axis: str) -> str:
    """``"3 queries"`` for a plural label, ``"1 query"``; ``"4 columns (output)"`` for another one.

    >>> _count(3, "queries", "row"), _count(1, "queries", "row"), _count(4, "output", "column")
    ('3 queries', '1 query', '4 columns (output)')
    """
    word = " ".join(label.split())
    if not word.endswith("s"):
        return f"{n} {axis}{'s' if n != 1 else ''}" + (f" ({word})" if word else "")
    if n == 1 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif n == 1 and not word.endswith("ss"):
        word = word[:-1]
    return f"{n} {word}"


def largest_per_row(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], decimals: int = 2) -> str:
    """Each row's largest entry (shape (n_rows, n_cols)), as ``"row → column value"``; −inf skipped.

    >>> largest_per_row(np.array([[0.2, 0.8], [0.6, 0.4]]), ["a", "b"], ["x", "y"])
    'a → y 0.80; b → x 0.60'
    """
    best = np.argmax(np.where(np.isfinite(values), values, -np.inf), axis=1)
    return "; ".join(
        f"{r} → {cols[j]} {format_cell(float(values[i, j]), decimals)}"
        for i, (r, j) in enumerate(zip(rows, best, strict=True))
    )


def listed_points(names: Sequence[str], points: np.ndarray) -> str:
    """2D points (shape (n, 2)) as ``"name (x, y)"``, two decimals.

    >>> listed_points(["she", "it"], np.array([[1.0, -0.5], [0.25, 2.0]]))
    'she (1.00, −0.50), it (0.25, 2.00)'
    """
    return ", ".join(f"{n} {point(p)}" for n, p in zip(names, points, strict=True))


def point(p: np.ndarray) -> str:
    """A 2D point ``(x, y)``, two decimals, a real minus sign."""
    return f"({format_cell(float(p[0]))}, {format_cell(float(p[1]))})"


def value_range(values: np.ndarray, decimals: int = 2) -> str:
    """``"from low to high"`` over the finite values (−inf masked entries left out)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return "none finite"
    return (
        f"from {format_cell(float(finite.min()), decimals)} to {format_cell(float(finite.max()), decimals)}"
    )
