"""RNG streams derived from (seed, name, step, mode), and the training mode models read."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest
import train_fixtures as lib
from flax import linen as nn
from kd.train import RngStream, RngStreams

_EVERYWHERE = (RngStream("a", eval=True), RngStream("b", eval=True))


def _key(seed: int = 0, name: str = "a", step: int = 3, mode: str = "train") -> np.ndarray:
    return np.asarray(jax.random.key_data(RngStreams(_EVERYWHERE, seed=seed).rngs(mode, step)[name]))


def _ones_batch() -> dict[str, jax.Array]:
    return {"x": jnp.ones((8, 16)), "y": jnp.zeros((8, 1))}


def _forward(
    trainer: kd.train.Trainer, state: kd.train.TrainState, step: int, is_training: bool
) -> np.ndarray:
    context = trainer.trainstep.forward(
        state.params, state.collections, _ones_batch(), jnp.int32(step), is_training=is_training
    )
    return np.asarray(context.preds)


def test_same_seed_name_step_and_mode_give_the_same_key():
    np.testing.assert_array_equal(_key(), _key())


@pytest.mark.parametrize(
    "changed",
    [{"seed": 1}, {"name": "b"}, {"step": 4}, {"mode": "eval"}],
    ids=["seed", "name", "step", "mode"],
)
def test_each_of_seed_name_step_and_mode_changes_the_key(changed):
    assert not np.array_equal(_key(**changed), _key())


def test_default_streams_and_the_modes_they_serve():
    streams = RngStreams(seed=0)
    # Kauldron's defaults: params at init only; dropout and default at init and in training.
    assert set(streams.streams) == {"params", "dropout", "default"}
    assert set(streams.rngs("init")) == {"params", "dropout", "default"}
    assert set(streams.rngs("train", 0)) == {"dropout", "default"}
    assert set(streams.rngs("eval", 0)) == set()


def test_user_stream_extends_the_defaults():
    streams = RngStreams([RngStream("noise", eval=True)], seed=0)  # Kauldron's positional stream_overwrites
    assert set(streams.streams) == {"params", "dropout", "default", "noise"}
    assert set(streams.rngs("eval", 0)) == {"noise"}


def test_user_stream_named_like_a_default_replaces_it():
    streams = RngStreams(stream_overwrites=[RngStream("dropout", train=True, eval=True)], seed=0)
    assert set(streams.streams) == {"params", "dropout", "default"}
    assert set(streams.rngs("eval", 0)) == {"dropout"}


def test_stream_that_is_not_per_step_keeps_its_key():
    streams = RngStreams([RngStream("fixed", per_step=False)], seed=0)
    first, later = streams.rngs("train", 0)["fixed"], streams.rngs("train", 5)["fixed"]
    np.testing.assert_array_equal(jax.random.key_data(first), jax.random.key_data(later))


def test_trainer_streams_take_the_trainer_seed():
    assert lib.make_trainer(seed=7).rng_streams.seed == 7


def test_explicit_streams_seed_is_kept_by_the_trainer_and_by_replace():
    trainer = lib.make_trainer(seed=1, rng_streams=RngStreams(seed=5))
    assert trainer.rng_streams.seed == 5
    assert dataclasses.replace(trainer, seed=2).rng_streams.seed == 5


def test_user_stream_reaches_the_model_through_the_trainer():
    trainer = lib.make_trainer(model=lib.Noisy(), rng_streams=[RngStream("noise")], num_train_steps=2)
    state, _ = trainer.train()
    assert int(state.step) == 2
    assert trainer.rng_streams.seed == trainer.seed


@pytest.mark.parametrize("model", [lib.Dropout(), lib.DropoutTrainProperty(), lib.DropoutKwarg()])
def test_linen_dropout_changes_every_training_step(model):
    trainer = lib.make_trainer(model=model)
    state = trainer.init_state()
    step0, step1 = _forward(trainer, state, 0, True), _forward(trainer, state, 1, True)
    assert (step0 == 0).any() and (step1 == 0).any()
    assert not np.array_equal(step0, step1)


@pytest.mark.parametrize("model", [lib.Dropout(), lib.DropoutTrainProperty(), lib.DropoutKwarg()])
def test_linen_dropout_is_off_in_eval(model):
    trainer = lib.make_trainer(model=model)
    state = trainer.init_state()
    for step in (0, 1):
        np.testing.assert_array_equal(_forward(trainer, state, step, False), np.ones((8, 16)))


def test_nnx_dropout_changes_every_training_step_and_is_off_in_eval():
    trainer = lib.make_trainer(model=lib.NnxDropout)
    state = trainer.init_state()
    step0, step1 = _forward(trainer, state, 0, True), _forward(trainer, state, 1, True)
    assert (step0 == 0).any() and not np.array_equal(step0, step1)
    np.testing.assert_array_equal(_forward(trainer, state, 0, False), np.ones((8, 16)))


class ReportsMode(nn.Module):
    is_training = kd.nn.train_property()

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return jnp.asarray(self.is_training)


def test_train_property_reads_the_mode_in_a_plain_linen_module():
    module = ReportsMode()
    with kd.nn.training_mode(True):
        assert bool(module.apply({}, jnp.ones(1)))
    with kd.nn.training_mode(False):
        assert not bool(module.apply({}, jnp.ones(1)))
    # Nothing in flax was replaced to make this work.
    assert nn.Module.apply.__module__ == "flax.linen.module"
    assert nn.Module.init.__module__ == "flax.linen.module"


def test_training_mode_is_restored_on_exit():
    with kd.nn.training_mode(True):
        with kd.nn.training_mode(False):
            assert kd.nn.is_training() is False
        assert kd.nn.is_training() is True
    with pytest.raises(RuntimeError):
        kd.nn.is_training()


def test_is_training_outside_a_forward_pass_raises():
    with pytest.raises(RuntimeError, match=r"outside a forward pass.*kd\.nn\.training_mode"):
        kd.nn.is_training()


def test_train_property_outside_a_forward_pass_raises():
    with pytest.raises(RuntimeError, match=r"outside a forward pass"):
        ReportsMode().is_training  # noqa: B018
