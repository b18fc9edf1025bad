"""Lesson 08's self-checks (attention_lessons.l08_exercises.checks and .masks): the operation counts of
question 2c and the causal and padding masks of question 2d. Right answers pass; each mistake of the
table is named, and no message gives the right answer away."""

import numpy as np
import pytest
from conftest import Case, fails_with, passes, revealed

from attention_lessons.kit import examples
from attention_lessons.kit.checks import check_attention, check_scale, check_shape
from attention_lessons.l08_exercises.checks import check_operation_counts
from attention_lessons.l08_exercises.masks import check_causal_mask, check_padding_mask
from attnlib import attention_steps
from attnlib.counting import operation_counts

BY_HAND = examples.attention_by_hand()  # Q 2×2, K 3×2, V 3×3: n_q=2, n_k=3, d_k=2, d_v=3, scale 1/√2
STEPS = attention_steps(*BY_HAND)
ONE_QUERY = examples.one_query_three_vectors()  # s (3,), H 3×3, plain dot-product attention (scale 1)
S, H, _ = ONE_QUERY
PLAIN = attention_steps(S, H, H, scale=1.0)

LENGTHS = [3, 2]
REAL = np.arange(4) < np.array(LENGTHS)[:, None]  # (batch, n_k): True = a real token

N_Q, N_K, D_K, D_V = 2, 3, 2, 3  # the shapes of BY_HAND
COUNTS = operation_counts(N_Q, N_K, D_K, D_V, stable=False).totals()
MULS, ADDS = COUNTS["multiplications"], COUNTS["additions"]
LOWER = np.tri(4, dtype=bool)


# --------------------------------------------------------------------------------------------
# Right answers pass


def test_right_masks_scales_shapes_and_counts_pass():
    passes(check_causal_mask(LOWER, 4))
    passes(check_causal_mask(np.where(LOWER, 0.0, -np.inf), 4))
    passes(check_padding_mask(REAL, LENGTHS, n_k=4))
    passes(check_padding_mask(np.where(REAL, 0.0, -np.inf), LENGTHS, n_k=4))
    passes(check_scale(0.7071, d_k=2))
    passes(check_shape((2, 3), (2, 3)))
    passes(check_shape(np.zeros((2, 3)), (2, 3)))
    passes(check_shape(3, (3,)))
    passes(check_operation_counts({"multiplications": MULS, "additions": ADDS}, N_Q, N_K, D_K, D_V))
    passes(check_operation_counts({"multiplications": 30.0, "additions": np.int64(22)}, N_Q, N_K, D_K, D_V))


def test_right_counts_state_the_convention_and_its_source():
    result = check_operation_counts({"multiplications": MULS, "additions": ADDS}, N_Q, N_K, D_K, D_V)
    passes(result)
    assert "30 multiplications and 22 additions" in result.message
    assert "divisions by √d_k" in result.message and "attnlib.counting" in result.message
    assert "exercise 2" in result.message


def test_an_additive_mask_with_a_huge_negative_number_passes_with_a_note():
    result = check_causal_mask(np.where(LOWER, 0.0, -1e9), 4)
    passes(result)
    assert "acts as −∞" in result.message


# --------------------------------------------------------------------------------------------
# One mistake, one row: each mistake's wrong answer gets the mistake's name, and no message
# contains the right answer.


def causal(id: str, wrong: np.ndarray, name: str) -> Case:
    """A wrong causal mask in question 2d (n = 4)."""
    return Case(id, check_causal_mask, (4,), wrong, name, "np.tril")


def padding(id: str, wrong: np.ndarray, name: str) -> Case:
    """A wrong key padding mask for sentences of lengths 3 and 2, padded to 4."""
    return Case(id, check_padding_mask, (LENGTHS, 4), wrong, name, "[[")


def counts(id: str, name: str, multiplications: int = MULS, additions: int = ADDS, **more: int) -> Case:
    """Wrong counts in question 2c (the right ones are 30 and 22)."""
    answer = {"multiplications": multiplications, "additions": additions}
    answer.update({op.replace("_", " "): count for op, count in more.items()})
    right = [MULS, ADDS, *(COUNTS[op] for op in answer if op not in ("multiplications", "additions"))]
    return Case(id, check_operation_counts, (N_Q, N_K, D_K, D_V), answer, name, right)


QK_MULS, WV_MULS = N_Q * N_K * D_K, N_Q * N_K * D_V
D_K_FOR_D_V_ADDS = N_Q * N_K * (D_K - 1) + N_Q * (N_K - 1) + N_Q * D_K * (N_K - 1)
D_V_FOR_D_K_ADDS = N_Q * N_K * (D_V - 1) + N_Q * (N_K - 1) + N_Q * D_V * (N_K - 1)

CASES = [
    causal("causal mask: upper", LOWER.T, "Upper-triangular"),
    causal("causal mask: upper, additive", np.where(LOWER.T, 0.0, -np.inf), "Upper-triangular"),
    causal("causal mask: no diagonal", np.tri(4, k=-1, dtype=bool), "The diagonal is missing"),
    causal("causal mask: inverted", ~LOWER, "Inverted: your True marks the hidden entries"),
    causal("causal mask: inverted, additive", np.where(LOWER, -np.inf, 0.0), "Inverted: your 0 marks"),
    causal("causal mask: nothing hidden", np.ones((4, 4), dtype=bool), "Nothing is hidden"),
    causal("causal mask: 1/0", LOWER.astype(float), "1/0 instead of 0/−∞"),
    causal("causal mask: 1 hides", (~LOWER).astype(int), "1 marks the hidden entries"),
    causal("causal mask: 0/1, no diagonal", np.tri(4, k=-1), "The diagonal is missing"),
    padding("padding mask: inverted", ~REAL, "Inverted: your True marks the padding"),
    padding("padding mask: transposed", REAL.T, "Transposed"),
    padding("padding mask: at the front", REAL[:, ::-1], "Padding at the front"),
    padding("padding mask: one too few", np.arange(4) < np.array([[2], [1]]), "One real token too few"),
    padding("padding mask: one too many", np.arange(4) < np.array([[4], [3]]), "One position too many"),
    padding("padding mask: nothing hidden", np.ones((2, 4), dtype=bool), "Nothing is hidden"),
    counts("counts: Q Kᵀ only", "You counted Q Kᵀ but not weights · V", multiplications=QK_MULS),
    counts("counts: weights · V only", "You counted weights · V but not Q Kᵀ", multiplications=WV_MULS),
    counts("counts: scaling", "You counted the scaling as multiplications", multiplications=MULS + N_Q * N_K),
    counts("counts: divisions", "You counted the divisions as multiplications", multiplications=MULS + 12),
    counts("counts: d_k for d_v", "You used d_k for weights · V too", 2 * QK_MULS, D_K_FOR_D_V_ADDS),
    counts("counts: d_v for d_k", "You used d_v for Q Kᵀ too", 2 * WV_MULS, D_V_FOR_D_K_ADDS),
    counts("counts: m per sum", "You counted one addition per term", additions=ADDS + N_Q * (N_K + 1 + D_V)),
    counts("counts: no softmax sums", "You left out the softmax's sums", additions=ADDS - N_Q * (N_K - 1)),
    counts("counts: no Q Kᵀ sums", "You left out the additions of Q Kᵀ",
           additions=ADDS - N_Q * N_K * (D_K - 1)),
    counts("counts: no weights · V sums", "You left out the additions of weights · V",
           additions=ADDS - N_Q * D_V * (N_K - 1)),
    counts("counts: stable subtractions", "stable softmax's subtractions", additions=ADDS + N_Q * N_K),
    counts("counts: root per score", "You took one square root per score", square_roots=N_Q * N_K),
    counts("counts: one division", "a division by 1/√d_k computed once", divisions=N_Q * N_K + 1),
]  # fmt: skip


#: No two single mistakes of this table give the same numbers (the kit's table has one such pair).
SAME_NUMBERS: set[str] = set()


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_mistake_is_named_without_giving_the_answer_away(case: Case):
    result = case.check(case.wrong, *case.inputs, **case.options)
    fails_with(result, case.name)
    assert not revealed(result.message, case.right), result.message
    assert ("probably one of these" in result.message) == (case.id in SAME_NUMBERS), result.message


def test_the_table_has_a_row_per_mistake():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


# --------------------------------------------------------------------------------------------
# Several single mistakes with the same numbers; answers that no mistake explains


def test_two_count_mistakes_with_the_same_count_are_both_listed():
    # d_k = d_v: Q Kᵀ alone and weights · V alone both take n_q·n_k·d_k = 12 multiplications
    additions = operation_counts(2, 3, 2, 2, stable=False).totals()["additions"]
    fails_with(
        check_operation_counts({"multiplications": 12, "additions": additions}, 2, 3, 2, 2),
        "Multiplications (12): not it. Several mistakes give this; it is probably one of these:",
        "(1) You counted Q Kᵀ but not weights · V",
        "(2) You counted weights · V but not Q Kᵀ",
        "Additions: right.",
    )


def test_a_mistake_that_changes_both_counts_explains_both_at_once():
    answer = {
        "multiplications": 2 * N_Q * N_K * D_K,
        "additions": N_Q * N_K * (D_K - 1) + N_Q * (N_K - 1) + N_Q * D_K * (N_K - 1),
    }  # additions: also "the softmax's sums left out", but the multiplications say d_k for d_v
    result = check_operation_counts(answer, N_Q, N_K, D_K, D_V)
    fails_with(result, "Multiplications (24) and additions (18): not it. You used d_k for weights · V too")
    assert "softmax's sums" not in result.message


@pytest.mark.parametrize(("multiplications", "additions"), [(31, 22), (30, 23), (37, 19), (100, 1), (0, 0)])
def test_an_arbitrary_wrong_count_gets_a_hint_that_reveals_nothing(multiplications, additions):
    result = check_operation_counts(
        {"multiplications": multiplications, "additions": additions}, N_Q, N_K, D_K, D_V
    )
    fails_with(result, "not yet", "step by step")
    assert "probably" not in result.message and "too" not in result.message
    assert not revealed(result.message, [MULS, ADDS]), result.message


def test_wrong_shapes_are_named_by_their_axes_only():
    fails_with(check_attention(STEPS.output[:, :2], *BY_HAND), "Wrong shape", "(n_q, d_v)", "yours is (2, 2)")
    fails_with(
        check_attention(PLAIN.output[None, :], *ONE_QUERY, scale=1.0), "(d_v,)", "yours is (1, 3)", "length 1"
    )
    fails_with(check_causal_mask(np.tri(3, dtype=bool), 4), "Wrong shape", "(n, n)", "yours is (3, 3)")
    result = check_shape((6,), (2, 3))
    fails_with(result, "2 axes", "you gave 1")
    assert "(2, 3)" not in result.message
    result = check_shape((2, 4), (2, 3), axes=("n_q", "n_k"))
    fails_with(result, "the second axis (numpy axis 1, n_k)", "is not 4")
    assert not revealed(result.message, 3) and " 3" not in result.message


def test_a_wrong_mask_entry_is_pointed_at_without_its_value():
    wrong = LOWER.copy()
    wrong[3, 1] = False
    result = check_causal_mask(wrong, 4)
    fails_with(result, "look again at query token 4, key token 2 (numpy index [3, 1])")
    assert "True" not in result.message and "False" not in result.message


def test_an_additive_mask_entry_that_is_not_minus_infinity():
    fails_with(
        check_causal_mask(np.where(LOWER, 0.0, -100.0), 4), "Entry [0, 1] of the mask is -100", "exp(-100)"
    )


# --------------------------------------------------------------------------------------------
# Bad answers: a failed verdict that says what is wrong with the answer


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        ("tril", "text"),
        ([[1, 0], [1]], "ragged"),
        (np.array([["a"]]), "dtype"),
        (np.full((2, 2), np.nan), "NaN"),
        (np.full((2, 2), np.inf), "+∞"),
        (np.ones(2, dtype=bool), "1 axis"),
        (np.full((2, 2), 1000.0), "exp(1000) is not 0"),
        (np.full((2, 2), 1e308), "is 1e+308"),
    ],
)
def test_causal_mask_bad_answers(answer, phrase):
    fails_with(check_causal_mask(answer, 2), phrase)  # no RuntimeWarning either: pytest makes it an error


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        ([30, 22], "as a dict"),
        ({"mults": 30, "additions": 22}, "Unknown key 'mults'"),
        ({"multiplications": 30}, "no 'additions'"),
        ({"multiplications": 30, "additions": 22.5}, "whole number"),
        ({"multiplications": -30, "additions": 22}, "whole number"),
        ({"multiplications": None, "additions": 22}, "No answer yet"),
        ({"multiplications": "30", "additions": 22}, "text"),
        ({"multiplications": True, "additions": 22}, "boolean"),
        ({"multiplications": 10**400, "additions": 22}, "too large"),
    ],
)
def test_operation_counts_bad_answers(answer, phrase):
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), phrase)


# --------------------------------------------------------------------------------------------
# Bad exercise inputs: an error naming the argument


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: check_causal_mask(LOWER, 0), ValueError, "n"),
        (lambda: check_causal_mask(LOWER, 4.0), TypeError, "n"),
        (lambda: check_padding_mask(REAL, 3), TypeError, "lengths"),
        (lambda: check_padding_mask(REAL, []), TypeError, "lengths"),
        (lambda: check_padding_mask(REAL, [3, -1]), ValueError, "lengths"),
        (lambda: check_padding_mask(REAL, [5, 2], n_k=4), ValueError, "at most n_k"),
        (
            lambda: check_operation_counts({"multiplications": 30, "additions": 22}, 2, 0, 2, 3),
            ValueError,
            "n_k",
        ),
        (
            lambda: check_operation_counts({"multiplications": 30, "additions": 22}, 2, 3, 2, 3.5),
            TypeError,
            "d_v",
        ),
    ],
)
def test_bad_exercise_inputs_raise_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
