"""What lesson 18's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

_COMPARED = (
    "a function called on the exercise's inputs, its outputs compared within checks.RTOL (1e-6) of each "
    "output's largest entry"
)

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number rounded to
#: decimals, and why.
NOT_NUMERIC = {
    **{
        f"checks.{name}": _COMPARED
        for name in (
            "check_cross_entropy",
            "check_layer_norm_backward",
            "check_adamw_step",
            "check_learning_rate",
            "check_clip",
            "check_dropout_backward",
        )
    },
    "checks.check_decays": "True or False, compared exactly",
    "checks.check_batch": "a random function: properties of its draws (windows, shift, reach)",
    "checks.check_dropout": "a random function: properties of its masks (a binomial bound on the kept share)",
}
