"""JSON for configs: the format, its encoder (`encode`) and `konfig.from_json`, lossless and deterministic.

    text = cfg.to_json()                 # or cfg.to_json(indent=2)
    assert konfig.from_json(text) == cfg

Format (version 1). A config of plain values is written as Kauldron writes it; where konfig
writes more (the markers below), the root object starts with `"__konfig_version__": 1`.
Nodes use Kauldron's keys, so Kauldron's JSON loads too:

* call / constant nodes: `{"__qualname__": "mod:Attr", "0": arg0, "kw": v}`,
  `{"__const__": "mod:Attr"}`; other `ConfigDict`s are JSON objects.
* a node present several times is written in full each time, with `"__id__": n` last
  (n from 0, in the order of the first repeats), as Kauldron does. Inside itself (a cycle),
  and once repeats would add more than `EXPANSION_LIMIT` objects, a repeat is written
  `{"__id__": n}` (a marker).
* a key that is not a `str` is written `"__raw__=<repr>"` (`"__raw__=1"`),
  read back with `ast.literal_eval`; a `str` key that would be mistaken for a
  marker is escaped the same way (a marker).

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

from ._config_dict import CONST, LEAF_TYPES, QUALNAME, ConfigDict, num_args
from ._errors import (
    ConfigValueError,
    JsonFormatError,
    linked_path,
    nesting_message,
    shorten_path,
    text_nesting_message,
)
from ._hash_spread import MAX_SAME_HASH, crowded_hash
from ._keys import is_positional_key
from ._paths import format_path
from ._placeholder import Placeholder
from ._ref_value import NOT_YET, current_value
from ._refs import BINARY_SYMBOLS, OPS, UNARY_SYMBOLS, OpRef, PathRef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FORMAT_VERSION", "decode", "encode", "from_dict", "from_json"]

FORMAT_VERSION = 1
VERSION_KEY = "__konfig_version__"
# Repeated nodes are written in full until the repeats add this many JSON objects (a config sharing
# nodes within nodes could otherwise grow exponentially); later repeats are `{"__id__": n}`.
EXPANSION_LIMIT = 100_000
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


class _Unserializable(Exception):
    """Internal: carries the (reversed) path of a value that has no JSON form."""

    def __init__(self, value: Any, reason: str = "") -> None:
        self.value = value
        self.reason = reason
        self.path: list[Any] = []


# --- encoding -----------------------------------------------------------------------


def encode(value: Any) -> Any:
    """The JSON data (dicts, lists, scalars) of a config; the version field at the root where a marker is.

    Nodes of scalars are the config's own field dicts, not copies, and a repeated node is one
    object: read the result, never change it.
    """
    encoder = _Encoder(value)
    data = encoder.encode(value)
    if type(data) is dict:
        return {VERSION_KEY: FORMAT_VERSION, **data} if encoder.marked else data
    return {VERSION_KEY: FORMAT_VERSION, _ROOT: data}


class _Encoder:
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
        active: set[int] = set()  # id(fields) of the nodes being written (a repeat inside is a cycle)
        self.active = active
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
        encode_keys = self.encode_keys

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
            active.add(key)
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
            active.discard(key)
            if odd_keys:
                encode_keys(out)
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
            elif k in _RESERVED_KEYS or k[:8] == RAW_PREFIX:
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
            out: dict[str, Any] = {_REF: self.sequence(value._konfig_path)}
            if root is not self.root:
                out[_ROOT] = self.value(root)
            return out
        self.marked = True  # Everything else is written as a marker.
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
        if isinstance(value, tuple):
            return {_TUPLE: self.sequence(value)}
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
    if len(text) > _MAX_RAW_KEY:
        raise _Unserializable(
            key,
            f"a key that is not a str is written as its Python literal, of at most {_MAX_RAW_KEY} characters",
        )
    try:
        if ast.literal_eval(text) == key:
            return RAW_PREFIX + text
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    raise _Unserializable(
        key, "a key must be a str or a Python literal (int, float, bool, None, tuple, bytes)"
    )


def _unserializable_error(e: _Unserializable) -> TypeError:
    path = format_path(tuple(reversed(e.path)))  # the config's own keys
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

    Malformed input (not JSON, markers with the wrong payload, odd keys, nesting deeper
    than Python's recursion limit allows) is a `JsonFormatError` naming where it is.

    Usage: `cfg = konfig.from_json(path.read_text())`.
    """
    import json

    try:
        data = json.loads(text)
    except RecursionError:
        raise JsonFormatError(text_nesting_message(text, "This JSON")) from None
    except json.JSONDecodeError as e:
        raise JsonFormatError(f"Not JSON: {e}") from e
    except ValueError as e:  # an int of more digits than Python reads, text that is not UTF-8
        raise JsonFormatError(f"Cannot read this JSON: {e}") from e
    return _decode(data, _Decoder)


def decode(data: Any) -> Any:
    """Turns parsed JSON data (or a plain dict with `__qualname__` nodes) into config values.

    `konfig.resolve` uses it for plain dicts, which may share dicts and lists (each is
    decoded once, so sharing is kept) or contain themselves. Usage: `cfg = decode(json.load(f))`.
    """
    return _decode(data, _SharingDecoder)


# `konfig.resolve(plain_dict)` reads plain dicts through this name.
from_dict = decode


def decode_if_marked(data: dict[Any, Any], root: ConfigDict) -> bool:
    """Fills the empty `root` with the config JSON data stands for; False where `data` is not JSON data
    with a marker.

    JSON data is what `json.loads` gives (dicts, lists, str, numbers, bool, None) holding a
    marker, an `__id__` or a `__raw__=` key; `konfig.ConfigDict(json.loads(text))` reads it
    through this (as Kauldron's does). Malformed markers are not JSON data: their keys stay keys.
    Usage: `if not decode_if_marked(data, cfg): ...  # fill cfg from data as it is`.
    """
    stack: list[Any] = [data]
    seen: set[int] = set()
    marked = False
    while stack:
        container = stack.pop()
        if id(container) in seen:
            continue
        seen.add(id(container))
        values = container.values() if type(container) is dict else container
        if type(container) is dict and not marked:
            for k in container:
                if type(k) is str and k[:2] == "__" and (k in _RESERVED_KEYS or k[:8] == RAW_PREFIX):
                    marked = True
                    break
        for v in values:
            t = type(v)
            if t is dict or t is list:
                stack.append(v)
            elif t not in _JSON_SCALARS:
                return False  # A config value (a node, a tuple, a reference): not JSON data.
    if not marked:
        return False
    decoder = _SharingDecoder()
    decoder.root = root
    try:
        decoded = _decode_root(data, decoder)
    except (_Malformed, JsonFormatError, RecursionError):
        root._fields.clear()
        return False
    return decoded is root


def _decode(data: Any, decoder_type: type[_Decoder]) -> Any:
    try:
        return _decode_root(data, decoder_type())
    except _Malformed as e:
        raise JsonFormatError(e.message(data)) from e.__cause__
    except RecursionError:
        raise JsonFormatError(nesting_message(data, "This JSON")) from None


def _decode_root(data: Any, decoder: _Decoder) -> Any:
    if type(data) is dict and VERSION_KEY in data:
        version = data[VERSION_KEY]
        if type(version) is not int:
            raise JsonFormatError(f"`{VERSION_KEY}` must be an int, found {_show(version)}.")
        if version > FORMAT_VERSION:
            raise JsonFormatError(
                f"This JSON is konfig format version {version!r}; this konfig reads versions up to "
                f"{FORMAT_VERSION}. Upgrade konfig to load it."
            )
        data = {k: v for k, v in data.items() if k != VERSION_KEY}
        if len(data) == 1 and _ROOT in data:
            return decoder.value(data[_ROOT])
    if type(data) is dict and not _is_marker(data):
        root = decoder.root
        if root is None:
            root = decoder.root = ConfigDict._raw({}, None)
        if decoder.memo is not None:
            decoder.memo[id(data)] = root
        node_id = data.get(ID_KEY)
        if node_id is not None:  # The root is shared (a cycle or a ref root).
            if type(node_id) is not int:
                raise _Malformed(data, f"`{ID_KEY}` must be an int, found {_show(node_id)}")
            decoder.by_id[node_id] = root
        decoder.node(data, root)
        return root
    return decoder.value(data)


def _is_marker(data: dict[str, Any]) -> bool:
    for key in data:
        return key in _MARKERS
    return False


# First characters of the keys the decoder takes as they are; it looks twice at the others:
# markers and `__raw__=` keys, and digits (ASCII or not) that may be positional arguments.
_PLAIN_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class _Decoder:
    """Turns JSON data (a tree, as `json.loads` gives it) into config values."""

    __slots__ = ("by_id", "memo", "raw_hashes", "root")

    def __init__(self) -> None:
        self.root: ConfigDict | None = None
        self.by_id: dict[Any, ConfigDict] = {}
        self.memo: dict[int, Any] | None = None  # see `_SharingDecoder`
        self.raw_hashes: dict[int, dict[int, int]] = {}  # id(object) -> hash of a `__raw__=` key -> count

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
            return self.shared(node_id, data)
        node = ConfigDict._raw({}, None)
        self.node(data, node)
        return node

    def shared(self, node_id: Any, data: dict[str, Any]) -> ConfigDict:
        """A node with an `__id__`: its first occurrence, or a later one (`{"__id__": n}`)."""
        if type(node_id) is not int:
            raise _Malformed(data, f"`{ID_KEY}` must be an int, found {_show(node_id)}")
        existing = self.by_id.get(node_id)
        if existing is not None:  # A later occurrence (Kauldron repeats the content).
            if not existing._fields and len(data) > 1:  # It was named before its content.
                self.node(data, existing)
            return existing
        node = self.by_id[node_id] = ConfigDict._raw({}, None)
        self.node(data, node)
        return node

    def node(self, data: dict[str, Any], node: ConfigDict) -> None:
        fields = node._fields
        check = False
        for k, v in data.items():
            if type(k) is str and k[:1] not in _PLAIN_FIRST:
                if k == QUALNAME:
                    if type(v) is not str:
                        raise _Malformed(
                            data, f"`{QUALNAME}` must be a `module:Name` string, found {_show(v)}"
                        )
                elif k[:2] != "__":
                    check = True  # A digit (or non-ASCII) key: a positional argument?
                elif k == ID_KEY:
                    continue
                elif k[:8] == RAW_PREFIX:
                    k = self.raw_key(k, data)
                    check = True
                elif k == CONST:
                    check = True
                # Other `__` keys are kept: plain dicts given to `resolve` may have them.
            t = type(v)
            fields[k] = self.mapping(v) if t is dict else (self.value(v) if t is list else v)
        if check:
            _check_node(fields, data)

    def raw_key(self, key: str, data: dict[str, Any]) -> Any:
        """The key a `__raw__=` key stands for; keys of one object hashing alike are refused.

        Python's `hash` is not randomised for ints (`hash(k * (2**61 - 1)) == 0`), floats,
        complex numbers and tuples of them, so input could make a dict of such keys take
        time quadratic in its size; no real config has more than a pair hashing alike.
        """
        value = _decode_key(key, data)
        counts = self.raw_hashes.get(id(data))
        if counts is None:
            counts = self.raw_hashes[id(data)] = {}
        h = hash(value)
        count = counts[h] = counts.get(h, 0) + 1
        if count > _MAX_SAME_HASH:
            raise _Malformed(
                data,
                f"more than {_MAX_SAME_HASH} of its `{RAW_PREFIX}` keys have the same hash ({_show(key)} ...)",
            )
        return value

    def marker(self, kind: str, data: dict[str, Any]) -> Any:
        extra = data.keys() - _MARKER_KEYS[kind]
        if extra:
            raise _Malformed(
                data,
                f"a `{kind}` marker has only the keys {_names(_MARKER_KEYS[kind])}; "
                f"found {_names(extra)} too",
            )
        payload = data[kind]
        try:
            value = _read_marker(self, kind, payload, data)
        except (TypeError, ValueError) as e:  # invalid base64, a zero step, a list as a key
            value = _BAD
            detail = f" ({e})"
        else:
            detail = ""
        if value is _BAD:
            found = _show(payload if len(data) == 1 else data)
            raise _Malformed(data, f"a `{kind}` marker holds {_EXPECTED[kind]}, found {found}{detail}")
        return value


def _check_node(fields: dict[Any, Any], data: dict[str, Any]) -> None:
    """Constant nodes hold only a `__const__` string; positional arguments are `"0"`, `"1"`, ..."""
    if CONST in fields:
        const = fields[CONST]
        if type(const) is not str:
            raise _Malformed(data, f"`{CONST}` must be a `module:Name` string, found {_show(const)}")
        if QUALNAME in fields:
            raise _Malformed(data, f"a node is a call (`{QUALNAME}`) or a constant (`{CONST}`), not both")
        if len(fields) > 1:
            others = [k for k in fields if k != CONST]
            raise _Malformed(data, f"a constant node holds only `{CONST}`; found {_names(others)} too")
    if QUALNAME not in fields:
        return
    if type(fields[QUALNAME]) is not str:  # written `__raw__='__qualname__'`
        raise _Malformed(
            data, f"`{QUALNAME}` must be a `module:Name` string, found {_show(fields[QUALNAME])}"
        )
    count = 0
    for k in fields:
        if type(k) is str and (k.isdigit() or (not k.isascii() and k.isnumeric())):
            if not is_positional_key(k):
                canonical = str(int(k)) if k.isdecimal() and len(k) < 100 else None
                hint = f"; write {canonical!r}" if canonical is not None else ""
                raise _Malformed(
                    data,
                    f"call node key {_show(k)} looks like a positional argument but is not one "
                    f'(positional arguments are "0", "1", ... in ASCII digits without leading zeros){hint}',
                )
            count += 1
    if count and num_args(fields) != count:
        found = sorted((k for k in fields if is_positional_key(k)), key=lambda k: (len(k), k))
        raise _Malformed(
            data,
            f'positional arguments must be "0" to "{count - 1}" without gaps, found {_names(found[:10])}'
            + (" ..." if len(found) > 10 else ""),
        )


class _SharingDecoder(_Decoder):
    """Decodes Python data, which may share dicts and lists or hold cycles: each is decoded once.

    So `konfig.resolve(plain_dict)` keeps the sharing, and its work is bounded by the
    size of the input rather than by the number of paths through it.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__()
        self.memo = {}

    def value(self, data: Any) -> Any:
        if type(data) is not list:
            return super().value(data)
        memo: dict[int, Any] = self.memo  # type: ignore[assignment]
        found = memo.get(id(data))
        if found is None:
            found = memo[id(data)] = []
            found.extend([self.value(v) if type(v) in _CONTAINERS else v for v in data])
        return found

    def mapping(self, data: dict[str, Any]) -> Any:
        memo: dict[int, Any] = self.memo  # type: ignore[assignment]
        found = memo.get(id(data))
        if found is not None:
            return found
        if not data or next(iter(data)) in _MARKERS or ID_KEY in data:
            found = memo[id(data)] = super().mapping(data)
            return found
        node = memo[id(data)] = ConfigDict._raw({}, None)  # before its fields: cycles
        self.node(data, node)
        return node


class _Malformed(Exception):
    """Internal: a malformed JSON object; `decode` adds where it is in the input."""

    def __init__(self, data: Any, text: str) -> None:
        self.data = data
        self.text = text

    def message(self, root: Any) -> str:
        path = _locate(root, self.data)
        where = "In this JSON" if path is None else f"At {shorten_path(path)}"
        return f"{where}: {self.text}."


def _locate(root: Any, target: Any) -> tuple[Any, ...] | None:
    """The keys leading from `root` to the object `target` in JSON data, found without recursion.

    Each value waiting on the stack holds a link `(parent's link, key)`, not its path: linear
    memory at any depth.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        value, link = stack.pop()
        if value is target:
            return linked_path(link)
        t = type(value)
        if (t is not dict and t is not list and t is not tuple) or id(value) in seen:
            continue
        seen.add(id(value))
        if t is dict:
            is_call = QUALNAME in value
            for k, v in value.items():
                stack.append((v, (link, int(k) if is_call and is_positional_key(k) else k)))
        else:
            stack.extend((v, (link, i)) for i, v in enumerate(value))
    return None


def _show(value: Any) -> str:
    """A short repr of (possibly huge or deeply nested) input, for messages."""
    import reprlib

    shortener = reprlib.Repr()
    shortener.maxlevel, shortener.maxstring, shortener.maxother = 3, 60, 60
    return shortener.repr(value)


def _names(keys: Any) -> str:
    return ", ".join(f"`{k}`" if type(k) is str and len(k) < 40 else _show(k) for k in sorted(keys, key=str))


# --- markers --------------------------------------------------------------------------

# What each marker holds, as errors word it.
_EXPECTED = {
    _TUPLE: "a list of items",
    _SET: "a list of plain values (numbers, strings, bytes, None)",
    _FROZENSET: "a list of plain values (numbers, strings, bytes, None)",
    _BYTES: "a base64 string",
    _SLICE: "a list [start, stop, step] of plain values",
    _RANGE: "a list of 1 to 3 ints (a non-zero step)",
    _ELLIPSIS: "null",
    _COMPLEX: "a list [real, imag] of numbers",
    _PATH: 'a path string (and a "type" string)',
    _PLACEHOLDER: 'its type as a `module:Name` string (and "required": true or false)',
    _REF: "the path as a list of keys (str, int, ...)",
}
_BAD = object()  # what `_read_marker` returns for a payload of the wrong shape


def _read_marker(decoder: _Decoder, kind: str, payload: Any, data: dict[str, Any]) -> Any:
    """The value of a marker object, or `_BAD` (its payload is not what `_EXPECTED` says)."""
    if kind == _OP:
        return _read_op(decoder, payload, data)
    t = type(payload)
    if kind == _TUPLE:
        return tuple(decoder.value(payload)) if t is list else _BAD
    if kind == _SET or kind == _FROZENSET:
        items = decoder.value(payload) if t is list else ()
        if t is not list or any(type(item) not in LEAF_TYPES for item in items):  # as `ConfigDict` takes sets
            return _BAD
        if len(items) > _UNCHECKED_SET_SIZE:
            _check_hash_collisions(items, kind, data)
        return set(items) if kind == _SET else frozenset(items)  # TypeError: a slice in a set
    if kind == _BYTES:
        import base64

        return base64.b64decode(payload, validate=True) if t is str else _BAD  # binascii.Error: a ValueError
    if kind == _SLICE or kind == _COMPLEX:
        size, kinds = (3, LEAF_TYPES) if kind == _SLICE else (2, (int, float))
        if t is not list or len(payload) != size or any(type(item) not in kinds for item in payload):
            return _BAD
        return slice(*payload) if kind == _SLICE else complex(*payload)
    if kind == _RANGE:
        if t is not list or not 1 <= len(payload) <= 3 or any(type(i) is not int for i in payload):
            return _BAD
        return range(*payload)  # ValueError: a zero step
    if kind == _ELLIPSIS:
        return ... if payload is None else _BAD
    if kind == _PATH:
        path_type = data.get("type", "")
        return _path_type(path_type)(payload) if t is str and type(path_type) is str else _BAD
    if kind == _PLACEHOLDER:
        required = data.get("required", False)
        if t is not str or type(required) is not bool:
            return _BAD
        return Placeholder(_placeholder_type(payload), decoder.value(data.get("default")), required)
    if kind == _REF:
        return _read_ref(decoder, payload, data) if t is list else _BAD
    raise AssertionError(kind)


def _check_hash_collisions(items: list[Any], kind: str, data: dict[str, Any]) -> None:
    """Refuses items of which more than `MAX_SAME_HASH` distinct ones have the same hash.

    Python's `hash` is not randomised for ints (`hash(k * (2**61 - 1) + c) == c`), floats, complex
    numbers and ranges, so a set of n such items takes time quadratic in n to build (60,000 ints:
    30 s). `crowded_hash` groups them by hash first, in linear time; equal items (repeats) are cheap
    and allowed. Sets of at most `_UNCHECKED_SET_SIZE` items are not checked: their worst case is
    bounded (a few milliseconds each, linear in the size of the JSON), and checking costs as much as
    building.
    """
    crowded = crowded_hash(items)  # a TypeError (a slice) is the caller's error
    if crowded is not None:
        raise _Malformed(
            data,
            f"a `{kind}` marker holds more than {MAX_SAME_HASH} different items with the same "
            f"hash as {_show(crowded)} ({len(items):,} items in all), which no config needs and "
            "which would take time quadratic in their number to load",
        )


def _read_ref(decoder: _Decoder, keys: list[Any], data: dict[str, Any]) -> Any:
    if _ROOT in data:
        root = decoder.value(data[_ROOT])
        if type(root) is not ConfigDict:
            raise _Malformed(data, f"a reference's `{_ROOT}` is a config node, found {_show(data[_ROOT])}")
    else:
        root = decoder.root
        if root is None:
            raise _Malformed(data, "a reference from the JSON root, but the root is not a config node")
    path = tuple(decoder.value(keys))
    hash(path)  # TypeError: a list or node as a key
    return PathRef(root, path)


def _read_op(decoder: _Decoder, op: Any, data: dict[str, Any]) -> Any:
    if type(op) is not str or op not in OPS:
        raise _Malformed(
            data, f"unknown reference operation {_show(op)}; expected one of {', '.join(sorted(OPS))}"
        )
    args, kwargs = data.get("args"), data.get("kwargs", {})
    arity = _OP_ARITY.get(op)
    if type(args) is not list or (len(args) != arity if arity is not None else not args):
        expected = f"{arity} operand(s)" if arity is not None else "the function and its arguments"
        raise _Malformed(data, f'`{_OP}: {op}` holds "args", a list of {expected}, found {_show(args)}')
    if type(kwargs) is not dict or any(type(k) is not str for k in kwargs) or (kwargs and op != "call"):
        raise _Malformed(
            data,
            f'`{_OP}: {op}` holds "kwargs", a dict of keyword arguments (of a "call" only), found {_show(kwargs)}',
        )
    values = decoder.value(args)
    if op == "call":
        function = values[0] = _loaded_function(values[0])
        if not _is_config_value(function) and not callable(function):
            raise _Malformed(
                data,
                f"a `call` operation's function is a constant node or a reference, found {_show(args[0])}",
            )
    # `loaded`: computed by `konfig.resolve` only (safe mode), never by reading the field.
    return OpRef(op, tuple(values), {k: decoder.value(v) for k, v in kwargs.items()}, loaded=True)


# The keys each marker object may have.
_MARKER_KEYS: dict[str, frozenset[str]] = {kind: frozenset({kind}) for kind in _MARKERS}
_MARKER_KEYS[_PATH] = frozenset({_PATH, "type"})
_MARKER_KEYS[_PLACEHOLDER] = frozenset({_PLACEHOLDER, "default", "required"})
_MARKER_KEYS[_REF] = frozenset({_REF, _ROOT})
_MARKER_KEYS[_OP] = frozenset({_OP, "args", "kwargs"})
# Operands of each reference operation; `call` takes the function and any arguments.
_OP_ARITY: dict[str, int] = {
    **dict.fromkeys(BINARY_SYMBOLS, 2),
    **dict.fromkeys(UNARY_SYMBOLS, 1),
    "abs": 1,
    "getattr": 2,
    "getitem": 2,
}


def _loaded_function(node: Any) -> Any:
    """The function a `konfig.ref_fn` constant names, if its module is already imported.

    Loading never imports; a module not yet imported keeps the constant node,
    which `konfig.resolve` imports (and safe mode checks) like any other.
    """
    if type(node) is not ConfigDict or len(node._fields) != 1 or CONST not in node._fields:
        return node
    obj = _imported_object(str(node._fields[CONST]))
    return obj if obj is not None and callable(obj) else node


def _imported_object(name: str) -> Any:
    """The object `"module:Attr.sub"` names if its module is already imported, else None.

    Attributes are read without running code (no module `__getattr__`, property or
    other descriptor) and never through a private or dunder name, so that loading
    JSON imports and calls nothing.
    """
    import sys

    module, _, attrs = name.partition(":")
    obj: Any = sys.modules.get(module)
    for part in attrs.split(".") if attrs else ():
        if obj is None or not part or part[0] == "_":
            return None
        obj = _static_attribute(obj, part)
    return obj


def _static_attribute(obj: Any, name: str) -> Any:
    import types

    if isinstance(obj, types.ModuleType):
        return vars(obj).get(name)
    if not isinstance(obj, type):
        return None
    for klass in type.__dict__["__mro__"].__get__(obj):
        found = vars(klass).get(name, _MISSING)
        if found is _MISSING:
            continue
        if isinstance(found, staticmethod):
            return found.__func__
        if isinstance(found, classmethod):
            return types.MethodType(found.__func__, obj)
        if isinstance(found, (type, types.FunctionType, types.BuiltinFunctionType)):
            return found
        return None  # A property or another descriptor: reading it could run code.
    return None


_MISSING = object()
_MAX_RAW_KEY = 1000  # characters of a `__raw__=` key's literal; keys are short
_MAX_SAME_HASH = 8  # `__raw__=` keys of one object with the same hash
_UNCHECKED_SET_SIZE = 256  # items of a `__set__` / `__frozenset__` loaded without that check


def _decode_key(key: str, data: Any) -> Any:
    literal = key[len(RAW_PREFIX) :]
    if len(literal) > _MAX_RAW_KEY:
        raise _Malformed(
            data,
            f"key {_show(key)} is {len(key):,} characters long; a `{RAW_PREFIX}` key holds a Python "
            f"literal of at most {_MAX_RAW_KEY} characters",
        )
    import ast

    try:
        value = ast.literal_eval(literal)
        hash(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise _Malformed(
            data,
            f"key {_show(key)} is not `{RAW_PREFIX}` followed by a hashable Python literal "
            f"(int, float, bool, None, str, bytes, tuple): {type(e).__name__}: {e}",
        ) from None
    return value


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


def _placeholder_type(name: str) -> Any:
    # A type from a module already imported is restored; loading JSON never imports.
    obj = _imported_object(name)
    return obj if isinstance(obj, type) else name
