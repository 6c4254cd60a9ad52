"""`konfig.export(obj)`: JSON data (as Kauldron's) that resolves back to an object equal to `obj`.

    data = konfig.export(trainer)         # e.g. a dataclass holding enums and arrays
    json.dumps(data)                      # ship it, diff it
    cfg = konfig.ConfigDict(data)         # edit it
    assert konfig.resolve(data, freeze=False) == trainer

The data is what `json.loads(konfig.to_json(config))` would give for the config of calls
`obj` stands for: plain dicts, lists and scalars, with konfig's lossless markers where
Kauldron's JSON has none (`{"__tuple__": [...]}`, `"__raw__=(1, 2)"` keys, ...).

Supported: plain values, lists, tuples, dicts (any hashable literal keys) and
dict subclasses (`OrderedDict`, `Counter`, `defaultdict`, ...), sets,
dataclasses (their `init` fields), named tuples, enum members (combined flags
too), classes, module-level functions and classmethods (constant nodes, checked
to lead back to the object), numpy / JAX arrays, scalars and dtypes
(recognised by their module, without importing numpy or JAX), and any object
with a `__konfig_export__()` method returning a dict with a `"__qualname__"`
key (see `export_qualname`). An object reached twice becomes one shared node,
so it is built once. A class or function defined in a private module is named by
the package that lists it (`optax:adam`, not `optax._src.alias:adam`).

As with Kauldron, compare with `freeze=False`: `freeze=True` turns the
exported lists into tuples and dicts into `ImmutableDict`s.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping

from ._config_dict import CONST, LEAF_TYPES, QUALNAME, ConfigDict, build_node
from ._errors import ConfigValueError, NestingError
from ._json_encode import encode
from ._paths import format_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["export", "export_qualname"]


def export_qualname(obj: Any) -> str:
    """`"module:Class"` of `obj`'s type, for `__konfig_export__` methods (the package that lists the class
    where it is defined in a private module: `kd.runtime:RngStreams`).

    Usage: `return {"__qualname__": konfig.export_qualname(self), "a": self.a}`.
    """
    return _qualname(type(obj))


def _qualname(obj: Any) -> str:
    """`"module:Qual.name"` of a class or function, checked to lead back to `obj`."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise _NotExportable(obj, "it is not importable by name (a lambda or a local class or function)")
    bound_to = getattr(obj, "__self__", None)
    if bound_to is not None and not isinstance(bound_to, (type, types.ModuleType)):
        raise _NotExportable(obj, f"it is a method bound to {bound_to!r}, which an import cannot rebuild")
    found: Any = sys.modules.get(module)
    for attr in qualname.split("."):
        found = getattr(found, attr, None)
    if found is not obj and found != obj:
        raise _NotExportable(obj, f"`{module}:{qualname}` does not lead back to it")
    head = qualname.split(".", 1)[0]
    return f"{_public_module(module, head, getattr(sys.modules[module], head))}:{qualname}"


def _public_module(module: str, head: str, value: Any) -> str:
    """`module`, or where a part of it is private (`kd.runtime._rngs`, `optax._src.alias`) the deepest package
    above that part holding the same `value` under the name `head` (`kd.runtime`, `optax`): the name users
    import, which still leads to it after the library moves it between its private modules. Only names a
    package already holds count (no module `__getattr__` is called: it may import, or warn of a deprecation)."""
    parts = module.split(".")
    private = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
    for end in range(private or 0, 0, -1):
        package = sys.modules.get(".".join(parts[:end]))
        if package is not None and vars(package).get(head) is value:
            return ".".join(parts[:end])
    return module


class _NotExportable(Exception):
    def __init__(self, value: Any, reason: str = "") -> None:
        self.value = value
        self.reason = reason
        self.path: list[Any] = []


def export(obj: Any) -> Any:
    """Turns a live object into JSON data (`json.dumps` writes it) that `konfig.resolve` builds back.

    Usage: `data = konfig.export(model_config_dataclass)`; `konfig.ConfigDict(data)` to edit it.
    """
    try:
        return _json_data(_Exporter().value(obj))
    except RecursionError:
        raise NestingError(
            f"konfig.export: {type(obj).__qualname__} object {_short_repr(obj)} holds objects nested deeper "
            f"than konfig can follow within Python's recursion limit ({sys.getrecursionlimit()})."
        ) from None
    except _NotExportable as e:
        path = format_path(tuple(reversed(e.path)), root="obj")
        kind = type(e.value)
        reason = e.reason or (
            f"konfig does not know how to export {kind.__module__}.{kind.__qualname__}; give it a "
            "`__konfig_export__(self)` method returning "
            '`{"__qualname__": konfig.export_qualname(self), **constructor_arguments}`'
        )
        raise ConfigValueError(f"{path}: cannot export {e.value!r}: {reason}.") from None


def _json_data(value: Any) -> Any:
    """The JSON data of an exported config value (a node's own data: the exporter's nodes are new)."""
    if type(value) is ConfigDict:
        return encode(value)
    if value is None or type(value) in (str, int, float, bool):
        return value
    return encode(ConfigDict._raw({"value": value}, None))["value"]  # Markers read without the version.


def _short_repr(obj: Any) -> str:
    import reprlib

    try:
        return reprlib.repr(obj)
    except Exception:  # A repr that fails (or recurses) is left out.
        return f"at {id(obj):#x}"


class _Exporter:
    __slots__ = ("active", "memo")

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, ConfigDict]] = {}  # keeps the object alive with its node
        self.active: set[int] = set()

    def value(self, obj: Any) -> Any:
        t = type(obj)
        if t in LEAF_TYPES:
            return obj
        if t is list:
            return self.items(obj, list)
        if t is tuple:
            return self.items(obj, tuple)
        key = id(obj)
        seen = self.memo.get(key)
        if seen is not None:
            return seen[1]
        if key in self.active:
            raise _NotExportable(obj, "it contains itself (a cycle cannot be rebuilt by calls)")
        self.active.add(key)
        result = self.convert(obj, t)
        self.active.discard(key)
        if type(result) is ConfigDict:
            self.memo[key] = (obj, result)
        return result

    def items(self, items: Any, kind: type) -> Any:
        key = id(items)
        if key in self.active:
            raise _NotExportable(items, "it contains itself")
        self.active.add(key)
        out = []
        for i, item in enumerate(items):
            try:
                out.append(self.value(item))
            except _NotExportable as e:
                e.path.append(i)
                raise
        self.active.discard(key)
        return kind(out)

    def fields(self, pairs: Any) -> dict[Any, Any]:
        out = {}
        for k, v in pairs:
            try:
                out[k] = self.value(v)
            except _NotExportable as e:
                e.path.append(k)
                raise
        return out

    def node(self, qualname: str, fields: dict[Any, Any], target: Any = None) -> ConfigDict:
        return build_node({QUALNAME: qualname, **fields}, None, target)

    def convert(self, obj: Any, t: type) -> Any:
        hook = getattr(t, "__konfig_export__", None)
        if hook is not None and not isinstance(obj, type):
            return self.custom(obj, hook(obj))
        if isinstance(obj, ConfigDict):
            return obj
        array = self.array_like(obj, t)
        if array is not None:
            return array
        dataclass_fields = getattr(t, "__dataclass_fields__", None)
        if dataclass_fields is not None and not isinstance(obj, type):
            import dataclasses

            pairs = [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init]
            return self.node(_qualname(t), self.fields(pairs), t)
        if isinstance(obj, tuple) and hasattr(t, "_fields"):  # named tuple
            return self.node(_qualname(t), self.fields(zip(t._fields, obj)), t)
        if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
            return ConfigDict._raw({CONST: _qualname(obj)}, None)
        enum = sys.modules.get("enum")
        if enum is not None and isinstance(obj, enum.Enum):
            name = getattr(obj, "name", None)
            if name is not None and getattr(t, name, None) is obj:
                return ConfigDict._raw({CONST: f"{_qualname(t)}.{name}"}, None)
            return self.node(_qualname(t), {"0": self.value(obj.value)})  # `Flag.A | Flag.B`
        if t is dict or isinstance(obj, Mapping):
            return self.mapping(obj, t)
        if t is set or t is frozenset:
            if all(type(item) in LEAF_TYPES for item in obj):
                return obj
            return self.node(f"builtins:{t.__name__}", {"0": self.items(list(obj), list)})
        import os

        if isinstance(obj, os.PathLike):
            return obj
        raise _NotExportable(obj)

    def custom(self, obj: Any, exported: Any) -> ConfigDict:
        if not isinstance(exported, Mapping) or QUALNAME not in exported:
            raise _NotExportable(
                obj,
                f"its `__konfig_export__()` returned {exported!r}; expected a dict with a "
                f'"__qualname__" key, e.g. {{"__qualname__": "{type(obj).__module__}:{type(obj).__qualname__}", ...}}',
            )
        fields = self.fields((k, v) for k, v in exported.items() if k != QUALNAME)
        return self.node(exported[QUALNAME], fields)

    def mapping(self, obj: Mapping[Any, Any], t: type) -> Any:
        if t is not dict:  # `OrderedDict(d)`, `Counter(d)`, `defaultdict(factory, d)`, ...
            inner = self.mapping(dict(obj), dict)
            factory = getattr(obj, "default_factory", ())
            args = {"0": inner} if factory == () else {"0": self.value(factory), "1": inner}
            return self.node(_qualname(t), args, t)
        if (
            QUALNAME not in obj
            and CONST not in obj
            and all(type(k) in LEAF_TYPES or type(k) is tuple for k in obj)
        ):
            return ConfigDict._raw(self.fields(obj.items()), None)
        # Keys a ConfigDict cannot hold: `dict([[key, value], ...])`.
        pairs = [[self.value(k), v] for k, v in obj.items()]
        for pair, (k, v) in zip(pairs, obj.items()):
            try:
                pair[1] = self.value(v)
            except _NotExportable as e:
                e.path.append(k)
                raise
        return self.node("builtins:dict", {"0": pairs})

    def array_like(self, obj: Any, t: type) -> Any:
        module = t.__module__ or ""
        root = module.partition(".")[0]
        if root == "numpy":
            if hasattr(obj, "tolist") and hasattr(obj, "shape") and t.__name__ == "ndarray":
                return self.node("numpy:asarray", {"0": obj.tolist(), "dtype": obj.dtype.name})
            if hasattr(obj, "item") and hasattr(obj, "dtype") and not hasattr(obj, "__len__"):
                return self.node(f"numpy:{obj.dtype.name}", {"0": obj.item()})
            if hasattr(obj, "kind") and hasattr(obj, "itemsize") and hasattr(obj, "name"):
                return self.node("numpy:dtype", {"0": obj.name})
        if (
            root in ("jax", "jaxlib")
            and hasattr(obj, "tolist")
            and hasattr(obj, "dtype")
            and hasattr(obj, "shape")
        ):
            return self.node("jax.numpy:asarray", {"0": obj.tolist(), "dtype": obj.dtype.name})
        return None
