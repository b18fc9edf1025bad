"""Lesson 18's committed runs: the long run of its GPT, and the experiments on overfitting and scale.

``tools/train_gpt.py`` wrote both files (its docstring says how); each is read from the package
with its SHA-256 checked (:mod:`attention_lessons.kit.committed`), so that a lesson opened alone
reads them too and a changed file is refused.

- :func:`load_run`: the committed model (config, float32 parameters) and its curves;
- :func:`load_experiments`: the curves of the overfitting variants and of the three sizes;
- :func:`model_config`: the lesson's model for a vocabulary (the script trains it).
"""

from __future__ import annotations

import ast
import io
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from attention_lessons.kit.committed import read_committed
from attnlib.decoder import DecoderConfig, check_parameters, parameter_shapes
from attnlib.decoder.config import as_mapping

__all__ = [
    "EXPERIMENTS_SHA256",
    "MACHINE",
    "RUN_SHA256",
    "Curves",
    "Experiments",
    "Run",
    "Size",
    "experiments_from_arrays",
    "load_experiments",
    "load_run",
    "model_config",
    "run_from_arrays",
]

PACKAGE = "attention_lessons.l18_training_gpt"
SCRIPT = "tools/train_gpt.py"
RUN_FILE = "gpt_run.npz"
EXPERIMENTS_FILE = "gpt_experiments.npz"
#: The files' SHA-256, as ``tools/train_gpt.py`` printed them.
RUN_SHA256 = "a9cd18855170fb20b4a54b7ca02f9c5c1fc8762a0cd7566f20670294fb4da13c"
EXPERIMENTS_SHA256 = "42d29551c8ffcd96484ce7f664644330fc66099ac31559bfee768092d0608a60"
#: The CPU both were made on, as the script printed it (one thread each, both at once, on 2 cores
#: shared with other work).
MACHINE = "a 2-core AMD EPYC virtual machine (OpenBLAS's SkylakeX kernels, AVX-512)"
#: The lesson's model: 4 layers of 4 heads, a residual stream of 128, 128 positions.
N_CTX, D_MODEL, N_HEADS, N_LAYERS = 128, 128, 4, 4
_CONFIG_FIELDS = ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_mlp")


def model_config(
    vocab_size: int, *, d_model: int = D_MODEL, n_heads: int = N_HEADS, n_layers: int = N_LAYERS
) -> DecoderConfig:
    """The lesson's GPT for ``vocab_size`` tokens: pre-LN, an MLP four times as wide, RoPE.

    Lesson 18 · 3. The model (``tools/train_gpt.py`` trains it, and smaller ones for section 8).
    """
    return DecoderConfig(
        vocab_size=vocab_size,
        n_ctx=N_CTX,
        d_model=d_model,
        n_heads=n_heads,
        n_layers=n_layers,
        d_mlp=4 * d_model,
        layer_norm=True,
        positions="rope",
    )


@dataclass(frozen=True)
class Curves:
    """One run's losses.

    Attributes
    ----------
    losses : (steps,)
        Each step's batch loss, before its update.
    eval_steps : (n_evals,) int
    train_losses, val_losses : (n_evals,)
        The loss on fixed windows of the training text and of *Hamlet* at those steps, no dropout.
    """

    losses: np.ndarray
    eval_steps: np.ndarray
    train_losses: np.ndarray
    val_losses: np.ndarray


def _curves(arrays: Mapping[str, np.ndarray], prefix: str) -> Curves:
    return Curves(*(np.asarray(arrays[f"{prefix}.{name}"]) for name in Curves.__dataclass_fields__))


@dataclass(frozen=True)
class Run(Curves):
    """The committed long run: its model, settings and curves.

    Lesson 18 · 6. The long run.
    """

    config: DecoderConfig = field(kw_only=True)
    params: dict[str, np.ndarray] = field(kw_only=True, repr=False)
    settings: dict[str, float] = field(kw_only=True)
    learning_rates: np.ndarray = field(kw_only=True, repr=False)
    grad_norms: np.ndarray = field(kw_only=True, repr=False)
    seconds: float = field(kw_only=True)
    machine: str = field(kw_only=True, default=MACHINE)

    @property
    def minutes(self) -> float:
        """The run's wall time, in minutes."""
        return self.seconds / 60


def run_from_arrays(arrays: Mapping[str, np.ndarray]) -> Run:
    """A :class:`Run` from the arrays ``tools/train_gpt.py`` saves."""
    arrays = as_mapping(arrays)
    config = DecoderConfig(
        **{name: np.asarray(arrays[f"config.{name}"]).item() for name in _CONFIG_FIELDS},
        layer_norm=np.asarray(arrays["config.layer_norm"]).item(),
        positions=str(arrays["config.positions"]),
    )
    params = {name.removeprefix("param."): arrays[name] for name in arrays if name.startswith("param.")}
    settings = {
        name.removeprefix("setting."): arrays[name].item() for name in arrays if name.startswith("setting.")
    }
    curves = _curves(arrays, "run")
    return Run(
        *(getattr(curves, name) for name in Curves.__dataclass_fields__),
        config=config,
        params=check_parameters(config, params),
        settings=settings,
        learning_rates=np.asarray(arrays["learning_rates"]),
        grad_norms=np.asarray(arrays["grad_norms"]),
        seconds=float(arrays["seconds"]),
    )


def load_run() -> Run:
    """The committed long run, its SHA-256 checked against :data:`RUN_SHA256`.

    Lesson 18 · 6. The long run.
    """
    raw = read_committed(PACKAGE, RUN_FILE, RUN_SHA256, SCRIPT)
    with np.load(io.BytesIO(raw)) as arrays:
        return run_from_arrays(dict(arrays))


@dataclass(frozen=True)
class Size(Curves):
    """One model of the scaling experiment."""

    d_model: int = field(kw_only=True)
    n_heads: int = field(kw_only=True)
    n_layers: int = field(kw_only=True)
    parameters: int = field(kw_only=True)
    tokens: int = field(kw_only=True)

    @property
    def compute(self) -> float:
        """Training FLOPs by Kaplan et al.'s rule, ``6 · parameters · tokens``."""
        return 6.0 * self.parameters * self.tokens


@dataclass(frozen=True)
class Experiments:
    """The committed experiments.

    Lesson 18 · 7. Overfitting and · 8. Scale.

    Attributes
    ----------
    overfit : dict of str to Curves
        The variants by name (``"plain"``, ``"dropout"``, ``"weight decay"``, ``"both"``).
    variants : dict of str to dict
        What each variant changed in the settings.
    overfit_settings, scale_settings : dict
    slice_tokens : int
        The tokens of training text the overfitting runs train on.
    scale : list of Size
        The three sizes, smallest first.
    """

    overfit: dict[str, Curves]
    variants: dict[str, dict[str, float]]
    overfit_settings: dict[str, float]
    scale_settings: dict[str, float]
    slice_tokens: int
    scale: list[Size]


def experiments_from_arrays(arrays: Mapping[str, np.ndarray], vocab_size: int) -> Experiments:
    """:class:`Experiments` from the arrays ``tools/train_gpt.py --experiments`` saves."""
    arrays = as_mapping(arrays)
    variants = ast.literal_eval(str(arrays["overfit.variants"]))
    scale_settings = ast.literal_eval(str(arrays["scale.settings"]))
    tokens = scale_settings["steps"] * scale_settings["batch_size"] * N_CTX
    sizes = []
    for i in range(sum(1 for name in arrays if name.startswith("scale") and name.endswith(".d_model"))):
        shape = {name: int(arrays[f"scale{i}.{name}"]) for name in ("d_model", "n_heads", "n_layers")}
        config = model_config(vocab_size, **shape)
        parameters = sum(int(np.prod(s)) for s in parameter_shapes(config).values())
        curves = _curves(arrays, f"scale{i}")
        sizes.append(
            Size(
                *(getattr(curves, name) for name in Curves.__dataclass_fields__),
                **shape,
                parameters=parameters,
                tokens=tokens,
            )
        )
    return Experiments(
        {name: _curves(arrays, f"overfit.{name}") for name in variants},
        variants,
        ast.literal_eval(str(arrays["overfit.settings"])),
        scale_settings,
        int(arrays["overfit.slice"]),
        sizes,
    )


def load_experiments(vocab_size: int = 512) -> Experiments:
    """The committed experiments, their file's SHA-256 checked against :data:`EXPERIMENTS_SHA256`.

    Lesson 18 · 7. Overfitting and · 8. Scale.
    """
    raw = read_committed(PACKAGE, EXPERIMENTS_FILE, EXPERIMENTS_SHA256, SCRIPT)
    with np.load(io.BytesIO(raw)) as arrays:
        return experiments_from_arrays(dict(arrays), vocab_size)
