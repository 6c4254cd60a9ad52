"""The headline schedule with real optax through konfig's CLI, sweeps and JSON.

`decay_steps=cfg.ref.num_train_steps` must follow `num_train_steps` whichever
way it is changed: a CLI flag, a sweep item, or an edit after a JSON round trip.
A cosine schedule is 0 at `decay_steps` and half its initial value midway.
"""

from __future__ import annotations

import textwrap

import konfig
import pytest

optax = pytest.importorskip("optax")

CONFIG = textwrap.dedent(
    """
    import konfig

    with konfig.imports():
        import optax


    def get_config():
        cfg = konfig.ConfigDict()
        cfg.num_train_steps = 1000
        cfg.schedule = optax.cosine_decay_schedule(init_value=0.1, decay_steps=cfg.ref.num_train_steps)
        cfg.optimizer = optax.adam(learning_rate=cfg.ref.schedule)
        return cfg


    def sweep_steps():
        for steps in [10, 40]:
            yield {"num_train_steps": steps}
    """
)


@pytest.fixture
def config_path(tmp_path):
    path = tmp_path / "optax_config.py"
    path.write_text(CONFIG)
    return str(path)


def _decay_steps_of(schedule, steps: int) -> None:
    assert float(schedule(steps // 2)) == pytest.approx(0.05)
    assert float(schedule(steps)) == pytest.approx(0.0)


def test_cli_override_changes_the_optax_schedule(config_path):
    cfg, _ = konfig.parse_flags([f"--cfg={config_path}", "--cfg.num_train_steps=20"])
    _decay_steps_of(konfig.resolve(cfg).schedule, 20)


def test_sweep_items_change_the_optax_schedule(config_path):
    items = konfig.expand_sweep(config_path, "steps")
    for item, steps in zip(items, [10, 40], strict=True):
        _decay_steps_of(konfig.resolve(item.config).schedule, steps)


def test_json_round_trip_keeps_the_optax_schedule_linked(config_path):
    cfg = konfig.build_config(config_path)
    loaded = konfig.from_json(cfg.to_json())
    loaded.num_train_steps = 30
    resolved = konfig.resolve(loaded)
    _decay_steps_of(resolved.schedule, 30)
    assert isinstance(resolved.optimizer, optax.GradientTransformation)


def test_py_flag_builds_a_real_optax_optimizer(config_path):
    cfg, _ = konfig.parse_flags([f"--cfg={config_path}", "--cfg.optimizer=py::optax.sgd(learning_rate=0.5)"])
    assert isinstance(konfig.resolve(cfg).optimizer, optax.GradientTransformation)


def test_unswept_item_json_equals_the_overridden_config(config_path):
    cfg = konfig.build_config(config_path, overrides={"num_train_steps": 8})
    text = konfig.expand_sweep(config_path, None, overrides={"num_train_steps": 8})[0].to_json()
    assert konfig.from_json(text) == cfg


def test_absl_flags_parser_hands_the_rest_to_absl(config_path):
    from absl import flags  # installed with optax

    values = flags.FlagValues()
    flags.DEFINE_string("workdir", None, "", flag_values=values)

    def flags_parser(argv):  # what `app.run(main, flags_parser=...)` receives
        cfg, rest = konfig.parse_flags(argv[1:])
        values(argv[:1] + rest)
        return cfg

    cfg = flags_parser(["prog", f"--cfg={config_path}", "--cfg.num_train_steps=16", "--workdir=/w"])
    assert values.workdir == "/w"
    _decay_steps_of(konfig.resolve(cfg).schedule, 16)


def test_py_flag_builds_a_real_flax_module_with_nested_calls(config_path):
    nn = pytest.importorskip("flax.linen")
    flag = "--cfg.model=py::flax.linen.Sequential([flax.linen.Dense(features=12), flax.linen.Dense(3, use_bias=False)])"
    cfg, _ = konfig.parse_flags([f"--cfg={config_path}", "--cfg.+model=None", flag])
    model = konfig.resolve(cfg).model
    assert isinstance(model, nn.Sequential)
    assert [(layer.features, layer.use_bias) for layer in model.layers] == [(12, True), (3, False)]
