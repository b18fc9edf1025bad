"""attention_lessons.kit.checks: right answers pass; each mistake of the tables is named, and no message gives
the right answer away. Lesson 08's checks of the masks and the operation counts are tested in
tests/lessons/l08_exercises."""

import math
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import Case, fails_with, passes, revealed

from attention_lessons.kit import examples
from attention_lessons.kit.checks import CheckResult, check_attention, check_scale, check_shape, check_value
from attention_lessons.kit.checks.mistakes import Mistake, named_by_every_case
from attention_lessons.kit.checks.result import failed
from attnlib import attention_steps, scaled_dot_product_attention, softmax
from attnlib.counting import operation_counts

BY_HAND = examples.attention_by_hand()  # Q 2×2, K 3×2, V 3×3: n_q=2, n_k=3, d_k=2, d_v=3, scale 1/√2
Q, K, V = BY_HAND
STEPS = attention_steps(*BY_HAND)
ONE_QUERY = examples.one_query_three_vectors()  # s (3,), H 3×3, plain dot-product attention (scale 1)
S, H, _ = ONE_QUERY
PLAIN = attention_steps(S, H, H, scale=1.0)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 4, 3))  # a batch of two sentences of 4 tokens, d = 3
LENGTHS = [3, 2]
REAL = np.arange(4) < np.array(LENGTHS)[:, None]  # (batch, n_k): True = a real token
PADDING = REAL[:, None, :]  # (batch, 1, n_k): broadcasts over the queries

N_Q, N_K, D_K, D_V = 2, 3, 2, 3  # the shapes of BY_HAND
COUNTS = operation_counts(N_Q, N_K, D_K, D_V, stable=False).totals()
MULS, ADDS = COUNTS["multiplications"], COUNTS["additions"]


def test_revealed_finds_a_right_answer_in_a_message():
    assert revealed("expected -0.724, got -0.424", STEPS.output) == ["-0.724"]
    assert revealed("Compare: expected 0.860", STEPS.output) == ["0.860"]
    assert revealed("the count is 30.", [MULS, ADDS]) == ["30"]
    assert revealed("0.7071 is right", 1 / math.sqrt(2)) == ["0.7071"]
    assert revealed("axis=-1, a sum of m numbers takes m − 1", [1.0, 2.0]) == []
    assert revealed("the mask is (2, 3)", "(2, 3)") == ["(2, 3)"]


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
# Right answers pass


def test_right_attention_answers_pass():
    passes(check_attention(STEPS.output, *BY_HAND))
    passes(check_attention(STEPS.output.tolist(), *BY_HAND))
    passes(check_attention(STEPS.output.round(2), *BY_HAND))
    passes(check_attention(STEPS.weights, *BY_HAND, what="weights"))
    passes(check_attention(STEPS.raw_scores, *BY_HAND, what="scores"))
    passes(check_attention(STEPS.scaled_scores, *BY_HAND, what="scaled_scores"))
    passes(check_attention(PLAIN.output, *ONE_QUERY, scale=1.0))
    passes(check_attention(PLAIN.weights, *ONE_QUERY, scale=1.0, what="weights"))


def test_masked_and_batched_answers_pass():
    Qb, Kb, Vb = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 3, 5))
    out, weights = scaled_dot_product_attention(Qb, Kb, Vb, causal=True)
    passes(check_attention(out, Qb, Kb, Vb, causal=True))
    passes(check_attention(weights, Qb, Kb, Vb, causal=True, what="weights"))
    out, weights = scaled_dot_product_attention(X, X, X, mask=PADDING)
    passes(check_attention(weights, X, X, X, mask=PADDING, what="weights"))


def test_a_torch_answer_is_read_through_numpy():
    torch = pytest.importorskip("torch")
    passes(check_attention(torch.tensor(STEPS.output, requires_grad=True), *BY_HAND))
    passes(check_value(torch.tensor(0.5, requires_grad=True), 0.5))


def test_decimals_sets_the_tolerance():
    passes(check_attention(STEPS.output + 0.04, *BY_HAND, decimals=1))
    fails_with(check_attention(STEPS.output + 0.04, *BY_HAND, decimals=2))
    fails_with(check_attention(STEPS.output + 0.004, *BY_HAND, decimals=3))


# --------------------------------------------------------------------------------------------
# One mistake, one row: each mistake's wrong answer gets the mistake's name, and no message
# contains the right answer.


STAGE = {"scores": "raw_scores", "scaled_scores": "scaled_scores", "weights": "weights", "output": "output"}


def by_hand(id: str, wrong: object, name: str, what: str = "output", **options: object) -> Case:
    """A mistake in exercise 3 (scale 1/√2)."""
    right = getattr(STEPS, STAGE[what])
    return Case(id, check_attention, BY_HAND, wrong, name, right, {"what": what, **options})


def plain(id: str, wrong: object, name: str, what: str = "output") -> Case:
    """A mistake in exercise 1 (one query, plain dot-product attention: scale 1)."""
    return Case(
        id, check_attention, ONE_QUERY, wrong, name, getattr(PLAIN, STAGE[what]), {"scale": 1.0, "what": what}
    )


def masked(id: str, wrong_mask: np.ndarray | None, name: str, **options: object) -> Case:
    """Self-attention of X with ``wrong_mask`` where the exercise has a padding or a causal mask."""
    Xs = X if "mask" in options else X[0]
    wrong = scaled_dot_product_attention(Xs, Xs, Xs, mask=wrong_mask)[1]
    right = attention_steps(Xs, Xs, Xs, **options).weights
    return Case(id, check_attention, (Xs, Xs, Xs), wrong, name, right, {"what": "weights", **options})


def scale(id: str, wrong: float, name: str, **sizes: int) -> Case:
    """A wrong scale in question 2b (Q (4, 6), K (10, 6), V (10, 5): d_k = 6, n_k = 10, d_v = 5)."""
    return Case(id, check_scale, (6,), wrong, name, 1 / math.sqrt(6), sizes or {"n_k": 10, "d_v": 5})


def scaled_by(factor: float, stage: int = 0) -> np.ndarray:
    """Exercise 3's output (stage 0) or weights (stage 1) with another scale."""
    return scaled_dot_product_attention(*BY_HAND, scale=factor)[stage]


def _whole_matrix(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max())
    return e / e.sum()


SCALED, RAW, WEIGHTS, OUT = STEPS.scaled_scores, STEPS.raw_scores, STEPS.weights, STEPS.output
PADDING_FULL = np.broadcast_to(PADDING, (2, 4, 4))

CASES = [
    by_hand("axis 0, output", softmax(SCALED, axis=0) @ V, "Softmax over the wrong axis"),
    by_hand("axis 0, weights", softmax(SCALED, axis=0), "Softmax over the wrong axis", "weights"),
    by_hand("whole matrix, weights", _whole_matrix(SCALED), "Softmax over the whole matrix", "weights"),
    by_hand("whole matrix, output", _whole_matrix(SCALED) @ V, "Softmax over the whole matrix"),
    by_hand("scale after softmax", softmax(RAW) / math.sqrt(2), "Scaled after the softmax", "weights"),
    by_hand("scale after softmax, output", softmax(RAW) / math.sqrt(2) @ V, "Scaled after the softmax"),
    by_hand("no scale", scaled_by(1.0), "Forgot to scale"),
    by_hand("no scale, weights", scaled_by(1.0, 1), "Forgot to scale", "weights"),
    by_hand("no scale, scaled scores", RAW, "Forgot to scale", "scaled_scores"),
    by_hand("1/d_k", scaled_by(1 / 2), "Scaled by 1/d_k instead of 1/√d_k"),
    by_hand("√d_k", scaled_by(math.sqrt(2)), "Multiplied by √d_k"),
    by_hand("1/√n_k", scaled_by(1 / math.sqrt(3)), "Divided by √n_k"),
    by_hand("1/8", scaled_by(1 / 8), "Used 1/8, the scale of the original"),
    by_hand("1/√d_model", scaled_by(1 / math.sqrt(8)),
            "Divided by √d_model", d_model=8),
    by_hand("K for V", WEIGHTS @ K, "Used K instead of V"),
    by_hand("V transposed", WEIGHTS @ V.T, "Transposed V"),
    by_hand("no softmax", SCALED @ V, "Forgot the softmax: you multiplied the scaled scores by V"),
    by_hand("exp not normalised", np.exp(SCALED) @ V, "Exponentiated but not normalised"),
    by_hand("no exp", SCALED / SCALED.sum(axis=-1, keepdims=True), "Normalised without exp", "weights"),
    by_hand("weights as output", WEIGHTS, "These are the weights, not the output"),
    by_hand("output as weights", OUT, "This is the output, not the weights", "weights"),
    by_hand("raw scores as weights", RAW, "These are the raw scores", "weights"),
    by_hand("scaled scores as weights", SCALED, "These are the scaled scores, not the weights", "weights"),
    by_hand("scores already scaled", SCALED, "These are already scaled", "scores"),
    by_hand("weights as scores", WEIGHTS, "These are the weights, not the scores", "scores"),
    by_hand("output transposed", OUT.T, "Transposed: your answer is the transpose"),
    plain("plain: the transformer's scale", scaled_dot_product_attention(S, H, H)[0],
          "Scaled by 1/√d_k (the transformer's scale): this exercise uses scale = 1"),
    plain("plain: 1/d instead of 1/√d", scaled_dot_product_attention(S, H, H, scale=1 / 3)[0],
          "Scaled by 1/d_k: this exercise uses scale = 1 (plain dot-product attention)"),
    plain("plain: no exp", PLAIN.raw_scores / PLAIN.raw_scores.sum(), "Normalised without exp", "weights"),
    plain("plain: axis 0", np.ones(3), "Softmax over the wrong axis", "weights"),
    plain("plain: scores as weights", PLAIN.raw_scores, "These are the scores, not the weights", "weights"),
    masked("causal: no mask", None, "Forgot the mask", causal=True),
    masked("causal: inverted", ~np.tri(4, dtype=bool), "Mask inverted", causal=True),
    masked("causal: transposed", np.tri(4, dtype=bool).T, "Mask transposed", causal=True),
    masked("padding: no mask", None, "Forgot the mask", mask=PADDING),
    masked("padding: inverted", ~PADDING, "Mask inverted", mask=PADDING),
    masked("padding: transposed", np.swapaxes(PADDING_FULL, 1, 2), "Mask transposed", mask=PADDING),
    scale("scale 1/d_k", 1 / 6, "Scaled by 1/d_k instead of 1/√d_k"),
    scale("scale √d_k", math.sqrt(6), "Multiplied by √d_k"),
    scale("scale 1/√n_k", 1 / math.sqrt(10), "Divided by √n_k"),
    scale("scale 1/√d_v", 1 / math.sqrt(5), "Divided by √d_v"),
    scale("scale 1/8", 0.125, "Used 1/8, the scale of the original Transformer"),
    scale("scale 1", 1, "Forgot to scale"),
    scale("scale 1/√d_model", 1 / math.sqrt(8), "Divided by √d_model", d_model=8),
    Case("value: known mistake", check_value, (30,), 12, "12 is not it: you counted Q Kᵀ only.", 30,
         {"mistakes": {"you counted Q Kᵀ only.": 12}}),
    Case("shape: axes swapped", check_shape, ((2, 3),), (3, 2), "Axes swapped", "(2, 3)",
         {"axes": ("n_q", "n_k")}),
]  # fmt: skip


#: n_k = d_v = 3 in exercise 3: 1/√n_k and 1/√d_v are the same scale, so both single mistakes are named
#: (question 2b has its own shapes, n_k = 10 and d_v = 5, which tell them apart).
SAME_NUMBERS = {"1/√n_k"}


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


def test_several_mistakes_giving_the_same_numbers_are_all_listed():
    Qr, Kr, Vr = RNG.normal(size=(2, 2)), RNG.normal(size=(4, 2)), RNG.normal(size=(4, 3))  # n_k = d_k² = 4
    out, _ = scaled_dot_product_attention(Qr, Kr, Vr, scale=0.5)  # 1/d_k = 1/√n_k
    fails_with(
        check_attention(out, Qr, Kr, Vr),
        "it is probably one of these",
        "(1) Scaled by 1/d_k instead of 1/√d_k",
        "(2) Divided by √n_k instead of √d_k",
    )


def test_the_other_cases_narrow_the_mistakes_down():
    """named_by_every_case: of the rows that give the failing case's answer, those that give every
    other answer too; a case the code could not answer narrows nothing, and where no row fits them
    all every row found is named."""

    @dataclass(frozen=True)
    class Doubling:
        x: float

        @property
        def right(self) -> float:
            return 2 * self.x

    table = [
        Mistake("Squared", "double it", lambda ex: ex.x**2),
        Mistake("Tripled", "double it", lambda ex: 3 * ex.x),
        Mistake("Plus two", "double it", lambda ex: ex.x + 2),
        Mistake("Not for four", "double it", lambda ex: None if ex.x == 4 else ex.x**2),
    ]
    cases = [Doubling(3.0), Doubling(4.0)]

    def names(outcomes):
        found = named_by_every_case(table, cases, outcomes, 0, lambda a, b, _: math.isclose(a, b))
        return [m.name for m in found]

    assert names([9.0, 16.0]) == ["Squared"]  # 4 squared is 16; "Not for four" needs 8 there
    assert names([9.0, 8.0]) == ["Not for four"]  # right where the mistake cannot be made
    assert names([9.0, failed("raised")]) == ["Squared", "Tripled", "Not for four"]
    assert names([9.0, 17.0]) == ["Squared", "Tripled", "Not for four"]  # none gives 17
    assert names([5.0, 6.0]) == ["Plus two"]  # 3 + 2; never a row that gives the right answer (4 + 2 = 8)


def test_the_same_advice_is_given_once():
    s, h, _ = ONE_QUERY  # n_k = d_k = d_v = 3: 1/√d_k, 1/√n_k and 1/√d_v are the same scale
    result = check_attention(scaled_dot_product_attention(s, h, h)[0], s, h, h, scale=1.0)
    assert result.message.count("this exercise uses scale = 1") == 1, result.message


def test_an_arbitrary_wrong_attention_answer_names_the_entry_not_its_value():
    wrong = STEPS.output.copy()
    wrong[0, 2] += 0.3
    result = check_attention(wrong, *BY_HAND)
    fails_with(
        result, "Not yet", "1 of 6 entries is off", "query 1, dimension 3 (numpy index [0, 2])", "too high"
    )
    assert not revealed(result.message, STEPS.output), result.message


def test_entries_are_named_from_1_with_the_numpy_index():
    wrong = PLAIN.output.copy()
    wrong[1] += 0.5
    fails_with(check_attention(wrong, *ONE_QUERY, scale=1.0), "dimension 2 (numpy index [1])")
    Qb, Kb, Vb = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 3, 5))
    out, weights = scaled_dot_product_attention(Qb, Kb, Vb)
    out[1, 2, 3] += 1.0
    fails_with(
        check_attention(out, Qb, Kb, Vb), "query 3, dimension 4 of batch entry [1] (numpy index [1, 2, 3])"
    )
    weights[1, 2] *= 0.5
    fails_with(
        check_attention(weights, Qb, Kb, Vb, what="weights"),
        "query 3 of batch entry [1] (numpy index [1, 2])",
    )


def test_weight_rows_that_do_not_sum_to_one():
    wrong = STEPS.weights.copy()
    wrong[1] *= 0.8
    fails_with(
        check_attention(wrong, *BY_HAND, what="weights"),
        "sum to 1",
        "the weights of query 2 (numpy index [1]) sum to 0.800",
    )
    wrong = PLAIN.weights.copy()
    wrong[1] += 0.5
    fails_with(check_attention(wrong, *ONE_QUERY, scale=1.0, what="weights"), "your weights sum to 1.500")


def test_rounding_too_early():
    result = check_attention(STEPS.weights.round(2) @ V, *BY_HAND)
    fails_with(result, "Very close", "rounding")
    assert not revealed(result.message, STEPS.output)


# --------------------------------------------------------------------------------------------
# check_value


def test_check_value_says_too_high_or_too_low_without_giving_the_answer_away():
    result = check_value(0.75, 0.7310585786, name="the weight")
    fails_with(result, "0.75 is too high", "Check your formula", "at least 2 decimals")
    assert not revealed(result.message, 0.7310585786)
    assert str(check_value(29, 30)) == "✘ Not yet: 29 is too low. Check your formula step by step."
    fails_with(check_value(1.2, 1.7071, decimals=1), "at least 1 decimal.")


def test_check_value_answer_rounded_to_too_few_decimals():
    fails_with(
        check_value(0.71, 0.70710678, decimals=4), "0.71 is rounded to 2 decimals", "at least 4 decimals"
    )
    fails_with(check_value(0.7, 0.70710678, decimals=4), "rounded to 1 decimal;")
    fails_with(check_value(0.707, 0.70710678, decimals=4), "rounded to 3 decimals")  # truncated
    fails_with(check_value(0.8, 0.70710678, decimals=4), "too high")


def test_check_value_known_mistake_equal_to_the_answer_is_ignored():
    passes(check_value(30, 30, mistakes={"never shown": 30}))


# --------------------------------------------------------------------------------------------
# Bad answers: a failed verdict that says what is wrong with the answer


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        (..., "No answer yet"),
        ("30", "text"),
        (True, "boolean"),
        (np.array([True]), "boolean"),
        ([1, 2], "not a single number: it holds 2 values"),
        (np.zeros((2, 2)), "holds 4 values"),
        (float("nan"), "NaN"),
        (np.array([np.nan]), "NaN"),
        (float("inf"), "infinite"),
        (10**400, "too large to be a float"),
        ([10**400], "too large"),
        (1 + 2j, "complex"),
        (object(), "not a single number"),
    ],
)
def test_check_value_bad_answers(answer, phrase):
    fails_with(check_value(answer, 30), phrase)


@pytest.mark.parametrize(
    "answer",
    [
        0.5,
        np.float32(0.5),
        np.array(0.5),
        np.array([0.5]),
        np.array([[0.5]]),
        [0.5],
        (0.5,),
        np.int64(0) + 0.5,
    ],
)
def test_check_value_accepts_anything_holding_one_real_number(answer):
    passes(check_value(answer, 0.5))


def test_importing_the_checks_imports_neither_torch_nor_pandas():
    code = (  # the kit's checks and every lesson's, but those of a lesson about PyTorch (its extra brings it)
        "import importlib, sys, attention_lessons.kit.checks\n"
        "from attention_lessons.manifest import lessons\n"
        "for lesson in lessons():\n"
        "    if (lesson.folder / 'checks.py').exists() and lesson.install_extra != 'pytorch':\n"
        "        importlib.import_module(f'attention_lessons.{lesson.folder.name}.checks')\n"
        "print(sorted({'torch', 'pandas'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_check_value_accepts_a_one_element_series_and_tensor():
    pandas = pytest.importorskip("pandas")
    passes(check_value(pandas.Series([0.5]), 0.5))
    fails_with(check_value(pandas.Series([0.5, 1.0]), 0.5), "holds 2 values")
    torch = pytest.importorskip("torch")
    passes(check_value(torch.tensor(0.5), 0.5))
    passes(check_value(torch.tensor([0.5]), 0.5))


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        (..., "No answer yet"),
        ("0.86", "text"),
        ([[1, 2], [3]], "ragged"),
        ([[True, False]], "boolean"),
        ([[1 + 2j]], "dtype"),
        ([[10**400]], "too large for a float"),
    ],
)
def test_answers_that_are_not_arrays_of_numbers(answer, phrase):
    fails_with(check_attention(answer, *BY_HAND), phrase)


def test_nan_and_infinities_in_an_attention_answer():
    wrong = STEPS.output.copy()
    wrong[1, 2] = np.nan
    fails_with(check_attention(wrong, *BY_HAND), "NaN at query 2, dimension 3 (numpy index [1, 2])")
    fails_with(check_attention(np.full(3, np.inf), *ONE_QUERY), "infinity")
    wrong = np.zeros((3, 2))
    wrong[2, 0] = np.nan
    fails_with(check_attention(wrong, *BY_HAND), "NaN at row 3, column 1 (numpy index [2, 0])")


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        ("2x3", "tuple of whole numbers"),
        ((2.0, 3.0), "tuple of whole numbers"),
        ((True, 3), "tuple of whole numbers"),
    ],
)
def test_check_shape_bad_answers(answer, phrase):
    fails_with(check_shape(answer, (2, 3)), phrase)


# --------------------------------------------------------------------------------------------
# Bad exercise inputs: an error naming the argument


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: check_attention(Q, Q, K, V, what="context"), ValueError, "what must be one of"),
        (lambda: check_attention(Q, Q, K[:, :1], V), ValueError, "d_k"),
        (lambda: check_attention(Q, Q, K, V[:2]), ValueError, "n_k"),
        (lambda: check_attention(Q, Q, K, V, decimals=1.5), TypeError, "decimals"),
        (lambda: check_attention(Q, Q, K, V, decimals=-1), ValueError, "decimals"),
        (lambda: check_attention(Q, Q, K, V, decimals=10**9), ValueError, "decimals must be at most 15"),
        (lambda: check_attention(Q, Q, K, V, scale="1/sqrt(2)"), TypeError, "scale"),
        (lambda: check_attention(Q, Q, K, V, d_model=0), ValueError, "d_model"),
        (lambda: check_value(1, "1"), TypeError, "expected"),
        (lambda: check_value(1, float("inf")), ValueError, "expected"),
        (lambda: check_value(1, 10**400), ValueError, "expected is too large"),
        (lambda: check_value(1, 2, mistakes={"why": "1"}), TypeError, "mistakes"),
        (lambda: check_value(1, 2, mistakes=[("a", 0.4)]), TypeError, "mistakes must be a dict"),
        (lambda: check_value(1, 2, mistakes={"two\nlines": 0.4}), ValueError, "single line"),
        (lambda: check_value(1, 2, mistakes={"why": 10**400}), ValueError, "too large"),
        (lambda: check_value(1, 2, decimals=-2), ValueError, "decimals"),
        (lambda: check_value(1, 2, decimals=True), TypeError, "decimals"),
        (lambda: check_scale(0.7, d_k=0), ValueError, "d_k"),
        (lambda: check_scale(0.7, d_k=2, n_k=2.5), TypeError, "n_k"),
        (lambda: check_shape((2, 3), "2, 3"), TypeError, "expected_shape"),
        (lambda: check_shape((2, 3), (2, -3)), ValueError, "expected_shape"),
        (lambda: check_shape((2, 3), (2, 3), axes=("n_q",)), ValueError, "one name per axis"),
    ],
)
def test_bad_exercise_inputs_raise_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
