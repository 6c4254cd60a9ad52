"""Shapes without running anything, the mid-level step API, donation, one compile per variant, no host syncs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import optax
import train_fixtures as lib


def _spec_trainer() -> kd.train.Trainer:
    return lib.make_trainer(train_metrics={"hidden": lib.Mean(values="interms.hidden.__call__[0]")})


def _is_spec(tree) -> bool:
    leaves = jax.tree.leaves(tree)
    return bool(leaves) and all(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in leaves)


def _step_traces(trainstep: kd.train.TrainStep) -> dict:
    return {variant: n for variant, n in trainstep.num_traces.items() if variant[0] != "eval"}


def test_state_specs_are_shapes_of_the_state():
    specs = _spec_trainer().state_specs
    assert isinstance(specs, kd.train.TrainState)
    assert _is_spec(specs)
    assert specs.step.shape == () and specs.step.dtype == jnp.int32
    assert specs.params["hidden"]["kernel"].shape == (2, 16)
    assert specs.params["out"]["kernel"].shape == (16, 1)


def test_context_specs_cover_every_context_path():
    specs = _spec_trainer().context_specs
    assert isinstance(specs, kd.train.Context)
    assert specs.batch["x"].shape == (8, 2)
    assert specs.preds.shape == (8, 1)
    assert specs.params["hidden"]["kernel"].shape == (2, 16)
    assert specs.grads["hidden"]["kernel"].shape == (2, 16)
    assert specs.updates["out"]["bias"].shape == (1,)
    assert specs.interms["hidden"]["__call__"][0].shape == (8, 16)
    assert specs.loss_total.shape == ()
    assert set(specs.loss_states) == {"l2"}
    assert set(specs.metric_states) == {"hidden"}
    for field in ("batch", "preds", "params", "grads", "interms", "loss_states", "metric_states"):
        assert _is_spec(getattr(specs, field)), field


def test_reading_specs_runs_no_train_step():
    trainer = _spec_trainer()
    trainer.state_specs  # noqa: B018
    trainer.context_specs  # noqa: B018
    assert _step_traces(trainer.trainstep) == {}
    # Nothing was compiled or run: no jitted init, no jitted step variant exists yet.
    assert trainer.trainstep._jitted_init == {} and trainer.trainstep._jitted == {}


def test_init_state_is_at_step_zero():
    state = lib.make_trainer().init_state()
    assert int(state.step) == 0
    assert state.params["hidden"]["kernel"].shape == (2, 16)
    assert int(state.opt_state[0].count) == 0


def test_init_state_applies_init_transform():
    def zero_bias(state: kd.train.TrainState) -> kd.train.TrainState:
        params = {**state.params, "out": {**state.params["out"], "bias": jnp.full((1,), 3.0)}}
        return state.replace(params=params)

    state = lib.make_trainer(init_transform=zero_bias).init_state()
    np.testing.assert_array_equal(state.params["out"]["bias"], [3.0])


def test_step_updates_the_params_on_one_batch():
    trainer = lib.make_trainer()
    state = trainer.init_state()
    before = np.asarray(state.params["out"]["kernel"])
    state, aux = trainer.trainstep.step(state, trainer.train_ds.batch(0))
    assert int(state.step) == 1
    assert not np.array_equal(np.asarray(state.params["out"]["kernel"]), before)
    assert set(aux.compute()) == {"losses/l2"}


def test_step_with_metrics_returns_metric_states():
    trainer = _spec_trainer()
    _, aux = trainer.trainstep.step(trainer.init_state(), trainer.train_ds.batch(0), return_metrics=True)
    assert set(aux.compute()) == {"losses/l2", "metrics/hidden"}


def test_step_donates_the_state():
    trainer = lib.make_trainer()
    state = trainer.init_state()
    kernel = state.params["out"]["kernel"]
    trainer.trainstep.step(state, trainer.train_ds.batch(0))
    assert kernel.is_deleted()


def test_one_compile_per_output_variant():
    trainer = lib.make_trainer(
        train_metrics={"hidden": lib.Mean(values="interms.hidden.__call__[0]")},
        train_summaries={"rows": lib.FirstRows()},
    )
    state = trainer.init_state()
    variants = [(m, s) for m in (False, True) for s in (False, True)]
    for i in range(5):
        for return_metrics, return_summaries in variants:
            batch = trainer.sharding.put_batch(trainer.train_ds.batch(i))
            state, _ = trainer.trainstep.step(
                state, batch, return_metrics=return_metrics, return_summaries=return_summaries
            )
    assert int(state.step) == 20
    assert _step_traces(trainer.trainstep) == dict.fromkeys(variants, 1)


def test_step_works_with_an_nnx_model():
    trainer = lib.make_trainer(model=lambda rngs: lib.NnxMlp(2, 1, rngs=rngs), optimizer=optax.sgd(0.1))
    state = trainer.init_state()
    assert trainer.state_specs.params["hidden"]["kernel"].shape == (2, 16)
    state, _ = trainer.trainstep.step(state, trainer.train_ds.batch(0))
    assert int(state.step) == 1
