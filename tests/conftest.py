"""Helpers shared by the test modules: reading back what a picture holds, the real model, and
skipping (failing under CI) where a build is missing.

Import them with ``from conftest import ...`` (pytest puts this directory on ``sys.path``).
"""

from __future__ import annotations

import io
import os
import re

import numpy as np
import pytest
from PIL import Image

from attnlib.plots.png import TABLE_SUMMARY

#: How a masked (``-inf``) score is written on a cell: U+2212 and the infinity sign.
MINUS_INF = "−∞"
#: An image inlined in an HTML output (a figure's PNG beside its alt text): bytes, not text to read.
DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")


def hidden_answers(text: str) -> int:
    """How many ``<details>`` blocks of ``text`` are not a figure's folded table of numbers."""
    return text.count("<details") - text.count(f"<details><summary>{TABLE_SUMMARY}</summary>")


def readable(text: str) -> str:
    """``text`` with every inlined image's bytes left out (``data:…``), as a reader meets it."""
    return DATA_URI.sub("data:…", text)


def mesh_values(heatmap) -> np.ndarray:
    """The matrix a heatmap's mesh holds, as a float array, masked cells as ``-inf``.

    A heatmap masks exactly the ``-inf`` cells of the matrix it is given (masked scores; NaN is
    rejected before drawing), so ``-inf`` gives back the matrix itself, comparable with
    ``numpy.testing.assert_array_equal``. (NaN would not compare equal to anything, not even to
    the matrix given.)

    Parameters
    ----------
    heatmap : attnlib.plots.Heatmap, or a mesh (anything with ``get_array()``)
    """
    mesh = getattr(heatmap, "mesh", heatmap)
    return np.ma.filled(np.ma.asarray(mesh.get_array()).astype(float), -np.inf)


def cell_texts(heatmap) -> list[list[str]]:
    """The numbers written on a heatmap's cells, row by row."""
    n_rows, n_cols = np.shape(heatmap.mesh.get_array())
    texts = [text.get_text() for text in heatmap.texts]
    return [texts[i * n_cols : (i + 1) * n_cols] for i in range(n_rows)]


def decode_png(data: bytes) -> np.ndarray:
    """The pixels of a PNG as a uint8 array of shape (height, width, 3)."""
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        return np.asarray(image.convert("RGB"))


@pytest.fixture(scope="session")
def model():
    """all-MiniLM-L6-v2 loaded by attnlib.model (once per run); skips where its files are missing."""
    from attnlib.model import ModelNotFoundError, load_model

    try:
        return load_model(download=False)
    except ModelNotFoundError as exc:
        pytest.skip(f"the model's files are not installed: {exc}")


def require_build(problem: str | None, command: str) -> None:
    """Skip, or fail under CI, naming ``command`` when ``problem`` says a build is missing or stale."""
    if problem:
        message = f"{problem}: run `{command}` first"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
