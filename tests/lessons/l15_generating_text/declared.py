"""What lesson 15's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l15_generating_text.text_model import load_text_model
from attention_lessons.l15_generating_text.widgets import GenerationExplorer, generation_explorer
from attnlib.counting import DecoderShape

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    GenerationExplorer: lambda style, request: generation_explorer(
        load_text_model(), ["a "], n_new=2, style=style
    ),
}


def _cache(unit: str, layers: int, kv: int, d_head: int, tokens: int, itemsize: int, batch: int = 1):
    shape = DecoderShape(
        n_layers=layers,
        d_model=4 * kv * d_head,
        n_heads=4 * kv,
        d_mlp=0,
        vocab=16,
        n_kv_heads=kv,
        d_head=d_head,
    )
    return (shape, tokens), {"bytes_per_number": itemsize, "batch": batch, "unit": unit}


#: tests/contracts/test_checks_scales.py: ``module.check`` of this lesson's folder → the exercise's
#: inputs ``(args, kwargs)`` after the answer, from small to large right answers.
CHECK_CASES = {
    "checks.check_kv_cache_bytes": [
        (args, {**kwargs, "decimals": d})
        for unit in ("bytes", "KiB", "MiB", "GiB")
        for args, kwargs in (
            _cache(unit, 1, 1, 2, 1, 2),
            _cache(unit, 2, 2, 8, 12, 4, batch=3),
            _cache(unit, 4, 2, 64, 1000, 2),
            _cache(unit, 32, 8, 128, 8192, 2, batch=16),
        )
        for d in (0, 2)
    ],
}

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_cached_scores": "a boolean pattern of scores",
    "grouping_checks.check_kv_head_of_query_heads": "head indices",
    "grouping_checks.check_query_heads_of_kv_head": "head indices",
}
