"""Every public numeric function of attnlib, called with odd arguments: a right answer or a clear error.

"Clear" here means what a learner needs: a ``ValueError`` or ``TypeError`` raised by attnlib itself
(the innermost frame of the traceback is in attnlib, not deep inside NumPy or PyTorch), and no
warning on the way. "Right" can only be checked loosely for arbitrary arguments: every float in
the result is finite (or ``-inf``, a masked score). The named cases of ``test_bad_input.py`` check
the messages; this file checks that no combination slips through. The odd values and the harness
are ``conftest``'s (:data:`conftest.ODD`, :func:`conftest.answer_or_clear_error`); the lessons'
own functions are swept in their test folders (``tests/lessons/lNN_slug/test_lNN_odd_arguments.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from conftest import answer_or_clear_error, every_odd_combination
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib import core, counting, projection

MATRIX = np.ones((2, 2))
SHAPE = counting.DecoderShape(n_layers=2, d_model=4, n_heads=2, d_mlp=0, vocab=3)
CALLS: dict[str, tuple[Callable[..., object], int]] = {
    "softmax": (core.softmax, 2),
    "default_scale": (core.default_scale, 1),
    "raw_scores": (core.raw_scores, 2),
    "scale_scores": (core.scale_scores, 2),
    "causal_mask": (core.causal_mask, 2),
    "causal_mask-window-sinks": (lambda w, s: core.causal_mask(3, window=w, sinks=s), 2),
    "apply_mask": (core.apply_mask, 2),
    "weighted_sum": (core.weighted_sum, 2),
    "attention": (core.scaled_dot_product_attention, 3),
    "attention-mask-scale": (
        lambda mask, scale: core.scaled_dot_product_attention(MATRIX, MATRIX, MATRIX, mask=mask, scale=scale),
        2,
    ),
    "attention-causal": (lambda c: core.attention_steps(MATRIX, MATRIX, MATRIX, causal=c), 1),
    "counted_attention": (counting.counted_attention, 3),
    "counted_attention-unstable": (lambda q, k, v: counting.counted_attention(q, k, v, stable=False), 3),
    "counted_attention-stable": (lambda s: counting.counted_attention(MATRIX, MATRIX, MATRIX, stable=s), 1),
    "operation_counts": (lambda n_q, n_k: counting.operation_counts(n_q, n_k, 2, 2), 2),
    "operation_counts-stable": (lambda s: counting.operation_counts(1, 2, 2, 2, stable=s), 1),
    "DecoderShape": (
        lambda L, d: counting.DecoderShape(n_layers=L, d_model=d, n_heads=1, d_mlp=0, vocab=2),
        2,
    ),
    "kv_cache_bytes": (lambda n, b: counting.kv_cache_bytes(SHAPE, n, bytes_per_number=b), 2),
    "kv_cache_bytes-window": (
        lambda w, s: counting.kv_cache_bytes(SHAPE, 9, bytes_per_number=2, window=w, sinks=s),
        2,
    ),
    "decoder_pass_multiplications": (lambda m, t: counting.decoder_pass_multiplications(SHAPE, m, t), 2),
    "generation_multiplications": (
        lambda n, p: counting.generation_multiplications(SHAPE, n, prompt=p, cache=True),
        2,
    ),
    "kv_cache_outgrows_weights": (
        lambda p, b: counting.kv_cache_outgrows_weights(SHAPE, parameters=p, bytes_per_number=b),
        2,
    ),
    "project": (projection.project, 2),
    "qkv": (lambda X, W: projection.qkv(X, W, W, W), 2),
}


@pytest.mark.parametrize("name", CALLS)
def test_every_combination_of_odd_arguments(name: str) -> None:
    every_odd_combination(name, *CALLS[name])


finite_floats = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3)), elements=finite_floats),
    arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3)), elements=finite_floats),
    st.sampled_from([None, 1.0, 1e-300, 1e300, -2.0]),
)
def test_any_finite_floats_in_attention(Q: np.ndarray, K: np.ndarray, scale: float | None) -> None:
    """From 5e-324 to 1.8e308: attention and the counted loops never go wrong silently (lessons 01 and
    04 sweep their similarity and entropy the same way)."""
    K = K[:, : Q.shape[1]] if K.shape[1] >= Q.shape[1] else np.resize(K, (K.shape[0], Q.shape[1]))
    answer_or_clear_error(lambda: core.attention_steps(Q, K, K, scale=scale))
    answer_or_clear_error(lambda: counting.counted_attention(Q, K, K))
    answer_or_clear_error(lambda: counting.counted_attention(Q, K, K, stable=False))
