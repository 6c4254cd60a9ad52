"""Config paths: `"model.layers[0].features"` <-> `("model", "layers", 0, "features")`.

A path is a tuple of keys: `str` for fields and `int` for list items and
positional arguments of a node (`cfg.optimizer[1]` is argument `"1"`).

Usage: `set_by_path(cfg, parse_path("model.layers[0]"), value)`.
"""

from __future__ import annotations

from ._positional import is_positional_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

Path = tuple  # of keys: str fields, int items / positional arguments


def format_path(path: Path, root: str = "cfg") -> str:
    """`("a", 0, "b c")` -> `"cfg.a[0]['b c']"`."""
    parts = [root]
    for key in path:
        if type(key) is str and key.isidentifier():
            parts.append("." + key)
        else:
            parts.append(f"[{key!r}]")
    return "".join(parts)


def parse_path(text: str) -> Path:
    """`"a.b[0]['x y']"` -> `("a", "b", 0, "x y")`. A leading `cfg.` is dropped."""
    import ast

    keys: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == ".":
            i += 1
        elif c == "[":
            end = closing_bracket(text, i)
            if end < 0:
                raise ValueError(f"Unclosed `[` in path {text!r}")
            keys.append(ast.literal_eval(text[i + 1 : end].strip()))
            i = end + 1
        else:
            j = i
            while j < n and text[j] not in ".[":
                j += 1
            keys.append(text[i:j])
            i = j
    if keys and keys[0] == "cfg" and text.startswith("cfg"):
        keys.pop(0)
    return tuple(keys)


def closing_bracket(text: str, start: int) -> int:
    """Index of the `]` closing the `[` at `start`, skipping quoted keys; -1 if never closed."""
    quote = None
    j = start + 1
    while j < len(text):
        c = text[j]
        if quote:
            if c == "\\":
                j += 1  # An escaped character inside a quoted key.
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "]":
            return j
        j += 1
    return -1


def get_by_path(cfg: Any, path: Path | str) -> Any:
    """Returns the value at `path` (a tuple or a `"a.b[0]"` string)."""
    if isinstance(path, str):
        path = parse_path(path)
    value = cfg
    for i, key in enumerate(path):
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError) as e:
            raise KeyError(f"{format_path(path[: i + 1])}: not found in {format_path(path[:i])} ({e})") from e
    return value


def set_by_path(cfg: Any, path: Path | str, value: Any) -> None:
    """Sets `value` at `path`; the parent must exist. Tuples are rebuilt."""
    if isinstance(path, str):
        path = parse_path(path)
    if not path:
        raise ValueError("set_by_path needs a non-empty path")
    parent_path, key = path[:-1], path[-1]
    parent = get_by_path(cfg, parent_path)
    if isinstance(parent, tuple):
        items = list(parent)
        items[key] = value
        set_by_path(cfg, parent_path, type(parent)(items))
    else:
        parent[key] = value


def iter_leaves(cfg: Any, prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Yields `(path, value)` for every leaf, depth first, in insertion order.

    Leaves are everything but containers: values, refs, placeholders, constant
    nodes (`{"__const__": ...}`) and the `__qualname__` of call nodes. Empty
    containers are leaves. Shared nodes appear under each of their paths; a
    cycle is not followed twice.
    """
    from ._config_dict import CONST, ConfigDict

    # Iterative (no recursion limit): a stack of (container id, path, iterator over its children).
    ancestors: set[int] = set()
    frames: list[tuple[int, Path, Iterator[tuple[Any, Any]]]] = []

    def enter(value: Any, path: Path) -> bool:
        """Pushes the children of a non-empty container not already being walked; False for a leaf."""
        t = type(value)
        if isinstance(value, ConfigDict):
            fields = value._fields
            if not fields or CONST in fields or id(value) in ancestors:
                return False
            is_node = "__qualname__" in fields
            items = (
                (int(k) if is_node and type(k) is str and k.isdigit() and is_positional_key(k) else k, v)
                for k, v in fields.items()
            )
        elif (t is list or t is tuple) and value and id(value) not in ancestors:
            items = enumerate(value)
        else:
            return False
        ancestors.add(id(value))
        frames.append((id(value), path, iter(items)))
        return True

    if not enter(cfg, prefix):
        yield prefix, cfg
        return
    while frames:
        container_id, path, children = frames[-1]
        for key, child in children:
            child_path = (*path, key)
            if enter(child, child_path):
                break
            yield child_path, child
        else:
            frames.pop()
            ancestors.discard(container_id)
