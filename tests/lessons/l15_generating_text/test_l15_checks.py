"""attention_lessons.l15_generating_text.checks (lesson 15): right answers pass, each mistake of the tables is
named, bad answers get a message saying what is wrong, and no message gives the right answer away."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention_lessons.kit import examples
from attention_lessons.kit.checks import CheckResult
from attention_lessons.l15_generating_text.checks import (
    CACHE_MISTAKES,
    CACHED_SCORES_MISTAKES,
    GROUP_MISTAKES,
    KV_HEAD_MISTAKES,
    CachedScores,
    CacheExercise,
    Grouping,
    check_cached_scores,
    check_kv_cache_bytes,
    check_kv_head_of_query_heads,
    check_query_heads_of_kv_head,
)
from attnlib.core import causal_mask
from attnlib.counting import DecoderShape, kv_cache_bytes

MISTRAL = examples.published_decoders()["Mistral 7B"].shape  # 32 layers, 32 heads, 8 kv heads of 128
SMALL = DecoderShape(n_layers=3, d_model=48, n_heads=6, n_kv_heads=2, d_head=4, d_mlp=0, vocab=10)


def shows(number: str, message: str) -> bool:
    """Whether ``message`` holds ``number`` as a number of its own (not a part of a longer one)."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", message) is not None


def verdict(result: CheckResult, passed: bool, *phrases: str) -> None:
    assert isinstance(result, CheckResult)
    assert result.passed is passed, str(result)
    for phrase in phrases:
        assert phrase in result.message, result.message


# --- the KV cache's size ---------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["bytes", "KiB", "MiB", "GiB"])
def test_cache_right_answers_pass(unit):
    right = kv_cache_bytes(MISTRAL, 4096, bytes_per_number=2) / 1024 ** ["bytes", "KiB", "MiB", "GiB"].index(
        unit
    )
    verdict(check_kv_cache_bytes(right, MISTRAL, 4096, bytes_per_number=2, unit=unit), True)
    verdict(check_kv_cache_bytes(np.float32(right), MISTRAL, 4096, bytes_per_number=2, unit=unit), True)


# The exercises the mistakes are tried on: Mistral at 4,096 tokens in GiB (the lesson's kind of
# question), and a small decoder whose d_model is not n_heads · d_head, batched, in float64 bytes.
CACHE_EXERCISES = [
    CacheExercise(MISTRAL, 4096, 2, 1, "GiB"),
    CacheExercise(SMALL, 10, 8, 3, "bytes"),
    CacheExercise(SMALL, 7, 4, 2, "KiB"),
]


@pytest.mark.parametrize("ex", CACHE_EXERCISES, ids=["mistral-GiB", "small-bytes", "small-KiB"])
@pytest.mark.parametrize("mistake", CACHE_MISTAKES, ids=lambda m: m.name)
def test_cache_names_each_mistake(ex, mistake):
    wrong = mistake.wrong(ex)
    if wrong is None:
        return  # a mistake this exercise cannot make (no batch, one head, ...)
    right = kv_cache_bytes(ex.shape, ex.n_tokens, bytes_per_number=ex.bytes_per_number, batch=ex.batch)
    right /= 1024 ** ["bytes", "KiB", "MiB", "GiB"].index(ex.unit)
    args = (ex.shape, ex.n_tokens)
    kwargs = {"bytes_per_number": ex.bytes_per_number, "batch": ex.batch, "unit": ex.unit, "decimals": 4}
    if abs(wrong - right) <= 1e-4:
        return  # this mistake changes nothing here (4 bytes per number where they are 4)
    result = check_kv_cache_bytes(wrong, *args, **kwargs)
    verdict(result, False, mistake.name.format(ex=ex))
    assert not shows(f"{right:g}", result.message) and not shows(f"{right:.4f}", result.message)


def test_cache_the_named_mistakes_of_lesson_15s_question():
    kwargs = {"bytes_per_number": 2, "unit": "GiB"}
    verdict(check_kv_cache_bytes(0.25, MISTRAL, 4096, **kwargs), False, "factor 2")
    verdict(check_kv_cache_bytes(2.0, MISTRAL, 4096, **kwargs), False, "n_heads instead of n_kv_heads")
    verdict(check_kv_cache_bytes(0.5 / 32, MISTRAL, 4096, **kwargs), False, "forgot the layers")
    verdict(check_kv_cache_bytes(4.0, MISTRAL, 4096, **kwargs), False, "bits, not bytes")
    verdict(check_kv_cache_bytes(0.5 / 4096, MISTRAL, 4096, **kwargs), False, "one token")
    verdict(check_kv_cache_bytes(2**29, MISTRAL, 4096, **kwargs), False, "bytes, not GiB")
    verdict(check_kv_cache_bytes(2**29 / 1e9, MISTRAL, 4096, **kwargs), False, "powers of 1000 (GB)")
    verdict(check_kv_cache_bytes(0.3, MISTRAL, 4096, **kwargs), False, "too low")


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        (..., "No answer yet"),
        ("0.5", "is text"),
        (True, "a boolean"),
        (float("nan"), "is NaN"),
        (float("inf"), "infinite"),
        ([0.5, 0.5], "not a single number"),
    ],
)
def test_cache_bad_answers(answer, phrase):
    verdict(check_kv_cache_bytes(answer, MISTRAL, 4096, bytes_per_number=2, unit="GiB"), False, phrase)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: check_kv_cache_bytes(1, {"n_layers": 2}, 4, bytes_per_number=2),
            TypeError,
            "shape must be a DecoderShape",
        ),
        (
            lambda: check_kv_cache_bytes(1, SMALL, 0, bytes_per_number=2),
            ValueError,
            "n_tokens must be at least 1",
        ),
        (
            lambda: check_kv_cache_bytes(1, SMALL, 4, bytes_per_number=0),
            ValueError,
            "bytes_per_number must be at",
        ),
        (
            lambda: check_kv_cache_bytes(1, SMALL, 4, bytes_per_number=2, unit="GB"),
            ValueError,
            "unit must be one of",
        ),
        (
            lambda: check_kv_cache_bytes(1, SMALL, 4, bytes_per_number=2, batch=0),
            ValueError,
            "batch must be at least",
        ),
        (
            lambda: check_kv_cache_bytes(1, SMALL, 4, bytes_per_number=2, decimals=99),
            ValueError,
            "decimals must be",
        ),
        (
            lambda: check_kv_cache_bytes(1, SMALL, 10**400, bytes_per_number=2),
            ValueError,
            "more than a float can hold",
        ),
    ],
)
def test_cache_bad_exercises_raise(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- the scores a new token computes with a cache ----------------------------------------------------


def last_row(t, window=None, sinks=0):
    grid = np.zeros((t, t), dtype=bool)
    grid[-1] = causal_mask(t, window=window, sinks=sinks)[-1]
    return grid


@pytest.mark.parametrize(
    ("t", "window", "sinks"), [(1, None, 0), (5, None, 0), (8, 3, 0), (8, 3, 2), (4, 9, 1)]
)
def test_cached_scores_right_answers_pass(t, window, sinks):
    right = last_row(t, window, sinks)
    verdict(check_cached_scores(right, t, window=window, sinks=sinks), True, "one row")
    verdict(check_cached_scores(right.astype(int), t, window=window, sinks=sinks), True)  # 0/1
    verdict(check_cached_scores(right.astype(float).tolist(), t, window=window, sinks=sinks), True)


CACHED_EXERCISES = [CachedScores(6, None, 0), CachedScores(9, 3, 0), CachedScores(10, 4, 2)]


@pytest.mark.parametrize("ex", CACHED_EXERCISES, ids=["plain", "window", "window-sinks"])
@pytest.mark.parametrize("mistake", CACHED_SCORES_MISTAKES, ids=lambda m: m.name)
def test_cached_scores_names_each_mistake(ex, mistake):
    wrong = mistake.wrong(ex)
    if wrong is None or np.array_equal(wrong, ex.right):
        return  # a mistake this exercise cannot make (no window, no sinks)
    result = check_cached_scores(wrong, ex.t, window=ex.window, sinks=ex.sinks)
    verdict(result, False, mistake.name)


def test_cached_scores_the_mistakes_written_out():
    verdict(check_cached_scores(np.ones((4, 4), dtype=bool), 4), False, "whole t × t matrix")
    verdict(check_cached_scores(np.tri(4, dtype=bool), 4), False, "whole causal pass")
    column = np.zeros((4, 4), dtype=bool)
    column[:, -1] = True
    verdict(check_cached_scores(column, 4), False, "a column")
    own = np.zeros((4, 4), dtype=bool)
    own[-1, -1] = True
    verdict(check_cached_scores(own, 4), False, "Only the new token's own score")
    verdict(check_cached_scores(last_row(4) & ~own, 4), False, "own score is missing")
    verdict(check_cached_scores(last_row(9), 9, window=3), False, "window is ignored")
    verdict(check_cached_scores(last_row(9, 3), 9, window=3, sinks=1), False, "sinks are missing")


def test_cached_scores_other_wrong_answers():
    verdict(check_cached_scores(last_row(4)[:3, :3], 4), False, "Wrong shape", "yours is (3, 3)")
    wrong = last_row(6, 2)
    wrong[-1, 0] = True  # a sink that is not there, and nothing else wrong
    verdict(check_cached_scores(wrong, 6, window=2), False, "query 6, key 1 (numpy index [5, 0])")


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        ("last row", "is text"),
        ([[1, 0], [1]], "ragged"),
        (np.ones(4, dtype=bool), "has 1 axis"),
        (np.ones((2, 4, 4), dtype=bool), "has 3 axes"),
        (np.full((4, 4), np.nan), "NaN"),
        (np.full((4, 4), 2.0), "Entry [0, 0] of the answer is 2"),
        (np.array([["a"] * 4] * 4), "dtype <U1"),
    ],
)
def test_cached_scores_bad_answers(answer, phrase):
    verdict(check_cached_scores(answer, 4), False, phrase)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_tokens": 0}, ValueError, "n_tokens must be at least 1"),
        ({"n_tokens": 4, "window": 0}, ValueError, "window must be at least 1"),
        ({"n_tokens": 4, "sinks": -1}, ValueError, "sinks must be at least 0"),
        ({"n_tokens": 2.0}, TypeError, "n_tokens must be a whole number"),
    ],
)
def test_cached_scores_bad_exercises_raise(kwargs, error, message):
    with pytest.raises(error, match=message):
        check_cached_scores(np.ones((4, 4), dtype=bool), **kwargs)


# --- which key/value head each query head reads ---------------------------------------------------


@pytest.mark.parametrize(("n_heads", "n_kv_heads"), [(8, 2), (32, 8), (6, 3), (4, 1), (4, 4)])
def test_kv_head_right_answers_pass(n_heads, n_kv_heads):
    right = [h // (n_heads // n_kv_heads) for h in range(n_heads)]
    verdict(check_kv_head_of_query_heads(right, n_heads, n_kv_heads), True, "Correct")
    verdict(check_kv_head_of_query_heads(np.array(right), n_heads, n_kv_heads), True)
    verdict(check_kv_head_of_query_heads(tuple(float(g) for g in right), n_heads, n_kv_heads), True)


@pytest.mark.parametrize(
    "ex", [Grouping(8, 2), Grouping(32, 8), Grouping(12, 3)], ids=["8-2", "32-8", "12-3"]
)
@pytest.mark.parametrize("mistake", KV_HEAD_MISTAKES, ids=lambda m: m.name)
def test_kv_head_names_each_mistake(ex, mistake):
    wrong = mistake.wrong(ex)
    if wrong == ex.right:
        return
    result = check_kv_head_of_query_heads(list(wrong), ex.n_heads, ex.n_kv_heads)
    verdict(result, False, mistake.name)
    assert str(list(ex.right)) not in result.message


def test_kv_head_the_interleaved_mistake_is_told_apart_from_the_grouped_answer():
    # 8 query heads, 2 kv heads: grouped 0 0 0 0 1 1 1 1 (PyTorch's enable_gqa), interleaved 0 1 0 1 …
    verdict(check_kv_head_of_query_heads([0, 1] * 4, 8, 2), False, "Interleaved: that is h % n_kv_heads")
    verdict(check_kv_head_of_query_heads([0, 0, 1, 1, 2, 2, 3, 3], 8, 2), False, "h // n_kv_heads")
    verdict(check_kv_head_of_query_heads([1] * 4 + [2] * 4, 8, 2), False, "from 1")


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        ("0 0 1 1", "as a list of whole numbers"),
        (3, "as a list of whole numbers"),
        ([0, 0, 1], "you gave 3"),
        ([0, 0, 1, 1.5], "must be whole numbers"),
        ([0, 0, 1, float("nan")], "holds NaN"),
        ([True, True, False, False], "not booleans"),
        ([[0, 0], [1, 1]], "flat list"),
        ([[0, 0], [1]], "ragged"),
        ([0, 0, 5, 5], "Key/value head 5 does not exist"),
        ([0, 1, 1, 1], "look again at query head 1"),
    ],
)
def test_kv_head_bad_or_other_answers(answer, phrase):
    verdict(check_kv_head_of_query_heads(answer, 4, 2), False, phrase)


# --- which query heads read key/value head g ----------------------------------------------------------


@pytest.mark.parametrize(
    ("n_heads", "n_kv_heads", "g"), [(8, 2, 1), (32, 8, 3), (6, 3, 0), (4, 4, 2), (4, 1, 0)]
)
def test_group_right_answers_pass(n_heads, n_kv_heads, g):
    group = n_heads // n_kv_heads
    right = range(g * group, (g + 1) * group)
    for answer in (list(right), set(right), right, np.array(list(right))[::-1]):
        verdict(check_query_heads_of_kv_head(answer, n_heads, n_kv_heads, g), True, "Correct")


@pytest.mark.parametrize(
    "ex", [Grouping(8, 2, 1), Grouping(32, 8, 3), Grouping(12, 3, 0), Grouping(12, 3, 2)], ids=str
)
@pytest.mark.parametrize("mistake", GROUP_MISTAKES, ids=lambda m: m.name)
def test_group_names_each_mistake(ex, mistake):
    wrong = mistake.wrong(ex)
    right = ex.heads_of(ex.right)
    if wrong == right:
        return
    result = check_query_heads_of_kv_head(sorted(wrong), ex.n_heads, ex.n_kv_heads, ex.kv_head)
    verdict(result, False, mistake.name)
    assert str(sorted(right)) not in result.message


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (None, "No answer yet"),
        ({"a", "b"}, "whole numbers"),
        ([2, 2], "more than once"),
        ([8, 9], "Query head 8 does not exist"),
        ([2], "1 query head missing and 0 too many"),
        ([], "2 query heads missing"),
    ],
)
def test_group_bad_or_other_answers(answer, phrase):
    verdict(check_query_heads_of_kv_head(answer, 8, 4, 1), False, phrase)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: check_kv_head_of_query_heads([0], 8, 3),
            ValueError,
            "n_kv_heads=3 does not divide n_heads=8",
        ),
        (lambda: check_kv_head_of_query_heads([0], 0, 1), ValueError, "n_heads must be at least 1"),
        (
            lambda: check_query_heads_of_kv_head([0], 8, 2, 2),
            ValueError,
            "kv_head must be a key/value head from 0 to 1",
        ),
        (lambda: check_query_heads_of_kv_head([0], 8, 2, -1), ValueError, "kv_head must be at least 0"),
        (
            lambda: check_query_heads_of_kv_head([0], 8, 2.0, 0),
            TypeError,
            "n_kv_heads must be a whole number",
        ),
    ],
)
def test_grouping_bad_exercises_raise(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_grouping_is_the_one_multi_head_attention_uses():
    """What the checks call right is what attnlib computes: query head h reads kv head h // group."""
    from attnlib.multihead import multi_head_attention

    rng = np.random.default_rng(0)
    n_heads, n_kv_heads, d = 6, 3, 2
    X = rng.normal(size=(4, 6))
    W = {"W_q": np.zeros((6, n_heads * d)), "W_k": rng.normal(size=(6, n_kv_heads * d))}
    W |= {"W_v": rng.normal(size=(6, n_kv_heads * d)), "W_o": np.eye(n_heads * d)}
    out, _ = multi_head_attention(X, X, **W, n_heads=n_heads, n_kv_heads=n_kv_heads)
    # zero queries: every head averages the values of its kv head uniformly, so head h's output
    # is the mean of kv head g's values exactly when g is the head it reads
    values = X @ W["W_v"]
    reads = []
    for h in range(n_heads):
        head_out = out[0, h * d : (h + 1) * d]
        reads.append(
            next(
                g for g in range(n_kv_heads) if np.allclose(head_out, values[:, g * d : (g + 1) * d].mean(0))
            )
        )
    verdict(check_kv_head_of_query_heads(reads, n_heads, n_kv_heads), True)
    for g in range(n_kv_heads):
        verdict(
            check_query_heads_of_kv_head(
                [h for h in range(n_heads) if reads[h] == g], n_heads, n_kv_heads, g
            ),
            True,
        )


def test_the_rule_at_a_small_cache():
    """The case of issue 30: a cache small in the unit asked for, where 0 and the missing factor 2 passed."""
    shape = DecoderShape(n_layers=2, d_model=64, n_heads=8, d_mlp=0, vocab=16, n_kv_heads=2, d_head=8)
    args, kwargs = (shape, 12), {"bytes_per_number": 4, "batch": 1, "unit": "MiB"}  # 3072 bytes
    for right in (0.0029, 0.00293, 0.0029296875):
        assert check_kv_cache_bytes(right, *args, **kwargs, decimals=2).passed
    for wrong in (0, 0.00146, 0.0015, 0.0059, 0.01, 0.0028):
        verdict = check_kv_cache_bytes(wrong, *args, **kwargs, decimals=2)
        assert not verdict.passed, (wrong, verdict)
    assert "factor 2" in check_kv_cache_bytes(0.0015, *args, **kwargs, decimals=2).message
    assert str(check_kv_cache_bytes(0, *args, **kwargs, decimals=2)) == (
        "✘ Rounded away: 0 is the answer rounded to 0 decimals, which keeps fewer than 2 of its significant "
        "digits; give at least 4 decimals (the check accepts a difference of 0.0001)."
    )
