"""How the Trainer calls a model: inputs from kontext keys (or the batch), collections, kd.nn modules."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest
import train_fixtures as lib
from flax import linen as nn


def _forward(trainer: kd.train.Trainer, state: kd.train.TrainState, *, is_training: bool) -> kd.train.Context:
    batch = jax.tree.map(jnp.asarray, trainer.train_ds.batch(0))
    return trainer.trainstep.forward(
        state.params, state.collections, batch, jnp.int32(0), is_training=is_training
    )


def test_module_without_keys_receives_the_batch():
    trainer = lib.make_trainer(model=lib.TakesBatch())
    state = trainer.init_state()
    expected = trainer.train_ds.batch(0)["x"] @ state.params["out"]["kernel"] + state.params["out"]["bias"]
    np.testing.assert_allclose(_forward(trainer, state, is_training=True).preds, expected, rtol=1e-5)


def test_batch_stats_move_while_training():
    trainer = lib.make_trainer(model=lib.BatchNormed())
    state = trainer.init_state()
    assert set(state.collections) == {"batch_stats"}
    before = np.asarray(state.collections["batch_stats"]["bn"]["mean"])
    state, _ = trainer.trainstep.step(state, trainer.train_ds.batch(0))
    assert not np.allclose(state.collections["batch_stats"]["bn"]["mean"], before)


def test_batch_stats_stay_put_in_eval():
    trainer = lib.make_trainer(model=lib.BatchNormed())
    state = trainer.init_state()
    context = _forward(trainer, state, is_training=False)
    np.testing.assert_array_equal(
        context.collections["batch_stats"]["bn"]["mean"], state.collections["batch_stats"]["bn"]["mean"]
    )


@pytest.mark.parametrize("keys", ["batch.x", {"inputs": "batch.x"}], ids=["one-path", "by-argument"])
def test_external_module_reads_its_inputs_by_keys(keys):
    trainer = lib.make_trainer(model=kd.nn.ExternalModule(model=nn.Dense(1), keys=keys))
    state = trainer.init_state()
    assert _forward(trainer, state, is_training=True).preds.shape == (8, 1)


def test_flat_autoencoder_names_its_output_after_the_input():
    model = kd.nn.FlatAutoencoder(inputs="batch.x", encoder=nn.Dense(3), decoder=nn.Dense(2))
    trainer = lib.make_trainer(
        model=model, train_losses={"recon": lib.MSE(preds="preds.x", targets="batch.x")}
    )
    state, logged = trainer.train()
    assert int(state.step) == 4
    assert trainer.context_specs.preds["x"].shape == (8, 2)
    assert np.isfinite(logged["losses/recon"])
