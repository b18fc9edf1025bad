"""The numbers lesson 19's text quotes are the ones its files and models give.

The lesson prints its measured numbers from attnlib and the committed files; where its prose or a
question's answer quotes one in words ("about two thirds", "the first 40 steps", "7.4 MB"), this
test computes it again.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attention_lessons.kit import committed
from attention_lessons.l18_training_gpt import runs
from attention_lessons.l19_pytorch import lora, modules
from attention_lessons.l19_pytorch.plots import step_times
from attnlib.decoder import forward

NOTEBOOK = "notebooks/19_pytorch.ipynb"


def _text() -> str:
    with open(NOTEBOOK, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def test_the_time_per_step_is_as_the_text_says() -> None:
    times = step_times(committed.read_json("attention_lessons.l19_pytorch", "gpt_training.json"))
    text = _text()
    assert "about two thirds of attnlib's time" in text and "about two thirds of numpy's time" in text
    assert 0.6 < times["PyTorch float32"] / times["attnlib float32"] < 0.72
    assert "In float64 the two are close" in text
    assert times["attnlib float64"] / times["PyTorch float64"] < 1.1


def test_the_lora_run_is_as_the_text_says() -> None:
    run = lora.load_run()
    text = _text()
    assert "134.5 million" in text and round(lora.N_PARAMETERS / 1e6, 1) == 134.5
    layers = {name.split(".")[1] for name in run.arrays if name.startswith("lora.")}
    assert "all 30 layers" in text and len(layers) == 30
    assert run.settings.targets == ("q", "v") and "query and value projections" in text
    assert "first 40 steps" in text and int(run.eval_steps[1]) == 40
    first, later = run.val_losses[0] - run.val_losses[1], run.val_losses[1] - run.val_losses[-1]
    assert first > 2 * later  # "most of the gain"


def test_the_answers_arithmetic() -> None:
    run, text = lora.load_run(), _text()
    n = lora.N_PARAMETERS
    assert "134,515,008" in text and f"{run.trainable:,}" == "460,800" and "460,800" in text
    assert round(12 * n / 1e9, 2) == 1.61 and round(4 * n / 1e9, 2) == 0.54  # "1.61 GB", "0.54 GB"
    assert round(16 * run.trainable / 1e6, 1) == 7.4  # "7.4 MB"
    assert 150 < 12 * n / (16 * run.trainable) < 250  # "about two hundred times less"
    assert round(4 * run.trainable / 1e6, 1) == 1.8 and round(4 * n / 1e6, -1) == 540  # "1.8 MB", "540 MB"


def test_the_model_is_small_as_the_text_says() -> None:
    run = runs.load_run()
    assert "under a million parameters" in _text()
    assert sum(p.size for p in run.params.values()) < 1_000_000


def test_the_two_programs_differ_as_the_text_says() -> None:
    """'differ here by about 1e-14 in float64 and 1e-5 in float32', on the lesson's windows of Hamlet
    (here windows of the model's own committed parameters' random ids, the same sizes)."""
    run = runs.load_run()
    c = run.config
    ids = np.random.default_rng(0).integers(0, c.vocab_size, (4, c.n_ctx))
    differences = {}
    for dtype, torch_dtype in ((np.float64, torch.float64), (np.float32, torch.float32)):
        params = {name: p.astype(dtype) for name, p in run.params.items()}
        model = modules.GPT(c).to(torch_dtype)
        model.load_state_dict(modules.gpt_state_dict(params, c.n_layers))
        with torch.no_grad():
            theirs = model(torch.from_numpy(ids)).numpy()
        differences[dtype] = float(np.abs(theirs - forward(c, params, ids).logits).max())
    assert 1e-16 < differences[np.float64] < 1e-12
    assert 1e-7 < differences[np.float32] < 1e-4


@pytest.mark.parametrize("phrase", ["B starts at zero", "A starts random"])
def test_the_reference_lora_starts_as_the_text_says(phrase: str) -> None:
    layer = modules.LoRALinear(torch.nn.Linear(8, 6), 2, 4.0, generator=torch.Generator().manual_seed(0))
    assert not layer.B.detach().any() and layer.A.detach().abs().min() > 0
    assert "$A$ starts random and $B$ at zero" in _text()
