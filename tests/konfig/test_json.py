"""JSON: lossless round trips, Kauldron compatibility, versioning, determinism."""

from __future__ import annotations

import json
import operator
import pathlib
import sys

import konfig
import pytest

EXAMPLES = pathlib.Path(__file__).parent / "example_configs"

with konfig.imports():
    import konfig_example_targets as targets

# Written by Kauldron 1.4.2's `cfg.to_json()` for a config like `_headline()` below
# (its ref became a value, the shared layer is repeated with `__id__`, the tuple is a list).
KAULDRON_JSON = (
    '{"num_train_steps": 1000, "schedule": {"__qualname__": "konfig_example_targets:cosine_decay_schedule",'
    ' "init_value": 0.1, "decay_steps": 1000}, "model": {"__qualname__": "konfig_example_targets:Sequential",'
    ' "layers": [{"__qualname__": "konfig_example_targets:Dense", "features": 4, "__id__": 0},'
    ' {"__qualname__": "konfig_example_targets:Dense", "features": 4, "__id__": 0},'
    ' {"__qualname__": "konfig_example_targets:Dense", "0": 8, "activation": "gelu"}]},'
    ' "act": {"__const__": "konfig_example_targets:Activation.GELU"},'
    ' "ids": {"__raw__=1": "one", "__raw__=2": "two"}, "shape": [2, 3]}'
)


def _headline() -> konfig.ConfigDict:
    cfg = konfig.ConfigDict()
    cfg.num_train_steps = 1000
    cfg.schedule = targets.cosine_decay_schedule(init_value=0.1, decay_steps=cfg.ref.num_train_steps)
    layer = targets.Dense(features=4)
    cfg.model = targets.Sequential(layers=[layer, layer, targets.Dense(8, activation="gelu")])
    cfg.act = targets.Activation.GELU
    cfg.ids = {1: "one", 2: "two"}
    cfg.shape = (2, 3)
    return cfg


def _round_trip(cfg):
    return konfig.from_json(cfg.to_json())


def test_round_trip_gives_an_equal_config():
    cfg = _headline()
    assert _round_trip(cfg) == cfg


def test_headline_reference_survives_a_round_trip():
    loaded = _round_trip(_headline())
    loaded.num_train_steps = 5
    assert konfig.resolve(loaded).schedule.decay_steps == 5


def test_reference_is_written_as_a_reference_not_a_value():
    data = json.loads(_headline().to_json())
    assert data["schedule"]["decay_steps"] == {"__ref__": ["num_train_steps"]}


def test_format_version_is_the_first_key():
    data = json.loads(_headline().to_json())
    assert next(iter(data)) == "__konfig_version__" and data["__konfig_version__"] == 1


def test_output_is_deterministic_across_builds():
    assert _headline().to_json() == _headline().to_json()


def test_set_order_does_not_change_the_output():
    a = konfig.ConfigDict(s={"b", "a", "c", 3})
    b = konfig.ConfigDict(s={3, "c", "a", "b"})
    assert a.to_json() == b.to_json()


def test_dumps_keyword_arguments_are_passed_through():
    assert "\n  " in _headline().to_json(indent=2)


@pytest.mark.parametrize(
    "value",
    [
        (1, (2, 3), []),
        {1, "a", None},
        frozenset({1.5, b"x"}),
        b"\x00\xffbytes",
        slice(1, None, -1),
        ...,
        range(2, 10, 3),
        1 + 2j,
        pathlib.PurePosixPath("/data/set"),
        float("inf"),
        "__raw__=1",
    ],
)
def test_leaf_kinds_survive_with_their_type(value):
    loaded = _round_trip(konfig.ConfigDict(x=value))
    assert loaded.x == value and type(loaded.x) is type(value)


def test_non_str_keys_survive():
    cfg = konfig.ConfigDict({1: "a", (1, "b"): 2, None: 3, 2.5: 4, False: 5})
    loaded = _round_trip(cfg)
    assert list(loaded.items()) == [(1, "a"), ((1, "b"), 2), (None, 3), (2.5, 4), (False, 5)]
    assert type(list(loaded)[-1]) is bool


def test_keys_that_look_like_markers_survive():
    cfg = konfig.ConfigDict({"__tuple__": 1, "__id__": 2, "__raw__=3": 3, "__ref__": [4]})
    assert dict(_round_trip(cfg).items()) == dict(cfg.items())


def test_shared_node_is_written_in_full_at_each_place_as_kauldron_does_and_stays_shared():
    cfg = _headline()
    text = cfg.to_json()
    assert text.count('"features": 4, "__id__": 0}') == 2
    layers = konfig.from_json(text).model.layers
    assert layers[0] is layers[1]


def test_cycle_survives():
    cfg = konfig.ConfigDict(a=1)
    cfg.child = konfig.ConfigDict(b=2)
    cfg.child.parent = cfg
    loaded = _round_trip(cfg)
    assert loaded.child.parent is loaded


def test_reference_operations_survive_and_resolve_the_same():
    cfg = konfig.ConfigDict(a=3, b=[1, 2])
    cfg.c = -(cfg.ref.a * 2 + 1) // 2
    cfg.d = cfg.ref.b[1]
    cfg.e = abs(cfg.ref.a - 10) > 2
    loaded = _round_trip(cfg)
    assert loaded == cfg
    assert konfig.resolve(loaded) == konfig.resolve(cfg)


def test_ref_fn_of_a_module_function_survives():
    cfg = konfig.ConfigDict(a=3, b=4)
    cfg.total = konfig.ref_fn(operator.add, cfg.ref.a, cfg.ref.b)
    loaded = _round_trip(cfg)
    loaded.a = 10
    assert konfig.resolve(loaded).total == 14


def test_ref_fn_of_a_lambda_names_the_path():
    cfg = konfig.ConfigDict(a=3)
    cfg.sub = konfig.ConfigDict(total=konfig.ref_fn(lambda x: x + 1, cfg.ref.a))
    with pytest.raises(TypeError, match=r"cfg\.sub\.total.*lambda"):
        cfg.to_json()


def test_reference_rooted_in_a_sub_config_keeps_its_root():
    cfg = konfig.ConfigDict()
    cfg.data = konfig.ConfigDict(batch_size=8, split="train")
    cfg.eval_data = konfig.ref_copy(cfg.data)
    cfg.eval_data.split = "test"
    loaded = _round_trip(cfg)
    loaded.data.batch_size = 64
    resolved = konfig.resolve(loaded)
    assert (resolved.eval_data.batch_size, resolved.eval_data.split) == (64, "test")


def test_placeholders_survive():
    cfg = konfig.ConfigDict(workdir=konfig.placeholder(str), n=konfig.required(int))
    loaded = _round_trip(cfg)
    assert loaded == cfg
    with pytest.raises(konfig.MissingValueError, match="n"):
        konfig.resolve(loaded)


def test_kauldron_json_loads_and_resolves():
    cfg = konfig.from_json(KAULDRON_JSON)
    assert cfg.ids[1] == "one"
    assert cfg.model.layers[0] is cfg.model.layers[1]
    resolved = konfig.resolve(cfg)
    assert resolved.schedule.decay_steps == 1000
    assert resolved.act is targets_real().Activation.GELU
    assert resolved.model.layers[2] == targets_real().Dense(8, activation="gelu")


def targets_real():
    import konfig_example_targets

    return konfig_example_targets


def test_kauldron_json_equals_the_same_config_with_its_losses():
    cfg = _headline()
    cfg.schedule.decay_steps = 1000  # Kauldron wrote the value, not the ref
    cfg.shape = [2, 3]  # and a list for the tuple
    assert konfig.from_json(KAULDRON_JSON) == cfg


def test_resolve_accepts_the_plain_json_dict():
    data = json.loads(_headline().to_json())
    assert konfig.resolve(data).schedule.decay_steps == 1000


def test_newer_format_version_is_refused_with_advice():
    with pytest.raises(konfig.JsonFormatError, match="Upgrade konfig"):
        konfig.from_json('{"__konfig_version__": 99, "a": 1}')


def test_invalid_json_is_a_json_format_error():
    with pytest.raises(konfig.JsonFormatError):
        konfig.from_json("{not json")


def test_json_format_error_is_a_value_error():
    assert issubclass(konfig.JsonFormatError, ValueError)


def test_loading_imports_nothing():
    text = '{"model": {"__qualname__": "module_that_does_not_exist_xyz:Model", "n": 1}}'
    cfg = konfig.from_json(text)
    assert "module_that_does_not_exist_xyz" not in sys.modules
    with pytest.raises(konfig.DisallowedTargetError):
        konfig.resolve(cfg, allowed=["konfig_example_targets"])


def test_a_list_root_round_trips():
    assert konfig.from_json(konfig.to_json([1, (2,)])) == [1, (2,)]


def test_output_is_the_same_in_processes_with_different_hash_seeds():
    import os
    import subprocess

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import konfig\n"
        "cfg = konfig.ConfigDict(s={'x', 'y', 'z', 1, b'q'}, f=frozenset('abc'), d={'k': 1})\n"
        "cfg.shared = cfg.d\n"
        "print(cfg.to_json())\n"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", code, str(EXAMPLES)], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(run.stdout)
    assert len(outputs) == 1


def test_ref_fn_of_a_module_not_yet_imported_is_imported_at_resolve(monkeypatch: pytest.MonkeyPatch):
    text = (
        '{"__konfig_version__": 1, "rgb": [1.0, 0.0, 0.0], "hsv": {"__op__": "call", "args": '
        '[{"__const__": "colorsys:rgb_to_hsv"}, {"__ref__": ["rgb", 0]}, 0.0, 0.0]}}'
    )
    # Another test (or library) may have imported it already; start from "not imported".
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    cfg = konfig.from_json(text)
    assert "colorsys" not in sys.modules
    assert konfig.resolve(cfg).hsv == (0.0, 1.0, 1.0)  # pure red


def test_ref_fn_of_a_class_round_trips_equal():
    cfg = konfig.ConfigDict(x=2.5)
    cfg.n = konfig.ref_fn(int, cfg.ref.x)
    loaded = _round_trip(cfg)
    assert loaded == cfg and konfig.resolve(loaded).n == 2


@pytest.mark.parametrize("key", [float("inf"), float("-inf"), (1, float("inf"))])
def test_infinite_float_keys_survive(key):
    loaded = _round_trip(konfig.ConfigDict({key: "x"}))
    assert list(loaded.keys()) == [key]


def test_nan_key_is_refused_with_its_path():
    with pytest.raises(TypeError, match=r"cfg\.sub.*nan"):
        konfig.ConfigDict(sub={float("nan"): 1}).to_json()


def test_resolve_accepts_a_plain_dict_with_non_str_keys():
    resolved = konfig.resolve({"ids": {1: "one", (2, 3): "pair"}, 4: "four"})
    assert (resolved.ids[1], resolved.ids[(2, 3)], resolved[4]) == ("one", "pair", "four")


def test_reference_before_its_shared_node_gets_the_content():
    # Hand-edited JSON may name a shared node (`{"__id__": 1}`) before the copy holding its fields.
    cfg = konfig.from_json('{"a": {"__id__": 1}, "b": {"__id__": 1, "x": 2}}')
    assert cfg.a is cfg.b and cfg.a.x == 2


def test_kauldron_shared_node_with_id_last_and_content_repeated_loads_shared():
    text = '{"a": {"x": 1, "__id__": 0}, "b": [{"x": 1, "__id__": 0}]}'
    cfg = konfig.from_json(text)
    assert cfg.a is cfg.b[0] and dict(cfg.a) == {"x": 1}


def test_set_of_ints_is_written_in_numeric_order():
    assert '{"__set__": [2, 10, 33]}' in konfig.ConfigDict(s={33, 10, 2}).to_json()


def test_plain_dicts_are_written_like_config_nodes():
    data = {"model": {"__qualname__": "builtins:dict", "width": 2}, "ids": {1: "one"}, "t": (1,)}
    data["again"] = data["model"]
    loaded = konfig.from_json(konfig.to_json(data))
    assert loaded == konfig.ConfigDict(data) and loaded.again is loaded.model


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ('{"a": 1, "b": {"__ref__": "a"}}', "__ref__"),
        ('{"b": {"__bytes__": "!!"}}', "__bytes__"),
        ('{"a": {"__id__": [1], "x": 1}}', "__id__"),
        ('{"b": {"__op__": "system", "args": []}}', "system"),
        ('{"__konfig_version__": "1", "a": 1}', "an int"),
    ],
)
def test_malformed_markers_are_json_format_errors(text, complaint):
    with pytest.raises(konfig.JsonFormatError, match=complaint):
        konfig.from_json(text)


def test_writing_a_shared_node_leaves_the_config_unchanged():
    cfg = _headline()
    before = repr(cfg)
    text = cfg.to_json()
    assert '{"__qualname__": "konfig_example_targets:Dense", "features": 4, "__id__": 0}' in text
    assert repr(cfg) == before and "__id__" not in cfg.model.layers[0]._fields


def test_sorted_keys_output_round_trips_with_shared_nodes_and_cycles():
    node = konfig.ConfigDict(x=1)
    cfg = konfig.ConfigDict(b=node, a=node)
    cfg.z = konfig.ConfigDict(parent=cfg)
    loaded = konfig.from_json(cfg.to_json(sort_keys=True, indent=1))
    assert loaded == cfg and loaded.a is loaded.b and loaded.z.parent is loaded


def test_file_written_by_kauldron_loads_with_sharing_keys_and_unicode():
    # `cfg.to_json()` of Kauldron 1.4.2 for a config like `_headline()` plus a float key, a bool
    # key (True == 1 in Python, so it replaced the `1` key), the shared layer nested in dicts
    # and lists, and non-ASCII text.
    cfg = konfig.from_json((EXAMPLES / "kauldron_1_4_2.json").read_text())
    layer = cfg.model.layers[0]
    assert cfg.nested.a.b[0] is layer and cfg.nested.a.b[1].c is layer and cfg.model.layers[1] is layer
    assert dict(cfg.ids) == {1: "t", 2.5: "two"} and cfg.uni == "héllo ☃"
    resolved = konfig.resolve(cfg)
    assert resolved.nested["a"]["b"][0] is resolved.model.layers[0]
    assert resolved.act is targets_real().Activation.GELU
