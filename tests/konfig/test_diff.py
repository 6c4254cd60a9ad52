"""`konfig.diff`: added, removed and changed paths, printable."""

from __future__ import annotations

import pathlib

import konfig

EXAMPLES = pathlib.Path(__file__).parent / "example_configs"

with konfig.imports():
    import konfig_example_targets as targets


def _base() -> konfig.ConfigDict:
    cfg = konfig.ConfigDict()
    cfg.num_train_steps = 1000
    cfg.schedule = targets.cosine_decay_schedule(init_value=0.1, decay_steps=cfg.ref.num_train_steps)
    cfg.model = targets.Sequential(layers=[targets.Dense(features=4), targets.Dense(8)])
    cfg.tags = ("a", "b")
    return cfg


def test_equal_configs_have_no_differences():
    d = konfig.diff(_base(), _base())
    assert not d and len(d) == 0 and str(d) == "(no differences)"


def test_changed_value_is_listed_by_path():
    b = _base()
    b.schedule.init_value = 0.01
    assert konfig.diff(_base(), b).changed == ["cfg.schedule.init_value"]


def test_added_and_removed_keys():
    a, b = _base(), _base()
    del b.tags
    b.seed = 3
    d = konfig.diff(a, b)
    assert (d.added, d.removed, d.changed) == (["cfg.seed"], ["cfg.tags"], [])


def test_list_items_are_compared_by_index():
    b = _base()
    b.model.layers[1].activation = "gelu"
    b.model.layers.append(targets.Dense(2))
    d = konfig.diff(_base(), b)
    assert d.added == ["cfg.model.layers[1].activation", "cfg.model.layers[2]"]


def test_positional_argument_path_uses_an_index():
    b = _base()
    b.model.layers[1][0] = 16
    assert konfig.diff(_base(), b).changed == ["cfg.model.layers[1][0]"]


def test_changed_target_is_one_change_for_the_node():
    b = _base()
    b.model.layers[0] = targets.Sequential(layers=[])
    assert konfig.diff(_base(), b).changed == ["cfg.model.layers[0]"]


def test_values_of_different_types_differ():
    a = konfig.ConfigDict(x=1, y=1, z=(1,))
    b = konfig.ConfigDict(x=1.0, y=True, z=[1])
    assert konfig.diff(a, b).changed == ["cfg.x", "cfg.y", "cfg.z"]


def test_nan_equals_nan():
    assert not konfig.diff(konfig.ConfigDict(x=float("nan")), konfig.ConfigDict(x=float("nan")))


def test_reference_replaced_by_its_value_is_a_change():
    b = _base()
    b.schedule.decay_steps = 1000
    d = konfig.diff(_base(), b)
    assert d.changed == ["cfg.schedule.decay_steps"]
    assert "cfg.ref.num_train_steps -> 1000" in str(d)


def test_references_to_the_same_path_are_equal():
    a, b = _base(), _base()
    assert not konfig.diff(a.schedule, b.schedule)


def test_printed_diff_marks_each_kind():
    a, b = _base(), _base()
    b.num_train_steps = 10
    b.seed = 0
    del b.tags
    lines = str(konfig.diff(a, b)).splitlines()
    assert lines == [
        "~ cfg.num_train_steps: 1000 -> 10",
        "- cfg.tags: ('a', 'b')",
        "+ cfg.seed: 0",
    ]


def test_cyclic_configs_terminate():
    a, b = konfig.ConfigDict(x=1), konfig.ConfigDict(x=2)
    a.self_ = a
    b.self_ = b
    assert konfig.diff(a, b).changed == ["cfg.x"]


def test_plain_json_data_can_be_compared():
    a = _base()
    b = konfig.from_json(a.to_json())
    b.model.layers[0].features = 5
    assert konfig.diff(a, b).changed == ["cfg.model.layers[0].features"]


def test_diff_of_a_sweep_item_against_the_base():
    items = konfig.expand_sweep(str(EXAMPLES / "headline.py"), "lr")
    base = konfig.build_config(str(EXAMPLES / "headline.py"))
    assert [konfig.diff(base, item.config).changed for item in items] == [[], ["cfg.schedule.init_value"]]


def test_change_in_a_shared_node_is_listed_at_every_path():
    a, b = _base(), _base()
    a.eval_model = a.model
    b.eval_model = b.model
    b.model.layers[0].features = 5
    assert konfig.diff(a, b).changed == ["cfg.model.layers[0].features", "cfg.eval_model.layers[0].features"]


def test_reordered_keys_are_no_difference():
    assert not konfig.diff(konfig.ConfigDict(x=1, y=2), konfig.ConfigDict(y=2, x=1))


def test_node_shared_in_one_config_only_compares_by_content():
    node = konfig.ConfigDict(f=1)
    a = konfig.ConfigDict(p=node, q=node)
    b = konfig.ConfigDict(p=konfig.ConfigDict(f=1), q=konfig.ConfigDict(f=2))
    assert konfig.diff(a, b).changed == ["cfg.q.f"]


def test_changed_reference_target_is_listed_once_at_the_target():
    a, b = _base(), _base()
    b.num_train_steps = 10
    assert konfig.diff(a, b).changed == ["cfg.num_train_steps"]


def test_parsed_json_text_compares_equal_to_its_config():
    import json

    cfg = _base()
    assert not konfig.diff(cfg, json.loads(cfg.to_json()))


def test_digit_str_key_of_a_plain_node_is_quoted_in_the_path():
    a, b = konfig.ConfigDict({"0": 1}), konfig.ConfigDict({"0": 2})
    assert konfig.diff(a, b).changed == ["cfg['0']"]
