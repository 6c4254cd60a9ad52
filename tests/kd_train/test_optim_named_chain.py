"""kd.optim.named_chain: optax.chain's updates, with a state dict keyed by the names, in a Trainer and a config."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import konfig
import numpy as np
import optax
import pytest
import train_fixtures as lib

PARAMS = {"w": jnp.arange(3.0), "b": jnp.ones(())}


def _grads(step: int) -> dict[str, jax.Array]:
    rng = np.random.default_rng(step)
    return {"w": jnp.asarray(rng.normal(size=3) * 3), "b": jnp.asarray(rng.normal())}


def _transforms() -> dict[str, optax.GradientTransformation]:
    return {
        "clip": optax.clip_by_global_norm(max_norm=1.0),
        "adam": optax.scale_by_adam(b1=0.95),
        "decay": optax.add_decayed_weights(weight_decay=0.1),
        "lr": optax.scale(-0.01),
    }


def _run(opt: optax.GradientTransformation, steps: int = 3) -> list:
    state, params, seen = opt.init(PARAMS), PARAMS, []
    for step in range(steps):
        updates, state = opt.update(_grads(step), state, params)
        params = optax.apply_updates(params, updates)
        seen.append(updates)
    return seen


def test_updates_equal_optax_chain():
    named = _run(kd.optim.named_chain(**_transforms()))
    chained = _run(optax.chain(*_transforms().values()))
    for a, b in zip(named, chained, strict=True):
        jax.tree.map(np.testing.assert_array_equal, a, b)


def test_state_is_a_dict_keyed_by_the_names_in_order():
    state = kd.optim.named_chain(**_transforms()).init(PARAMS)
    assert isinstance(state, dict)
    assert list(state) == ["clip", "adam", "decay", "lr"]
    assert int(state["adam"].count) == 0
    jax.tree.map(np.testing.assert_array_equal, state["adam"].mu, jax.tree.map(jnp.zeros_like, PARAMS))


def test_the_state_reads_by_name_after_updates():
    opt = kd.optim.named_chain(**_transforms())
    state = opt.init(PARAMS)
    _, state = opt.update(_grads(0), state, PARAMS)
    assert int(state["adam"].count) == 1


def test_a_value_that_is_no_transformation_names_its_key():
    with pytest.raises(TypeError, match=r"adam= .* optax\.adam\(1e-3\)"):
        kd.optim.named_chain(clip=optax.clip(1.0), adam=optax.adam)


def test_trains_as_a_trainer_optimizer_like_optax_chain():
    named_state, _ = lib.make_trainer(optimizer=kd.optim.named_chain(**_transforms())).train()
    chain_state, _ = lib.make_trainer(optimizer=optax.chain(*_transforms().values())).train()
    assert int(named_state.step) == 4
    assert list(named_state.opt_state) == ["clip", "adam", "decay", "lr"]
    assert int(named_state.opt_state["adam"].count) == 4
    jax.tree.map(np.testing.assert_allclose, named_state.params, chain_state.params)
    jax.tree.map(np.testing.assert_allclose, named_state.opt_state["adam"], chain_state.opt_state[1])


def test_a_config_reads_and_sets_transforms_by_name():
    with konfig.imports():
        import kd as kd_cfg
        import optax as optax_cfg
    cfg = konfig.ConfigDict()
    cfg.optimizer = kd_cfg.optim.named_chain(
        **{"clip": optax_cfg.clip_by_global_norm(max_norm=1.0), "adam": optax_cfg.scale_by_adam(b1=0.95)}
    )
    assert cfg.optimizer.adam.b1 == 0.95
    cfg.optimizer.adam.b1 = 0.5  # a sweep sets `optimizer.adam.b1`
    opt = konfig.resolve(cfg).optimizer
    state = opt.init(PARAMS)
    assert list(state) == ["clip", "adam"]
    expected = _run(optax.chain(optax.clip_by_global_norm(max_norm=1.0), optax.scale_by_adam(b1=0.5)))
    jax.tree.map(np.testing.assert_array_equal, _run(opt), expected)


def test_a_json_config_keeps_the_order_of_the_transforms():
    # The order is the order updates apply in, so it must survive the run's saved config.
    with konfig.imports():
        import kd as kd_cfg
        import optax as optax_cfg
    cfg = konfig.ConfigDict()
    cfg.optimizer = kd_cfg.optim.named_chain(lr=optax_cfg.scale(-0.1), clip=optax_cfg.clip(0.01))
    opt = konfig.resolve(konfig.from_json(konfig.to_json(cfg))).optimizer
    assert list(opt.init(PARAMS)) == ["lr", "clip"]
    jax.tree.map(
        np.testing.assert_array_equal, _run(opt), _run(optax.chain(optax.scale(-0.1), optax.clip(0.01)))
    )
