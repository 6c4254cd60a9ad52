"""kd.testing (Kauldron's `kd.testing`): a config's train step checked abstractly; trees of the same leaf types."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest
import train_fixtures as lib


def test_assert_step_specs_traces_a_good_trainer_without_computing_or_compiling():
    trainer = lib.make_trainer(train_metrics={"l2": kd.metrics.Norm(tensor="preds")})
    kd.testing.assert_step_specs(trainer)
    assert trainer.trainstep.num_traces  # the step was traced...
    assert all(key[0] != "fused" for key in trainer.trainstep.num_traces)


def test_assert_step_specs_fails_on_a_key_the_batch_does_not_have():
    trainer = lib.make_trainer(train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.z")})
    with pytest.raises(Exception, match=r"batch\.z"):
        kd.testing.assert_step_specs(trainer)


def test_assert_trees_all_same_type_names_the_leaf_whose_type_differs():
    tree = {"a": jnp.zeros(2), "b": {"c": np.zeros(3)}}
    kd.testing.assert_trees_all_same_type(tree, jax.tree.map(lambda x: x + 1, tree))
    with pytest.raises(AssertionError, match=r"\['b'\]\['c'\]: ndarray != "):
        kd.testing.assert_trees_all_same_type(tree, {"a": tree["a"], "b": {"c": jnp.zeros(3)}})
    with pytest.raises(ValueError):  # another structure
        kd.testing.assert_trees_all_same_type(tree, {"a": tree["a"]})
