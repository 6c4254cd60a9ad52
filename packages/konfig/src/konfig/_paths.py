"""Config paths: `"model.layers[0].features"` <-> `("model", "layers", 0, "features")`.

A path is a tuple of keys: `str` for fields and `int` for list items and
positional arguments of a node (`cfg.optimizer[1]` is argument `"1"`). Override
paths of the CLI (`konfig._cli`) may also hold the globs `ANY` (`*`) and
`ANY_DEPTH` (`**`); `format_keys` writes those (and `konfig.diff`'s paths).

Usage: `set_by_path(cfg, parse_path("model.layers[0]"), value)`.

    >>> format_path(("model", "layers", 0, "my key"))
    "cfg.model.layers[0]['my key']"
    >>> parse_path("cfg.model.layers[0]['my key']")
    ('model', 'layers', 0, 'my key')
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Path = tuple  # of keys: str fields, int items / positional arguments


class Glob:
    """A wildcard key of an override path (`konfig._cli`): `ANY` (`*`, one key) or `ANY_DEPTH` (`**`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


ANY = Glob("*")
ANY_DEPTH = Glob("**")


def format_path(path: Path, root: str = "cfg") -> str:
    """`("a", 0, "b c")` -> `"cfg.a[0]['b c']"`."""
    parts = [root]
    for key in path:
        if type(key) is str and key.isidentifier():
            parts.append("." + key)
        else:
            parts.append(f"[{key!r}]")
    return "".join(parts)


def format_keys(keys: tuple[Any, ...] | list[Any], root: str = "cfg") -> str:
    """Formats keys as `cfg.a.b[0]` (the inverse of `_cli._override_paths.parse_override_path`).

    Unlike `format_path`, a `str` subclass (a `StrEnum` member) naming an identifier is an
    attribute too, and globs are written as themselves. Positional arguments are `int` keys
    here: `"0"` is a str key.
    """
    parts = [root]
    for key in keys:
        if isinstance(key, Glob):
            parts.append(f".{key.text}")
        elif isinstance(key, str) and key.isidentifier():
            parts.append(f".{key}")
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
    """Returns the value stored at `path` (a tuple or a `"a.b[0]"` string); a reference stays one.

    (`cfg.a.b` gives a reference's current value instead.)
    """
    if isinstance(path, str):
        path = parse_path(path)
    value = cfg
    for i, key in enumerate(path):
        try:
            stored_item = getattr(type(value), "_stored_item", None)  # A ConfigDict: no reference read.
            value = value[key] if stored_item is None else stored_item(value, key)
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
