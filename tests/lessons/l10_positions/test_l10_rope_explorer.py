"""The RoPE explorer of lesson 10, driven from Python over the whole range of every slider.

Every slider goes to its minimum, its maximum and 20 random values on its step (as a browser
sends them); after each move the explorer holds the value and its on-demand ``rotated`` equals
attnlib.positions.rope on the same inputs, and moving only the offset leaves the score where it
was. The front end's arithmetic is
checked against attnlib in rotary.test.mjs, beside this file.
"""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest
import traitlets

from attention_lessons.l10_positions import widgets
from attention_lessons.l10_positions.plots import ROPE_KEY, ROPE_QUERY, rope_limits
from attnlib.positions import rope

pytestmark = pytest.mark.filterwarnings("error")

RANDOM_VALUES = 20


def slider_values(low: float, high: float, step: float, rng: np.random.Generator) -> list[float]:
    """The minimum, the maximum and 20 random values of a slider, on its step."""
    n_steps = round((high - low) / step)
    picked = [0, n_steps, *rng.integers(0, n_steps + 1, RANDOM_VALUES)]
    return [round(low + int(k) * step, 10) for k in picked]


def assert_matches_attnlib(explorer: widgets.RopeExplorer) -> None:
    m = explorer.query_position + explorer.offset
    n = explorer.key_position + explorer.offset
    rotated_q, rotated_k = explorer.rotated
    np.testing.assert_array_equal(rotated_q, rope(explorer.query, [m]))
    np.testing.assert_array_equal(rotated_k, rope(explorer.key, [n]))


def score(explorer: widgets.RopeExplorer) -> float:
    rotated_q, rotated_k = explorer.rotated
    return float(rotated_q @ rotated_k)


def test_starts_with_the_lessons_query_and_key():
    explorer = widgets.rope_explorer()
    assert explorer.query == list(ROPE_QUERY) and explorer.key == list(ROPE_KEY)
    assert (explorer.query_position, explorer.key_position, explorer.offset) == (2.0, 5.0, 0.0)
    assert explorer.limits == list(rope_limits(ROPE_QUERY, ROPE_KEY))
    assert_matches_attnlib(explorer)


def test_every_slider_over_its_range():
    rng = np.random.default_rng(10)
    explorer = widgets.rope_explorer(step=0.5)
    for name in ("query_position", "key_position", "offset"):
        for value in slider_values(0.0, explorer.max_position, explorer.step, rng):
            setattr(explorer, name, value)
            assert getattr(explorer, name) == value
            assert_matches_attnlib(explorer)


def test_the_offset_moves_the_vectors_but_not_the_score():
    rng = np.random.default_rng(4)
    explorer = widgets.rope_explorer([0.3, -1.1], [0.9, 0.4], query_position=7, key_position=3)
    before = score(explorer)
    for offset in slider_values(0.0, explorer.max_position, 1.0, rng):
        explorer.offset = offset
        assert_matches_attnlib(explorer)
        assert score(explorer) == pytest.approx(before, rel=1e-12, abs=1e-12)
    explorer.offset = 5.0
    turned = explorer.rotated[0].tolist()
    explorer.offset = 6.0
    assert explorer.rotated[0].tolist() != turned  # the arrows do move
    explorer.key_position = 4.0  # the distance changes: so does the score
    assert score(explorer) != pytest.approx(before, abs=1e-6)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), {}, r"shape \(2,\)"),
        (([1.0, np.nan], [0.0, 1.0]), {}, "finite"),
        (("ab", [0.0, 1.0]), {}, "query must be an array"),
        ((), {"query_position": 13}, "query_position must be from 0 to max_position=12"),
        ((), {"offset": -1}, "offset must be from 0"),
        ((), {"key_position": "two"}, "key_position must be a number"),
        ((), {"max_position": 0}, "max_position must be positive"),
        ((), {"max_position": float("inf")}, "max_position must be finite"),
        ((), {"step": 0}, "step must be a positive number"),
        ((), {"step": 20}, "step must be a positive number no larger"),
        ((), {"style": "sepia"}, "style must be one of"),
    ],
)
def test_bad_arguments(args, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        widgets.rope_explorer(*args, **kwargs)


def test_bad_trait_values():
    explorer = widgets.rope_explorer()
    with pytest.raises(traitlets.TraitError, match="offset must be from 0 to max_position=12"):
        explorer.offset = 12.5
    with pytest.raises(traitlets.TraitError, match="query_position must be from 0"):
        explorer.query_position = -0.5
    assert explorer.offset == 0.0
    assert_matches_attnlib(explorer)


def test_booleans_and_complex_numbers_are_refused_numpy_floats_taken():
    for kwargs in ({"query_position": True}, {"max_position": True}, {"step": False}):
        with pytest.raises(TypeError, match=next(iter(kwargs))):
            widgets.rope_explorer(**kwargs)
    with pytest.raises(TypeError, match="query is boolean"):
        widgets.rope_explorer([True, False])
    explorer = widgets.rope_explorer(step=np.float32(0.5), query_position=np.float32(1.5))
    assert (explorer.step, explorer.query_position) == (0.5, 1.5)
    for name, value in [("query", [True, False]), ("key", [1 + 1j, 0.0]), ("offset", True), ("offset", 1j)]:
        before = getattr(explorer, name)
        with pytest.raises(traitlets.TraitError, match=name):
            setattr(explorer, name, value)
        assert getattr(explorer, name) == before
    explorer.key_position, explorer.query = np.float32(2.5), [np.float32(0.5), np.int64(1)]
    assert (explorer.key_position, explorer.query) == (2.5, [0.5, 1.0])
    assert_matches_attnlib(explorer)
    explorer.close()


def test_the_module_carries_the_rope_mirror():
    explorer = widgets.rope_explorer()
    urls = re.findall(r'from\s*"data:text/javascript;base64,([^"]*)"', explorer._esm)
    assert any("export function ropeScore" in base64.b64decode(url).decode("utf-8") for url in urls)
    explorer.close()
