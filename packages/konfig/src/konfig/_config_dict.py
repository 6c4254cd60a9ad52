"""`ConfigDict`: a mutable tree of plain data describing objects to build.

Data model
----------
A config is a tree of `ConfigDict`s, lists, tuples and leaves. There are
three kinds of `ConfigDict`, distinguished only by their keys:

* call node: `{"__qualname__": "module.path:Attr.sub", "0": arg0, "1": arg1,
  "kw": value}`. The module part (importable with `importlib`) comes before
  `:`, the attribute path after it. Positional arguments are stored under the
  string keys `"0"`, `"1"`, ... (contiguous, inserted before keywords by
  capture); `cfg[0]`, `cfg[-1]` map integers to them on call nodes,
  `cfg[num_args] = x` appends one, and when the target's signature is known
  `cfg.features` reads/writes the positional argument that fills `features`.
  In paths (`_paths`) positional arguments are `int` keys: `("opt", 1, "lr")`.
* constant node: `{"__const__": "module:Attr"}`, an object used without a
  call (enum member, function, class). A module alone is `"module.path"`.
* plain mapping: any other `ConfigDict` (keys are usually `str`).

Fields live in the insertion-ordered dict `cfg._fields` (read it directly
for speed; write through `cfg[key] = value` so values are validated).
`cfg._origin` is `(filename, lineno)` of the line that created the node, or
`None`. `cfg._reached` (unset until then) is `(parent, key)`: the last
`parent.key` / `parent[key]` access that handed this node out; errors follow
these links up to name the node's path (`In cfg.model: ...`), see
`_node_path`, which also words this module's errors.

Building programmatically without capture: `make_node("optax:adam", 0.1,
b1=0.9)` or `ConfigDict({"__qualname__": "optax:adam", "0": 0.1})` (both
validate arguments only when the target module is already imported, never
importing anything); `ConfigDict({"__const__": "optax:adam"})` for a constant. Loaders that
already hold valid data may wrap a dict without any check or copy with
`ConfigDict._raw(fields, origin=None)`. Arguments are validated through
`_signature.params_for(qualname)` (cached per qualname).

Leaves are `None`, `bool`, `int`, `float`, `complex`, `str`, `bytes`,
`Ellipsis`, `slice`, `range`, `os.PathLike`, sets/frozensets of those,
`Ref`s (see `_refs`) and `Placeholder`s (see `_placeholder`). Dicts are
converted to `ConfigDict` on assignment; captured objects (`konfig.imports()`
proxies) and builtin types (`float` -> `{"__const__": "builtins:float"}`)
are converted to constant nodes; a `ConfigArgs` dataclass instance (as Kauldron) to the plain
mapping of its fields (`dataclasses.asdict`); anything else is refused.

Leaves stored as they are: `LEAF_TYPES` (`_leaf_types`); node keys: `_keys`.
Walking: `iter_leaves` (below); paths: `_paths` (`get_by_path`, `format_path`, ...);
copies (`copy.deepcopy(cfg)`, `cfg | other`): `_config_copy`, loaded on the first copy (as `copy`).
The methods `repr(cfg)`, `cfg == other` and `cfg.to_json()` are implemented by the layers
above (`_repr`, `_equality`, `_json_writer`), reached through `_layers_above`; default
values (`DEFAULTS`) are registered by `_defaults`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping

from . import _layers_above, _node_path, _signature
from ._errors import (
    ArgumentError,
    ConfigValueError,
    NestingError,
    deepest_path,
    nesting_message,
    shorten_path,
)
from ._immutable_dict import ImmutableDict
from ._json_format import VERSION_KEY
from ._keys import CONST, QUALNAME, UNION_QUALNAME, is_positional_key, num_args, path_key
from ._leaf_types import LEAF_TYPES
from ._paths import format_path
from ._placeholder import Placeholder
from ._ref_value import NOT_YET, current_value
from ._refs import OpRef, PathRef, Ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    from collections.abc import Iterator
    from typing import Any

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

# qualname -> the node whose fields every new node of that qualname starts from: filled by
# `konfig.register_default_values` (`_defaults`), read when a node is created.
DEFAULTS: dict[str, ConfigDict] = {}


def caller_origin() -> tuple[str, int] | None:
    """`(filename, lineno)` of the first frame outside the konfig package."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PKG_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno)


class ConfigDict(MutableMapping):
    """A mutable, attribute-accessible tree of configurable values.

    Usage:
        cfg = konfig.ConfigDict(lr=0.1)
        cfg.model = nn.Dense(features=12)  # captured call, see konfig.imports
        cfg.model.features = 32
    """

    __slots__ = ("__weakref__", "_fields", "_origin", "_reached")

    _fields: dict[Any, Any]
    _origin: tuple[str, int] | None
    _reached: tuple[ConfigDict, Any]

    def __init__(self, init: Mapping[Any, Any] | None = None, /, **kwargs: Any) -> None:
        object.__setattr__(self, "_origin", caller_origin())
        object.__setattr__(self, "_fields", {})
        items: dict[Any, Any] = {}
        if init is not None:
            # JSON data (`ConfigDict(json.loads(text))`), as with Kauldron: `__raw__=` keys, `__id__`s.
            if type(init) is dict and _layers_above.decode_if_marked(init, self):
                if kwargs:
                    self.update(kwargs)
                return
            items.update(init._fields if isinstance(init, ConfigDict) else init)
        if kwargs:
            items.update(kwargs)
        try:
            _fill(self, items, None)
        except _node_path.BadValue as e:
            raise _node_path.value_error(e) from None
        except RecursionError:
            raise NestingError(nesting_message(items, "The value given to ConfigDict(...)")) from None

    # -- construction fast paths -------------------------------------------

    @classmethod
    def _raw(cls, fields: dict[Any, Any], origin: tuple[str, int] | None) -> ConfigDict:
        """Wraps already-valid `fields` without copying or checking them."""
        self = object.__new__(cls)
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_origin", origin)
        return self

    # -- mapping protocol --------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        fields = self._fields
        try:
            value = fields[key]
        except (KeyError, TypeError):
            value = self._stored_item(key)
        else:
            t = type(value)  # Inlined `_handed_out` (hot path).
            if t in LEAF_TYPES:
                return value
            if t is ConfigDict:
                _set_reached(value, (self, key))
            elif t is list or t is tuple:
                _node_path.last_sequence = (value, self, key)
            elif t is PathRef or t is OpRef:
                return read_ref(value)
            return value
        return read_ref(value) if type(value) is PathRef or type(value) is OpRef else value

    def _stored_item(self, key: Any) -> Any:
        """`cfg[key]` as stored: a reference is handed out as the reference (`konfig.get_by_path`)."""
        fields = self._fields
        try:
            value = fields[key]
        except KeyError:
            pass
        except TypeError:
            raise KeyError(key) from None
        else:
            return _handed_out(self, key, value)
        if QUALNAME in fields:
            if type(key) is int:
                key = self._arg_key(key)
                return _handed_out(self, key, fields[key])
            alias = self._positional_name(key)
            if alias is not None:
                return _handed_out(self, alias, fields[alias])
        raise KeyError(_node_path.missing_message(self, key)) from None

    def __setitem__(self, key: Any, value: Any) -> None:
        fields = self._fields
        if type(key) is int and QUALNAME in fields:
            key = self._arg_key(key, can_append=True)
        t = type(value)
        if not (t in LEAF_TYPES or t is ConfigDict):
            try:
                value = normalize(value)
            except _node_path.BadValue as e:
                e.path.append(path_key(fields, key))
                raise _node_path.value_error(e, _node_path.node_path(self)) from None
            except RecursionError:
                raise NestingError(nesting_message(value, f"The value set for {key!r}")) from None
        qualname = fields.get(QUALNAME)
        if qualname is not None and type(key) is str and key not in fields:
            alias = self._positional_name(key)
            if alias is not None:
                key = alias  # `node.features = 8` where `features` was given positionally.
            else:
                params = _signature.params_for(qualname)
                if params is not None:
                    try:
                        _signature.check_key(params, qualname, key, num_args(fields), fields)
                    except ArgumentError as e:
                        raise ArgumentError(
                            f"{_node_path.where(self)}{e}{_node_path.created_at(self)}"
                        ) from None
        fields[key] = value

    def __delitem__(self, key: Any) -> None:
        fields = self._fields
        if type(key) is int and QUALNAME in fields:
            key = self._arg_key(key)
        if key not in fields:
            key = self._positional_name(key) or key
        if key not in fields:
            raise KeyError(_node_path.missing_message(self, key))
        if QUALNAME in fields and type(key) is str and key.isdigit() and is_positional_key(key):
            # Shift the following positional arguments down by one.
            positional = [str(i) for i in range(num_args(fields))]
            args = [fields[k] for k in positional if k != key]
            rest = {k: v for k, v in fields.items() if k != QUALNAME and k not in positional}
            qualname = fields[QUALNAME]
            fields.clear()
            fields[QUALNAME] = qualname
            fields.update(zip(positional, args))
            fields.update(rest)
            return
        del fields[key]

    def __contains__(self, key: object) -> bool:
        fields = self._fields
        try:
            if key in fields:
                return True
        except TypeError:
            return False
        if type(key) is int and QUALNAME in fields:
            n = num_args(fields)
            return -n <= key < n
        return False

    def __iter__(self) -> Iterator[Any]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def keys(self):  # type: ignore[override]
        return self._fields.keys()

    def values(self):  # type: ignore[override]
        return self._fields.values()

    def items(self):  # type: ignore[override]
        return self._fields.items()

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Sets fields from a mapping / `(key, value)` pairs / keywords (dict.update)."""
        if (
            not isinstance(other, (Mapping, list, tuple))
            and not hasattr(other, "keys")
            and QUALNAME in self._fields
        ):
            qualname = _signature.display_name(self._fields[QUALNAME])
            raise TypeError(
                f"{_node_path.where(self)}`node.update(...)` is ConfigDict.update (it merges fields into the"
                f" config of {qualname}(...)), not a method of the object it builds. To call"
                " `update` on the built object, reference it lazily: `cfg.<path>.ref.update(...)`,"
                f" evaluated by konfig.resolve (got {type(other).__name__})."
            )
        super().update(other, **kwargs)

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except (KeyError, IndexError):
            return default

    def _positional_name(self, name: Any) -> str | None:
        """`"1"` if `name` is the parameter a node's positional argument 1 fills."""
        fields = self._fields
        qualname = fields.get(QUALNAME)
        if qualname is None or type(name) is not str:
            return None
        params = _signature.params_for(qualname)
        if params is None or (params.var_keyword and name not in params.keywords):
            return None  # With `**kwargs`, a positional-only name is a free keyword.
        try:
            index = params.positional.index(name)
        except ValueError:
            return None
        return str(index) if str(index) in fields else None

    def _arg_key(self, index: int, can_append: bool = False) -> str:
        n = num_args(self._fields)
        if index < 0:
            index += n
        if not 0 <= index < n + can_append:
            raise IndexError(
                f"{_node_path.where(self)}argument index {index} out of range: "
                f"{_signature.display_name(self._fields[QUALNAME])}() has {n} positional argument(s)"
            )
        return str(index)

    # -- attribute access --------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name in ("_fields", "_origin", "_reached"):
            raise AttributeError(name)  # Not set (yet): unpickling, never handed out.
        try:
            value = self._fields[name]
        except KeyError:
            if name[:2] == "__" and name[-2:] == "__":
                raise AttributeError(name) from None
        else:
            t = type(value)  # Inlined `_handed_out` (hot path).
            if t in LEAF_TYPES:
                return value
            if t is ConfigDict:
                _set_reached(value, (self, name))
            elif t is list or t is tuple:
                _node_path.last_sequence = (value, self, name)
            elif t is PathRef or t is OpRef:
                return read_ref(value)
            return value
        alias = self._positional_name(name)
        if alias is not None:
            value = _handed_out(self, alias, self._fields[alias])
            return read_ref(value) if type(value) is PathRef or type(value) is OpRef else value
        raise AttributeError(_node_path.missing_message(self, name))

    def __setattr__(self, name: str, value: Any) -> None:
        fields = self._fields
        # Replacing a field with a plain value (most writes) needs none of `__setitem__`'s checks.
        if name in fields and (type(value) in LEAF_TYPES or type(value) is ConfigDict):
            fields[name] = value
        else:
            self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError as e:
            raise AttributeError(*e.args) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self._fields if type(k) is str})

    # -- refs, merging, conversion -----------------------------------------

    @property
    def ref(self) -> Any:
        """Lazy reference into this config: `cfg.ref.a.b`, see `konfig.ref_fn`."""
        return PathRef(self, ())

    def get_ref(self, key: Any) -> Any:
        """`cfg.get_ref("a")` is `cfg.ref.a` (ml_collections' spelling), for a field that exists.

        Usage: `cfg.steps2 = cfg.get_ref("steps")`.
        """
        if key not in self:
            raise KeyError(_node_path.missing_message(self, key))
        return PathRef(self, (key,))

    def __or__(self, other: Any) -> Any:
        if _is_captured(other) or self._is_type_like():
            return make_node(UNION_QUALNAME, self, other)
        if not isinstance(other, Mapping):
            return NotImplemented
        from ._config_copy import copy_linked  # Loaded on the first copy, as `copy` is.

        new = copy_linked(self, ConfigDict)
        new.update(other)
        return new

    def __ror__(self, other: Any) -> Any:
        if _is_captured(other) or (other is None and self._is_type_like()):
            return make_node(UNION_QUALNAME, other, self)
        if not isinstance(other, Mapping):
            return NotImplemented
        from ._config_copy import copy_linked  # Loaded on the first copy, as `copy` is.

        new = copy_linked(self, ConfigDict)
        fields = ConfigDict(other)._fields
        fields.update(new._fields)
        object.__setattr__(new, "_fields", fields)
        return new

    def _is_type_like(self) -> bool:
        """Constant nodes and unions combine with `|` into unions (PEP 604)."""
        fields = self._fields
        return CONST in fields or fields.get(QUALNAME) == UNION_QUALNAME

    def __ior__(self, other: Any) -> ConfigDict:
        self.update(other)
        return self

    def to_dict(self) -> dict[Any, Any]:
        """Plain nested dicts/lists (refs and placeholders kept; sharing kept)."""
        memo: dict[int, Any] = {}

        def convert(value: Any) -> Any:
            if isinstance(value, ConfigDict):
                if id(value) in memo:
                    return memo[id(value)]
                out: dict[Any, Any] = {}
                memo[id(value)] = out
                for k, v in value._fields.items():
                    out[k] = convert(v)
                return out
            t = type(value)
            if t is list:
                if id(value) in memo:
                    return memo[id(value)]
                items: list[Any] = []
                memo[id(value)] = items
                items.extend(convert(v) for v in value)
                return items
            if t is tuple:
                return tuple(convert(v) for v in value)
            return value

        try:
            return convert(self)
        except RecursionError:
            raise NestingError(nesting_message(self, "The config given to `to_dict()`")) from None

    def leaves(self) -> Iterator[tuple[str, Any]]:
        """Yields `("cfg.model.layers[0].features", value)` for every leaf."""
        for path, value in iter_leaves(self):
            yield format_path(path), value

    def to_json(self, **kwargs: Any) -> str:
        """Serialises the config, see `konfig.from_json`."""
        return _layers_above.to_json(self, **kwargs)

    # -- python protocols --------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        try:
            return _layers_above.config_equal(self, other)
        except RecursionError:
            raise NestingError(nesting_message(self, "A config compared with `==`")) from None

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return _layers_above.config_repr(self)

    __str__ = __repr__

    def __copy__(self) -> ConfigDict:
        return ConfigDict._raw(dict(self._fields), self._origin)

    def __deepcopy__(self, memo: dict[int, Any]) -> ConfigDict:
        from ._config_copy import deep_copy  # Loaded on the first copy, as `copy` is.

        return deep_copy(self, memo, ConfigDict)

    def __reduce__(self) -> Any:
        # pickle saves nested values by recursing in C, where no `except` of ours can see the limit
        # being reached: a cheap probe a few levels deeper refuses, in konfig's words, first.
        try:
            isinstance(self, _RECURSION_PROBE)
        except RecursionError:
            raise NestingError(_pickle_nesting_message(self)) from None
        return (_new_empty, (), (self._fields, self._origin))

    def __setstate__(self, state: Any) -> None:
        fields, origin = state
        object.__setattr__(self, "_fields", dict(fields))
        object.__setattr__(self, "_origin", origin)


def _new_empty() -> ConfigDict:
    return ConfigDict._raw({}, None)


# `isinstance(x, ((((ConfigDict,),),),))` enters Python's recursion check once per level of tuples
# (in C, as pickle's `save` does), so it fails where 20 more levels of pickling would: before
# pickle itself fails, with room left to word the error.
_RECURSION_PROBE: Any = ConfigDict
for _ in range(20):
    _RECURSION_PROBE = (_RECURSION_PROBE,)


def _pickle_nesting_message(node: ConfigDict) -> str:
    depth, path, _ = deepest_path(node)
    return (
        "A config given to pickle is nested deeper than pickle can follow within Python's recursion "
        f"limit ({sys.getrecursionlimit()}): the node where it stopped still nests {depth} levels deep "
        f"(deepest at {shorten_path(path, root='node')})."
    )


_set_reached = ConfigDict._reached.__set__  # type: ignore[attr-defined]


def _handed_out(parent: ConfigDict, key: Any, value: Any) -> Any:
    """Records how `value` was reached (one store), for `node_path`; returns it."""
    t = type(value)
    if t is ConfigDict:
        _set_reached(value, (parent, key))
    elif t is list or t is tuple:
        _node_path.last_sequence = (value, parent, key)
    return value


def stored_item(container: Any, key: Any) -> Any:
    """`container[key]` as stored: for a `ConfigDict`, a reference is handed out as the reference.

    Usage: `old = stored_item(node, "lr")` (tools that edit or compare configs, not read values).
    """
    if type(container) is ConfigDict:
        return container._stored_item(key)
    return container[key]


def read_ref(ref: Ref) -> Any:
    """What reading a field that holds `ref` gives: its current value, or `ref` itself where only
    `konfig.resolve` can compute it (see `_ref_value`)."""
    value = current_value(ref, ConfigDict)
    return ref if value is NOT_YET else value


def is_config_value(value: Any) -> bool:
    """Whether `value` is config structure (a node or a reference) rather than an object it names.

    Usage: `if op == "call" and not is_config_value(fn): ...  # a function given to konfig.ref_fn`.
    """
    return isinstance(value, (ConfigDict, PathRef, OpRef))


def make_node(qualname: str, *args: Any, **kwargs: Any) -> ConfigDict:
    """Builds a call node `{"__qualname__": qualname, "0": ..., **kwargs}`.

    Usage: `make_node("optax:adam", learning_rate=0.1)`.
    """
    fields: dict[Any, Any] = {QUALNAME: qualname}
    for i, arg in enumerate(args):
        fields[str(i)] = arg
    fields.update(kwargs)
    return build_node(fields, caller_origin())


def build_node(fields: dict[Any, Any], origin: tuple[str, int] | None, target: Any = None) -> ConfigDict:
    """Validates and wraps `fields` of a call node (takes ownership of it).

    `target` is the real callable when known (capture), which lets its
    signature be inspected (once per qualname) even for not-yet-cached targets.
    """
    self = ConfigDict._raw({}, origin)
    try:
        _fill(self, fields, target)
    except _node_path.BadValue as e:
        raise _node_path.value_error(e) from None
    except RecursionError:
        raise NestingError(nesting_message(fields, "The arguments of this call")) from None
    return self


def _fill(self: ConfigDict, items: dict[Any, Any], target: Any) -> None:
    fields = self._fields
    qualname = items.get(QUALNAME)
    if qualname is not None and type(qualname) is not str:
        raise ConfigValueError(f"__qualname__ must be a str, got {qualname!r}")
    if qualname is not None and qualname in DEFAULTS:
        import copy

        defaults = copy.deepcopy(DEFAULTS[qualname]._fields)
        given = num_args(items)
        params = _signature.params_for(qualname, target) if given else None
        if params is not None:
            for name in params.positional[:given]:
                defaults.pop(name, None)  # `Job("/x")` overrides a default `workdir=`.
        defaults.update(items)
        items = defaults
    for key, value in items.items():
        t = type(value)
        if t in LEAF_TYPES or t is ConfigDict:
            fields[key] = value
            continue
        try:
            fields[key] = normalize(value)
        except _node_path.BadValue as e:
            e.path.append(path_key(items, key))
            raise
    if qualname is not None:
        params = _signature.params_for(qualname, target)
        if params is not None:
            try:
                _signature.check_fields(params, qualname, fields)
            except ArgumentError as e:
                raise ArgumentError(f"{e}{_node_path.created_at(self)}") from None


def normalize(value: Any) -> Any:
    """Returns `value` as configurable data, or raises `_node_path.BadValue`."""
    t = type(value)
    if t in LEAF_TYPES or t is ConfigDict:
        return value
    if t is dict:
        new = ConfigDict._raw({}, None)
        if VERSION_KEY in value:  # konfig JSON data (`cfg.a = konfig.export(obj)`): read its markers.
            if _layers_above.decode_if_marked(value, new):
                return new
            value = {k: v for k, v in value.items() if k != VERSION_KEY}
        _fill(new, value, None)
        return new
    if t is list or t is tuple:
        changed = False
        items = []
        for i, item in enumerate(value):
            ti = type(item)
            if ti in LEAF_TYPES or ti is ConfigDict:
                items.append(item)
                continue
            try:
                new_item = normalize(item)
            except _node_path.BadValue as e:
                e.path.append(i)
                raise
            changed = changed or new_item is not item
            items.append(new_item)
        return t(items) if changed else value
    if isinstance(value, (Ref, Placeholder, ConfigDict)):
        return value
    if isinstance(value, ImmutableDict):  # konfig's own frozen mapping (a resolved config's): its items, as a dict
        return normalize(dict(value))
    if t is set or t is frozenset:
        for item in value:
            if type(item) not in LEAF_TYPES:
                raise _node_path.BadValue(item)
        return value
    as_const = getattr(t, "_konfig_as_const", None)
    if as_const is not None:
        return as_const(value)
    if isinstance(value, os.PathLike):
        return value
    if isinstance(value, type) and value.__module__ == "builtins":
        return ConfigDict._raw({CONST: f"builtins:{value.__qualname__}"}, None)
    if t.__module__ == "functools" and t.__qualname__ == "partial":
        # `functools.partial(nn.Dense, features=3)` of a captured target, as Kauldron takes it: a node.
        fields = {QUALNAME: "functools:partial", "0": value.func}
        fields.update((str(i), arg) for i, arg in enumerate(value.args, 1))
        fields.update(value.keywords)
        node = ConfigDict._raw({}, None)
        _fill(node, fields, None)
        return node
    if t.__name__ == "ConfigArgs" and hasattr(t, "__dataclass_fields__"):
        # `cfg.aux = args` (Kauldron's `configargs_demo`): as Kauldron, its fields as a plain mapping
        # (`dataclasses.asdict`), which needs no import of the config file to resolve or load.
        return normalize(sys.modules["dataclasses"].asdict(value))
    raise _node_path.BadValue(value)


def unchecked_node(fields: Mapping[str, Any]) -> ConfigDict:
    """A node of `fields` whose arguments are not checked against its target's signature (read as text:
    `konfig.resolve` checks them when it builds the node)."""
    node = ConfigDict._raw({}, None)
    for key, value in fields.items():
        t = type(value)
        node._fields[key] = value if t in LEAF_TYPES or t is ConfigDict else normalize(value)
    return node


def _is_captured(value: Any) -> bool:
    return getattr(type(value), "_konfig_as_const", None) is not None


def iter_leaves(cfg: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Yields `(path, value)` for every leaf, depth first, in insertion order.

    Leaves are everything but containers: values, refs, placeholders, constant
    nodes (`{"__const__": ...}`) and the `__qualname__` of call nodes. Empty
    containers are leaves. Shared nodes appear under each of their paths, up to
    `LEAF_REPEAT_LIMIT` leaves repeated in all (then `ValueError`: nodes that each
    share the next have exponentially many paths); a cycle is not followed twice.
    """
    # Iterative (no recursion limit): a stack of (container id, iterator over its children), and one
    # list of the keys leading to the container on top (a path per container would cost memory
    # quadratic in the depth).
    ancestors: set[int] = set()
    entered: dict[int, Any] = {}  # every container walked (kept: ids stay unique during the walk)
    repeat_from = -1  # the depth of the container walked again that the walk is in, or -1
    repeats = 0  # leaves yielded again through such a container
    frames: list[tuple[int, Iterator[tuple[Any, Any]]]] = []
    keys = list(prefix)

    def enter(value: Any) -> bool:
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
        nonlocal repeat_from
        if id(value) in entered:
            if repeat_from < 0:
                repeat_from = len(frames)
        else:
            entered[id(value)] = value
        ancestors.add(id(value))
        frames.append((id(value), iter(items)))
        return True

    if not enter(cfg):
        yield prefix, cfg
        return
    while frames:
        container_id, children = frames[-1]
        for key, child in children:
            if enter(child):
                keys.append(key)
                break
            if repeat_from >= 0:
                repeats += 1
                if repeats > LEAF_REPEAT_LIMIT:
                    raise ValueError(
                        f"Cannot list the leaves: shared nodes repeat more than {LEAF_REPEAT_LIMIT:,} of them"
                        f" (at {format_path((*keys, key))}); nodes that share nodes can have exponentially many"
                        " paths (konfig.diff lists each shared node once)"
                    )
            yield (*keys, key), child
        else:
            frames.pop()
            ancestors.discard(container_id)
            if repeat_from == len(frames):
                repeat_from = -1
            if frames:
                keys.pop()


# Leaves `iter_leaves` yields again through shared nodes, in all (30 levels of `{x: b, y: b}` have 2**30).
LEAF_REPEAT_LIMIT = 10_000
