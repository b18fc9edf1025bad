"""Text alternatives of figures: what a picture shows and its key numbers, from the data drawn.

A drawing tool or figure function that draws data also says what it drew:
:func:`describe` attaches a :class:`Description` (a sentence or three, and optionally
:class:`Table` s with the long data) to the Axes or the Figure it drew into.
:func:`description` gathers them for a whole figure: the figure's own if a figure function wrote
one, otherwise those of its panels in order, and for a panel that nobody described (drawn with
Matplotlib's own ``ax.plot``, ``ax.bar`` …) one read from its lines, bars and points
(:func:`~attention_lessons.kit.plots.artists.describe_artists`). :func:`~attention_lessons.kit.plots.show`
carries the text as the image's alt text and the tables, folded, beside it.
"""

from __future__ import annotations

import html
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attention_lessons.kit.plots.artists import describe_artists

__all__ = [
    "MAX_ALT_LENGTH",
    "Description",
    "Table",
    "describe",
    "description",
    "is_described",
    "join_sentences",
    "layer_head_table",
]


@dataclass(frozen=True)
class Table:
    """Numbers of a figure as a table: a header for every column and for every row.

    Attributes
    ----------
    caption : str
    columns : tuple of str, length n_cols
        Column headers.
    rows : tuple of str, length n_rows
        Row headers.
    cells : tuple of tuple of str, shape (n_rows, n_cols)
        The numbers, written as the figure writes them.
    corner : str
        The header above the row headers (what the rows are).
    """

    caption: str
    columns: tuple[str, ...]
    rows: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    corner: str = ""

    def __post_init__(self) -> None:
        if len(self.cells) != len(self.rows) or any(len(row) != len(self.columns) for row in self.cells):
            raise ValueError(
                f"a table of {len(self.rows)} rows and {len(self.columns)} columns needs that many cells"
            )

    def html(self) -> str:
        """The table as HTML: a caption, ``<th scope="col">`` and ``<th scope="row">`` headers."""
        esc = html.escape
        head = "".join(f'<th scope="col">{esc(c)}</th>' for c in (self.corner, *self.columns))
        body = "".join(
            f'<tr><th scope="row">{esc(r)}</th>' + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>"
            for r, row in zip(self.rows, self.cells, strict=True)
        )
        return (
            f"<table><caption>{esc(self.caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )


#: A figure whose panels' texts together are longer than this takes each panel's short text.
MAX_ALT_LENGTH = 400


@dataclass(frozen=True)
class Description:
    """A figure's text alternative (``text``, never empty) and the long data as ``tables``.

    ``short``, if given, is what the panel says in a figure of several panels whose texts
    together would be longer than :data:`MAX_ALT_LENGTH` (its numbers then being in ``tables``).
    """

    text: str
    tables: tuple[Table, ...] = ()
    short: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("a description needs text: what the figure shows and its key numbers")


_DESCRIBED: weakref.WeakKeyDictionary[Axes | Figure, Description] = weakref.WeakKeyDictionary()


def describe(
    target: Axes | Figure, text: str, tables: Sequence[Table] = (), short: str | None = None
) -> Description:
    """Attach what ``target`` (a panel or a whole figure) shows to it, replacing what was there.

    Parameters
    ----------
    target : matplotlib.axes.Axes or matplotlib.figure.Figure
    text : str
        A sentence or three: what it shows and its key numbers, from the data drawn.
    tables : sequence of Table
        Longer data, shown folded beside the figure.
    short : str, optional
        A shorter text for a figure of many panels (:class:`Description`).

    Returns
    -------
    Description
    """
    if not isinstance(target, Axes | Figure):
        raise ValueError(f"only an Axes or a Figure can be described, got {type(target).__name__}")
    described = Description(text.strip(), tuple(tables), short)
    _DESCRIBED[target] = described
    return described


def is_described(target: Axes | Figure) -> bool:
    """Whether :func:`describe` has attached a description to ``target``."""
    return target in _DESCRIBED


def description(fig: Figure) -> Description:
    """What ``fig`` shows: its own description, or its panels' joined (each panel once, in order).

    Tables are the figure's own followed by those of its panels.
    """
    panels = [ax for ax in fig.axes if ax.get_visible() and not _is_colorbar(ax) and not _is_blank(ax)]
    described = [_DESCRIBED.get(ax) or Description(describe_artists(ax)) for ax in panels]
    tables = tuple(t for d in described for t in d.tables)
    own = _DESCRIBED.get(fig)
    if own is not None:
        return Description(own.text, own.tables + tables)
    if not described:
        raise ValueError("the figure has no panel to describe")
    prefix = f"{len(described)} panels. " if len(described) > 1 else ""
    text = prefix + join_sentences(d.text for d in described)
    if len(text) > MAX_ALT_LENGTH and any(d.short for d in described):
        text = prefix + join_sentences([*(d.short or d.text for d in described), _SEE_TABLES])
    return Description(text, tables)


_SEE_TABLES = "Every value is in the tables below the figure"


def layer_head_table(caption: str, values: Iterable[Iterable[float]]) -> Table:
    """Per-head numbers ``(n_layers, n_heads)`` as a table: a row per layer, a column per head, 2 decimals."""
    cells = tuple(tuple(f"{v:.2f}" for v in row) for row in values)
    return Table(
        caption=caption,
        columns=tuple(f"head {h}" for h in range(len(cells[0]))),
        rows=tuple(f"layer {layer}" for layer in range(len(cells))),
        cells=cells,
        corner="layer \\ head",
    )


def join_sentences(parts: Iterable[object]) -> str:
    """Join texts into one paragraph, each ending with a full stop."""
    texts = (str(x).strip() for x in parts)
    return " ".join(p if p.endswith((".", "!", "?")) else p + "." for p in texts if p)


def _is_blank(ax: Axes) -> bool:
    """A spare panel switched off with nothing in it (``ax.set_axis_off()`` in a grid)."""
    return not ax.axison and not ax.has_data() and not ax.texts and not ax.get_title()


def _is_colorbar(ax: Axes) -> bool:
    return ax.get_label() == "<colorbar>"  # the label Figure.colorbar gives the axes it makes
