"""attention_lessons.l12_attention_at_scale.checks (lesson 12): right answers pass, each mistake of the tables
is named, and no message gives the right answer away."""

from __future__ import annotations

import math

import pytest

from attention_lessons.kit.checks import CheckResult
from attention_lessons.l12_attention_at_scale.checks import (
    MEMORY_MISTAKES,
    RESCALE_MISTAKES,
    SKIP_MISTAKES,
    WeightsMemory,
    check_rescale_factor,
    check_skipped_blocks,
    check_weights_memory,
)
from attnlib.counting import tile_counts, weights_bytes
from attnlib.efficient import online_softmax


def verdict(result: CheckResult, passed: bool, *phrases: str) -> None:
    assert isinstance(result, CheckResult)
    assert result.passed is passed, str(result)
    for phrase in phrases:
        assert phrase in result.message, result.message


def test_weights_memory_right_answers_pass():
    verdict(check_weights_memory(4.0, 32_768), True)  # 32,768² float32 numbers = 4 GiB
    verdict(
        check_weights_memory(
            weights_bytes(8192, 8192, batch_heads=12, itemsize=8) / 2**30, 8192, batch_heads=12, itemsize=8
        ),
        True,
    )


@pytest.mark.parametrize(
    ("answer", "kwargs", "named"),
    [
        (32_768 * 4 / 2**30, {}, "n numbers, not n × n"),
        (8.0, {}, "8 bytes per number"),
        (4.0, {"itemsize": 8}, "4 bytes per number"),
        (1.0, {}, "number of entries"),
        (32_768**2 * 4 / 1e9, {}, "10⁹"),
        (32.0, {}, "bits"),
        (4.0, {"batch_heads": 8}, "batch and the heads"),
    ],
)
def test_weights_memory_names_the_mistake(answer, kwargs, named):
    result = check_weights_memory(answer, 32_768, **kwargs)
    verdict(result, False, named)
    right = weights_bytes(32_768, 32_768, **kwargs) / 2**30
    assert f"{right:g} GiB" not in result.message


@pytest.mark.parametrize("mistake", MEMORY_MISTAKES, ids=lambda m: m.name)
def test_weights_memory_the_lessons_exercise_names_each_mistake(mistake):
    """Lesson 12's self-check 1 (n = 24,576, between two rows of its table): each mistake is told apart."""
    ex = WeightsMemory(24_576, 1, 4)
    wrong = mistake.wrong(ex)
    if wrong is None:
        return  # a mistake this exercise cannot make (the heads: there is one)
    right = weights_bytes(24_576, 24_576) / 2**30
    verdict(check_weights_memory(right, 24_576), True)
    result = check_weights_memory(round(float(wrong), 2), 24_576)
    verdict(result, False, mistake.name)
    assert f"{right:g}" not in result.message


def test_rescale_factor_is_what_the_online_softmax_applies():
    state = list(online_softmax([1.0, 0.5, 3.0, 2.0], 2))[1]  # the maximum grows from 1 to 3
    verdict(check_rescale_factor(state.rescale, 1.0, 3.0), True)
    verdict(check_rescale_factor(1.0, 2.0, 2.0), True)  # the maximum did not grow: nothing changes


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        (math.exp(2.0), "Sign swapped"),
        (-2.0, "forgot the exponential"),
        (2.0, "swapped the sign"),
        (1 / 3, "divided the maxima"),
        (math.exp(-3.0), "only the new maximum"),
        (1.0, "No rescaling"),
    ],
)
def test_rescale_factor_names_the_mistake(answer, named):
    result = check_rescale_factor(answer, 1.0, 3.0)
    verdict(result, False, named)
    assert "0.1353" not in result.message  # exp(1 − 3)


def test_skipped_blocks():
    # n = 1024 in blocks of 128: 8 × 8 = 64 blocks, 36 computed, 28 skipped
    assert tile_counts(1024, 1024, block_q=128, block_k=128, causal=True).skipped == 28
    verdict(check_skipped_blocks(28, 1024, 128), True)
    for answer, named in [
        (36, "computed, not skipped"),
        (32, "exactly half"),
        (1024 * 1023 / 2, "masked scores, not blocks"),
        (56, "both sides"),
        (64, "all the blocks"),
    ]:
        result = check_skipped_blocks(answer, 1024, 128)
        verdict(result, False, named)
        assert "28" not in result.message
    verdict(check_skipped_blocks(27, 1024, 128), False, "too low")


def test_tables_have_one_line_messages_and_bad_exercises_raise():
    for table in (MEMORY_MISTAKES, RESCALE_MISTAKES, SKIP_MISTAKES):
        assert len({m.name for m in table}) == len(table)
    verdict(check_weights_memory(None, 1024), False, "No answer yet")
    verdict(check_rescale_factor("0.5", 1.0, 2.0), False, "text")
    with pytest.raises(ValueError, match="never shrinks"):
        check_rescale_factor(0.5, 3.0, 1.0)
    with pytest.raises(ValueError, match="itemsize"):
        check_weights_memory(1.0, 1024, itemsize=2)
    with pytest.raises(ValueError, match=r"n and batch_heads are too large.*401-digit"):
        check_weights_memory(1, 10**200)
    verdict(check_weights_memory(2.0**402, 2**215), True)  # 2⁴³⁰ · 4 bytes = 2⁴⁰² GiB: still a float
    with pytest.raises(TypeError, match="block"):
        check_skipped_blocks(3, 1024, 12.5)
    with pytest.raises(ValueError, match="n"):
        check_skipped_blocks(3, 0, 4)


def test_skipped_blocks_of_huge_sizes_return_at_once():
    # the count has a closed form: no loop over 10**100 blocks, and mistakes beyond a float drop out
    verdict(check_skipped_blocks(1, 10**100, 1), False)
    with pytest.raises(ValueError, match="n = 1000"):
        check_skipped_blocks(1, 10**200, 1)
