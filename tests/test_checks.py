"""attnlib.checks: every check passes the right answer and names each mistake it diagnoses."""

import math

import numpy as np
import pytest

from attnlib import attention_steps, checks, examples, scaled_dot_product_attention, softmax
from attnlib.checks import (
    CheckResult,
    check_attention,
    check_causal_mask,
    check_operation_counts,
    check_shape,
    check_value,
)
from attnlib.counting import operation_counts


@pytest.fixture
def by_hand():
    """Q 2×2, K 3×2, V 3×3, scale 1/√2: every mistake gives a different result here."""
    return examples.attention_by_hand()


def fails_with(result: CheckResult, *phrases: str) -> None:
    assert isinstance(result, CheckResult)
    assert not result.passed, str(result)
    for phrase in phrases:
        assert phrase in result.message, result.message


def passes(result: CheckResult) -> None:
    assert isinstance(result, CheckResult)
    assert result.passed, str(result)


# --------------------------------------------------------------------------------------------
# CheckResult


def test_result_shows_a_stable_one_line_verdict():
    good, bad = CheckResult(True, "Correct: 2 = 2."), CheckResult(False, "Not yet.")
    assert str(good) == repr(good) == "✔ Correct: 2 = 2."
    assert str(bad) == repr(bad) == "✘ Not yet."
    assert "0x" not in repr(good)
    assert bool(good) and not bool(bad)


def test_result_markdown_escapes_the_message():
    result = CheckResult(False, "use n_q rows, not K*V")
    assert result._repr_markdown_() == r"**✘** use n\_q rows, not K\*V"


def test_result_is_frozen_and_validated():
    result = CheckResult(True, "ok")
    with pytest.raises(AttributeError):
        result.passed = False  # type: ignore[misc]
    with pytest.raises(TypeError, match="passed"):
        CheckResult("yes", "ok")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="message"):
        CheckResult(True, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="single line"):
        CheckResult(True, "two\nlines")


def test_numpy_bool_becomes_bool():
    assert CheckResult(np.bool_(True), "ok").passed is True


# --------------------------------------------------------------------------------------------
# check_attention: right answers


def test_right_output_passes(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    passes(check_attention(out, *by_hand))
    passes(check_attention(out.tolist(), *by_hand))


def test_output_rounded_to_two_decimals_passes(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    passes(check_attention(out.round(2), *by_hand))


def test_right_weights_scores_and_scaled_scores_pass(by_hand):
    steps = attention_steps(*by_hand)
    passes(check_attention(steps.weights, *by_hand, what="weights"))
    passes(check_attention(steps.raw_scores, *by_hand, what="scores"))
    passes(check_attention(steps.scaled_scores, *by_hand, what="scaled_scores"))


def test_single_query_plain_dot_product_passes():
    s, H, V = examples.one_query_three_vectors()
    out, weights = scaled_dot_product_attention(s, H, V, scale=1.0)
    passes(check_attention(out, s, H, V, scale=1.0))
    passes(check_attention(weights, s, H, V, scale=1.0, what="weights"))


def test_masked_and_batched_answers_pass():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 5))
    out, weights = scaled_dot_product_attention(Q, K, V, causal=True)
    passes(check_attention(out, Q, K, V, causal=True))
    passes(check_attention(weights, Q, K, V, causal=True, what="weights"))


def test_decimals_sets_the_tolerance(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    passes(check_attention(out + 0.04, *by_hand, decimals=1))
    fails_with(check_attention(out + 0.04, *by_hand, decimals=2))
    fails_with(check_attention(out + 0.004, *by_hand, decimals=3))


# --------------------------------------------------------------------------------------------
# check_attention: one test per diagnosed mistake


def test_softmax_over_axis_0(by_hand):
    Q, K, V = by_hand
    steps = attention_steps(Q, K, V)
    wrong = softmax(steps.scaled_scores, axis=0)
    fails_with(check_attention(wrong @ V, Q, K, V), "wrong axis", "axis=-1")
    fails_with(check_attention(wrong, Q, K, V, what="weights"), "wrong axis")


def test_forgot_to_scale(by_hand):
    Q, K, V = by_hand
    out, weights = scaled_dot_product_attention(Q, K, V, scale=1.0)
    fails_with(check_attention(out, Q, K, V), "Forgot to scale", "1/√2")
    fails_with(check_attention(weights, Q, K, V, what="weights"), "Forgot to scale")
    fails_with(check_attention(Q @ K.T, Q, K, V, what="scaled_scores"), "Forgot to scale")


def test_scaled_by_d_instead_of_sqrt_d(by_hand):
    Q, K, V = by_hand
    out, _ = scaled_dot_product_attention(Q, K, V, scale=1 / 2)
    fails_with(check_attention(out, Q, K, V), "1/d_k instead of 1/√d_k")


def test_multiplied_by_sqrt_d(by_hand):
    Q, K, V = by_hand
    out, _ = scaled_dot_product_attention(Q, K, V, scale=math.sqrt(2))
    fails_with(check_attention(out, Q, K, V), "Multiplied by √d_k")


def test_scaled_although_the_exercise_is_plain_dot_product():
    s, H, V = examples.one_query_three_vectors()
    out, _ = scaled_dot_product_attention(s, H, V)
    fails_with(check_attention(out, s, H, V, scale=1.0), "plain dot-product", "scale = 1")


def test_used_k_instead_of_v(by_hand):
    Q, K, V = by_hand
    _, weights = scaled_dot_product_attention(Q, K, V)
    fails_with(check_attention(weights @ K, Q, K, V), "Used K instead of V")


def test_transposed_v(by_hand):
    Q, K, V = by_hand
    _, weights = scaled_dot_product_attention(Q, K, V)
    fails_with(check_attention(weights @ V.T, Q, K, V), "Transposed V")


def test_forgot_the_softmax(by_hand):
    Q, K, V = by_hand
    steps = attention_steps(Q, K, V)
    fails_with(check_attention(steps.scaled_scores @ V, Q, K, V), "Forgot the softmax")


def test_forgot_the_mask(by_hand):
    Q, K, V = by_hand
    out, weights = scaled_dot_product_attention(Q, K, V)
    fails_with(check_attention(out, Q, K, V, causal=True), "Forgot the mask")
    mask = np.array([[True, False, True], [True, True, False]])
    fails_with(check_attention(weights, Q, K, V, mask=mask, what="weights"), "Forgot the mask")


def test_scores_normalised_without_exp(by_hand):
    Q, K, V = by_hand
    scaled = attention_steps(Q, K, V).scaled_scores
    no_exp = scaled / scaled.sum(axis=-1, keepdims=True)
    fails_with(
        check_attention(no_exp, Q, K, V, what="weights"), "Normalised without exp", "exp(s) / exp(s).sum()"
    )
    fails_with(check_attention(no_exp @ V, Q, K, V), "Normalised without exp")


def test_exponentials_not_normalised_before_multiplying_by_v(by_hand):
    Q, K, V = by_hand
    scaled = attention_steps(Q, K, V).scaled_scores
    fails_with(
        check_attention(np.exp(scaled) @ V, Q, K, V),
        "Exponentiated but not normalised",
        "before multiplying by V",
    )


def test_divided_by_sqrt_n_k_instead_of_sqrt_d_k(by_hand):
    Q, K, V = by_hand  # n_k = 3, d_k = 2
    out, weights = scaled_dot_product_attention(Q, K, V, scale=1 / math.sqrt(3))
    fails_with(check_attention(out, Q, K, V), "Divided by √n_k = √3", "instead of √d_k = √2")
    fails_with(check_attention(weights, Q, K, V, what="weights"), "√n_k")


def test_no_sqrt_n_k_diagnosis_when_n_k_equals_d_k():
    s, H, V = examples.one_query_three_vectors()  # n_k = d_k = 3: the same scale as the right one
    out, _ = scaled_dot_product_attention(s, H, V)
    passes(check_attention(out, s, H, V))


def test_plain_attention_messages_say_scores_not_scaled_scores():
    s, H, V = examples.one_query_three_vectors()
    result = check_attention((H @ s) @ V, s, H, V, scale=1.0)
    fails_with(result, "Forgot the softmax: you multiplied the scores by V")
    assert "scaled" not in result.message
    result = check_attention(H @ s, s, H, V, scale=1.0, what="weights")
    fails_with(result, "These are the scores Q Kᵀ: now take the softmax")
    assert "scale them" not in result.message


def test_several_mistakes_giving_the_same_numbers_are_all_listed():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(2, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))  # n_k = d_k² = 4
    out, _ = scaled_dot_product_attention(Q, K, V, scale=0.5)  # 1/d_k = 1/√n_k
    fails_with(
        check_attention(out, Q, K, V),
        "it is probably one of these",
        "(1) Scaled by 1/d_k instead of 1/√d_k",
        "(2) Divided by √n_k = √4",
    )


def test_entries_are_named_from_1_with_the_numpy_index():
    s, H, V = examples.one_query_three_vectors()
    out, weights = scaled_dot_product_attention(s, H, V, scale=1.0)
    wrong = weights.copy()
    wrong[1] += 0.5
    fails_with(check_attention(wrong, s, H, V, scale=1.0, what="weights"), "your weights sum to 1.500")
    wrong = out.copy()
    wrong[1] += 0.5
    fails_with(check_attention(wrong, s, H, V, scale=1.0), "dimension 2 (numpy index [1])")
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 5))
    out, weights = scaled_dot_product_attention(Q, K, V)
    out[1, 2, 3] += 1.0
    fails_with(
        check_attention(out, Q, K, V), "query 3, dimension 4 of batch entry [1] (numpy index [1, 2, 3])"
    )
    weights[1, 2] *= 0.5
    fails_with(
        check_attention(weights, Q, K, V, what="weights"), "query 3 of batch entry [1] (numpy index [1, 2])"
    )
    scores = attention_steps(Q[0], K[0], V[0]).raw_scores
    scores[0, 1] += 1.0
    fails_with(
        check_attention(scores, Q[0], K[0], V[0], what="scores"), "query 1, key 2 (numpy index [0, 1])"
    )


def test_nan_in_an_answer_of_the_wrong_shape_names_rows_and_columns(by_hand):
    wrong = np.zeros((3, 2))
    wrong[2, 0] = np.nan
    fails_with(check_attention(wrong, *by_hand), "NaN at row 3, column 1 (numpy index [2, 0])")


def test_transposed_answer(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    fails_with(check_attention(out.T, *by_hand), "transpose of the right one", "(2, 3)")


def test_transposed_scores():
    Q, K = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]), np.array([[1.0, 2.0], [3.0, 0.0], [0.0, 1.0]])
    fails_with(check_attention(K @ Q.T, Q, K, K, what="scores"), "transpose")


def test_weights_given_as_output(by_hand):
    _, weights = scaled_dot_product_attention(*by_hand)
    fails_with(check_attention(weights, *by_hand), "weights, not the output")


def test_output_given_as_weights():
    Q = K = np.array([[1.0, 0.0], [0.0, 1.0]])
    V = np.array([[2.0, 1.0], [0.0, 3.0]])
    out, _ = scaled_dot_product_attention(Q, K, V)
    fails_with(check_attention(out, Q, K, V, what="weights"), "output, not the weights")


def test_raw_or_scaled_scores_given_as_weights(by_hand):
    steps = attention_steps(*by_hand)
    fails_with(check_attention(steps.raw_scores, *by_hand, what="weights"), "raw scores")
    fails_with(check_attention(steps.scaled_scores, *by_hand, what="weights"), "scaled scores")


def test_exponentiated_but_not_normalised(by_hand):
    steps = attention_steps(*by_hand)
    fails_with(check_attention(np.exp(steps.scaled_scores), *by_hand, what="weights"), "not normalised")


def test_scores_already_scaled_or_weights_given_as_scores(by_hand):
    steps = attention_steps(*by_hand)
    fails_with(check_attention(steps.scaled_scores, *by_hand, what="scores"), "already scaled")
    fails_with(check_attention(steps.weights, *by_hand, what="scores"), "weights")
    fails_with(check_attention(steps.weights, *by_hand, what="scaled_scores"), "weights")


def test_weight_rows_that_do_not_sum_to_one(by_hand):
    _, weights = scaled_dot_product_attention(*by_hand)
    wrong = weights.copy()
    wrong[1] *= 0.8
    fails_with(
        check_attention(wrong, *by_hand, what="weights"),
        "sum to 1",
        "the weights of query 2 (numpy index [1]) sum to 0.800",
    )


def test_wrong_shape(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    fails_with(check_attention(out[:, :2], *by_hand), "Wrong shape", "(n_q, d_v) = (2, 3)", "got (2, 2)")


def test_extra_axis_of_length_one():
    s, H, V = examples.one_query_three_vectors()
    out, _ = scaled_dot_product_attention(s, H, V, scale=1.0)
    fails_with(check_attention(out[None, :], s, H, V, scale=1.0), "(d_v,) = (3,)", "got (1, 3)", "length 1")


def test_nan_in_answer(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    out[1, 2] = np.nan
    fails_with(check_attention(out, *by_hand), "NaN at query 2, dimension 3 (numpy index [1, 2])")
    fails_with(check_attention(np.full(3, np.inf), *examples.one_query_three_vectors()), "infinity")


def test_rounding_too_early(by_hand):
    Q, K, V = by_hand
    _, weights = scaled_dot_product_attention(Q, K, V)
    fails_with(check_attention(weights.round(2) @ V, Q, K, V), "Very close", "rounding")


def test_other_wrong_answer_names_the_first_entry(by_hand):
    out, _ = scaled_dot_product_attention(*by_hand)
    wrong = out.copy()
    wrong[0, 2] += 0.3
    fails_with(
        check_attention(wrong, *by_hand),
        "Not yet",
        "1 of 6 entries is off",
        "query 1, dimension 3 (numpy index [0, 2])",
    )
    fails_with(check_attention(wrong, *by_hand), "expected -0.724, got -0.424")


@pytest.mark.parametrize("placeholder", [None, ...])
def test_placeholder_answer(by_hand, placeholder):
    fails_with(check_attention(placeholder, *by_hand), "No answer yet")


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [("0.86", "text"), ([[1, 2], [3]], "ragged"), ([[True, False]], "boolean"), ([[1 + 2j]], "dtype")],
)
def test_answers_that_are_not_arrays_of_numbers(by_hand, answer, phrase):
    fails_with(check_attention(answer, *by_hand), phrase)


def test_check_attention_rejects_bad_exercise_inputs(by_hand):
    Q, K, V = by_hand
    with pytest.raises(ValueError, match="what must be one of"):
        check_attention(Q, Q, K, V, what="context")
    with pytest.raises(ValueError, match="d_k"):
        check_attention(Q, Q, K[:, :1], V)
    with pytest.raises(ValueError, match="n_k"):
        check_attention(Q, Q, K, V[:2])
    with pytest.raises(TypeError, match="decimals"):
        check_attention(Q, Q, K, V, decimals=1.5)
    with pytest.raises(ValueError, match="decimals"):
        check_attention(Q, Q, K, V, decimals=-1)
    with pytest.raises(TypeError, match="scale"):
        check_attention(Q, Q, K, V, scale="1/sqrt(2)")


# --------------------------------------------------------------------------------------------
# check_shape


def test_check_shape_passes_a_tuple_or_an_array():
    passes(check_shape((2, 3), (2, 3)))
    passes(check_shape([2, 3], (2, 3)))
    passes(check_shape(np.zeros((2, 3)), (2, 3)))
    passes(check_shape(3, (3,)))
    assert str(check_shape((2, 3), (2, 3), name="the weights' shape", axes=("n_q", "n_k"))) == (
        "✔ Correct: the weights' shape is (n_q, n_k) = (2, 3)."
    )


def test_check_shape_axes_swapped():
    fails_with(check_shape((3, 2), (2, 3), axes=("n_q", "n_k")), "wrong order", "(n_q, n_k) = (2, 3)")


def test_check_shape_wrong_number_of_axes():
    fails_with(check_shape((6,), (2, 3)), "2 axes", "you gave 1")


def test_check_shape_names_the_axis_that_differs():
    fails_with(
        check_shape((2, 4), (2, 3), axes=("n_q", "n_k")),
        "the second axis (numpy axis 1, n_k)",
        "should be 3, got 4",
    )
    fails_with(check_shape((5, 3), (2, 3)), "the first axis (numpy axis 0)", "should be 2, got 5")


def test_check_shape_bad_answers():
    fails_with(check_shape(None, (2, 3)), "No answer yet")
    fails_with(check_shape("2x3", (2, 3)), "tuple of whole numbers")
    fails_with(check_shape((2.0, 3.0), (2, 3)), "tuple of whole numbers")


def test_check_shape_rejects_bad_exercise_inputs():
    with pytest.raises(TypeError, match="expected_shape"):
        check_shape((2, 3), "2, 3")
    with pytest.raises(ValueError, match="expected_shape"):
        check_shape((2, 3), (2, -3))
    with pytest.raises(ValueError, match="one name per axis"):
        check_shape((2, 3), (2, 3), axes=("n_q",))


# --------------------------------------------------------------------------------------------
# check_value


def test_check_value_passes_within_the_tolerance():
    passes(check_value(30, 30, name="multiplications"))
    passes(check_value(0.731, 0.7310585786))
    passes(check_value(np.float32(0.73), 0.7310585786))
    passes(check_value(np.array([0.73]), 0.7310585786))
    assert str(check_value(30, 30, name="multiplications")) == "✔ Correct: multiplications = 30."


def test_check_value_says_too_high_or_too_low_without_giving_the_answer_away():
    result = check_value(0.75, 0.7310585786, name="the weight")
    fails_with(result, "0.75 is too high", "Check your formula", "at least 2 decimals")
    assert "0.73" not in result.message
    fails_with(check_value(29, 30), "too low")
    assert str(check_value(29, 30)) == "✘ Not yet: 29 is too low. Check your formula step by step."
    fails_with(check_value(0.1, 0.7071, decimals=1), "at least 1 decimal.")


def test_check_value_answer_rounded_to_too_few_decimals():
    fails_with(
        check_value(0.71, 0.70710678, decimals=4), "0.71 is rounded to 2 decimals", "at least 4 decimals"
    )
    fails_with(check_value(0.7, 0.70710678, decimals=4), "rounded to 1 decimal;")
    fails_with(check_value(0.707, 0.70710678, decimals=4), "rounded to 3 decimals")  # truncated
    fails_with(check_value(0.8, 0.70710678, decimals=4), "too high")


def test_check_value_names_a_known_mistake():
    known = {"you counted Q Kᵀ only.": 12}
    fails_with(check_value(12, 30, mistakes=known), "12 is not it: you counted Q Kᵀ only.")


def test_check_value_lists_every_known_mistake_that_fits():
    known = {"that is 1/d_k.": 0.5, "that is 1/√n_k.": 0.5, "that is √d_k.": 2**0.5}
    result = check_value(0.5, 2**-0.5, mistakes=known)
    fails_with(
        result, "0.50 is not it", "it is probably one of these", "(1) that is 1/d_k.", "(2) that is 1/√n_k."
    )
    assert "√d_k" not in result.message


def test_check_value_known_mistake_equal_to_the_answer_is_ignored():
    passes(check_value(30, 30, mistakes={"never shown": 30}))


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [(None, "No answer yet"), (..., "No answer yet"), ("30", "text"), (True, "expected a number"),
     ([1, 2], "not a single number"), (float("nan"), "NaN")],
)  # fmt: skip
def test_check_value_bad_answers(answer, phrase):
    fails_with(check_value(answer, 30), phrase)


def test_check_value_rejects_bad_exercise_inputs():
    with pytest.raises(TypeError, match="expected"):
        check_value(1, "1")
    with pytest.raises(ValueError, match="expected"):
        check_value(1, float("inf"))
    with pytest.raises(TypeError, match="mistakes"):
        check_value(1, 2, mistakes={"why": "1"})
    with pytest.raises(ValueError, match="decimals"):
        check_value(1, 2, decimals=-2)


# --------------------------------------------------------------------------------------------
# check_causal_mask

LOWER = np.tri(4, dtype=bool)


def test_boolean_causal_mask_passes():
    passes(check_causal_mask(LOWER, 4))
    assert "tokens 1..i" in check_causal_mask(LOWER, 4).message
    passes(check_causal_mask(np.tril(np.ones((4, 4), dtype=bool)), 4))


def test_additive_causal_mask_passes():
    passes(check_causal_mask(np.where(LOWER, 0.0, -np.inf), 4))


def test_additive_mask_with_a_huge_negative_number_passes_with_a_note():
    result = check_causal_mask(np.where(LOWER, 0.0, -1e9), 4)
    passes(result)
    assert "acts as −∞" in result.message


def test_causal_mask_upper_triangular():
    fails_with(check_causal_mask(LOWER.T, 4), "Upper-triangular")
    fails_with(check_causal_mask(np.where(LOWER.T, 0.0, -np.inf), 4), "Upper-triangular")


def test_causal_mask_diagonal_missing():
    strict = np.tri(4, k=-1, dtype=bool)
    fails_with(check_causal_mask(strict, 4), "diagonal is missing")
    fails_with(check_causal_mask(np.where(strict, 0.0, -np.inf), 4), "diagonal is missing")


def test_causal_mask_inverted_convention():
    fails_with(
        check_causal_mask(~LOWER, 4),
        "Inverted",
        "True means may attend",
        "F.scaled_dot_product_attention uses True = may attend",
        "nn.MultiheadAttention and nn.Transformer",
        "True = hidden",
    )
    additive = check_causal_mask(np.where(LOWER, -np.inf, 0.0), 4)
    fails_with(additive, "Inverted", "0 means may attend")
    assert "PyTorch" not in additive.message


def test_causal_mask_one_zero_instead_of_zero_minus_inf():
    fails_with(check_causal_mask(LOWER.astype(float), 4), "1/0 instead of 0/−∞")
    fails_with(check_causal_mask(LOWER.astype(int), 4), "1/0 instead of 0/−∞")


def test_causal_mask_ones_marking_hidden_entries():
    fails_with(check_causal_mask((~LOWER).astype(float), 4), "1 marks the hidden entries")


def test_causal_mask_other_zero_one_patterns():
    fails_with(check_causal_mask(np.tri(4, k=-1), 4), "not additive", "diagonal is missing")


def test_causal_mask_wrong_shape():
    fails_with(check_causal_mask(np.tri(3, dtype=bool), 4), "Wrong shape", "(4, 4)", "got (3, 3)")


def test_causal_mask_not_negative_enough():
    fails_with(
        check_causal_mask(np.where(LOWER, 0.0, -100.0), 4),
        "Query token 1, key token 2 (numpy index [0, 1])",
        "-100",
    )


def test_causal_mask_first_wrong_entry():
    wrong = LOWER.copy()
    wrong[3, 1] = False
    fails_with(
        check_causal_mask(wrong, 4),
        "query token 4, key token 2 (numpy index [3, 1]) should be True",
        "token 4 may see token 2, an earlier one",
    )
    wrong = LOWER.copy()
    wrong[0, 2] = True
    fails_with(
        check_causal_mask(wrong, 4), "(numpy index [0, 2]) should be False (token 3 comes after token 1)"
    )


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [(None, "No answer yet"), ("tril", "text"), ([[1, 0], [1]], "ragged"),
     (np.array([["a"]]), "dtype"), (np.full((2, 2), np.nan), "NaN"), (np.full((2, 2), np.inf), "+∞")],
)  # fmt: skip
def test_causal_mask_bad_answers(answer, phrase):
    fails_with(check_causal_mask(answer, 2), phrase)


def test_causal_mask_rejects_bad_n():
    with pytest.raises(ValueError, match="n"):
        check_causal_mask(LOWER, 0)
    with pytest.raises(TypeError, match="n"):
        check_causal_mask(LOWER, 4.0)


# --------------------------------------------------------------------------------------------
# check_operation_counts

N_Q, N_K, D_K, D_V = 2, 3, 2, 3  # the shapes of examples.attention_by_hand()


def totals():
    return operation_counts(N_Q, N_K, D_K, D_V, stable=False).totals()


def right_answer():
    t = totals()
    return {"multiplications": t["multiplications"], "additions": t["additions"]}


def test_operation_counts_formulas_used_by_the_check():
    t = totals()
    assert t["multiplications"] == N_Q * N_K * D_K + N_Q * N_K * D_V == 30
    assert t["additions"] == N_Q * N_K * (D_K - 1) + N_Q * (N_K - 1) + N_Q * D_V * (N_K - 1) == 22


def test_right_counts_pass_and_state_the_convention():
    result = check_operation_counts(right_answer(), N_Q, N_K, D_K, D_V)
    passes(result)
    assert "30 multiplications and 22 additions" in result.message
    assert "square root" in result.message and "divisions" in result.message


def test_other_operations_are_checked_when_given():
    answer = {**right_answer(), "divisions": 12, "exponentials": 6, "square roots": 1}
    passes(check_operation_counts(answer, N_Q, N_K, D_K, D_V))
    fails_with(check_operation_counts({**answer, "exponentials": 5}, N_Q, N_K, D_K, D_V), "Exponentials: 5")


def test_only_q_k_multiplications():
    answer = {**right_answer(), "multiplications": N_Q * N_K * D_K}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "counted Q Kᵀ", "not weights · V")


def test_only_weights_v_multiplications():
    answer = {**right_answer(), "multiplications": N_Q * N_K * D_V}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "but not Q Kᵀ")


def test_scaling_counted_as_multiplications():
    answer = {**right_answer(), "multiplications": 30 + N_Q * N_K}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "scaling as multiplications")


def test_scaling_and_normalisation_counted_as_multiplications():
    answer = {**right_answer(), "multiplications": 30 + 2 * N_Q * N_K}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "softmax normalisation")


def test_d_k_used_for_weights_v():
    answer = {**right_answer(), "multiplications": 2 * N_Q * N_K * D_K}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "used d_k for weights · V")


def test_m_additions_per_sum_instead_of_m_minus_1():
    answer = {**right_answer(), "additions": N_Q * N_K * D_K + N_Q * N_K + N_Q * D_V * N_K}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "m − 1 additions, not m")


def test_softmax_denominators_left_out():
    answer = {**right_answer(), "additions": 22 - N_Q * (N_K - 1)}
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), "left out", "softmax denominators")


def test_two_mistakes_with_the_same_multiplication_count_are_both_listed():
    # d_k = d_v: Q Kᵀ alone and weights · V alone both take n_q·n_k·d_k = 12 multiplications
    answer = {
        "multiplications": 12,
        "additions": operation_counts(2, 3, 2, 2, stable=False).totals()["additions"],
    }
    fails_with(
        check_operation_counts(answer, 2, 3, 2, 2),
        "Multiplications: 12 is not it. Several mistakes give 12; it is probably one of these:",
        "(1) you counted Q Kᵀ",
        "(2) you counted weights · V",
    )


def test_every_addition_mistake_that_fits_is_listed_simplest_first():
    answer = {**right_answer(), "additions": 22 - N_Q * N_K * (D_K - 1)}  # 16: Q Kᵀ left out, or ...
    result = check_operation_counts(answer, N_Q, N_K, D_K, D_V)
    fails_with(
        result,
        "Additions: 16 is not it. Several mistakes give 16; it is probably one of these:",
        "(1) you left out the additions of Q Kᵀ (6).",
        "(2) in Q Kᵀ a sum of m numbers takes m − 1 additions, not m; you left out the additions of weights",
    )


def test_other_wrong_count_says_too_many_or_too_few():
    fails_with(
        check_operation_counts({"multiplications": 31, "additions": 22}, N_Q, N_K, D_K, D_V),
        "Multiplications: 31 is too many",
        "Additions: 22 is right",
    )


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [(None, "No answer yet"), ([30, 22], "as a dict"),
     ({"mults": 30, "additions": 22}, "Unknown key 'mults'"), ({"multiplications": 30}, "no 'additions'"),
     ({"multiplications": 30, "additions": 22.5}, "whole number"),
     ({"multiplications": None, "additions": 22}, "No answer yet"),
     ({"multiplications": "30", "additions": 22}, "text")],
)  # fmt: skip
def test_operation_counts_bad_answers(answer, phrase):
    fails_with(check_operation_counts(answer, N_Q, N_K, D_K, D_V), phrase)


def test_float_counts_that_are_whole_numbers_pass():
    passes(check_operation_counts({"multiplications": 30.0, "additions": np.int64(22)}, N_Q, N_K, D_K, D_V))


def test_operation_counts_rejects_bad_shapes():
    with pytest.raises(ValueError, match="n_k"):
        check_operation_counts(right_answer(), 2, 0, 2, 3)
    with pytest.raises(TypeError, match="d_v"):
        check_operation_counts(right_answer(), 2, 3, 2, 3.5)


def test_checks_module_lists_its_public_names():
    assert set(checks.__all__) == {
        "CheckResult",
        "check_attention",
        "check_causal_mask",
        "check_operation_counts",
        "check_shape",
        "check_value",
    }
