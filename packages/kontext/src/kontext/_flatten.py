"""``flatten_with_path``: every leaf of a tree under its path string."""

from __future__ import annotations

from ._children import REPEAT_LIMIT, children_of
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
        _walk(pytree, start, out, is_leaf, format_parts, append_part)
    else:

        def spell(parts: list[object]) -> str:
            return separator.join(p if type(p) is str else str(p) for p in parts)  # type: ignore[misc]

        def append(text: str, part: object) -> str:
            name = part if type(part) is str else str(part)
            return f"{text}{separator}{name}" if text else name  # type: ignore[return-value]

        _walk(pytree, start, out, is_leaf, spell, append)
    return out


def _walk(
    root: Any,
    start: tuple[object, ...],
    out: dict[str, Any],
    is_leaf: Callable[[Any], bool] | None,
    spell: Callable[[Any], str],
    append: Callable[[str, object], str],
) -> None:
    """Puts the leaves of ``root`` in ``out`` under their paths; keeps its own stack (any depth).

    The parts leading to the container on top are one list, and a container's path is spelled
    (``spell``) only when a leaf in it needs it: a chain 20,000 deep takes linear time and memory.
    """
    found = None if is_leaf is not None and is_leaf(root) else children_of(root)
    if found is None:
        out[spell(start)] = root
        return
    ancestors = {id(root)}  # The containers being walked: a cycle comes back to one of them.
    entered = {id(root): root}  # Every container walked (kept: ids stay unique while the walk runs).
    repeats = 0  # Leaves reached again through a container walked before.
    repeat_from = -1  # The depth of the repeated container the walk is in, or -1.
    keys = list(start)
    # The parents of `node`, to come back to: (node, its path or None until a leaf needs it, children).
    stack: list[tuple[Any, str | None, Iterator[tuple[Any, Any]]]] = []
    node, text, children = root, None, iter(found)
    while True:
        for key, child in children:
            found = None if is_leaf is not None and is_leaf(child) else children_of(child)
            if found is None:
                if text is None:
                    text = spell(keys)
                out[append(text, key)] = child
                if repeat_from >= 0:
                    repeats += 1
                    if repeats > REPEAT_LIMIT:
                        raise ValueError(_repeat_message(spell([*keys, key])))
            elif found:
                ident = id(child)
                if ident in ancestors:
                    raise ValueError(f"Cannot flatten: the tree contains a cycle at {spell([*keys, key])!r}.")
                if ident in entered:
                    if repeat_from < 0:
                        repeat_from = len(stack)
                else:
                    entered[ident] = child
                ancestors.add(ident)
                stack.append((node, text, children))
                keys.append(key)
                node, text, children = child, None, iter(found)
                break
        else:
            if not stack:
                return
            ancestors.discard(id(node))
            node, text, children = stack.pop()
            keys.pop()
            if repeat_from == len(stack):
                repeat_from = -1


def _repeat_message(path: str) -> str:
    return (
        f"Cannot flatten: shared containers repeat more than {REPEAT_LIMIT:,} leaves (at {path!r}); a tree"
        " whose containers share sub-trees can have exponentially many paths."
    )
