"""Lesson 07's playground driven from Python over the whole range of every control: after each move
its ``steps`` equal attnlib's on the same inputs; duplicate names, 1 and 12 tokens, an embedding at
the origin, bad arguments; its ES module as anywidget loads it; and the freeing of a re-run cell's
explorers in a real kernel."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pytest
import traitlets
from conftest import slider_values

from attention_lessons.kit import examples
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.l07_whole_picture.widgets import Playground, playground
from attnlib import attention_steps
from attnlib.core import default_scale
from attnlib.projection import qkv

pytestmark = pytest.mark.filterwarnings("error")

EXAMPLE = examples.four_tokens_2d()


def assert_playground_matches_attnlib(pg: Playground) -> None:
    X = np.array(pg.embeddings)
    Q, K, V = qkv(X, np.array(pg.W_q), np.array(pg.W_k), np.array(pg.W_v))
    steps = attention_steps(Q, K, V, scale=default_scale(pg.d_k), causal=pg.causal)
    shown = pg.steps
    np.testing.assert_array_equal(shown.raw_scores, steps.raw_scores)
    np.testing.assert_array_equal(shown.weights, steps.weights)
    np.testing.assert_array_equal(shown.output, steps.output)
    assert shown.scale == 1 / np.sqrt(pg.d_k)
    np.testing.assert_allclose(np.sum(shown.weights, axis=1), 1.0, rtol=1e-12)


# --- the playground -------------------------------------------------------------------------------


def test_playground_starts_as_lesson_07() -> None:
    pg = playground()
    assert pg.tokens == list(EXAMPLE.tokens)
    np.testing.assert_array_equal(pg.embeddings, EXAMPLE.X)
    assert (pg.d_k, pg.causal, pg.style_name) == (2, False, "light")
    Q, K, V = qkv(EXAMPLE.X, EXAMPLE.W_q, EXAMPLE.W_k, EXAMPLE.W_v)
    np.testing.assert_array_equal(pg.steps.weights, attention_steps(Q, K, V).weights)
    assert pg.initial == {"embeddings": EXAMPLE.X.tolist(), "d_k": 2, "causal": False, "style_name": "light"}


def test_playground_every_slider_over_its_range() -> None:
    rng = np.random.default_rng(7)
    pg = playground()
    n = len(pg.tokens)
    for i in range(n):
        for j in range(2):
            for value in slider_values(pg.value_min, pg.value_max, pg.step, rng):
                X = [list(row) for row in pg.embeddings]
                X[i][j] = value
                pg.embeddings = X
                assert pg.embeddings[i][j] == value
                assert_playground_matches_attnlib(pg)
    for d_k in slider_values(1, pg.max_d_k, 1, rng):
        pg.d_k = int(d_k)
        assert_playground_matches_attnlib(pg)
    for causal in (True, False, True):
        pg.causal = causal
        assert_playground_matches_attnlib(pg)
    assert np.count_nonzero(np.triu(pg.steps.weights, 1)) == 0  # causal: no weight above the diagonal


def test_playground_reset_restores_every_input() -> None:
    pg = playground(causal=True, style="dark", d_k=8)
    pg.embeddings = np.zeros((4, 2)).tolist()
    pg.d_k, pg.causal, pg.style_name = 1, False, "light"
    pg.reset()
    assert (pg.d_k, pg.causal, pg.style_name) == (8, True, "dark")
    np.testing.assert_array_equal(pg.embeddings, EXAMPLE.X)
    assert_playground_matches_attnlib(pg)


def test_playground_duplicate_names_each_have_their_own_place() -> None:
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    X = np.array([[0.5, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5], [0.0, -1.0], [-1.0, -1.0]])
    pg = playground(tokens, X)
    assert pg.tokens == tokens
    np.testing.assert_array_equal(pg.embeddings, X)
    assert_playground_matches_attnlib(pg)
    moved = X.copy()
    moved[0] = [-1.5, 1.5]  # the first "the" only
    pg.embeddings = moved.tolist()
    assert pg.embeddings[4] == [0.0, -1.0]
    assert_playground_matches_attnlib(pg)
    assert pg.steps.output[0].tolist() != pg.steps.output[4].tolist()


@pytest.mark.parametrize("n", [1, 12])
def test_playground_with_one_and_twelve_tokens(n: int) -> None:
    rng = np.random.default_rng(n)
    X = np.round(rng.uniform(-2, 2, (n, 2)), 2)
    pg = playground([f"t{i}" for i in range(n)], X, causal=True)
    assert_playground_matches_attnlib(pg)
    pg.embeddings = (X * 0.5).tolist()
    assert_playground_matches_attnlib(pg)
    if n == 1:
        assert pg.steps.weights.tolist() == [[1.0]]


def test_playground_embedding_at_the_origin() -> None:
    pg = playground()
    X = [list(row) for row in pg.embeddings]
    X[2] = [0.0, 0.0]
    pg.embeddings = X
    assert_playground_matches_attnlib(pg)
    assert pg.steps.raw_scores[2].tolist() == [0.0] * 4
    np.testing.assert_allclose(pg.steps.weights[2], 0.25)  # scores all 0: uniform weights


def test_playground_with_projections_and_a_wider_range() -> None:
    W = np.array([[1.0, 0.5, 0.0], [-0.5, 1.0, 2.0]])
    pg = playground(["a", "b", "c"], [[3.0, 0.0], [0.0, 1.0], [1.0, 1.0]], W_q=W, W_k=W)
    assert (pg.value_min, pg.value_max, pg.d_k) == (-2.0, 3.0, 3)  # widened to hold 3.0; d_k of W_q
    assert_playground_matches_attnlib(pg)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tokens": ["a"]}, "give both tokens and embeddings"),
        ({"tokens": ["a", "b"], "embeddings": [[0, 1]]}, "1 to 12 tokens"),
        ({"tokens": [str(i) for i in range(13)], "embeddings": np.zeros((13, 2))}, "1 to 12 tokens"),
        ({"tokens": "ab", "embeddings": [[0, 1], [1, 0]]}, "not the string"),
        ({"tokens": ["a"], "embeddings": [[0, 1, 2]]}, r"shape \(n, 2\)"),
        ({"tokens": ["a"], "embeddings": [[np.nan, 1]]}, "finite"),
        ({"W_v": np.ones((2, 3))}, "W_v must project to 2D"),
        ({"W_q": np.ones((3, 2))}, "W_q"),
        ({"d_k": 0}, "d_k must be an integer from 1 to max_d_k=64"),
        ({"d_k": 65}, "d_k must be an integer"),
        ({"d_k": 2.5}, "d_k must be an integer"),
        ({"style": "blue"}, "style must be one of"),
        ({"value_range": (1, -1)}, "value_range"),
        ({"step": 0}, "step must be a positive number"),
        ({"causal": "yes"}, "causal must be True or False"),
    ],
)
def test_playground_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        playground(**kwargs)


def test_playground_bad_trait_values() -> None:
    pg = playground()
    with pytest.raises(traitlets.TraitError, match="4 pairs"):
        pg.embeddings = [[0.0, 0.0]]
    with pytest.raises(traitlets.TraitError, match="from value_min"):
        pg.embeddings = [[9.0, 0.0]] * 4
    with pytest.raises(traitlets.TraitError, match="d_k must be from 1 to max_d_k"):
        pg.d_k = 0
    with pytest.raises(ValueError, match="style must be one of"):
        pg.style_name = "sepia"
    assert_playground_matches_attnlib(pg)


# --- the ES modules as anywidget loads them ------------------------------------------------------


def test_esm_has_no_relative_imports_and_carries_its_modules_as_data_urls() -> None:
    text = module_text(
        "attention_lessons.l07_whole_picture", "playground.js"
    )  # imports ../kit/widgets/js/*.js
    assert "./" not in "".join(re.findall(r'from\s*"([^"]*)"', text))
    urls = re.findall(r'from\s*"data:text/javascript;base64,([^"]*)"', text)
    decoded = [base64.b64decode(url).decode("utf-8") for url in urls]
    assert any("export function softmaxRow" in module for module in decoded)  # mirror.js
    assert any("export function heatmap" in module for module in decoded)  # svg.js
    assert playground()._esm == text
    with pytest.raises(
        FileNotFoundError, match=r"attention_lessons\.l07_whole_picture has no ES module missing\.js"
    ):
        module_text("attention_lessons.l07_whole_picture", "missing.js")


# --- freeing the explorers of a re-run cell, in a real kernel -------------------------------------


def run_cell(client, code: str, cell_id: str) -> dict:
    """Execute ``code`` as JupyterLab does (``cellId`` in the request's metadata); the reply content."""
    msg = client.session.msg("execute_request", {"code": code, "silent": False, "store_history": True})
    msg["metadata"]["cellId"] = cell_id
    client.shell_channel.send(msg)
    while True:
        reply = client.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply["content"]


def test_rerunning_a_cell_frees_its_explorers(tmp_path: Path) -> None:
    jupyter_client = pytest.importorskip("jupyter_client")
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        setup = (
            "import ipywidgets\n"
            "from attention_lessons.l01_embeddings.widgets import similarity_explorer\n"
            "from attention_lessons.l07_whole_picture.widgets import playground\n"
            "made = []\n"
        )
        assert run_cell(client, setup, "setup")["status"] == "ok"
        cell = "made.append(playground()); made.append(similarity_explorer())"
        for _ in range(3):
            assert run_cell(client, cell, "cell-a")["status"] == "ok"
        assert run_cell(client, "other = playground()", "cell-b")["status"] == "ok"
        check = (
            "open_ = [w.comm is not None for w in made]\n"
            "alive = [w.model_id in ipywidgets.Widget.widgets for w in made if w.comm is not None]\n"
            "assert open_ == [False] * 4 + [True] * 2, open_\n"
            "assert all(alive) and other.comm is not None\n"
        )
        reply = run_cell(client, check, "check")
        assert reply["status"] == "ok", reply
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
