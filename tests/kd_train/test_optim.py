"""kd.optim.current_learning_rates: the learning rate an `optax.inject_hyperparams` optimizer uses now."""

from __future__ import annotations

import jax.numpy as jnp
import kd
import numpy as np
import optax
import pytest
import train_fixtures as lib

PARAMS = {"w": jnp.zeros(3), "b": jnp.zeros(())}
GRADS = {"w": jnp.ones(3), "b": jnp.ones(())}


def _injected(learning_rate=0.1) -> optax.GradientTransformation:
    return optax.inject_hyperparams(optax.adam)(learning_rate=learning_rate)


def test_reads_the_learning_rate_of_an_injected_optimizer():
    rates = kd.optim.current_learning_rates(_injected(0.1).init(PARAMS))
    assert list(rates) == ["learning_rate"]
    np.testing.assert_allclose(rates["learning_rate"], 0.1)


def test_reads_an_injected_optimizer_nested_in_a_chain():
    opt = optax.chain(optax.clip_by_global_norm(1.0), _injected(0.03))
    np.testing.assert_allclose(kd.optim.current_learning_rates(opt.init(PARAMS))["learning_rate"], 0.03)


def test_reads_an_injected_optimizer_inside_a_partition():
    opt = optax.partition(
        {"adam": _injected(0.02), "frozen": optax.set_to_zero()}, {"w": "adam", "b": "frozen"}
    )
    np.testing.assert_allclose(kd.optim.current_learning_rates(opt.init(PARAMS))["learning_rate"], 0.02)


def test_follows_a_schedule_as_the_optimizer_updates():
    opt = _injected(optax.linear_schedule(init_value=1.0, end_value=0.0, transition_steps=4))
    state = opt.init(PARAMS)
    seen = []
    for _ in range(3):
        _, state = opt.update(GRADS, state, PARAMS)
        seen.append(float(kd.optim.current_learning_rates(state)["learning_rate"]))
    # inject_hyperparams keeps the rate of the last update it made: schedule(0), schedule(1), ...
    assert seen == pytest.approx([1.0, 0.75, 0.5])


def test_the_first_of_several_injected_optimizers_wins():
    opt = optax.chain(_injected(0.1), optax.inject_hyperparams(optax.sgd)(learning_rate=0.5))
    np.testing.assert_allclose(kd.optim.current_learning_rates(opt.init(PARAMS))["learning_rate"], 0.1)


@pytest.mark.parametrize(
    "opt",
    [optax.adam(0.1), optax.chain(optax.clip(1.0), optax.sgd(0.1)), optax.identity()],
    ids=["adam", "chain", "identity"],
)
def test_is_empty_without_injected_hyperparams(opt):
    assert kd.optim.current_learning_rates(opt.init(PARAMS)) == {}


def test_reads_the_trainer_state():
    trainer = lib.make_trainer(optimizer=_injected(0.01))
    rates = kd.optim.current_learning_rates(trainer.init_state().opt_state)
    np.testing.assert_allclose(rates["learning_rate"], 0.01)
