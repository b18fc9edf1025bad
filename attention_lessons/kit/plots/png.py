"""Figures as PNG images: bytes, and a notebook display that carries the figure's text alternative."""

from __future__ import annotations

import base64
import html
import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attention_lessons.kit.plots.descriptions import description

__all__ = ["TABLE_SUMMARY", "figure_bundle", "png_bytes", "show"]

#: What the folded tables beside a figure say when folded.
TABLE_SUMMARY = "The numbers in this figure, as a table"


def png_bytes(fig: Figure, *, dpi: float = 100) -> bytes:
    """Render ``fig`` to PNG bytes with the Agg renderer (no pyplot, safe in any thread).

    The PNG carries no version metadata: the same figure gives the same bytes.
    """
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def figure_bundle(fig: Figure, *, dpi: float = 100) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The display data of ``fig`` and its metadata, every form carrying its text alternative.

    Returns
    -------
    data : dict
        ``text/html``: the PNG as ``<img alt="…">`` and, folded in ``<details>``, the figure's
        tables (what JupyterLab, the book and the decks show); ``image/png``: the PNG, base64;
        ``text/plain``: the text alternative.
    metadata : dict
        ``{"image/png": {"alt": …}}``, where nbconvert and other readers of ``image/png`` find it.
    """
    described = description(fig)
    png = base64.b64encode(png_bytes(fig, dpi=dpi)).decode("ascii")
    page = f'<img src="data:image/png;base64,{png}" alt="{html.escape(described.text)}">'
    if described.tables:
        tables = "".join(table.html() for table in described.tables)
        page += f"<details><summary>{TABLE_SUMMARY}</summary>{tables}</details>"
    data = {"text/html": page, "image/png": png, "text/plain": described.text}
    return data, {"image/png": {"alt": described.text}}


def show(fig: Figure, *, dpi: float = 100) -> None:
    """Display ``fig`` in a notebook as a PNG image with its text alternative as alt text.

    The output is :func:`figure_bundle`'s: the image with its alt text and the folded tables
    (HTML), the PNG and the text alternative as plain text. Unlike displaying the Figure object,
    this adds no ``<Figure size …>`` text, so the notebook's stored text outputs stay stable under
    nbval.
    """
    from IPython.display import display

    data, metadata = figure_bundle(fig, dpi=dpi)
    display(data, metadata=metadata, raw=True)
