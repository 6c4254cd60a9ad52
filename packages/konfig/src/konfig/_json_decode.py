"""`konfig.from_json` and `decode`: konfig JSON (or Kauldron's) read back into a config.

    cfg = konfig.from_json(path.read_text())
    cfg = decode(json.loads(text))  # parsed JSON data, or a plain dict with `__qualname__` nodes

Reading imports nothing and calls nothing, so untrusted JSON can be loaded and then checked with
`konfig.resolve(cfg, allowed=[...])`. Malformed input is a `JsonFormatError` naming where it is; the
markers read here are listed in `_json_format`.

`from_json` reads the common shapes (nodes, calls, constants, tuples, references from the root) in
one pass, as `json.loads` parses them (`_read_common`); the tree decoder `_Decoder` reads the rest,
and gives every error.
"""

from __future__ import annotations

from ._config_dict import CONST, LEAF_TYPES, QUALNAME, ConfigDict, is_config_value, num_args
from ._errors import (
    JsonFormatError,
    linked_path,
    nesting_message,
    shorten_path,
    text_nesting_message,
)
from ._hash_spread import MAX_SAME_HASH, crowded_hash
from ._json_format import (
    BYTES,
    COMPLEX,
    ELLIPSIS,
    FORMAT_VERSION,
    FROZENSET,
    ID_KEY,
    JSON_MARKERS,
    JSON_RAW_KEY_PREFIX,
    JSON_SCALARS,
    MAX_RAW_KEY,
    OP,
    PATH,
    PLACEHOLDER,
    RANGE,
    REF,
    RESERVED_KEYS,
    ROOT,
    SET,
    SLICE,
    TUPLE,
    VERSION_KEY,
)
from ._keys import is_positional_key
from ._placeholder import Placeholder
from ._refs import BINARY_SYMBOLS, OPS, UNARY_SYMBOLS, OpRef, PathRef
from ._targets import NOT_IMPORTED, NoAttribute, find_imported, plain_attribute

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["decode", "decode_if_marked", "from_dict", "from_json"]

_CONTAINERS = frozenset({dict, list})


def from_json(text: str | bytes) -> Any:
    """Reads konfig JSON (or Kauldron's) back into a config; imports and calls nothing.

    Malformed input (not JSON, markers with the wrong payload, odd keys, nesting deeper
    than Python's recursion limit allows) is a `JsonFormatError` naming where it is.

    Usage: `cfg = konfig.from_json(path.read_text())`.
    """
    import json

    try:
        return _read_common(text, json.loads)
    except Exception:  # Anything uncommon (or wrong) is read again below, with its exact error.
        pass
    try:
        data = json.loads(text)
    except RecursionError:
        raise JsonFormatError(text_nesting_message(text, "This JSON")) from None
    except json.JSONDecodeError as e:
        raise JsonFormatError(f"Not JSON: {e}") from e
    except ValueError as e:  # an int of more digits than Python reads, text that is not UTF-8
        raise JsonFormatError(f"Cannot read this JSON: {e}") from e
    return _decode(data, _Decoder)


class _NotCommon(Exception):
    """Internal: `_read_common` met a shape it leaves to `_Decoder` (which gives the exact error, if any)."""


# Keys a node keeps as they are, with nothing to check but `__qualname__`'s type: `__qualname__` and
# keys starting with an ASCII letter (added as they are met, up to 100,000).
_COMMON_KEYS: set[str] = {QUALNAME}


def _read_common(text: str | bytes, loads: Any) -> Any:
    """`from_json(text)` in one pass, for the common shapes; `_NotCommon` (or any error) for the rest.

    `json.loads` hands each JSON object, its values already read, to `node`, which wraps the
    parsed dict itself as the node's fields (no copy): a dict of common keys (the set `_COMMON_KEYS`,
    one C-level subset check) is a node at once; other keys are looked at one by one as `_Decoder.node`
    does; markers are recognised by dict lookup (`__tuple__`, `__ref__` and `__op__` read here, the
    others by `_Decoder.marker`). Anything else (`__id__`s, `__raw__=` keys, wrapped documents,
    nesting deeper than `_common_depth()`, malformed input) raises, and `from_json` reads the text
    again with `_Decoder`, so the result and every error are the decoder's (the one-pass reader
    stops at the first such object). Objects are read children first, so references point to a
    root made beforehand that takes the root object's fields at the end.
    """
    reader = _CommonReader()
    return reader.result(loads(text, object_hook=reader.node))


class _CommonReader:
    """One `_read_common` call: the root references point to, and how deep each value read nests.

    `node` and `height` are closures for speed (see `_common_readers`); the rarer objects (keys
    not yet common, markers) are read by methods.
    """

    __slots__ = ("decoder", "height", "heights", "node", "refs", "root")

    def __init__(self) -> None:
        root = object.__new__(ConfigDict)  # what references without a `__root__` point to
        _SET_ORIGIN(root, None)
        self.root = root
        self.refs = False  # A reference from the root was read: the root takes the root object's fields.
        # How deep each value read so far nests (a JSON object or array is a level), by id: ConfigDicts,
        # tuples, references and placeholders (kept alive by the tree); leaf-only nodes (1) are left out.
        self.heights: dict[int, int] = {}
        self.decoder = _Decoder()  # reads the other markers, their payloads already read
        self.decoder.root = root
        self.node, self.height = _common_readers(self)

    def result(self, value: Any) -> Any:
        """The config of the value `json.loads` read: the root, if references point to it."""
        if type(value) is list:
            self.height(value)
        if type(value) is ConfigDict:
            if not self.refs:
                return value
            _SET_FIELDS(self.root, value._fields)
            return self.root
        if self.refs:  # References from a root that is not a node: the decoder's error.
            raise _NotCommon
        return value

    def uncommon(self, data: dict[str, Any]) -> Any:
        """`data`'s keys looked at one by one, as `_Decoder.node` does; a marker's value."""
        first = next(iter(data))
        if first in JSON_MARKERS:
            return self.marker(first, data)
        common = _COMMON_KEYS
        check = version = False
        for k in data:
            if k[:1] in _PLAIN_FIRST:
                if len(common) < 100_000:
                    common.add(k)
            elif k == QUALNAME:
                if type(data[k]) is not str:
                    raise _NotCommon
            elif k[:2] != "__" or k == CONST:
                check = True  # A digit (or non-ASCII) key: a positional argument? A constant node.
            elif k == VERSION_KEY:
                version = True
            elif k == ID_KEY or k == ROOT or k[:8] == JSON_RAW_KEY_PREFIX:
                raise _NotCommon
            # Other `__` keys are kept, as `_Decoder.node` keeps them.
        if version:  # A nested document's (or the root's): a node of the other keys.
            if _version_problem(data[VERSION_KEY]) is not None:
                raise _NotCommon
            del data[VERSION_KEY]
            if data and next(iter(data)) in JSON_MARKERS:  # A wrapped marker (or the root's marker).
                raise _NotCommon
        if check:
            _check_node(data, data)
        return data

    def marker(self, kind: str, data: dict[str, Any]) -> Any:
        """A marker object's value: a tuple, a reference or an operation here, the others by `_Decoder`."""
        payload = data[kind]
        if kind == TUPLE or (kind == REF and len(data) == 1):
            if len(data) != 1 or type(payload) is not list:
                raise _NotCommon
            value: Any = tuple(payload)
            if kind == REF:
                hash(value)  # TypeError: a list or node as a key
                self.refs = True
                value = PathRef(self.root, value)
            self.heights[id(value)] = self.height(payload) + 1  # the marker's object and its list
            return value
        if kind == OP:
            return self.operation(payload, data)
        # The others, as `_Decoder` reads them (its errors are `_Malformed`); `value` leaves read values as
        # they are.
        value = self.decoder.marker(kind, data)
        if type(value) in _NESTING:  # a placeholder's default, a reference's `__root__`
            self.heights[id(value)] = self.height(data.values()) + 1
        return value

    def operation(self, op: Any, data: dict[str, Any]) -> OpRef:
        """`{"__op__": op, "args": [...], "kwargs": {...}}`, its operands read: `_read_op`'s checks."""
        if not data.keys() <= _MARKER_KEYS[OP]:
            raise _NotCommon
        h = self.height(data.get("args", ()))
        kwargs = data.get("kwargs")
        if kwargs is not None:  # read as a node: its fields, if they are as written
            if type(kwargs) is not ConfigDict or not _COMMON_KEYS.issuperset(kwargs._fields):
                raise _NotCommon
            h = max(h, self.heights.get(id(kwargs), 1))
            data = {**data, "kwargs": kwargs._fields}
        value = _read_op(self.decoder, op, data)
        self.heights[id(value)] = h + 1
        return value


def _common_readers(reader: _CommonReader) -> tuple[Callable[[dict[str, Any]], Any], Callable[[Any], int]]:
    """`node` (`json.loads`'s object hook) and `height`: closures over locals, no look-ups per object."""
    is_common = _COMMON_KEYS.issuperset  # of a dict's keys
    new, config_dict = object.__new__, ConfigDict
    set_fields, set_origin = _SET_FIELDS, _SET_ORIGIN
    heights = reader.heights
    height_of = heights.get
    nesting = _NESTING
    only_scalars = JSON_SCALARS.issuperset
    max_height = _common_depth()
    uncommon = reader.uncommon

    def node(data: dict[str, Any]) -> Any:
        if not (is_common(data) and type(data.get(QUALNAME, "")) is str):
            data = uncommon(data)
            if type(data) is not dict:
                return data  # a marker's value
        cfg = new(config_dict)
        set_fields(cfg, data)
        set_origin(cfg, None)
        if only_scalars(map(type, data.values())):
            return cfg  # (most nodes) one level
        h = height(data.values())
        if h > 1:
            heights[id(cfg)] = h
        return cfg

    def height(values: Any) -> int:
        """1 + the height of the highest of `values`; `_NotCommon` past `max_height`."""
        h = 1
        for v in values:
            t = type(v)
            if t in nesting:
                child = height_of(id(v), 1)
            elif t is list:
                child = height(v)
            else:
                continue
            if child >= h:
                h = child + 1
        if h > max_height:
            raise _NotCommon
        return h

    return node, height


def _common_depth() -> int:
    """How deep `_read_common` reads: levels that `_Decoder` reads too, well within the recursion limit.

    `_Decoder` takes two to three Python frames per level; deeper input is left to it, so that
    it raises its nesting error where it runs out of frames.
    """
    import sys

    return sys.getrecursionlimit() // 8


# `cfg._fields = ...` / `cfg._origin = ...` on a new node, past `ConfigDict.__setattr__`: the slots' setters.
_SET_FIELDS = ConfigDict.__dict__["_fields"].__set__
_SET_ORIGIN = ConfigDict.__dict__["_origin"].__set__
# The values `_read_common` records the height of (leaf-only nodes, of height 1, are left out).
_NESTING = frozenset({ConfigDict, tuple, PathRef, OpRef, Placeholder})


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
                if type(k) is str and k[:2] == "__" and (k in RESERVED_KEYS or k[:8] == JSON_RAW_KEY_PREFIX):
                    marked = True
                    break
        for v in values:
            t = type(v)
            if t is dict or t is list:
                stack.append(v)
            elif t not in JSON_SCALARS:
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


def _version_problem(version: Any) -> str | None:
    """Why `__konfig_version__: version` cannot be read, or None."""
    if type(version) is not int:
        return f"`{VERSION_KEY}` must be an int, found {_show(version)}"
    if version > FORMAT_VERSION:
        return (
            f"This JSON is konfig format version {version!r}; this konfig reads versions up to "
            f"{FORMAT_VERSION}. Upgrade konfig to load it"
        )
    return None


def _check_nested_version(data: dict[str, Any]) -> None:
    problem = _version_problem(data[VERSION_KEY])
    if problem is not None:
        raise _Malformed(data, problem[:1].lower() + problem[1:])


def _wrapped_value_key(data: dict[str, Any]) -> str | None:
    """`ROOT` or the marker of a document `{"__konfig_version__": 1, "__root__" or a marker: ...}`."""
    if len(data) != 2:
        return None
    keys = iter(data)
    next(keys)
    inner = next(keys)
    return inner if inner == ROOT or inner in JSON_MARKERS else None


def _decode_root(data: Any, decoder: _Decoder) -> Any:
    if type(data) is dict and VERSION_KEY in data:
        problem = _version_problem(data[VERSION_KEY])
        if problem is not None:
            raise JsonFormatError(f"{problem}.")
        data = {k: v for k, v in data.items() if k != VERSION_KEY}
        if len(data) == 1 and ROOT in data:
            return decoder.value(data[ROOT])
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
        return key in JSON_MARKERS
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
        if first == VERSION_KEY:  # A whole document inside this one (`{"a": konfig.export(obj)}`).
            _check_nested_version(data)
            inner = _wrapped_value_key(data)
            if inner == ROOT:
                return self.value(data[ROOT])
            if inner is not None:
                return self.marker(inner, {inner: data[inner]})
            # A node or mapping: `node` leaves the version out.
        if first in JSON_MARKERS:
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
                elif k == VERSION_KEY:  # A nested document's, written after its first key.
                    _check_nested_version(data)
                    continue
                elif k[:8] == JSON_RAW_KEY_PREFIX:
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
                f"more than {_MAX_SAME_HASH} of its `{JSON_RAW_KEY_PREFIX}` keys have the same hash ({_show(key)} ...)",
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
        first = next(iter(data), None)
        if (
            first in JSON_MARKERS
            or ID_KEY in data
            or not data
            or (first == VERSION_KEY and _wrapped_value_key(data))
        ):
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
    TUPLE: "a list of items",
    SET: "a list of plain values (numbers, strings, bytes, None)",
    FROZENSET: "a list of plain values (numbers, strings, bytes, None)",
    BYTES: "a base64 string",
    SLICE: "a list [start, stop, step] of plain values",
    RANGE: "a list of 1 to 3 ints (a non-zero step)",
    ELLIPSIS: "null",
    COMPLEX: "a list [real, imag] of numbers",
    PATH: 'a path string (and a "type" string)',
    PLACEHOLDER: 'its type as a `module:Name` string (and "required": true or false)',
    REF: "the path as a list of keys (str, int, ...)",
}
_BAD = object()  # what `_read_marker` returns for a payload of the wrong shape


def _read_marker(decoder: _Decoder, kind: str, payload: Any, data: dict[str, Any]) -> Any:
    """The value of a marker object, or `_BAD` (its payload is not what `_EXPECTED` says)."""
    if kind == OP:
        return _read_op(decoder, payload, data)
    t = type(payload)
    if kind == TUPLE:
        return tuple(decoder.value(payload)) if t is list else _BAD
    if kind == SET or kind == FROZENSET:
        items = decoder.value(payload) if t is list else ()
        if t is not list or any(type(item) not in LEAF_TYPES for item in items):  # as `ConfigDict` takes sets
            return _BAD
        if len(items) > _UNCHECKED_SET_SIZE:
            _check_hash_collisions(items, kind, data)
        return set(items) if kind == SET else frozenset(items)  # TypeError: a slice in a set
    if kind == BYTES:
        import base64

        return base64.b64decode(payload, validate=True) if t is str else _BAD  # binascii.Error: a ValueError
    if kind == SLICE or kind == COMPLEX:
        size, kinds = (3, LEAF_TYPES) if kind == SLICE else (2, (int, float))
        if t is not list or len(payload) != size or any(type(item) not in kinds for item in payload):
            return _BAD
        return slice(*payload) if kind == SLICE else complex(*payload)
    if kind == RANGE:
        if t is not list or not 1 <= len(payload) <= 3 or any(type(i) is not int for i in payload):
            return _BAD
        return range(*payload)  # ValueError: a zero step
    if kind == ELLIPSIS:
        return ... if payload is None else _BAD
    if kind == PATH:
        path_type = data.get("type", "")
        return _path_type(path_type)(payload) if t is str and type(path_type) is str else _BAD
    if kind == PLACEHOLDER:
        required = data.get("required", False)
        if t is not str or type(required) is not bool:
            return _BAD
        return Placeholder(_placeholder_type(payload), decoder.value(data.get("default")), required)
    if kind == REF:
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
    if ROOT in data:
        root = decoder.value(data[ROOT])
        if type(root) is not ConfigDict:
            raise _Malformed(data, f"a reference's `{ROOT}` is a config node, found {_show(data[ROOT])}")
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
        raise _Malformed(data, f'`{OP}: {op}` holds "args", a list of {expected}, found {_show(args)}')
    if type(kwargs) is not dict or any(type(k) is not str for k in kwargs) or (kwargs and op != "call"):
        raise _Malformed(
            data,
            f'`{OP}: {op}` holds "kwargs", a dict of keyword arguments (of a "call" only), found {_show(kwargs)}',
        )
    values = decoder.value(args)
    if op == "call":
        function = values[0] = _loaded_function(values[0])
        if not is_config_value(function) and not callable(function):
            raise _Malformed(
                data,
                f"a `call` operation's function is a constant node or a reference, found {_show(args[0])}",
            )
    # `loaded`: computed by `konfig.resolve` only (safe mode), never by reading the field.
    return OpRef(op, tuple(values), {k: decoder.value(v) for k, v in kwargs.items()}, loaded=True)


# The keys each marker object may have.
_MARKER_KEYS: dict[str, frozenset[str]] = {kind: frozenset({kind}) for kind in JSON_MARKERS}
_MARKER_KEYS[PATH] = frozenset({PATH, "type"})
_MARKER_KEYS[PLACEHOLDER] = frozenset({PLACEHOLDER, "default", "required"})
_MARKER_KEYS[REF] = frozenset({REF, ROOT})
_MARKER_KEYS[OP] = frozenset({OP, "args", "kwargs"})
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
    other descriptor) and never through a private or dunder name (`plain_attribute`),
    so that loading JSON imports and calls nothing.
    """
    try:
        obj = find_imported(name, plain_attribute)
    except NoAttribute:
        return None
    return None if obj is NOT_IMPORTED else obj


_MAX_SAME_HASH = 8  # `__raw__=` keys of one object with the same hash
_UNCHECKED_SET_SIZE = 256  # items of a `__set__` / `__frozenset__` loaded without that check


def _decode_key(key: str, data: Any) -> Any:
    literal = key[len(JSON_RAW_KEY_PREFIX) :]
    if len(literal) > MAX_RAW_KEY:
        raise _Malformed(
            data,
            f"key {_show(key)} is {len(key):,} characters long; a `{JSON_RAW_KEY_PREFIX}` key holds a Python "
            f"literal of at most {MAX_RAW_KEY} characters",
        )
    import ast

    try:
        value = ast.literal_eval(literal)
        hash(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise _Malformed(
            data,
            f"key {_show(key)} is not `{JSON_RAW_KEY_PREFIX}` followed by a hashable Python literal "
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
