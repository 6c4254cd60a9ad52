"""How closely a value computed by JAX can match a float64 reference on this backend.

    from precision import highest, rtol
    with highest():                     # matrix products in full float32, as on a CPU
        out = model.apply(params, x)
    np.testing.assert_allclose(out, reference, rtol=rtol(1e-6))

On a CPU, float32 matrix products and transcendentals (exp, log, sqrt) agree with float64 to about seven
digits. On a TPU, JAX's default matrix-product precision rounds the operands to bfloat16 (about three digits):
tests that compare a model's output with a reference state `highest()`. Its exp, log and sqrt agree to about
five digits: `rtol(cpu)` is the CPU's tolerance there, and at least `ACCELERATOR_RTOL` elsewhere.
"""

from __future__ import annotations

import jax

ON_CPU = jax.default_backend() == "cpu"
ACCELERATOR_RTOL = 1e-4


def highest() -> object:
    """A context in which matrix products run at full float32 precision (functions traced in it too)."""
    return jax.default_matmul_precision("highest")


def rtol(cpu: float) -> float:
    """The relative tolerance to compare with a float64 reference: `cpu` on a CPU, else at least 1e-4."""
    return cpu if ON_CPU else max(cpu, ACCELERATOR_RTOL)
