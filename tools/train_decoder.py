"""Train lesson 15's character-level decoder on the lessons' own Markdown; save the model and its log.

    .venv/bin/python tools/train_decoder.py        # writes
                                                   # attention_lessons/l15_generating_text/text_model.npz
    .venv/bin/python tools/train_decoder.py --steps 20 --batch 4 --out /tmp/first.npz   # a first look
    .venv/bin/python tools/train_decoder.py --extract        # re-freeze the corpus from notebooks/

The corpus is frozen: ``--extract`` writes the Markdown cells of ``notebooks/00_… … 14_…`` to
``attention_lessons/l15_generating_text/lessons_text.txt`` and prints its SHA-256
(:data:`attention_lessons.l15_generating_text.text_model.CORPUS_SHA256` records it); training reads that file
only, so later edits to the lessons do not change the model. Training is seeded: on one CPU, with
the same kernels, the same command gives the same parameters bit for bit; on another CPU the last
bits of its sums differ (on the project's AMD EPYC machines a re-run's parameters lie within 1e-13
of the committed ones). Each batch is ``batch`` random stretches of the training text, each ``BOS``
and ``n_ctx − 1`` characters (``BOS`` first always, so the first slot is always the same token). The
loss on the held-out text is measured with the parameters before training, every ``eval_every``
steps, and at the end. It prints the file's SHA-256, which
:data:`attention_lessons.l15_generating_text.text_model.MODEL_SHA256` records (``load_text_model`` checks it),
the CPU it ran on (commit it in the comment above that hash), and the wall time, which is saved in
the file: so no re-run, even on the same CPU, writes the same bytes.

BLAS runs on one thread (set before NumPy is imported): the matrices are small, and on a busy
2-core machine OpenBLAS's threads spend far longer waiting for each other than multiplying.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import hashlib
import json
import time
from pathlib import Path

import numpy as np
from committed_run import command_line, run_arrays, save  # tools/committed_run.py

from attention_lessons.l15_generating_text.text_model import Vocabulary, corpus_from_text, held_out_batch
from attnlib.decoder import DecoderConfig, next_token_losses, train

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "attention_lessons" / "l15_generating_text"
CORPUS = DATA / "lessons_text.txt"
DEFAULT_OUT = DATA / "text_model.npz"
#: The lessons whose Markdown is the corpus (lesson 15 is about this model, so not in it).
LESSONS = [f"{n:02d}" for n in range(15)]

N_CTX = 128
#: How the committed model was trained.
SETTINGS = {"steps": 700, "batch": 16, "learning_rate": 3e-3, "seed": 0, "eval_every": 100}


def model_config(vocab_size: int) -> DecoderConfig:
    """The decoder: pre-LN, MLP, RoPE, 4 heads of 16, 2 layers."""
    return DecoderConfig(
        vocab_size=vocab_size,
        n_ctx=N_CTX,
        d_model=64,
        n_heads=4,
        n_layers=2,
        d_mlp=128,
        layer_norm=True,
        positions="rope",
    )


def extract_corpus() -> str:
    """The Markdown cells of lessons 00 … 14, each after a ``=== notebooks/NN_name.ipynb ===`` line."""
    parts = []
    for number in LESSONS:
        (path,) = sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        markdown = "\n\n".join(
            "".join(cell["source"]).strip() for cell in cells if cell["cell_type"] == "markdown"
        )
        parts.append(f"=== notebooks/{path.name} ===\n{markdown}\n")
    return "".join(parts)


def held_out_mean(
    config: DecoderConfig, params: dict[str, np.ndarray], evaluation: np.ndarray, batch: int
) -> float:
    """The mean loss on the held-out sequences, ``batch`` at a time (small arrays are faster)."""
    chunks = [evaluation[i : i + batch] for i in range(0, len(evaluation), batch)]
    return float(np.concatenate([next_token_losses(config, params, chunk) for chunk in chunks]).mean())


def training_run(steps: int = SETTINGS["steps"], batch: int = SETTINGS["batch"]) -> dict[str, np.ndarray]:
    """Train ``steps`` steps of ``batch`` sequences (the committed run: the settings); return the arrays."""
    corpus = corpus_from_text(CORPUS.read_text(encoding="utf-8"))
    text = corpus.training_text
    vocabulary = Vocabulary.from_text(text)
    config = model_config(vocabulary.size)
    ids = vocabulary.encode(text, bos=False)
    evaluation = held_out_batch(vocabulary, corpus.held_out, N_CTX)

    def sequences(rng: np.random.Generator) -> np.ndarray:
        starts = rng.integers(0, len(ids) - (N_CTX - 1) + 1, size=batch)
        stretches = ids[starts[:, None] + np.arange(N_CTX - 1)]
        return np.concatenate([np.full((batch, 1), Vocabulary.BOS), stretches], axis=1)

    start = time.perf_counter()
    run = train(
        config,
        sequences,
        steps=steps,
        learning_rate=SETTINGS["learning_rate"],
        seed=SETTINGS["seed"],
        snapshot_every=SETTINGS["eval_every"],
    )
    validation = [held_out_mean(config, params, evaluation, batch) for params in run.snapshots]
    seconds = time.perf_counter() - start
    arrays = run_arrays(config, ["layer_norm", "positions"], {**SETTINGS, "steps": steps, "batch": batch})
    arrays["vocabulary"] = np.array(vocabulary.chars)
    arrays |= {f"param.{name}": value for name, value in run.params.items()}
    arrays |= {
        "train_loss": run.losses,
        "eval_steps": run.snapshot_steps,
        "validation_loss": np.array(validation),
        "seconds": np.array(seconds),
    }
    return arrays


def main() -> None:
    parser = command_line(__doc__, SETTINGS["steps"], DEFAULT_OUT)
    parser.add_argument("--batch", type=int, default=SETTINGS["batch"])
    parser.add_argument(
        "--extract", action="store_true", help="re-freeze the corpus from notebooks/ and stop"
    )
    args = parser.parse_args()
    if args.extract:
        CORPUS.write_text(extract_corpus(), encoding="utf-8")
        print(f"wrote {CORPUS} ({CORPUS.stat().st_size / 1024:.0f} KiB)")
        print(f"SHA-256 {hashlib.sha256(CORPUS.read_bytes()).hexdigest()}")
        return
    arrays = training_run(args.steps, args.batch)
    loss, validation = arrays["train_loss"], arrays["validation_loss"]
    log = [f"training loss: {loss[:10].mean():.3f} (first 10 steps), {loss[-50:].mean():.3f} (last 50)"]
    log += [
        f"held-out loss at step {int(step):5d}: {value:.3f}"
        for step, value in zip(arrays["eval_steps"], validation, strict=True)
    ]
    save(args.out, arrays, args.steps, float(arrays["seconds"]), log)


if __name__ == "__main__":
    main()
