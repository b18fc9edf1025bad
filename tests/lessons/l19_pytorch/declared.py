"""What lesson 19's tests give the central contracts (read by ``declared`` in tests/conftest.py)."""

from __future__ import annotations

_MODULE = (
    "a class built, loaded with lesson 18's weights and run by the check: its outputs compared with "
    "attnlib's in float64 within checks.RTOL64 (1e-10) of the largest entry (and the GPT's in float32 within "
    "checks.float32_bound)"
)

_SMOLLM2_MODULE = (
    "a class made as llama_from makes it, loaded with seeded float32 weights and run by the check: its "
    "outputs compared with attnlib's NumPy within llama_checks.RTOL (1e-4) of the largest entry"
)

#: tests/contracts/test_checks_scales.py: this lesson's checks that compare no number rounded to
#: decimals, and why.
NOT_NUMERIC = {
    "checks.check_attention": _MODULE,
    "checks.check_gpt": _MODULE,
    "checks.check_evaluate": (
        "a function run on the check's model: how it ran it (dropout, grad mode) seen by a hook, and the "
        "float it returns compared with attnlib's loss within checks.PARAMS_RTOL (1e-9)"
    ),
    "checks.check_train_step": (
        "a function run for two steps on the check's model and optimiser: what step() saw, seen by a hook, "
        "the losses and every parameter compared with attnlib's within checks.PARAMS_RTOL (1e-9)"
    ),
    "llama_checks.check_rms_norm": _SMOLLM2_MODULE,
    "llama_checks.check_llama_attention": _SMOLLM2_MODULE,
    "llama_checks.check_lora": (
        "a class made around a float64 nn.Linear and run by the check: its parameters' shapes, flags and "
        "start read exactly, its outputs and B's gradient compared with NumPy's within "
        "llama_checks.LORA_RTOL (1e-9)"
    ),
}
