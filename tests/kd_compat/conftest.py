"""Every kd_compat test starts from the unpatched state and leaves the state it found."""

import importlib.metadata
import sys

import kd_compat
import pytest


def _etils_is_affected() -> bool:
    # Worked out independently of kd_compat._versions, so a bug there cannot hide here.
    try:
        version = importlib.metadata.version("etils")
    except importlib.metadata.PackageNotFoundError:
        return False
    return version.split(".")[:2] == ["1", "14"]


ETILS_AFFECTED = _etils_is_affected()


@pytest.fixture
def etils_affected() -> bool:
    """True when the installed etils is 1.14.x (it reads jax._src.prng), False for any other etils."""
    return ETILS_AFFECTED


def _etils_predicate():
    # Looked up without importing etils, so tests that never touch etils stay free of it.
    module = sys.modules.get("etils.enp.array_spec")
    return None if module is None else module._is_jax_random_dtype


@pytest.fixture(autouse=True)
def unpatched():
    """Undo kd_compat before the test; afterwards undo again, re-apply if it had been applied and re-enable
    the opt-in patches for whoever had enabled them (the kauldron alias, in a whole-suite run).

    Also fails a test that leaves etils's predicate or JAX's key check replaced behind kd_compat's back.
    """
    before = kd_compat.status().values()
    was_applied = any(patch.checked for patch in before if not patch.opt_in)
    enabled = {patch.name: patch.enabled_by for patch in before if patch.opt_in}
    kd_compat.undo()
    original = _etils_predicate()
    original_key_check = _jax_key_check()
    yield
    kd_compat.undo()
    if original is not None:
        assert _etils_predicate() is original, "the test left etils.enp.array_spec patched"
    if original_key_check is not None:
        assert _jax_key_check() is original_key_check, "the test left jax's key check patched"
    if was_applied:
        kd_compat.apply()
    for name, owners in enabled.items():
        for owner in owners:
            kd_compat.enable(name, owner=owner)


def _jax_key_check():
    module = sys.modules.get("jax._src.random.core")
    return None if module is None else module._check_prng_key
