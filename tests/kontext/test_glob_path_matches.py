"""``GlobPath.matches``: whether a glob matches one concrete path, with no tree to walk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kontext import GlobPath, GlobPathError, Path, PathNotFoundError, Wildcard

from .strategies import deep_chains, small_trees


def test_double_star_takes_any_number_of_parts_none_included() -> None:
    glob = GlobPath.from_str("params.**.kernel")
    assert glob.matches("params.kernel")
    assert glob.matches("params.dense.kernel")
    assert glob.matches("params.encoder.layers[3].kernel")
    assert not glob.matches("params.dense.kernel.x")
    assert not glob.matches("opt.dense.kernel")


def test_star_takes_exactly_one_part() -> None:
    glob = GlobPath.from_str("*.bias")
    assert glob.matches("dense.bias")
    assert GlobPath.from_str("layers.*.bias").matches("layers[0].bias")
    assert glob.matches(("layers", "bias"))
    assert not glob.matches("bias")
    assert not glob.matches("a.b.bias")


def test_a_trailing_double_star_matches_the_node_and_everything_below() -> None:
    glob = GlobPath.from_str("encoder.**")
    assert glob.matches("encoder")
    assert glob.matches("encoder.layers[0].kernel")
    assert not glob.matches("decoder.kernel")


def test_indices_are_parts_like_any_other() -> None:
    assert GlobPath.from_str("layers[0].*").matches("layers.0.kernel")  # `[0]` and `.0` are one index
    assert not GlobPath.from_str("layers[0].*").matches("layers['0'].kernel")  # a str key is not an index
    assert GlobPath.from_str("layers.*.kernel").matches("layers[7].kernel")


def test_an_index_from_the_end_matches_only_itself() -> None:
    # Without a tree, nothing says which index is the last one.
    assert GlobPath.from_str("layers[-1]").matches("layers[-1]")
    assert not GlobPath.from_str("layers[-1]").matches("layers[2]")


def test_the_path_may_be_a_string_a_path_or_a_tuple_of_parts() -> None:
    glob = GlobPath.from_str("a.*.c")
    assert glob.matches("a.b.c")
    assert glob.matches(Path("a", "b", "c"))
    assert glob.matches(("a", 0, "c"))
    assert GlobPath.from_str("a['x.y']").matches(("a", "x.y"))  # one key with a dot in it


def test_the_empty_path_is_matched_by_double_stars_only() -> None:
    assert GlobPath.from_str("**").matches(())
    assert GlobPath.from_str("**.**").matches(Path())
    assert not GlobPath.from_str("*").matches(())


def test_a_glob_given_as_the_path_is_refused() -> None:
    with pytest.raises(GlobPathError, match=r"GlobPath.matches takes a concrete path, got the glob 'a\.\*'"):
        GlobPath.from_str("a.**").matches("a.*")


# ------------------------------------------------------------------------------ properties


def _node_paths(tree: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every node's path, the root's included."""
    paths = [prefix]
    if isinstance(tree, dict):
        items = list(tree.items())
    elif isinstance(tree, (list, tuple)):
        items = list(enumerate(tree))
    else:
        items = []
    for key, child in items:
        paths.extend(_node_paths(child, (*prefix, key)))
    return paths


# Globs over the trees' keys, without indices from the end (which only a tree can resolve).
_globs = st.lists(
    st.sampled_from([Wildcard.STAR, Wildcard.DOUBLE_STAR, Wildcard.DOUBLE_STAR, "a", "x", 0, 1]), max_size=8
).map(lambda parts: GlobPath(*parts))


@settings(max_examples=400)
@given(small_trees | deep_chains, _globs)
def test_a_globs_matches_in_a_tree_are_the_nodes_whose_paths_it_matches(tree: object, glob: GlobPath) -> None:
    expected = [path for path in _node_paths(tree) if glob.matches(path)]
    try:
        found = [path.parts for path in glob.match(tree)]
    except PathNotFoundError:  # The part before the first wildcard is missing: no node can match.
        found = []
    assert set(found) == set(expected)  # (in the order of the walk: `**.*` gives `a`, `b`, then `a.a`)
    assert len(found) == len(set(found))


def _reference(pattern: tuple[object, ...], parts: tuple[object, ...]) -> bool:
    """Tries every number of parts for each ``**``."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head is Wildcard.DOUBLE_STAR:
        return any(_reference(rest, parts[k:]) for k in range(len(parts) + 1))
    if not parts:
        return False
    return (head is Wildcard.STAR or head == parts[0]) and _reference(rest, parts[1:])


_parts = st.lists(st.sampled_from(["a", "b", 0]), max_size=8).map(tuple)


@settings(max_examples=400)
@given(
    st.lists(st.sampled_from([Wildcard.STAR, Wildcard.DOUBLE_STAR, "a", "b", 0]), max_size=8).map(tuple), _parts
)
def test_matches_agrees_with_trying_every_split(pattern: tuple[object, ...], parts: tuple[object, ...]) -> None:
    assert GlobPath(*pattern).matches(parts) == _reference(pattern, parts)
