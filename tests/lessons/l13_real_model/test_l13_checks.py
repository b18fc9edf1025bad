"""The self-checks of lesson 13 (attention_lessons.l13_real_model.checks): every mistake of each table is
recognised, right answers pass, and no failing message gives the right answer away."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attention_lessons.l13_real_model.checks import (
    D_K_MISTAKES,
    MOST_ATTENDED_MISTAKES,
    PARAMETER_MISTAKES,
    AttentionLayer,
    HeadExercise,
    check_attention_parameters,
    check_d_k,
    check_most_attended,
)

#: The sizes of all-MiniLM-L6-v2's config.json (test_model.py checks the real file has them).
CONFIG = {"hidden_size": 384, "num_attention_heads": 12, "intermediate_size": 1536, "vocab_size": 30522}
LAYER = AttentionLayer(384, 12, 1536)


def test_the_right_counts_pass():
    assert check_attention_parameters(4 * 384 * 384 + 4 * 384, CONFIG)
    assert check_attention_parameters(np.int64(591360), CONFIG)
    assert check_d_k(32, CONFIG)
    assert check_d_k(32.0, CONFIG)


def test_the_count_is_the_size_of_the_real_arrays():
    pytest.importorskip("safetensors", reason="pip install -r requirements.txt")
    from attnlib.model import ModelNotFoundError, load_model

    try:
        model = load_model(download=False)
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    config = json.loads(Path(model.directory, "config.json").read_text(encoding="utf-8"))
    layer = model.weights.layers[0]
    arrays = (layer.W_q, layer.b_q, layer.W_k, layer.b_k, layer.W_v, layer.b_v, layer.W_o, layer.b_o)
    assert check_attention_parameters(sum(a.size for a in arrays), config)
    assert check_d_k(model.config.d_k, config)


@pytest.mark.parametrize("mistake", PARAMETER_MISTAKES, ids=lambda m: m.name)
def test_every_parameter_mistake_is_named_without_the_answer(mistake):
    wrong = mistake.wrong(LAYER)
    result = check_attention_parameters(wrong, CONFIG)
    assert not result and mistake.name in result.message
    assert "591360" not in result.message and "591,360" not in result.message


@pytest.mark.parametrize("mistake", D_K_MISTAKES, ids=lambda m: m.name)
def test_every_d_k_mistake_is_named_without_the_answer(mistake):
    result = check_d_k(round(float(mistake.wrong(LAYER)), 3), CONFIG)
    assert not result and mistake.name in result.message
    assert "32" not in result.message.replace(f"{LAYER.d_ff}", "")


#: The sizes lesson 13's question gives from bert-base-uncased's config.json.
BERT_BASE_CONFIG = {
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "hidden_size": 768,
    "intermediate_size": 3072,
}


@pytest.mark.parametrize("mistake", D_K_MISTAKES, ids=lambda m: m.name)
def test_the_lessons_bert_base_question_names_every_mistake(mistake):
    layer = AttentionLayer(768, 12, 3072)
    assert check_d_k(layer.d_k, BERT_BASE_CONFIG)
    result = check_d_k(round(float(mistake.wrong(layer)), 3), BERT_BASE_CONFIG)
    assert not result and mistake.name in result.message
    assert str(layer.d_k) not in result.message


@pytest.mark.parametrize("answer", [None, ..., "32", True, float("nan"), [32, 32]])
def test_answers_that_are_not_numbers_fail_with_a_reason(answer):
    result = check_d_k(answer, CONFIG)
    assert not result and "32" not in result.message.replace("'32'", "")


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ([384, 12], TypeError),
        ({"hidden_size": 384}, ValueError),
        ({"hidden_size": 384, "num_attention_heads": 5, "intermediate_size": 1536}, ValueError),
        ({"hidden_size": 384.0, "num_attention_heads": 12, "intermediate_size": 1536}, TypeError),
    ],
)
def test_a_config_that_is_not_one_is_refused(config, error):
    with pytest.raises(error, match="config"):
        check_d_k(32, config)


TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]
WEIGHTS = np.array(
    [
        [0.60, 0.10, 0.10, 0.10, 0.10],
        [0.10, 0.20, 0.30, 0.35, 0.05],
        [0.05, 0.55, 0.10, 0.10, 0.20],  # from "cat": most to "the" (1), least to [CLS] (0)
        [0.10, 0.10, 0.60, 0.10, 0.10],  # column 2's largest: 'sat' attends most to 'cat'
        [0.20, 0.20, 0.20, 0.20, 0.20],
    ]
)


def test_the_most_attended_token_passes_as_text_or_position():
    assert check_most_attended("the", WEIGHTS, TOKENS, 2)
    assert check_most_attended(1, WEIGHTS, TOKENS, 2)
    assert check_most_attended(np.int64(1), WEIGHTS, TOKENS, 2)


@pytest.mark.parametrize("mistake", MOST_ATTENDED_MISTAKES, ids=lambda m: m.name)
def test_every_reading_mistake_is_named(mistake):
    exercise = HeadExercise(WEIGHTS, tuple(TOKENS), 2)
    position = mistake.wrong(exercise)
    assert position != 1
    result = check_most_attended(position, WEIGHTS, TOKENS, 2)
    assert not result and mistake.name in result.message
    assert "'the' (position 1)" not in result.message


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("dog", "not a token of this sentence"),
        (7, "outside the sentence"),
        (True, "boolean"),
        (None, "No answer yet"),
        (1.0, "Give a token"),
        ("[SEP]", "not the largest of row 2"),
    ],
)
def test_wrong_or_malformed_token_answers_say_why(answer, says):
    result = check_most_attended(answer, WEIGHTS, TOKENS, 2)
    assert not result and says in result.message


@pytest.mark.parametrize(
    ("weights", "tokens", "query", "error"),
    [
        (WEIGHTS[:3], TOKENS, 2, ValueError),
        (WEIGHTS * 2, TOKENS, 2, ValueError),
        (WEIGHTS, TOKENS[:4], 2, ValueError),
        (WEIGHTS, "the cat", 2, TypeError),
        (WEIGHTS, TOKENS, 5, ValueError),
        (WEIGHTS, TOKENS, 1.5, TypeError),
    ],
)
def test_a_malformed_exercise_is_refused(weights, tokens, query, error):
    with pytest.raises(error):
        check_most_attended(1, weights, tokens, query)
