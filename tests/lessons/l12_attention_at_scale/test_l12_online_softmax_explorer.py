"""The online softmax explorer of lesson 12: its states are attnlib.efficient's, in Python and as
the page draws them (Node)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import traitlets
from conftest import ROOT

from attention_lessons.kit import plots
from attention_lessons.kit.examples import online_softmax_row
from attention_lessons.kit.widgets.base import theme
from attention_lessons.l12_attention_at_scale.widgets import (
    BLOCK_SIZES,
    OnlineSoftmaxExplorer,
    online_softmax_explorer,
)
from attnlib import softmax


def test_every_block_of_every_size_converges_to_the_exact_output():
    explorer = online_softmax_explorer()
    scores, values = online_softmax_row()
    np.testing.assert_allclose(explorer.exact_output, softmax(scores) @ values, rtol=1e-15)
    for size in BLOCK_SIZES:
        explorer.block_size = size
        blocks = len(explorer.tables[str(size)])
        assert blocks == -(-len(scores) // size)
        for read in range(1, blocks + 1):
            explorer.blocks_read = read
            state = explorer.tables[str(size)][read - 1]  # what the page draws
            seen = scores[: min(read * size, len(scores))]
            assert state["stop"] == len(seen)
            assert state["maximum"] == seen.max()
            np.testing.assert_allclose(state["total"], np.exp(seen - seen.max()).sum(), rtol=1e-14)
            np.testing.assert_allclose(state["output"], softmax(seen) @ values[: len(seen)], rtol=1e-12)
        np.testing.assert_allclose(state["output"], explorer.exact_output, rtol=1e-12)
        explorer.blocks_read = 1
    grew = [s["rescale"] < 1 for s in explorer.tables["4"][1:]]
    assert sum(grew) >= 2  # the row is chosen so that the maximum grows more than once


def test_bad_arguments_and_trait_values():
    with pytest.raises(ValueError, match="block_size"):
        online_softmax_explorer(block_size=3)
    with pytest.raises(ValueError, match="n_keys"):
        online_softmax_explorer(n_keys=1)
    with pytest.raises(ValueError, match="seed"):
        online_softmax_explorer(seed=-1)
    explorer = online_softmax_explorer(block_size=8)
    with pytest.raises(traitlets.TraitError, match="blocks_read"):
        explorer.blocks_read = 3
    with pytest.raises(traitlets.TraitError, match="block_size"):
        explorer.block_size = 5
    explorer.block_size, explorer.blocks_read = 1, 16
    with pytest.raises(traitlets.TraitError, match="blocks_read must be from 1 to 2 for blocks of 8"):
        explorer.block_size = 8  # 16 blocks read do not fit in 2 blocks
    assert isinstance(explorer, OnlineSoftmaxExplorer)


def test_booleans_and_floats_are_refused_and_the_old_value_kept():
    with pytest.raises(ValueError, match="block_size"):
        online_softmax_explorer(block_size=True)  # True == 1, one of the sizes, but not a size
    explorer = online_softmax_explorer(block_size=4)
    explorer.blocks_read = 2
    for name, value in [
        ("blocks_read", 99),
        ("blocks_read", True),
        ("blocks_read", 3.0),
        ("block_size", True),
    ]:
        with pytest.raises(traitlets.TraitError, match=name):
            setattr(explorer, name, value)
        assert (explorer.block_size, explorer.blocks_read) == (4, 2)
    explorer.blocks_read = np.int64(3)  # NumPy's whole numbers are whole numbers
    assert explorer.blocks_read == 3 and type(explorer.blocks_read) is int
    explorer.close()


def test_the_page_draws_attnlibs_states(tmp_path: Path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: install Node.js 20 or newer (Debian: apt-get install nodejs)")
    explorer = online_softmax_explorer()
    fixture = {
        "scores": explorer.scores,
        "values": explorer.values,
        "tables": explorer.tables,
        "exactOutput": explorer.exact_output,
        "themes": {"light": theme("light")},
    }
    path = tmp_path / "online_softmax.json"
    path.write_text(json.dumps(fixture))
    result = subprocess.run(
        [node, "--test", str(Path(__file__).with_name("online_softmax.test.mjs"))],
        env={**os.environ, "ATTNLIB_ONLINE_SOFTMAX": str(path)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# pass 1" in result.stdout and "# skipped 0" in result.stdout, result.stdout


def test_the_explorer_draws_the_running_maximum_in_the_palettes_colour():
    explorer = online_softmax_explorer()
    assert {t["runningMaximum"] for t in explorer.themes.values()} == {plots.color("running maximum")}
    assert plots.color("running maximum") != plots.color("raw score")
