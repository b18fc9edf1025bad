"""Helpers shared by the test modules: reading back what a picture holds, the real model,
skipping (failing under CI) where a build is missing, and bounds on rounding errors for comparing
results that different code computed.

Import them with ``from conftest import ...`` (pytest puts this directory on ``sys.path``).
"""

from __future__ import annotations

import io
import math
import os
import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
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


def unit_roundoff(dtype: npt.DTypeLike) -> float:
    """u = eps/2: the largest relative error of one rounding in ``dtype``.

    2⁻²⁴ ≈ 6.0e-8 for float32, 2⁻⁵³ ≈ 1.1e-16 for float64.
    """
    return float(np.finfo(dtype).eps) / 2


def gamma(n: int, dtype: npt.DTypeLike) -> float:
    """γₙ = n·u/(1 − n·u): the relative error of n chained roundings in ``dtype``.

    A sum or dot product of n terms, added in any order, is within γₙ·Σ|aᵢbᵢ| of the exact one
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1): a worst case, that
    holds whatever order the kernel chose.
    """
    nu = n * unit_roundoff(dtype)
    return nu / (1 - nu)


@dataclass(frozen=True)
class AttentionError:
    """Bounds on how far one floating-point computation of attention is from the exact result.

    Attributes
    ----------
    weights : float
        On every weight, relative (so also absolute: a weight is at most 1).
    output : float
        On every entry of the output, absolute.
    """

    weights: float
    output: float


def attention_error(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    dtype: npt.DTypeLike,
    *,
    scale: float | None = None,
    mask: npt.ArrayLike | None = None,
    terms: int = 0,
    blocks: int = 1,
) -> AttentionError:
    """How far ``softmax(scale·QKᵀ + mask)·V`` computed in ``dtype`` can be from the exact result.

    Two codes (attnlib and PyTorch, or two kernels) that each stay within these bounds differ by
    at most twice them; a wrong scale, mask or weight moves the results by far more.

    Parameters
    ----------
    Q : (..., n_q, d_k)
    K : (..., n_k, d_k)
    V : (..., n_k, d_v)
        The inputs, or bounds on their sizes: only ``|Q|``, ``|K|``, ``|V|`` are used.
    dtype : the floating-point type computed in
    scale : float, optional
        Default ``1/√d_k``.
    mask : bool or additive, broadcasting to the weights, optional
        An additive mask's finite entries add to the size of the scores.
    terms : int, optional
        When Q, K and V were themselves computed in ``dtype`` by sums of ``terms`` terms
        (projections ``X·W``, given here as ``|X|·|W|``): each is within γ_terms of its size.
    blocks : int, optional
        The key blocks of an online softmax (tiled attention): each block after the first
        rescales the running sums by ``exp(m_old − m_new)``.

    Returns
    -------
    AttentionError

    Notes
    -----
    With S the largest ``|scale|·Σ|qₗkₗ| + |mask|`` (the size of the scores) and n = n_k:

    - every score is within Δ = γ_(d_k + 2·terms + 2)·S of the exact one (the dot product, its
      inputs' rounding, the scaling and the mask's addition);
    - ``exp(s − m)``, m the row's largest score: the argument is off by at most 2Δ + 2u·S (the
      subtraction rounds a number of size up to 2S), an error δ in it is a relative error
      e^δ − 1 ≈ δ of the result, and exp itself adds at most 4u (numpy's SIMD float32 exp is
      within 3.6u, PyTorch's within 1.1u, measured against float64 on 2·10⁷ arguments); each
      further block multiplies in one more such factor, its argument of size up to 2S, and one
      product: ε = 2Δ + blocks·(2u·S + 5u);
    - normalising (a sum of n terms, a division, perhaps a reciprocal then a product): every
      weight is within ρ = 2ε + γ_(n+2) of the exact one, relatively;
    - the output ``Σⱼ wⱼvⱼ``: within ``max|V|·(ρ + γ_(n + terms + blocks))``, the weights summing
      to 1.
    """
    Q, K, V = (np.abs(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    d_k, n = K.shape[-1], K.shape[-2]
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    scores = abs(scale) * (Q @ np.swapaxes(K, -1, -2))
    if mask is not None and np.asarray(mask).dtype != bool:
        added = np.abs(np.asarray(mask, dtype=np.float64))
        scores = scores + np.where(np.isfinite(added), added, 0.0)
    S, u = float(scores.max(initial=0.0)), unit_roundoff(dtype)
    epsilon = 2 * gamma(d_k + 2 * terms + 2, dtype) * S + blocks * (2 * u * S + 5 * u)
    weights = 2 * epsilon + gamma(n + 2, dtype)
    return AttentionError(weights, float(V.max(initial=0.0)) * (weights + gamma(n + terms + blocks, dtype)))
