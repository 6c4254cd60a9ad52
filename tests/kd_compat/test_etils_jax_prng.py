"""The etils_jax_prng patch, as users meet it: enp.ArraySpec and etree.spec_like with JAX imported.

Under etils 1.14.x these tests first show the failure without the patch, then that apply() fixes it;
under any other etils they show that etils works either way and apply() changes nothing.
"""

import kd_compat
import numpy as np
import pytest
from etils import enp, etree
from etils.enp import array_spec

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

JAX_PRIVATE_REACH = r"module 'jax\._src' has no attribute 'prng'"


def _key_dtype():
    return jax.random.key(0).dtype


def _trainer_batch():
    """What a trainer hands etree.spec_like at start-up: JAX and numpy arrays plus PRNG keys."""
    return {
        "image": jnp.ones((8, 4, 4, 3), jnp.float32),
        "label": np.zeros((8,), np.int32),
        "mask": jnp.zeros((8,), jnp.bool_),
        "rng": jax.random.key(0),
        "rngs": jax.random.split(jax.random.key(1), 8),
    }


# (shape, dtype) per leaf; ArraySpecs themselves cannot be built at import time under etils 1.14.
TRAINER_BATCH_SPEC = {
    "image": ((8, 4, 4, 3), np.dtype(np.float32)),
    "label": ((8,), np.dtype(np.int32)),
    "mask": ((8,), np.dtype(np.bool_)),
    "rng": ((), np.dtype(np.uint32)),
    "rngs": ((8,), np.dtype(np.uint32)),
}


def _shapes_and_dtypes(specs):
    assert all(isinstance(spec, enp.ArraySpec) for spec in specs.values())
    return {name: (spec.shape, spec.dtype) for name, spec in specs.items()}


def test_key_dtype_is_a_public_jax_prng_key_dtype():
    assert jax.dtypes.issubdtype(_key_dtype(), jax.dtypes.prng_key)


@pytest.mark.parametrize("dtype", [np.float32, "float32", jnp.float32], ids=["np", "str", "jnp"])
def test_float_array_spec_without_patch_fails_only_on_affected_etils(dtype, etils_affected):
    if etils_affected:
        with pytest.raises(AttributeError, match=JAX_PRIVATE_REACH):
            enp.ArraySpec((2,), dtype)
    else:
        assert enp.ArraySpec((2,), dtype).dtype == np.float32


def test_key_array_spec_without_patch_fails_only_on_affected_etils(etils_affected):
    if etils_affected:
        with pytest.raises(AttributeError, match=JAX_PRIVATE_REACH):
            enp.ArraySpec((2,), _key_dtype())
    else:
        assert enp.ArraySpec((2,), _key_dtype()).dtype == np.dtype(object)


@pytest.mark.parametrize(
    "dtype", [np.float32, "float32", jnp.float32, np.int8], ids=["np", "str", "jnp", "int8"]
)
def test_plain_array_spec_works_after_apply(dtype):
    kd_compat.apply()
    spec = enp.ArraySpec((2,), dtype)
    assert (spec.shape, spec.dtype) == ((2,), np.dtype(dtype))


def test_key_array_spec_works_after_apply():
    kd_compat.apply()
    spec = enp.ArraySpec((2,), _key_dtype())
    assert (spec.shape, spec.dtype) == ((2,), np.dtype(object))


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg", "unsafe_rbg"])
def test_key_dtypes_are_still_recognised_after_apply(impl):
    kd_compat.apply()
    assert array_spec._is_jax_random_dtype(jax.random.key(0, impl=impl).dtype) is True


@pytest.mark.parametrize(
    "dtype",
    [np.dtype(np.float32), np.dtype(np.uint32), jnp.bfloat16, "float32", None],
    ids=["float32", "uint32", "bfloat16", "str", "none"],
)
def test_non_key_dtypes_are_not_taken_for_keys_after_apply(dtype):
    kd_compat.apply()
    assert array_spec._is_jax_random_dtype(dtype) is False


def test_legacy_uint32_key_is_not_a_key_dtype_after_apply():
    kd_compat.apply()
    assert array_spec._is_jax_random_dtype(jax.random.PRNGKey(0).dtype) is False


def test_spec_like_of_a_trainer_batch_without_patch_fails_only_on_affected_etils(etils_affected):
    if etils_affected:
        with pytest.raises(AttributeError, match=JAX_PRIVATE_REACH):
            etree.spec_like(_trainer_batch())
    else:
        assert _shapes_and_dtypes(etree.spec_like(_trainer_batch())) == TRAINER_BATCH_SPEC


def test_spec_like_of_a_trainer_batch_works_after_apply():
    kd_compat.apply()
    assert _shapes_and_dtypes(etree.spec_like(_trainer_batch())) == TRAINER_BATCH_SPEC


def test_spec_like_of_a_trainer_batch_works_under_jit_after_apply():
    kd_compat.apply()
    traced = {}

    @jax.jit
    def step(batch):
        traced.update(etree.spec_like(batch))
        return batch["image"].sum()

    step(_trainer_batch())
    assert _shapes_and_dtypes(traced) == TRAINER_BATCH_SPEC


def test_apply_does_not_change_array_specs_on_unaffected_etils(etils_affected):
    if etils_affected:
        assert kd_compat.apply()["etils_jax_prng"].applied is True
    else:
        before = etree.spec_like(_trainer_batch())
        key_spec = enp.ArraySpec((3,), _key_dtype())
        assert kd_compat.apply()["etils_jax_prng"].applied is False
        after = etree.spec_like(_trainer_batch())
        assert after == before
        assert _shapes_and_dtypes(after) == TRAINER_BATCH_SPEC
        assert enp.ArraySpec((3,), _key_dtype()) == key_spec
