"""Every public numeric function, called with odd arguments: a right answer or a clear error.

"Clear" here means what a learner needs: a ``ValueError`` or ``TypeError`` raised by attnlib itself
(the innermost frame of the traceback is in attnlib, not deep inside NumPy or PyTorch), and no
warning on the way. "Right" can only be checked loosely for arbitrary arguments: every float in
the result is finite (or ``-inf``, a masked score). The named cases of ``test_bad_input.py`` check
the messages; this file checks that no combination slips through.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_lessons
import attnlib
from attention_lessons.l01_embeddings import similarity
from attention_lessons.l04_scaling import scaling
from attnlib import core, counting, projection

#: Where a check of ours may raise: attnlib, or a lesson's analysis code in attention_lessons/.
OURS = {Path(package.__file__).resolve().parent for package in (attnlib, attention_lessons)}

ODD = [
    None, True, 0, 1, -1, 2, 10**400, 2.5, math.nan, math.inf, -math.inf, 1e308, 1e-320, "x",
    [], [[]], [1.0], [[1.0, 2.0]], [[1.0, 2.0], [3.0]], [[1e200, 1e200]], [[1e-200, 1e-200]],
    [[10**30, 1]], [[10**400, 1]],
    np.ones((2, 2)), np.full((2, 2), 3e38, np.float32), np.ones((2, 2), np.float16),
    np.full((2, 2), 255, np.uint8), np.ones((2, 2), bool), np.ones((2, 2), complex), np.array(1.0),
    np.zeros((0, 2)), np.zeros((2, 0)), np.full((2, 2), -np.inf), np.array([[np.nan, 1.0]]),
    np.ones((2, 2, 2)), np.ones(2), np.array([[1e308, -1e308]]), np.array([[0.5, 0.5]]),
    np.array([[2.0, -1.0]]), np.full((2, 2), np.longdouble(10) ** 400), np.float32(0.5), np.int64(3),
]  # fmt: skip
try:
    import torch
except ImportError:  # the PyTorch cases run where torch is installed
    pass
else:
    ODD += [torch.ones(2, 2, requires_grad=True), torch.ones(2, 2), torch.tensor(0.5)]

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
    "entropy": (scaling.entropy, 2),
    "softmax_jacobian": (scaling.softmax_jacobian, 1),
    "softmax_jacobian_norm": (scaling.softmax_jacobian_norm, 1),
    "random_queries_keys": (lambda d_k, seed: scaling.random_queries_keys(d_k, 1, 2, seed=seed), 2),
    "random_queries_keys-sizes": (lambda n_q, n_k: scaling.random_queries_keys(2, n_q, n_k), 2),
    "scaling_statistics": (lambda d_k: scaling.scaling_statistics(d_k, n_queries=2, n_keys=2), 1),
    "similarity": (similarity.similarity, 2),
    "project": (projection.project, 2),
    "qkv": (lambda X, W: projection.qkv(X, W, W, W), 2),
}


def _finite(result: object) -> bool:
    """Every float in ``result`` is finite or -inf (a masked score)."""
    if isinstance(result, np.ndarray):
        return result.dtype.kind != "f" or bool(np.all(np.isfinite(result) | np.isneginf(result)))
    if isinstance(result, float):
        return math.isfinite(result)
    if isinstance(result, tuple):
        return all(_finite(item) for item in result)
    if hasattr(result, "__dataclass_fields__"):
        return all(_finite(getattr(result, name)) for name in result.__dataclass_fields__)
    return True


@functools.cache
def _ours(filename: str) -> bool:
    """Whether ``filename`` is attnlib's or the course's code (resolved once per file: 90,000 calls
    raise)."""
    return bool(OURS & set(Path(filename).resolve().parents))


def answer_or_clear_error(call: Callable[..., object], *args: object) -> None:
    """Call; a result must be finite, an error must be ValueError/TypeError raised by us."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            result = call(*args)
        except (ValueError, TypeError) as exc:
            frame = exc.__traceback__
            while frame.tb_next is not None:
                frame = frame.tb_next
            where = frame.tb_frame.f_code.co_filename
            assert _ours(where), f"{type(exc).__name__} raised in {where}, not by us: {exc}"
            return
    assert _finite(result), f"a non-finite result {result!r}"


def every_odd_combination(name: str, call: Callable[..., object], n_args: int) -> None:
    """Call ``call`` with every combination of ``n_args`` odd arguments; the first that gives
    neither a finite answer nor a clear error fails, named ``name(arguments)``."""
    for args in itertools.product(ODD, repeat=n_args):
        try:
            answer_or_clear_error(call, *args)
        except AssertionError as failure:
            raise AssertionError(f"{name}{tuple(args)!r}: {failure}") from None


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
    """From 5e-324 to 1.8e308: attention, the counted loops and the similarity never go wrong silently."""
    K = K[:, : Q.shape[1]] if K.shape[1] >= Q.shape[1] else np.resize(K, (K.shape[0], Q.shape[1]))
    answer_or_clear_error(lambda: core.attention_steps(Q, K, K, scale=scale))
    answer_or_clear_error(lambda: counting.counted_attention(Q, K, K))
    answer_or_clear_error(lambda: counting.counted_attention(Q, K, K, stable=False))
    answer_or_clear_error(lambda: similarity.similarity(Q[0], K[0]))
    answer_or_clear_error(lambda: scaling.entropy(Q))
    answer_or_clear_error(lambda: scaling.softmax_jacobian_norm(K))
