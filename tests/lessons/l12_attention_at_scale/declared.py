"""What lesson 12's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

from attention_lessons.l12_attention_at_scale.widgets import OnlineSoftmaxExplorer, online_softmax_explorer

#: tests/contracts/test_explorers.py: each explorer class of the lesson, made small in ``style``
#: (``request``: pytest's, for a fixture such as the real model's).
EXPLORERS = {
    OnlineSoftmaxExplorer: lambda style, request: online_softmax_explorer(style=style),
}


#: tests/contracts/test_checks_scales.py: ``module.check`` of this lesson's folder → the exercise's
#: inputs ``(args, kwargs)`` after the answer, from small to large right answers.
CHECK_CASES = {
    "checks.check_weights_memory": [
        ((n,), {"batch_heads": bh, "itemsize": item, "decimals": d})
        for n, bh in ((4, 1), (64, 2), (1024, 8), (65536, 32))
        for item in (4, 8)
        for d in (2, 4)
    ],
    "checks.check_rescale_factor": [
        ((m, m_new), {"decimals": d})
        for m, m_new in ((1.0, 1.5), (0.0, 2.0), (0.0, 8.0), (-3.0, 30.0))
        for d in (2, 4)
    ],
    "checks.check_skipped_blocks": [
        ((n, block), {}) for n, block in ((4, 4), (8, 4), (64, 8), (4096, 16), (10**6, 1))
    ],
}
