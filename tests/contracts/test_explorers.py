"""The explorers of attention_lessons.kit.widgets, driven from Python over the whole range of every control.

Every slider goes to its minimum, its maximum and 20 random values on its step (as a browser
sends them); after each move the explorer holds the value and its on-demand result (``steps``,
``weights``, ``measures``; the scaling explorer's table row) equals attnlib's computation on the
same inputs. Then duplicate names, 1 and 12 tokens, an embedding at the origin, a fully masked row, bad
arguments; the contract every lesson's explorer keeps (an anywidget with its summary, its
colours, a module anywidget loads, a close that frees it); the ES modules as anywidget loads them,
and the freeing of a re-run cell's explorers in a real kernel.
The front end's arithmetic is checked against attnlib in tests/course/js.
"""

from __future__ import annotations

import base64
import importlib
import re
from pathlib import Path

import anywidget
import numpy as np
import pytest
import traitlets

from attention_lessons.kit import examples, widgets
from attention_lessons.kit.plots import STYLES
from attention_lessons.kit.widgets.base import colormap_table, theme
from attention_lessons.kit.widgets.modules import module_text
from attention_lessons.l01_embeddings.similarity import similarity
from attention_lessons.l01_embeddings.widgets import SimilarityExplorer, similarity_explorer
from attention_lessons.l04_scaling import plots
from attention_lessons.l04_scaling.scaling import D_K_VALUES, entropy, scaling_statistics
from attention_lessons.l04_scaling.widgets import ScalingExplorer, scaling_explorer
from attention_lessons.l05_softmax.widgets import SoftmaxExplorer, softmax_explorer
from attention_lessons.l07_whole_picture.widgets import Playground, playground
from attention_lessons.l09_many_heads.widgets import MultiHeadExplorer, multi_head_explorer
from attention_lessons.l10_positions.widgets import RopeExplorer, rope_explorer
from attention_lessons.l11_learning_to_attend.widgets import TrainingReplay, training_replay
from attention_lessons.l12_attention_at_scale.widgets import OnlineSoftmaxExplorer, online_softmax_explorer
from attention_lessons.l13_real_model.widgets import HeadExplorer, head_explorer
from attention_lessons.l14_induction_heads.widgets import InductionReplay, induction_replay
from attention_lessons.l15_generating_text.text_model import load_text_model
from attention_lessons.l15_generating_text.widgets import GenerationExplorer, generation_explorer
from attention_lessons.l16_real_language_model.widgets import AnswerExplorer, answer_explorer
from attention_lessons.manifest import lessons
from attnlib import attention_steps, softmax
from attnlib.core import default_scale
from attnlib.projection import qkv
from attnlib.training import Model, train

pytestmark = pytest.mark.filterwarnings("error")

RANDOM_VALUES = 20
EXAMPLE = examples.four_tokens_2d()
JS = Path(widgets.__file__).parent / "js"


def slider_values(low: float, high: float, step: float, rng: np.random.Generator) -> list[float]:
    """The minimum, the maximum and 20 random values of a slider, on its step."""
    n_steps = round((high - low) / step)
    picked = [0, n_steps, *rng.integers(0, n_steps + 1, RANDOM_VALUES)]
    return [round(low + int(k) * step, 10) for k in picked]


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


# --- the softmax explorer ------------------------------------------------------------------------


def assert_softmax_matches_attnlib(sm: SoftmaxExplorer) -> None:
    shown = np.where(sm.masks, -np.inf, sm.scores)
    expected = softmax(shown / sm.temperature)
    np.testing.assert_array_equal(sm.weights, expected)


def test_softmax_every_slider_and_mask_over_its_range() -> None:
    rng = np.random.default_rng(5)
    sm = softmax_explorer()
    assert sm.labels == ["h1", "h2", "h3"]
    assert_softmax_matches_attnlib(sm)
    for i in range(len(sm.labels)):
        for value in slider_values(sm.value_min, sm.value_max, sm.step, rng):
            scores = list(sm.scores)
            scores[i] = value
            sm.scores = scores
            assert_softmax_matches_attnlib(sm)
    for exponent in slider_values(-1.0, 1.0, 0.02, rng):  # the slider moves log10 T
        sm.temperature = 10**exponent
        assert_softmax_matches_attnlib(sm)
    for i in range(len(sm.labels)):
        masks = [False] * len(sm.labels)
        masks[i] = True
        sm.masks = masks
        assert_softmax_matches_attnlib(sm)
        assert sm.weights[i] == 0.0


def test_softmax_every_key_masked_gives_zero_weights() -> None:
    sm = softmax_explorer([1.0, -3.0, 4.0], temperature=0.1)
    sm.masks = [True, True, True]
    assert sm.weights.tolist() == [0.0, 0.0, 0.0]


def test_softmax_keys_with_the_same_name_are_separate() -> None:
    sm = softmax_explorer([1.0, 3.0], ["k", "k"])
    assert sm.weights[0] < 0.5 < sm.weights[1]
    sm.scores = [3.0, 1.0]
    assert sm.weights[0] > 0.5 > sm.weights[1]
    sm.masks = [False, True]
    assert sm.weights.tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([],), {}, "1 to 10 numbers"),
        ((np.zeros(11),), {}, "1 to 10 numbers"),
        (([[1, 2]],), {}, "one row"),
        (([1, 2], ["a"]), {}, "one label per score"),
        (([1, np.inf],), {}, "finite"),
        (([1, 2],), {"temperature": 0.05}, "temperature must be between 0.1 and 10"),
        (([1, 2],), {"temperature": "hot"}, "temperature must be a number"),
        (([1, 2],), {"style": "neon"}, "style must be one of"),
        (([1, 2],), {"value_range": (3, 3)}, "value_range"),
    ],
)
def test_softmax_bad_arguments(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        softmax_explorer(*args, **kwargs)


def test_softmax_bad_trait_values() -> None:
    sm = softmax_explorer()
    with pytest.raises(traitlets.TraitError, match=r"temperature must be from 0\.1 to 10"):
        sm.temperature = 20.0
    with pytest.raises(traitlets.TraitError, match="3 numbers"):
        sm.scores = [1.0]
    with pytest.raises(traitlets.TraitError, match="3 booleans"):
        sm.masks = [True]
    assert_softmax_matches_attnlib(sm)


# --- the similarity explorer ---------------------------------------------------------------------


def assert_similarity_matches_attnlib(se: SimilarityExplorer) -> None:
    expected, measured = similarity(se.vectors[0], se.vectors[1]), se.measures
    for name in ("dot", "norm_a", "norm_b", "cosine", "angle_degrees"):
        assert getattr(measured, name) == getattr(expected, name), name


def test_similarity_every_slider_over_its_range() -> None:
    rng = np.random.default_rng(3)
    se = similarity_explorer()
    np.testing.assert_array_equal(se.vectors, EXAMPLE.X[:2])
    for i in range(2):
        for j in range(2):
            for value in slider_values(se.value_min, se.value_max, se.step, rng):
                pair = [list(v) for v in se.vectors]
                pair[i][j] = value
                se.vectors = pair
                assert_similarity_matches_attnlib(se)


def test_similarity_vectors_with_the_same_label_and_a_zero_vector() -> None:
    se = similarity_explorer([1.0, 0.0], [0.0, 1.0], labels=("v", "v"))
    assert se.measures.cosine == 0.0 and se.measures.angle_degrees == 90.0
    se.vectors = [[0.0, 0.0], [0.5, 0.5]]
    assert_similarity_matches_attnlib(se)
    assert se.measures.cosine is None and se.measures.angle_degrees is None and se.measures.dot == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": [1, 0]}, "give both vectors"),
        ({"a": [1, 0, 0], "b": [0, 1, 0]}, r"shape \(2,\)"),
        ({"a": [1, np.nan], "b": [0, 1]}, "finite"),
        ({"labels": ("a",)}, "labels must name the two vectors"),
        ({"labels": "ab"}, "labels must name the two vectors"),
        ({"step": -1}, "step must be a positive number"),
        ({"style": "bright"}, "style must be one of"),
    ],
)
def test_similarity_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        similarity_explorer(**kwargs)


# --- the scaling explorer ------------------------------------------------------------------------


def shown_row(sc: ScalingExplorer) -> dict:
    """The row of the table that the front end draws: the one of the slider's d_k."""
    return next(r for r in sc.table if r["d_k"] == sc.d_k)


def assert_scaling_matches_attnlib(sc: ScalingExplorer) -> None:
    stats = scaling_statistics(sc.d_k, n_queries=sc.n_queries, n_keys=sc.n_keys, seed=sc.seed)
    row = shown_row(sc)
    for name in ("variance", "max_weight", "entropy", "jacobian_norm"):
        for kind in ("raw", "scaled"):
            assert row[f"{kind}_{name}"] == getattr(stats, f"{kind}_{name}"), (kind, name)
    assert row["raw_weights"] == stats.raw_weights[0].tolist()
    assert row["scaled_weights"] == stats.scaled_weights[0].tolist()
    edges = plots.scaling_bins(sc.d_k)
    assert row["raw_counts"] == np.histogram(np.clip(stats.raw, edges[0], edges[-1]), edges)[0].tolist()
    assert row["scaled_counts"] == np.histogram(np.clip(stats.scaled, edges[0], edges[-1]), edges)[0].tolist()
    assert row["first_scaled_entropy"] == float(entropy(stats.scaled_weights[0]))


def test_scaling_every_d_k_and_new_draws() -> None:
    rng = np.random.default_rng(11)
    sc = scaling_explorer(64, n_queries=64)
    assert sc.d_k_values == list(D_K_VALUES) and sc.table_seed == sc.seed == 0
    picks = [0, len(D_K_VALUES) - 1, *rng.integers(0, len(D_K_VALUES), RANDOM_VALUES)]
    for index in picks:
        sc.d_k = D_K_VALUES[int(index)]
        assert_scaling_matches_attnlib(sc)
    variance_before = shown_row(sc)["raw_variance"]
    sc.seed += 1  # the "new random vectors" button
    assert sc.table_seed == 1
    assert shown_row(sc)["raw_variance"] != variance_before
    assert_scaling_matches_attnlib(sc)
    assert [row["d_k"] for row in sc.table] == list(D_K_VALUES)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 5}, "d_k must be one of"),
        ({"n_keys": 0}, "n_keys must be an integer from 1 to 16"),
        ({"n_keys": 17}, "n_keys must be an integer"),
        ({"n_queries": 2.5}, "n_queries must be an integer"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"style": "grey"}, "style must be one of"),
    ],
)
def test_scaling_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        scaling_explorer(**kwargs)


def test_scaling_bad_d_k_trait() -> None:
    sc = scaling_explorer(4, n_queries=16)
    with pytest.raises(traitlets.TraitError, match="d_k must be one of"):
        sc.d_k = 7
    assert sc.d_k == 4


# --- what every explorer promises -----------------------------------------------------------------

#: How to make each explorer of every lesson, small, in ``style``; the head explorer needs the
#: real model (the ``model`` fixture: it skips where the model's files are missing).
EXPLORERS = {
    Playground: lambda style, request: playground(style=style),
    SoftmaxExplorer: lambda style, request: softmax_explorer(style=style),
    SimilarityExplorer: lambda style, request: similarity_explorer(style=style),
    ScalingExplorer: lambda style, request: scaling_explorer(n_queries=16, style=style),
    MultiHeadExplorer: lambda style, request: multi_head_explorer(
        ["a", "b"], np.eye(2), W_q=np.eye(2), W_k=np.eye(2), W_v=np.eye(2, 4), W_o=np.eye(4, 2), style=style
    ),
    RopeExplorer: lambda style, request: rope_explorer(style=style),
    TrainingReplay: lambda style, request: training_replay(
        train(Model(vocab_size=4, length=3, d_model=4), steps=2), style=style
    ),
    OnlineSoftmaxExplorer: lambda style, request: online_softmax_explorer(style=style),
    HeadExplorer: lambda style, request: head_explorer(
        request.getfixturevalue("model"), sentences=["The cat sat."], style=style
    ),
    InductionReplay: lambda style, request: induction_replay(style=style),
    GenerationExplorer: lambda style, request: generation_explorer(
        load_text_model(), ["a "], n_new=2, style=style
    ),
    AnswerExplorer: lambda style, request: answer_explorer(prompts=["Hi!"], n_new=1, style=style),
}


def live_widgets() -> set[str]:
    """The model ids of every widget ipywidgets keeps alive (8.1's registry, ``widget._instances``)."""
    from ipywidgets.widgets import widget

    return set(widget._instances)


def imports(esm: str) -> list[str]:
    """Where ``esm`` and every module it carries as a ``data:`` URL import from, at any depth."""
    found = re.findall(r'from\s*"([^"]*)"', esm)
    carried = [url.removeprefix("data:text/javascript;base64,") for url in found if url.startswith("data:")]
    return found + [path for url in carried for path in imports(base64.b64decode(url).decode("utf-8"))]


def test_every_lessons_explorer_is_held_to_the_contract() -> None:
    """Every explorer a lesson's manifest names is made by a class of the lesson's widgets.py that
    has an entry above."""
    kinds = set()
    for lesson in lessons():
        if lesson.explorers:
            module = importlib.import_module(f"attention_lessons.{lesson.folder.name}.widgets")
            made = {name: getattr(module, name) for name in lesson.explorers}
            assert all(callable(make) for make in made.values()), f"lesson {lesson.id}: {made}"
            kinds |= {
                kind
                for kind in vars(module).values()
                if isinstance(kind, type)
                and issubclass(kind, widgets.Explorer)
                and kind.__module__ == module.__name__
            }
    assert kinds == set(EXPLORERS)


@pytest.mark.parametrize("kind", EXPLORERS, ids=lambda kind: kind.__name__)
def test_the_explorer_contract(kind: type[widgets.Explorer], request: pytest.FixtureRequest) -> None:
    """An anywidget with its own summary, both styles' colours and its colour maps, an ES module
    loadable without a bundler, a style that refuses a wrong name, and a close that frees it."""
    before = live_widgets()
    explorer = EXPLORERS[kind]("dark", request)
    assert isinstance(explorer, kind) and isinstance(explorer, anywidget.AnyWidget)
    assert explorer.style_name == "dark"
    # ipywidgets' front end reads a synced "style" or "layout" as a reference to a model
    assert explorer.keys.count("style") == 0 and explorer.get_state()["layout"].startswith("IPY_MODEL_")
    data, _metadata = explorer._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.model_id
    assert kind.summary != widgets.Explorer.summary and data["text/plain"].startswith(kind.summary)
    assert "interactive" in data["text/plain"] and "0x" not in data["text/plain"]
    assert explorer.themes == {style: theme(style) for style in STYLES}
    assert set(explorer.colormaps) == set(kind.colormap_names)
    assert all(table == list(colormap_table(name)) for name, table in explorer.colormaps.items())
    assert "import" in explorer._esm and not [path for path in imports(explorer._esm) if "./" in path]
    with pytest.raises(ValueError, match="style must be one of"):
        explorer.style_name = "sepia"
    assert explorer.style_name == "dark"
    assert live_widgets() - before == {explorer.model_id, explorer.layout.model_id}  # and its Layout
    explorer.close()
    assert live_widgets() == before
    explorer.close()  # a second close is harmless


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
