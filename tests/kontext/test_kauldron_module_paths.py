"""Kauldron's kontext module paths (``kontext.path_parser``, ``path_builder``, ``type_utils``) for code written
against Kauldron: the same results as Kauldron's, built on kontext's own parser."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Optional, TypeVar

import pytest
from kontext import path_builder, path_parser, type_utils


def test_parse_parts_gives_a_list_of_names_indices_slices_and_wildcards():
    assert path_parser.parse_parts("a[3][1:2].bbb.*.a") == ["a", 3, slice(1, 2), "bbb", path_parser.Wildcard.STAR, "a"]
    assert path_parser.parse_parts("a.123.b[10]") == ["a", 123, "b", 10]
    assert path_parser.parse_parts("interms.model.__call__[0]") == ["interms", "model", "__call__", 0]
    assert path_parser.parse_parts("params.**.kernel")[1] is path_parser.Wildcard.DOUBLE_STAR


class Outer(path_builder.AnnotatedPathBuilder):
    first: int
    inner: Inner
    anything: Any


class Inner(path_builder.AnnotatedPathBuilder):
    leaf: Outer


def test_an_annotated_builder_follows_its_fields_from_its_class_name():
    outer = Outer()
    assert str(outer) == "Outer" and str(outer.first) == "Outer.first"
    assert str(outer.inner.leaf.inner) == "Outer.inner.leaf.inner"
    assert str(outer.anything.x[0]) == "Outer.anything.x[0]"  # not a builder class: any path below
    with pytest.raises(AttributeError, match=r"Outer has no field 'missing' .*first, inner, anything"):
        _ = outer.missing
    with pytest.raises(AttributeError, match=r"Inner has no field 'first'"):
        _ = outer.inner.first
    with pytest.raises(AttributeError, match=r"read-only"):
        outer.first = 1


def test_a_dynamic_builder_keeps_attributes_and_items_apart():
    x = path_builder.DynamicPathBuilder()
    assert str(x.bbb[123].ccc["aa"]["bb"].eee) == "DynamicPathBuilder.bbb[123].ccc['aa']['bb'].eee"


_token_a, _token_b = object(), object()
_T = TypeVar("_T")
_KeyA = Annotated[_T, _token_a]
_KeyB = Annotated[_T, _token_b]


@dataclasses.dataclass
class Fields:
    both: Annotated[int, _token_a, _token_b]
    nested_alias: _KeyA[_KeyB[int]]
    optional: Optional[_KeyA[int]]  # noqa: UP045 (both spellings of an optional field)
    union: None | _KeyA[int]  # noqa: RUF036
    deep: dict[str, list[_KeyA[int]]]
    plain: int


@pytest.mark.parametrize("tokens", [(_token_a, _token_b), (_KeyA, _KeyB)])
def test_get_annotated_finds_the_token_at_any_depth_of_a_fields_annotation(tokens):
    assert type_utils.get_annotated(Fields, tokens[0]) == ["both", "nested_alias", "optional", "union", "deep"]
    assert type_utils.get_annotated(Fields, tokens[1]) == ["both", "nested_alias"]
