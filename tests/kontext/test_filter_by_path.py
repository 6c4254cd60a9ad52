"""``filter_by_path``: the matching sub-tree, with the containers leading to the matches."""

from __future__ import annotations

import dataclasses

import pytest
from kontext import PathNotFoundError, filter_by_path

TREE = {
    "a": {"b": {"c": 1, "c1": 1}, "b2": {"c": {"d": 1}, "c1": {"d": 1}}},
    "c": 5,
    "xs": [{"c": 1}, {"d": 2}, {"c": 3}],
}


def test_double_star_keeps_every_match_with_its_ancestors() -> None:
    assert filter_by_path(TREE, "**.c") == {
        "a": {"b": {"c": 1}, "b2": {"c": {"d": 1}}},
        "c": 5,
        "xs": [{"c": 1}, {"c": 3}],
    }


def test_star_keeps_one_level() -> None:
    assert filter_by_path(TREE, "a.*.c1") == {"a": {"b": {"c1": 1}, "b2": {"c1": {"d": 1}}}}


def test_wildcard_may_end_a_filter() -> None:
    assert filter_by_path(TREE, "a.b.*") == {"a": {"b": {"c": 1, "c1": 1}}}


def test_concrete_path_keeps_a_single_branch() -> None:
    assert filter_by_path(TREE, "xs[2].c") == {"xs": [{"c": 3}]}


def test_non_matching_list_items_are_dropped_and_order_is_kept() -> None:
    assert filter_by_path({"xs": [1, 2, 3]}, "xs[2]") == {"xs": [3]}
    assert filter_by_path({"xs": [1, 2, 3]}, "xs[-1]") == {"xs": [3]}


def test_tuples_stay_tuples() -> None:
    assert filter_by_path({"t": ({"w": 1, "b": 2}, {"w": 3})}, "t.*.w") == {"t": ({"w": 1}, {"w": 3})}


def test_dataclasses_become_dicts_of_the_matched_fields() -> None:
    @dataclasses.dataclass
    class Dense:
        kernel: int
        bias: int

    assert filter_by_path({"d": Dense(1, 2)}, "**.kernel") == {"d": {"kernel": 1}}


def test_the_input_is_not_modified() -> None:
    tree = {"a": {"b": 1, "c": 2}}
    filter_by_path(tree, "a.b")
    assert tree == {"a": {"b": 1, "c": 2}}


def test_nothing_matched_gives_an_empty_container() -> None:
    assert filter_by_path(TREE, "**.zzz") == {}


def test_missing_concrete_step_raises_with_suggestions() -> None:
    with pytest.raises(PathNotFoundError) as info:
        filter_by_path(TREE, "a.bb.*")
    assert info.value.failed_part == "bb"
    assert "a.b" in info.value.suggestions[0]


def test_double_star_alone_keeps_everything() -> None:
    assert filter_by_path(TREE, "**") is TREE


def test_step_after_a_star_must_exist_in_every_child() -> None:
    with pytest.raises(PathNotFoundError, match="Available keys: d") as info:
        filter_by_path(TREE, "xs.*.c")
    assert info.value.path == "xs[1].c"


def test_after_a_double_star_the_first_concrete_step_is_optional_the_next_ones_are_not() -> None:
    assert filter_by_path({"a": {"b": {"c": 1}}, "d": 3}, "**.b.c") == {"a": {"b": {"c": 1}}}
    with pytest.raises(PathNotFoundError, match="Available keys: c1") as info:
        filter_by_path({"a": {"b": {"c": 1}}, "b": {"c1": 2}}, "**.b.c")
    assert info.value.path == "b.c"


def test_wildcards_after_a_double_star_stay_optional_up_to_the_first_concrete_step() -> None:
    tree = {"a": {"b": {"c": 1}}, "d": 3, "e": {"f": 4}}
    assert filter_by_path(tree, "**.*.c") == {"a": {"b": {"c": 1}}}


def test_star_that_meets_a_leaf_after_a_concrete_step_is_an_error() -> None:
    with pytest.raises(
        PathNotFoundError, match=r"Cannot expand '\*' in 'a.b.c.\*' at 'a.b.c': int is a leaf"
    ):
        filter_by_path(TREE, "a.*.*.*")


def test_double_star_in_the_middle_keeps_matches_at_every_depth_below() -> None:
    assert filter_by_path(TREE, "a.**.d") == {"a": {"b2": {"c": {"d": 1}, "c1": {"d": 1}}}}
