"""``flatten_with_path``: ``{path: leaf}`` for every leaf, in tree order."""

from __future__ import annotations

import collections
import dataclasses

import pytest
from kontext import flatten_with_path

Point = collections.namedtuple("Point", ["x", "y"])


def test_nested_containers_flatten_to_canonical_paths() -> None:
    tree = {"a": [{"b": {"inner": 123}, "c": 456}, {"e": 789}], "t": (1, "s"), "k": {"x y": 0}}
    assert flatten_with_path(tree) == {
        "a[0].b.inner": 123,
        "a[0].c": 456,
        "a[1].e": 789,
        "t[0]": 1,
        "t[1]": "s",
        "k['x y']": 0,
    }


def test_separator_joins_the_parts() -> None:
    tree = {"a": [{"b": 1}], "c": 2}
    assert flatten_with_path(tree, separator=".") == {"a.0.b": 1, "c": 2}
    assert flatten_with_path(tree, separator="/") == {"a/0/b": 1, "c": 2}


def test_prefix_is_put_in_front_of_every_path() -> None:
    assert flatten_with_path({"w": 1, "l": [2]}, prefix="params") == {"params.w": 1, "params.l[0]": 2}


def test_named_tuples_and_dataclasses_flatten_by_field_name() -> None:
    @dataclasses.dataclass
    class Out:
        logits: int
        point: Point

    assert flatten_with_path({"o": Out(1, Point(2, 3))}) == {"o.logits": 1, "o.point.x": 2, "o.point.y": 3}


def test_none_is_a_leaf_and_empty_containers_vanish() -> None:
    assert flatten_with_path({"a": None, "b": {}, "c": [], "d": [None]}) == {"a": None, "d[0]": None}


def test_is_leaf_stops_the_recursion() -> None:
    tree = {"a": {"keep": [1, 2]}, "b": [3]}
    assert flatten_with_path(tree, is_leaf=lambda x: isinstance(x, list)) == {"a.keep": [1, 2], "b": [3]}


def test_order_follows_the_tree() -> None:
    assert list(flatten_with_path({"z": 1, "a": {"m": 2, "b": 3}})) == ["z", "a.m", "a.b"]


def test_a_scalar_flattens_to_the_empty_path() -> None:
    assert flatten_with_path(5) == {"": 5}


def test_cycles_are_reported() -> None:
    tree: dict = {"a": []}
    tree["a"].append(tree)
    with pytest.raises(ValueError, match="cycle at 'a\\[0\\]'"):
        flatten_with_path(tree)


def test_mappings_with_attribute_access_flatten_like_dicts() -> None:
    ordered = collections.OrderedDict(b=1, a=collections.OrderedDict(c=2))
    assert flatten_with_path(ordered) == {"b": 1, "a.c": 2}


def test_jax_pytree_nodes_flatten_with_their_key_paths() -> None:
    jax = pytest.importorskip("jax")

    @dataclasses.dataclass
    class Linear:
        weight: object
        bias: object
        name: str = "linear"

    jax.tree_util.register_dataclass(Linear, data_fields=["weight", "bias"], meta_fields=["name"])
    flat = flatten_with_path({"layers": [Linear(1.0, 2.0)]})
    assert flat == {"layers[0].weight": 1.0, "layers[0].bias": 2.0}
