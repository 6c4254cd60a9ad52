"""JSON for configs: `cfg.to_json()` / `konfig.from_json(text)`, lossless and deterministic.

    text = cfg.to_json()                 # or cfg.to_json(indent=2)
    assert konfig.from_json(text) == cfg

Format (version 1). The root object starts with `"__konfig_version__": 1`.
Nodes use Kauldron's keys, so Kauldron's JSON loads too:

* call / constant nodes: `{"__qualname__": "mod:Attr", "0": arg0, "kw": v}`,
  `{"__const__": "mod:Attr"}`; other `ConfigDict`s are JSON objects.
* a node present several times (or in a cycle) is written once with
  `"__id__": n` first; its other occurrences are `{"__id__": n}`.
* a key that is not a `str` is written `"__raw__=<repr>"` (`"__raw__=1"`),
  read back with `ast.literal_eval`; a `str` key that would be mistaken for a
  marker is escaped the same way.

Where Kauldron is lossy, konfig writes a one-key marker object:
`{"__tuple__": [...]}`, `{"__set__": [...]}` / `{"__frozenset__": [...]}`
(items sorted: `str`s or `int`s by value, mixed items by their JSON text),
`{"__bytes__": "<base64>"}`,
`{"__slice__": [start, stop, step]}`, `{"__range__": [...]}`,
`{"__ellipsis__": null}`, `{"__complex__": [re, im]}`,
`{"__path__": "a/b", "type": "pathlib:PurePosixPath"}`,
placeholders `{"__placeholder__": "builtins:int", "default": v, "required": b}`,
and references: `{"__ref__": ["a", 0]}` (a path from the JSON root) or, when
the reference's root is another node, `{"__ref__": [...], "__root__": node}`;
operations `{"__op__": "add", "args": [...], "kwargs": {...}}` (a function
called by `konfig.ref_fn` is written as a constant node, and read back as the
function when its module is already imported).

Loading imports nothing and calls nothing, so untrusted JSON can be loaded
and then checked with `konfig.resolve(cfg, allowed=[...])`.
"""

from __future__ import annotations

from ._config_dict import CONST, ConfigDict
from ._placeholder import Placeholder
from ._refs import OpRef, PathRef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FORMAT_VERSION", "JsonFormatError", "decode", "encode", "from_dict", "from_json", "to_json"]

FORMAT_VERSION = 1
VERSION_KEY = "__konfig_version__"
ID_KEY = "__id__"
RAW_PREFIX = "__raw__="

_TUPLE, _SET, _FROZENSET = "__tuple__", "__set__", "__frozenset__"
_BYTES, _SLICE, _RANGE, _ELLIPSIS = "__bytes__", "__slice__", "__range__", "__ellipsis__"
_COMPLEX, _PATH, _PLACEHOLDER = "__complex__", "__path__", "__placeholder__"
_REF, _ROOT, _OP = "__ref__", "__root__", "__op__"
_MARKERS = frozenset(
    {_TUPLE, _SET, _FROZENSET, _BYTES, _SLICE, _RANGE, _ELLIPSIS, _COMPLEX, _PATH, _PLACEHOLDER, _REF, _OP}
)
# `str` keys of a ConfigDict that must be escaped with `__raw__=` to be read back as keys.
_RESERVED_KEYS = _MARKERS | {ID_KEY, VERSION_KEY, _ROOT}

_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})


class JsonFormatError(ValueError):
    """The text is not konfig (or Kauldron) config JSON, or was written by a newer konfig."""


class _Unserializable(Exception):
    """Internal: carries the (reversed) path of a value that has no JSON form."""

    def __init__(self, value: Any, reason: str = "") -> None:
        self.value = value
        self.reason = reason
        self.path: list[Any] = []


# --- encoding -----------------------------------------------------------------------


def to_json(value: Any, **dumps_kwargs: Any) -> str:
    """Serialises a config to konfig JSON; keyword arguments go to `json.dumps`.

    Usage: `path.write_text(cfg.to_json(indent=2))`.
    """
    if not dumps_kwargs and type(value) is ConfigDict:
        from ._json_writer import write_default

        text = write_default(value)
        if text is not None:
            return text
    import json

    # The encoded data is a tree (repeated nodes became `{"__id__": n}`), so the
    # encoder's circular-reference bookkeeping is pure overhead.
    dumps_kwargs["check_circular"] = False
    return json.dumps(encode(value), **dumps_kwargs)


def encode(value: Any) -> Any:
    """The JSON data (dicts, lists, scalars) of a config, with the version field at the root.

    Nodes of scalars are the config's own field dicts, not copies: read the result, never
    change it.
    """
    data = _Encoder(value).encode(value)
    if type(data) is dict:
        return {VERSION_KEY: FORMAT_VERSION, **data}
    return {VERSION_KEY: FORMAT_VERSION, _ROOT: data}


class _Encoder:
    """Turns a config into JSON data; `value`, `node` and `sequence` are closures for speed."""

    __slots__ = ("borrowed", "next_id", "node", "nodes", "root", "sequence", "shared", "value")

    def __init__(self, root: Any) -> None:
        self.root = root
        # Nodes are known by their `_fields` dict, so plain dicts (viewed as nodes) work alike.
        self.shared: dict[int, int] = {}  # id(fields) -> __id__
        self.next_id = 1
        # id(fields) -> the copy with `__id__` of a shared node first written as its own fields
        self.borrowed: dict[int, dict[str, Any]] = {}
        # id(fields) -> its JSON object
        nodes: dict[int, dict[str, Any]] = {}
        self.nodes = nodes
        # The hot paths are closures over locals: no attribute lookups per node or field.
        get = nodes.get
        scalars = _JSON_SCALARS
        plain_keys = _PLAIN_KEYS
        config_dict = ConfigDict
        other = self.other
        reference = self.reference

        def value(v: Any) -> Any:
            t = type(v)
            if t in scalars:
                return v
            if t is config_dict:
                return node(v)
            if t is list:
                return sequence(v)
            if t is tuple:
                return {_TUPLE: sequence(v)}
            return other(v, t)

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
            for k, v in fields.items():
                if k not in plain_keys and not _is_plain_key(k):
                    odd_keys = True
                t = type(v)
                if t in scalars:
                    continue
                try:
                    out[k] = node(v) if t is config_dict else value(v)
                except _Unserializable as e:
                    e.path.append(k)
                    raise
            if odd_keys:
                _Encoder.encode_keys(out)
            return out

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
                except _Unserializable as e:
                    e.path.append(i)
                    raise
            return out

        self.value = value
        self.node = node
        self.sequence = sequence

    def encode(self, value: Any) -> Any:
        try:
            data = self.value(value)
        except _Unserializable as e:
            raise _unserializable_error(e) from None
        except RecursionError:
            raise _unserializable_error(
                _Unserializable(value, "it is nested too deeply, or a list or tuple contains itself")
            ) from None
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

    @staticmethod
    def encode_keys(out: dict[Any, Any]) -> None:
        """Rewrites non-str keys and marker-like str keys as `__raw__=<repr>`, in place."""
        items = list(out.items())
        out.clear()
        for k, v in items:
            if type(k) is not str or k in _RESERVED_KEYS or k[:8] == RAW_PREFIX:
                k = _encode_key(k)
            out[k] = v

    def reference(self, fields: dict[Any, Any], seen: dict[str, Any]) -> dict[str, Any]:
        """A repeated node: give its first occurrence an `__id__` (first key) and point to it."""
        node_id = self.shared.get(id(fields))
        if node_id is None:
            node_id = self.shared[id(fields)] = self.next_id
            self.next_id += 1
            if seen is fields:  # Written as the config's own dict, which must not change.
                self.nodes[id(fields)] = self.borrowed[id(fields)] = {ID_KEY: node_id, **fields}
                return {ID_KEY: node_id}
            items = list(seen.items())
            seen.clear()
            seen[ID_KEY] = node_id
            seen.update(items)
        return {ID_KEY: node_id}

    def other(self, value: Any, t: type) -> Any:
        if isinstance(value, ConfigDict):
            return self.node(value)
        if t is dict:  # `konfig.to_json(plain_dict)`, e.g. parsed JSON or `cfg.to_dict()`
            return self.node(ConfigDict._raw(value, None))
        if t is PathRef:
            out: dict[str, Any] = {_REF: self.sequence(value._konfig_path)}
            root = value._konfig_root
            if root is not self.root:
                out[_ROOT] = self.value(root)
            return out
        if t is OpRef:
            out = {_OP: value._konfig_op, "args": self.op_args(value)}
            if value._konfig_kwargs:
                out["kwargs"] = {k: self.value(v) for k, v in value._konfig_kwargs.items()}
            return out
        if t is Placeholder:
            return {
                _PLACEHOLDER: _type_name(value.type),
                "default": self.value(value.default),
                "required": value.required,
            }
        if t is bytes:
            import base64

            return {_BYTES: base64.b64encode(value).decode("ascii")}
        if t is set or t is frozenset:
            import json

            items = [self.value(v) for v in value]
            kinds = set(map(type, items))
            if kinds == {str} or kinds == {int}:
                items.sort()  # Sorted for deterministic output; plain order when it is total.
            else:
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return {_SET if t is set else _FROZENSET: items}
        if t is slice:
            return {_SLICE: [self.value(value.start), self.value(value.stop), self.value(value.step)]}
        if t is range:
            return {_RANGE: [value.start, value.stop, value.step]}
        if value is ...:
            return {_ELLIPSIS: None}
        if t is complex:
            return {_COMPLEX: [value.real, value.imag]}
        import os

        if isinstance(value, os.PathLike):
            return {_PATH: os.fspath(value), "type": f"{t.__module__}:{t.__qualname__}"}
        if t is list or t is tuple or isinstance(value, (list, tuple)):
            return self.sequence(value) if isinstance(value, list) else {_TUPLE: self.sequence(value)}
        raise _Unserializable(value)

    def op_args(self, ref: OpRef) -> list[Any]:
        args = ref._konfig_args
        if ref._konfig_op == "call" and args and not _is_config_value(args[0]):
            # `konfig.ref_fn(fn, ...)`: a module-level function is written as a constant node.
            return [{CONST: _function_name(args[0])}, *(self.value(a) for a in args[1:])]
        return [self.value(a) for a in args]


# `str` keys known to need no escaping; a set lookup is the cheapest per-field check.
_PLAIN_KEYS: set[Any] = set()


def _is_plain_key(key: Any) -> bool:
    if type(key) is not str or key in _RESERVED_KEYS or key[:8] == RAW_PREFIX:
        return False
    if len(_PLAIN_KEYS) < 100_000:
        _PLAIN_KEYS.add(key)
    return True


def _is_config_value(value: Any) -> bool:
    return isinstance(value, (ConfigDict, PathRef, OpRef))


def _function_name(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise _Unserializable(
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
    try:
        if ast.literal_eval(text) == key:
            return RAW_PREFIX + text
    except (ValueError, SyntaxError):
        pass
    raise _Unserializable(
        key, "a key must be a str or a Python literal (int, float, bool, None, tuple, bytes)"
    )


def _unserializable_error(e: _Unserializable) -> TypeError:
    from ._errors import ConfigValueError
    from ._paths import format_path

    path = format_path(tuple(_decode_key(k) if isinstance(k, str) else k for k in reversed(e.path)))
    kind = type(e.value)
    reason = (
        e.reason or "it has no JSON form (configs hold plain values, ConfigDicts, refs and captured imports)"
    )
    return ConfigValueError(
        f"{path}: cannot write {kind.__module__}.{kind.__qualname__} {e.value!r} to JSON: {reason}."
    )


# --- decoding -----------------------------------------------------------------------


def from_json(text: str | bytes) -> Any:
    """Reads konfig JSON (or Kauldron's) back into a config; imports and calls nothing.

    Usage: `cfg = konfig.from_json(path.read_text())`.
    """
    import json

    try:
        data = json.loads(text)
    except ValueError as e:
        raise JsonFormatError(f"Not JSON: {e}") from e
    return decode(data)


def decode(data: Any) -> Any:
    """Turns parsed JSON data (or a plain dict with `__qualname__` nodes) into config values.

    `konfig.resolve` uses it for plain dicts. Usage: `cfg = decode(json.load(f))`.
    """
    if type(data) is dict and VERSION_KEY in data:
        version = data[VERSION_KEY]
        if type(version) is not int:
            raise JsonFormatError(f"`{VERSION_KEY}` must be an int, found {version!r}.")
        if version > FORMAT_VERSION:
            raise JsonFormatError(
                f"This JSON is konfig format version {version!r}; this konfig reads versions up to "
                f"{FORMAT_VERSION}. Upgrade konfig to load it."
            )
        data = {k: v for k, v in data.items() if k != VERSION_KEY}
        if len(data) == 1 and _ROOT in data:
            decoder = _Decoder()
            return decoder.value(data[_ROOT])
    decoder = _Decoder()
    if type(data) is dict and not _is_marker(data):
        root = decoder.root = ConfigDict._raw({}, None)
        if data.get(ID_KEY) is not None:  # The root is shared (a cycle or a ref root).
            decoder.by_id[data[ID_KEY]] = root
        decoder.node(data, root)
        return root
    return decoder.value(data)


# `konfig.resolve(plain_dict)` reads plain dicts through this name.
from_dict = decode


def _is_marker(data: dict[str, Any]) -> bool:
    for key in data:
        return key in _MARKERS
    return False


class _Decoder:
    __slots__ = ("by_id", "pending_refs", "root")

    def __init__(self) -> None:
        self.root: ConfigDict | None = None
        self.by_id: dict[Any, ConfigDict] = {}
        self.pending_refs: list[tuple[list[Any], int, Any]] = []

    def value(self, data: Any) -> Any:
        t = type(data)
        if t is dict:
            return self.mapping(data)
        if t is list:
            return [self.value(v) if type(v) in _CONTAINERS else v for v in data]
        if t is tuple:  # Plain Python dicts given to `konfig.resolve` may hold tuples.
            return tuple(self.value(v) for v in data)
        return data

    def mapping(self, data: dict[str, Any]) -> Any:
        if not data:
            return ConfigDict._raw({}, None)
        first = next(iter(data))
        if first in _MARKERS:
            return self.marker(first, data)
        node_id = data.get(ID_KEY)
        if node_id is not None:
            if type(node_id) is not int:
                raise JsonFormatError(f"Malformed node {data!r}: `__id__` must be an int.")
            existing = self.by_id.get(node_id)
            if existing is not None:  # A later occurrence (Kauldron repeats the content).
                if not existing._fields and len(data) > 1:  # It was named before its content.
                    self.node(data, existing)
                return existing
            node = self.by_id[node_id] = ConfigDict._raw({}, None)
            self.node(data, node)
            return node
        node = ConfigDict._raw({}, None)
        self.node(data, node)
        return node

    def node(self, data: dict[str, Any], node: ConfigDict) -> None:
        fields = node._fields
        for k, v in data.items():
            if type(k) is str and k[:2] == "__":  # Plain dicts given to `resolve` may have other keys.
                if k == ID_KEY:
                    continue
                if k[:8] == RAW_PREFIX:
                    k = _decode_key(k)
            t = type(v)
            fields[k] = self.mapping(v) if t is dict else (self.value(v) if t is list else v)

    def marker(self, kind: str, data: dict[str, Any]) -> Any:
        payload = data[kind]
        try:
            if kind == _TUPLE:
                return tuple(self.value(payload))
            if kind == _REF:
                if _ROOT in data:
                    root = self.value(data[_ROOT])
                else:
                    root = self.root
                    if root is None:
                        raise JsonFormatError(
                            "a reference from the JSON root, but the root is not a config node"
                        )
                if type(payload) is not list:
                    raise JsonFormatError(
                        f"Malformed {kind} value {data!r}: the path must be a list of keys."
                    )
                return PathRef(root, tuple(self.value(payload)))
            if kind == _OP:
                kwargs = {k: self.value(v) for k, v in data.get("kwargs", {}).items()}
                args = self.value(data["args"])
                if payload == "call" and args:
                    args[0] = _loaded_function(args[0])
                return OpRef(payload, tuple(args), kwargs)
            if kind == _SET:
                return set(self.value(payload))
            if kind == _FROZENSET:
                return frozenset(self.value(payload))
            if kind == _BYTES:
                import base64

                return base64.b64decode(payload, validate=True)
            if kind == _SLICE:
                return slice(*self.value(payload))
            if kind == _RANGE:
                return range(*payload)
            if kind == _ELLIPSIS:
                return ...
            if kind == _COMPLEX:
                return complex(*payload)
            if kind == _PATH:
                return _path_type(data.get("type", ""))(payload)
            if kind == _PLACEHOLDER:
                return Placeholder(
                    _placeholder_type(payload), self.value(data.get("default")), data.get("required", False)
                )
        except JsonFormatError:
            raise
        except (TypeError, ValueError, KeyError) as e:
            raise JsonFormatError(f"Malformed {kind} value {data!r}: {e}") from e
        raise AssertionError(kind)


def _loaded_function(node: Any) -> Any:
    """The function a `konfig.ref_fn` constant names, if its module is already imported.

    Loading never imports; a module not yet imported keeps the constant node,
    which `konfig.resolve` imports (and safe mode checks) like any other.
    """
    if type(node) is not ConfigDict or len(node._fields) != 1 or CONST not in node._fields:
        return node
    import sys

    module, _, attrs = str(node._fields[CONST]).partition(":")
    obj: Any = sys.modules.get(module)
    for attr in attrs.split(".") if attrs else ():
        obj = getattr(obj, attr, None) if obj is not None else None
    return obj if obj is not None and callable(obj) else node


def _decode_key(key: str) -> Any:
    if not key.startswith(RAW_PREFIX):
        return key
    import ast

    try:
        return ast.literal_eval(key[len(RAW_PREFIX) :])
    except (ValueError, SyntaxError) as e:
        raise JsonFormatError(f"Key {key!r} is not `__raw__=` followed by a Python literal.") from e


def _path_type(name: str) -> Any:
    import pathlib

    module, _, qualname = name.partition(":")
    # Only pathlib's own classes are rebuilt exactly; loading never imports other modules.
    if module == "pathlib" and qualname in (
        "Path",
        "PosixPath",
        "WindowsPath",
        "PurePath",
        "PurePosixPath",
        "PureWindowsPath",
    ):
        cls = getattr(pathlib, qualname)
        if qualname in ("PosixPath", "WindowsPath") and cls is not type(pathlib.Path()):
            return getattr(pathlib, "Pure" + qualname)
        return cls
    return pathlib.PurePosixPath


def _placeholder_type(name: Any) -> Any:
    if not isinstance(name, str):
        raise JsonFormatError(f"placeholder type {name!r} is not a `module:Name` string")
    module, _, qualname = name.partition(":")
    if module == "builtins":
        import builtins

        found = getattr(builtins, qualname, None)
        if isinstance(found, type):
            return found
    import sys

    # A type from a module already imported is restored; loading JSON never imports.
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None) if obj is not None else None
    return obj if isinstance(obj, type) else name
