"""Lesson 15's table of published decoders (``attention_lessons.kit.examples.published_decoders``):
each model's shape gives its published parameter count by attnlib's formula, and each number names
its sources (the model's config.json on the Hugging Face hub, and the paper)."""

from __future__ import annotations

import pytest

from attention_lessons.kit import examples
from attnlib.counting import DecoderShape, llama_parameter_counts

#: The totals the models' cards publish (the sum of ``p.numel()`` of the transformers model).
PUBLISHED_TOTALS = {
    "meta-llama/Llama-2-7b-hf": 6_738_415_616,
    "meta-llama/Llama-2-70b-hf": 68_976_648_192,
    "mistralai/Mistral-7B-v0.1": 7_241_732_096,
    "meta-llama/Meta-Llama-3-8B": 8_030_261_248,
}


def test_the_lessons_models_are_the_published_ones() -> None:
    models = examples.published_decoders()
    assert list(models) == ["Llama 2 7B", "Llama 2 70B", "Mistral 7B", "Llama 3 8B"]
    assert {m.name: m.parameters for m in models.values()} == PUBLISHED_TOTALS
    assert [m.window for m in models.values()] == [None, None, 4096, None]


@pytest.mark.parametrize("key", ["Llama 2 7B", "Llama 2 70B", "Mistral 7B", "Llama 3 8B"])
def test_each_shape_gives_the_published_total_and_names_its_sources(key: str) -> None:
    model = examples.published_decoders()[key]
    assert isinstance(model.shape, DecoderShape)
    assert llama_parameter_counts(model.shape)["total"] == model.parameters
    assert any("huggingface.co/" + model.name in source for source in model.sources)
    assert any("arXiv:" in source for source in model.sources)
