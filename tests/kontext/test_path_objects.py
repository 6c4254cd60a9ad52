"""``Path`` / ``GlobPath`` as values: equality, hashing, ordering, sequence behaviour, construction."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from kontext import GlobPath, GlobPathError, Path, Wildcard

from .strategies import path_parts


def test_equal_paths_written_differently_are_equal_and_hash_alike() -> None:
    a, b = Path.from_str("a.0['b']"), Path.from_str("a[0].b")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


def test_paths_work_as_dict_keys() -> None:
    table = {Path.from_str("batch.image"): 1}
    assert table[Path("batch", "image")] == 1


def test_int_and_bool_keys_give_different_paths() -> None:
    assert Path("a", 1) != Path("a", True)
    assert Path("a", 1) != Path("a", 1.0)


def test_path_is_not_equal_to_its_string() -> None:
    assert Path.from_str("a.b") != "a.b"


def test_path_and_glob_path_with_same_parts_are_different_types() -> None:
    assert Path("a", "b") != GlobPath("a", "b")


def test_paths_sort_names_before_indices_and_indices_numerically() -> None:
    paths = [Path.from_str(s) for s in ["a[10]", "a[2]", "a.b", "a", "a[-1]", "a['x y']"]]
    assert [str(p) for p in sorted(paths)] == ["a", "a.b", "a['x y']", "a[-1]", "a[2]", "a[10]"]


@given(path_parts, path_parts)
def test_ordering_is_consistent_with_equality(a: tuple, b: tuple) -> None:
    pa, pb = Path(*a), Path(*b)
    assert (pa == pb) == (not pa < pb and not pb < pa)
    assert (pa <= pb) == (pa < pb or pa == pb)


def test_ordering_against_another_type_raises() -> None:
    with pytest.raises(TypeError, match="Cannot order"):
        _ = Path("a") < GlobPath("a")


def test_path_behaves_as_a_sequence_of_parts() -> None:
    path = Path.from_str("a[0].b")
    assert len(path) == 3
    assert list(path) == ["a", 0, "b"]
    assert path[1] == 0
    assert path[-1] == "b"
    assert path[:2] == Path("a", 0)
    assert "b" in path


def test_relative_to_strips_a_prefix() -> None:
    assert Path.from_str("a.b[0].c").relative_to(Path.from_str("a.b")) == Path.from_str("[0].c")


def test_relative_to_rejects_a_path_that_is_not_a_prefix() -> None:
    with pytest.raises(ValueError, match=r"^a\.b is not a subpath of x\.$"):
        Path.from_str("a.b").relative_to(Path.from_str("x"))


def test_repr_is_the_canonical_string_so_it_parses_back() -> None:
    assert repr(Path.from_str("a.0")) == "a[0]"
    assert repr(GlobPath.from_str("**.w")) == "**.w"
    path = Path(None, "x", 1j, slice(None, 2))
    assert Path.from_str(repr(path)) == path


def test_paths_pickle_round_trip() -> None:
    path = GlobPath.from_str("a.**[0][..., :3]")
    assert pickle.loads(pickle.dumps(path)) == path
    assert pickle.loads(pickle.dumps(Wildcard.STAR)) is Wildcard.STAR


def test_path_rejects_wildcards() -> None:
    with pytest.raises(GlobPathError, match="GlobPath"):
        Path.from_str("a.*.b")
    with pytest.raises(GlobPathError):
        Path("a", Wildcard.DOUBLE_STAR)


def test_constructor_rejects_unsupported_parts() -> None:
    with pytest.raises(TypeError, match="Invalid path part"):
        Path("a", object())
    with pytest.raises(TypeError, match="finite"):
        Path("a", float("nan"))
    with pytest.raises(TypeError, match="slices only at the top level"):
        Path("a", (1, (slice(1),)))
    with pytest.raises(TypeError, match="slice bounds"):
        Path("a", slice("x"))


def test_constructor_normalises_int_and_str_subclasses() -> None:
    class Index(int):
        pass

    class Name(str):
        pass

    path = Path(Name("a"), Index(3))
    assert [type(p) for p in path.parts] == [str, int]
    assert str(path) == "a[3]"


def test_first_non_glob_parent_stops_at_the_first_wildcard() -> None:
    assert GlobPath.from_str("a.b.*.c.**").first_non_glob_parent == Path.from_str("a.b")


def test_wildcards_are_singletons_printed_as_their_symbol() -> None:
    assert Wildcard("*") is Wildcard.STAR
    assert str(Wildcard.DOUBLE_STAR) == "**"
    with pytest.raises(ValueError, match="Unknown wildcard"):
        Wildcard("***")


def test_from_jax_path_converts_jax_key_entries() -> None:
    jax = pytest.importorskip("jax")
    tree = {"a": [1, {"b": 2}]}
    (first, second), _ = jax.tree_util.tree_flatten_with_path(tree)
    assert Path.from_jax_path(first[0]) == Path.from_str("a[0]")
    assert Path.from_jax_path(second[0]) == Path.from_str("a[1].b")
