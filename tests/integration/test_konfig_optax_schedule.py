"""The headline konfig case with real optax: a schedule that follows a ref."""

import pytest

optax = pytest.importorskip("optax")

import konfig  # noqa: E402


def _config():
    with konfig.imports():
        import optax as optax_cfg

    cfg = konfig.ConfigDict()
    cfg.num_train_steps = 1000
    cfg.schedule = optax_cfg.cosine_decay_schedule(init_value=0.1, decay_steps=cfg.ref.num_train_steps)
    cfg.optimizer = optax_cfg.adam(learning_rate=cfg.ref.schedule)
    return cfg


def test_schedule_reaches_half_its_value_at_half_the_steps():
    schedule = konfig.resolve(_config()).schedule
    assert float(schedule(500)) == pytest.approx(0.05)


def test_changing_num_train_steps_in_python_changes_the_schedule():
    cfg = _config()
    cfg.num_train_steps = 2000
    schedule = konfig.resolve(cfg).schedule
    assert float(schedule(1000)) == pytest.approx(0.05)
    assert float(schedule(2000)) == pytest.approx(0.0)


def test_optimizer_steps_with_the_referenced_schedule():
    import jax.numpy as jnp

    cfg = _config()
    cfg.schedule.init_value = 0.5
    optimizer = konfig.resolve(cfg).optimizer
    params = jnp.zeros(3)
    updates, _ = optimizer.update(jnp.ones(3), optimizer.init(params), params)
    assert [float(u) for u in updates] == pytest.approx([-0.5] * 3, rel=1e-4)


def test_config_shows_the_reference():
    assert "decay_steps=cfg.ref.num_train_steps" in repr(_config())


def test_typo_in_optax_fails_at_config_time():
    with konfig.imports():
        import optax as optax_cfg
    with pytest.raises(konfig.TargetNotFoundError, match="cosine_decay_schedule"):
        _ = optax_cfg.cosine_decay_schedul


def test_unknown_optax_argument_fails_at_config_time():
    with konfig.imports():
        import optax as optax_cfg
    with pytest.raises(konfig.ArgumentError, match="did you mean 'decay_steps'"):
        optax_cfg.cosine_decay_schedule(init_value=0.1, decay_step=10)


def test_unknown_optax_argument_set_later_names_the_config_path():
    cfg = _config()
    with pytest.raises(konfig.ArgumentError, match=r"^In cfg\.schedule: .*did you mean 'decay_steps'"):
        cfg.schedule.decay_step = 10
