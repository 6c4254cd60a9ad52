"""The command line: override paths, values, `py::`, globs, config files and `ConfigArgs`."""

from __future__ import annotations

import argparse
import keyword
import pathlib
import sys

import konfig
import pytest
from hypothesis import given
from hypothesis import strategies as st
from konfig._cli._override_paths import ANY, ANY_DEPTH, format_keys, parse_override_path

EXAMPLES = pathlib.Path(__file__).parent / "example_configs"
# The example configs capture `konfig_example_targets`, which must be importable.
HEADLINE = str(EXAMPLES / "headline.py")
NO_ARGS = str(EXAMPLES / "no_args.py")

with konfig.imports():
    import konfig_example_targets as targets


# --- Path grammar -----------------------------------------------------------------


def test_path_with_attributes_and_index_parses_to_keys():
    assert parse_override_path("a.b[0].c") == ("a", "b", 0, "c")


def test_path_with_quoted_key_keeps_the_string():
    assert parse_override_path("a['x.y]z'][-1]") == ("a", "x.y]z", -1)


def test_dotted_digits_are_indices():
    assert parse_override_path("layers.0.features") == ("layers", 0, "features")


def test_globs_parse_to_markers():
    assert parse_override_path("**.batch_size") == (ANY_DEPTH, "batch_size")
    assert parse_override_path("model.*.features") == ("model", ANY, "features")


@pytest.mark.parametrize("bad", ["", "a..b", "a.", "a[0", "a[foo]", "a-b", "a[0]b"])
def test_malformed_path_is_an_override_error(bad):
    with pytest.raises(konfig.OverrideError):
        parse_override_path(bad)


keys_strategy = st.lists(
    st.one_of(
        st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True),
        st.integers(min_value=0, max_value=99),
        st.text(alphabet="ab ]['\".\\", min_size=1, max_size=5),
    ),
    min_size=1,
    max_size=5,
)


@given(keys_strategy)
def test_formatted_path_parses_back_to_the_same_keys(keys):
    assert parse_override_path(format_keys(keys, root="root")) == ("root", *keys)


# --- Values -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("1e-3", 1e-3),
        ("-2", -2),
        ("'quoted'", "quoted"),
        ("[1, 2]", [1, 2]),
        ("(1, 'a')", (1, "a")),
        ("None", None),
        ("True", True),
        ("true", True),
        ("null", None),
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ("relu", "relu"),
        ("/tmp/workdir", "/tmp/workdir"),
        ("2024-01-01", "2024-01-01"),
        ("", ""),
    ],
)
def test_value_is_python_literal_else_json_else_string(text, value):
    parsed = konfig.parse_value(text)
    assert parsed == value and type(parsed) is type(value)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c) | st.tuples(c, c)
    )
)
def test_repr_of_a_python_literal_parses_back(value):
    assert konfig.parse_value(repr(value)) == value


# --- py:: expressions -----------------------------------------------------------------


def test_py_call_becomes_a_node_with_the_last_name_as_attribute():
    node = konfig.parse_value("py::flax.linen.Dense(features=12)")
    assert isinstance(node, konfig.ConfigDict)
    assert node.to_dict() == {"__qualname__": "flax.linen:Dense", "features": 12}


def test_py_positional_arguments_are_numbered():
    node = konfig.parse_py_expression("mylib.Point(1, -2.5, label='p')")
    assert node.to_dict() == {"__qualname__": "mylib:Point", "0": 1, "1": -2.5, "label": "p"}


def test_py_explicit_colon_reaches_a_classmethod():
    node = konfig.parse_py_expression("mylib.models:Trainer.eval_only(steps=3)")
    assert node["__qualname__"] == "mylib.models:Trainer.eval_only"


def test_py_uncalled_name_is_a_constant():
    node = konfig.parse_py_expression("mylib.enums:Color.RED")
    assert node.to_dict() == {"__const__": "mylib.enums:Color.RED"}


def test_py_nested_containers_hold_nodes():
    value = konfig.parse_py_expression("[a.B(), (1, a.C), {'k': a.D(x=[1])}]")
    assert value[0]["__qualname__"] == "a:B"
    assert value[1][0] == 1 and value[1][1]["__const__"] == "a:C"
    assert value[2]["k"]["x"] == [1]


def test_py_bare_name_is_a_builtin():
    assert konfig.parse_py_expression("dict(a=1)")["__qualname__"] == "builtins:dict"


def test_py_colon_inside_a_string_is_kept():
    assert konfig.parse_py_expression("a.B(x='c:d')")["x"] == "c:d"


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('echo hi')",
        "a.B(*xs)",
        "a.B(**kw)",
        "lambda: 0",
        "x[0]",
        "1 + f()",
        "a.B()()",
        "().__class__.__base__.__subclasses__()",
        "[x for x in a.B()]",
        "a.B(1) if c.D else 2",
        "a:B:C",
    ],
)
def test_py_rejects_anything_but_calls_names_and_literals(expr):
    with pytest.raises(konfig.OverrideError, match="py::"):
        konfig.parse_py_expression(expr)


@pytest.mark.parametrize("expr", ["{a.B(): 1}", "{a.B()}", "{[1]: 2}"])
def test_py_unhashable_dict_key_or_set_item_is_an_override_error(expr):
    with pytest.raises(konfig.OverrideError, match="hashable"):
        konfig.parse_py_expression(expr)


def test_py_repeated_keyword_is_an_override_error():
    with pytest.raises(konfig.OverrideError, match="`x` given twice"):
        konfig.parse_py_expression("a.B(x=1, x=2)")


def test_py_syntax_error_names_the_expression():
    with pytest.raises(konfig.OverrideError, match=r"py::a\.B\("):
        konfig.parse_py_expression("a.B(")


# --- Applying overrides ---------------------------------------------------------------


def _cfg() -> konfig.ConfigDict:
    return konfig.build_config(HEADLINE)


def test_override_sets_a_nested_list_item_field():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"model.layers[0].features": "64"}, from_strings=True)
    assert cfg.model.layers[0].features == 64


def test_override_with_negative_index_reaches_the_last_item():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"model.layers[-1].activation": "gelu"}, from_strings=True)
    assert cfg.model.layers[1].activation == "gelu"


def test_override_tuple_item_rebuilds_the_tuple():
    cfg = konfig.build_config(NO_ARGS)
    konfig.apply_overrides(cfg, {"pair[1]": "5"}, from_strings=True)
    assert cfg.pair == (1, 5)


def test_override_py_value_becomes_a_config_node():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"model": "py::konfig_example_targets.Dense(features=12)"}, from_strings=True)
    assert isinstance(cfg.model, konfig.ConfigDict)
    assert konfig.resolve(cfg).model.features == 12


def test_glob_sets_every_matching_key_at_any_depth():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"**.batch_size": "128"}, from_strings=True)
    assert (cfg.batch_size, cfg.eval.batch_size) == (128, 128)


def test_single_star_matches_one_level():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"model.layers.*.features": "5"}, from_strings=True)
    assert [layer.features for layer in cfg.model.layers] == [5, 5]


def test_glob_matching_nothing_suggests_close_keys():
    with pytest.raises(konfig.OverrideError, match="batch_size"):
        konfig.apply_overrides(_cfg(), {"**.batch_sise": "1"}, from_strings=True)


def test_unknown_path_names_it_and_the_closest_existing_path():
    with pytest.raises(konfig.OverrideError) as info:
        konfig.apply_overrides(_cfg(), {"num_train_step": "5"}, from_strings=True)
    message = str(info.value)
    assert "cfg.num_train_step" in message and "`cfg.num_train_steps`" in message


def test_unknown_intermediate_key_is_an_error():
    with pytest.raises(konfig.OverrideError, match=r"cfg\.modle"):
        konfig.apply_overrides(_cfg(), {"modle.layers[0].features": "1"}, from_strings=True)


def test_index_out_of_range_says_how_many_items_exist():
    with pytest.raises(konfig.OverrideError, match="2 items"):
        konfig.apply_overrides(_cfg(), {"model.layers[5].features": "1"}, from_strings=True)


def test_plus_prefix_creates_a_new_key():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"+eval.seed": "3"}, from_strings=True)
    assert cfg.eval.seed == 3


def test_call_node_accepts_an_unset_argument_of_its_signature():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"schedule.alpha": "0.5"}, from_strings=True)
    assert konfig.resolve(cfg).schedule.alpha == 0.5


def test_call_node_rejects_an_argument_outside_its_signature():
    with pytest.raises(TypeError, match="alpah"):
        konfig.apply_overrides(_cfg(), {"schedule.alpah": "0.5"}, from_strings=True)


def test_later_override_wins():
    cfg = _cfg()
    konfig.apply_overrides(cfg, [("batch_size", 1), ("batch_size", 2)])
    assert cfg.batch_size == 2


def test_code_overrides_keep_plain_strings_as_strings():
    cfg = _cfg()
    konfig.apply_overrides(cfg, {"name": "123"})
    assert cfg.name == "123"


# --- The headline case through the CLI ------------------------------------------------


def test_cli_override_of_num_train_steps_reaches_the_schedule():
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.num_train_steps=5"])
    assert konfig.resolve(cfg).schedule.decay_steps == 5


def test_cli_override_of_the_ref_target_keeps_the_ref_live():
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.num_train_steps=5"])
    cfg.num_train_steps = 7
    assert konfig.resolve(cfg).schedule.decay_steps == 7


# --- Flags, files and ConfigArgs ------------------------------------------------------


def test_parse_flags_returns_config_and_the_other_arguments():
    cfg, rest = konfig.parse_flags(["--workdir=/tmp/w", f"--cfg={HEADLINE}", "--cfg.batch_size", "64", "-v"])
    assert cfg.batch_size == 64
    assert rest == ["--workdir=/tmp/w", "-v"]


def test_parse_flags_works_in_front_of_argparse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir")
    cfg, rest = konfig.parse_flags(["--workdir", "/tmp/w", f"--cfg={HEADLINE}", "--cfg.name=run1"])
    args = parser.parse_args(rest)
    assert (args.workdir, cfg.name) == ("/tmp/w", "run1")


def test_parse_flags_with_another_flag_name():
    cfg, rest = konfig.parse_flags([f"--config={NO_ARGS}", "--config.lr=0.5", "--cfg.x=1"], name="config")
    assert cfg.lr == 0.5 and rest == ["--cfg.x=1"]


def test_parse_flags_default_config_path():
    cfg, _ = konfig.parse_flags(["--cfg.lr=0.2"], default=NO_ARGS)
    assert cfg.lr == 0.2


def test_parse_flags_without_a_config_is_an_error():
    with pytest.raises(konfig.OverrideError, match="--cfg=path"):
        konfig.parse_flags(["--cfg.lr=0.2"])


def test_config_args_override_reaches_get_config():
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.__args__.width=48"])
    assert cfg.model.layers[0].features == 48


def test_config_args_str_field_keeps_numeric_text():
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.__args__.name=007"])
    assert cfg.name == "007"


def test_unknown_config_arg_suggests_the_field():
    with pytest.raises(konfig.OverrideError, match=r"__args__\.width"):
        konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.__args__.widht=1"])


def test_config_args_without_a_config_args_class_is_an_error():
    with pytest.raises(konfig.OverrideError, match="ConfigArgs"):
        konfig.parse_flags([f"--cfg={NO_ARGS}", "--cfg.__args__.x=1"])


def test_missing_config_file_suggests_a_sibling():
    with pytest.raises(konfig.OverrideError, match=r"headline\.py"):
        konfig.load_config_module(str(EXAMPLES / "headlin.py"))


def test_config_module_by_import_name():
    module = konfig.load_config_module("json")
    assert module.__name__ == "json"


def test_json_config_file_loads_with_overrides(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text(_cfg().to_json())
    cfg, _ = konfig.parse_flags([f"--cfg={path}", "--cfg.num_train_steps=3"])
    assert konfig.resolve(cfg).schedule.decay_steps == 3


def test_failing_get_config_names_the_config_file(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def get_config():\n    raise ValueError('boom')\n")
    with pytest.raises(ValueError, match="boom") as info:
        konfig.build_config(str(path))
    assert any("broken.py" in note for note in info.value.__notes__)


def test_config_file_may_define_dataclasses(tmp_path):
    path = tmp_path / "with_dataclass.py"
    path.write_text(
        "import dataclasses\nimport konfig\n\n@dataclasses.dataclass\nclass ConfigArgs:\n"
        "    n: int = 1\n\ndef get_config(args):\n    return konfig.ConfigDict(n=args.n)\n"
    )
    cfg, _ = konfig.parse_flags([f"--cfg={path}", "--cfg.__args__.n=4"])
    assert cfg.n == 4


def test_argument_passed_positionally_is_reached_by_its_name():
    cfg = konfig.ConfigDict(model=targets.Dense(8, activation="gelu"))
    konfig.apply_overrides(cfg, {"model.features": 3})
    assert cfg.model[0] == 3 and "features" not in cfg.model.keys()


def test_glob_reaches_arguments_passed_positionally():
    cfg = konfig.ConfigDict(a=targets.Dense(8), b=targets.Sequential(layers=[targets.Dense(features=4)]))
    konfig.apply_overrides(cfg, {"**.features": 16})
    assert (cfg.a[0], cfg.b.layers[0].features) == (16, 16)


def test_py_names_printed_with_an_alias_parse_back_to_the_module():
    assert konfig.parse_py_expression("nn.Dense(3)")["__qualname__"] == "flax.linen:Dense"
    assert konfig.parse_py_expression("jnp.float32")["__const__"] == "jax.numpy:float32"


def test_index_reaches_an_argument_passed_by_keyword():
    cfg = konfig.ConfigDict(model=targets.Dense(features=8))
    konfig.apply_overrides(cfg, {"model[0]": 3})
    assert cfg.model.features == 3 and "0" not in cfg.model.keys()


def test_plus_prefix_appends_to_a_list():
    cfg = konfig.build_config(NO_ARGS)
    konfig.apply_overrides(cfg, {"+layers[3]": "4"}, from_strings=True)
    assert cfg.layers == [1, 2, 3, 4]


def test_plus_prefix_appends_to_a_tuple():
    cfg = konfig.build_config(NO_ARGS)
    konfig.apply_overrides(cfg, {"+pair[2]": "3"}, from_strings=True)
    assert cfg.pair == (1, 2, 3)


def test_plus_prefix_appends_a_positional_argument():
    cfg = konfig.ConfigDict(model=targets.Dense(8))
    konfig.apply_overrides(cfg, {"+model[1]": "'gelu'"}, from_strings=True)
    assert konfig.resolve(cfg).model.activation == "gelu"


def test_index_past_the_end_suggests_appending_with_plus():
    with pytest.raises(konfig.OverrideError, match=r"`\+layers\[3\]` to append"):
        konfig.apply_overrides(konfig.build_config(NO_ARGS), {"layers[3]": "4"}, from_strings=True)


def test_plus_prefix_cannot_leave_a_gap_in_a_list():
    with pytest.raises(konfig.OverrideError, match="3 items"):
        konfig.apply_overrides(konfig.build_config(NO_ARGS), {"+layers[5]": "4"}, from_strings=True)


# --- Command-line text read for the type of the value it replaces (as ml_collections does) ----


@pytest.mark.parametrize("text", ["2024", "1e3", "true", "0,1", "[1, 2]"])
def test_str_field_keeps_its_text_from_the_command_line(text):
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", f"--cfg.name={text}", "--cfg.eval.batch_size=16"])
    assert (cfg.name, cfg.eval.batch_size) == (text, 16)


def test_str_field_takes_a_py_value():
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.name=py::konfig_example_targets.Dense(2)"])
    assert isinstance(cfg.name, konfig.ConfigDict)


def test_str_field_can_still_be_cleared_with_none():
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.name=None"])
    assert cfg.name is None


@pytest.mark.parametrize(("text", "expected"), [("inf", float("inf")), ("-inf", float("-inf"))])
def test_float_field_reads_infinity_from_the_command_line(text, expected):
    cfg, _ = konfig.parse_flags([f"--cfg={HEADLINE}", f"--cfg.schedule.init_value={text}"])
    assert cfg.schedule.init_value == expected


def test_glob_reads_the_text_for_each_match():
    cfg = konfig.ConfigDict(a=konfig.ConfigDict(tag="x"), b=konfig.ConfigDict(tag=1))
    konfig.apply_overrides(cfg, {"**.tag": "7"}, from_strings=True)
    assert (cfg.a.tag, cfg.b.tag) == ("7", 7)


@pytest.mark.parametrize(
    ("annotation", "future"), [("str | None", True), ("str | None", False), ("typing.Optional[str]", True)]
)
def test_config_args_optional_str_field_keeps_numeric_text_and_reads_none(tmp_path, annotation, future):
    path = tmp_path / "optional_str.py"
    path.write_text(
        ("from __future__ import annotations\n" if future else "")
        + "import dataclasses\nimport typing\nimport konfig\n\n@dataclasses.dataclass\nclass ConfigArgs:\n"
        f"    tag: {annotation} = 'x'\n\ndef get_config(args):\n    return konfig.ConfigDict(tag=args.tag)\n"
    )
    cfg, _ = konfig.parse_flags([f"--cfg={path}", "--cfg.__args__.tag=2024"])
    assert cfg.tag == "2024"
    cfg, _ = konfig.parse_flags([f"--cfg={path}", "--cfg.__args__.tag=None"])
    assert cfg.tag is None


def test_glob_matching_a_node_and_its_own_children_sets_the_outer_one():
    cfg = konfig.ConfigDict(x=konfig.ConfigDict(x=1), z=[konfig.ConfigDict(x=3)], t=((1, 2), 3))
    konfig.apply_overrides(cfg, {"**.x": 5, "t.**.*": 0})
    assert (cfg.x, cfg.z[0].x, cfg.t) == (5, 5, (0, 0))


def test_config_args_value_of_the_wrong_type_names_the_field_and_the_type():
    with pytest.raises(konfig.OverrideError, match=r"`__args__\.width` expects int, found 'wide' \(str\)"):
        konfig.parse_flags([f"--cfg={HEADLINE}", "--cfg.__args__.width=wide"])


_py_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
_py_names = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s))


def _py_nodes(children):
    kwargs = st.dictionaries(_py_names, children, max_size=3)
    return kwargs.map(lambda kw: konfig.ConfigDict({"__qualname__": "types:SimpleNamespace", **kw}))


@given(
    _py_nodes(
        st.recursive(
            _py_leaves, lambda c: st.lists(c, max_size=3) | st.lists(c, max_size=3).map(tuple) | _py_nodes(c)
        )
    )
)
def test_printed_call_node_parses_back_with_py(node):
    assert konfig.parse_py_expression(repr(node)) == node


def test_py_typo_in_a_loaded_module_suggests_the_name():
    with pytest.raises(
        konfig.OverrideError, match=r"py::konfig_example_targets\.Dence\(1\).*did you mean `Dense`"
    ):
        konfig.parse_py_expression("konfig_example_targets.Dence(1)")


def test_py_unknown_argument_is_an_override_error_naming_the_value():
    with pytest.raises(
        konfig.OverrideError, match=r"py::konfig_example_targets\.Dense\(featurs=1\).*'features'"
    ):
        konfig.parse_py_expression("konfig_example_targets.Dense(featurs=1)")


def test_py_names_in_modules_not_yet_imported_are_not_imported():
    node = konfig.parse_py_expression("module_never_imported_xyz.Model(1)")
    assert node["__qualname__"] == "module_never_imported_xyz:Model"
    assert "module_never_imported_xyz" not in sys.modules


def test_suggested_path_of_a_digit_str_key_can_be_typed_back():
    cfg = konfig.ConfigDict(ids=konfig.ConfigDict({"0": "zero"}))
    with pytest.raises(konfig.OverrideError, match=r"`cfg\.ids\['0'\]`"):
        konfig.apply_overrides(cfg, {"ids['00']": 1})
    konfig.apply_overrides(cfg, {"ids['0']": "one"})
    assert cfg.ids["0"] == "one"
