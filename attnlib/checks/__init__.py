"""Self-checks for exercises: say what is right, or name the mistake, never the answer.

Each check takes a learner's answer and the exercise's inputs, recomputes the right answer with
attnlib, and returns a :class:`CheckResult`. When the answer is wrong, the check goes through its
table of mistakes (:data:`ATTENTION_MISTAKES`, :data:`SCALE_MISTAKES`, :data:`COUNT_MISTAKES`,
:data:`CAUSAL_MISTAKES`, :data:`PADDING_MISTAKES`; lesson 10's :data:`SINUSOIDAL_MISTAKES`,
:data:`SHIFT_MISTAKES`, :data:`VALUE_ROTATION_MISTAKES`; lesson 11's
gradient tables in :mod:`attnlib.checks.gradients`; lesson 12's :data:`MEMORY_MISTAKES`,
:data:`RESCALE_MISTAKES`, :data:`SKIP_MISTAKES`; lesson 14's :data:`ROLE_MISTAKES`,
:data:`POSITION_MISTAKES`, :data:`NEXT_TOKEN_MISTAKES`; lesson 15's :data:`CACHE_MISTAKES`,
:data:`CACHED_SCORES_MISTAKES`, :data:`KV_HEAD_MISTAKES`, :data:`GROUP_MISTAKES`): each row
*makes* its mistake on the exercise's inputs (the softmax over the wrong axis, the scale after the
softmax, ``K`` used for ``V``, ...) and, when the result equals the learner's answer, the message
names that mistake. Messages never show a number of the right answer, so the learner can try
again. End a notebook cell with a check to see its verdict:

>>> from attnlib import checks
>>> checks.check_value(12, 12, name="n_q · n_k")
✔ Correct: n_q · n_k = 12.
>>> print(checks.check_shape((3, 2), (2, 3), axes=("n_q", "n_k")))
✘ Axes swapped: the sizes are right, the order is not; the shape is (n_q, n_k), in that order.

Two kinds of argument, two kinds of failure:

* the learner's *answer* is never trusted: ``None``, ``...`` (a placeholder), text, a wrong shape,
  a boolean or NaN give a failed :class:`CheckResult` that says what is wrong; anything holding
  the numbers (a list, a NumPy array, a torch tensor, a pandas Series) is read through NumPy;
* the exercise's own inputs (``Q``, ``K``, ``V``, ``n``, shapes, ``decimals``, ``mistakes``) are
  validated like everywhere in attnlib and raise ``ValueError`` or ``TypeError`` naming the
  argument.

Numbers computed by hand are compared with a tolerance: ``decimals=2`` accepts an answer within
``0.01`` of attnlib's, entry by entry.
"""

from attnlib.checks.attention import ATTENTION_MISTAKES, check_attention
from attnlib.checks.counts import COUNT_MISTAKES, COUNTING_CONVENTION, check_operation_counts
from attnlib.checks.generation import (
    CACHE_MISTAKES,
    CACHED_SCORES_MISTAKES,
    GROUP_MISTAKES,
    KV_HEAD_MISTAKES,
    check_cached_scores,
    check_kv_cache_bytes,
    check_kv_head_of_query_heads,
    check_query_heads_of_kv_head,
)
from attnlib.checks.gradients import (
    DIRECTION_MISTAKES,
    SOFTMAX_GRADIENT_MISTAKES,
    VALUE_GRADIENT_MISTAKES,
    check_score_direction,
    check_softmax_gradient,
    check_value_gradient,
)
from attnlib.checks.induction import (
    NEXT_TOKEN_MISTAKES,
    POSITION_MISTAKES,
    ROLE_MISTAKES,
    check_head_roles,
    check_induction_position,
    check_next_token,
)
from attnlib.checks.masks import CAUSAL_MISTAKES, PADDING_MISTAKES, check_causal_mask, check_padding_mask
from attnlib.checks.memory import (
    MEMORY_MISTAKES,
    RESCALE_MISTAKES,
    SKIP_MISTAKES,
    check_rescale_factor,
    check_skipped_blocks,
    check_weights_memory,
)
from attnlib.checks.mistakes import Mistake
from attnlib.checks.positions import (
    SHIFT_MISTAKES,
    SINUSOIDAL_MISTAKES,
    VALUE_ROTATION_MISTAKES,
    check_rotated_values,
    check_shifted_score,
    check_sinusoidal,
)
from attnlib.checks.result import CheckResult
from attnlib.checks.scale import SCALE_MISTAKES, check_scale
from attnlib.checks.values import check_shape, check_value

__all__ = [
    "ATTENTION_MISTAKES",
    "CACHED_SCORES_MISTAKES",
    "CACHE_MISTAKES",
    "CAUSAL_MISTAKES",
    "COUNTING_CONVENTION",
    "COUNT_MISTAKES",
    "DIRECTION_MISTAKES",
    "GROUP_MISTAKES",
    "KV_HEAD_MISTAKES",
    "MEMORY_MISTAKES",
    "NEXT_TOKEN_MISTAKES",
    "PADDING_MISTAKES",
    "POSITION_MISTAKES",
    "RESCALE_MISTAKES",
    "ROLE_MISTAKES",
    "SCALE_MISTAKES",
    "SHIFT_MISTAKES",
    "SINUSOIDAL_MISTAKES",
    "SKIP_MISTAKES",
    "SOFTMAX_GRADIENT_MISTAKES",
    "VALUE_GRADIENT_MISTAKES",
    "VALUE_ROTATION_MISTAKES",
    "CheckResult",
    "Mistake",
    "check_attention",
    "check_cached_scores",
    "check_causal_mask",
    "check_head_roles",
    "check_induction_position",
    "check_kv_cache_bytes",
    "check_kv_head_of_query_heads",
    "check_next_token",
    "check_operation_counts",
    "check_padding_mask",
    "check_query_heads_of_kv_head",
    "check_rescale_factor",
    "check_rotated_values",
    "check_scale",
    "check_score_direction",
    "check_shape",
    "check_shifted_score",
    "check_sinusoidal",
    "check_skipped_blocks",
    "check_softmax_gradient",
    "check_value",
    "check_value_gradient",
    "check_weights_memory",
]
