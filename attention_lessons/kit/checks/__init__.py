"""Self-checks for exercises: say what is right, or name the mistake, never the answer.

Each check takes a learner's answer and the exercise's inputs, recomputes the right answer with
attnlib, and returns a :class:`CheckResult`. When the answer is wrong, the check goes through its
table of mistakes (:class:`Mistake` rows: here :data:`ATTENTION_MISTAKES` and :data:`SCALE_MISTAKES`,
the checks of attention by hand that lessons 04, 05, 08 and 09 share; each lesson's own tables in
its folder's ``checks.py``, such as lesson 08's ``COUNT_MISTAKES`` and ``CAUSAL_MISTAKES``, lesson
10's ``SINUSOIDAL_MISTAKES`` or lesson 15's ``CACHE_MISTAKES``): each row
*makes* its mistake on the exercise's inputs (the softmax over the wrong axis, the scale after the
softmax, ``K`` used for ``V``, ...) and, when the result equals the learner's answer, the message
names that mistake. Messages never show a number of the right answer, so the learner can try
again. End a notebook cell with a check to see its verdict:

>>> from attention_lessons.kit import checks
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

Numbers computed by hand are compared with a tolerance that follows the decimals asked and the
size of the right answer: ``decimals=2`` accepts an answer less than ``0.01`` from attnlib's (the
right answer rounded or cut off to 2 decimals passes), unless the right answer is so small that 2
decimals keep fewer than two of its significant digits: then the answer must be that close at its
second significant digit (right 0.0047: give 0.0047; 0.00, 0, half or double it are refused). An
array is compared entry by entry at the scale of its largest entry. See
:func:`attention_lessons.kit.checks.values.number_verdict`.
"""

from attention_lessons.kit.checks.attention import ATTENTION_MISTAKES, check_attention
from attention_lessons.kit.checks.heads import check_head_scale
from attention_lessons.kit.checks.mistakes import Mistake
from attention_lessons.kit.checks.result import CheckResult
from attention_lessons.kit.checks.scale import SCALE_MISTAKES, check_scale
from attention_lessons.kit.checks.values import check_shape, check_value

__all__ = [
    "ATTENTION_MISTAKES",
    "SCALE_MISTAKES",
    "CheckResult",
    "Mistake",
    "check_attention",
    "check_head_scale",
    "check_scale",
    "check_shape",
    "check_value",
]
