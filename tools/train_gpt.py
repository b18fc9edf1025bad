"""Train lesson 18's GPT on Shakespeare, and its experiments (overfitting, scale); save the runs.

    .venv/bin/python tools/train_gpt.py                  # the committed run: writes
                                                         # attention_lessons/l18_training_gpt/gpt_run.npz
    .venv/bin/python tools/train_gpt.py --experiments    # writes .../gpt_experiments.npz
    .venv/bin/python tools/train_gpt.py --steps 20 --out /tmp/first.npz    # its first 20 steps

The data is lesson 18's (:func:`attention_lessons.l18_training_gpt.data.token_streams`): the 41 works
of lesson 17's corpus as 512 byte-pair tokens to train on, *Hamlet* to validate on. Training is
:func:`attnlib.decoder.gpt.train_gpt`, seeded, in float32 (the lesson's benchmark measures why):
on one CPU with the same kernels the same command gives the same parameters bit for bit; on another
the last bits of its sums differ and the runs part slowly (the test re-runs the first steps and
compares to a stated tolerance). The script prints each file's SHA-256, which
:mod:`attention_lessons.l18_training_gpt.runs` records, the CPU it ran on, and the wall time, which is
saved in the file: so no re-run, even on the same CPU, writes the same bytes.

The experiments train, on the same batches (one seed):
- **scale**: three model sizes (:data:`SIZES`) for the same steps, so the same tokens;
- **overfitting**: the largest size on a small slice of the text (:data:`SLICE` tokens), plain,
  with dropout, with a stronger weight decay, and with both.

BLAS runs on one thread (set before NumPy is imported): the matrices are small, and on a busy
2-core machine OpenBLAS's threads spend far longer waiting for each other than multiplying.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
from committed_run import command_line, run_arrays, save  # tools/committed_run.py

from attention_lessons.l18_training_gpt.data import token_streams
from attention_lessons.l18_training_gpt.runs import model_config
from attnlib.decoder import DecoderConfig, init_parameters
from attnlib.decoder.gpt import GPTRun, TrainingSettings, train_gpt

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "attention_lessons" / "l18_training_gpt"
DEFAULT_OUT = DATA / "gpt_run.npz"
EXPERIMENTS_OUT = DATA / "gpt_experiments.npz"
DTYPE = np.float32

#: The committed run's model (:func:`attention_lessons.l18_training_gpt.runs.model_config`'s default).
MODEL = {"d_model": 128, "n_heads": 4, "n_layers": 4}
#: How the committed run is trained.
SETTINGS = TrainingSettings(steps=1500, batch_size=16, learning_rate=3e-3, warmup=100, eval_every=100)
#: The scaling experiment's models (the last is :data:`MODEL`).
SIZES = ({"d_model": 32, "n_heads": 2, "n_layers": 2}, {"d_model": 64, "n_heads": 4, "n_layers": 2}, MODEL)
SCALE_SETTINGS = replace(SETTINGS, steps=600, eval_every=50)
#: The overfitting experiment: tokens of the training text it trains on, and its variants.
SLICE = 40_000
OVERFIT_SETTINGS = replace(SETTINGS, steps=600, eval_every=50, warmup=50)
VARIANTS = {
    "plain": {},
    "dropout": {"dropout": 0.2},
    "weight decay": {"weight_decay": 1.0},
    "both": {"dropout": 0.2, "weight_decay": 1.0},
}


def run(
    config: DecoderConfig,
    train_ids: np.ndarray,
    val_ids: np.ndarray,
    settings: TrainingSettings,
    stop_after: int | None = None,
) -> GPTRun:
    """One seeded float32 run (its first ``stop_after`` steps only, if given)."""
    params = init_parameters(config, settings.seed, dtype=DTYPE)
    return train_gpt(config, train_ids, val_ids, settings, params=params, stop_after=stop_after)


def curves(prefix: str, result: GPTRun) -> dict[str, np.ndarray]:
    """A run's curves, named ``prefix.losses`` … (no parameters)."""
    return {
        f"{prefix}.losses": result.losses.astype(np.float32),
        f"{prefix}.eval_steps": result.eval_steps,
        f"{prefix}.train_losses": result.train_losses,
        f"{prefix}.val_losses": result.val_losses,
    }


def committed_run(steps: int) -> dict[str, np.ndarray]:
    """The committed run's arrays: config, settings, curves and the parameters."""
    streams = token_streams()
    config = model_config(streams.vocab_size)
    start = time.perf_counter()
    result = run(config, streams.train_ids, streams.val_ids, SETTINGS, stop_after=steps)
    seconds = time.perf_counter() - start
    arrays = run_arrays(config, ["layer_norm", "positions"], asdict(SETTINGS))
    arrays |= {f"param.{name}": value for name, value in result.params.items()}
    arrays |= curves("run", result)
    arrays |= {"learning_rates": result.learning_rates, "grad_norms": result.grad_norms}
    return arrays | {"seconds": np.array(seconds)}


def experiments(steps: int | None) -> dict[str, np.ndarray]:
    """The scaling and overfitting runs' curves and sizes (each run's first ``steps`` only, if given)."""
    streams = token_streams()
    arrays: dict[str, np.ndarray] = {}
    start = time.perf_counter()
    for i, size in enumerate(SIZES):
        config = model_config(streams.vocab_size, **size)
        arrays |= curves(f"scale{i}", run(config, streams.train_ids, streams.val_ids, SCALE_SETTINGS, steps))
        arrays |= {f"scale{i}.{name}": np.array(value) for name, value in size.items()}
        print(f"scale {size}: {time.perf_counter() - start:.0f} s")
    config = model_config(streams.vocab_size)
    for name, change in VARIANTS.items():
        settings = replace(OVERFIT_SETTINGS, **change)
        result = run(config, streams.train_ids[:SLICE], streams.val_ids, settings, steps)
        arrays |= curves(f"overfit.{name}", result)
        print(f"overfit {name}: {time.perf_counter() - start:.0f} s")
    arrays["scale.settings"] = np.array(str(asdict(SCALE_SETTINGS)))
    arrays["overfit.settings"] = np.array(str(asdict(OVERFIT_SETTINGS)))
    arrays["overfit.variants"] = np.array(str(VARIANTS))
    arrays["overfit.slice"] = np.array(SLICE)
    return arrays | {"seconds": np.array(time.perf_counter() - start)}


def main() -> None:
    parser = command_line(__doc__, SETTINGS.steps, DEFAULT_OUT)
    parser.add_argument("--experiments", action="store_true", help="train the experiments instead")
    args = parser.parse_args()
    if args.experiments:
        steps = None if args.steps == SETTINGS.steps else args.steps
        out = EXPERIMENTS_OUT if args.out == DEFAULT_OUT else args.out
        arrays = experiments(steps)
        log = [
            f"{key.removesuffix('.val_losses')}: validation {losses[0]:.3f} → {losses.min():.3f} (best), "
            f"{losses[-1]:.3f} (last)"
            for key, losses in arrays.items()
            if key.endswith(".val_losses")
        ]
        save(out, arrays, steps or SCALE_SETTINGS.steps, float(arrays["seconds"]), log)
        return
    arrays = committed_run(args.steps)
    loss, validation = arrays["run.losses"], arrays["run.val_losses"]
    log = [f"training loss: {loss[:10].mean():.3f} (first 10 steps), {loss[-50:].mean():.3f} (last 50)"]
    log += [
        f"validation loss at step {int(step):5d}: {value:.3f}"
        for step, value in zip(arrays["run.eval_steps"], validation, strict=True)
    ]
    save(args.out, arrays, args.steps, float(arrays["seconds"]), log)


if __name__ == "__main__":
    main()
