"""The numbers lesson 18's text quotes from its committed runs are the runs' numbers: a run trained
again, with its hash recorded anew, fails here until the text says what the new run says."""

from __future__ import annotations

import nbformat
import pytest
from conftest import ROOT

from attention_lessons.l18_training_gpt import runs
from attention_lessons.l18_training_gpt.data import token_streams


@pytest.fixture(scope="module")
def text() -> str:
    cells = nbformat.read(ROOT / "notebooks" / "18_training_gpt.ipynb", as_version=4).cells
    return "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")


def test_the_text_quotes_the_runs(text: str) -> None:
    run, found, n_train = runs.load_run(), runs.load_experiments(), len(token_streams().train_ids)
    run_tokens = run.settings["steps"] * run.settings["batch_size"] * runs.N_CTX
    overfit = found.overfit_settings
    big = found.scale[-1]
    quoted = [
        f"trained it for {run.settings['steps']:,} steps of {run.settings['batch_size']} windows of "
        f"{runs.N_CTX} tokens, {run_tokens / 1e6:.1f} million tokens, "
        f"about {run_tokens / n_train:.1f} passes",
        f"trained for {run.minutes:.0f} minutes on a CPU",
        f"{found.slice_tokens:,} tokens, for {overfit['steps']:,} steps: it sees each token about "
        f"{overfit['steps'] * overfit['batch_size'] * runs.N_CTX / found.slice_tokens:.0f} times",
        f"for the same {found.scale_settings['steps']:,} steps ({big.tokens / 1e6:.2f} million tokens)",
        f"gets {big.tokens / big.parameters:.1f} tokens per parameter",
        f"20 × {big.parameters:,} ≈ {20 * big.parameters / 1e6:.1f} million tokens, or about "
        f"{20 * big.parameters / n_train:.0f} passes",
        f"the same model, {run_tokens / big.tokens:.1f} times the tokens) takes its loss on *Hamlet* from "
        f"{big.val_losses[-1]:.2f} to {run.val_losses[-1]:.2f}",
    ]
    missing = [phrase for phrase in quoted if phrase not in text]
    assert not missing, f"notebooks/18_training_gpt.ipynb does not say: {missing}"
