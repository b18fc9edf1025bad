"""Lesson 08's graded assignment: its cells, questions, model solutions and hidden tests
(``tools/grading/assignments.py`` explains each field and finds this file)."""

from __future__ import annotations

from assignments import Assignment, Question, Test

# A random attention problem: (Q, K, V) of small random sizes.
_QKV = (
    "lambda rng: (lambda n_q, n_k, d_k, d_v: (rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), "
    "rng.normal(size=(n_k, d_v))))(*rng.integers(1, 6, size=4))"
)
_SIZES = "lambda rng: tuple(int(size) for size in rng.integers(1, 9, size=4))"

ASSIGNMENT = Assignment(
    id="a1-exercises",
    notebook="exercises.ipynb",
    lesson="08_exercises.ipynb",
    title="Assignment 1 · Attention by hand (lesson 08, part I)",
    setup="""\
import numpy as np

from attention_lessons import grading
from attention_lessons.kit import examples
from attention_lessons.l08_exercises import checks

np.set_printoptions(precision=4, suppress=True)""",
    questions=(
        Question(
            id="exercise1",
            cells=("7507e2b1", "a537a3d7", "bdc08841", "b4d2442a"),
            function='''\
def plain_attention(s, H):
    """Plain dot-product attention (no scaling) of one query s, shape (d,), over the rows of H,
    shape (n, d), which are both the keys and the values: (e, a, c), the scores, shape (n,), the
    weights, shape (n,), and the output, shape (d,)."""''',
            solution="""\
e = H @ s
a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
c = a @ H
return e, a, c""",
            binds="e, a, c = plain_attention(s, H)",
            tests=tuple(
                Test(
                    answer,
                    1,
                    "lambda rng: (lambda n, d: (rng.normal(size=d), rng.normal(size=(n, d))))"
                    "(*rng.integers(1, 6, size=2))",
                    f"lambda out, s, H: checks.check_attention(out[{index}], s, H, H, scale=1.0, "
                    f'what="{what}")',
                )
                for index, (answer, what) in enumerate((("e", "scores"), ("a", "weights"), ("c", "output")))
            ),
        ),
        Question(
            id="question2a",
            cells=("2176fac6", "2604742f", "ddaeb043", "734c9b31", "2f297424"),
            function='''\
def weights_shape_of(Q, K, V):
    """The shape of the attention weights for queries Q (n_q, d_k), keys K (n_k, d_k) and values
    V (n_k, d_v): a tuple of two numbers."""''',
            solution="return (Q.shape[0], K.shape[0])",
            binds="weights_shape = weights_shape_of(hand.Q, hand.K, hand.V)",
            tests=(
                Test(
                    "weights_shape",
                    1,
                    _QKV,
                    "lambda out, Q, K, V: checks.check_shape("
                    'out, (len(Q), len(K)), name="the weights\' shape", axes=("n_q", "n_k"))',
                ),
            ),
        ),
        Question(
            id="question2b",
            cells=("3331ae31", "2c1d56d8", "c1f562cf"),
            function='''\
def scale_of(Q_shape, K_shape, V_shape):
    """The scale 1/√d_k of an attention whose queries, keys and values have these shapes."""''',
            solution="return 1 / np.sqrt(K_shape[1])",
            binds='scale = scale_of(shapes_2b["Q"], shapes_2b["K"], shapes_2b["V"])',
            tests=(
                Test(
                    "scale",
                    1,
                    "lambda rng: (lambda n_q, n_k, d_k, d_v: ((n_q, d_k), (n_k, d_k), (n_k, d_v)))"
                    "(*(int(size) for size in rng.integers(2, 40, size=4)))",
                    "lambda out, Q_shape, K_shape, V_shape: "
                    "checks.check_scale(out, K_shape[1], n_k=K_shape[0], d_v=V_shape[1])",
                ),
            ),
        ),
        Question(
            id="question2c",
            cells=("9c76750c", "e8a4f8f1", "c40d43f4"),
            function='''\
def count_operations(n_q, n_k, d_k, d_v):
    """The multiplications and additions of attention for these sizes, counted as question 2c
    says: {"multiplications": ..., "additions": ...}."""''',
            solution="""\
return {
    "multiplications": n_q * n_k * (d_k + d_v),
    "additions": n_q * n_k * (d_k - 1) + n_q * (n_k - 1) + n_q * d_v * (n_k - 1),
}""",
            binds="counts = count_operations(n_q, n_k, d_k, d_v)",
            tests=(
                Test(
                    "counts",
                    2,
                    _SIZES,
                    "lambda out, n_q, n_k, d_k, d_v: checks.check_operation_counts(out, n_q, n_k, d_k, d_v)",
                ),
            ),
        ),
        Question(
            id="question2d",
            cells=("26307ab2", "d901572a", "71f89ae3"),
            function='''\
def causal_mask_of(n):
    """The causal mask for n tokens, shape (n, n): boolean (True = may attend) or additive
    (0 to keep, -inf to hide)."""''',
            solution="return np.tril(np.ones((n, n), dtype=bool))",
            binds="mask = causal_mask_of(4)",
            tests=(Test("mask", 1, "lambda rng: (int(rng.integers(2, 9)),)", "checks.check_causal_mask"),),
        ),
        Question(
            id="exercise3",
            cells=("33434da9", "d770de92", "bc3cf5cc", "cf7ab6c5", "297cc0bf"),
            function='''\
def attention_by_hand(Q, K, V):
    """Scaled dot-product attention of queries Q (n_q, d_k), keys K (n_k, d_k) and values
    V (n_k, d_v), step by step: (S, S_scaled, A, Z), the raw scores Q Kᵀ, the scores scaled by
    1/√d_k, the softmax of each row, and the output A V, shape (n_q, d_v)."""''',
            solution="""\
S = Q @ K.T
S_scaled = S / np.sqrt(K.shape[1])
exp = np.exp(S_scaled - S_scaled.max(axis=1, keepdims=True))
A = exp / exp.sum(axis=1, keepdims=True)
Z = A @ V
return S, S_scaled, A, Z""",
            binds="S, S_scaled, A, Z = attention_by_hand(Q, K, V)",
            tests=tuple(
                Test(
                    answer,
                    1,
                    _QKV,
                    f'lambda out, Q, K, V: checks.check_attention(out[{index}], Q, K, V, what="{what}")',
                )
                for index, (answer, what) in enumerate(
                    (("S", "scores"), ("S_scaled", "scaled_scores"), ("A", "weights"), ("Z", "output"))
                )
            ),
        ),
    ),
)
