"""Sweeps: `sweep()` / `sweep_<name>()` generators expanded as a cartesian product."""

from __future__ import annotations

import pathlib
import types

import konfig
import pytest

EXAMPLES = pathlib.Path(__file__).parent / "example_configs"
HEADLINE = str(EXAMPLES / "headline.py")


def test_default_selection_is_the_sweep_function():
    assert konfig.sweep_items(HEADLINE) == [{"num_train_steps": 10}, {"num_train_steps": 20}]


def test_named_sweep_calls_sweep_underscore_name():
    assert konfig.sweep_items(HEADLINE, "lr") == [{"schedule.init_value": 0.1}, {"schedule.init_value": 0.01}]


def test_several_sweeps_multiply_in_order():
    items = konfig.sweep_items(HEADLINE, "sweep,lr")
    assert items == [
        {"num_train_steps": 10, "schedule.init_value": 0.1},
        {"num_train_steps": 10, "schedule.init_value": 0.01},
        {"num_train_steps": 20, "schedule.init_value": 0.1},
        {"num_train_steps": 20, "schedule.init_value": 0.01},
    ]


def test_selection_as_a_list_equals_the_comma_string():
    assert konfig.sweep_items(HEADLINE, ["lr", "width"]) == konfig.sweep_items(HEADLINE, "lr,width")


def test_no_selection_is_one_unswept_item():
    assert konfig.sweep_items(HEADLINE, None) == [{}]


def test_sweep_item_changes_the_headline_schedule():
    items = konfig.expand_sweep(HEADLINE)
    assert [konfig.resolve(item.config).schedule.decay_steps for item in items] == [10, 20]


def test_sweep_item_json_keeps_the_reference_live():
    item = konfig.expand_sweep(HEADLINE)[1]
    loaded = konfig.from_json(item.to_json())
    assert konfig.resolve(loaded).schedule.decay_steps == 20
    loaded.num_train_steps = 3
    assert konfig.resolve(loaded).schedule.decay_steps == 3


def test_each_item_is_an_independent_config():
    a, b = (item.config for item in konfig.expand_sweep(HEADLINE))
    a.model.layers[0].features = 99
    assert b.model.layers[0].features == 16


def test_args_items_reach_config_args():
    items = konfig.expand_sweep(HEADLINE, "width")
    assert [item.config.model.layers[0].features for item in items] == [32, 64, 128]


def test_py_values_in_items_become_nodes():
    (item,) = konfig.expand_sweep(HEADLINE, "model")
    assert konfig.resolve(item.config).model.features == 3


def test_glob_items_apply_like_the_cli():
    (item,) = konfig.expand_sweep(HEADLINE, "batch")
    assert (item.config.batch_size, item.config.eval.batch_size) == (64, 64)


def test_command_line_overrides_apply_to_every_item_before_it():
    items = konfig.expand_sweep(
        HEADLINE, "lr", overrides={"batch_size": "7", "schedule.init_value": "0.5"}, from_strings=True
    )
    assert [(i.config.batch_size, i.config.schedule.init_value) for i in items] == [(7, 0.1), (7, 0.01)]


def test_item_name_labels_the_job():
    items = konfig.expand_sweep(HEADLINE, "sweep,lr")
    assert items[1].name == "num_train_steps=10,init_value=0.01"


def test_unknown_sweep_lists_the_available_ones():
    with pytest.raises(konfig.OverrideError, match=r"sweep_lr\(\)") as info:
        konfig.sweep_items(HEADLINE, "lrr")
    assert "sweep_width()" in str(info.value)


def test_unknown_sweep_names_the_config_file_as_given(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mnist.py").write_text("def sweep_width():\n    yield {'a': 1}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(konfig.OverrideError) as info:
        konfig.sweep_items(konfig.load_config_module("configs/mnist.py"), "widht")
    message = str(info.value)
    assert "config file 'configs/mnist.py' has no `sweep_widht()`" in message
    assert "_konfig_config" not in message
    assert message.endswith("Did you mean `sweep_width()`?")


def test_unknown_sweep_offers_only_names_close_after_the_prefix():
    module = types.ModuleType("sweeps_config")
    module.sweep_seed = module.sweep_steps = lambda: iter([{}])
    with pytest.raises(konfig.OverrideError) as info:
        konfig.sweep_items(module, "lr")
    assert "Did you mean" not in str(info.value)  # `sweep_lr` is not close to `sweep_seed`


def test_missing_get_config_names_the_config_file_as_given(tmp_path, monkeypatch):
    (tmp_path / "empty.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(konfig.OverrideError, match=r"config file 'empty\.py' defines no `get_config\(\)`"):
        konfig.build_config("empty.py")


def test_two_sweeps_setting_the_same_path_is_an_error():
    with pytest.raises(konfig.OverrideError, match="num_train_steps"):
        konfig.sweep_items(HEADLINE, "sweep,steps_again")


def test_item_with_an_unknown_path_names_it():
    module = types.ModuleType("bad_sweep_config")
    module.get_config = lambda: konfig.ConfigDict(lr=0.1)
    module.sweep = lambda: iter([{"lrr": 1.0}])
    with pytest.raises(konfig.OverrideError, match=r"cfg\.lr"):
        konfig.expand_sweep(module)


def test_item_that_is_not_a_dict_is_an_error():
    module = types.ModuleType("bad_sweep_config")
    module.sweep = lambda: iter([0.1])
    with pytest.raises(konfig.OverrideError, match="Item 0 of `sweep\\(\\)`"):
        konfig.sweep_items(module)


def test_empty_sweep_is_an_error():
    module = types.ModuleType("bad_sweep_config")
    module.sweep = lambda: iter([])
    with pytest.raises(konfig.OverrideError, match="no items"):
        konfig.sweep_items(module)


def test_command_line_args_combine_with_item_args():
    items = konfig.expand_sweep(HEADLINE, "width", args={"name": "007"}, from_strings=True)
    assert [(i.config.name, i.config.model.layers[0].features) for i in items] == [
        ("007", 32),
        ("007", 64),
        ("007", 128),
    ]


@pytest.mark.parametrize("names", ["lr,lr", "lr,sweep_lr"])
def test_a_sweep_selected_twice_is_an_error(names):
    with pytest.raises(konfig.OverrideError, match=r"`sweep_lr\(\)` is selected twice"):
        konfig.sweep_items(HEADLINE, names)


def test_empty_names_in_a_selection_are_ignored():
    assert konfig.sweep_items(HEADLINE, "sweep, ,") == konfig.sweep_items(HEADLINE)
