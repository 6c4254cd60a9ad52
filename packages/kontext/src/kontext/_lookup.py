"""Taking one step down a tree, and explaining why a path could not be followed."""

from __future__ import annotations

import sys

from ._children import _ATOMS, children_of, describe_available, jax_children
from ._errors import PathNotFoundError
from ._parser import format_parts

MISSING = object()
_NOT_JAX_NODES = _ATOMS
_ITEM_ERRORS = (LookupError, TypeError, ValueError, AttributeError)
_MAX_SUGGESTION_NODES = 20_000


def step(obj: object, part: object) -> object:
    """``obj[part]``, else ``obj.part``, else (JAX loaded) the pytree child keyed ``part``; else ``MISSING``."""
    kind = type(obj)
    if isinstance(obj, dict):
        try:
            if part in obj:  # Not obj[part]: a defaultdict would insert the missing key.
                return obj[part]
        except TypeError:  # An unhashable part (a slice).
            pass
    else:
        getitem = getattr(kind, "__getitem__", None)
        if getitem is not None:
            try:
                return getitem(obj, part)
            except _ITEM_ERRORS:
                pass
    if type(part) is str:
        try:
            return getattr(obj, part)
        except AttributeError:
            pass
    if "jax" in sys.modules and kind not in _NOT_JAX_NODES and not isinstance(obj, (dict, list, tuple)):
        found = jax_children(obj)
        if found:
            for key, child in found:
                if key == part and type(key) is type(part):
                    return child
    return MISSING


def lookup(obj: object, parts: tuple[object, ...]) -> tuple[object, int]:
    """Follows ``parts`` from ``obj``: ``(value, -1)`` on success, ``(node, failing index)`` otherwise."""
    node = obj
    for index, part in enumerate(parts):
        if type(node) is dict:
            try:
                node = node[part]  # type: ignore[index]
                continue
            except (KeyError, TypeError):
                pass
        child = step(node, part)
        if child is MISSING:
            return node, index
        node = child
    return node, -1


def not_found(root: object, parts: tuple[object, ...], node: object, index: int) -> PathNotFoundError:
    """The error for ``parts`` failing at ``parts[index]`` on ``node``: available names and close paths."""
    path = format_parts(parts)
    parent = format_parts(parts[:index])
    failed = parts[index]
    available = describe_available(node)
    suggestions = close_paths(root, path, parts, index, node)
    where = f"at {parent!r}" if parent else "at the root"
    lines = [
        f"Path {path!r} not found: step {index + 1} of {len(parts)} ({format_parts((failed,)).lstrip('.')!r}) "
        f"does not exist {where} ({type(node).__name__}).",
        "Available there: " + _shorten(available) + ".",
    ]
    if suggestions:
        lines.append("Did you mean " + " or ".join(repr(s) for s in suggestions) + "?")
    return PathNotFoundError(
        "\n".join(lines),
        path=path,
        failed_part=failed,
        parent=parent,
        available=available,
        suggestions=suggestions,
    )


def _shorten(names: tuple[str, ...], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def close_paths(
    root: object, path: str, parts: tuple[object, ...], index: int, node: object, n: int = 3
) -> tuple[str, ...]:
    """Existing paths of ``root`` closest to ``path`` (difflib), trying the failing node's children first."""
    import difflib

    local = children_of(node)
    candidates: list[str] = []
    if local is not None:
        prefix = parts[:index]
        candidates = [format_parts((*prefix, key, *parts[index + 1 :])) for key, _ in local]
        candidates += [format_parts((*prefix, key)) for key, _ in local]
    elif type(parts[index]) is str:
        names = describe_available(node)
        candidates = [format_parts((*parts[:index], name)) for name in names if name.isidentifier()]
    # The nodes the lookup already went through exist but are no answer to "did you mean".
    passed = {format_parts(parts[:j]) for j in range(index + 1)}
    found = [
        c
        for c in difflib.get_close_matches(path, list(dict.fromkeys(candidates)), n=n, cutoff=0.6)
        if c not in passed
    ]
    if len(found) < n:
        everything = [c for c in all_node_paths(root, _MAX_SUGGESTION_NODES) if c not in passed]
        for extra in difflib.get_close_matches(path, everything, n=n, cutoff=0.6):
            if extra not in found and len(found) < n:
                found.append(extra)
    return tuple(found)


def all_node_paths(root: object, limit: int) -> list[str]:
    """Canonical paths of every node of ``root`` (inner nodes too), breadth-first, at most ``limit``."""
    out: list[str] = []
    queue: list[tuple[tuple[object, ...], object]] = [((), root)]
    seen: set[int] = {id(root)}
    head = 0
    while head < len(queue) and len(out) < limit:
        prefix, obj = queue[head]
        head += 1
        found = children_of(obj)
        if not found:
            continue
        for key, child in found:
            parts = (*prefix, key)
            out.append(format_parts(parts))
            if id(child) not in seen:
                seen.add(id(child))
                queue.append((parts, child))
    return out
