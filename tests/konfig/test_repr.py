"""repr(cfg): a readable Python-like call tree."""

import konfig
import pytest

with konfig.imports():
    from email.mime import text

    import fake_lib as fl


def test_call_node_prints_as_a_call():
    assert repr(fl.Dense(3, use_bias=False)) == "fake_lib.Dense(3, use_bias=False)"


def test_constant_prints_as_its_dotted_name():
    assert repr(konfig.ConfigDict(c=fl.Color.RED)) == "{'c': fake_lib.Color.RED}"


def test_long_call_is_split_one_argument_per_line():
    node = fl.Trainer(
        model=fl.Dense(features=123456789, use_bias=False), workdir="/a/long/work/dir", steps=10
    )
    assert repr(node) == (
        "fake_lib.Trainer(\n"
        "    model=fake_lib.Dense(features=123456789, use_bias=False),\n"
        "    workdir='/a/long/work/dir',\n"
        "    steps=10,\n"
        ")"
    )


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
    assert repr(text.MIMEText("hi")) == "mime.text.MIMEText('hi')"


def test_default_alias_for_flax_linen():
    node = konfig.ConfigDict({"__const__": "flax.linen:Dense"})
    assert repr(node) == "nn.Dense"


def test_alias_matches_whole_module_names_only():
    node = konfig.ConfigDict({"__const__": "numpyro:sample"})
    assert repr(node) == "numpyro.sample"


def test_shared_node_is_printed_once_with_an_anchor():
    cfg = konfig.ConfigDict()
    cfg.a = fl.Dense(1)
    cfg.b = cfg.a
    assert repr(cfg) == "{'a': &id001 fake_lib.Dense(1), 'b': *id001}"


def test_cyclic_node_refers_back_to_its_anchor():
    cfg = fl.Model(encoder=None)
    cfg.decoder = cfg
    assert repr(cfg) == "&id001 fake_lib.Model(encoder=None, decoder=*id001)"


def test_references_print_as_references():
    cfg = konfig.ConfigDict(steps=10)
    cfg.model = fl.Model(encoder=None, num_layers=cfg.ref.steps // 2)
    cfg.depth = cfg.model.ref.num_layers
    assert repr(cfg) == (
        "{\n"
        "    'steps': 10,\n"
        "    'model': fake_lib.Model(encoder=None, num_layers=cfg.ref.steps // 2),\n"
        "    'depth': cfg.model.ref.num_layers,\n"
        "}"
    )


def test_ref_fn_prints_with_the_function_name():
    cfg = konfig.ConfigDict(a=1)
    cfg.b = konfig.ref_fn(max, cfg.ref.a, 2)
    assert repr(cfg.b) == "konfig.ref_fn(max, cfg.ref.a, 2)"


def test_placeholders_print_as_calls():
    cfg = konfig.ConfigDict(w=konfig.placeholder(str), n=konfig.required(int))
    assert repr(cfg) == "{'w': konfig.placeholder(str), 'n': konfig.required(int)}"


def test_union_prints_with_a_pipe():
    assert repr(konfig.ConfigDict(t=fl.Dense | None)) == "{'t': fake_lib.Dense | None}"


def test_one_element_tuple_keeps_its_comma():
    assert repr(konfig.ConfigDict(t=(1,))) == "{'t': (1,)}"


def test_str_equals_repr():
    cfg = konfig.ConfigDict(a=fl.Dense(1))
    assert str(cfg) == repr(cfg)


def test_sub_config_prints_refs_to_the_enclosing_config():
    cfg = konfig.ConfigDict(steps=10)
    cfg.model = fl.Model(encoder=None, num_layers=cfg.ref.steps)
    assert repr(cfg.model) == "fake_lib.Model(encoder=None, num_layers=cfg.ref.steps)"


def test_sets_print_sorted():
    cfg = konfig.ConfigDict(s={"b", "a"}, f=frozenset({2, 1}), e=set())
    assert repr(cfg) == "{'s': {'a', 'b'}, 'f': frozenset({1, 2}), 'e': set()}"
