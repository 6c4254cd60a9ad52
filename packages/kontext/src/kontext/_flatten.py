"""``flatten_with_path``: every leaf of a tree under its path string."""

from __future__ import annotations

from ._children import children_of
from ._parser import append_part, format_parts, parse_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


def flatten_with_path(
    pytree: Any,
    *,
    prefix: str = "",
    separator: str | None = None,
    is_leaf: Callable[[Any], bool] | None = None,
) -> dict[str, Any]:
    """Flattens a tree into ``{path: leaf}``, in the tree's own order.

    Usage:
      >>> flatten_with_path({"a": [1, {"b": 2}]})
      {'a[0]': 1, 'a[1].b': 2}

    Dicts and other mappings (ConfigDict, FrozenDict), lists, tuples, named tuples and dataclasses are
    recursed into; registered JAX pytree nodes too, under their own key paths, when JAX is imported.
    ``None`` is kept as a leaf (JAX would drop it); empty containers contribute nothing.

    Args:
      pytree: the tree to flatten.
      prefix: a path put in front of every key (``prefix="params"`` gives ``"params.dense.kernel"``).
      separator: ``None`` for canonical path strings (``"a[0].b"``); otherwise the parts' ``str``
        joined with it (``separator="."`` gives ``"a.0.b"``, ``"/"`` gives ``"a/0/b"``).
      is_leaf: stop recursing where it returns True.
    """
    out: dict[str, Any] = {}
    start = parse_parts(prefix) if prefix else ()
    if separator is None:
        _walk(pytree, format_parts(start), out, is_leaf, append_part)
    else:

        def append(text: str, part: object) -> str:
            name = part if type(part) is str else str(part)
            return f"{text}{separator}{name}" if text else name  # type: ignore[return-value]

        _walk(pytree, separator.join(str(p) for p in start), out, is_leaf, append)
    return out


def _walk(
    root: Any,
    text: str,
    out: dict[str, Any],
    is_leaf: Callable[[Any], bool] | None,
    append: Callable[[str, object], str],
) -> None:
    """Puts the leaves of ``root`` in ``out`` under ``text`` + their paths; keeps its own stack (any depth)."""
    found = None if is_leaf is not None and is_leaf(root) else children_of(root)
    if found is None:
        out[text] = root
        return
    ancestors = {id(root)}  # The containers being walked: a cycle comes back to one of them.
    stack: list[tuple[Any, str, Iterator[tuple[Any, Any]]]] = []  # The parents of `node`, to come back to.
    node, children = root, iter(found)
    while True:
        for key, child in children:
            path = append(text, key)
            found = None if is_leaf is not None and is_leaf(child) else children_of(child)
            if found is None:
                out[path] = child
            elif found:
                ident = id(child)
                if ident in ancestors:
                    raise ValueError(f"Cannot flatten: the tree contains a cycle at {path!r}.")
                ancestors.add(ident)
                stack.append((node, text, children))
                node, text, children = child, path, iter(found)
                break
        else:
            if not stack:
                return
            ancestors.discard(id(node))
            node, text, children = stack.pop()
