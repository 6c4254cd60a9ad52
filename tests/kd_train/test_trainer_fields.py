"""Trainer fields as Kauldron users write them, and values the Trainer derives (refreshed by `replace`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jax.numpy as jnp
import kd
import pytest
import train_fixtures as lib
from flax import linen as nn


@pytest.mark.parametrize("field", ["evals", "schedules", "train_metrics", "train_summaries", "aux"])
def test_none_in_a_dict_field_means_empty(field: str) -> None:
    trainer = lib.make_trainer(**{field: None})
    assert getattr(trainer, field) == {}
    state, _ = trainer.train()
    assert int(state.step) == 4


def test_stop_after_steps_caps_the_step_reached_also_after_a_resume(tmp_path: Path) -> None:
    checkpointer = kd.ckpts.Checkpointer(save_interval_steps=100)
    trainer = lib.make_trainer(
        num_train_steps=10, stop_after_steps=3, workdir=str(tmp_path), checkpointer=checkpointer
    )
    assert int(trainer.train()[0].step) == 3
    # Kauldron's meaning: stop once state.step reaches 3, so a second run has nothing left to do.
    assert int(trainer.train()[0].step) == 3
    assert int(dataclasses.replace(trainer, stop_after_steps=5).train()[0].step) == 5


def test_num_train_steps_derived_from_the_data_is_derived_again_after_replace() -> None:
    trainer = lib.make_trainer(num_train_steps=None, train_ds=lib.Regression(num_batches=4, num_epochs=3))
    assert trainer.num_train_steps == 12
    longer = dataclasses.replace(trainer, train_ds=lib.Regression(num_batches=4, num_epochs=5))
    assert longer.num_train_steps == 20
    explicit = lib.make_trainer(num_train_steps=7, train_ds=lib.Regression(num_batches=4, num_epochs=3))
    assert dataclasses.replace(explicit, train_ds=lib.Regression(num_epochs=5)).num_train_steps == 7


def test_the_default_metrics_file_follows_the_workdir_through_replace(tmp_path: Path) -> None:
    trainer = lib.make_trainer(workdir=str(tmp_path / "a"), writer=None, num_train_steps=2)
    moved = dataclasses.replace(trainer, workdir=str(tmp_path / "b"))
    moved.train()
    assert not (tmp_path / "a").exists()
    lines = (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2]


def test_a_checkpointer_without_a_workdir_is_a_config_error_naming_the_flag() -> None:
    with pytest.raises(
        kd.train.ConfigError, match=r"checkpointer: .*Trainer.workdir is not set.*--cfg.workdir"
    ):
        lib.make_trainer(checkpointer=kd.ckpts.Checkpointer(save_interval_steps=10))


def test_a_linen_class_instead_of_a_module_says_to_instantiate_it() -> None:
    with pytest.raises(kd.train.ConfigError, match=r"Trainer.model: got the linen class Mlp, not a module"):
        lib.make_trainer(model=lib.Mlp)


def test_a_callable_that_does_not_build_an_nnx_module_names_the_model_field() -> None:
    with pytest.raises(kd.train.ConfigError, match=r"Trainer.model: building .*rngs"):
        lib.make_trainer(model=lambda features: nn.Dense(features)).init_state()


class _SowsALoss(nn.Module):
    x: kd.kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(1)(x)
        self.sow("aux_losses", "l2", jnp.mean(y**2))
        return y


def test_a_sown_collection_is_not_state_and_the_step_compiles_once() -> None:
    trainer = lib.make_trainer(model=_SowsALoss(), num_train_steps=6, log_metrics_every=100)
    state, _ = trainer.train()
    assert state.collections == {}
    traces = trainer.trainstep.num_traces
    assert set(traces) <= {("fused", False), (False, False)} and set(traces.values()) == {1}  # each once


class _TakesDeterministic(nn.Module):
    """A third-party-style module: `deterministic=` says it evaluates."""

    @nn.compact
    def __call__(self, x, deterministic: bool):
        return nn.Dropout(0.5, deterministic=deterministic)(nn.Dense(4)(x))


@pytest.mark.parametrize(("kwarg", "training_differs"), [("~deterministic", True), (None, None)])
def test_external_module_tells_the_wrapped_model_whether_it_trains(kwarg, training_differs) -> None:
    model = kd.nn.ExternalModule(model=_TakesDeterministic(), keys="batch.x", train_kwarg_name=kwarg)
    trainer = lib.make_trainer(model=model)
    if kwarg is None:
        with pytest.raises(TypeError, match="deterministic"):
            trainer.init_state()
        return
    state = trainer.init_state()
    batch = {"x": jnp.ones((8, 2)), "y": jnp.zeros((8, 1))}
    train_a = trainer.trainstep.forward(
        state.params, state.collections, batch, jnp.int32(1), is_training=True
    )
    train_b = trainer.trainstep.forward(
        state.params, state.collections, batch, jnp.int32(2), is_training=True
    )
    eval_a = trainer.trainstep.forward(
        state.params, state.collections, batch, jnp.int32(1), is_training=False
    )
    eval_b = trainer.trainstep.forward(
        state.params, state.collections, batch, jnp.int32(2), is_training=False
    )
    assert bool(jnp.any(train_a.preds != train_b.preds)) is training_differs  # dropout differs per step
    assert bool(jnp.all(eval_a.preds == eval_b.preds))  # deterministic in eval


def test_every_n_steps_evaluates_before_training_unless_skip_first() -> None:
    run = kd.evals.EveryNSteps(2, skip_first=True)
    trainer = lib.make_trainer(eval_ds=lib.Regression(num_epochs=1), evals={"e": kd.evals.Evaluator(run=run)})
    trainer.train()
    assert [step for step, _ in trainer.writer.scalars["e/losses/l2"]] == [2, 4]
