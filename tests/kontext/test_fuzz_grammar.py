"""Fuzzing the path grammar and the glob matcher.

Any text given where kontext takes a path string gives a result or one of kontext's own errors, after
an amount of work bounded by a polynomial in the sizes of the path and of the tree; and the matcher,
which does each (path, pattern position) once, finds what a matcher trying every route finds, in the
same order.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from kontext import (
    GlobPath,
    GlobPathError,
    Path,
    PathMutationError,
    PathNotFoundError,
    PathSyntaxError,
    Wildcard,
    filter_by_path,
    get_by_path,
    set_by_path,
)

from .strategies import counted_glob_work, deep_chains, path_texts, small_trees, wildcard_heavy_parts

KONTEXT_ERRORS = (PathSyntaxError, GlobPathError, PathNotFoundError, PathMutationError)


def count_nodes(tree: object) -> int:
    if isinstance(tree, dict):
        return 1 + sum(count_nodes(child) for child in tree.values())
    if isinstance(tree, (list, tuple)):
        return 1 + sum(count_nodes(child) for child in tree)
    return 1


def work_bound(n_parts: int, tree: object) -> int:
    """Each (node, pattern position) opened once and each of its children looked at once, with slack."""
    return 4 * (n_parts + 1) * count_nodes(tree)


@settings(max_examples=400)
@given(path_texts)
def test_any_text_parses_or_raises_a_syntax_error(text: str) -> None:
    try:
        glob = GlobPath.from_str(text)
    except PathSyntaxError as error:
        assert error.path == text
        assert 0 <= error.position <= len(text)
        return
    assert GlobPath.from_str(str(glob)) == glob
    if any(type(part) is Wildcard for part in glob):
        with pytest.raises(GlobPathError):
            Path.from_str(text)
    else:
        assert Path.from_str(text).parts == glob.parts


@settings(max_examples=300)
@given(path_texts, small_trees | deep_chains)
def test_functions_taking_a_path_string_give_a_result_or_a_kontext_error_in_bounded_work(
    text: str, tree: object
) -> None:
    try:
        n_parts = len(GlobPath.from_str(text))
    except PathSyntaxError:
        n_parts = 0
    calls = [
        lambda: get_by_path(tree, text),
        lambda: get_by_path(tree, text, default=None),
        lambda: filter_by_path(tree, text),
        lambda: set_by_path(copy.deepcopy(tree), text, 0),
    ]
    for call in calls:
        with counted_glob_work() as work:
            try:
                call()
            except KONTEXT_ERRORS:
                pass
        assert work[0] <= work_bound(n_parts, tree)


def reference_match(tree: object, parts: tuple[object, ...]) -> list[tuple[object, ...]] | None:
    """What the glob matches, trying every route (exponential, fine on tiny trees); ``None``: an error.

    A concrete step before the first wildcard must exist and a first ``*`` needs a container; after
    a wildcard, whatever does not fit is skipped. Zero levels of ``**`` come before one more; the first
    of equal paths is kept.
    """
    first = next((i for i, p in enumerate(parts) if type(p) is Wildcard), len(parts))
    node = tree
    for part in parts[:first]:
        node = _child(node, part)
        if node is _MISSING:
            return None
    if first < len(parts) and parts[first] is Wildcard.STAR and _children(node) is None:
        return None
    found: list[tuple[object, ...]] = []
    _routes(node, parts[first:], parts[:first], found)
    return list(dict.fromkeys(found))


_MISSING = object()


def _children(node: object) -> list[tuple[object, object]] | None:
    if isinstance(node, dict):
        return list(node.items())
    if isinstance(node, (list, tuple)):
        return list(enumerate(node))
    return None


def _child(node: object, part: object) -> object:
    if isinstance(node, dict):
        return node.get(part, _MISSING)
    if isinstance(node, (list, tuple)) and type(part) is int and -len(node) <= part < len(node):
        return node[part]
    return _MISSING


def _routes(node: object, rest: tuple[object, ...], prefix: tuple[object, ...], found: list) -> None:
    if not rest:
        found.append(prefix)
        return
    head, tail = rest[0], rest[1:]
    if head is Wildcard.DOUBLE_STAR:
        _routes(node, tail, prefix, found)
    if type(head) is Wildcard:
        for key, child in _children(node) or ():
            _routes(child, rest if head is Wildcard.DOUBLE_STAR else tail, (*prefix, key), found)
        return
    child = _child(node, head)
    if child is not _MISSING:
        _routes(child, tail, (*prefix, head), found)


@settings(max_examples=400)
@given(small_trees | deep_chains, wildcard_heavy_parts)
def test_glob_match_finds_the_paths_of_every_route_in_the_same_order_once_each(
    tree: object, parts: tuple[object, ...]
) -> None:
    expected = reference_match(tree, parts)
    with counted_glob_work() as work:
        try:
            found = GlobPath(*parts).match(tree)
        except PathNotFoundError:
            found = None
    assert (found if found is None else [path.parts for path in found]) == expected
    assert work[0] <= work_bound(len(parts), tree)


def reference_filter(tree: object, parts: tuple[object, ...]) -> object:
    """``filter_by_path`` under Kauldron's rules, trying every route; ``_FAILED`` where it must raise.

    After a ``**``, the steps up to and including the first concrete one are taken only where they fit;
    any other step must fit wherever it is reached (a key that exists, a ``*`` on a container).
    """
    optional = []
    after = False
    for part in parts:
        optional.append(after or part is Wildcard.DOUBLE_STAR)
        if part is Wildcard.DOUBLE_STAR:
            after = True
        elif type(part) is not Wildcard:
            after = False
    found: list[tuple[object, ...]] = []
    try:
        _strict_routes(tree, parts, 0, optional, (), found)
    except _Refused:
        return _FAILED
    return _keep(tree, list(dict.fromkeys(found)))


class _Refused(Exception):
    pass


_FAILED = object()


def _strict_routes(
    node: object, parts: tuple[object, ...], i: int, optional: list[bool], prefix: tuple, found: list
) -> None:
    if i == len(parts):
        found.append(prefix)
        return
    head = parts[i]
    if head is Wildcard.DOUBLE_STAR:
        _strict_routes(node, parts, i + 1, optional, prefix, found)
        for key, child in _children(node) or ():
            _strict_routes(child, parts, i, optional, (*prefix, key), found)
        return
    if head is Wildcard.STAR:
        children = _children(node)
        if children is None and not optional[i]:
            raise _Refused
        for key, child in children or ():
            _strict_routes(child, parts, i + 1, optional, (*prefix, key), found)
        return
    child = _child(node, head)
    if child is _MISSING:
        if not optional[i]:
            raise _Refused
        return
    _strict_routes(child, parts, i + 1, optional, (*prefix, head), found)


def _keep(node: object, paths: list[tuple[object, ...]]) -> object:
    """The containers of ``node`` along ``paths``; list items in index order (keyed by the part written)."""
    if () in paths:
        return node
    groups: dict[object, list[tuple[object, ...]]] = {}
    for path in paths:
        groups.setdefault((type(path[0]), path[0]), []).append(path[1:])
    kept = [(part, _keep(_child(node, part), rest)) for (_, part), rest in groups.items()]
    if isinstance(node, dict):
        return dict(kept)
    if isinstance(node, (list, tuple)):
        values = [value for _, value in sorted(kept, key=lambda kv: kv[0] % len(node))]
        return values if isinstance(node, list) else tuple(values)
    return dict(kept)


@settings(max_examples=400)
@given(small_trees | deep_chains, wildcard_heavy_parts)
def test_filter_follows_kauldron_rules_like_a_reference_trying_every_route(
    tree: object, parts: tuple[object, ...]
) -> None:
    expected = reference_filter(tree, parts)
    try:
        found = filter_by_path(tree, GlobPath(*parts))
    except PathNotFoundError:
        found = _FAILED
    assert found == expected
