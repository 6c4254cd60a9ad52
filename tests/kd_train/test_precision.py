"""`Trainer.precision`: a mixed-precision policy (kd.train._precision): the model computes in bfloat16, the
parameters, the optimizer state and the losses stay float32."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import optax
import pytest
import train_fixtures as lib
from kd import inspect as kinspect
from kd.inspect import _report


def _trainer(**fields) -> kd.train.Trainer:
    """Single compiled steps (no measuring of fused calls): the tests look at dtypes and values, not speed."""
    return lib.make_trainer(**{"steps_per_call": 1, "num_train_steps": 8, "log_metrics_every": 4, **fields})


def _losses(trainer: kd.train.Trainer) -> np.ndarray:
    return np.array([value for _, value in trainer.writer.scalars["losses/l2"]])


def _dtypes(tree) -> set[str]:
    return {jnp.dtype(leaf.dtype).name for leaf in jax.tree.leaves(tree)}


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[kd.train.Trainer, kd.train.TrainState]]:
    """The same run as the model is written and in bfloat16 (a model that sows its hidden features)."""
    out = {}
    for name, precision in (("float32", None), ("bfloat16", "bfloat16")):
        trainer = _trainer(model=lib.Sowing(), precision=precision)
        state, _ = trainer.train()
        out[name] = (trainer, state)
    return out


def test_params_and_optimizer_state_stay_float32(runs):
    _, state = runs["bfloat16"]
    assert _dtypes(state.params) == {"float32"}
    assert _dtypes(state.opt_state) == {"int32", "float32"}  # adam's count, its moments


def test_the_model_computes_in_the_compute_dtype(runs):
    specs = kinspect.intermediate_specs(runs["bfloat16"][0])
    # A Dense output is bfloat16 only when both its input and its kernel are (float32 would promote it).
    assert specs["interms.hidden.__call__[0]"].dtype == jnp.bfloat16
    assert specs["interms.features[0]"].dtype == jnp.bfloat16
    assert kinspect.intermediate_specs(runs["float32"][0])["interms.features[0]"].dtype == jnp.float32


def test_losses_and_metrics_see_the_outputs_params_and_batch_as_stored(runs):
    context = runs["bfloat16"][0].context_specs
    assert context.preds.dtype == jnp.float32
    assert _dtypes(context.params) == _dtypes(context.grads) == {"float32"}
    assert context.batch["x"].dtype == jnp.float32


def test_output_dtype_is_what_the_losses_receive():
    trainer = _trainer(precision=kd.train.MixedPrecision(compute_dtype="bfloat16", output_dtype="bfloat16"))
    assert trainer.context_specs.preds.dtype == jnp.bfloat16


def test_evaluation_computes_in_the_compute_dtype(runs):
    trainer, state = runs["bfloat16"]
    everything = kd.train.InterestFilter(["interms.**"])
    batch = lib.Regression().batch(0)

    def evaluate(state, batch):
        return trainer.trainstep.forward(
            state.params, state.collections, batch, state.step, is_training=False, capture=everything
        )

    context = jax.eval_shape(evaluate, state, batch)
    assert context.interms["features"][0].dtype == jnp.bfloat16
    assert context.preds.dtype == jnp.float32
    assert np.isfinite(trainer.trainstep.eval_step(state, batch).compute()["losses/l2"])


def test_an_evaluator_computes_in_the_trainers_precision():
    evaluator = kd.evals.Evaluator(
        run=kd.evals.EveryNSteps(4), ds=lib.Regression(), num_batches=1, losses={"l2": lib.MSE()}
    )
    trainer = _trainer(model=lib.Sowing(), precision="bf16", evals={"val": evaluator})
    state, _ = trainer.train()
    evalstep = trainer.evals["val"].evalstep
    context = jax.eval_shape(
        lambda state, batch: evalstep.forward(
            state.params, state.collections, batch, state.step, is_training=False,
            capture=kd.train.InterestFilter(["interms.**"]),
        ),
        state,
        lib.Regression().batch(0),
    )  # fmt: skip

    assert evalstep.precision == kd.train.MixedPrecision()
    assert context.interms["features"][0].dtype == jnp.bfloat16
    assert context.preds.dtype == jnp.float32
    assert [step for step, _ in trainer.writer.scalars["val/losses/l2"]] == [0, 4, 8]


def test_the_losses_match_a_float32_run(runs):
    full, mixed = _losses(runs["float32"][0]), _losses(runs["bfloat16"][0])
    assert len(full) == len(mixed) == 3  # steps 1, 4, 8
    np.testing.assert_allclose(mixed, full, rtol=3e-2)
    assert not np.array_equal(mixed, full)  # it did compute in bfloat16


def test_an_nnx_model_computes_in_bfloat16_and_keeps_float32_params():
    trainer = _trainer(model=lambda rngs: lib.NnxMlp(2, 1, rngs=rngs), precision="bf16")
    assert kinspect.intermediate_specs(trainer)["interms.h[0]"].dtype == jnp.bfloat16
    assert trainer.context_specs.preds.dtype == jnp.float32
    state, _ = trainer.train()
    assert _dtypes(state.params) == {"float32"}
    assert np.isfinite(_losses(trainer)).all()


def test_batch_statistics_are_neither_cast_nor_changed_in_dtype():
    trainer = _trainer(model=lib.BatchNormed(), precision="bfloat16", steps_per_call=4)  # a compiled loop
    state, _ = trainer.train()
    assert _dtypes(state.collections) == {"float32"}
    assert int(state.step) == 8


def test_float32_means_the_model_as_written():
    assert _trainer(precision="float32").precision is None
    assert _trainer(precision="bf16").precision == kd.train.MixedPrecision()


def test_a_mistyped_precision_names_the_field_and_the_near_miss():
    with pytest.raises(
        kd.train.ConfigError, match=r"cfg\.precision: expected None, 'bfloat16'.*did you mean 'bfloat16'"
    ):
        _trainer(precision="bfloat61")


def test_a_mixed_precision_dtype_must_be_floating():
    with pytest.raises(
        kd.train.ConfigError, match=r"MixedPrecision\.compute_dtype: .*got 'bflaot16'; did you mean"
    ):
        kd.train.MixedPrecision(compute_dtype="bflaot16")
    with pytest.raises(
        kd.train.ConfigError, match=r"MixedPrecision\.output_dtype: expected a floating dtype"
    ):
        kd.train.MixedPrecision(output_dtype=jnp.int32)


def test_inspect_shows_the_precision_and_the_gradient_accumulation(runs):
    accumulating = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
    report = kinspect.inspect_report(_trainer(precision="bf16", optimizer=accumulating))
    assert "precision              bfloat16 compute, float32 params and outputs" in report
    assert "gradient accumulation  every 4 micro-steps (optax.MultiSteps); step counts micro-steps" in report
    plain = _report._run_summary(runs["float32"][0])
    assert "precision        as the model is written" in plain
    assert "gradient accumulation" not in plain
