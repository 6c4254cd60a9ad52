"""repr(cfg): a readable Python-like call tree in `<ConfigDict[...]>`, laid out as Kauldron lays it out."""

import json

import konfig
import pytest


def _tree(cfg: konfig.ConfigDict) -> str:
    """The text inside `<ConfigDict[...]>`."""
    text = repr(cfg)
    assert text.startswith("<ConfigDict[") and text.endswith("]>"), text
    return text[len("<ConfigDict[") : -len("]>")]


with konfig.imports():
    from email.mime import text

    import fake_lib as fl


def test_call_node_prints_as_a_call_in_configdict_brackets():
    assert repr(fl.Dense(3, use_bias=False)) == "<ConfigDict[fake_lib.Dense(3, use_bias=False)]>"


def test_constant_prints_as_its_dotted_name():
    assert _tree(konfig.ConfigDict(c=fl.Color.RED)) == "{'c': fake_lib.Color.RED}"


def test_call_is_split_one_argument_per_line_past_twenty_characters_of_arguments():
    node = fl.Trainer(model=fl.Dense(features=12, use_bias=False), workdir="/a/b", steps=10)
    assert _tree(node) == (
        "fake_lib.Trainer(\n"
        "    model=fake_lib.Dense(\n"
        "        features=12,\n"
        "        use_bias=False,\n"
        "    ),\n"
        "    workdir='/a/b',\n"
        "    steps=10,\n"
        ")"
    )


def test_one_argument_or_short_arguments_stay_on_one_line():
    assert _tree(fl.Dense(features=123456789, use_bias=False, activation="relu")).count("\n") == 4
    assert (
        _tree(fl.Dense(features=1234567890123456789012345))
        == "fake_lib.Dense(features=1234567890123456789012345)"
    )
    assert _tree(fl.Dense(1, use_bias=False)) == "fake_lib.Dense(1, use_bias=False)"


@pytest.fixture
def restore_aliases():
    from konfig import _repr

    saved = dict(_repr._ALIASES)
    yield
    _repr._ALIASES.clear()
    _repr._ALIASES.update(saved)
    _repr._DISPLAY_CACHE.clear()


def test_registered_alias_shortens_the_module(restore_aliases):
    konfig.register_aliases({"email.mime": "mime"})
    assert _tree(text.MIMEText("hi")) == "mime.text.MIMEText('hi')"


def test_default_alias_for_flax_linen():
    node = konfig.ConfigDict({"__const__": "flax.linen:Dense"})
    assert _tree(node) == "nn.Dense"


def test_alias_matches_whole_module_names_only():
    node = konfig.ConfigDict({"__const__": "numpyro:sample"})
    assert _tree(node) == "numpyro.sample"


def test_shared_node_is_printed_once_with_an_anchor():
    cfg = konfig.ConfigDict()
    cfg.a = fl.Dense(1)
    cfg.b = cfg.a
    assert _tree(cfg) == "{\n    'a': &id001 fake_lib.Dense(1),\n    'b': *id001,\n}"


def test_cyclic_node_refers_back_to_its_anchor():
    cfg = fl.Model(encoder=None)
    cfg.decoder = cfg
    assert _tree(cfg) == "&id001 fake_lib.Model(\n    encoder=None,\n    decoder=*id001,\n)"


def test_references_print_as_references():
    cfg = konfig.ConfigDict(steps=10)
    cfg.model = fl.Model(encoder=None, num_layers=cfg.ref.steps // 2)
    cfg.depth = cfg.model.ref.num_layers
    assert _tree(cfg) == (
        "{\n"
        "    'steps': 10,\n"
        "    'model': fake_lib.Model(\n"
        "        encoder=None,\n"
        "        num_layers=cfg.ref.steps // 2,\n"
        "    ),\n"
        "    'depth': cfg.model.ref.num_layers,\n"
        "}"
    )


def test_ref_fn_prints_with_the_function_name():
    cfg = konfig.ConfigDict(a=1)
    cfg.b = konfig.ref_fn(max, cfg.ref.a, 2)
    assert repr(konfig.get_by_path(cfg, "b")) == "konfig.ref_fn(max, cfg.ref.a, 2)"


def test_placeholders_print_as_calls():
    cfg = konfig.ConfigDict(w=konfig.placeholder(str), n=konfig.required(int))
    assert _tree(cfg) == "{\n    'w': konfig.placeholder(str),\n    'n': konfig.required(int),\n}"


def test_union_prints_with_a_pipe():
    assert _tree(konfig.ConfigDict(t=fl.Dense | None)) == "{'t': fake_lib.Dense | None}"


def test_one_element_tuple_keeps_its_comma():
    assert _tree(konfig.ConfigDict(t=(1,))) == "{'t': (1,)}"


def test_str_equals_repr():
    cfg = konfig.ConfigDict(a=fl.Dense(1))
    assert str(cfg) == repr(cfg)


def test_sub_config_prints_refs_to_the_enclosing_config():
    cfg = konfig.ConfigDict(steps=10)
    cfg.model = fl.Model(encoder=None, num_layers=cfg.ref.steps)
    assert _tree(cfg.model) == "fake_lib.Model(\n    encoder=None,\n    num_layers=cfg.ref.steps,\n)"


def test_sets_print_sorted():
    cfg = konfig.ConfigDict(s={"b", "a"}, f=frozenset({2, 1}), e=set())
    assert _tree(cfg) == "{\n    's': {'a', 'b'},\n    'f': frozenset({1, 2}),\n    'e': set(),\n}"


def test_an_operand_that_is_the_config_itself_prints_as_an_anchor():
    # Found by the loaders' fuzzing: an operation whose operand is the tree that holds it recursed forever.
    cfg = konfig.from_json(
        json.dumps({"__id__": 1, "z": {"__op__": "eq", "args": [{"__op__": "mul", "args": [{"__id__": 1}, 2]}, 3]}})
    )
    assert repr(cfg) == "<ConfigDict[&id001 {'z': (*id001 * 2) == 3}]>"
