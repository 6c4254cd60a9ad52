"""Copies of a config: `copy.deepcopy(cfg)` at any depth, and the linked copy `cfg | other` makes.

`ConfigDict` (`_config_dict`) calls these with itself as `node_type`, as `_ref_value` is called:

    copy.deepcopy(cfg)  # deep_copy(cfg, memo, ConfigDict)
    cfg | {"lr": 0.1}   # copy_linked(cfg, ConfigDict), then updated
"""

from __future__ import annotations

from ._leaf_types import LEAF_TYPES
from ._refs import PathRef, Ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._config_dict import ConfigDict

__all__ = ["copy_linked", "deep_copy"]


def deep_copy(root: ConfigDict, memo: dict[int, Any], node_type: type[ConfigDict]) -> ConfigDict:
    """`copy.deepcopy(root)`, walking nodes, lists and tuples without recursion (any depth).

    Other values (references, placeholders, sets, paths) go through `copy.deepcopy` with the
    same `memo`, so sharing and cycles are kept as `copy.deepcopy` keeps them. Node and list
    copies are made empty and filled from a work list; a tuple, being immutable, is built
    once the tuples inside it are (children first, each tuple once).
    """
    import copy  # Imported where used: `import konfig` does not load `copy`.

    todo: list[tuple[Any, Any]] = []  # (original fields dict or list, its empty copy)

    def container(v: Any) -> Any:
        found = memo.get(id(v))
        if found is None:
            if type(v) is list:
                found = memo[id(v)] = []
                todo.append((v, found))
            else:
                found = memo[id(v)] = node_type._raw({}, v._origin)
                todo.append((v._fields, found._fields))
        return found

    def item(v: Any) -> Any:
        t = type(v)
        if t in LEAF_TYPES:
            return v
        if t is node_type or t is list:
            return container(v)
        if t is tuple:
            return memo[id(v)] if id(v) in memo else tuple_copy(v)
        return copy.deepcopy(v, memo)

    def tuple_copy(top: tuple[Any, ...]) -> Any:
        work: list[tuple[tuple[Any, ...], bool]] = [(top, False)]
        while work:
            t, children_done = work.pop()
            if id(t) in memo:
                continue
            if not children_done:
                work.append((t, True))
                work.extend((c, False) for c in t if type(c) is tuple and id(c) not in memo)
                continue
            items = [item(c) for c in t]
            # As `copy.deepcopy`: a tuple whose items copy to themselves is not copied.
            memo[id(t)] = t if all(a is b for a, b in zip(items, t)) else tuple(items)
        return memo[id(top)]

    new = container(root)
    while todo:
        original, target = todo.pop()
        if type(target) is list:
            target.extend([item(v) for v in original])
        else:
            for k, v in original.items():
                target[k] = v if type(v) in LEAF_TYPES else item(v)
    return new


def copy_linked(cfg: ConfigDict, node_type: type[ConfigDict]) -> ConfigDict:
    """Deep copy for `cfg | other`: refs into `cfg` follow the copy.

    Refs whose root lies outside `cfg` (`cfg.model | {...}` with refs to the
    enclosing config) keep following that root instead of a frozen copy of it.
    """
    import copy

    inside: set[int] = set()
    outside: dict[int, Any] = {}
    stack: list[Any] = [cfg]
    while stack:
        value = stack.pop()
        t = type(value)
        if t in LEAF_TYPES or id(value) in inside:
            continue
        if isinstance(value, node_type):
            inside.add(id(value))
            stack.extend(value._fields.values())
        elif t is list or t is tuple:
            inside.add(id(value))
            stack.extend(value)
        elif type(value) is PathRef:
            outside[id(value._konfig_root)] = value._konfig_root
        elif isinstance(value, Ref):
            inside.add(id(value))
            stack.extend(value._konfig_args)  # type: ignore[attr-defined]
            stack.extend(value._konfig_kwargs.values())  # type: ignore[attr-defined]
    memo = {key: root for key, root in outside.items() if key not in inside}
    return copy.deepcopy(cfg, memo)
