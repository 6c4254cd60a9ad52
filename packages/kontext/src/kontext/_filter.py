"""``filter_by_path``: the sub-tree of the nodes a glob matches."""

from __future__ import annotations

from ._glob import match_nodes
from ._lookup import step
from ._parser import format_parts
from ._paths import to_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._paths import Context

_WHOLE = object()  # Marks a matched node: kept entirely.


def filter_by_path(obj: Context, path: Any) -> Context:
    """Keeps only what ``path`` (a glob) matches, with the containers leading to it.

    Usage: ``filter_by_path({"a": {"w": 1, "b": 2}, "c": 3}, "*.w") == {"a": {"w": 1}}``.

    Dicts keep their type and key order; lists and tuples keep their matched items in order (the others
    are dropped, so indices may shift); any other container (named tuple, dataclass, object) becomes a
    ``dict`` of the matched fields. A wildcard may end the path (``"a.*"`` keeps all of ``a``).

    Raises:
      PathNotFoundError: a step with no ``**`` before it does not exist.
    """
    parts = to_parts(path, glob_ok=True)
    trie: dict[Any, Any] = {}  # (type, part) -> (part, sub-trie or _WHOLE): the kept paths.
    for concrete, _ in match_nodes(obj, parts):
        if not concrete:
            return obj
        node = trie
        for part in concrete[:-1]:
            key = _trie_key(part)
            entry = node.get(key)
            if entry is None:
                entry = node[key] = (part, {})
            elif entry[1] is _WHOLE:
                break
            node = entry[1]
        else:
            node[_trie_key(concrete[-1])] = (concrete[-1], _WHOLE)
    return _rebuild(obj, trie)


def _trie_key(part: object) -> object:
    """Keys of one node, told apart as their path parts are (``1``, ``True`` and ``1.0`` are three)."""
    try:
        hash(part)
    except TypeError:  # An unhashable part (a slice): equal ones are written alike.
        return (slice, format_parts((part,)))
    return (type(part), part)


def _rebuild(root: Any, trie: dict[Any, Any]) -> Any:
    """The containers of ``root`` along ``trie``, with only what it keeps; iterative (any depth)."""
    # A frame: (the part leading to node, node, its trie entries still to do, what is kept so far).
    stack: list[tuple[Any, Any, Any, list[tuple[Any, Any]]]] = [(None, root, iter(trie.values()), [])]
    while True:
        _, node, entries, kept = stack[-1]
        for part, sub in entries:
            child = step(node, part)
            if sub is _WHOLE:
                kept.append((part, child))
            else:
                stack.append((part, child, iter(sub.values()), []))
                break
        else:
            part = stack.pop()[0]
            value = _container(node, kept)
            if not stack:
                return value
            stack[-1][3].append((part, value))


def _container(node: Any, kept: list[tuple[Any, Any]]) -> Any:
    """A container like ``node`` holding ``kept`` (``(part, value)`` pairs of its children)."""
    kind = type(node)
    if kind is dict:
        return dict(kept)
    if isinstance(node, list) or (kind is tuple):
        n = len(node)
        ordered = sorted(kept, key=lambda kv: kv[0] % n if type(kv[0]) is int and n else 0)
        values = [value for _, value in ordered]
        return values if isinstance(node, list) else tuple(values)
    if hasattr(kind, "keys") and hasattr(kind, "__getitem__"):
        try:
            return kind(dict(kept))
        except Exception:  # A mapping type that cannot be built from a dict.
            return dict(kept)
    return {_hashable(part): value for part, value in kept}


def _hashable(part: object) -> object:
    try:
        hash(part)
    except TypeError:
        return format_parts((part,))
    return part
