"""Write the fixtures of the explorers' Node tests: seeded inputs and what attnlib computes of them.

    python tests/course/js/make_fixtures.py DIR      # writes DIR/fixtures.json

``tests/course/js/test_node.py`` runs this into a temporary folder and then ``node --test`` on the
``*.test.mjs`` files, which read the file named by the ATTNLIB_FIXTURES environment variable and
check every value of the ES modules' mirror against attnlib's. JSON has no -inf: a masked score is
written as null.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from multihead_fixtures import multihead_cases

from attention_lessons.kit import plots
from attention_lessons.kit.widgets.base import colormap_table, theme
from attention_lessons.l01_embeddings.similarity import similarity
from attention_lessons.l04_scaling.scaling import D_K_VALUES, entropy, random_queries_keys
from attention_lessons.l04_scaling.widgets import scaling_table
from attention_lessons.l10_positions.plots import ROPE_KEY, ROPE_QUERY
from attention_lessons.l11_learning_to_attend.widgets import replay_table
from attention_lessons.l14_induction_heads.widgets import replay_from_snapshots
from attention_lessons.l15_generating_text.text_model import Vocabulary
from attention_lessons.l15_generating_text.widgets import generation_explorer
from attnlib.core import attention_steps, causal_mask, default_scale, softmax
from attnlib.decoder import DecoderConfig, init_parameters
from attnlib.positions import rope, rope_frequencies
from attnlib.projection import qkv
from attnlib.training import Model, token_labels, train

SEED = 20261123
#: The characters of the generation fixture's vocabulary (with the rare symbol, as lesson 15's model).
GENERATION_CHARS = "abcehst .¤"


def listed(array: np.ndarray) -> list:
    """An array as nested lists, -inf as None."""
    return np.where(np.isneginf(array), None, array).tolist()


def attention_case(Q: np.ndarray, K: np.ndarray, V: np.ndarray, **options: object) -> dict:
    steps = attention_steps(Q, K, V, **options)
    mask = options.get("mask")
    return {
        "Q": Q.tolist(),
        "K": K.tolist(),
        "V": V.tolist(),
        "scale": options.get("scale"),
        "causal": bool(options.get("causal", False)),
        "mask": None if mask is None else np.asarray(mask).tolist(),
        "expected": {
            "rawScores": steps.raw_scores.tolist(),
            "scale": steps.scale,
            "scaledScores": steps.scaled_scores.tolist(),
            "maskedScores": listed(steps.masked_scores),
            "weights": steps.weights.tolist(),
            "output": steps.output.tolist(),
            "entropy": [float(e) for e in entropy(steps.weights)],
        },
    }


def attention_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for n_q, n_k, d_k, d_v in [(1, 1, 1, 1), (4, 4, 2, 2), (3, 5, 4, 3), (12, 12, 2, 2), (7, 12, 16, 2)]:
        Q, K, V = (rng.standard_normal((n, d)) for n, d in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
        cases.append(attention_case(Q, K, V))
        cases.append(attention_case(Q, K, V, scale=1.0))
        if n_q == n_k:
            cases.append(attention_case(Q, K, V, causal=True))
        mask = rng.random((n_q, n_k)) < 0.6
        mask[0] = False  # a fully masked row: zero weights, zero output
        cases.append(attention_case(Q, K, V, mask=mask))
    Q, K, V = (rng.uniform(-30, 30, (6, 2)) for _ in range(3))  # extreme: softmax saturates
    cases.append(attention_case(Q, K, V, scale=10.0))
    cases.append(attention_case(Q * 1e-9, K * 1e-9, V))  # nearly uniform weights
    return cases


def playground_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for n in (1, 4, 6, 12):
        X = np.round(rng.uniform(-2, 2, (n, 2)) / 0.05) * 0.05
        X[0] = 0.0  # an embedding at the origin
        d = 3 if n == 6 else 2  # queries and keys of another dimension than the embeddings
        W_q, W_k, W_v = rng.standard_normal((2, d)), rng.standard_normal((2, d)), rng.standard_normal((2, 2))
        for d_k, causal in ((1, False), (2, True), (64, False)):
            Q, K, V = qkv(X, W_q, W_k, W_v)
            steps = attention_steps(Q, K, V, scale=default_scale(d_k), causal=causal)
            cases.append(
                {
                    "embeddings": X.tolist(),
                    "W_q": W_q.tolist(),
                    "W_k": W_k.tolist(),
                    "W_v": W_v.tolist(),
                    "d_k": d_k,
                    "causal": causal,
                    "expected": {
                        "rawScores": steps.raw_scores.tolist(),
                        "scale": steps.scale,
                        "weights": steps.weights.tolist(),
                        "output": steps.output.tolist(),
                    },
                }
            )
    return cases


def softmax_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    temperatures = [0.1, 10.0, 1.0, *(10 ** rng.uniform(-1, 1, 5))]
    for n in (1, 3, 10):
        for temperature in temperatures:
            scores = rng.uniform(-10, 10, n)
            masks = rng.random(n) < 0.3
            cases.append((scores, masks, temperature))
    cases.append((np.array([2.0, 2.0]), np.array([False, False]), 1.0))  # equal keys named alike
    cases.append((np.array([1.0, -3.0, 4.0]), np.array([True, True, True]), 0.1))  # every key masked
    cases.append((np.array([10.0, -10.0, 9.9]), np.array([False, False, False]), 0.1))  # saturated
    result = []
    for scores, masks, temperature in cases:
        weights = softmax(np.where(masks, -np.inf, scores) / temperature)
        result.append(
            {
                "scores": scores.tolist(),
                "masks": masks.tolist(),
                "temperature": float(temperature),
                "expected": {"weights": weights.tolist(), "entropy": float(entropy(weights))},
            }
        )
    return result


def similarity_cases(rng: np.random.Generator) -> list[dict]:
    pairs = [tuple(rng.uniform(-1.5, 1.5, (2, 2))) for _ in range(20)]
    pairs += [
        (np.zeros(2), np.array([1.0, 0.5])),  # no direction: cosine and angle undefined
        (np.array([0.3, -0.4]), np.array([0.3, -0.4])),  # the same vector twice
        (np.array([1.0, 1.0]), np.array([-2.0, -2.0])),  # opposite
        (np.array([1.0, 0.0]), np.array([0.0, 1.5])),  # perpendicular
    ]
    cases = []
    for a, b in pairs:
        sim = similarity(a, b)
        cases.append(
            {
                "a": np.asarray(a).tolist(),
                "b": np.asarray(b).tolist(),
                "expected": {
                    "dot": sim.dot,
                    "normA": sim.norm_a,
                    "normB": sim.norm_b,
                    "cosine": sim.cosine,
                    "angleDegrees": sim.angle_degrees,
                },
            }
        )
    return cases


def scaling_cases() -> list[dict]:
    """Random queries and keys of every d_k from 1 to 1024, as lesson 04's explorer draws them."""
    cases = []
    for d_k in D_K_VALUES:
        Q, K = random_queries_keys(d_k, 3, 8, seed=d_k)
        steps = attention_steps(Q, K, K)
        raw_weights = softmax(steps.raw_scores)
        cases.append(
            {
                "d_k": d_k,
                "Q": Q.tolist(),
                "K": K.tolist(),
                "expected": {
                    "rawScores": steps.raw_scores.tolist(),
                    "scaledScores": steps.scaled_scores.tolist(),
                    "rawWeights": raw_weights.tolist(),
                    "scaledWeights": steps.weights.tolist(),
                    "rawEntropy": entropy(raw_weights).tolist(),
                    "scaledEntropy": entropy(steps.weights).tolist(),
                },
            }
        )
    return cases


def format_cases(rng: np.random.Generator) -> list[list]:
    """``[value, decimals, text]``: how attention_lessons.kit.plots.format_cell shows numbers on cells."""
    values = [0.0, -0.0, -0.001, 0.004, -0.5, 1.0, -2.25, 123.456, -1e-9, *rng.uniform(-100, 100, 20)]
    cases = [[float(v), d, plots.format_cell(v, d)] for v in values for d in (2, 3)]
    return [*cases, [None, 2, plots.format_cell(-np.inf)]]


def rope_cases() -> list[dict]:
    """RoPE (lesson 10): vectors of d = 2 … 16 at real positions from −1000 to 1000, and the RoPE
    explorer's 2D query and key at every slider position it offers, rotated by attnlib."""
    rng = np.random.default_rng(SEED + 10)  # its own stream: the other fixtures stay as they were
    inputs = []
    for d in (2, 4, 8, 16):
        for base in (10000.0, 100.0):
            q, k = rng.normal(size=(2, d))
            m, n = rng.uniform(-1000, 1000, 2)
            inputs.append((q, k, 0.0, float(m), float(n), base))
    for m, n, offset in ((0, 0, 0), (2, 5, 0), (2, 5, 7), (12, 0, 12), (0, 12, 3)):
        inputs.append((np.array(ROPE_QUERY), np.array(ROPE_KEY), float(offset), float(m), float(n), 10000.0))
    cases = []
    for q, k, offset, m, n, base in inputs:
        rotated_q = rope(q, [m + offset], base=base)
        rotated_k = rope(k, [n + offset], base=base)
        cases.append(
            {
                "query": q.tolist(),
                "key": k.tolist(),
                "queryPosition": m,
                "keyPosition": n,
                "offset": offset,
                "base": base,
                "expected": {
                    "frequencies": rope_frequencies(q.size, base=base).tolist(),
                    "rotatedQuery": rotated_q.tolist(),
                    "rotatedKey": rotated_k.tolist(),
                    "score": float(rotated_q @ rotated_k),
                },
            }
        )
    return cases


def fixtures() -> dict:
    rng = np.random.default_rng(SEED)
    return {
        "attention": attention_cases(rng),
        "causalMask": [
            {"n_q": n_q, "n_k": n_k, "expected": causal_mask(n_q, n_k).tolist()}
            for n_q, n_k in ((1, 1), (4, 4), (3, 5), (12, 12))
        ],
        "playground": playground_cases(rng),
        "softmax": softmax_cases(rng),
        "similarity": similarity_cases(rng),
        "scaling": scaling_cases(),
        "colormaps": {name: list(colormap_table(name)) for name in ("viridis", "cividis")},
        "themes": {style: theme(style) for style in plots.STYLES},
        "formatCell": format_cases(rng),
        "scalingTable": {"n_queries": 32, "n_keys": 8, "seed": 3, "table": scaling_table(32, 8, 3)},
        "multihead": multihead_cases(),
        "rope": rope_cases(),
        "trainingReplay": training_replay_case(),
        "inductionReplay": induction_replay_case(),
        "generation": generation_case(),
    }


def training_replay_case() -> dict:
    """A short seeded run of lesson 11's model, as the training replay receives it."""
    run = train(Model(length=6), steps=30, snapshot_every=10, seed=2)
    return {"table": replay_table(run), "losses": run.losses.tolist(), "tokens": token_labels(run.probe)}


def induction_replay_case() -> dict:
    """Seeded causal snapshots of two layers of three heads, as lesson 14's replay receives them."""
    rng = np.random.default_rng(4)
    scores = rng.normal(size=(3, 2, 3, 6, 6)) * 3
    scores[..., np.triu(np.ones((6, 6), dtype=bool), k=1)] = -np.inf
    replay = replay_from_snapshots(
        [0, 5, 10],
        softmax(scores),
        rng.uniform(size=(3, 2, 3)),
        rng.uniform(size=(3, 2, 3)),
        losses=(np.arange(11), rng.uniform(1.5, 2.0, 11), np.linspace(2.0, 0.05, 11)),
        vocab_size=7,
        tokens=["a", "b", "c", "a", "b", "c"],
        repeat_start=3,
    )
    names = ("table", "loss_steps", "loss_first", "loss_second", "chance", "tokens", "repeat_start")
    state = {name: getattr(replay, name) for name in names}
    replay.close()
    return state


def generation_case() -> dict:
    """Two prompts of a small decoder with rotary positions and random weights, generated with the
    full cache, a window of 5 and the window with 2 sinks, as lesson 15's explorer receives them."""
    config = DecoderConfig(
        vocab_size=len(GENERATION_CHARS) + 1, n_ctx=16, d_model=16, n_heads=2, n_layers=2, positions="rope"
    )
    params = {name: 4 * value for name, value in init_parameters(config, seed=5).items()}
    model = SimpleNamespace(config=config, params=params, vocabulary=Vocabulary(GENERATION_CHARS))
    settings = [{"window": None, "sinks": 0}, {"window": 5, "sinks": 0}, {"window": 5, "sinks": 2}]
    explorer = generation_explorer(model, ["the ", "a cat"], n_new=10, settings=settings)
    names = ("runs", "settings", "n_new", "n_layers", "n_heads", "bytes_per_position", "decimals")
    state = {name: getattr(explorer, name) for name in names}
    explorer.close()
    return state


def main(folder: str) -> Path:
    path = Path(folder) / "fixtures.json"
    path.write_text(json.dumps(fixtures()), encoding="utf-8")
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/course/js/make_fixtures.py DIR")
    print(main(sys.argv[1]))
