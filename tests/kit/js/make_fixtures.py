"""Write the fixtures of the explorers' Node tests: seeded inputs and what attnlib computes of them.

    python tests/kit/js/make_fixtures.py DIR      # writes DIR/fixtures.json

``tests/kit/js/test_node.py`` runs this into a temporary folder and then ``node --test`` on the
``*.test.mjs`` files (tests/kit/js and tests/lessons/lNN_slug/), which read the file named by the
ATTNLIB_FIXTURES environment variable and check every value of the ES modules' mirror against
attnlib's. JSON has no -inf: a masked score is written as null.

The kit's own fixtures (the mirror's attention steps, colour maps, themes, number formats) are
written here; each lesson's are in ``tests/lessons/lNN_slug/js_fixtures.py``, whose ``fixtures()``
returns a dict of them: a new lesson adds its fixtures there and edits no file of the kit. A key
defined twice is refused, naming both files.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from attention_lessons.kit import plots
from attention_lessons.kit.widgets.base import colormap_table, theme
from attnlib.core import attention_steps, causal_mask, entropy

SEED = 20261123
#: Each lesson's fixtures: ``tests/lessons/lNN_slug/js_fixtures.py``, with a ``fixtures()`` function.
LESSON_TESTS = Path(__file__).resolve().parents[2] / "lessons"
LESSON_FIXTURES = "js_fixtures.py"


def listed(array: np.ndarray) -> list:
    """An array as nested lists, -inf as None."""
    return np.where(np.isneginf(array), None, array).tolist()


def attention_case(Q: np.ndarray, K: np.ndarray, V: np.ndarray, **options: object) -> dict:
    steps = attention_steps(Q, K, V, **options)
    mask = options.get("mask")
    return {
        "Q": Q.tolist(),
        "K": K.tolist(),
        "V": V.tolist(),
        "scale": options.get("scale"),
        "causal": bool(options.get("causal", False)),
        "mask": None if mask is None else np.asarray(mask).tolist(),
        "expected": {
            "rawScores": steps.raw_scores.tolist(),
            "scale": steps.scale,
            "scaledScores": steps.scaled_scores.tolist(),
            "maskedScores": listed(steps.masked_scores),
            "weights": steps.weights.tolist(),
            "output": steps.output.tolist(),
            "entropy": [float(e) for e in entropy(steps.weights)],
        },
    }


def attention_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for n_q, n_k, d_k, d_v in [(1, 1, 1, 1), (4, 4, 2, 2), (3, 5, 4, 3), (12, 12, 2, 2), (7, 12, 16, 2)]:
        Q, K, V = (rng.standard_normal((n, d)) for n, d in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
        cases.append(attention_case(Q, K, V))
        cases.append(attention_case(Q, K, V, scale=1.0))
        if n_q == n_k:
            cases.append(attention_case(Q, K, V, causal=True))
        mask = rng.random((n_q, n_k)) < 0.6
        mask[0] = False  # a fully masked row: zero weights, zero output
        cases.append(attention_case(Q, K, V, mask=mask))
    Q, K, V = (rng.uniform(-30, 30, (6, 2)) for _ in range(3))  # extreme: softmax saturates
    cases.append(attention_case(Q, K, V, scale=10.0))
    cases.append(attention_case(Q * 1e-9, K * 1e-9, V))  # nearly uniform weights
    return cases


def format_cases(rng: np.random.Generator) -> list[list]:
    """``[value, decimals, text]``: how attention_lessons.kit.plots.format_cell shows numbers on cells."""
    values = [0.0, -0.0, -0.001, 0.004, -0.5, 1.0, -2.25, 123.456, -1e-9, *rng.uniform(-100, 100, 20)]
    cases = [[float(v), d, plots.format_cell(v, d)] for v in values for d in (2, 3)]
    return [*cases, [None, 2, plots.format_cell(-np.inf)]]


def kit_fixtures() -> dict:
    """The fixtures of the kit's shared modules (mirror.js, colors.js, svg.js), which every lesson's
    test may read too (``themes``, ``colormaps``)."""
    rng = np.random.default_rng(SEED)
    return {
        "attention": attention_cases(rng),
        "causalMask": [
            {"n_q": n_q, "n_k": n_k, "expected": causal_mask(n_q, n_k).tolist()}
            for n_q, n_k in ((1, 1), (4, 4), (3, 5), (12, 12))
        ],
        "colormaps": {name: list(colormap_table(name)) for name in ("viridis", "cividis")},
        "themes": {style: theme(style) for style in plots.STYLES},
        "formatCell": format_cases(rng),
    }


def lesson_fixture_modules(root: Path = LESSON_TESTS) -> dict[Path, Callable[[], dict]]:
    """Every lesson's ``js_fixtures.py`` under ``root``, by path: its ``fixtures`` function, each
    module imported by path under a name of its own (``js_fixtures_l10_positions``)."""
    found = {}
    for path in sorted(root.glob(f"l[0-9][0-9]_*/{LESSON_FIXTURES}")):
        spec = importlib.util.spec_from_file_location(f"js_fixtures_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not callable(getattr(module, "fixtures", None)):
            raise TypeError(f"{path} has no fixtures() function returning a dict of fixtures")
        found[path] = module.fixtures
    return found


def fixtures(root: Path = LESSON_TESTS) -> dict:
    """The kit's fixtures and every lesson's, merged; a key given by two files is refused."""
    merged = kit_fixtures()
    origin = dict.fromkeys(merged, Path(__file__).resolve())
    for path, make in lesson_fixture_modules(root).items():
        made = make()
        if not isinstance(made, dict):
            raise TypeError(f"{path}: fixtures() returned {type(made).__name__}, not a dict")
        for key, value in made.items():
            if key in merged:
                raise ValueError(f"the fixture {key!r} is defined twice: by {origin[key]} and by {path}")
            merged[key] = value
            origin[key] = path
    return merged


def main(folder: str) -> Path:
    path = Path(folder) / "fixtures.json"
    path.write_text(json.dumps(fixtures()), encoding="utf-8")
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/kit/js/make_fixtures.py DIR")
    print(main(sys.argv[1]))
