"""Figures as PNG images: bytes, and a notebook display that adds no text output."""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["png_bytes", "show"]


def png_bytes(fig: Figure, *, dpi: float = 100) -> bytes:
    """Render ``fig`` to PNG bytes with the Agg renderer (no pyplot, safe in any thread).

    The PNG carries no version metadata: the same figure gives the same bytes.
    """
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def show(fig: Figure, *, dpi: float = 100) -> None:
    """Display ``fig`` in a notebook as a PNG image only.

    Unlike displaying the Figure object, this adds no ``<Figure size …>`` text output, so the
    notebook's stored text outputs stay stable under nbval.
    """
    from IPython.display import display

    display({"image/png": png_bytes(fig, dpi=dpi)}, raw=True)
