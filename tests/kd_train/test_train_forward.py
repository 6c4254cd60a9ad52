"""Kauldron's free step functions: `forward`, `forward_with_loss`, `Auxiliaries` and `AuxiliariesState`, checked
against the models' own `apply`, the losses and metrics called directly, and the Trainer's own step."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import kd
import kontext
import numpy as np
import optax
import pytest
import train_fixtures as lib
from flax import linen as nn
from kd.train import _forward

forward = kd.train.forward
forward_with_loss = kd.train.forward_with_loss
Auxiliaries = kd.train.Auxiliaries
AuxiliariesState = kd.train.AuxiliariesState
AuxiliariesOutput = kd.train.AuxiliariesOutput

_BATCH = lib.Regression().batch(0)
_OTHER_BATCH = lib.Regression().batch(1)


class _BatchStats(nn.Module):
    """Dense -> BatchNorm that always uses the batch's statistics (so it updates them, in eval too) -> Dense."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.Dense(4, name="dense")(x)
        h = nn.BatchNorm(use_running_average=False, momentum=0.5, name="bn")(h)
        return nn.Dense(1, name="out")(h)


class _TwoMethods(nn.Module):
    """`__call__` gives (b, 1); `features` gives the hidden (b, 4)."""

    x: kontext.Key = "batch.x"

    def setup(self) -> None:
        self.hidden = nn.Dense(4)
        self.head = nn.Dense(1)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.head(self.hidden(x))

    def features(self, x: jax.Array) -> jax.Array:
        return self.hidden(x)


def _context(state: kd.train.TrainState, batch=_BATCH) -> kd.train.Context:
    return kd.train.Context(step=state.step, batch=batch, params=state.params, collections=state.collections)


def _assert_trees_equal(a, b) -> None:
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-7)


@pytest.fixture(scope="module")
def batch_stats() -> tuple[kd.train.Trainer, kd.train.TrainState]:
    trainer = lib.make_trainer(model=_BatchStats())
    return trainer, trainer.init_state()


@pytest.fixture(scope="module")
def mlp() -> tuple[kd.train.Trainer, kd.train.TrainState]:
    trainer = lib.make_trainer(
        optimizer=optax.sgd(0.1),
        train_losses={"l2": lib.MSE(), "mean": lib.Mean(values="preds")},
        train_metrics={"mse": lib.MSE(), "mean_x": lib.Mean(values="batch.x")},
        train_summaries={"rows": lib.FirstRows()},
    )
    return trainer, trainer.init_state()


def test_the_kauldron_step_functions_are_public_in_kd_train():
    # The module's own usage lines say `kd.train.forward(...)`, `kd.train.Auxiliaries(...)`, ...
    for name in ("forward", "forward_with_loss", "Auxiliaries", "AuxiliariesState", "AuxiliariesOutput"):
        assert getattr(kd.train, name, None) is getattr(_forward, name), name
        assert name in kd.train.__all__


# ---------------------------------------------------------------------------------------------- forward


@pytest.mark.parametrize("is_training", [True, False])
def test_forward_returns_the_batch_statistics_the_model_updated(batch_stats, is_training):
    trainer, state = batch_stats
    _, expected = trainer.model.apply(
        {"params": state.params, **state.collections}, _BATCH["x"], mutable=["batch_stats"]
    )

    context = forward(_context(state), model=trainer.model, rngs={}, is_training=is_training)

    _assert_trees_equal(context.collections["batch_stats"], expected["batch_stats"])
    moved = jax.tree.map(
        lambda a, b: bool(np.any(a != b)),
        context.collections["batch_stats"],
        state.collections["batch_stats"],
    )
    assert all(jax.tree.leaves(moved))


def test_forward_collections_hold_the_models_collections_only(batch_stats):
    trainer, state = batch_stats

    context = forward(_context(state), model=trainer.model, rngs={}, is_training=True)

    assert set(context.collections) == set(state.collections) == {"batch_stats"}


def test_forward_again_on_its_own_output_uses_that_contexts_params(batch_stats):
    trainer, state = batch_stats
    first = forward(_context(state), model=trainer.model, rngs={}, is_training=True)
    doubled = jax.tree.map(lambda p: 2 * p, state.params)
    expected = trainer.model.apply(
        {"params": doubled, "batch_stats": first.collections["batch_stats"]},
        _BATCH["x"],
        mutable=["batch_stats"],
    )[0]

    again = forward(first.replace(params=doubled), model=trainer.model, rngs={}, is_training=True)

    np.testing.assert_allclose(np.asarray(again.preds), np.asarray(expected), rtol=1e-6)


def test_forward_gives_the_preds_and_every_intermediate(batch_stats):
    trainer, state = batch_stats
    expected = trainer.model.apply(
        {"params": state.params, **state.collections}, _BATCH["x"], mutable=["batch_stats"]
    )[0]

    context = forward(_context(state), model=trainer.model, rngs={}, is_training=True)

    np.testing.assert_allclose(np.asarray(context.preds), np.asarray(expected), rtol=1e-6)
    assert set(context.interms) == {"__call__", "dense", "bn", "out"}
    np.testing.assert_array_equal(np.asarray(context.interms["__call__"][0]), np.asarray(context.preds))
    assert context.interms["dense"]["__call__"][0].shape == (8, 4)
    assert context.interms["bn"]["__call__"][0].shape == (8, 4)
    np.testing.assert_array_equal(
        np.asarray(context.interms["out"]["__call__"][0]), np.asarray(context.preds)
    )


def test_forward_keeps_the_rest_of_the_context(batch_stats):
    trainer, state = batch_stats
    given = _context(state)

    context = forward(given, model=trainer.model, rngs={}, is_training=True)

    assert context.batch is given.batch and context.params is given.params
    assert context.step is given.step


def test_forward_with_method_runs_that_method():
    trainer = lib.make_trainer(model=_TwoMethods())
    state = trainer.init_state()
    expected = trainer.model.apply({"params": state.params}, _BATCH["x"], method="features")

    context = forward(_context(state), model=trainer.model, rngs={}, is_training=False, method="features")

    assert context.preds.shape == (8, 4)
    np.testing.assert_allclose(np.asarray(context.preds), np.asarray(expected), rtol=1e-6)


def test_forward_captures_each_modules_call_only_as_flaxs_capture_intermediates_true():
    # Kauldron's forward passes `capture_intermediates=True`: `__call__` outputs, not other methods'.
    trainer = lib.make_trainer(model=_TwoMethods())
    state = trainer.init_state()

    context = forward(_context(state), model=trainer.model, rngs={}, is_training=False, method="features")

    assert set(context.interms) == {"hidden"}
    assert set(context.interms["hidden"]) == {"__call__"}


@pytest.mark.parametrize("model", [lib.Dropout(), lib.DropoutTrainProperty()], ids=type)
def test_forward_in_training_mode_drops_out_as_the_trainers_step_does(model):
    trainer = lib.make_trainer(model=model)
    state = trainer.init_state()
    rngs = trainer.rng_streams.rngs("train", state.step)
    expected = trainer.trainstep.forward(
        state.params, state.collections, _BATCH, state.step, is_training=True
    ).preds

    preds = forward(_context(state), model=trainer.model, rngs=rngs, is_training=True).preds

    assert not np.array_equal(np.asarray(preds), _BATCH["x"])  # some were dropped
    np.testing.assert_array_equal(np.asarray(preds), np.asarray(expected))


def test_forward_passes_is_training_to_a_model_that_takes_it_as_the_trainers_step_does():
    trainer = lib.make_trainer(model=lib.DropoutKwarg())
    state = trainer.init_state()
    rngs = trainer.rng_streams.rngs("train", state.step)
    expected = trainer.trainstep.forward(
        state.params, state.collections, _BATCH, state.step, is_training=True
    ).preds

    preds = forward(_context(state), model=trainer.model, rngs=rngs, is_training=True).preds

    np.testing.assert_array_equal(np.asarray(preds), np.asarray(expected))


def test_forward_out_of_training_mode_leaves_the_inputs_as_they_are():
    trainer = lib.make_trainer(model=lib.Dropout())
    state = trainer.init_state()

    preds = forward(_context(state), model=trainer.model, rngs={}, is_training=False).preds

    np.testing.assert_array_equal(np.asarray(preds), _BATCH["x"])


def test_forward_on_an_nnx_model_gives_the_trainers_preds_and_its_sown_values():
    trainer = lib.make_trainer(model=functools.partial(lib.NnxMlp, din=2, dout=1))
    state = trainer.init_state()
    expected = trainer.trainstep.forward(
        state.params, state.collections, _BATCH, state.step, is_training=False
    ).preds

    context = forward(_context(state), model=trainer.model, rngs={}, is_training=False)

    np.testing.assert_allclose(np.asarray(context.preds), np.asarray(expected), rtol=1e-6)
    (hidden,) = jax.tree.leaves(context.interms)
    assert hidden.shape == (8, 16)


def test_forward_with_a_method_on_an_nnx_model_is_refused_naming_the_argument():
    trainer = lib.make_trainer(model=functools.partial(lib.NnxMlp, din=2, dout=1))
    state = trainer.init_state()

    with pytest.raises(ValueError, match=r"method='features'.*linen"):
        forward(_context(state), model=trainer.model, rngs={}, is_training=False, method="features")


# ---------------------------------------------------------------------------------------------- forward_with_loss


def test_forward_with_loss_total_is_the_sum_of_the_losses_computed_by_hand(mlp):
    trainer, state = mlp
    preds = trainer.model.apply({"params": state.params}, _BATCH["x"])
    by_hand = jnp.mean((preds - _BATCH["y"]) ** 2) + jnp.mean(preds)

    total, context = forward_with_loss(
        _context(state), model=trainer.model, losses=trainer.train_losses, rngs={}, is_training=True
    )

    assert float(total) == pytest.approx(float(by_hand), rel=1e-6)
    assert float(context.loss_total) == float(total)
    assert float(context.loss_states["l2"].compute()) == pytest.approx(
        float(jnp.mean((preds - _BATCH["y"]) ** 2)), rel=1e-6
    )
    assert set(context.loss_states) == {"l2", "mean"}


def test_forward_with_loss_gives_the_trainers_loss_and_gradients(mlp):
    trainer, state = mlp
    losses = trainer.train_losses

    def loss_of(params):
        context = _context(state).replace(params=params)
        return forward_with_loss(context, model=trainer.model, losses=losses, rngs={}, is_training=True)[0]

    def trainers_loss_of(params):
        return trainer.trainstep.forward_with_loss(
            params, state.collections, _BATCH, state.step, is_training=True
        )[0]

    ours, grads = jax.value_and_grad(loss_of)(state.params)
    theirs, their_grads = jax.value_and_grad(trainers_loss_of)(state.params)

    assert float(ours) == pytest.approx(float(theirs), rel=1e-6)
    _assert_trees_equal(grads, their_grads)


def test_an_sgd_update_from_forward_with_loss_gradients_is_the_trainers_step(mlp):
    trainer, state = mlp
    grads = jax.grad(
        lambda p: forward_with_loss(
            _context(state).replace(params=p),
            model=trainer.model,
            losses=trainer.train_losses,
            rngs={},
            is_training=True,
        )[0]
    )(state.params)
    by_hand = jax.tree.map(lambda p, g: p - 0.1 * g, state.params, grads)

    stepped, _ = trainer.trainstep.step(jax.tree.map(jnp.copy, state), _BATCH)  # donates its state

    _assert_trees_equal(stepped.params, by_hand)


# ---------------------------------------------------------------------------------------------- Auxiliaries


@pytest.fixture(scope="module")
def forwarded(mlp) -> kd.train.Context:
    trainer, state = mlp
    return forward(_context(state), model=trainer.model, rngs={}, is_training=False)


def test_update_context_gives_the_metric_and_summary_states_of_calling_them_directly(mlp, forwarded):
    trainer, _ = mlp
    auxiliaries = Auxiliaries(
        losses=trainer.train_losses, metrics=trainer.train_metrics, summaries=trainer.train_summaries
    )

    context = auxiliaries.update_context(forwarded)

    assert set(context.metric_states) == {"mse", "mean_x"}
    for name, metric in trainer.train_metrics.items():
        _assert_trees_equal(context.metric_states[name], metric.get_state_from_context(forwarded))
    _assert_trees_equal(context.summary_states["rows"], lib.FirstRows().get_state_from_context(forwarded))
    for name, loss in trainer.train_losses.items():
        _assert_trees_equal(context.loss_states[name], loss.get_state_from_context(forwarded))


def test_update_context_keeps_the_loss_states_already_in_the_context(mlp):
    trainer, state = mlp
    _, with_losses = forward_with_loss(
        _context(state), model=trainer.model, losses=trainer.train_losses, rngs={}, is_training=True
    )

    context = Auxiliaries(losses={"other": lib.MSE()}, metrics={}, summaries={}).update_context(with_losses)

    assert context.loss_states is with_losses.loss_states


def test_auxiliaries_outside_a_trainer_without_losses_names_the_field(forwarded):
    with pytest.raises(ValueError, match=r"Auxiliaries\.losses.*outside a kd\.train\.Trainer"):
        Auxiliaries().update_context(forwarded)


def test_auxiliaries_in_a_trainer_default_to_its_train_losses_metrics_and_summaries(mlp):
    trainer, _ = mlp
    held = dataclasses.replace(trainer, aux={"auxiliaries": Auxiliaries()}).aux["auxiliaries"]

    assert held.losses == trainer.train_losses
    assert held.metrics == trainer.train_metrics
    assert held.summaries == trainer.train_summaries


# ---------------------------------------------------------------------------------------------- AuxiliariesState


def _aux_state(trainer: kd.train.Trainer, state: kd.train.TrainState, batch) -> kd.train.AuxiliariesState:
    context = forward(_context(state, batch), model=trainer.model, rngs={}, is_training=False)
    context = Auxiliaries(
        losses=trainer.train_losses, metrics=trainer.train_metrics, summaries=trainer.train_summaries
    ).update_context(context)
    return AuxiliariesState(
        loss_states=context.loss_states,
        metric_states=context.metric_states,
        summary_states=context.summary_states,
    )


def _value_by_hand(trainer, state, batches, name: str) -> float:
    """A loss / metric's mean over `batches` (each batch's mean, averaged: the batches are the same size)."""
    values = []
    for batch in batches:
        preds = trainer.model.apply({"params": state.params}, batch["x"])
        values.append(
            {
                "l2": jnp.mean((preds - batch["y"]) ** 2),
                "mean": jnp.mean(preds),
                "mse": jnp.mean((preds - batch["y"]) ** 2),
                "mean_x": jnp.mean(batch["x"]),
            }[name]
        )
    return float(np.mean(values))


def test_compute_gives_each_value_by_its_prefixed_name_and_the_losses_total(mlp):
    trainer, state = mlp

    out = _aux_state(trainer, state, _BATCH).compute()

    assert isinstance(out, AuxiliariesOutput)
    assert set(out.loss_values) == {"losses/l2", "losses/mean", "losses/total"}
    assert set(out.metric_values) == {"metrics/mse", "metrics/mean_x"}
    assert set(out.summary_values) == {"summaries/rows"}
    for name in ("l2", "mean"):
        assert out.loss_values[f"losses/{name}"] == pytest.approx(
            _value_by_hand(trainer, state, [_BATCH], name), rel=1e-5
        )
    assert out.loss_values["losses/total"] == pytest.approx(
        out.loss_values["losses/l2"] + out.loss_values["losses/mean"]
    )
    assert out.metric_values["metrics/mean_x"] == pytest.approx(float(np.mean(_BATCH["x"])), rel=1e-6)


def test_compute_without_flatten_drops_the_prefixes(mlp):
    trainer, state = mlp
    aux = _aux_state(trainer, state, _BATCH)
    flat = aux.compute()

    nested = aux.compute(flatten=False)

    assert nested.loss_values == {k.split("/", 1)[1]: v for k, v in flat.loss_values.items()}
    assert nested.metric_values == {k.split("/", 1)[1]: v for k, v in flat.metric_values.items()}
    assert set(nested.summary_values) == {"rows"}
    np.testing.assert_array_equal(nested.summary_values["rows"], flat.summary_values["summaries/rows"])


def test_a_single_loss_gives_losses_total_too():
    trainer = lib.make_trainer()
    state = trainer.init_state()

    out = _aux_state(trainer, state, _BATCH).compute()

    assert out.loss_values["losses/total"] == out.loss_values["losses/l2"]


def test_merged_states_compute_the_values_over_both_batches(mlp):
    trainer, state = mlp
    first, second = _aux_state(trainer, state, _BATCH), _aux_state(trainer, state, _OTHER_BATCH)

    merged = first.merge(second)

    assert isinstance(merged, AuxiliariesState)
    out = merged.compute()
    for name in ("l2", "mean"):
        assert out.loss_values[f"losses/{name}"] == pytest.approx(
            _value_by_hand(trainer, state, [_BATCH, _OTHER_BATCH], name), rel=1e-5
        )
    for name in ("mse", "mean_x"):
        assert out.metric_values[f"metrics/{name}"] == pytest.approx(
            _value_by_hand(trainer, state, [_BATCH, _OTHER_BATCH], name), rel=1e-5
        )
    # a summary keeps the first batch's rows
    np.testing.assert_array_equal(
        out.summary_values["summaries/rows"], first.compute().summary_values["summaries/rows"]
    )


def test_the_or_operator_merges_as_merge_does(mlp):
    trainer, state = mlp
    first, second = _aux_state(trainer, state, _BATCH), _aux_state(trainer, state, _OTHER_BATCH)

    merged = first | second

    assert isinstance(merged, AuxiliariesState)
    assert merged.compute().loss_values == first.merge(second).compute().loss_values
    assert merged.compute().metric_values == first.merge(second).compute().metric_values


def test_none_or_a_state_is_that_state(mlp):
    trainer, state = mlp
    aux = _aux_state(trainer, state, _BATCH)

    assert (None | aux) is aux
    assert aux.merge(None).compute().loss_values == aux.compute().loss_values


def test_a_trainer_steps_aux_state_or_an_auxiliaries_state_merges_into_an_auxiliaries_state(mlp):
    trainer, state = mlp
    _, from_step = trainer.trainstep.step(jax.tree.map(jnp.copy, state), _BATCH, return_metrics=True)
    ours = _aux_state(trainer, state, _BATCH)

    merged = from_step | ours

    assert isinstance(from_step, kd.train.AuxState) and not isinstance(from_step, AuxiliariesState)
    assert isinstance(merged, AuxiliariesState)
    assert set(merged.compute().metric_values) == {"metrics/mse", "metrics/mean_x"}


def test_an_auxiliaries_state_computes_the_trainers_step_values(mlp):
    trainer, state = mlp
    _, from_step = trainer.trainstep.step(jax.tree.map(jnp.copy, state), _BATCH, return_metrics=True)
    kd_values = from_step.compute()

    out = AuxiliariesState(loss_states=from_step.loss_states, metric_states=from_step.metric_states).compute()

    assert {**out.loss_values, **out.metric_values} == pytest.approx(kd_values)


def test_an_auxiliaries_state_is_a_pytree_that_passes_through_jit(mlp):
    trainer, state = mlp
    aux = _aux_state(trainer, state, _BATCH)

    passed = jax.jit(lambda a: a)(aux)

    assert isinstance(passed, AuxiliariesState)
    assert passed.compute().loss_values == pytest.approx(aux.compute().loss_values)


def test_states_of_names_the_auxiliaries_field_of_a_bad_key(forwarded):
    with pytest.raises(kd.train.KeyPathError, match=r"metrics\['bad'\]"):
        Auxiliaries(losses={}, metrics={"bad": lib.Mean(values="preds.nope")}, summaries={}).update_context(
            forwarded
        )
