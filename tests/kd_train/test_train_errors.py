"""Config mistakes fail early, naming the field or key at fault and what to do."""

from __future__ import annotations

import dataclasses

import kd
import pytest
import train_fixtures as lib
from flax import nnx
from kd import konfig


def test_unknown_loss_key_names_the_loss_the_key_and_the_alternatives(tmp_path):
    workdir = tmp_path / "run"
    trainer = lib.make_trainer(
        workdir=str(workdir), writer=None, train_losses={"recon": lib.MSE(targets="batch.yy")}
    )
    with pytest.raises(kd.train.KeyPathError) as info:
        trainer.train()
    message = str(info.value)
    assert "train_losses['recon']" in message
    assert "'batch.yy'" in message
    assert "Did you mean 'batch.y'" in message
    assert "available context paths:" in message and "batch.x" in message and "preds" in message
    assert not workdir.exists()  # raised before anything was written


def test_unknown_loss_key_of_a_konfig_trainer_fails_before_the_workdir_exists(tmp_path):
    workdir = tmp_path / "run"
    with konfig.imports():
        import kd as kd_cfg
        import optax as optax_cfg
        import train_fixtures as lib_cfg
    cfg = kd_cfg.train.Trainer()
    cfg.workdir = str(workdir)
    cfg.train_ds = lib_cfg.Regression()
    cfg.model = lib_cfg.NnxMlp(din=2, dout=1)
    cfg.optimizer = optax_cfg.adam(learning_rate=1e-2)
    cfg.train_losses = {"l2": lib_cfg.MSE(targets="batch.target")}
    cfg.num_train_steps = 2
    trainer = konfig.resolve(cfg)
    with pytest.raises(kd.train.KeyPathError, match=r"(?s)train_losses\['l2'\].*'batch\.target'"):
        trainer.train()
    assert not workdir.exists()


def test_unknown_metric_key_names_the_metric():
    trainer = lib.make_trainer(train_metrics={"acc": lib.Mean(values="interms.nope.__call__[0]")})
    with pytest.raises(
        kd.train.KeyPathError, match=r"(?s)train_metrics\['acc'\].*'interms\.nope\.__call__\[0\]'"
    ):
        trainer.train()


def test_unknown_loss_key_is_a_key_error():
    trainer = lib.make_trainer(train_losses={"l2": lib.MSE(preds="pred")})
    with pytest.raises(KeyError):
        trainer.check()


def test_missing_required_fields_are_all_listed_when_training():
    # As Kauldron: a Trainer without its parts is built, replaced and inspected; training says what it lacks.
    trainer = kd.train.Trainer()
    with pytest.raises(kd.train.ConfigError) as info:
        trainer.train()
    message = str(info.value)
    assert message.startswith("Trainer config is not valid for training:")
    for field in ("train_ds", "model", "optimizer", "train_losses"):
        assert f"- {field}:" in message
    with pytest.raises(kd.train.ConfigError, match=r"for the train state:\n  - train_ds: .*\n  - model: "):
        trainer.state_specs  # noqa: B018
    with pytest.raises(kd.train.ConfigError, match="for tracing the train step"):
        trainer.check()


def test_a_trainer_without_a_model_or_an_optimizer_is_built_and_replaced():
    trainer = kd.train.Trainer(train_ds=lib.make_trainer().train_ds, model=None, optimizer=None, seed=0)
    replaced = dataclasses.replace(trainer, seed=42)
    assert replaced.seed == 42 and replaced.trainstep.model is None
    with pytest.raises(kd.train.ConfigError, match=r"- model: required.*\n  - optimizer: required"):
        replaced.train()


def test_a_length_that_cannot_be_derived_is_said_when_training():
    data = lib.make_trainer().train_ds
    endless = dataclasses.replace(data, num_epochs=None) if dataclasses.is_dataclass(data) else data
    trainer = lib.make_trainer(train_ds=endless, num_train_steps=None)
    assert trainer.num_train_steps is None
    with pytest.raises(kd.train.ConfigError, match="num_train_steps: not set, and cannot be derived"):
        trainer.train()


def test_config_error_is_a_value_error():
    with pytest.raises(ValueError):
        kd.train.Trainer(model=lib.Mlp(), optimizer="adam")


def test_built_nnx_module_is_refused_with_what_to_do_instead(tmp_path):
    workdir = tmp_path / "run"
    with pytest.raises(kd.train.ConfigError, match=r"already built nnx\.Module.*configure the class instead"):
        lib.make_trainer(model=lib.NnxMlp(2, 1, rngs=nnx.Rngs(0)), workdir=str(workdir)).train()
    assert not workdir.exists()


def test_nnx_config_with_rngs_is_refused():
    with konfig.imports():
        import kd as kd_cfg
        import train_fixtures as lib_cfg
        from flax import nnx as nnx_cfg
    cfg = kd_cfg.train.Trainer()
    cfg.train_ds = lib_cfg.Regression()
    cfg.model = lib_cfg.NnxMlp(din=2, dout=1, rngs=nnx_cfg.Rngs(0))
    # konfig reports where the config failed, chained to the Trainer's own error.
    with pytest.raises(konfig.ResolveError, match=r"NNX module; leave out `rngs`") as info:
        konfig.resolve(cfg)
    assert isinstance(info.value.__cause__, kd.train.ConfigError)


def test_nnx_model_node_with_rngs_is_refused_by_the_trainer():
    with konfig.imports():
        import train_fixtures as lib_cfg
        from flax import nnx as nnx_cfg
    node = lib_cfg.NnxMlp(din=2, dout=1, rngs=nnx_cfg.Rngs(0))
    with pytest.raises(
        kd.train.ConfigError, match=r"train_fixtures:NnxMlp is an NNX module; leave out `rngs`"
    ):
        lib.make_trainer(model=node)


def test_loss_that_is_not_a_loss_names_the_entry():
    with pytest.raises(kd.train.ConfigError, match=r"train_losses\['l2'\]: expected a kd loss"):
        lib.make_trainer(train_losses={"l2": "batch.y"})


def test_bad_log_every_names_the_field():
    with pytest.raises(kd.train.ConfigError, match=r"log_metrics_every: expected a positive int, got 0"):
        lib.make_trainer(log_metrics_every=0)


def test_a_misspelt_intermediate_lists_the_intermediates_and_the_closest_one():
    trainer = lib.make_trainer(
        model=lib.SixDense(), train_metrics={"h": lib.Mean(values="interms.dense_33.__call__[0]")}
    )
    with pytest.raises(kd.train.KeyPathError) as info:
        trainer.train()
    message = str(info.value)
    assert "intermediates the model gives: interms.__call__[0], interms.dense_0.__call__[0]" in message
    assert "did you mean 'interms.dense_3.__call__[0]'" in message
