"""Every worked example appears in a lesson's stored output, with the numbers attnlib computes.

nbval re-runs each lesson and compares its outputs with the stored ones, so a number found here
was printed by the lesson's own code. This test says *which* numbers each lesson must show: the
published values of each example in ``attention_lessons.kit.examples``, computed here with attnlib again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import nbformat
import numpy as np
import pytest
from conftest import ROOT

import attnlib
from attention_lessons.kit import examples
from attnlib.counting import operation_counts

NOTEBOOKS = ROOT / "notebooks"


def _output_texts(name: str) -> list[str]:
    """The text of every output of every cell of a lesson, one string per output."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            texts.append(out.get("text", ""))
            texts.extend(out.get("data", {}).get(mime, "") for mime in ("text/plain", "text/markdown"))
    return [text.replace("−", "-") for text in texts]


def _outputs(name: str) -> str:
    return "\n".join(_output_texts(name))


def _number_pattern(value: float, decimals: int) -> str:
    """A regex for ``value`` printed to ``decimals`` places, as numpy or an f-string prints it."""
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    text = "0" if text in ("-0", "") else text
    return rf"(?<![\d.]){re.escape(text)}(?:\.?0*)(?!\d)"


def _shows(name: str, values: Iterable[float], decimals: int) -> None:
    text = _outputs(name)
    for value in np.ravel(list(values)):
        assert re.search(_number_pattern(float(value), decimals), text), (
            f"{name} does not show {value:.{decimals}f} in its outputs"
        )


def _she_likes_coffee() -> attnlib.AttentionSteps:
    e = examples.she_likes_coffee()
    return attnlib.attention_steps(*attnlib.qkv(e.X, e.W_q, e.W_k, e.W_v))


def test_number_pattern_matches_numpy_and_fstring_printing() -> None:
    assert re.search(_number_pattern(0.30004505, 4), "[0.3357 0.3    0.3643]")
    assert re.search(_number_pattern(1.064, 4), "[[1.2884 1.064  1.452 ]")
    assert not re.search(_number_pattern(0.33, 2), "0.335")
    assert not re.search(_number_pattern(1.06, 2), "11.06")


def test_lesson_00_and_06_show_the_two_query_example() -> None:
    out, w = attnlib.scaled_dot_product_attention(*examples.q3())
    _shows("00_start_here.ipynb", [w[0, 0], w[0, 1], *out[0]], 4)
    _shows("06_output.ipynb", [w[0, 0], w[0, 1]], 3)


def test_lesson_02_shows_one_element_by_hand_and_the_seed_42_weights() -> None:
    e = examples.she_likes_coffee()
    _shows("02_qkv_projection.ipynb", [attnlib.project(e.X, e.W_q)[0, 0]], 2)
    r = examples.random_projections_seed42()
    _, w = attnlib.scaled_dot_product_attention(*attnlib.qkv(r.X, r.W_q, r.W_k, r.W_v))
    _shows("02_qkv_projection.ipynb", w[0], 8)


def test_lesson_03_shows_the_score_matrix_and_plain_dot_product_attention() -> None:
    _shows("03_raw_scores.ipynb", _she_likes_coffee().raw_scores, 4)
    steps = attnlib.attention_steps(*examples.one_query_three_vectors(), scale=1.0)
    _shows("03_raw_scores.ipynb", [*steps.weights, *steps.output], 2)


def test_lesson_05_shows_exp_row_sums_and_weights() -> None:
    steps = _she_likes_coffee()
    _shows("05_softmax.ipynb", np.exp(steps.scaled_scores).sum(axis=-1), 4)
    _shows("05_softmax.ipynb", steps.weights[0], 4)


def test_lesson_06_shows_the_output() -> None:
    _shows("06_output.ipynb", _she_likes_coffee().output[0], 4)


def test_lesson_08_shows_attention_by_hand_and_the_counts() -> None:
    out, _ = attnlib.scaled_dot_product_attention(*examples.attention_by_hand())
    _shows("08_exercises.ipynb", out, 2)
    steps = attnlib.attention_steps(*examples.plain_attention_exercise(), scale=1.0)
    _shows("08_exercises.ipynb", [*steps.weights, *steps.output], 4)
    totals = operation_counts(2, 3, 2, 3, stable=False).totals()
    _shows("08_exercises.ipynb", [totals["multiplications"], totals["additions"]], 0)


def _row_pattern(row: np.ndarray) -> str:
    """A regex for one row of a matrix as numpy prints it: ``[0.9 0.1]`` (spaces may vary)."""
    numbers = [re.escape(np.format_float_positional(x, trim="-")) for x in row]
    return r"\[\s*" + r"\s+".join(numbers) + r"\s*\]"


def _matrix_pattern(matrix: np.ndarray) -> str:
    """The rows of ``matrix`` one after another, printed as a matrix or row by row with labels."""
    return r"[^\[\]]*?".join(_row_pattern(row) for row in matrix)


def _shows_matrix(name: str, matrix: np.ndarray) -> None:
    """One output of the lesson prints every row of ``matrix``, in order."""
    pattern = _matrix_pattern(matrix)
    assert any(re.search(pattern, text) for text in _output_texts(name)), (
        f"no output of {name} prints the rows of\n{matrix}"
    )


def test_row_pattern_needs_whole_rows_in_order() -> None:
    rows = _matrix_pattern(np.array([[0.9, 0.1], [0.2, 0.8]]))
    assert re.search(rows, "[[0.9 0.1]\n [0.2 0.8]]")
    assert re.search(rows, "Token-1 [0.9 0.1]\nToken-2 [0.2 0.8]")
    assert not re.search(rows, "[0.9 0.15]\n[0.2 0.8]")
    assert not re.search(rows, "[0.2 0.8]\n[0.9 0.1]")
    assert not re.search(rows, "0.9 0.1 0.2 0.8 scattered, [0.1 0.9]")


@pytest.mark.parametrize("name", ["01_embeddings.ipynb", "07_whole_picture.ipynb"])
def test_the_four_2d_tokens_appear(name: str) -> None:
    _shows_matrix(name, examples.four_tokens_2d().X)
