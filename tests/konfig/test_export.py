"""`konfig.export(obj)`: live objects to JSON data (as Kauldron's) that resolves back to equal objects."""

from __future__ import annotations

import collections
import json

import konfig
import konfig_example_targets as t  # the real classes, not captured (example_configs/, on sys.path: conftest)
import pytest


def _experiment() -> t.Experiment:
    return t.Experiment(
        name="mnist",
        layers=[t.Dense(16), t.Dense(10, activation="softmax", dropout=0.1)],
        activation=t.Activation.GELU,
        shape=(28, (28, 1)),
        ids={0: "zero", (1, 2): "pair", "s": {"nested": [1, 2]}},
        origin=t.Point(1.5, -2.0),
        steps=3,
    )


def _back(obj, *, freeze=False):
    return konfig.resolve(konfig.export(obj), freeze=freeze)


def test_dataclass_tree_resolves_back_to_an_equal_object():
    assert _back(_experiment()) == _experiment()


def test_export_is_json_data_of_calls_as_with_kauldron():
    data = konfig.export(t.Dense(16))
    assert (
        json.loads(json.dumps(data))
        == data
        == {
            "__qualname__": "konfig_example_targets:Dense",
            "features": 16,
            "activation": "relu",
            "dropout": 0.0,
        }
    )


def test_enum_member_is_a_constant():
    assert konfig.export(t.Activation.GELU) == {"__const__": "konfig_example_targets:Activation.GELU"}
    assert _back(t.Activation.GELU) is t.Activation.GELU


def test_tuples_stay_tuples():
    value = (1, (2, "x"), [3])
    assert _back(value) == value and type(_back(value)[1]) is tuple


def test_dict_with_non_str_keys_resolves_back():
    value = {1: "a", (2, 3): "b", None: [1], "k": {"n": 1}}
    assert _back(value) == value


def test_named_tuple_keeps_its_type():
    back = _back(t.Point(1.0, 2.0))
    assert back == t.Point(1.0, 2.0) and type(back) is t.Point


def test_init_false_fields_are_left_to_the_constructor():
    assert "derived" not in konfig.export(_experiment())


def test_custom_export_hook_is_used():
    vocab = t.Vocabulary(("a", "b"), lowercase=False)
    cfg = konfig.export(vocab)
    assert cfg["__qualname__"] == "konfig_example_targets:Vocabulary"
    assert _back(vocab) == vocab


def test_custom_export_hook_without_qualname_is_an_error():
    class Bad:
        def __konfig_export__(self):
            return {"a": 1}

    with pytest.raises(konfig.ConfigValueError, match="__qualname__"):
        konfig.export(Bad())


def test_shared_object_becomes_one_shared_node():
    layer = t.Dense(4)
    cfg = konfig.export([layer, layer])
    assert cfg[0] is cfg[1]
    built = konfig.resolve(cfg, freeze=False)
    assert built[0] is built[1]


def test_classes_and_functions_are_constants():
    assert konfig.export(t.Dense) == {"__const__": "konfig_example_targets:Dense"}
    assert _back(t.cosine_decay_schedule) is t.cosine_decay_schedule


def test_sets_and_special_leaves_survive():
    value = {"s": {1, 2}, "f": frozenset({"a"}), "b": b"x", "sl": slice(1, 2), "e": ..., "c": 1j}
    assert _back(value) == value


def test_export_then_json_then_resolve_round_trips():
    text = json.dumps(konfig.export(_experiment()))
    assert konfig.resolve(konfig.from_json(text), freeze=False) == _experiment()


def test_exported_data_with_tuple_keys_survives_json_dumps():
    value = {("edge", ("src", "dst")): (1, 2), "plain": [1]}
    data = json.loads(json.dumps(konfig.export(value)))
    assert konfig.resolve(data, freeze=False) == value


def test_exported_data_is_an_editable_config_through_configdict():
    cfg = konfig.ConfigDict(konfig.export(t.Sequential(layers=[t.Dense(4), (1, 2)])))
    cfg.layers[0].features = 8
    assert konfig.resolve(cfg, freeze=False) == t.Sequential(layers=[t.Dense(8), (1, 2)])


def test_unknown_object_names_its_path_and_the_hook():
    class Opaque:
        pass

    with pytest.raises(konfig.ConfigValueError, match=r"obj\.layers\[1\].*__konfig_export__"):
        konfig.export(t.Sequential(layers=[1, Opaque()]))


def test_lambda_cannot_be_exported():
    with pytest.raises(konfig.ConfigValueError, match="lambda"):
        konfig.export({"f": lambda x: x})


def test_cycle_is_an_error():
    items: list = []
    items.append(items)
    with pytest.raises(konfig.ConfigValueError, match="contains itself"):
        konfig.export(items)


def test_numpy_array_resolves_back_with_its_dtype():
    np = pytest.importorskip("numpy")
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    back = _back(array)
    assert back.dtype == np.float32 and back.shape == (2, 3)
    np.testing.assert_array_equal(back, array)


def test_numpy_array_resolves_back_when_frozen():
    np = pytest.importorskip("numpy")
    array = np.array([[1, 2], [3, 4]], dtype=np.int8)
    np.testing.assert_array_equal(_back(array, freeze=True), array)


def test_numpy_scalar_and_dtype_resolve_back():
    np = pytest.importorskip("numpy")
    scalar = _back(np.float16(1.5))
    assert scalar == np.float16(1.5) and type(scalar) is np.float16
    assert _back(np.dtype("int32")) == np.dtype("int32")


def test_jax_array_resolves_back():
    jnp = pytest.importorskip("jax.numpy")
    array = jnp.arange(4, dtype=jnp.int32)
    back = _back(array)
    assert back.dtype == jnp.int32 and (back == array).all()


def test_combined_flag_members_resolve_back():
    value = t.Access.READ | t.Access.WRITE
    assert _back(value) is value


def test_method_bound_to_an_instance_is_refused():
    with pytest.raises(TypeError, match=r"obj\.fn.*bound to"):
        konfig.export({"fn": t.Vocabulary(("a",)).__konfig_export__})


def test_classmethod_is_a_constant():
    assert _back(t.Trainer.for_eval) == t.Trainer.for_eval


@pytest.mark.parametrize(
    "value",
    [
        collections.OrderedDict(b=1, a=2),
        collections.Counter("abca"),
        collections.defaultdict(list, {"k": [1]}),
        collections.ChainMap({"a": 1}),
        collections.OrderedDict({(1, 2): "pair", "__qualname__": "not a target"}),
    ],
)
def test_dict_subclasses_resolve_back_with_their_type(value):
    back = _back(value)
    assert back == value and type(back) is type(value)


def test_defaultdict_keeps_its_default_factory():
    assert _back(collections.defaultdict(list)).default_factory is list


def test_object_not_reachable_by_its_name_is_refused():
    import types

    with pytest.raises(TypeError, match="mappingproxy"):
        konfig.export(types.MappingProxyType({"a": 1}))


@pytest.fixture
def library(monkeypatch):
    """A package `lib` whose classes live in private modules (`lib._impl`, `lib.sub._more`); `lib` lists
    `Public` (as `lib.Public`), `lib.sub` lists `Deeper`, and `Hidden` is listed nowhere."""
    import dataclasses
    import types

    modules = {name: types.ModuleType(name) for name in ("lib", "lib._impl", "lib.sub", "lib.sub._more")}
    for name, module in modules.items():
        monkeypatch.setitem(__import__("sys").modules, name, module)

    def define(module, name):
        cls = dataclasses.make_dataclass(name, [("size", int, dataclasses.field(default=1))])
        cls.__module__, cls.__qualname__ = module.__name__, name
        setattr(module, name, cls)
        return cls

    public, hidden = define(modules["lib._impl"], "Public"), define(modules["lib._impl"], "Hidden")
    deeper = define(modules["lib.sub._more"], "Deeper")
    modules["lib"].Public, modules["lib.sub"].Deeper = public, deeper
    modules["lib"].Deeper = deeper  # also at the top: the deepest package holding it wins
    return public, hidden, deeper


def test_a_class_in_a_private_module_is_exported_under_the_package_that_lists_it(library):
    public, hidden, deeper = library

    assert konfig.export(public(3)) == {"__qualname__": "lib:Public", "size": 3}
    assert konfig.export(deeper) == {"__const__": "lib.sub:Deeper"}
    assert konfig.export(hidden(2))["__qualname__"] == "lib._impl:Hidden"  # listed nowhere: where it lives
    assert list(konfig.resolve(konfig.export([public(3), deeper(4), hidden(2)]))) == [public(3), deeper(4), hidden(2)]

