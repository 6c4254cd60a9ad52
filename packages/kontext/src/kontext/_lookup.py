"""Taking one step down a tree, and explaining why a path could not be followed."""

from __future__ import annotations

import sys

from ._children import _ATOMS, children_of, describe_available, jax_children
from ._errors import PathNotFoundError
from ._parser import Wildcard, append_part, format_parts

MISSING = object()
_ITEM_ERRORS = (LookupError, TypeError, ValueError, AttributeError)
_MAX_SUGGESTION_NODES = 20_000
_MAX_SUGGESTION_WORK = 20_000_000  # Characters of the path x characters of the paths compared with it.


def is_dunder(part: object) -> bool:
    """`"__class__"`, `"__globals__"`: an attribute no key path follows (a dict's `"__x__"` key still is one)."""
    return type(part) is str and len(part) > 4 and part.startswith("__") and part.endswith("__")


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
    if type(part) is str and not is_dunder(part):  # key paths address data, never Python's internals
        try:
            return getattr(obj, part)
        except AttributeError:
            pass
    if "jax" in sys.modules and kind not in _ATOMS and not isinstance(obj, (dict, list, tuple)):
        found = jax_children(obj)
        if found:
            for key, child in found:
                if key == part and type(key) is type(part):
                    return child
    return MISSING


def lookup(obj: object, parts: tuple[object, ...]) -> tuple[object, int]:
    """Follows ``parts`` from ``obj``: ``(value, -1)`` on success, ``(node, failing index)`` otherwise."""
    node = obj
    index = 0
    try:
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
    except Exception as e:  # Raised by the tree's own code (a property, a __getitem__): say where.
        e.add_note(
            f"kontext: raised while taking step {index + 1} of {len(parts)} of the path "
            f"{format_parts(parts)!r}, on a {type(node).__name__} at {format_parts(parts[:index])!r}."
        )
        raise
    return node, -1


def not_found(root: object, parts: tuple[object, ...], node: object, index: int) -> PathNotFoundError:
    """The error for ``parts`` failing at ``parts[index]`` on ``node``: available names and close paths."""
    path = format_parts(parts)
    parent = format_parts(parts[:index])
    failed = parts[index]
    available = describe_available(node)
    suggestions = close_paths(root, path, parts, index, node, available)
    step_text = f"step {index + 1} of {len(parts)} ({format_parts((failed,)).lstrip('.')!r})"
    where = f"at {parent!r}" if parent else "at the root"
    if type(failed) is Wildcard:
        first = (
            f"Path {path!r} has the wildcard {str(failed)!r} at {step_text}: a lookup needs a concrete path "
            "(wildcards work with set_by_path, filter_by_path and GlobPath.match)."
        )
    else:
        first = f"Path {path!r} not found: {step_text} " + (
            _attribute_error(node, failed) or f"does not exist {where} ({type(node).__name__})."
        )
    mapping = hasattr(type(node), "keys") and hasattr(type(node), "__getitem__")
    lines = [first, ("Available keys: " if mapping else "Available there: ") + _shorten(available) + "."]
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


def _attribute_error(node: object, name: object) -> str:
    """For a name the class defines (a property) whose reading raised AttributeError: that error."""
    if type(name) is not str or not hasattr(type(node), name):  # Only descriptors of the class.
        return ""
    try:
        getattr(node, name)
    except AttributeError as e:
        return f"is defined by {type(node).__name__} but reading it raised AttributeError: {e}."
    return ""


def _shorten(names: tuple[str, ...], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def close_paths(
    root: object,
    path: str,
    parts: tuple[object, ...],
    index: int,
    node: object,
    available: tuple[str, ...],
    n: int = 3,
) -> tuple[str, ...]:
    """Existing paths of ``root`` closest to ``path`` (difflib), trying the failing node's names first.

    The paths under the same first part as ``path`` come first (``preds.logits`` before
    ``params.logits`` for ``preds.logit``), each group best match first.

    difflib's work grows with the length of ``path`` times that of the paths it is compared with: only
    the paths it could find close (cutoff 0.6: from ``len(path) / 2.4`` to ``2.4 * len(path)``
    characters) are compared, ``_MAX_SUGGESTION_WORK / len(path)`` characters of them at most.
    """
    import difflib

    budget = _MAX_SUGGESTION_WORK // max(len(path), 1)
    low, high = len(path) / 2.4, len(path) * 2.4
    local = children_of(node)
    keys: list[object] = [key for key, _ in local] if local else []
    if type(parts[index]) is str:  # Attribute names too: static fields, properties, plain attributes.
        names = {key for key in keys if isinstance(key, str)}
        keys += [name for name in available if name.isidentifier() and name not in names]
    # The nodes the lookup already went through exist but are no answer to "did you mean".
    passed = {path, ""}
    text = ""
    for part in parts[:index]:
        text = append_part(text, part)
        passed.add(text)
    rest = format_parts(("_", *parts[index + 1 :]))[1:]  # The parts after the failing one, as written.
    heads = [append_part(text, key) for key in keys]
    candidates: list[str] = []
    for candidate in [head + rest for head in heads] + heads:
        if low <= len(candidate) <= high:
            budget -= len(candidate)
            if budget < 0:
                break
            candidates.append(candidate)
    found = [
        c
        for c in difflib.get_close_matches(path, list(dict.fromkeys(candidates)), n=n, cutoff=0.6)
        if c not in passed
    ]
    if len(found) < n and budget > 0:
        everything = [
            c
            for c in all_node_paths(root, _MAX_SUGGESTION_NODES, (low, high, len(parts), budget))
            if c not in passed and c not in found
        ]
        # Every close path, best first: the ones under the typed path's first part go ahead below.
        found += difflib.get_close_matches(path, everything, n=max(len(everything), 1), cutoff=0.6)
    if index > 0:  # The first part exists: `batch.lable` means a path in `batch`, not one in `params`.
        root_text = format_parts(parts[:1])
        found.sort(key=lambda c: not (c == root_text or c.startswith((root_text + ".", root_text + "["))))
    return tuple(found[:n])


def all_node_paths(root: object, limit: int, near: tuple[float, float, int, int] | None = None) -> list[str]:
    """Canonical paths of the nodes of ``root`` (inner nodes too), breadth-first, ``limit`` nodes at most.

    ``near=(shortest, longest, depth, budget)`` keeps only the paths of ``shortest`` to ``longest``
    characters, at most two levels above or below ``depth`` parts, ``budget`` characters in all.
    """
    out: list[str] = []
    queue: list[tuple[str, object, int]] = [("", root, 0)]
    seen: set[int] = {id(root)}
    head = 0
    low, high, top, bottom, budget = 0.0, float("inf"), 0, limit, -1
    if near is not None:
        low, high, budget = near[0], near[1], near[3]
        top, bottom = near[2] - 2, near[2] + 2
    while head < len(queue) and limit > 0:
        text, obj, depth = queue[head]
        head += 1
        found = children_of(obj)
        if not found:
            continue
        depth += 1
        for key, child in found:
            limit -= 1
            path = append_part(text, key)
            if len(path) > high:
                continue  # Its descendants are longer still.
            if len(path) >= low and depth >= top:
                if budget >= 0:
                    budget -= len(path)
                    if budget < 0:
                        return out
                out.append(path)
            if depth < bottom and id(child) not in seen:
                seen.add(id(child))
                queue.append((path, child, depth))
    return out
