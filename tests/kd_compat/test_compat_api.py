"""apply(), status() and undo(): bookkeeping, idempotency, thread-safety, refusing unexpected targets."""

import threading
import warnings

import kd_compat
import pytest
from etils.enp import array_spec


def _etils_function():
    return array_spec._is_jax_random_dtype


def test_status_lists_every_patch_with_what_it_fixes():
    statuses = kd_compat.status()
    assert list(statuses) == ["etils_jax_prng", "prng_key_wrappers"]
    assert [name for name, patch in statuses.items() if patch.opt_in] == ["prng_key_wrappers"]
    patch = statuses["etils_jax_prng"]
    assert patch.name == "etils_jax_prng"
    assert "ArraySpec" in patch.breaks
    assert patch.affected == "etils >=1.14.0,<1.15.0 with JAX installed"


def test_status_before_apply_is_unchecked_and_unapplied(etils_affected):
    patch = kd_compat.status()["etils_jax_prng"]
    assert (patch.checked, patch.applied, patch.needed) == (False, False, etils_affected)
    if etils_affected:
        assert patch.reason.endswith("apply() has not run yet")
    else:
        assert "is not affected" in patch.reason


def test_status_after_apply_matches_the_installed_etils(etils_affected):
    patch = kd_compat.apply()["etils_jax_prng"]
    assert (patch.checked, patch.needed, patch.applied) == (True, etils_affected, etils_affected)
    if etils_affected:
        assert patch.reason.startswith("replaced etils.enp.array_spec._is_jax_random_dtype")
    else:
        assert patch.reason.startswith("etils 1.15")
        assert "is not affected" in patch.reason


def test_apply_returns_what_status_reports():
    assert kd_compat.apply() == kd_compat.status()


def test_apply_replaces_the_function_only_on_affected_etils(etils_affected):
    original = _etils_function()
    kd_compat.apply()
    assert (_etils_function() is not original) is etils_affected


def test_undo_restores_the_original_function():
    original = _etils_function()
    kd_compat.apply()
    kd_compat.undo()
    assert _etils_function() is original
    assert kd_compat.status()["etils_jax_prng"].applied is False


def test_apply_twice_keeps_the_first_original():
    original = _etils_function()
    first = kd_compat.apply()
    patched = _etils_function()
    second = kd_compat.apply()
    assert second == first
    assert _etils_function() is patched
    kd_compat.undo()
    assert _etils_function() is original


def test_apply_after_undo_applies_again(etils_affected):
    kd_compat.apply()
    kd_compat.undo()
    assert kd_compat.apply()["etils_jax_prng"].applied is etils_affected


def test_concurrent_apply_saves_the_real_original(etils_affected):
    original = _etils_function()
    start = threading.Barrier(8)
    results = []

    def apply_together():
        start.wait()
        results.append(kd_compat.apply()["etils_jax_prng"])

    threads = [threading.Thread(target=apply_together) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8
    assert all(result == results[0] for result in results)
    assert results[0].applied is etils_affected
    kd_compat.undo()
    assert _etils_function() is original


def _someone_elses_predicate(dtype):
    return False


def test_apply_leaves_an_unexpected_function_alone(monkeypatch, etils_affected):
    monkeypatch.setattr(array_spec, "_is_jax_random_dtype", _someone_elses_predicate)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        patch = kd_compat.apply()["etils_jax_prng"]
    assert _etils_function() is _someone_elses_predicate
    assert patch.applied is False
    assert patch.needed is etils_affected
    if etils_affected:
        assert [w.category for w in caught] == [kd_compat.PatchSkippedWarning]
        assert "expected etils's own function, but found" in patch.reason
        assert "_someone_elses_predicate" in patch.reason
    else:
        assert caught == []


def test_skipped_patch_warning_points_at_the_caller(monkeypatch, etils_affected):
    monkeypatch.setattr(array_spec, "_is_jax_random_dtype", _someone_elses_predicate)
    if etils_affected:
        with pytest.warns(
            kd_compat.PatchSkippedWarning, match="'etils_jax_prng' is needed but was not applied"
        ) as w:
            kd_compat.apply()
        assert w[0].filename == __file__
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            kd_compat.apply()


def test_undo_does_not_clobber_a_later_replacement():
    original = _etils_function()
    kd_compat.apply()
    array_spec._is_jax_random_dtype = _someone_elses_predicate
    try:
        kd_compat.undo()
        assert _etils_function() is _someone_elses_predicate
    finally:
        array_spec._is_jax_random_dtype = original
