"""attnlib's sampling filters against transformers' logits processors: temperature, then top-k,
then top-p, applied in turn as `generate` applies them (and as llama.cpp's sampler chain does)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.model import llama

pytestmark = pytest.mark.reference

torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
transformers = pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")

SETTINGS = [
    dict(temperature=1.7, top_k=10, top_p=0.5),
    dict(temperature=1.0, top_k=40, top_p=0.9),
    dict(temperature=0.7, top_k=5, top_p=0.95),
    dict(temperature=1.0, top_k=3),
    dict(temperature=1.3, top_p=0.8),
]


def transformers_probabilities(z: np.ndarray, temperature, top_k=None, top_p=None) -> np.ndarray:
    processors = transformers.LogitsProcessorList([transformers.TemperatureLogitsWarper(temperature)])
    if top_k is not None:
        processors.append(transformers.TopKLogitsWarper(top_k))
    if top_p is not None:
        processors.append(transformers.TopPLogitsWarper(top_p))
    scores = processors(torch.zeros((1, 1), dtype=torch.long), torch.from_numpy(z[None]))
    return torch.softmax(scores, dim=-1)[0].numpy()


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("seed", range(5))
def test_the_filters_are_transformers(setting, seed):
    z = np.random.default_rng(seed).normal(scale=2.0, size=500)  # float64 on both sides
    ours = llama.next_token_probabilities(z, **setting)
    theirs = transformers_probabilities(z, **setting)
    np.testing.assert_array_equal(ours > 0, theirs > 0)  # the same tokens kept
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
