"""Checks of what a learner passes to an explorer: arrays of finite numbers, slider ranges, 2D embeddings."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import traitlets

from attnlib.validation import as_real_array

__all__ = ["embeddings_on_sliders", "real_array", "slider_range"]


def real_array(value: npt.ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float64 array of finite numbers (an explorer's state), or the error of
    :func:`attnlib.validation.as_real_array` naming ``name``."""
    return as_real_array(value, name, dtype=np.float64)


def slider_range(value_range: tuple[float, float], values: np.ndarray) -> tuple[float, float]:
    """Sliders' (low, high): ``value_range`` widened to whole numbers that hold every value.

    Parameters
    ----------
    value_range : (float, float)
        The range asked for; finite, low < high.
    values : numpy.ndarray
        The start values, which must lie on the sliders.
    """
    try:
        low, high = (float(v) for v in value_range)
    except (TypeError, ValueError) as error:
        raise ValueError(f"value_range must be two numbers (low, high), got {value_range!r}") from error
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"value_range must be finite with low < high, got {value_range!r}")
    return min(low, math.floor(float(values.min()))), max(high, math.ceil(float(values.max())))


def embeddings_on_sliders(value: object, n_tokens: int, low: float, high: float) -> list[list[float]]:
    """An ``embeddings`` trait value checked: ``n_tokens`` pairs ``[x, y]`` of finite numbers in
    ``[low, high]`` (the sliders' range), as a list of lists; else a :class:`traitlets.TraitError`."""
    X = np.asarray(value, dtype=np.float64)
    if X.shape != (n_tokens, 2):
        raise traitlets.TraitError(
            f"embeddings must be {n_tokens} pairs [x, y], one per token; got shape {X.shape}"
        )
    if not (np.isfinite(X).all() and (X >= low).all() and (X <= high).all()):
        raise traitlets.TraitError(
            f"embeddings must be finite numbers from value_min={low} to value_max={high}; got {X.tolist()}"
        )
    return X.tolist()
