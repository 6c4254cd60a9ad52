"""`konfig.ImmutableDict`: Kauldron's repr and `unfreeze()`; hashable; a pytree."""

from __future__ import annotations

import pickle

import konfig
import pytest
from konfig import ImmutableDict


def test_repr_puts_each_item_on_its_own_line():
    d = ImmutableDict({"z": 1, "a": 2, "w": "a" * 42})
    long = "a" * 42
    assert repr(d) == "\n".join(
        ["ImmutableDict({", "    'z': 1,", "    'a': 2,", f"    'w': '{long}',", "})"]
    )


def test_repr_of_few_short_items_stays_on_one_line():
    assert repr(ImmutableDict()) == "ImmutableDict({})"
    assert repr(ImmutableDict(a=1)) == "ImmutableDict({'a': 1})"
    assert repr(ImmutableDict(a=1, b=(2,))) == "ImmutableDict({'a': 1, 'b': (2,)})"


def test_repr_indents_nested_dicts():
    d = ImmutableDict(model=ImmutableDict(name="x" * 30, sizes=[1, 2]), seed=0)
    lines = [
        "ImmutableDict({",
        "    'model': ImmutableDict({",
        f"        'name': '{'x' * 30}',",
        "        'sizes': [1, 2],",
        "    }),",
        "    'seed': 0,",
        "})",
    ]
    assert repr(d) == "\n".join(lines)


def test_repr_of_a_list_holding_its_dict_does_not_recurse():
    d = ImmutableDict(a=[])
    d["a"].append(d)
    assert "ImmutableDict({...})" in repr(d)


def test_unfreeze_returns_plain_dicts_all_the_way_down():
    d = ImmutableDict(x=ImmutableDict(y=2), items=(ImmutableDict(z=3),), more=[ImmutableDict()])
    plain = d.unfreeze()
    assert plain == {"x": {"y": 2}, "items": ({"z": 3},), "more": [{}]}
    assert type(plain) is dict and type(plain["x"]) is dict
    assert type(plain["items"][0]) is dict and type(plain["more"][0]) is dict
    plain["x"]["y"] = 5  # mutable now
    assert d.x.y == 2


def test_unfreeze_of_a_resolved_config():
    cfg = konfig.ConfigDict(opt={"lr": 0.1, "betas": [0.9, 0.99]})
    assert konfig.resolve(cfg).unfreeze() == {"opt": {"lr": 0.1, "betas": (0.9, 0.99)}}


def test_the_module_level_unfreeze_takes_any_value_holding_immutable_dicts():
    frozen = [ImmutableDict(x=ImmutableDict(y=2)), {"k": ImmutableDict(z=(ImmutableDict(),))}, 7]
    plain = konfig.unfreeze(frozen)
    assert plain == [{"x": {"y": 2}}, {"k": {"z": ({},)}}, 7]
    assert type(plain[0]["x"]) is dict and type(plain[1]["k"]["z"][0]) is dict
    assert konfig.unfreeze(ImmutableDict(a=1)) == {"a": 1} and type(konfig.unfreeze(ImmutableDict())) is dict


def test_still_hashable_and_picklable():
    d = ImmutableDict(a=1, b=(1, 2))
    assert hash(d) == hash(ImmutableDict(a=1, b=(1, 2)))
    assert pickle.loads(pickle.dumps(d)) == d


def test_still_a_pytree_in_insertion_order():
    jax = pytest.importorskip("jax")
    d = ImmutableDict(z=1, a=2)
    doubled = jax.tree_util.tree_map(lambda v: v * 2, d)
    assert type(doubled) is ImmutableDict and list(doubled) == ["z", "a"] and doubled == {"z": 2, "a": 4}


def test_a_config_takes_an_immutable_dict_as_the_dict_it_holds():
    # As Kauldron: `cfg.a = ImmutableDict(...)` (say, a resolved config's dict) is stored as its items.
    cfg = konfig.ConfigDict()
    cfg.a = ImmutableDict(x=1, inner=[ImmutableDict(y=2)])
    assert cfg == konfig.ConfigDict({"a": {"x": 1, "inner": [{"y": 2}]}})
    assert konfig.resolve(cfg)["a"] == ImmutableDict(x=1, inner=(ImmutableDict(y=2),))  # resolved: frozen again
