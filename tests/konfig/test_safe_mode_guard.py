"""Safe mode's guard: whatever route a config takes, nothing outside `allowed=` is imported, called or read.

`forbidden_lib` stands in for `os`: each of its functions records that it ran, so every test can
check that nothing ran. `allowed_lib` (allowed) leads to it by attribute, re-export, class attribute,
callable object and return value.
"""

from __future__ import annotations

import json

import forbidden_lib
import konfig
import pytest
from konfig._refs import OpRef, PathRef


@pytest.fixture(autouse=True)
def _no_forbidden_call():
    forbidden_lib.CALLS.clear()
    yield
    assert forbidden_lib.CALLS == [], f"forbidden code ran: {forbidden_lib.CALLS}"


def refused(cfg, allowed=("allowed_lib",), match=None):
    with pytest.raises(konfig.DisallowedTargetError, match=match) as info:
        konfig.resolve(cfg, allowed=list(allowed))
    return str(info.value)


# --- every built object is checked, wherever it sits ------------------------------------


def test_a_placeholder_default_is_checked():
    text = '{"x": {"__placeholder__": "builtins:int", "default": {"__qualname__": "forbidden_lib:run", "0": "x"}}}'
    message = refused(json.loads(text), allowed=[])
    assert "forbidden_lib:run  (at cfg.x)" in message


def test_a_plain_dict_under_a_list_root_is_checked():
    refused(json.loads('[{"__qualname__": "forbidden_lib:run", "0": "echo"}]'), allowed=[], match=r"cfg\[0\]")


def test_a_plain_dict_under_a_tuple_is_checked():
    refused(({"__qualname__": "forbidden_lib:run"},), allowed=[], match="forbidden_lib:run")


def test_a_plain_dict_appended_to_a_config_list_is_checked():
    cfg = konfig.ConfigDict(items=[])
    cfg["items"].append({"__qualname__": "forbidden_lib:run", "0": "appended"})
    refused(cfg, allowed=[], match=r"cfg\.items\[0\]")


# --- objects are checked by what they are, not by the name that reached them -----------


@pytest.mark.parametrize(
    ("target", "allowed", "refused_name"),
    [
        ("json:codecs.builtins.eval", ["json"], "'codecs'"),
        ("logging:os.system", ["logging"], "'os'"),
        ("allowed_lib:sub.run", ["allowed_lib"], "'forbidden_lib'"),
        ("allowed_lib:run_alias", ["allowed_lib"], "'forbidden_lib:run'"),
        ("allowed_lib:EvilAlias", ["allowed_lib"], "'forbidden_lib:Evil'"),
        ("allowed_lib:Box.evil", ["allowed_lib"], "'forbidden_lib:run'"),
    ],
)
def test_an_import_route_through_a_forbidden_object_is_refused(target, allowed, refused_name):
    message = refused({"f": {"__const__": target}}, allowed=allowed)
    assert refused_name in message and repr(target) in message


def test_a_call_node_on_a_re_exported_forbidden_function_is_refused():
    refused({"f": {"__qualname__": "allowed_lib:run_alias", "0": "x"}}, match="'forbidden_lib:run'")


def test_an_exact_pattern_trusts_the_object_it_names():
    assert forbidden_lib.CALLS == []
    result = konfig.resolve(
        {"f": {"__qualname__": "allowed_lib:add", "0": 1, "1": 2}}, allowed=["allowed_lib:add"]
    )
    assert result.f == 3


@pytest.mark.parametrize(
    "target",
    ["allowed_lib:Box.__init__.__globals__", "allowed_lib:__builtins__", "allowed_lib:Box.__dict__"],
)
def test_dunder_segments_in_targets_are_refused_before_anything_is_imported(target):
    message = refused({"f": {"__const__": target}})
    assert "nothing was imported or called" in message and "attribute '__" in message


def test_calling_a_callable_object_checks_what_it_runs():
    # A partial is judged by the function it calls (not by its type `functools.partial`).
    refused({"f": {"__qualname__": "allowed_lib:partial_run"}}, match="'forbidden_lib:run'")
    refused({"f": {"__qualname__": "allowed_lib:thing"}}, match="'forbidden_lib:CallableThing'")


def test_a_method_of_a_forbidden_instance_inside_an_allowed_object_is_refused():
    cfg = konfig.ConfigDict(box={"__qualname__": "allowed_lib:Box"})
    cfg.x = cfg.ref.box.inner.method()
    refused(cfg, match="'forbidden_lib:Evil'")


def test_a_forbidden_function_returned_by_an_allowed_one_cannot_be_called_by_a_reference():
    cfg = konfig.ConfigDict(f={"__qualname__": "allowed_lib:give_run"})
    cfg.x = cfg.ref.f("through a reference")
    refused(cfg, match="'forbidden_lib:run'")


def test_methods_of_allowed_objects_and_plain_values_still_work():
    cfg = konfig.ConfigDict(box={"__qualname__": "allowed_lib:Box", "value": 21}, name="ab")
    cfg.doubled = cfg.ref.box.double()
    cfg.upper = cfg.ref.name.upper()
    cfg.label = cfg.ref.box.label
    result = konfig.resolve(cfg, allowed=["allowed_lib"])
    assert (result.doubled, result.upper, result.label) == (42, "AB", "box")


# --- format strings, which walk attributes themselves -----------------------------------


@pytest.mark.parametrize("method", ["format", "format_map"])
def test_format_methods_of_strings_are_refused(method):
    cfg = konfig.ConfigDict(
        box={"__qualname__": "allowed_lib:Box"}, s="{0.__init__.__globals__[forbidden_lib]}"
    )
    arg = cfg.ref.box if method == "format" else {"0": cfg.ref.box}
    cfg.out = OpRef("call", (OpRef("getattr", (cfg.ref.s, method)), arg))
    message = refused(cfg, match=f"str.{method}")
    assert "format strings read attributes" in message


def test_format_strings_work_outside_safe_mode():
    cfg = konfig.ConfigDict(s="{}-{}", a=1)
    cfg.out = cfg.ref.s.format(cfg.ref.a, 2)
    assert konfig.resolve(cfg).out == "1-2"


# --- bounded cost of operations on plain values ------------------------------------------


@pytest.mark.parametrize(
    ("op", "args", "match"),
    [
        ("pow", [10, 100_000_000], "bits"),
        ("mul", ["a", 2_000_000_000], "2,000,000,000 items"),
        ("mul", [3_000_000_000, [0]], "3,000,000,000 items"),
        ("mul", [2**9000, 2**9000], "bits"),
        ("mod", ["%*d", [1_000_000_000, 1]], "%\\*"),
        ("mod", ["%999999999d", 1], "width of 999999999"),
    ],
)
def test_oversized_operations_are_refused_in_safe_mode(op, args, match):
    cfg = konfig.ConfigDict()
    cfg.x = OpRef(op, tuple(tuple(a) if type(a) is list and op == "mod" else a for a in args))
    refused(cfg, allowed=[], match=match)


@pytest.mark.parametrize(
    ("method", "args", "match"),
    [
        ("zfill", (10**10,), "size argument"),
        ("ljust", (10**10,), "size argument"),
        ("expandtabs", (9_999_999,), "expandtabs"),
        ("replace", ("", "x" * 5_000), "replace"),
        ("join", (["y"] * 5_000,), "join"),
    ],
)
def test_size_arguments_of_plain_methods_are_bounded(method, args, match):
    cfg = konfig.ConfigDict(s="\t" * 5_000)
    cfg.out = OpRef("call", (OpRef("getattr", (cfg.ref.s, method)), *args))
    refused(cfg, allowed=[], match=match)


def test_doubling_through_references_stops_at_the_result_limit():
    cfg = konfig.ConfigDict(s0="x" * 1000)
    for i in range(1, 20):
        cfg[f"s{i}"] = PathRef(cfg, (f"s{i - 1}",)) + PathRef(cfg, (f"s{i - 1}",))
    message = refused(cfg, allowed=[], match="items")
    assert "limit 10,000,000" in message


def test_ordinary_arithmetic_is_unchanged_in_safe_mode():
    cfg = konfig.ConfigDict(steps=1000, name="run")
    cfg.total = cfg.ref.steps * 4 + 2**10
    cfg.tag = cfg.ref.name * 3
    cfg.padded = cfg.ref.name.zfill(6)
    result = konfig.resolve(cfg, allowed=[])
    assert (result.total, result.tag, result.padded) == (5024, "runrunrun", "000run")


def test_outside_safe_mode_sizes_are_not_limited():
    cfg = konfig.ConfigDict(s="ab")
    cfg.big = cfg.ref.s * 6_000_000
    assert len(konfig.resolve(cfg).big) == 12_000_000


# --- unbounded cost and depth outside safe mode ------------------------------------------


def test_missing_value_error_on_shared_nodes_visits_each_node_once():
    # 60 levels of nodes each shared twice: 2**60 paths; the error must not walk them all.
    node = {"__id__": 0, "x": {"__placeholder__": "builtins:int", "required": True}}
    for i in range(1, 61):
        node = {"__id__": i, "left": node, "right": {"__id__": i - 1}}
    with pytest.raises(konfig.MissingValueError) as info:
        konfig.resolve(konfig.from_json(json.dumps(node)))
    assert str(info.value).startswith("Required value(s) not set: cfg" + ".left" * 60 + ".x (int).")


def test_resolving_a_config_nested_deeper_than_the_recursion_limit_is_a_resolve_error():
    cfg = konfig.ConfigDict()
    node = cfg
    for _ in range(3000):
        node.a = konfig.ConfigDict()
        node = node.a
    node.leaf = 1
    with pytest.raises(konfig.ResolveError, match="nests 3001 levels deep") as info:
        konfig.resolve(cfg)
    assert type(info.value) is konfig.ResolveError and "cfg.a.a.a.a…" in str(info.value)


def test_a_deep_reference_expression_is_a_resolve_error_naming_its_field():
    cfg = konfig.ConfigDict(a=1)
    expression = cfg.ref.a
    for _ in range(3000):
        expression = expression + 1
    cfg.b = expression
    with pytest.raises(konfig.ResolveError, match=r"^In cfg\.b: the config nests 3001 levels deep"):
        konfig.resolve(cfg)


def test_leaves_of_a_deep_config_are_listed_without_recursion():
    cfg = konfig.ConfigDict()
    node = cfg
    for _ in range(5000):
        node.a = konfig.ConfigDict()
        node = node.a
    node.leaf = 7
    ((path, value),) = list(cfg.leaves())
    assert path.endswith(".a.leaf") and path.count(".a") == 5000 and value == 7


@pytest.mark.parametrize("key", ["00", "01", "٣"])
def test_a_digit_key_that_is_not_a_canonical_index_is_not_taken_as_positional(key):
    with pytest.raises((konfig.ResolveError, konfig.JsonFormatError, konfig.ArgumentError)) as info:
        konfig.resolve({"x": {"__qualname__": "allowed_lib:add", "0": 1, key: 5}})
    assert repr(key) in str(info.value)
