"""What the two training scripts whose runs are committed share (``train_induction.py``, lesson 14;
``train_decoder.py``, lesson 15): their command line, how a decoder's config and the training
settings are saved, and the writing of the run with the SHA-256 and the CPU to commit beside it.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from machine import floating_point_path  # tools/machine.py

from attnlib.decoder import DecoderConfig

#: The config fields both runs save, as ``config.<name>``.
CONFIG_FIELDS = ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_mlp")


def command_line(doc: str, steps: int, out: Path) -> argparse.ArgumentParser:
    """The options ``--steps`` (default ``steps``) and ``--out`` (default ``out``), described by
    the first line of the script's ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--out", type=Path, default=out)
    return parser


def run_arrays(
    config: DecoderConfig, fields: Iterable[str], settings: Mapping[str, float]
) -> dict[str, np.ndarray]:
    """The first arrays of a saved run: ``config.<name>`` of :data:`CONFIG_FIELDS` and ``fields``,
    then ``setting.<name>`` of each training setting."""
    arrays = {f"config.{name}": np.array(getattr(config, name)) for name in (*CONFIG_FIELDS, *fields)}
    return arrays | {f"setting.{name}": np.array(value) for name, value in settings.items()}


def save(out: Path, arrays: Mapping[str, np.ndarray], steps: int, seconds: float, log: Iterable[str]) -> None:
    """Write ``arrays`` to ``out`` (compressed ``.npz``) and print what was written, the lines of
    ``log``, the file's SHA-256 and the CPU it was made on (commit both beside the file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(f"{steps} steps in {seconds:.1f} s; wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")
    for line in log:
        print(line)
    print(f"SHA-256 {hashlib.sha256(out.read_bytes()).hexdigest()}")
    print(f"made on {floating_point_path()}")
