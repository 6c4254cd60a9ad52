"""`encode`: a config as JSON data (dicts, lists, scalars) in the format of `_json_format`.

    data = encode(cfg)        # json.dumps(data) is what cfg.to_json() writes
    assert konfig.from_json(json.dumps(data)) == cfg

The general path of `konfig.to_json`: `_json_writer` writes the common shapes as text directly and
leaves everything else (odd keys, plain dicts, shared nodes, values with no JSON form) to this.
"""

from __future__ import annotations

from ._config_dict import CONST, ConfigDict, is_config_value
from ._errors import ConfigValueError, nesting_message
from ._json_format import (
    BYTES,
    COMPLEX,
    ELLIPSIS,
    FORMAT_VERSION,
    FROZENSET,
    ID_KEY,
    JSON_RAW_KEY_PREFIX,
    JSON_SCALARS,
    MAX_RAW_KEY,
    OP,
    PATH,
    PLACEHOLDER,
    PLAIN_KEYS,
    RANGE,
    REF,
    RESERVED_KEYS,
    ROOT,
    SET,
    SLICE,
    TUPLE,
    VERSION_KEY,
    is_plain_key,
)
from ._paths import format_path
from ._placeholder import Placeholder
from ._ref_value import NOT_YET, current_value
from ._refs import OpRef, PathRef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["EXPANSION_LIMIT", "Encoder", "Unserializable", "encode", "function_name"]

# Repeated nodes are written in full until the repeats add this many JSON objects (a config sharing
# nodes within nodes could otherwise grow exponentially); later repeats are `{"__id__": n}`.
EXPANSION_LIMIT = 100_000


class Unserializable(Exception):
    """Carries the (reversed) path of a value that has no JSON form."""

    def __init__(self, value: Any, reason: str = "") -> None:
        self.value = value
        self.reason = reason
        self.path: list[Any] = []


def encode(value: Any) -> Any:
    """The JSON data (dicts, lists, scalars) of a config; the version field at the root where a marker is.

    Nodes of scalars are the config's own field dicts, not copies, and a repeated node is one
    object: read the result, never change it.
    """
    encoder = Encoder(value)
    data = encoder.encode(value)
    if type(data) is dict:
        return {VERSION_KEY: FORMAT_VERSION, **data} if encoder.marked else data
    return {VERSION_KEY: FORMAT_VERSION, ROOT: data}


class Encoder:
    """Turns a config into JSON data; `value`, `node` and `sequence` are closures for speed."""

    __slots__ = (
        "active",
        "borrowed",
        "expanded",
        "marked",
        "node",
        "nodes",
        "root",
        "sequence",
        "shared",
        "value",
        "within",
    )

    def __init__(self, root: Any) -> None:
        self.root = root
        self.marked = False  # A konfig marker was written: the root gets the version field.
        self.within: set[int] | None = None  # ids of the nodes of the written config (`inside`)
        # Nodes are known by their `_fields` dict, so plain dicts (viewed as nodes) work alike.
        self.shared: dict[int, int] = {}  # id(fields) -> __id__
        self.expanded = 0  # JSON objects that repeated nodes added, up to EXPANSION_LIMIT
        # id(fields) -> the copy (given the `__id__` at the end) of a shared node first written as its
        # own fields
        self.borrowed: dict[int, dict[str, Any]] = {}
        self.active: set[int] = set()  # id(fields) of the nodes being written (a repeat inside is a cycle)
        self.nodes: dict[int, dict[str, Any]] = {}  # id(fields) -> its JSON object
        self.value, self.node, self.sequence = self.writers()

    def writers(
        self,
    ) -> tuple[Callable[[Any], Any], Callable[[ConfigDict], dict[str, Any]], Callable[[Any], list[Any]]]:
        """`value`, `node` and `sequence`: closures over locals, no attribute look-ups per node or field."""
        scalars = JSON_SCALARS
        config_dict = ConfigDict
        other = self.other

        def value(v: Any) -> Any:
            t = type(v)
            if t in scalars:
                return v
            if t is config_dict:
                return node(v)
            if t is list:
                return sequence(v)
            if t is tuple:
                self.marked = True
                return {TUPLE: sequence(v)}
            return other(v, t)

        def sequence(items: list[Any] | tuple[Any, ...]) -> list[Any]:
            out: list[Any] = []
            append = out.append
            for i, v in enumerate(items):
                t = type(v)
                if t in scalars:
                    append(v)
                    continue
                try:
                    append(node(v) if t is config_dict else value(v))
                except Unserializable as e:
                    e.path.append(i)
                    raise
            return out

        node = self.node_writer(value)  # `value` and `sequence` call it: bound before they run.
        return value, node, sequence

    def node_writer(self, value: Callable[[Any], Any]) -> Callable[[ConfigDict], dict[str, Any]]:
        """`node`: a node's JSON object (its own fields dict where all are scalars), a closure over locals."""
        active, nodes = self.active, self.nodes
        get = nodes.get
        scalars = JSON_SCALARS
        plain_keys = PLAIN_KEYS
        config_dict = ConfigDict
        reference = self.reference
        encode_keys = self.encode_keys

        def node(cfg: ConfigDict) -> dict[str, Any]:
            fields = cfg._fields
            key = id(fields)
            seen = get(key)
            if seen is not None:
                return reference(fields, seen)
            for k, v in fields.items():
                if type(v) not in scalars or k not in plain_keys:
                    break
            else:  # Scalars under known keys (most nodes): written as they are, no copy.
                nodes[key] = fields
                return fields
            out = nodes[key] = fields.copy()  # Scalars stay; the rest is replaced below.
            odd_keys = False
            active.add(key)
            for k, v in fields.items():
                if k not in plain_keys and not is_plain_key(k):
                    odd_keys = True
                t = type(v)
                if t in scalars:
                    continue
                try:
                    out[k] = node(v) if t is config_dict else value(v)
                except Unserializable as e:
                    e.path.append(k)
                    raise
            active.discard(key)
            if odd_keys:
                encode_keys(out)
            return out

        return node

    def encode(self, value: Any) -> Any:
        try:
            data = self.value(value)
        except Unserializable as e:
            raise _unserializable_error(e) from None
        except RecursionError:
            raise ConfigValueError(nesting_message(value, "This config (written to JSON)")) from None
        if self.shared:
            nodes = self.nodes
            for key, node_id in self.shared.items():
                nodes[key][ID_KEY] = node_id  # Last, as Kauldron writes it (a node's keys are all in).
        return self.place_borrowed_copies(data) if self.borrowed else data

    def place_borrowed_copies(self, data: Any) -> Any:
        """Puts each shared node's copy (with its `__id__`) where its own fields were written."""
        copies = self.borrowed
        stack = [data]
        while stack:
            container = stack.pop()
            for k, v in container.items() if type(container) is dict else enumerate(container):
                t = type(v)
                if t is dict:
                    copy = copies.get(id(v))
                    if copy is None:
                        stack.append(v)
                    else:
                        container[k] = copy  # Only scalars inside: nothing below to visit.
                elif t is list:
                    stack.append(v)
        return copies.get(id(data), data)

    def encode_keys(self, out: dict[Any, Any]) -> None:
        """Rewrites non-str keys and marker-like str keys as `__raw__=<repr>`, in place."""
        items = list(out.items())
        out.clear()
        for k, v in items:
            if type(k) is not str:
                k = _encode_key(k)
            elif k in RESERVED_KEYS or k[:8] == JSON_RAW_KEY_PREFIX:
                self.marked = True
                k = _encode_key(k)
            out[k] = v

    def reference(self, fields: dict[Any, Any], seen: dict[str, Any]) -> dict[str, Any]:
        """A repeated node: its JSON object again (the `__id__` is added at the end), or `{"__id__": n}`."""
        key = id(fields)
        node_id = self.shared.get(key)
        if node_id is None:
            node_id = self.shared[key] = len(self.shared)
            if seen is fields:  # Written as the config's own dict, which must not change: a copy.
                seen = self.nodes[key] = self.borrowed[key] = dict(fields)
        if key in self.active or not self.expand(seen):
            self.marked = True
            return {ID_KEY: node_id}
        return seen

    def inside(self, node: Any) -> bool:
        """Whether `node` is part of the config being written (its nodes are listed on first use)."""
        if self.within is None:
            within = self.within = set()
            stack = [self.root]
            while stack:
                v = stack.pop()
                if isinstance(v, ConfigDict) or type(v) is dict:
                    if id(v) not in within:
                        within.add(id(v))
                        stack.extend((v._fields if type(v) is not dict else v).values())
                elif type(v) is list or type(v) is tuple:
                    stack.extend(v)
        return id(node) in self.within

    def expand(self, data: dict[str, Any]) -> bool:
        """Counts the JSON objects one more copy of `data` writes; False once past EXPANSION_LIMIT."""
        room = EXPANSION_LIMIT - self.expanded
        stack: list[Any] = [data]
        count = 0
        while stack and count <= room:
            container = stack.pop()
            if type(container) is dict:
                count += 1
                stack.extend(v for v in container.values() if type(v) is dict or type(v) is list)
            else:
                stack.extend(v for v in container if type(v) is dict or type(v) is list)
        if count > room:
            self.expanded = EXPANSION_LIMIT
            return False
        self.expanded += count
        return True

    def other(self, value: Any, t: type) -> Any:
        if isinstance(value, ConfigDict):
            return self.node(value)
        if t is dict:  # `konfig.to_json(plain_dict)`, e.g. parsed JSON or `cfg.to_dict()`
            return self.node(ConfigDict._raw(value, None))
        if isinstance(value, list):
            return self.sequence(value)
        if t is PathRef:
            root = value._konfig_root
            if root is not self.root and not self.inside(root):
                # The config it follows is not written (`konfig.ref_copy(train_ds).to_json()`): the link
                # cannot survive, so its value is written, as Kauldron does.
                current = current_value(value, ConfigDict)
                if current is not NOT_YET:
                    return self.value(current)
            self.marked = True
            out: dict[str, Any] = {REF: self.sequence(value._konfig_path)}
            if root is not self.root:
                out[ROOT] = self.value(root)
            return out
        self.marked = True  # Everything else is written as a marker.
        if t is OpRef:
            out = {OP: value._konfig_op, "args": self.op_args(value)}
            if value._konfig_kwargs:
                out["kwargs"] = {k: self.value(v) for k, v in value._konfig_kwargs.items()}
            return out
        if t is Placeholder:
            return {
                PLACEHOLDER: _type_name(value.type),
                "default": self.value(value.default),
                "required": value.required,
            }
        if t is bytes:
            import base64

            return {BYTES: base64.b64encode(value).decode("ascii")}
        if t is set or t is frozenset:
            import json

            items = [self.value(v) for v in value]
            kinds = set(map(type, items))
            if kinds == {str} or kinds == {int}:
                items.sort()  # Sorted for deterministic output; plain order when it is total.
            else:
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return {SET if t is set else FROZENSET: items}
        if t is slice:
            return {SLICE: [self.value(value.start), self.value(value.stop), self.value(value.step)]}
        if t is range:
            return {RANGE: [value.start, value.stop, value.step]}
        if value is ...:
            return {ELLIPSIS: None}
        if t is complex:
            return {COMPLEX: [value.real, value.imag]}
        import os

        if isinstance(value, os.PathLike):
            return {PATH: os.fspath(value), "type": f"{t.__module__}:{t.__qualname__}"}
        if isinstance(value, tuple):
            return {TUPLE: self.sequence(value)}
        raise Unserializable(value)

    def op_args(self, ref: OpRef) -> list[Any]:
        args = ref._konfig_args
        if ref._konfig_op == "call" and args and not is_config_value(args[0]):
            # `konfig.ref_fn(fn, ...)`: a module-level function is written as a constant node.
            return [{CONST: function_name(args[0])}, *(self.value(a) for a in args[1:])]
        return [self.value(a) for a in args]


def function_name(fn: Any) -> str:
    """`"module:qualname"` of a `konfig.ref_fn` function, written as a constant node; `Unserializable`
    for a lambda or a local function, which cannot be imported back."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise Unserializable(
            fn, "a `konfig.ref_fn` function must be importable (module level, not a lambda or local function)"
        )
    return f"{module}:{qualname}"


def _type_name(t: Any) -> str:
    if isinstance(t, str):
        return t
    return f"{t.__module__}:{t.__qualname__}"


def _key_literal(key: Any) -> str:
    """`repr(key)`, but infinite floats as `1e999` so that `ast.literal_eval` reads them back."""
    t = type(key)
    if t is float and key in (_INF, -_INF):
        return "1e999" if key > 0 else "-1e999"
    if t is tuple:
        items = [_key_literal(k) for k in key]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return repr(key)


_INF = float("inf")


def _encode_key(key: Any) -> str:
    import ast

    text = _key_literal(key)
    if len(text) > MAX_RAW_KEY:
        raise Unserializable(
            key,
            f"a key that is not a str is written as its Python literal, of at most {MAX_RAW_KEY} characters",
        )
    try:
        if ast.literal_eval(text) == key:
            return JSON_RAW_KEY_PREFIX + text
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    raise Unserializable(
        key, "a key must be a str or a Python literal (int, float, bool, None, tuple, bytes)"
    )


def _unserializable_error(e: Unserializable) -> TypeError:
    path = format_path(tuple(reversed(e.path)))  # the config's own keys
    kind = type(e.value)
    reason = (
        e.reason or "it has no JSON form (configs hold plain values, ConfigDicts, refs and captured imports)"
    )
    return ConfigValueError(
        f"{path}: cannot write {kind.__module__}.{kind.__qualname__} {e.value!r} to JSON: {reason}."
    )
