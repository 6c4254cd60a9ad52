"""Hostile and careless input: many wildcards, deep trees, deep nesting, odd numbers and escapes.

Each case gives the right result or one of kontext's own errors, never a RecursionError, a bare
ValueError or a hang. No timing: the inputs are sized so that the old, exponential or recursive
behaviour would take hours or overflow the stack, and the glob walk's work is counted.
"""

from __future__ import annotations

import difflib
import re
import tracemalloc
import warnings
from collections.abc import Callable

import kontext._parser
import pytest
from kontext import (
    GlobPath,
    GlobPathError,
    Path,
    PathIndexError,
    PathNotFoundError,
    PathSyntaxError,
    filter_by_path,
    flatten_with_path,
    get_by_path,
    set_by_path,
)

from .strategies import counted_glob_work


def chain(depth: int, leaf: object = 1, key: str = "a") -> dict:
    """``{"a": {"a": ... {"a": leaf}}}``, ``depth`` dicts deep."""
    node: object = leaf
    for _ in range(depth):
        node = {key: node}
    return node  # type: ignore[return-value]


A30X = "a." * 30 + "x"  # The one path to `x` in chain(30, {"x": 1}).

# 12 `**` in a 30-deep chain: trying every route is C(41, 11) (adjacent) or C(30, 12) (separated)
# attempts, some 10**9 and 10**8: hours. Each (node, position) once is 31 x 25 at most.
MANY_DOUBLE_STARS = ["**." * 12 + "x", "**.a." * 12 + "x", "**.*." * 12 + "x", "*.**." * 12 + "x"]


@pytest.mark.parametrize("pattern", MANY_DOUBLE_STARS)
def test_many_double_stars_on_a_deep_chain_match_its_one_path_in_polynomial_work(pattern: str) -> None:
    tree = chain(30, {"x": 1})
    with counted_glob_work() as work:
        assert GlobPath.from_str(pattern).match(tree) == [Path.from_str(A30X[:-2] + ".x")]
    assert work[0] <= 4 * 26 * 32


@pytest.mark.parametrize("pattern", MANY_DOUBLE_STARS)
def test_many_double_stars_on_a_chain_without_the_key_match_nothing_in_polynomial_work(pattern: str) -> None:
    with counted_glob_work() as work:
        assert GlobPath.from_str(pattern).match(chain(30)) == []
    assert work[0] <= 4 * 26 * 32


# In `**.a.` x 12 + `x`, `x` follows a concrete step, so filter / set need it after every 12th-or-deeper
# `a` (Kauldron's rules): a test of its own below.
@pytest.mark.parametrize("pattern", [p for p in MANY_DOUBLE_STARS if not p.startswith("**.a.")])
def test_many_double_stars_filter_and_set_in_polynomial_work(pattern: str) -> None:
    tree = chain(30, {"x": 1})
    with counted_glob_work() as work:
        assert filter_by_path(tree, pattern) == tree
        assert set_by_path(tree, pattern, 0) == [A30X]
    assert get_by_path(tree, A30X) == 0
    assert work[0] <= 2 * 4 * 26 * 32


def test_many_double_stars_then_a_required_step_fail_fast_or_write_everywhere_in_polynomial_work() -> None:
    tree = chain(30, {"x": 1})
    pattern = "**.a." * 12 + "x"
    with counted_glob_work() as work, pytest.raises(PathNotFoundError) as info:
        filter_by_path(tree, pattern)
    assert info.value.path == "a." * 12 + "x"  # The first node with 12 `a` above it has no `x`.
    assert work[0] <= 4 * 26 * 32
    with counted_glob_work() as work:
        written = set_by_path(tree, pattern, 0)
    assert written == ["a." * depth + "x" for depth in range(12, 31)]  # Created where missing.
    assert work[0] <= 2 * 4 * 26 * 32


def test_adjacent_double_stars_match_what_one_does_in_the_same_order() -> None:
    tree = {"x": 0, "a": {"x": 1, "b": [{"x": 2}]}, "c": {"x": 3}}
    one = GlobPath.from_str("**.x").match(tree)
    assert [str(p) for p in one] == ["x", "a.x", "a.b[0].x", "c.x"]
    assert GlobPath.from_str("**.**.**.x").match(tree) == one


def test_a_shared_sub_tree_is_matched_under_each_of_its_paths() -> None:
    shared = {"kernel": 1}
    tree = {"encoder": shared, "decoder": shared}
    assert [str(p) for p in GlobPath.from_str("**.*.**.kernel").match(tree)] == [
        "encoder.kernel",
        "decoder.kernel",
    ]


def test_deeply_nested_brackets_are_a_syntax_error_with_the_text_and_position() -> None:
    text = "a[" + "(" * 5000 + "]"
    with pytest.raises(PathSyntaxError, match="tuples nested at most 100 deep") as info:
        Path.from_str(text)
    assert info.value.path == text
    assert info.value.position == 2 + 100  # The 101st parenthesis.


@pytest.mark.parametrize(
    "read",
    [GlobPath.from_str, lambda text: get_by_path({}, text), lambda text: set_by_path({}, text, 0)],
)
def test_every_function_taking_a_path_string_reports_deep_nesting_as_a_syntax_error(
    read: Callable[[str], object],
) -> None:
    with pytest.raises(PathSyntaxError, match="nested"):
        read("a[" + "(" * 5000 + "1" + ")" * 5000 + "]")


def test_tuple_keys_nested_100_deep_still_parse_and_round_trip() -> None:
    path = Path.from_str("a[" + "(" * 99 + "1," + ")" * 99 + "]")
    assert Path.from_str(str(path)) == path


def test_flatten_with_path_gives_the_leaf_of_a_5000_deep_tree() -> None:
    assert flatten_with_path(chain(5000)) == {".".join(["a"] * 5000): 1}


def test_flatten_with_path_still_reports_a_cycle_deep_down() -> None:
    tree = chain(3000)
    node = tree
    for _ in range(2999):
        node = node["a"]
    node["a"] = tree
    with pytest.raises(ValueError, match="cycle"):
        flatten_with_path(tree)


def test_glob_functions_walk_a_5000_deep_tree() -> None:
    deep_path = "a." * 4999 + "a"
    tree = chain(5000, {"x": 1})
    assert GlobPath.from_str("**.x").match(tree) == [Path.from_str(deep_path + ".x")]
    assert len(GlobPath.from_str("**").match(tree)) == 5002  # Every node, the root and the leaf included.
    everything = flatten_with_path(tree)  # `==` on the trees themselves would recurse 5000 deep.
    assert flatten_with_path(filter_by_path(tree, "**.x")) == everything
    assert flatten_with_path(filter_by_path(tree, "*.**.x")) == everything
    assert set_by_path(tree, "**.x", 2) == [deep_path + ".x"]
    assert get_by_path(tree, deep_path + ".x") == 2


def traced_peak(walk: Callable[[dict], object], depth: int) -> int:
    """The most memory ``walk`` holds at once on ``chain(depth, {"x": 1})`` (the tree itself left out)."""
    tree = chain(depth, {"x": 1})
    tracemalloc.start()
    try:
        walk(tree)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "walk",
    [
        lambda tree: set_by_path(tree, "**.x", 2),
        lambda tree: filter_by_path(tree, "**.x"),
        lambda tree: GlobPath.from_str("**.x").match(tree),
        flatten_with_path,
    ],
    ids=["set_by_path", "filter_by_path", "match", "flatten_with_path"],
)
def test_walking_a_deep_chain_takes_memory_linear_in_its_depth(walk: Callable[[dict], object]) -> None:
    # At most a kilobyte a level, however deep (a few hundred bytes: a task, a link, set entries); a path
    # kept for each level would cost 8 bytes a part, 24 KB a level at 3,000 deep and 48 KB at 6,000.
    for depth in (3000, 6000):
        assert traced_peak(walk, depth) < 1000 * depth


def shared_levels(levels: int) -> dict:
    """``{"x": b, "y": b}``, ``b = {"x": c, "y": c}``, ... ``levels`` deep: 2**levels paths to ``"v"``."""
    node: dict = {"v": 1}
    for _ in range(levels):
        node = {"x": node, "y": node}
    return node


def test_flattening_shared_containers_with_2_to_the_30_paths_stops_at_the_repeat_limit() -> None:
    with pytest.raises(ValueError, match=r"shared containers repeat more than 100,000 leaves \(at 'x\.x"):
        flatten_with_path(shared_levels(30))


@pytest.mark.parametrize(
    "walk",
    [
        lambda tree: GlobPath.from_str("**.v").match(tree),
        lambda tree: set_by_path(tree, "**.v", 2),
        lambda tree: filter_by_path(tree, "*.**.v"),
    ],
    ids=["match", "set_by_path", "filter_by_path"],
)
def test_a_glob_over_shared_containers_with_2_to_the_30_paths_stops_at_the_repeat_limit(
    walk: Callable[[dict], object],
) -> None:
    with pytest.raises(GlobPathError, match=r"\.v': shared containers repeat more than 100,000 children"):
        walk(shared_levels(30))


def test_shared_containers_within_the_repeat_limit_are_walked_under_each_path() -> None:
    tree = shared_levels(10)  # 1,024 paths
    assert len(flatten_with_path(tree)) == 1024
    assert len(GlobPath.from_str("**.v").match(tree)) == 1024
    assert len(set_by_path(tree, "**.v", 2)) == 1024


def test_a_missing_key_deep_in_a_5000_deep_tree_is_explained_after_comparing_few_paths() -> None:
    compared: list[str] = []
    original = difflib.get_close_matches

    def recording(word: str, possibilities: list[str], *args: object, **kwargs: object) -> list[str]:
        compared.extend(possibilities)
        return original(word, possibilities, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(difflib, "get_close_matches", recording)
        with pytest.raises(PathNotFoundError, match=r"step 2001 of 2001 \('b'\)") as info:
            get_by_path(chain(5000), "a." * 2000 + "b")
    assert info.value.failed_part == "b"
    assert len(compared) <= 5  # Not the 5000 paths of the tree, each thousands of characters long.


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        ({f"key{i}": i for i in range(100_000)}, "kez5"),  # A wide node.
        ({f"key{i}": {"a": 1} for i in range(1000)}, "zz." + "a." * 10_000 + "a"),  # A long rest.
    ],
)
def test_a_missing_key_of_a_large_tree_is_explained_after_comparing_bounded_text(
    tree: dict, path: str
) -> None:
    compared: list[str] = []
    original = difflib.get_close_matches

    def recording(word: str, possibilities: list[str], *args: object, **kwargs: object) -> list[str]:
        compared.extend(possibilities)
        return original(word, possibilities, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(difflib, "get_close_matches", recording)
        with pytest.raises(PathNotFoundError):
            get_by_path(tree, path)
    assert sum(len(c) for c in compared) * len(path) <= 20_000_000


def test_double_star_on_a_tree_that_contains_itself_terminates() -> None:
    tree: dict = {"x": 1, "child": {"x": 2}}
    tree["child"]["parent"] = tree
    tree["self"] = tree
    assert [str(p) for p in GlobPath.from_str("**.x").match(tree)] == [
        "x",
        "child.x",
        "child.parent.x",
        "self.x",
    ]
    # Below the root (`*`): one write for each path to an `x`, though two of them are the same `x`.
    assert set_by_path(tree, "**.*.**.x", 0) == ["child.x", "child.parent.x", "self.x"]
    assert tree["x"] == tree["child"]["x"] == 0


@pytest.mark.parametrize("text", ["1" * 5000, "a." + "1" * 5000, "a.+" + "1" * 5000, "a[" + "9" * 5000 + "]"])
def test_an_integer_too_long_for_python_is_a_syntax_error(text: str) -> None:
    with pytest.raises(PathSyntaxError, match="an integer of at most 4300 digits, got one of 5000 digits"):
        GlobPath.from_str(text)


@pytest.mark.parametrize("text", ["a.²", "a[²]", "a[٣]", "a.٣", "a[1²]"])
def test_digits_of_other_scripts_are_no_integers(text: str) -> None:
    with pytest.raises(PathSyntaxError):
        Path.from_str(text)


def test_huge_integers_and_steps_are_ordinary_missing_keys_or_slices() -> None:
    tree = {"a": [1, 2, 3]}
    assert get_by_path(tree, "a[::" + "9" * 100 + "]") == [1]
    assert get_by_path(tree, "a[" + "9" * 100 + "]", default="none") == "none"
    with pytest.raises(PathNotFoundError):
        get_by_path(tree, "a[::0]")
    with pytest.raises(PathIndexError):
        set_by_path(tree, "a[-" + "9" * 100 + "]", 0)


@pytest.mark.parametrize("action", ["ignore", "error"])
@pytest.mark.parametrize(("escape", "shown"), [("\\d", "'\\d'"), ("\\777", "'\\777'"), ("\\é", "'\\é'")])
def test_an_escape_python_only_warns_about_is_a_syntax_error_whatever_the_warning_filters(
    action: str, escape: str, shown: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter(action)  # type: ignore[arg-type]
        with pytest.raises(PathSyntaxError, match=re.escape(f"invalid escape sequence {shown}")) as info:
            Path.from_str(f"a['x{escape}']")
    assert info.value.position == 4


@pytest.mark.parametrize("key", ["it's", 'say "hi"', "back\\slash", "tab\tnew\nline", "\x00", "é\u2028"])
def test_keys_with_quotes_and_escapes_round_trip(key: str) -> None:
    path = Path("a", key)
    assert Path.from_str(str(path)) == path
    assert get_by_path({"a": {key: 1}}, str(path)) == 1


def test_a_long_path_string_is_not_kept_in_the_parse_cache() -> None:
    text = ".".join(f"k{i}" for i in range(1000))
    Path.from_str(text)
    assert text not in kontext._parser._CACHE
