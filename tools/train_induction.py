"""Train lesson 14's two-layer attention-only decoder until induction heads form; save the run.

    .venv/bin/python tools/train_induction.py     # writes
                                                  # attention_lessons/l14_induction_heads/induction_run.npz
    .venv/bin/python tools/train_induction.py --steps 40 --out /tmp/first.npz   # the first 40 steps

The run is seeded: on one CPU, with the same kernels, the same command writes the same file byte
for byte. Another CPU adds in another order, and the last bits of its sums grow over 1,500 steps:
on the project's AMD EPYC machines (AVX-512, OpenBLAS's SkylakeX kernels) a re-run's parameters
lie within 2e-11 of the committed ones and its probe weights (float32) within 3e-8, and the
file's SHA-256 differs. The script prints the SHA-256 and the CPU it ran on; commit both, the
hash as :data:`attention_lessons.l14_induction_heads.induction.RUN_SHA256` (``load_induction_run`` checks it)
and the CPU in the comment above it. What is saved:
the config and the training settings, the parameters after training, the training loss and the
loss on both halves of a fixed evaluation batch at every step, and every head's attention
weights on one fixed repeated sequence (the probe) every ``SNAPSHOT_EVERY`` steps, for the
lesson's replay explorer.

BLAS runs on one thread (set before NumPy is imported): the matrices are tiny, and on a busy
2-core machine OpenBLAS's threads spend far longer waiting for each other than multiplying.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time
from pathlib import Path

import numpy as np
from committed_run import command_line, run_arrays, save  # tools/committed_run.py

from attention_lessons.l14_induction_heads.induction import half_losses, induction_batch, repeated_sequences
from attnlib.decoder import DecoderConfig, next_token_losses, train

CONFIG = DecoderConfig(vocab_size=16, n_ctx=16, d_model=32, n_heads=2, n_layers=2, positions="attention")
HALF = CONFIG.n_ctx // 2
#: How the committed run was trained.
SETTINGS = {"steps": 1500, "batch": 32, "learning_rate": 0.01, "seed": 0, "shortest": 3}
EVAL_BATCH = 16
SNAPSHOT_EVERY = 50
DEFAULT_OUT = (
    Path(__file__).resolve().parent.parent / "attention_lessons" / "l14_induction_heads" / "induction_run.npz"
)


def training_run(steps: int = SETTINGS["steps"]) -> dict[str, np.ndarray]:
    """Train for ``steps`` steps (the committed run: all of them); return the arrays to save."""
    seed = SETTINGS["seed"]
    evaluation = repeated_sequences(EVAL_BATCH, HALF, CONFIG.vocab_size, seed=seed + 1)
    probe = repeated_sequences(1, HALF, CONFIG.vocab_size, seed=seed + 2)[0]

    def batch(rng: np.random.Generator) -> np.ndarray:
        return induction_batch(
            rng, SETTINGS["batch"], CONFIG.n_ctx, CONFIG.vocab_size, shortest=SETTINGS["shortest"]
        )

    def halves(params: dict[str, np.ndarray]) -> np.ndarray:
        return np.array(half_losses(next_token_losses(CONFIG, params, evaluation).mean(axis=0), HALF))

    run = train(
        CONFIG,
        batch,
        steps=steps,
        learning_rate=SETTINGS["learning_rate"],
        seed=seed,
        snapshot_every=SNAPSHOT_EVERY,
        probe=probe,
        measure=halves,
    )
    arrays = run_arrays(CONFIG, ["positions"], {**SETTINGS, "steps": steps})
    arrays |= {"half": np.array(HALF), "eval_batch": np.array(EVAL_BATCH)}
    arrays |= {f"param.{name}": value for name, value in run.params.items()}
    arrays |= {
        "loss": run.losses,
        "first_half_loss": run.measurements[:, 0],
        "repeated_half_loss": run.measurements[:, 1],
        "snapshot_steps": run.snapshot_steps,
        "probe": probe,
        "probe_weights": run.probe_weights.astype(np.float32),  # for drawing: 7 digits are plenty
    }
    return arrays


def main() -> None:
    args = command_line(__doc__, SETTINGS["steps"], DEFAULT_OUT).parse_args()
    start = time.perf_counter()
    arrays = training_run(args.steps)
    seconds = time.perf_counter() - start
    first, repeated = arrays["first_half_loss"], arrays["repeated_half_loss"]
    log = [
        f"loss on the repeated half: {repeated[0]:.3f} at step 0, {repeated[-1]:.3f} at the end",
        f"loss on the first half:    {first[0]:.3f} at step 0, {first[-1]:.3f} at the end",
    ]
    save(args.out, arrays, args.steps, seconds, log)


if __name__ == "__main__":
    main()
