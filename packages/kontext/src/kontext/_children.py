"""One level of a tree: which children a node has, under which path part.

Containers are recognised by duck typing so that no library is imported: mappings (anything with
``keys`` and ``__getitem__``: dict, FrozenDict, ConfigDict), lists and tuples (by index), named tuples
and dataclasses (by field name) and, only when JAX is already imported, any registered JAX pytree node
(flax structs, equinox modules, ``register_dataclass``), read with its own key paths.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

Children = list  # list[tuple[part, child]]

# Children a walk (``flatten_with_path``, a glob) may reach again through containers it has walked
# before, in all: containers that share sub-trees (``{"x": b, "y": b}``, 30 levels deep) can have
# exponentially many paths.
REPEAT_LIMIT = 100_000

_ATOMS = frozenset({str, bytes, int, float, bool, complex, type(None), type(...)})
# Array types seen so far (numpy, jax...): leaves, recognised without attribute probing.
_ARRAY_KINDS: set[type] = set()
# type -> whether JAX flattens its instances into children (JAX registrations happen at class creation).
_JAX_NODE: dict[type, bool] = {}


def children_of(obj: Any) -> Children | None:
    """``[(part, child), ...]`` of a container, ``None`` for a leaf.

    Usage: ``children_of({"a": 1}) == [("a", 1)]``; ``children_of(3) is None``.
    """
    kind = type(obj)
    if kind is dict:
        return list(obj.items())
    if kind is list or kind is tuple:
        return list(enumerate(obj))
    if kind in _ATOMS or kind in _ARRAY_KINDS:
        return None
    if isinstance(obj, tuple):
        fields = getattr(kind, "_fields", None)
        if fields is not None:  # namedtuple
            return [(name, value) for name, value in zip(fields, obj, strict=False)]
        return list(enumerate(obj))
    if isinstance(obj, list):
        return list(enumerate(obj))
    if _is_array(kind):
        return None
    if hasattr(kind, "keys") and hasattr(kind, "__getitem__"):
        try:
            return [(key, obj[key]) for key in obj.keys()]
        except Exception:  # A `keys` that is not a mapping's: treat the object as a leaf.
            return None
    if "jax" in sys.modules:
        found = jax_children(obj)
        if found is not None:
            return found
    if hasattr(kind, "__dataclass_fields__") and not isinstance(obj, type):
        import dataclasses  # Already imported: `obj` is a dataclass.

        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return None


def _is_array(kind: type) -> bool:
    if kind in _ARRAY_KINDS:
        return True
    if hasattr(kind, "shape") and hasattr(kind, "dtype"):
        _ARRAY_KINDS.add(kind)
        return True
    return False


def jax_children(obj: Any) -> Children | None:
    """Children of a registered JAX pytree node, keyed by its key paths; ``None`` if JAX sees a leaf."""
    kind = type(obj)
    if _JAX_NODE.get(kind) is False:
        return None
    tree_util: Any = sys.modules.get("jax.tree_util")
    if tree_util is None:
        import jax.tree_util as tree_util  # `jax` is in sys.modules: this import is free.

    is_child: Callable[[object], bool] = lambda x: x is not obj  # noqa: E731
    try:
        flat, _ = tree_util.tree_flatten_with_path(obj, is_leaf=is_child)
    except Exception:  # A node JAX cannot flatten (e.g. unsortable dict keys): no children.
        return None
    if len(flat) == 1 and flat[0][0] == () and flat[0][1] is obj:
        _JAX_NODE[kind] = False
        return None
    _JAX_NODE[kind] = True
    return [(part_from_jax_key(key_path[0]), child) for key_path, child in flat]


def part_from_jax_key(entry: Any) -> Any:
    """The path part of one JAX key entry (GetAttrKey, DictKey, SequenceKey, FlattenedIndexKey)."""
    name = type(entry).__name__
    if name == "GetAttrKey":
        return entry.name
    if name == "DictKey":
        return entry.key
    if name == "SequenceKey":
        return entry.idx
    if name == "FlattenedIndexKey":
        return entry.key
    if isinstance(entry, (str, int)):
        return entry
    raise TypeError(f"Unknown JAX key entry {entry!r} of type {name}.")


def describe_available(obj: Any) -> tuple[str, ...]:
    """What a node offers, for error messages: keys (as path parts), an index range or attribute names."""
    kind = type(obj)
    if isinstance(obj, (list, tuple)) and getattr(kind, "_fields", None) is None:
        n = len(obj)
        return (f"indices 0..{n - 1} (or -{n}..-1)",) if n else ("nothing (empty sequence)",)
    if _is_array(kind):
        return (f"an array of shape {getattr(obj, 'shape', '?')}: numpy-style indexing only",)
    found = children_of(obj)
    if found is not None:
        names = dict.fromkeys(_part_text(part) for part, _ in found)
        # Static fields (flax struct, registered dataclass) are no pytree children but are reachable.
        fields = getattr(kind, "__dataclass_fields__", ())
        names.update(dict.fromkeys(name for name in fields if hasattr(obj, name)))
        return tuple(names) or (f"nothing (empty {kind.__name__})",)
    if kind not in _ATOMS:
        public = tuple(name for name in _attribute_names(obj) if not name.startswith("_"))
        if public:
            return public
    if kind in _ATOMS:  # Show the value found: a scalar's repr is short and safe to compute.
        import reprlib

        return (f"nothing: {kind.__name__} is a leaf (the value is {reprlib.repr(obj)})",)
    return (f"nothing: {kind.__name__} is a leaf",)


def _attribute_names(obj: Any) -> list[str]:
    """Data attributes of a plain object (instance dict, slots, properties, class data), not methods.

    Nothing is read, so a property that raises cannot break the error message being built.
    """
    kind = type(obj)
    names = dict.fromkeys(n for n in getattr(obj, "__dict__", None) or () if isinstance(n, str))
    for klass in kind.__mro__[:-1]:
        for name, value in vars(klass).items():
            # Slots and properties are descriptors that are not callable, unlike methods.
            if not (callable(value) or isinstance(value, (classmethod, staticmethod))):
                names[name] = None
    return list(names)


def _part_text(part: Any) -> str:
    """A key as it is written in a path: ``name`` for identifiers, else its literal (``'0'`` vs ``0``)."""
    return part if type(part) is str and part.isidentifier() else repr(part)
