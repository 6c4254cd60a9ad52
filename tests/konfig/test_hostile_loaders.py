"""Hostile and careless input to the loaders konfig owns: JSON, CLI overrides, `py::`, sweeps.

Every case gives konfig's own error (naming the input, what was expected and what was
found) or a correct result, never a TypeError / ValueError / RecursionError from inside.
Cases that would take hours (or forever) if their work were not bounded simply complete.
"""

from __future__ import annotations

import ast
import copy
import json
import sys
import types

import konfig
import pytest
from konfig._errors import NestingError

# --- JSON: `__raw__=` keys -------------------------------------------------------------


def test_raw_key_with_an_unhashable_literal_is_a_json_format_error():
    with pytest.raises(
        konfig.JsonFormatError, match=r"'__raw__=\[1\]' is not `__raw__=` followed by a hashable"
    ):
        konfig.from_json('{"__raw__=[1]": 1}')


def test_raw_key_longer_than_any_key_is_refused_without_parsing_it(monkeypatch):
    parsed = []
    real_literal_eval = ast.literal_eval
    monkeypatch.setattr(ast, "literal_eval", lambda text: parsed.append(text) or real_literal_eval(text))
    text = json.dumps({"__raw__=" + "-" * 200_000 + "1": 1})
    with pytest.raises(konfig.JsonFormatError, match=r"200,009 characters long; .* at most 1000 characters"):
        konfig.from_json(text)
    assert parsed == []


def test_raw_key_nested_past_the_parsers_limit_is_a_json_format_error():
    with pytest.raises(konfig.JsonFormatError, match="too many nested parentheses"):
        konfig.from_json(json.dumps({"__raw__=" + "(" * 300 + ")" * 300: 1}))


def test_config_with_a_key_too_long_to_read_back_is_not_written():
    with pytest.raises(konfig.ConfigValueError, match="at most 1000 characters"):
        konfig.ConfigDict({tuple(range(500)): 1}).to_json()


# --- JSON: reference operations ----------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "complaint"),
    [
        ('{"__op__": "add", "args": [1, 2], "kwargs": []}', r'"kwargs", a dict .* found \[\]'),
        ('{"__op__": "add", "args": [1, 2], "kwargs": {"x": 1}}', r'of a "call" only'),
        ('{"__op__": "add", "args": [1]}', r"a list of 2 operand\(s\), found \[1\]"),
        ('{"__op__": "neg", "args": 3}', r"a list of 1 operand\(s\), found 3"),
        ('{"__op__": "call", "args": []}', "the function and its arguments"),
        ('{"__op__": "call", "args": [1, 2]}', "function is a constant node or a reference, found 1"),
        ('{"__op__": ["add"], "args": []}', r"unknown reference operation \['add'\]"),
        (
            '{"__op__": "system", "args": []}',
            "unknown reference operation 'system'; expected one of abs, add",
        ),
    ],
)
def test_malformed_reference_operation_is_a_json_format_error_at_its_path(op, complaint):
    with pytest.raises(konfig.JsonFormatError, match=r"^At cfg\.x: .*" + complaint):
        konfig.from_json('{"x": ' + op + "}")


# --- JSON: positional arguments of call nodes -----------------------------------------------


@pytest.mark.parametrize(
    ("key", "advice"),
    [("00", "; write '0'"), ("\u0663", "; write '3'"), ("\u00b2", ""), ("007", "; write '7'")],
)
def test_digit_key_that_is_not_an_argument_index_is_named_with_its_node(key, advice):
    text = json.dumps({"model": {"__qualname__": "builtins:dict", "0": [], key: 2}})
    with pytest.raises(konfig.JsonFormatError) as info:
        konfig.from_json(text)
    message = str(info.value)
    assert message.startswith("At cfg.model: call node key ")
    assert repr(key) in message and "looks like a positional argument but is not one" in message
    assert message.endswith(advice + ".")


def test_digit_key_of_a_plain_dict_given_to_resolve_is_refused_too():
    with pytest.raises(konfig.JsonFormatError, match="call node key '00'"):
        konfig.resolve({"a": {"__qualname__": "builtins:dict", "0": [], "00": 2}})


def test_positional_arguments_with_a_gap_are_a_json_format_error():
    with pytest.raises(konfig.JsonFormatError, match=r'must be "0" to "1" without gaps, found `0`, `2`'):
        konfig.from_json('{"a": {"__qualname__": "builtins:dict", "0": 1, "2": 3}}')


def test_argument_index_of_thousands_of_digits_is_refused_not_an_int_conversion_error():
    text = '{"a": {"__qualname__": "builtins:dict", "' + "9" * 5000 + '": 3}}'
    with pytest.raises(konfig.JsonFormatError, match="looks like a positional argument but is not one"):
        konfig.from_json(text)


def test_digit_keys_of_plain_nodes_are_just_keys():
    assert dict(konfig.from_json('{"a": {"00": 1, "\u00b2": 2}}').a) == {"00": 1, "\u00b2": 2}


# --- JSON: markers and node keys with the wrong payload ---------------------------------------


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ('{"__ref__": "a"}', r"holds the path as a list of keys \(str, int, ...\), found 'a'"),
        (
            '{"__ref__": [[1]]}',
            r"list of keys \(str, int, ...\), found \[\[1\]\] \(unhashable type: 'list'\)",
        ),
        ('{"__ref__": ["a"], "__root__": 5}', "`__root__` is a config node, found 5"),
        ('{"__range__": ["a", "b"]}', r"list of 1 to 3 ints \(a non-zero step\), found \['a', 'b'\]"),
        ('{"__range__": [0, 5, 0]}', "non-zero step"),
        ('{"__bytes__": "!!!"}', "a base64 string, found '!!!'"),
        ('{"__bytes__": 3}', "a base64 string, found 3"),
        (
            '{"__placeholder__": "builtins:int", "required": "yes"}',
            "\"required\": true or false\\), found {.*'required': 'yes'}",
        ),
        ('{"__placeholder__": 3}', "holds its type as a `module:Name` string .*, found 3"),
        ('{"__tuple__": {"x": 1}}', "holds a list of items, found {'x': 1}"),
        (
            '{"__set__": [[1]]}',
            r"holds a list of plain values \(numbers, strings, bytes, None\), found \[\[1\]\]",
        ),
        ('{"__set__": [{"__slice__": [1, 2, 3]}]}', r"\(unhashable type: 'slice'\)"),
        ('{"__frozenset__": "abc"}', "a list of plain values .*, found 'abc'"),
        ('{"__slice__": [1, 2]}', r"a list \[start, stop, step\] of plain values, found \[1, 2\]"),
        ('{"__slice__": [{"__ref__": []}, 2, 3]}', "of plain values"),
        ('{"__complex__": "1+2j"}', r"a list \[real, imag\] of numbers, found '1\+2j'"),
        ('{"__path__": "x", "type": 3}', r'a path string \(and a "type" string\), found {.*3}'),
        ('{"__ellipsis__": 3}', "holds null, found 3"),
        ('{"__tuple__": [1], "x": 1}', "a `__tuple__` marker has only the keys `__tuple__`; found `x` too"),
        ('{"__id__": "x", "b": 1}', "`__id__` must be an int, found 'x'"),
        ('{"__qualname__": 3}', "`__qualname__` must be a `module:Name` string, found 3"),
        ('{"__const__": [1]}', r"`__const__` must be a `module:Name` string, found \[1\]"),
        ('{"__const__": "os:getcwd", "n": 1}', "a constant node holds only `__const__`; found `n` too"),
        ('{"__qualname__": "os:getcwd", "__const__": "os:sep"}', "a call .* or a constant .*, not both"),
    ],
)
def test_malformed_marker_is_a_json_format_error_naming_its_path(value, complaint):
    with pytest.raises(konfig.JsonFormatError, match=r"^At cfg\.sub\.x: .*" + complaint):
        konfig.from_json('{"sub": {"x": ' + value + "}}")


def test_id_of_the_root_must_be_an_int():
    with pytest.raises(konfig.JsonFormatError, match=r"^At cfg: `__id__` must be an int, found \[1\]"):
        konfig.from_json('{"__id__": [1], "b": 1}')


def test_integer_with_more_digits_than_python_reads_is_a_json_format_error():
    with pytest.raises(konfig.JsonFormatError, match="Cannot read this JSON: Exceeds the limit"):
        konfig.from_json('{"a": ' + "9" * 5000 + "}")


def test_huge_json_numbers_and_duplicate_keys_load_as_json_reads_them():
    assert dict(konfig.from_json('{"a": 1e999, "a": -1e999}')) == {"a": float("-inf")}


# --- JSON: placeholder types and `ref_fn` functions are looked up without running code ---------


class _CountingMeta(type):
    reads = 0

    @property
    def Inner(cls) -> type:
        _CountingMeta.reads += 1
        return int


class Holder(metaclass=_CountingMeta):
    pass


def test_placeholder_type_behind_a_property_is_kept_as_its_name_without_reading_it():
    cfg = konfig.from_json(json.dumps({"a": {"__placeholder__": f"{__name__}:Holder.Inner"}}))
    assert cfg.a.type == f"{__name__}:Holder.Inner" and _CountingMeta.reads == 0


@pytest.mark.parametrize(
    "name", ["sys:modules.__class__", "konfig:__builtins__", "os:_exit", "os:path.__dict__"]
)
def test_placeholder_type_through_a_private_or_dunder_name_is_kept_as_its_name(name):
    assert konfig.from_json(json.dumps({"a": {"__placeholder__": name}})).a.type == name


def test_placeholder_type_of_an_imported_module_is_restored():
    assert (
        konfig.from_json('{"a": {"__placeholder__": "collections:OrderedDict"}}').a.type
        is __import__("collections").OrderedDict
    )


def test_lazy_module_getattr_is_not_called_by_loading(monkeypatch):
    asked = []
    module = types.ModuleType("konfig_test_lazy_module")
    module.__getattr__ = lambda name: asked.append(name) or int  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    text = json.dumps(
        {
            "p": {"__placeholder__": f"{module.__name__}:Thing"},
            "f": {"__op__": "call", "args": [{"__const__": f"{module.__name__}:make"}]},
        }
    )
    cfg = konfig.from_json(text)
    assert asked == [] and cfg.p.type == f"{module.__name__}:Thing"


# --- Nesting deeper than Python's recursion limit --------------------------------------------


def _deep_config(levels: int) -> konfig.ConfigDict:
    cfg = node = konfig.ConfigDict()
    for _ in range(levels - 1):
        node.a = konfig.ConfigDict()
        node = node.a
    node.x = 1
    return cfg


def test_json_nested_600_levels_is_a_json_format_error_naming_depth_and_path():
    text = '{"a": ' * 600 + "1" + "}" * 600
    with pytest.raises(konfig.JsonFormatError, match=r"nested 600 levels deep \(deepest at cfg\.a\.a\.a\.a"):
        konfig.from_json(text)


def test_json_text_deeper_than_the_json_parser_names_line_and_column():
    with pytest.raises(
        konfig.JsonFormatError, match=r"nested 100000 levels deep \(deepest at line 1, column 100000\)"
    ):
        konfig.from_json("[" * 100_000 + "]" * 100_000)


def test_repr_of_a_config_nested_600_levels_is_a_nesting_error_naming_depth_and_path():
    with pytest.raises(
        NestingError, match=r"nested 600 levels deep \(deepest at cfg\.a\.a\.a.*\(587 more keys\)"
    ):
        repr(_deep_config(600))


def test_repr_of_a_reference_thousands_of_operations_deep_is_a_nesting_error():
    ref = konfig.ConfigDict(x=1).ref.x
    for _ in range(3000):
        ref = ref + 1
    with pytest.raises(NestingError, match="nests 3000 operations deep"):
        repr(ref)


def test_deepcopy_of_a_config_thousands_of_levels_deep_is_exact():
    cfg = _deep_config(5000)
    copied = copy.deepcopy(cfg)
    node, original = copied, cfg
    while "a" in original:
        assert node is not original
        node, original = node.a, original.a
    assert node.x == 1 and node is not original


def test_deepcopy_copies_a_tuple_shared_along_many_paths_once():
    # 2**60 paths lead to the innermost node: copying each path would never finish.
    shared: tuple = (konfig.ConfigDict(x=1),)
    for _ in range(60):
        shared = (shared, shared, [shared])
    copied = copy.deepcopy(konfig.ConfigDict._raw({"t": shared}, None))
    inner = copied.t
    for _ in range(60):
        assert inner[0] is inner[1] is inner[2][0]
        inner = inner[0]
    assert inner[0].x == 1 and inner[0] is not shared


def test_deepcopy_keeps_cycles_through_lists_and_references():
    cfg = konfig.ConfigDict(n=1)
    cfg.layers = [cfg]
    cfg.total = cfg.ref.n + 1
    copied = copy.deepcopy(cfg)
    assert (
        copied.layers[0] is copied
        and konfig.get_by_path(copied, "total")._konfig_args[0]._konfig_root is copied
    )


def test_config_writes_json_of_1500_levels_as_an_error_naming_depth_and_path():
    with pytest.raises(konfig.ConfigValueError, match=r"nested 1500 levels deep \(deepest at cfg\.a\.a"):
        _deep_config(1500).to_json()


@pytest.mark.parametrize(
    "operation",
    [lambda c: c == copy.deepcopy(c), lambda c: c.to_dict(), lambda c: konfig.diff(c, copy.deepcopy(c))],
    ids=["eq", "to_dict", "diff"],
)
def test_walking_a_config_1500_levels_deep_is_a_nesting_error(operation):
    with pytest.raises(NestingError, match="nested 1500 levels deep"):
        operation(_deep_config(1500))


def test_list_that_contains_itself_is_named_where_it_does():
    items: list = [1]
    items.append(items)
    with pytest.raises(NestingError, match=r"contains itself at cfg\.items\[1\]"):
        konfig.ConfigDict(items=items)


def test_plain_dict_given_to_resolve_keeps_its_sharing_and_is_decoded_once():
    # 2**60 paths through the shared dicts: decoding each path would never finish.
    data: dict = {"x": 1}
    for _ in range(60):
        data = {"a": data, "b": data, "listed": [data]}
    resolved = konfig.resolve(data)
    assert resolved.a is resolved.b is resolved.listed[0]


def test_plain_dict_that_contains_itself_is_a_cycle_error_from_resolve():
    data: dict = {"x": 1}
    data["self"] = data
    with pytest.raises(konfig.CycleError, match=r"cfg contains itself at cfg\.self"):
        konfig.resolve(data)


def test_cli_value_nested_100000_levels_is_an_override_error_naming_the_path():
    with pytest.raises(konfig.OverrideError, match=r"In the override of `a`: .* nested 100000 levels deep"):
        konfig.apply_overrides(
            konfig.ConfigDict(a=1), {"a": "[" * 100_000 + "]" * 100_000}, from_strings=True
        )


@pytest.mark.parametrize(
    "text", ["-" * 1000 + "1", "-" * 20_000 + "1", "a." * 20_000 + "b", "dict(" * 300 + ")" * 300]
)
def test_py_value_too_deep_for_the_parser_is_an_override_error_with_the_text_shortened(text):
    with pytest.raises(konfig.OverrideError) as info:
        konfig.parse_value("py::" + text)
    assert "characters)…" in str(info.value) and len(str(info.value)) < 1000


# --- CLI override paths ------------------------------------------------------------------------


def _cli_cfg() -> konfig.ConfigDict:
    return konfig.ConfigDict(
        lst=[1, 2, 3], node=konfig.ConfigDict({"__qualname__": "types:SimpleNamespace", "0": 1})
    )


@pytest.mark.parametrize(
    ("path", "complaint"),
    [
        ("lst.\u00b2", r"`\.²` is neither an index \(ASCII digits without leading zeros\) nor a key"),
        ("lst.\u0663", r"`\.٣` is neither an index"),
        ("lst.00", r"`\.00` is neither an index \(ASCII digits without leading zeros: write `\.0`\)"),
        ("lst." + "9" * 5000, r"has 5,000 digits, more than any list or call could have items"),
        ("lst[" + "-" * 200_000 + "1]", r"the key in `\[\.\.\.\]` at position 3 is 200,001 characters long"),
        ("lst[[1]]", "is not a hashable Python literal"),
        ("**", r"ends with `\*\*`; name the key to set after it"),
        ("node[99]", r"Cannot set `cfg\.node\[99\]`: .*argument index 99 out of range"),
        ("node.__const__", r"`__const__` marks a call or constant node, and this node has none"),
    ],
)
def test_odd_override_path_is_an_override_error_naming_it(path, complaint):
    with pytest.raises(konfig.OverrideError, match=complaint):
        konfig.apply_overrides(_cli_cfg(), {path: "5"}, from_strings=True)


def test_odd_flag_on_the_command_line_is_an_override_error(tmp_path):
    source = tmp_path / "cfg.json"
    source.write_text(_cli_cfg().to_json())
    with pytest.raises(konfig.OverrideError, match=r"In override path 'lst\.²'"):
        konfig.parse_flags([f"--cfg={source}", "--cfg.lst.\u00b2=1"])


def test_a_target_is_replaced_by_a_string_only():
    cfg = _cli_cfg()
    konfig.apply_overrides(cfg, {"node.__qualname__": "collections:OrderedDict"}, from_strings=True)
    assert cfg.node["__qualname__"] == "collections:OrderedDict"
    with pytest.raises(konfig.OverrideError, match="a target is a `module:Name` string"):
        konfig.apply_overrides(cfg, {"node.__qualname__": 5})


def test_override_path_that_is_not_a_str_is_an_override_error():
    with pytest.raises(konfig.OverrideError, match=r"An override path is a str like .*, found 1"):
        konfig.apply_overrides(_cli_cfg(), {1: 2})  # type: ignore[dict-item]


def test_glob_through_a_config_2000_levels_deep_sets_the_deepest_key():
    cfg = _deep_config(2000)
    konfig.apply_overrides(cfg, {"**.x": "7"}, from_strings=True)
    node = cfg
    while "a" in node:
        node = node.a
    assert node.x == 7


# --- `py::` values ---------------------------------------------------------------------------


def test_py_value_cannot_pass_node_markers_as_keyword_arguments():
    with pytest.raises(
        konfig.OverrideError, match="`__const__` is a konfig node marker, not a keyword argument"
    ):
        konfig.parse_value("py::dict(__const__=1)")


def test_py_value_checks_names_without_running_code_of_the_objects_it_walks():
    node = konfig.parse_value(f"py::{__name__}:Holder.Inner")
    assert dict(node) == {"__const__": f"{__name__}:Holder.Inner"} and _CountingMeta.reads == 0
    with pytest.raises(konfig.OverrideError, match="has no `Innr`"):
        konfig.parse_value(f"py::{__name__}:Holder.Innr")


def test_py_value_is_data_never_evaluated():
    node = konfig.parse_value("py::os.system('touch /tmp/konfig_should_not_exist')")
    assert dict(node) == {"__qualname__": "os:system", "0": "touch /tmp/konfig_should_not_exist"}


# --- Sweeps ----------------------------------------------------------------------------------


def _sweep_module(**sweeps) -> types.ModuleType:
    module = types.ModuleType("konfig_test_sweeps")
    module.get_config = lambda: konfig.ConfigDict(a=1, b=2)  # type: ignore[attr-defined]
    for name, function in sweeps.items():
        setattr(module, name, function)
    return module


def test_sweep_that_never_stops_is_an_override_error():
    def sweep_forever():
        n = 0
        while True:
            yield {"a": n}
            n += 1

    with pytest.raises(konfig.OverrideError, match=r"`sweep_forever\(\)` yielded more than 100,000 items"):
        konfig.sweep_items(_sweep_module(sweep_forever=sweep_forever), "forever")


def test_product_of_sweeps_larger_than_the_bound_is_refused_before_it_is_built():
    module = _sweep_module(
        sweep_a=lambda: ({"a": i} for i in range(1000)), sweep_b=lambda: ({"b": i} for i in range(1000))
    )
    with pytest.raises(konfig.OverrideError, match=r"make 1,000,000 combinations, more than the 100,000"):
        konfig.sweep_items(module, "a,b")


def test_sweep_returning_something_else_than_items_is_an_override_error():
    with pytest.raises(konfig.OverrideError, match=r"`sweep\(\)` returned 5; expected it to yield"):
        konfig.sweep_items(_sweep_module(sweep=lambda: 5))


# --- JSON: keys chosen to hash alike -----------------------------------------------------------


def test_raw_keys_chosen_to_hash_alike_are_refused_before_the_dict_grows():
    # Python does not randomise int hashes: `hash(k * (2**61 - 1)) == 0` for every k, so a dict
    # of 100,000 such keys takes ~5e9 probes to build (minutes); it is refused at the 9th.
    text = json.dumps({f"__raw__={k * (2**61 - 1)}": k for k in range(100_000)})
    with pytest.raises(konfig.JsonFormatError, match="more than 8 of its `__raw__=` keys have the same hash"):
        konfig.from_json(text)


def test_many_int_keys_that_hash_apart_load():
    labels = konfig.ConfigDict({i: f"class{i}" for i in range(20_000)})
    assert konfig.from_json(labels.to_json()) == labels
