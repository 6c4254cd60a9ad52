"""``flatten_with_path``: every leaf of a tree under its path string."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

from ._children import children_of
from ._parser import format_parts, parse_parts


def flatten_with_path(
    pytree: Any,
    *,
    prefix: str = "",
    separator: str | None = None,
    is_leaf: Callable[[Any], bool] | None = None,
) -> dict[str, Any]:
    """Flattens a tree into ``{path: leaf}``, in the tree's own order.

    Usage: ``flatten_with_path({"a": [1, {"b": 2}]}) == {"a[0]": 1, "a[1].b": 2}``.

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
        _walk(pytree, start, out, is_leaf, format_parts, set())
    else:
        join = separator.join

        def fmt(parts: tuple[object, ...]) -> str:
            return join([p if type(p) is str else str(p) for p in parts])  # type: ignore[misc]

        _walk(pytree, start, out, is_leaf, fmt, set())
    return out


def _walk(
    node: Any,
    parts: tuple[object, ...],
    out: dict[str, Any],
    is_leaf: Callable[[Any], bool] | None,
    fmt: Callable[[tuple[object, ...]], str],
    ancestors: set[int],
) -> None:
    found = None if is_leaf is not None and is_leaf(node) else children_of(node)
    if found is None:
        out[fmt(parts)] = node
        return
    if not found:
        return
    ident = id(node)
    if ident in ancestors:
        raise ValueError(f"Cannot flatten: the tree contains a cycle at {format_parts(parts)!r}.")
    ancestors.add(ident)
    for key, child in found:
        _walk(child, (*parts, key), out, is_leaf, fmt, ancestors)
    ancestors.discard(ident)
