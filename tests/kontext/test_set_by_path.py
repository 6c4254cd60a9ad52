"""``set_by_path`` and ``GlobPath.match``: in-place writes through globs, and their errors."""

from __future__ import annotations

import collections
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kontext import (
    GlobPath,
    GlobPathError,
    Path,
    PathIndexError,
    PathMutationError,
    PathNotFoundError,
    filter_by_path,
    flatten_with_path,
    get_by_path,
    set_by_path,
)

from .strategies import identifiers, ints, texts


def _params() -> dict:
    return {
        "encoder": {"dense": {"kernel": 1, "bias": 2}, "norm": {"scale": 3, "bias": 4}},
        "head": {"kernel": 5, "bias": 6},
        "layers": [{"kernel": 7, "bias": 8}, {"kernel": 9}],
    }


def test_concrete_path_sets_one_value_in_place_and_returns_it() -> None:
    tree = _params()
    assert set_by_path(tree, "head.bias", 0) == ["head.bias"]
    assert tree["head"]["bias"] == 0


def test_concrete_path_may_create_a_new_dict_key() -> None:
    tree = _params()
    assert set_by_path(tree, "head.extra", "new") == ["head.extra"]
    assert tree["head"]["extra"] == "new"


def test_star_matches_exactly_one_level() -> None:
    tree = _params()
    assert set_by_path(tree, "encoder.*.bias", 0) == ["encoder.dense.bias", "encoder.norm.bias"]
    assert tree["head"]["bias"] == 6


def test_double_star_matches_any_depth_including_zero_levels() -> None:
    tree = _params()
    changed = set_by_path(tree, "**.bias", 0)
    assert changed == ["encoder.dense.bias", "encoder.norm.bias", "head.bias", "layers[0].bias"]
    assert set_by_path({"bias": 1}, "**.bias", 0) == ["bias"]


def test_star_writes_the_last_key_in_every_child_creating_it_where_missing() -> None:
    tree = _params()
    assert set_by_path(tree, "layers.*.bias", 0) == ["layers[0].bias", "layers[1].bias"]
    assert tree["layers"][1] == {"kernel": 9, "bias": 0}


def test_double_star_writes_only_the_keys_that_exist() -> None:
    tree = _params()
    assert set_by_path(tree, "layers.**.bias", 0) == ["layers[0].bias"]
    assert tree["layers"][1] == {"kernel": 9}


def test_star_over_a_leaf_child_is_refused_before_anything_is_written() -> None:
    tree = {"a": {"b": 1}, "a2": 5}
    with pytest.raises(
        PathMutationError, match=r"^Cannot mutate leaf int at 'a2': setting 'a2.b' needs a container"
    ):
        set_by_path(tree, "*.b", 0)
    assert tree == {"a": {"b": 1}, "a2": 5}


def test_step_after_a_star_must_exist_in_every_child() -> None:
    tree = {"layers": [{"dense": {"w": 1}}, {"norm": {"w": 2}}]}
    with pytest.raises(PathNotFoundError) as info:
        set_by_path(tree, "layers.*.dense.w", 0)
    assert info.value.path == "layers[1].dense.w"
    assert tree["layers"][0]["dense"]["w"] == 1


def test_after_a_double_star_only_the_first_concrete_step_is_optional() -> None:
    tree = {"a": {"b": {"c": 1}}, "b": {"x": 2}, "d": 3}
    # `c` follows the concrete `b`: it is written in every `b`, created where missing.
    assert set_by_path(tree, "**.b.c", 0) == ["b.c", "a.b.c"]
    assert tree == {"a": {"b": {"c": 0}}, "b": {"x": 2, "c": 0}, "d": 3}


def test_glob_that_matches_nothing_changes_nothing() -> None:
    tree = _params()
    assert set_by_path(tree, "**.missing", 0) == []
    assert tree == _params()


def test_list_items_are_set_by_index_including_negative() -> None:
    tree = {"xs": [1, 2, 3]}
    assert set_by_path(tree, "xs[-1]", 0) == ["xs[-1]"]
    assert tree["xs"] == [1, 2, 0]


def test_index_out_of_range_is_a_clear_error() -> None:
    tree = {"xs": [1, 2, 3]}
    with pytest.raises(PathIndexError, match=r"index 5 is out of range for the list of length 3") as info:
        set_by_path(tree, "xs[5]", 0)
    assert isinstance(info.value, IndexError)
    assert isinstance(info.value, KeyError)


def test_wildcard_at_the_end_is_refused() -> None:
    with pytest.raises(
        GlobPathError, match=r"^Wildcards cannot be located at the end of a path to set: 'encoder.\*'"
    ):
        set_by_path(_params(), "encoder.*", 0)
    with pytest.raises(GlobPathError):
        set_by_path(_params(), "**", 0)


def test_setting_inside_a_leaf_is_refused() -> None:
    with pytest.raises(
        PathMutationError, match=r"Cannot mutate leaf int at 'head.kernel': setting 'head.kernel.value'"
    ):
        set_by_path(_params(), "head.kernel.value", 0)


def test_setting_inside_a_tuple_is_refused_as_immutable() -> None:
    with pytest.raises(PathMutationError, match="immutable"):
        set_by_path({"t": (1, 2)}, "t[0]", 0)


def test_setting_a_field_of_a_frozen_dataclass_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        x: int

    with pytest.raises(PathMutationError, match="frozen"):
        set_by_path({"f": Frozen(1)}, "f.x", 2)


def test_dataclass_and_object_attributes_are_set() -> None:
    @dataclasses.dataclass
    class Layer:
        kernel: int
        bias: int

    tree = {"layers": [Layer(1, 2), Layer(3, 4)]}
    assert set_by_path(tree, "layers.*.bias", 0) == ["layers[0].bias", "layers[1].bias"]
    assert tree["layers"] == [Layer(1, 0), Layer(3, 0)]


def test_unknown_attribute_of_an_object_is_not_created() -> None:
    @dataclasses.dataclass
    class Layer:
        kernel: int

    with pytest.raises(PathNotFoundError, match="kernal"):
        set_by_path({"l": Layer(1)}, "l.kernal", 0)


def test_missing_intermediate_step_is_a_path_not_found_error_with_suggestions() -> None:
    with pytest.raises(PathNotFoundError) as info:
        set_by_path(_params(), "encoder.dense_.kernel", 0)
    assert "encoder.dense.kernel" in info.value.suggestions


def test_match_inside_a_replaced_subtree_is_not_reported() -> None:
    tree = {"b": {"b": 1}}
    assert set_by_path(tree, "**.b", 0) == ["b"]
    assert tree == {"b": 0}


def test_empty_path_is_refused() -> None:
    with pytest.raises(PathMutationError, match="empty path"):
        set_by_path({}, "", 0)


def test_mapping_types_other_than_dict_are_written_through_setitem() -> None:
    tree = collections.OrderedDict(a=collections.OrderedDict(b=1))
    assert set_by_path(tree, "a.b", 2) == ["a.b"]
    assert tree["a"]["b"] == 2


def test_set_in_is_the_method_form() -> None:
    tree = _params()
    assert GlobPath.from_str("**.kernel").set_in(tree, 0) == [
        "encoder.dense.kernel",
        "head.kernel",
        "layers[0].kernel",
        "layers[1].kernel",
    ]
    assert Path.from_str("head.bias").set_in(tree, 1) == ["head.bias"]


def test_glob_match_lists_concrete_paths() -> None:
    assert GlobPath.from_str("layers.*.kernel").match(_params()) == [
        Path.from_str("layers[0].kernel"),
        Path.from_str("layers[1].kernel"),
    ]


def test_double_star_terminates_on_cyclic_trees() -> None:
    tree: dict = {"a": {"x": 1}}
    tree["a"]["self"] = tree
    assert set_by_path(tree, "**.x", 0) == ["a.x"]


mutable_trees = st.recursive(
    st.integers(),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3),
        st.dictionaries(st.one_of(identifiers, texts, ints), children, min_size=1, max_size=3),
    ),
    max_leaves=15,
)


@given(mutable_trees)
def test_setting_each_flattened_path_writes_exactly_that_leaf(tree: object) -> None:
    for path in flatten_with_path(tree):
        if not path:
            continue
        marker = object()
        assert set_by_path(tree, path, marker) == [path]
        assert get_by_path(tree, path) is marker


@given(mutable_trees.filter(lambda tree: isinstance(tree, (dict, list))))
def test_double_star_filter_keeps_the_whole_tree(tree: object) -> None:
    assert filter_by_path(tree, "**") is tree
    assert flatten_with_path(filter_by_path(tree, "*")) == flatten_with_path(tree)


def test_star_on_a_leaf_before_any_other_wildcard_is_an_error() -> None:
    with pytest.raises(
        PathNotFoundError, match=r"Cannot expand '\*' in 'head.kernel.\*.x' at 'head.kernel': int is a leaf"
    ):
        set_by_path(_params(), "head.kernel.*.x", 0)


def test_overlapping_wildcards_report_each_path_once() -> None:
    tree = {"a": {"b": {"c": 1}}}
    assert set_by_path(tree, "**.*.c", 0) == ["a.b.c"]
    assert set_by_path(tree, "**.**.c", 2) == ["a.b.c"]


class ReadOnlyDict(dict):
    """A mapping that refuses writes the way flax's FrozenDict does."""

    def __setitem__(self, key: object, value: object) -> None:
        raise ValueError(f"{type(self).__name__} is immutable.")


def test_mapping_that_refuses_the_write_is_a_mutation_error_naming_the_path() -> None:
    tree = {"params": ReadOnlyDict(bias=1)}
    with pytest.raises(PathMutationError, match=r"Cannot set 'params.bias'.*ReadOnlyDict is immutable"):
        set_by_path(tree, "params.bias", 0)
    with pytest.raises(PathMutationError, match=r"Cannot set 'params.bias'"):
        set_by_path(tree, "**.bias", 0)


def test_unhashable_dict_key_is_a_mutation_error_naming_the_path() -> None:
    with pytest.raises(PathMutationError, match=r"Cannot set 'a\[1:2\]'.*hashable"):
        set_by_path({"a": {}}, "a[1:2]", 0)


class Optimizer:  # A plain object: a leaf for globs, as for flatten_with_path.
    def __init__(self) -> None:
        self.lr = 0.1


def test_double_star_writes_only_where_glob_match_finds_the_path() -> None:
    tree = {"opt": Optimizer(), "sched": {"lr": 0.2}}
    assert [str(p) for p in GlobPath.from_str("**.lr").match(tree)] == ["sched.lr"]
    assert set_by_path(tree, "**.lr", 0.0) == ["sched.lr"]
    assert tree["opt"].lr == 0.1
    assert set_by_path(tree, "opt.lr", 0.0) == ["opt.lr"]


def test_step_that_must_exist_after_a_star_reaches_attributes_of_plain_objects() -> None:
    tree = {"opt": Optimizer(), "sched": {"lr": 0.2}}
    assert filter_by_path(tree, "*.lr") == {"opt": {"lr": 0.1}, "sched": {"lr": 0.2}}
    assert set_by_path(tree, "*.lr", 0.0) == ["opt.lr", "sched.lr"]
    assert tree["opt"].lr == 0.0
    assert [str(p) for p in GlobPath.from_str("*.lr").match(tree)] == ["sched.lr"]  # match: containers only


def test_double_star_in_the_middle_matches_zero_or_more_levels() -> None:
    tree = {"a": {"b": 1, "x": {"b": 2, "y": {"b": 3}}}, "b": 0}
    assert [str(p) for p in GlobPath.from_str("a.**.b").match(tree)] == ["a.b", "a.x.b", "a.x.y.b"]
    assert set_by_path(tree, "a.**.y.b", 9) == ["a.x.y.b"]
    assert tree["b"] == 0
