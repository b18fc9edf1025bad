"""The check of an explorer's ``embeddings`` trait: 2D embeddings that lie on the sliders."""

from __future__ import annotations

import numpy as np
import traitlets

__all__ = ["embeddings_on_sliders"]


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
