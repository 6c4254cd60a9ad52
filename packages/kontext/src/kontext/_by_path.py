"""``get_by_path``, ``set_by_path``, ``filter_by_path``: reading, writing and selecting in a tree by path.

Usage: ``set_by_path(tree, "**.bias", 0.0)``, then ``get_by_path(tree, "dense.bias") == 0.0``.
"""

from __future__ import annotations

from ._errors import GlobPathError
from ._glob import match_nodes, set_parts
from ._lookup import lookup, not_found, step
from ._parser import Wildcard, format_parts, parse_parts
from ._paths import to_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._paths import Context


def get_by_path(obj: Context, path: Any, default: Any = ...) -> Any:
    """The value at ``path`` in ``obj``; at each step item access is tried first, then attribute access.

    Usage:
      >>> get_by_path({"a": [{"b": 1}]}, "a[0].b")
      1
      >>> get_by_path({"a": [{"b": 1}]}, "a[0].c", default=None) is None
      True

    Args:
      obj: the tree: dicts, lists, tuples, named tuples, dataclasses, flax structs, ConfigDicts, objects.
      path: a path string, a ``Path``, a tuple of parts, a JAX key path or a path builder; ``None``
        returns ``None`` (or ``default``), for optional keys.
      default: returned when the path does not exist; without it a ``PathNotFoundError`` is raised.

    Raises:
      PathNotFoundError: (a ``KeyError``) naming the path, the failing step, what was available there
        and the closest existing paths.
    """
    if path is None:
        return None if default is ... else default
    parts = parse_parts(path) if type(path) is str else to_parts(path)
    value, failed = lookup(obj, parts)
    if failed < 0:
        return value
    if type(parts[failed]) is Wildcard:  # A mistake even with a default: it could never be found.
        raise GlobPathError(
            f"get_by_path got the glob {format_parts(parts)!r}; use kontext.filter_by_path to select by wildcard."
        )
    if default is not ...:
        return default
    raise not_found(obj, parts, value, failed)


def set_by_path(obj: Context, path: Any, value: Any) -> list[str]:
    """Sets ``value`` at every place ``path`` (a glob) matches inside ``obj``, in place.

    Usage:
      >>> tree = {"dense": {"kernel": 1, "bias": 2}, "out": {"bias": 3}}
      >>> set_by_path(tree, "**.bias", 0.0)
      ['dense.bias', 'out.bias']
      >>> tree["out"]
      {'bias': 0.0}

    Dict-like nodes get the key set (created if new), lists the index (which must exist), dataclasses
    and objects the attribute. Kauldron's rules for globs: after a ``**``, the steps up to and including
    the first named one are taken only where they exist (``"**.bias"`` writes the existing ``bias`` keys;
    the result may be empty); every other step must exist wherever it is reached (``"*.b"`` writes ``b``
    into every child, creating dict keys, and fails on a child that is a leaf). Matching, and with several
    matches every check, happens before any write; a match inside a sub-tree being replaced is not
    reported.

    Returns:
      The canonical paths that were written, in tree order.

    Raises:
      GlobPathError: the path ends with a wildcard.
      PathMutationError: a write into a leaf, a tuple or a frozen / immutable object.
      PathNotFoundError: a step before the last does not exist where it must (``PathIndexError``: list
        index out of range).
    """
    parts = to_parts(path, glob_ok=True)
    return set_parts(obj, parts, value, format_parts(parts))


_WHOLE = object()  # Marks a matched node: kept entirely.


def filter_by_path(obj: Context, path: Any) -> Context:
    """Keeps only what ``path`` (a glob) matches, with the containers leading to it.

    Usage:
      >>> filter_by_path({"a": {"w": 1, "b": 2}, "c": 3}, "**.w")
      {'a': {'w': 1}}
      >>> filter_by_path({"a": {"w": 1, "b": 2}, "c": {"w": 3}}, "*.w")
      {'a': {'w': 1}, 'c': {'w': 3}}

    Dicts keep their type and key order; lists and tuples keep their matched items in order (the others
    are dropped, so indices may shift); any other container (named tuple, dataclass, object) becomes a
    ``dict`` of the matched fields. A wildcard may end the path (``"a.*"`` keeps all of ``a``).
    Kauldron's rules: after a ``**``, the steps up to and including the first named one are kept where
    they exist; every other step must exist wherever it is reached (``"a.*.b"`` needs a ``b`` in every
    child of ``a``, ``"**.b.c"`` a ``c`` in every ``b``).

    Raises:
      PathNotFoundError: a step that must exist is missing somewhere it is reached, or such a ``*``
        meets a leaf.
    """
    parts = to_parts(path, glob_ok=True)
    trie: dict[Any, Any] = {}  # (type, part) -> (part, sub-trie or _WHOLE): the kept paths.
    # id of a link (a path, as `match_nodes` names it unspelled) -> its sub-trie, None inside a kept node:
    # each step of the paths is taken once, however deep the matches and however many share it.
    at: dict[int, Any] = {}
    for link, _ in match_nodes(obj, parts, strict=True, spelled=False):
        if link is None:
            return obj
        parent, part = link
        node = _sub_trie(parent, trie, at)
        if node is not None:
            node[_trie_key(part)] = (part, _WHOLE)
    return _rebuild(obj, trie)


def _sub_trie(link: Any, trie: dict[Any, Any], at: dict[int, Any]) -> dict[Any, Any] | None:
    """The sub-trie of the path ``link`` names (made as needed), or None inside a node kept whole."""
    pending = []
    while link is not None and id(link) not in at:
        pending.append(link)
        link = link[0]
    node = trie if link is None else at[id(link)]
    for link in reversed(pending):
        if node is not None:
            part = link[1]
            key = _trie_key(part)
            entry = node.get(key)
            if entry is None:
                entry = node[key] = (part, {})
            node = None if entry[1] is _WHOLE else entry[1]
        at[id(link)] = node
    return node


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
