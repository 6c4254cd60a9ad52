"""What a Kauldron user swapping `from kauldron import konfig` for `import konfig` relies on (issue 16)."""

from __future__ import annotations

import functools
import json
import pathlib

import fake_lib  # the real classes
import konfig
import pytest
from konfig import _json_encode

with konfig.imports():
    import fake_lib as fl


# --- Reading a field that holds a reference gives its current value --------------------------


def test_reading_a_reference_field_gives_its_current_value():
    cfg = konfig.ConfigDict(a=10)
    cfg.big = cfg.ref.a + 15 > 20
    assert cfg.big is True and cfg["big"] is True
    cfg.a = 0
    assert cfg.big is False


def test_reading_follows_chains_items_and_ref_fn():
    cfg = konfig.ConfigDict(parts=["a", "b"], schedules={"lr": 0.1})
    cfg.lr = cfg.ref.schedules["lr"]
    cfg.lr2 = cfg.ref.lr
    cfg.joined = konfig.ref_fn("/".join, cfg.ref.parts)
    cfg.schedules.lr = 0.5
    cfg.parts = ["c"]
    assert (cfg.lr, cfg.lr2, cfg.joined) == (0.5, 0.5, "c")


def test_a_reference_to_a_node_reads_as_that_node():
    cfg = konfig.ConfigDict(model=fl.Dense(3))
    cfg.same = cfg.ref.model
    assert cfg.same is cfg.model


def test_the_field_still_holds_the_reference_for_resolve_json_repr_and_get_by_path():
    cfg = konfig.ConfigDict(a=1)
    cfg.b = cfg.ref.a * 10
    cfg.a = 2
    assert repr(konfig.get_by_path(cfg, "b")) == "cfg.ref.a * 10"
    assert "cfg.ref.a * 10" in repr(cfg)
    assert json.loads(cfg.to_json())["b"] == {"__op__": "mul", "args": [{"__ref__": ["a"]}, 10]}
    loaded = konfig.from_json(cfg.to_json())
    loaded.a = 3
    assert konfig.resolve(loaded).b == 30


@pytest.mark.parametrize(
    "make",
    [
        lambda cfg: cfg.ref.steps + 1,  # `steps` is `konfig.required(int)`
        lambda cfg: cfg.ref.missing,  # a field that is not there (yet)
        lambda cfg: cfg.model.ref.depth,  # an attribute of the object the node builds
        lambda cfg: konfig.ref_fn(len, cfg.ref.model),  # a node as an operand: resolve builds it first
    ],
    ids=["required", "missing", "built-attribute", "node-operand"],
)
def test_a_reference_only_resolve_can_compute_reads_as_the_reference(make):
    cfg = konfig.ConfigDict(steps=konfig.required(int), model=fl.Model(encoder=None))
    cfg.x = make(cfg)
    assert cfg.x is konfig.get_by_path(cfg, "x")


def test_a_reference_cycle_reads_as_the_reference_and_resolve_names_it():
    cfg = konfig.ConfigDict()
    cfg.a = cfg.ref.b
    cfg.b = cfg.ref.a
    assert repr(cfg.a) == "cfg.ref.b"
    with pytest.raises(konfig.CycleError):
        konfig.resolve(cfg)


def test_an_operation_read_from_json_is_computed_by_resolve_only():
    cfg = konfig.ConfigDict(n=2)
    cfg.x = konfig.ref_fn(_record, cfg.ref.n)
    assert cfg.x == 2
    _RECORDED.clear()
    loaded = konfig.from_json(cfg.to_json())
    assert loaded.x is konfig.get_by_path(loaded, "x") and _RECORDED == []
    assert konfig.resolve(loaded).x == 2 and _RECORDED == [2]


_RECORDED: list = []


def _record(value):
    _RECORDED.append(value)
    return value


def test_get_ref_is_ref_by_name():
    cfg = konfig.ConfigDict(a0="abc")
    cfg.a1 = cfg.get_ref("a0")
    cfg.a0 = "xyz"
    assert cfg.a1 == "xyz" and repr(konfig.get_by_path(cfg, "a1")) == "cfg.ref.a0"


def test_get_ref_of_a_missing_field_names_the_close_ones():
    cfg = konfig.ConfigDict(steps=1)
    with pytest.raises(KeyError, match="steps"):
        cfg.get_ref("step")


def test_a_reference_in_control_flow_is_not_implemented_as_with_kauldron():
    cfg = konfig.ConfigDict(aux={"flag": True})
    with pytest.raises(NotImplementedError, match=r"`cfg\.ref\.aux\.flag`.*control flow.*logical operators"):
        bool(cfg.ref.aux.flag)
    assert issubclass(konfig.RefControlFlowError, TypeError)


# --- JSON: plain configs as Kauldron writes them ----------------------------------------------


def test_plain_config_json_has_no_version_key():
    cfg = konfig.ConfigDict(a=1, model=fl.Dense(3), ids={1: "x"})
    assert cfg.to_json() == (
        '{"a": 1, "model": {"__qualname__": "fake_lib:Dense", "0": 3}, "ids": {"__raw__=1": "x"}}'
    )


@pytest.mark.parametrize("value", [(1, 2), pathlib.PurePosixPath("a"), {1}, konfig.required(int)])
def test_a_marker_puts_the_version_key_first(value):
    text = konfig.ConfigDict(a=1, x=value).to_json()
    assert text.startswith('{"__konfig_version__": 1, "a": 1, ')


def test_shared_node_is_repeated_with_its_id_last_numbered_from_zero():
    layer, other = fl.Dense(1), fl.Dense(2)
    cfg = konfig.ConfigDict(a=layer, b=[other, layer, other])
    one = '{"__qualname__": "fake_lib:Dense", "0": 1, "__id__": 0}'
    two = '{"__qualname__": "fake_lib:Dense", "0": 2, "__id__": 1}'
    assert cfg.to_json() == f'{{"a": {one}, "b": [{two}, {one}, {two}]}}'


def test_a_cycle_is_a_back_reference_with_the_version_key():
    cfg = konfig.ConfigDict(a=1)
    cfg.me = cfg
    assert cfg.to_json() == '{"__konfig_version__": 1, "a": 1, "me": {"__id__": 0}, "__id__": 0}'
    loaded = konfig.from_json(cfg.to_json())
    assert loaded.me is loaded


def test_nodes_shared_within_shared_nodes_stop_repeating_past_the_expansion_limit(monkeypatch):
    # Each level holds the previous one twice: written in full, 40 levels would be 2**40 objects.
    monkeypatch.setattr(_json_encode, "EXPANSION_LIMIT", 1_000)
    node = konfig.ConfigDict(leaf=0)
    for _ in range(40):
        node = konfig.ConfigDict(left=node, right=node)
    text = node.to_json()
    assert text.count("{") < 3_000 and text.startswith('{"__konfig_version__": 1')
    loaded = konfig.from_json(text)
    assert loaded.left is loaded.right and loaded == node


def test_a_reference_to_a_config_that_is_not_written_is_its_value():
    train = konfig.ConfigDict(split="train", batch_size=32)
    test = konfig.ref_copy(train)
    test.split = "test"
    train.batch_size = 128
    assert json.loads(test.to_json()) == {"split": "test", "batch_size": 128}


def test_a_reference_to_a_node_inside_stays_a_reference():
    cfg = konfig.ConfigDict(data=konfig.ConfigDict(batch_size=32))
    cfg.eval_data = konfig.ref_copy(cfg.data)
    loaded = konfig.from_json(cfg.to_json())
    loaded.data.batch_size = 8
    assert konfig.resolve(loaded).eval_data.batch_size == 8


# --- ConfigDict(json.loads(text)) --------------------------------------------------------------


def test_configdict_of_json_data_reads_raw_keys_and_sharing():
    layer = fl.Dense(1)
    cfg = konfig.ConfigDict({0: {"1": 1}, -4: "a", "a": layer, "b": [layer]})
    new = konfig.ConfigDict(json.loads(cfg.to_json()))
    assert new == cfg and new[0]["1"] == 1 and new.a is new.b[0]


def test_configdict_of_konfig_json_reads_its_markers():
    cfg = konfig.ConfigDict(n=2, t=(1, 2))
    cfg.m = cfg.ref.n * 3
    new = konfig.ConfigDict(json.loads(cfg.to_json()))
    new.n = 5
    assert new.t == (1, 2) and konfig.resolve(new).m == 15  # An operation from text: resolve computes it.


@pytest.mark.parametrize(
    "data",
    [{"__tuple__": None}, {"__raw__=1": 0, "x": (1,)}, {"__id__": "x"}],
    ids=["malformed-marker", "not-json-data", "malformed-id"],
)
def test_configdict_of_data_that_is_not_konfig_json_keeps_the_keys(data):
    assert list(konfig.ConfigDict(data)) == list(data)


# --- Capture, resolve, export ----------------------------------------------------------------


def test_partial_of_a_captured_target_is_a_node():
    cfg = konfig.ConfigDict(layer=functools.partial(fl.Dense, use_bias=False))
    assert konfig.get_by_path(cfg, "layer") == konfig.ConfigDict(
        {"__qualname__": "functools:partial", "0": {"__const__": "fake_lib:Dense"}, "use_bias": False}
    )
    built = konfig.resolve(cfg).layer
    assert isinstance(built, functools.partial) and built(4) == fake_lib.Dense(4, use_bias=False)


def test_set_lazy_imported_modules_decorates_a_function():
    @konfig.set_lazy_imported_modules(["not_a_real_module_xyz"])
    def make():
        with konfig.imports():
            import not_a_real_module_xyz as m
        return m.Thing(1)

    assert make() == konfig.ConfigDict({"__qualname__": "not_a_real_module_xyz:Thing", "0": 1})
    with pytest.raises(ImportError), konfig.imports():
        import not_a_real_module_xyz  # noqa: F401


def test_a_failing_target_error_is_also_its_builtin_type():
    with pytest.raises(TypeError, match="bad_kwarg") as info:
        konfig.resolve({"__qualname__": "builtins:int", "bad_kwarg": "x"})
    assert isinstance(info.value, konfig.ResolveError) and str(info.value).startswith("In cfg: building")


def test_resolve_reads_a_list_of_json_data_with_shared_nodes():
    data = json.loads(json.dumps(konfig.export([fake_lib.Dense(1)] * 2)))
    built = konfig.resolve(data, freeze=False)
    assert built[0] is built[1] and built[0] == fake_lib.Dense(1)


def test_printed_node_parses_back_with_its_configdict_brackets():
    node = fl.Dense(3, use_bias=False)
    assert repr(node) == "<ConfigDict[fake_lib.Dense(3, use_bias=False)]>"
    assert konfig.parse_py_expression(repr(node)) == node
