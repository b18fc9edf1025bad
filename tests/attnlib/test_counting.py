"""Operation counts: the formulas equal what the scalar-loop counter measures."""

import numpy as np
import pytest
from conftest import attention_error

from attnlib import scaled_dot_product_attention
from attnlib.counting import OPERATIONS, STEPS, counted_attention, operation_counts

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

SHAPES = [(1, 1, 1, 1), (2, 3, 2, 3), (4, 5, 3, 2), (3, 7, 8, 4), (5, 2, 1, 6)]
SHAPE_IDS = ["x".join(map(str, s)) for s in SHAPES]


def inputs(n_q, n_k, d_k, d_v, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))


@pytest.mark.parametrize("stable", [True, False], ids=["stable", "textbook"])
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_formula_equals_measured_counts(shape, stable):
    _, _, measured = counted_attention(*inputs(*shape), stable=stable)
    formula = operation_counts(*shape, stable=stable)
    assert list(formula.steps) == list(measured.steps) == list(STEPS)
    assert {s: dict(c) for s, c in formula.steps.items()} == {s: dict(c) for s, c in measured.steps.items()}
    assert formula.totals() == measured.totals()


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_counted_attention_computes_attention(shape):
    Q, K, V = inputs(*shape, seed=1)
    out, w = scaled_dot_product_attention(Q, K, V)
    bound = attention_error(Q, K, V, np.float64)  # two codes: twice it
    for stable in (True, False):
        c_out, c_w, _ = counted_attention(Q, K, V, stable=stable)
        assert c_out.shape == out.shape and c_w.shape == w.shape
        np.testing.assert_allclose(c_w, w, atol=2 * bound.weights, rtol=0)
        np.testing.assert_allclose(c_out, out, atol=2 * bound.output, rtol=0)


def test_textbook_numbers():
    n_q, n_k, d_k, d_v = 3, 5, 4, 2
    steps = operation_counts(n_q, n_k, d_k, d_v, stable=False).steps
    qk, scaling, subtract_max, softmax, wv = (steps[s] for s in STEPS)
    assert (qk["multiplications"], qk["additions"]) == (n_q * n_k * d_k, n_q * n_k * (d_k - 1)) == (60, 45)
    assert scaling["divisions"] == n_q * n_k == 15
    assert scaling["square roots"] == 1
    assert all(count == 0 for count in subtract_max.values())
    assert (softmax["exponentials"], softmax["additions"], softmax["divisions"]) == (15, 12, 15)
    assert (softmax["exponentials"], softmax["additions"]) == (n_q * n_k, n_q * (n_k - 1))
    assert (wv["multiplications"], wv["additions"]) == (n_q * d_v * n_k, n_q * d_v * (n_k - 1)) == (30, 24)
    stable = operation_counts(n_q, n_k, d_k, d_v).steps[STEPS[2]]
    assert (stable["comparisons"], stable["subtractions"]) == (n_q * (n_k - 1), n_q * n_k) == (12, 15)


def test_totals():
    totals = operation_counts(2, 3, 2, 3).totals()
    assert set(totals) == set(OPERATIONS)
    assert totals["multiplications"] == 2 * 3 * 2 + 2 * 3 * 3
    assert totals["additions"] == 2 * 3 * 1 + 2 * 2 + 2 * 3 * 2
    assert totals["divisions"] == 2 * 6
    assert totals["exponentials"] == 6
    assert totals["comparisons"] == 4 and totals["subtractions"] == 6 and totals["square roots"] == 1


@pytest.mark.parametrize("stable", [True, False], ids=["stable", "textbook"])
def test_table_has_a_row_per_step(stable):
    counts = operation_counts(4, 5, 3, 2, stable=stable)
    table = counts.table()
    assert isinstance(table, str)
    lines = table.splitlines()
    assert len(lines) == 1 + len(STEPS) + 1  # header, steps, total
    for line, step in zip(lines[1:-1], STEPS, strict=True):
        assert line.startswith(step)
        numbers = [int(n.replace(",", "")) for n in line[len(step) :].split()]
        assert sum(numbers) == sum(counts.steps[step].values())
    assert lines[-1].startswith("total")
    header_ops = [op for op in OPERATIONS if op in lines[0]]
    assert header_ops == [op for op in OPERATIONS if counts.totals()[op]]


def test_table_groups_thousands():
    assert "12,000" in operation_counts(10, 100, 12, 1).table()  # 10·100·12 multiplications in Q Kᵀ


def test_counted_attention_takes_a_matrix_of_queries() -> None:
    with pytest.raises(ValueError, match=r"matrix of queries \(n_q, d_k\), got shape \(2,\)"):
        counted_attention([1.0, 2.0], [[1.0, 0.0]], [[1.0]])
