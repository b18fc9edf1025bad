"""Lesson 04's scaling explorer over every d_k and new draws: the table row the front end draws
equals lesson 04's statistics computed again; bad arguments and trait values."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets
from conftest import RANDOM_VALUES

from attention_lessons.kit import examples
from attention_lessons.l04_scaling import plots
from attention_lessons.l04_scaling.scaling import D_K_VALUES, entropy, scaling_statistics
from attention_lessons.l04_scaling.widgets import ScalingExplorer, scaling_explorer

pytestmark = pytest.mark.filterwarnings("error")

EXAMPLE = examples.four_tokens_2d()


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
