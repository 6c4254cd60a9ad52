"""How errors name a config node: the path it was reached by (`In cfg.model.layers[0]: ...`), and the
messages of `ConfigDict`'s own errors (a missing field, a value that is not configurable).

A `ConfigDict` records how it hands out each child, one store per access: a node's `_reached` slot is
`(parent, key)`, and `last_sequence` is `(sequence, parent, key)` of the last list or tuple handed out.
Only when an error is worded does `node_path` follow those links up, checking each is still current.

    raise KeyError(missing_message(node, "lr"))  # "In cfg.optimizer: No field 'lr' of optax.adam(...) ..."
"""

from __future__ import annotations

from . import _signature
from ._errors import ConfigValueError, did_you_mean
from ._keys import QUALNAME, path_key
from ._paths import format_path
from ._targets import find_imported_callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# `(sequence, parent, key)` of the last list/tuple a `ConfigDict` handed out: names nodes reached
# as `cfg.layers[0]`. Written by `ConfigDict` access (`_config_dict.handed_out`), read by `node_path`.
last_sequence: tuple[Any, Any, Any] | None = None


class BadValue(Exception):
    """Internal: carries the (reversed) path of an unconfigurable value, see `value_error`."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.path: list[Any] = []


def node_path(node: Any) -> tuple[Any, ...] | None:
    """The path by which `node` was last reached (`("model", "layers", 0)`), or None.

    Follows the `_reached` links recorded by attribute/item access, checking
    that each is still current; a node reached as an item of a list is found
    in the last list handed out. Only called to word errors.
    """
    keys: list[Any] = []
    seen: set[int] = set()
    current = node
    while id(current) not in seen:
        seen.add(id(current))
        try:
            parent, key = current._reached
        except AttributeError:
            pass
        else:
            if parent._fields.get(key) is current:
                keys.append(path_key(parent._fields, key))
                current = parent
                continue
        last = last_sequence
        if last is None:
            break
        sequence, parent, key = last
        indices = _find_in_sequence(sequence, current)
        if indices is None or parent._fields.get(key) is not sequence:
            break
        keys.extend(reversed(indices))
        keys.append(path_key(parent._fields, key))
        current = parent
    return tuple(reversed(keys)) if keys else None


def _find_in_sequence(sequence: Any, node: Any, seen: set[int] | None = None) -> list[int] | None:
    """Indices of `node` in `sequence` or in lists/tuples nested in it (`[0, 2]`)."""
    seen = set() if seen is None else seen
    seen.add(id(sequence))
    for i, item in enumerate(sequence):
        if item is node:
            return [i]
        t = type(item)
        if (t is list or t is tuple) and id(item) not in seen:
            inner = _find_in_sequence(item, node, seen)
            if inner is not None:
                return [i, *inner]
    return None


def where(node: Any) -> str:
    """`"In cfg.model: "` when the node's path is known, else `""`."""
    try:
        path = node_path(node)
    except RecursionError:  # lists nested too deeply to search: the path is left out
        return ""
    if path is None:
        return ""
    return f"In {format_path(path)}: "


def created_at(cfg: Any) -> str:
    """`" (node created at config.py:12)"` for a node whose creating line is known, else `""`."""
    origin = cfg._origin
    return f" (node created at {origin[0]}:{origin[1]})" if origin else ""


def value_error(e: BadValue, prefix: tuple[Any, ...] | None = None) -> ConfigValueError:
    """The error for a live object put into a config, naming its path and how to capture it instead."""
    path = format_path((*(prefix or ()), *reversed(e.path)))
    value = e.value
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    kind = type(value)
    return ConfigValueError(
        f"{path}: a config holds only configurable values (numbers, str, lists, dicts,"
        f" ConfigDicts, refs, captured imports); got a live {kind.__module__}.{kind.__qualname__}"
        f" object {text}. Capture the import instead: `with konfig.imports(): from"
        f" {kind.__module__} import {kind.__qualname__.split('.')[0]}`, then call it in the"
        " config (or turn an existing object into a config with `konfig.export(obj)`)."
    )


def missing_message(cfg: Any, key: Any) -> str:
    """Why `cfg[key]` / `cfg.key` has no value: an unset argument, or the closest fields."""
    fields = cfg._fields
    candidates = [k for k in fields if type(k) is str]
    where_ = ""
    qualname = fields.get(QUALNAME)
    if qualname is not None:
        where_ = f" of {_signature.display_name(qualname)}(...)"
    params = _signature.params_for(qualname) if type(qualname) is str else None
    if params is not None and key in params.keywords:
        return (
            f"{where(cfg)}Argument {key!r}{where_} is not set"
            " in this config (the target's default applies when it is built); set it first to read it"
        )
    arguments = sorted(params.keywords) if params is not None else []
    suggestion = did_you_mean(str(key), candidates + arguments)
    message = f"{where(cfg)}No field {key!r}{where_}{suggestion} (fields: {', '.join(map(str, candidates)) or 'none'})"
    if qualname is not None and type(key) is str and not suggestion:
        message += _built_attribute_hint(cfg, qualname, key)
    return message


def _built_attribute_hint(cfg: Any, qualname: str, name: str) -> str:
    """Points `node.method` / `node.property` users to a lazy reference."""
    import inspect

    target = find_imported_callable(qualname)
    if target is None or (isinstance(target, type) and inspect.getattr_static(target, name, None) is None):
        return ""
    try:
        path = node_path(cfg)
    except RecursionError:  # lists nested too deeply to search: the path is left out, as in `where`
        path = None
    node = "node" if path is None else format_path(path)
    return (
        f". A call node is the config, not the built object: to use {name!r} of the object"
        f" {_signature.display_name(qualname)}(...) builds, reference it lazily as"
        f" `{node}.ref.{name}` (evaluated by konfig.resolve)"
    )
