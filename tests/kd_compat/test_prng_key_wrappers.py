"""The opt-in prng_key_wrappers patch: jax.random and flax take an object defining `__kd_prng_key__`.

A key wrapper here is a class of the test's own (kd_compat knows no kd): a pytree holding a key array, as
`kd.random.PRNGKey` is. Each test shows the refusal without the patch where it matters, the fix after
`enable()`, and the originals back after `disable()`. flax is optional (the compat matrix has none): its
tests branch on whether it is installed.
"""

import importlib.util
import json
import subprocess
import sys
import warnings

import kd_compat
import numpy as np
import pytest
from kd_compat._patches import PATCHES, prng_key_wrappers

jax = pytest.importorskip("jax")
jax_random_core = pytest.importorskip("jax._src.random.core")

NAME = "prng_key_wrappers"
HAS_FLAX = importlib.util.find_spec("flax") is not None
ABSTRACTIFICATION = "Triggering __jax_array__\\(\\) during abstractification is no longer supported"


@jax.tree_util.register_pytree_node_class
class Key:
    """A key wrapper as kd's: its key array in `.rng`, handed out by `__kd_prng_key__` (and `__jax_array__`),
    with the array's shape and dtype."""

    def __init__(self, rng):
        self.rng = rng

    shape = property(lambda self: self.rng.shape)
    dtype = property(lambda self: self.rng.dtype)
    ndim = property(lambda self: self.rng.ndim)

    def __kd_prng_key__(self):
        return self.rng

    def __jax_array__(self):
        return self.rng

    def tree_flatten(self):
        return [self.rng], None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(children[0])


def _key_check():
    return jax_random_core._check_prng_key


def _patch():
    (patch,) = [patch for patch in PATCHES if patch.name == NAME]
    return patch


def _enable(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # on jax 0.10.2 (and flax 0.12.8) it applies in full, silently
        return kd_compat.enable(NAME, **kwargs)


def test_without_the_patch_jax_random_refuses_a_key_wrapper():
    with pytest.raises(ValueError, match=ABSTRACTIFICATION):
        jax.random.uniform(Key(jax.random.PRNGKey(0)), (3,))


def test_enabled_jax_random_draws_with_the_wrapped_key():
    raw = jax.random.PRNGKey(0)
    _enable()
    key = Key(raw)
    np.testing.assert_array_equal(jax.random.uniform(key, (3,)), jax.random.uniform(raw, (3,)))
    np.testing.assert_array_equal(jax.random.normal(key, (2, 2)), jax.random.normal(raw, (2, 2)))
    np.testing.assert_array_equal(jax.random.split(key, 3), jax.random.split(raw, 3))
    np.testing.assert_array_equal(jax.random.fold_in(key, 7), jax.random.fold_in(raw, 7))
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(raw))


def test_enabled_jax_random_takes_a_wrapped_typed_key():
    typed = jax.random.key(3)
    _enable()
    np.testing.assert_array_equal(jax.random.bits(Key(typed), (2,)), jax.random.bits(typed, (2,)))


def test_enabled_jax_random_takes_the_wrapper_under_jit_and_vmap():
    raw = jax.random.PRNGKey(1)
    _enable()
    drawn = jax.jit(lambda key: jax.random.normal(key, (4,)))(Key(raw))
    np.testing.assert_array_equal(drawn, jax.random.normal(raw, (4,)))
    keys = jax.random.split(raw, 3)
    batch = jax.vmap(lambda key: jax.random.uniform(key))(Key(keys))
    np.testing.assert_array_equal(batch, jax.vmap(jax.random.uniform)(keys))


def test_enabled_jax_random_still_refuses_what_is_no_key():
    _enable()
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        jax.random.uniform(object())
    with pytest.raises(ValueError, match="accepts a single key"):
        jax.random.uniform(Key(jax.random.split(jax.random.PRNGKey(0), 2)))


def test_disable_puts_the_original_back_and_jax_refuses_again():
    original = _key_check()
    _enable()
    assert _key_check() is not original
    status = kd_compat.disable(NAME)
    assert _key_check() is original
    assert (status.applied, status.checked, status.enabled_by) == (False, False, ())
    with pytest.raises(ValueError, match=ABSTRACTIFICATION):
        jax.random.uniform(Key(jax.random.PRNGKey(0)))


def test_enable_is_idempotent_per_owner():
    first = _enable()
    wrapped = _key_check()
    assert _enable() == first
    assert _key_check() is wrapped
    assert first.enabled_by == ("user",)
    kd_compat.disable(NAME)
    assert kd_compat.status()[NAME].applied is False


def test_the_patch_stays_while_any_owner_holds_it():
    original = _key_check()
    _enable(owner="kd.kauldron_alias")
    assert _enable().enabled_by == ("kd.kauldron_alias", "user")
    assert kd_compat.disable(NAME, owner="kd.kauldron_alias").applied is True
    jax.random.uniform(Key(jax.random.PRNGKey(0)))
    assert kd_compat.disable(NAME).applied is False
    assert _key_check() is original


def test_disable_by_an_owner_that_did_not_enable_changes_nothing():
    _enable()
    wrapped = _key_check()
    assert kd_compat.disable(NAME, owner="someone else").enabled_by == ("user",)
    assert _key_check() is wrapped


def test_undo_disables_it_for_every_owner():
    original = _key_check()
    _enable(owner="a")
    _enable(owner="b")
    kd_compat.undo()
    assert _key_check() is original
    assert kd_compat.status()[NAME].enabled_by == ()


def test_apply_leaves_the_opt_in_patch_alone():
    original = _key_check()
    status = kd_compat.apply()[NAME]
    assert _key_check() is original
    assert (status.opt_in, status.checked, status.applied) == (True, False, False)
    assert status.reason.endswith("opt-in: kd_compat.enable('prng_key_wrappers') installs it")


def test_status_after_enable_says_what_was_wrapped():
    status = _enable()
    assert (status.needed, status.applied, status.checked, status.opt_in) == (True, True, True, True)
    assert status.reason.startswith(
        "jax._src.random.core._check_prng_key unwraps objects defining __kd_prng_key__ (imported already"
    )
    if HAS_FLAX:
        assert "flax.core.scope._is_valid_rng" in status.reason
    else:
        assert status.reason.endswith("; flax is not installed")


def test_enable_and_disable_name_only_opt_in_patches():
    with pytest.raises(
        KeyError, match=r"no kd_compat patch 'key_wrappers'; the opt-in patches are \['prng_key_wrappers'\]"
    ):
        kd_compat.enable("key_wrappers")
    with pytest.raises(ValueError, match="'etils_jax_prng' is not opt-in"):
        kd_compat.enable("etils_jax_prng")
    with pytest.raises(ValueError, match="'etils_jax_prng' is not opt-in"):
        kd_compat.disable("etils_jax_prng")


def _versions(monkeypatch, **versions):
    """Makes the patch read these distribution versions (None: not installed) and the real ones otherwise."""
    real = prng_key_wrappers.installed_version
    monkeypatch.setattr(
        prng_key_wrappers,
        "installed_version",
        lambda name: versions[name] if name in versions else real(name),
    )


@pytest.mark.parametrize("jax_version", ["0.11.0", "0.10.1", "0.9.2"])
def test_a_jax_outside_the_verified_range_is_left_alone_with_a_warning(monkeypatch, jax_version):
    _versions(monkeypatch, jax=jax_version)
    original = _key_check()
    with pytest.warns(
        kd_compat.PatchSkippedWarning, match="'prng_key_wrappers' was enabled but was not applied"
    ):
        status = kd_compat.enable(NAME)
    assert _key_check() is original
    assert (status.needed, status.applied, status.enabled_by) == (False, False, ("user",))
    assert status.reason == (
        f"jax {jax_version} is not a version this patch was verified on (jax >=0.10.2,<0.11): jax.random is left alone"
    )
    kd_compat.disable(NAME)


def test_without_jax_nothing_is_patched(monkeypatch):
    _versions(monkeypatch, jax=None)
    with pytest.warns(kd_compat.PatchSkippedWarning, match="jax is not installed"):
        assert kd_compat.enable(NAME).applied is False


def test_a_flax_outside_the_verified_range_leaves_flax_alone_and_patches_jax(monkeypatch):
    _versions(monkeypatch, flax="0.13.0")
    with pytest.warns(
        kd_compat.PatchSkippedWarning, match="'prng_key_wrappers' was applied only in part: flax 0.13.0"
    ):
        status = kd_compat.enable(NAME)
    assert status.applied is True
    assert status.reason.endswith(
        "flax 0.13.0 is not a version this patch was verified on (flax >=0.12.8,<0.13): its init/apply still "
        "refuse key objects"
    )
    assert _patch().flax_installed() is False
    jax.random.uniform(Key(jax.random.PRNGKey(0)))


def test_a_missing_jax_function_is_a_no_op_with_a_message(monkeypatch):
    monkeypatch.delattr(jax_random_core, "_check_prng_key")
    with pytest.warns(kd_compat.PatchSkippedWarning, match="does not exist"):
        status = kd_compat.enable(NAME)
    assert status.applied is False
    assert status.reason == "nothing patched: jax._src.random.core._check_prng_key does not exist"
    assert not hasattr(jax_random_core, "_check_prng_key")


def _someone_elses_check(name, key, *, allow_batched=False):
    raise AssertionError("not to be called")


def test_someone_elses_key_check_is_left_alone(monkeypatch):
    monkeypatch.setattr(jax_random_core, "_check_prng_key", _someone_elses_check)
    with pytest.warns(kd_compat.PatchSkippedWarning, match="expected|found"):
        status = kd_compat.enable(NAME)
    assert _key_check() is _someone_elses_check
    assert status.applied is False
    assert f"found {__name__}._someone_elses_check" in status.reason


def test_disable_does_not_clobber_a_later_replacement():
    original = _key_check()
    _enable()
    jax_random_core._check_prng_key = _someone_elses_check
    try:
        kd_compat.disable(NAME)
        assert _key_check() is _someone_elses_check
    finally:
        jax_random_core._check_prng_key = original


_FRESH = """
import json, sys, warnings
warnings.simplefilter("error")
import kd_compat
status = kd_compat.enable("prng_key_wrappers")
report = {"loaded": [m for m in ("jax", "flax") if m in sys.modules], "applied": status.applied,
          "reason": status.reason}
import jax
from jax._src.random import core
@jax.tree_util.register_pytree_node_class
class Key:
    def __init__(self, rng): self.rng = rng
    def __kd_prng_key__(self): return self.rng
    def tree_flatten(self): return [self.rng], None
    @classmethod
    def tree_unflatten(cls, aux, children): return cls(children[0])
raw = jax.random.PRNGKey(0)
report["same"] = bool((jax.random.uniform(Key(raw), (3,)) == jax.random.uniform(raw, (3,))).all())
report["hooks"] = [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "AfterImport"]
report["own_loader"] = "exec_module" not in vars(core.__loader__) and core.__spec__.loader is core.__loader__
kd_compat.disable("prng_key_wrappers")
try:
    jax.random.uniform(Key(raw))
    report["refused_after_disable"] = False
except TypeError:
    report["refused_after_disable"] = True
print(json.dumps(report))
"""


def test_enable_before_jax_is_imported_imports_nothing_and_wraps_jax_on_its_import():
    completed = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert report.pop("reason").startswith(
        "jax._src.random.core._check_prng_key unwraps objects defining __kd_prng_key__ (not imported yet"
    )
    assert report == {
        "loaded": [],
        "applied": True,
        "same": True,
        "hooks": ["AfterImport"] if HAS_FLAX else [],  # flax's waits for flax
        "own_loader": True,
        "refused_after_disable": True,
    }


flax_only = pytest.mark.skipif(not HAS_FLAX, reason="flax is not installed (the compat matrix has none)")


def _linen_model(*, dropout=False):
    from flax import linen as nn

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.Dense(3)(x)
            return nn.Dropout(0.5, deterministic=False)(y) if dropout else y

    return MLP(), np.ones((2,), np.float32)


@flax_only
def test_without_the_patch_flax_init_refuses_a_key_wrapper():
    from flax import errors

    model, x = _linen_model()
    with pytest.raises(errors.InvalidRngError, match="RNGs should be of shape"):
        model.init(Key(jax.random.PRNGKey(0)), x)
    with pytest.raises(ValueError, match=r"should be a ``jax\.PRNGKey`` or a dictionary"):
        model.init({"params": Key(jax.random.PRNGKey(0))}, x)


@flax_only
def test_enabled_flax_init_takes_a_key_wrapper_as_it_takes_the_key():
    model, x = _linen_model()
    raw = jax.random.PRNGKey(0)
    _enable()
    expected = model.init(raw, x)
    jax.tree.map(np.testing.assert_array_equal, model.init(Key(raw), x), expected)
    jax.tree.map(np.testing.assert_array_equal, model.init({"params": Key(raw)}, x), expected)


@flax_only
def test_enabled_flax_apply_takes_key_wrappers_in_rngs():
    model, x = _linen_model(dropout=True)
    raw, dropout = jax.random.PRNGKey(0), jax.random.PRNGKey(1)
    _enable()
    variables = model.init({"params": raw, "dropout": dropout}, x)
    found = model.apply(variables, x, rngs={"dropout": Key(dropout)})
    np.testing.assert_array_equal(found, model.apply(variables, x, rngs={"dropout": dropout}))


@flax_only
def test_disable_puts_flax_back():
    from flax import errors
    from flax.core import scope

    original = scope._is_valid_rng
    _enable()
    assert scope._is_valid_rng is not original
    assert _patch().flax_installed() is True
    kd_compat.disable(NAME)
    assert scope._is_valid_rng is original
    model, x = _linen_model()
    with pytest.raises(errors.InvalidRngError):
        model.init(Key(jax.random.PRNGKey(0)), x)
