"""`kd.random.PRNGKey` itself in `jax.random` and flax: `import kd` patches nothing; kd_compat's opt-in
`prng_key_wrappers` patch is enabled by the first key a program makes (as Kauldron's keys are taken), by the
kauldron alias, or by the user, and refused again once disabled."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import kd
import kd_compat
import numpy as np
import pytest
from flax import errors
from flax import linen as nn
from kd_compat._patches.prng_key_wrappers import unwrap_prng_key

PATCH = "prng_key_wrappers"
ALIAS = "kd.kauldron_alias"
TEST = "tests/kd_train/test_random_key_wrappers"


class MLP(nn.Module):
    dropout: bool = False

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(3)(x)
        return nn.Dropout(0.5, deterministic=False)(y) if self.dropout else y


X = np.ones((4,), np.float32)


@pytest.fixture
def restored():
    """Leaves the kauldron alias and the patch's owners as the test found them."""
    alias_before = kd.kauldron_alias.is_installed()
    owners_before = kd_compat.status()[PATCH].enabled_by
    yield
    for owner in kd_compat.status()[PATCH].enabled_by:
        if owner not in owners_before:
            kd_compat.disable(PATCH, owner=owner)
    if alias_before:
        kd.kauldron_alias.install()
    else:
        kd.kauldron_alias.uninstall()
    for owner in owners_before:
        kd_compat.enable(PATCH, owner=owner)


@pytest.fixture
def enabled(restored):
    return kd_compat.enable(PATCH, owner=TEST)


def test_the_key_hands_its_key_array_to_kd_compat():
    key = kd.random.PRNGKey(0)
    assert key.__kd_prng_key__() is key.rng
    assert unwrap_prng_key(key) is key.rng
    assert unwrap_prng_key(key.rng) is key.rng


_IMPORT_KD = """
import json, kd, jax, kd_compat
import numpy as np
before = kd_compat.status()["prng_key_wrappers"].applied
key = kd.random.PRNGKey(0)
status = kd_compat.status()["prng_key_wrappers"]
drawn = np.array_equal(jax.random.uniform(key, (3,)), key.uniform((3,)))
kd_compat.disable("prng_key_wrappers", owner="kd.random")
try:
    jax.random.uniform(kd.random.PRNGKey(1))  # a later key leaves it off
    refused = None
except ValueError as error:
    refused = str(error).split(".")[0]
print(json.dumps({"before": before, "after": status.applied, "by": status.enabled_by, "drawn": drawn,
                  "refused": refused}))
"""


def test_import_kd_leaves_jax_alone_and_the_first_key_made_opts_in():
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORT_KD], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {
        "before": False,
        "after": True,
        "by": ["kd.random"],
        "drawn": True,
        "refused": "Triggering __jax_array__() during abstractification is no longer supported",
    }


def test_enabled_jax_random_draws_with_the_key_as_with_its_array(enabled):
    key = kd.random.PRNGKey(0)
    np.testing.assert_array_equal(jax.random.uniform(key, (5,)), key.uniform((5,)))
    np.testing.assert_array_equal(jax.random.normal(key, (2,)), jax.random.normal(key.rng, (2,)))
    np.testing.assert_array_equal(jax.random.split(key, 3), key.split(3).rng)
    np.testing.assert_array_equal(jax.random.fold_in(key, 2), key.fold_in(2).rng)


def test_enabled_jax_random_takes_the_key_under_jit(enabled):
    key = kd.random.PRNGKey(3)
    drawn = jax.jit(lambda key: jax.random.uniform(key, (3,)))(key)
    np.testing.assert_array_equal(drawn, key.uniform((3,)))


def test_enabled_flax_init_takes_the_key_as_it_takes_its_array(enabled):
    key = kd.random.PRNGKey(0).fold_in(1)
    expected = MLP().init(key.rng, X)
    jax.tree.map(np.testing.assert_array_equal, MLP().init(key, X), expected)
    jax.tree.map(np.testing.assert_array_equal, MLP().init({"params": key}, X), expected)


def test_enabled_flax_apply_takes_the_key_in_rngs(enabled):
    params, dropout = kd.random.PRNGKey(0).split()
    model = MLP(dropout=True)
    variables = model.init({"params": params.rng, "dropout": dropout.rng}, X)
    np.testing.assert_array_equal(
        model.apply(variables, X, rngs={"dropout": dropout}),
        model.apply(variables, X, rngs={"dropout": dropout.rng}),
    )


def test_disabled_flax_and_jax_refuse_the_key_again(enabled):
    for owner in kd_compat.status()[PATCH].enabled_by:  # the kauldron alias too, if a test left it installed
        kd_compat.disable(PATCH, owner=owner)
    with pytest.raises(errors.InvalidRngError, match="RNGs should be of shape"):
        MLP().init(kd.random.PRNGKey(0), X)
    with pytest.raises(ValueError, match="abstractification"):
        jax.random.uniform(kd.random.PRNGKey(0))


def test_the_kauldron_alias_enables_the_patch_and_uninstall_disables_it(restored):
    kd.kauldron_alias.uninstall()
    for owner in kd_compat.status()[PATCH].enabled_by:
        kd_compat.disable(PATCH, owner=owner)
    kd.kauldron_alias.install()
    assert kd_compat.status()[PATCH].enabled_by == (ALIAS,)
    from kauldron import random

    np.testing.assert_array_equal(
        jax.random.uniform(random.PRNGKey(0), (5,)), random.PRNGKey(0).uniform((5,))
    )
    MLP().init(random.PRNGKey(0).fold_in(1), X)
    kd.kauldron_alias.uninstall()
    status = kd_compat.status()[PATCH]
    assert (status.applied, status.enabled_by) == (False, ())


def test_uninstalling_the_alias_keeps_a_users_own_enable(restored):
    kd_compat.enable(PATCH, owner=TEST)
    kd.kauldron_alias.install()
    kd.kauldron_alias.uninstall()
    status = kd_compat.status()[PATCH]
    assert status.applied is True
    assert ALIAS not in status.enabled_by
    jax.random.uniform(kd.random.PRNGKey(0))


def test_install_if_possible_enables_the_patch(restored):
    kd.kauldron_alias.uninstall()
    assert kd.kauldron_alias.install_if_possible() is True
    assert ALIAS in kd_compat.status()[PATCH].enabled_by


_KD_TRAIN_START = """
import json, sys, kd
kd.kauldron_alias.install_if_possible()  # what kd-train does first
loaded = [m for m in ("jax", "flax") if m in sys.modules]
import numpy as np, jax
from flax import linen as nn
from kauldron import random
key = random.PRNGKey(0)
variables = nn.Dense(2).init(key, np.ones((3,), np.float32))
same = bool((jax.random.uniform(key, (3,)) == key.uniform((3,))).all())
print(json.dumps({"loaded": loaded, "same": same, "kernel": list(variables["params"]["kernel"].shape)}))
"""


def test_kauldron_code_in_a_kd_train_process_passes_its_keys_to_jax_and_flax():
    completed = subprocess.run(
        [sys.executable, "-c", _KD_TRAIN_START], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    # The alias imports neither JAX nor flax: each is wrapped on its import.
    assert json.loads(completed.stdout) == {"loaded": [], "same": True, "kernel": [3, 2]}
