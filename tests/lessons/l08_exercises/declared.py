"""What lesson 08's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number with a
#: tolerance, and why.
NOT_NUMERIC = {
    "checks.check_operation_counts": "whole counts compared exactly",
    "masks.check_causal_mask": "a mask of booleans or 0/−∞, compared exactly",
    "masks.check_padding_mask": "a mask of booleans or 0/−∞, compared exactly",
}
