"""konfig.resolve: building, sharing, freezing, hooks, errors, cycles."""

import subprocess
import sys

import konfig
import pytest

with konfig.imports():
    import fake_lib as fl


def test_nodes_are_built_bottom_up():
    cfg = fl.Sequential(layers=[fl.Dense(features=1), fl.Dense(features=2)])
    seq = konfig.resolve(cfg)
    assert [layer.features for layer in seq.layers] == [1, 2]


def test_shared_node_is_built_once():
    import fake_lib

    before = fake_lib.Recorder.builds
    cfg = konfig.ConfigDict()
    cfg.rec = fl.Recorder(value=1)
    cfg.sub = {"rec": cfg.rec, "again": [cfg.rec]}
    resolved = konfig.resolve(cfg)
    assert resolved.rec is resolved.sub.rec is resolved.sub.again[0]
    assert fake_lib.Recorder.builds == before + 1


def test_freeze_turns_lists_into_tuples_and_dicts_into_immutable_dicts():
    cfg = konfig.ConfigDict(items=[1, [2]], sub={"a": 1})
    resolved = konfig.resolve(cfg)
    assert resolved["items"] == (1, (2,))
    assert isinstance(resolved.sub, konfig.ImmutableDict)


def test_frozen_mapping_is_hashable_and_read_only():
    resolved = konfig.resolve(konfig.ConfigDict(a=1, b=(2, 3)))
    assert hash(resolved) == hash(konfig.resolve(konfig.ConfigDict(a=1, b=(2, 3))))
    assert resolved.a == resolved["a"] == 1
    with pytest.raises(AttributeError, match="immutable"):
        resolved.a = 2
    with pytest.raises(TypeError):
        resolved["a"] = 2


def test_without_freeze_containers_stay_mutable():
    resolved = konfig.resolve(konfig.ConfigDict(items=[1], sub={"a": 1}), freeze=False)
    assert type(resolved) is dict and resolved["items"] == [1] and type(resolved["sub"]) is dict


def test_resolve_accepts_a_plain_dict():
    data = {"model": {"__qualname__": "fake_lib:Dense", "features": 5}}
    assert konfig.resolve(data).model.features == 5


def test_exclude_fields_hook_passes_the_config_unresolved():
    cfg = fl.Recorder(value=fl.Dense(features=1), raw=fl.Dense(features=2))
    rec = konfig.resolve(cfg)
    assert isinstance(rec.raw, konfig.ConfigDict) and rec.raw.features == 2
    assert rec.value.features == 1


def test_post_resolve_hook_receives_the_node():
    cfg = fl.Recorder(value=3)
    assert konfig.resolve(cfg).source is cfg


def _failing_config():
    cfg = konfig.ConfigDict()
    cfg.optimizer = fl.anything(0, fl.Trainer(model=fl.fail("bad learning rate")))
    return cfg


def test_error_names_the_path_of_the_failing_node():
    with pytest.raises(konfig.ResolveError, match=r"^In cfg\.optimizer\[1\]\.model: building fake_lib\.fail"):
        konfig.resolve(_failing_config())


def test_error_chains_the_original_exception():
    with pytest.raises(konfig.ResolveError) as info:
        konfig.resolve(_failing_config())
    assert isinstance(info.value.__cause__, RuntimeError)
    assert str(info.value.__cause__) == "bad learning rate"


def test_error_gives_the_file_and_line_that_created_the_node():
    line = _failing_config.__code__.co_firstlineno + 2
    with pytest.raises(konfig.ResolveError, match=rf"node created at {__file__}:{line}"):
        konfig.resolve(_failing_config())


def test_resolve_error_is_a_value_error():
    with pytest.raises(ValueError):
        konfig.resolve(_failing_config())


def test_cycle_of_nodes_is_reported_not_a_recursion_error():
    cfg = konfig.ConfigDict()
    cfg.model = fl.Model(encoder=None)
    cfg.model.decoder = [cfg.model]
    with pytest.raises(konfig.CycleError, match=r"cfg\.model contains itself at cfg\.model\.decoder\[0\]"):
        konfig.resolve(cfg)


def test_cycle_of_references_is_reported():
    cfg = konfig.ConfigDict()
    cfg.a = cfg.ref.b
    cfg.b = cfg.ref.a + 1
    with pytest.raises(
        konfig.CycleError,
        match=r"reference cycle cfg\.ref\.b -> cfg\.ref\.a \+ 1 -> cfg\.ref\.a -> cfg\.ref\.b",
    ):
        konfig.resolve(cfg)


def test_ref_to_a_missing_field_suggests_the_close_one():
    cfg = konfig.ConfigDict(steps=1)
    cfg.trainer = fl.Trainer(steps=cfg.ref.step)
    with pytest.raises(konfig.ResolveError, match=r"In cfg\.trainer\.steps .*did you mean 'steps'"):
        konfig.resolve(cfg)


def test_unknown_target_fails_with_a_suggestion():
    cfg = konfig.ConfigDict({"m": {"__qualname__": "fake_lib:Dens"}})
    with pytest.raises(konfig.ResolveError, match=r"In cfg\.m: .*did you mean 'Dense'"):
        konfig.resolve(cfg)


def test_resolve_a_list_of_nodes():
    assert konfig.resolve([fl.add(1, 2), fl.add(3)]) == (3, 3)


def test_immutable_dict_is_a_jax_pytree_when_jax_is_present():
    jax = pytest.importorskip("jax")
    resolved = konfig.resolve(konfig.ConfigDict(a=1, b={"c": 2}))
    assert jax.tree_util.tree_leaves(resolved) == [1, 2]
    doubled = jax.tree_util.tree_map(lambda x: x * 2, resolved)
    assert isinstance(doubled, konfig.ImmutableDict) and doubled.b.c == 4


def test_resolve_does_not_import_jax():
    code = (
        "import sys, konfig\n"
        "konfig.resolve(konfig.ConfigDict(a={'b': [1]}))\n"
        "assert 'jax' not in sys.modules, 'jax imported'\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_values_appended_to_lists_after_validation_still_resolve():
    import fake_lib

    cfg = konfig.ConfigDict(items=[])
    cfg["items"].append(fl.Color)
    cfg["items"].append({"a": fl.add(1, 1)})
    resolved = konfig.resolve(cfg)
    assert resolved["items"][0] is fake_lib.Color
    assert resolved["items"][1].a == 2


def test_frozen_result_becomes_a_jax_pytree_when_jax_is_imported_later():
    pytest.importorskip("jax")
    code = (
        "import sys, konfig\n"
        "resolved = konfig.resolve(konfig.ConfigDict(a=1, b={'c': 2}))\n"
        "assert 'jax' not in sys.modules\n"
        "import jax\n"
        "assert jax.tree_util.tree_leaves(resolved) == [1, 2], jax.tree_util.tree_leaves(resolved)\n"
        "assert jax.__spec__.loader is jax.__loader__ and type(jax.__loader__).__module__ != 'konfig._immutable_dict'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_waiting_for_jax_leaves_other_imports_alone():
    code = (
        "import sys, konfig\n"
        "konfig.resolve(konfig.ConfigDict(a={'b': 1}))\n"
        "import json, email.mime.text\n"
        "assert 'jax' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_node_that_references_itself_names_the_node_and_the_reference():
    cfg = konfig.ConfigDict()
    cfg.model = fl.Model(encoder=None, num_layers=cfg.ref.model.depth)
    with pytest.raises(
        konfig.CycleError,
        match=r"^In cfg\.model\.num_layers: the reference cfg\.ref\.model\.depth leads back to cfg\.model,",
    ):
        konfig.resolve(cfg)


def test_list_shared_by_two_fields_resolves_to_one_list():
    shared = [1, fl.add(1)]
    cfg = konfig.ConfigDict(a=shared, b={"c": shared})
    resolved = konfig.resolve(cfg, freeze=False)
    assert resolved["a"] is resolved["b"]["c"] == [1, 1]


def test_list_containing_itself_is_a_cycle_error():
    cfg = konfig.ConfigDict(items=[1])
    cfg["items"].append(cfg["items"])
    with pytest.raises(konfig.CycleError, match=r"cfg\.items contains itself at cfg\.items\[1\]"):
        konfig.resolve(cfg)
