"""ConfigDict: access, positional args, copying, validation, defaults."""

import copy
import pickle

import konfig
import pytest

with konfig.imports():
    import fake_lib as fl


def test_attribute_and_item_access_read_the_same_field():
    cfg = konfig.ConfigDict(lr=0.1)
    cfg["steps"] = 3
    assert cfg.lr == cfg["lr"] == 0.1
    assert cfg.steps == 3


def test_fields_keep_insertion_order():
    cfg = konfig.ConfigDict()
    for name in ["z", "a", "m"]:
        cfg[name] = 1
    assert list(cfg) == ["z", "a", "m"]


def test_nested_dicts_become_config_dicts():
    cfg = konfig.ConfigDict({"data": {"batch_size": 32}})
    assert isinstance(cfg.data, konfig.ConfigDict)
    assert cfg.data.batch_size == 32


def test_dict_inside_list_becomes_config_dict():
    cfg = konfig.ConfigDict(items=[{"a": 1}], pair=({"b": 2}, 3))
    assert isinstance(cfg["items"][0], konfig.ConfigDict)
    assert isinstance(cfg.pair, tuple) and cfg.pair[0].b == 2


def test_missing_attribute_suggests_close_field():
    cfg = konfig.ConfigDict(learning_rate=0.1)
    with pytest.raises(AttributeError, match="did you mean 'learning_rate'"):
        _ = cfg.learning_rat


def test_missing_item_raises_key_error():
    with pytest.raises(KeyError):
        konfig.ConfigDict()["nope"]


def test_positional_arguments_are_indexed_by_int():
    node = fl.add(1, 2)
    assert node[0] == 1 and node[1] == 2
    assert node[-1] == 2
    assert node["0"] == 1


def test_setting_next_positional_index_appends_an_argument():
    node = fl.anything(1)
    node[1] = "two"
    assert node["1"] == "two"
    assert konfig.resolve(node) == ((1, "two"), {})


def test_positional_index_past_the_end_raises_index_error():
    node = fl.add(1)
    with pytest.raises(IndexError, match="1 positional"):
        node[3] = 5


def test_deleting_a_field_removes_it():
    cfg = konfig.ConfigDict(a=1, b=2)
    del cfg.a
    del cfg["b"]
    assert len(cfg) == 0


def test_deleting_a_positional_argument_shifts_the_next_ones():
    node = fl.anything(1, 2, 3, key="k")
    del node[0]
    assert konfig.resolve(node) == ((2, 3), {"key": "k"})


def test_deleting_a_missing_attribute_raises_attribute_error():
    with pytest.raises(AttributeError):
        del konfig.ConfigDict().nope


def test_or_merges_into_a_new_config():
    a = konfig.ConfigDict(x=1, y=2)
    merged = a | {"y": 3, "z": 4}
    assert merged.to_dict() == {"x": 1, "y": 3, "z": 4}
    assert a.y == 2


def test_ior_updates_in_place():
    a = konfig.ConfigDict(x=1)
    a |= konfig.ConfigDict(x=2)
    assert a.x == 2


def _shared_config():
    cfg = konfig.ConfigDict()
    cfg.steps = 10
    cfg.layer = fl.Dense(features=3)
    cfg.model = fl.Model(encoder=cfg.layer, decoder=cfg.layer, num_layers=cfg.ref.steps)
    return cfg


def test_deepcopy_keeps_shared_nodes_shared():
    new = copy.deepcopy(_shared_config())
    assert new.model.encoder is new.layer is new.model.decoder


def test_deepcopy_keeps_refs_linked_to_the_copy():
    original = _shared_config()
    new = copy.deepcopy(original)
    new.steps = 99
    assert konfig.resolve(new).model.num_layers == 99
    assert konfig.resolve(original).model.num_layers == 10


def test_pickle_keeps_shared_nodes_and_refs():
    new = pickle.loads(pickle.dumps(_shared_config()))
    assert new.model.encoder is new.layer
    new.steps = 7
    assert konfig.resolve(new).model.num_layers == 7


def test_pickle_keeps_creation_site():
    cfg = _shared_config()
    assert pickle.loads(pickle.dumps(cfg)).layer._origin == cfg.layer._origin


def test_equal_configs_compare_equal():
    assert _shared_config() == _shared_config()


def test_configs_with_different_values_differ():
    other = _shared_config()
    other.layer.features = 4
    assert _shared_config() != other


def test_int_and_float_values_are_not_equal_configs():
    assert konfig.ConfigDict(a=1) != konfig.ConfigDict(a=1.0)


def test_configs_with_different_refs_differ():
    a, b = konfig.ConfigDict(x=1, y=2), konfig.ConfigDict(x=1, y=2)
    a.z = a.ref.x
    b.z = b.ref.y
    assert a != b


def test_to_dict_returns_plain_nested_dicts():
    cfg = konfig.ConfigDict(a={"b": [1, {"c": 2}]})
    out = cfg.to_dict()
    assert out == {"a": {"b": [1, {"c": 2}]}}
    assert type(out["a"]) is dict and type(out["a"]["b"][1]) is dict


def test_leaves_yield_paths_and_values():
    cfg = konfig.ConfigDict(a={"b": 1}, c=[2, 3])
    cfg.node = fl.add(1, b=2)
    assert list(cfg.leaves()) == [
        ("cfg.a.b", 1),
        ("cfg.c[0]", 2),
        ("cfg.c[1]", 3),
        ("cfg.node.__qualname__", "fake_lib:add"),
        ("cfg.node[0]", 1),
        ("cfg.node.b", 2),
    ]


def test_get_and_set_by_path():
    cfg = konfig.ConfigDict(model=fl.Sequential(layers=[fl.Dense(1)]))
    konfig.set_by_path(cfg, "model.layers[0].features", 8)
    assert konfig.get_by_path(cfg, "cfg.model.layers[0].features") == 8
    assert cfg.model.layers[0][0] == 8


def test_set_by_path_rebuilds_tuples():
    cfg = konfig.ConfigDict(pair=(1, 2))
    konfig.set_by_path(cfg, ("pair", 1), 5)
    assert cfg.pair == (1, 5)


def test_unknown_keyword_fails_at_creation_with_suggestion():
    with pytest.raises(konfig.ArgumentError, match=r"'featurs'; did you mean 'features'"):
        fl.Dense(featurs=3)


def test_argument_error_names_the_creation_site():
    with pytest.raises(konfig.ArgumentError, match=r"test_config_dict\.py:\d+"):
        fl.Dense(featurs=3)


def test_unknown_field_fails_when_set():
    node = fl.Dense(features=3)
    with pytest.raises(konfig.ArgumentError, match="did you mean 'use_bias'"):
        node.usebias = False


def test_too_many_positionals_fail_at_creation():
    with pytest.raises(konfig.ArgumentError, match="at most 2 positional"):
        fl.add(1, 2, 3)


def test_same_argument_by_position_and_keyword_fails():
    with pytest.raises(konfig.ArgumentError, match="multiple values for argument 'a'"):
        fl.add(1, a=2)


def test_var_keyword_target_accepts_any_keyword():
    node = fl.anything(1, 2, 3, whatever=4)
    node.another = 5
    assert konfig.resolve(node, freeze=False) == ((1, 2, 3), {"whatever": 4, "another": 5})


def test_programmatic_node_of_imported_module_is_validated():
    with pytest.raises(konfig.ArgumentError, match="did you mean 'features'"):
        konfig.ConfigDict({"__qualname__": "fake_lib:Dense", "feature": 1})


def test_live_object_is_refused_with_its_path():
    cfg = konfig.ConfigDict()
    with pytest.raises(konfig.ConfigValueError, match=r"cfg\.model\.layers\[1\]: .*live fake_lib\.Point"):
        cfg.model = {"layers": [1, fl_real_point()]}


def fl_real_point():
    import fake_lib

    return fake_lib.Point(1, 2)


def test_live_object_error_says_to_capture_the_import():
    with pytest.raises(konfig.ConfigValueError, match=r"konfig\.imports\(\): from fake_lib import Point"):
        konfig.ConfigDict(p=fl_real_point())


def test_live_object_is_refused_as_call_argument():
    with pytest.raises(konfig.ConfigValueError, match=r"cfg\.value"):
        fl.Recorder(value=fl_real_point())


def test_builtin_types_are_stored_as_constants():
    cfg = konfig.ConfigDict(dtype=float)
    assert cfg.dtype == konfig.ConfigDict({"__const__": "builtins:float"})
    assert konfig.resolve(cfg).dtype is float


def test_captured_constant_is_stored_as_const_node():
    cfg = konfig.ConfigDict(color=fl.Color.RED)
    assert cfg.color.to_dict() == {"__const__": "fake_lib:Color.RED"}


@pytest.fixture
def restore_default_values():
    from konfig import _config_dict

    saved = dict(_config_dict.DEFAULTS)
    yield
    _config_dict.DEFAULTS.clear()
    _config_dict.DEFAULTS.update(saved)


def test_register_default_values_fills_new_nodes(restore_default_values):
    konfig.register_default_values(fl.Job(workdir="/tmp/default", cpus=5))
    node = fl.Job(cpus=7)
    assert node.workdir == "/tmp/default" and node.cpus == 7


def test_default_values_are_copied_into_each_node(restore_default_values):
    konfig.register_default_values(fl.Job(workdir={"path": "/tmp"}))
    first, second = fl.Job(), fl.Job()
    first.workdir.path = "/changed"
    assert second.workdir.path == "/tmp"


def test_register_default_values_rejects_a_conflicting_registration(restore_default_values):
    konfig.register_default_values(fl.Launcher(name="default"))
    with pytest.raises(ValueError, match="already registered"):
        konfig.register_default_values(fl.Launcher(name="other"))


def test_dir_lists_fields_for_completion():
    assert "learning_rate" in dir(konfig.ConfigDict(learning_rate=1))


def test_positional_argument_is_readable_and_settable_by_parameter_name():
    node = fl.Dense(3)
    assert node.features == 3
    node.features = 8
    assert node[0] == 8 and "features" not in node.keys()


def test_kauldron_annotation_helpers_exist():
    assert konfig.ConfigDictLike[int] is int
    with pytest.raises(RuntimeError, match="only works on configs"):
        _ = konfig.WithRef().ref


def test_live_object_in_a_positional_argument_is_named_by_index():
    with pytest.raises(konfig.ConfigValueError, match=r"^cfg\[1\]: "):
        fl.anything(1, fl_real_point())


def test_programmatic_classmethod_node_is_validated_without_cls():
    with pytest.raises(konfig.ArgumentError, match="at most 2 positional"):
        konfig.ConfigDict({"__qualname__": "fake_lib:Trainer.eval_only", "0": 1, "1": 2, "2": 3})


def test_argument_error_on_a_nested_node_names_its_config_path():
    cfg = konfig.ConfigDict()
    cfg.model = fl.Dense(features=3)
    with pytest.raises(konfig.ArgumentError, match=r"^In cfg\.model: .*'feaures'; did you mean 'features'"):
        cfg.model.feaures = 3


def test_argument_error_on_a_node_in_a_list_names_its_path():
    cfg = konfig.ConfigDict(opt=fl.anything(0, fl.Sequential(layers=[fl.Dense(1), fl.Dense(2)])))
    with pytest.raises(konfig.ArgumentError, match=r"^In cfg\.opt\[1\]\.layers\[1\]: "):
        cfg["opt"][1].layers[1].use_bais = False


def test_live_object_set_on_a_nested_node_names_the_full_path():
    cfg = konfig.ConfigDict(model=fl.Model(encoder=None))
    with pytest.raises(konfig.ConfigValueError, match=r"^cfg\.model\.decoder\[0\]: "):
        cfg.model.decoder = [fl_real_point()]


def test_node_moved_away_is_not_named_by_its_stale_path():
    cfg = konfig.ConfigDict(model=fl.Dense(features=3))
    old = cfg.model
    cfg.model = fl.Dense(features=4)
    with pytest.raises(konfig.ArgumentError) as info:
        old.feaures = 1
    assert "cfg.model" not in str(info.value)


def test_or_result_refs_follow_the_merged_config():
    base = konfig.ConfigDict(steps=10)
    base.model = fl.Model(encoder=None, num_layers=base.ref.steps)
    merged = base | {"steps": 20}
    assert konfig.resolve(merged).model.num_layers == 20
    assert konfig.resolve(base).model.num_layers == 10


def test_or_of_a_sub_config_keeps_refs_to_the_enclosing_config_live():
    cfg = konfig.ConfigDict(steps=10)
    cfg.model = fl.Model(encoder=None, num_layers=cfg.ref.steps)
    variant = cfg.model | {"decoder": 3}
    cfg.steps = 30
    assert konfig.resolve(variant).num_layers == 30


def test_reversed_or_puts_the_mapping_first_and_the_config_wins():
    cfg = konfig.ConfigDict(x=1)
    cfg.y = cfg.ref.x * 2
    merged = {"x": 5, "z": 0} | cfg
    assert list(merged) == ["x", "z", "y"]
    assert konfig.resolve(merged).y == 2


def test_positional_only_argument_by_keyword_is_refused_with_its_index():
    with pytest.raises(
        konfig.ArgumentError, match=r"'factor' is positional-only: pass it as positional argument \[1\]"
    ):
        fl.scale(2.0, factor=3.0)


def test_positional_only_argument_is_settable_by_parameter_name():
    node = fl.scale(2.0, 3.0)
    node.factor = 4.0
    assert node[1] == 4.0 and konfig.resolve(node) == 8.0


def test_keyword_only_argument_given_by_position_is_refused():
    with pytest.raises(konfig.ArgumentError, match="at most 2 positional"):
        fl.scale(1.0, 2.0, 3.0)


def test_reading_an_unset_argument_says_it_is_not_set_rather_than_unknown():
    cfg = konfig.ConfigDict(model=fl.Model(encoder=None))
    with pytest.raises(
        AttributeError, match=r"^In cfg\.model: Argument 'num_layers' of fake_lib\.Model\(\.\.\.\) is not set"
    ):
        _ = cfg.model.num_layers


def test_attribute_of_the_built_object_points_to_a_lazy_reference():
    cfg = konfig.ConfigDict(model=fl.Model(encoder=None))
    with pytest.raises(AttributeError, match=r"reference it lazily as `cfg\.model\.ref\.depth`"):
        _ = cfg.model.depth


def test_configs_with_lists_containing_themselves_compare_without_recursion():
    a, b = konfig.ConfigDict(items=[1]), konfig.ConfigDict(items=[1])
    a["items"].append(a["items"])
    b["items"].append(b["items"])
    assert a == b


def test_leaves_and_to_dict_of_a_list_containing_itself_terminate():
    cfg = konfig.ConfigDict(items=[1])
    cfg["items"].append(cfg["items"])
    assert [path for path, _ in cfg.leaves()] == ["cfg.items[0]", "cfg.items[1]"]
    out = cfg.to_dict()
    assert out["items"][1] is out["items"]


def shared_levels(levels):
    """`{x: b, y: b}`, `b = {x: c, y: c}`, ... `levels` deep: 2**levels paths to `v`."""
    node = konfig.ConfigDict(v=1)
    for _ in range(levels):
        node = konfig.ConfigDict(x=node, y=node)
    return node


def test_leaves_of_nodes_sharing_nodes_with_2_to_the_30_paths_stop_at_the_repeat_limit():
    leaves = shared_levels(30).leaves()
    with pytest.raises(ValueError, match=r"shared nodes repeat more than 10,000 of them \(at cfg\.x\.x"):
        for count, _ in enumerate(leaves):
            assert count <= 2 * 10_000  # the first pass, then the repeats up to the limit


def test_leaves_of_a_shared_node_appear_under_each_of_its_paths():
    shared = konfig.ConfigDict(lr=0.1)
    cfg = konfig.ConfigDict(encoder=shared, decoder=shared)
    assert list(cfg.leaves()) == [("cfg.encoder.lr", 0.1), ("cfg.decoder.lr", 0.1)]
    assert len(list(shared_levels(10).leaves())) == 1024


def test_positional_argument_overrides_a_keyword_default(restore_default_values):
    konfig.register_default_values(fl.Job(workdir="/tmp/default"))
    node = fl.Job("/tmp/given")
    assert konfig.resolve(node).workdir == "/tmp/given"


def test_argument_error_on_a_node_in_nested_lists_names_its_path():
    cfg = konfig.ConfigDict(grid=[[fl.Dense(1)], (fl.Dense(2), fl.Dense(3))])
    with pytest.raises(konfig.ArgumentError, match=r"^In cfg\.grid\[1\]\[1\]: "):
        cfg.grid[1][1].feaures = 3


def test_update_called_like_a_method_of_the_built_object_explains_refs():
    cfg = konfig.ConfigDict(opt=fl.Trainer())
    with pytest.raises(
        TypeError, match=r"^In cfg\.opt: `node\.update\(\.\.\.\)` is ConfigDict\.update.*\.ref\.update"
    ):
        cfg.opt.update(3)


def test_update_merges_mappings_pairs_and_keywords():
    cfg = konfig.ConfigDict(a=1)
    cfg.update({"b": 2}, c=3)
    cfg.update([("d", 4)])
    assert cfg.to_dict() == {"a": 1, "b": 2, "c": 3, "d": 4}


def test_appending_a_positional_argument_already_given_by_keyword_is_refused():
    node = fl.Dense(features=8)
    with pytest.raises(
        konfig.ArgumentError, match=r"multiple values for argument 'features'.*set `.features`"
    ):
        node[0] = 3
    assert node.features == 8 and 0 not in node.to_dict() and "0" not in node.to_dict()


def test_appending_a_positional_argument_not_given_by_keyword_is_accepted():
    node = fl.add(b=2)
    node[0] = 5
    assert konfig.resolve(node) == 7
