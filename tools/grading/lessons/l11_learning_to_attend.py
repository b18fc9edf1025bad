"""Lesson 11's graded assignment: its cells, questions, model solutions and hidden tests
(``tools/grading/assignments.py`` explains each field and finds this file)."""

from __future__ import annotations

from assignments import Assignment, Question, Test

_ROW = "lambda rng: (lambda n: (rng.dirichlet(np.ones(n)), rng.normal(size=n)))(int(rng.integers(2, 7)))"

ASSIGNMENT = Assignment(
    id="a2-gradients",
    notebook="gradients.ipynb",
    lesson="11_learning_to_attend.ipynb",
    title="Assignment 2 · Gradients of attention by hand (lesson 11, part II)",
    setup="""\
import numpy as np

from attention_lessons import grading
from attention_lessons.l11_learning_to_attend import checks

np.set_printoptions(precision=4, suppress=True)""",
    questions=(
        Question(
            id="values",
            cells=("966b5efc", "f89aa160", "aa6a975f", "cfa5712d"),
            function='''\
def value_gradient(A, dZ):
    """dV, the gradient of the loss with respect to the values, shape (n_k, d_v), from the
    weights A (n_q, n_k) and dZ (n_q, d_v)."""''',
            solution="return A.T @ dZ",
            binds="my_dv = value_gradient(A_check, dz_check)",
            tests=(
                Test(
                    "my_dv",
                    2,
                    "lambda rng: (lambda n_q, n_k, d_v: (rng.dirichlet(np.ones(n_k), size=n_q), "
                    "rng.normal(size=(n_q, d_v))))(*rng.integers(2, 6, size=3))",
                    "checks.check_value_gradient",
                ),
            ),
        ),
        Question(
            id="softmax",
            cells=("6dbe999e", "8ee53ab9", "a27fa1f8"),
            function='''\
def softmax_gradient(a, da):
    """ds, the gradient reaching one row of scores, shape (n,), from its weights a = softmax(s)
    and da, the gradient of the loss with respect to them, both of shape (n,)."""''',
            solution="return a * (da - np.sum(a * da))",
            binds="my_ds = softmax_gradient(a_row, da_row)",
            tests=(Test("my_ds", 2, _ROW, "checks.check_softmax_gradient"),),
        ),
        Question(
            id="direction",
            cells=("2fc94fea", "53341c1b"),
            function='''\
def score_direction(a, da, key):
    """Which way one step of gradient descent moves score number key (counted from 0) of a row
    with weights a and gradient da: "up" or "down"."""''',
            solution=('ds = a * (da - np.sum(a * da))\nreturn "down" if ds[key] > 0 else "up"'),
            binds="my_direction = score_direction(a_row, da_all_negative, 1)",
            tests=(
                Test(
                    "my_direction",
                    1,
                    "lambda rng: (lambda n: (rng.dirichlet(np.ones(n)), rng.normal(size=n), "
                    "int(rng.integers(0, n))))(int(rng.integers(2, 7)))",
                    "checks.check_score_direction",
                ),
            ),
        ),
    ),
)
