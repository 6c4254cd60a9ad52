"""`konfig.to_json` / `cfg.to_json()`: a config's JSON text, written straight from the config where it can.

    text = to_json(cfg)        # write_default(cfg), else json.dumps(encode(cfg))
    text = write_default(cfg)  # == json.dumps(encode(cfg)), or None where it can't

`to_json` tries the fast path `write_default` first; it produces exactly the text of the general path
in `_json_encode` (`encode` + `json.dumps`), which a property test checks, and returns None for anything
outside the common shapes so that the general path answers (with its errors) instead.
"""

from __future__ import annotations

from ._config_dict import CONST, ConfigDict, is_config_value
from ._json_encode import Encoder, Unserializable, encode, function_name
from ._json_format import FORMAT_VERSION, JSON_SCALARS, OP, REF, TUPLE, VERSION_KEY, is_plain_key
from ._placeholder import Placeholder
from ._refs import OpRef, PathRef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["to_json", "write_default"]


def to_json(value: Any, **dumps_kwargs: Any) -> str:
    """Serialises a config to konfig JSON; keyword arguments go to `json.dumps`.

    Usage: `path.write_text(cfg.to_json(indent=2))`.
    """
    if not dumps_kwargs and type(value) is ConfigDict:
        text = write_default(value)
        if text is not None:
            return text
    import json

    # The encoded data is a tree (repeated nodes became `{"__id__": n}`), so the
    # encoder's circular-reference bookkeeping is pure overhead.
    dumps_kwargs["check_circular"] = False
    return json.dumps(encode(value), **dumps_kwargs)


_INF = float("inf")


class _NotCommon(Exception):
    """Internal: `write_default` met a value it leaves to `encode` + `json.dumps`."""


# Leaf kinds written as one-key marker objects (`{"__bytes__": ...}`); paths too.
_MARKED_LEAVES = frozenset({bytes, set, frozenset, range, complex, type(...), Placeholder})

# str key -> its JSON text as a node's first key (`{"k": `) / as a later key (`, "k": `).
_FIRST_KEY_TEXT: dict[str, str] = {}
_NEXT_KEY_TEXT: dict[str, str] = {}


def write_default(root: ConfigDict) -> str | None:
    """`json.dumps(encode(root))` (default options) written directly, or None where it can't.

    Handles nodes with plain `str` keys, JSON scalars, lists, tuples, references and the
    marked leaf kinds, which is what configs are made of; for anything else (odd keys,
    plain dicts, values with no JSON form) it returns None and `to_json` takes the general
    path, so the text (or the error) is the same either way. Writing text
    fragments straight from the config skips building the JSON data and most of the
    allocations of `json.dumps` (a new string per key and value), which dominate there:
    keys, strings and numbers repeat, and their text is looked up instead.
    """
    writer = _TextWriter(root)
    try:
        writer.node(root._fields)
    except (_NotCommon, RecursionError):
        return None
    return writer.text()


class _TextWriter:
    """One `write_default` call: text parts, caches; `node`, `sequence` and `value` are closures for speed."""

    __slots__ = (
        "append",
        "floats",
        "ints",
        "leaf_writers",
        "marked",
        "node",
        "opened",
        "parts",
        "quote",
        "root",
        "sequence",
        "strings",
        "value",
    )

    def __init__(self, root: ConfigDict) -> None:
        from json.encoder import encode_basestring_ascii

        self.root = root
        self.quote: Callable[[str], str] = encode_basestring_ascii
        self.parts: list[str] = []
        self.append = self.parts.append
        self.opened: set[int] = set()  # id(fields) of the nodes written; a repeat is left to `encode`
        self.marked = False  # A marker was written: the root gets the version field.
        self.strings: dict[str, str] = {}
        self.ints: dict[int, str] = {}
        self.floats: dict[float, str] = {}
        # `Encoder.other` and `json`'s encoder for marked leaves, made on first use.
        self.leaf_writers: tuple[Callable[[Any, type], Any], Callable[[Any], str]] | None = None
        self.node, self.sequence, self.value = _container_writers(self)

    def text(self) -> str:
        """The parts joined, the version field first in the root where a marker was written."""
        parts = self.parts
        if self.marked:
            first = parts[0]
            parts[0] = f'{{"{VERSION_KEY}": {FORMAT_VERSION}' + ("}" if first == "{}" else ", " + first[1:])
        return "".join(parts)

    def operation(self, ref: OpRef) -> None:
        """`{"__op__": op, "args": [...], "kwargs": {...}}`; a `ref_fn` function as a constant node."""
        op, args, kwargs = ref._konfig_op, ref._konfig_args, ref._konfig_kwargs
        if type(op) is not str:
            raise _NotCommon
        append, quote, value = self.append, self.quote, self.value
        append(f'{{"{OP}": {quote(op)}, "args": ')
        if op == "call" and args and not is_config_value(args[0]):
            try:
                name = function_name(args[0])
            except Unserializable:
                raise _NotCommon from None
            append(f'[{{"{CONST}": {quote(name)}}}')
            for a in args[1:]:
                append(", ")
                value(a, type(a))
            append("]")
        else:
            self.sequence(args)
        if kwargs:
            separator = ', "kwargs": {'
            for k, a in kwargs.items():
                if type(k) is not str:
                    raise _NotCommon
                append(f"{separator}{quote(k)}: ")
                separator = ", "
                value(a, type(a))
            append("}")
        append("}")

    def marked_leaf(self, v: Any, t: type) -> None:
        """Leaves written as a marker object, which holds no node: through `encode` and `json`."""
        if not _is_common_marked_leaf(v, t):
            raise _NotCommon
        if self.leaf_writers is None:
            import json

            self.leaf_writers = (Encoder(self.root).other, json.JSONEncoder(check_circular=False).encode)
        other, dumps = self.leaf_writers
        self.append(dumps(other(v, t)))


def _container_writers(
    writer: _TextWriter,
) -> tuple[Callable[..., None], Callable[[Any], None], Callable[[Any, type], None]]:
    """`node`, `sequence` and (from `_value_writer`) `value`: closures over locals, no look-ups per field."""
    append, opened, quote = writer.append, writer.opened, writer.quote
    strings, ints, floats = writer.strings, writer.ints, writer.floats
    first_keys, next_keys, config_dict = _FIRST_KEY_TEXT, _NEXT_KEY_TEXT, ConfigDict
    key_text, float_text = _key_text, _float_text

    def node(fields: dict[Any, Any], keys: dict[str, str] = first_keys) -> None:
        key = id(fields)
        if key in opened:
            raise _NotCommon  # A shared node: written in full again with its `__id__`, by `encode`.
        opened.add(key)
        for k, v in fields.items():
            text = keys.get(k)
            append(text if text is not None else key_text(k, keys, quote))
            keys = next_keys
            # `value`'s scalar cases, inlined: most fields are scalars; a call per field made
            # to_json ~16% slower on the 1k-call benchmark config (0.94 -> 1.13 ms).
            t = type(v)
            if t is str:
                text = strings.get(v)
                if text is None:
                    text = strings[v] = quote(v)
                append(text)
            elif t is int:
                text = ints.get(v)
                if text is None:
                    text = ints[v] = int.__repr__(v)
                append(text)
            elif t is float:
                text = floats.get(v)
                append(text if text is not None else float_text(v, floats))
            elif t is config_dict:
                node(v._fields)
            else:
                value(v, t)
        append("}" if keys is next_keys else "{}")

    def sequence(items: list[Any] | tuple[Any, ...]) -> None:
        if not items:
            append("[]")
            return
        separator = "["
        for v in items:
            append(separator)
            separator = ", "
            t = type(v)
            if t is config_dict:
                node(v._fields)
            else:
                value(v, t)
        append("]")

    value = _value_writer(writer, node, sequence)  # `node` and `sequence` call it: bound before they run.
    return node, sequence, value


def _value_writer(
    writer: _TextWriter, node: Callable[..., None], sequence: Callable[[Any], None]
) -> Callable[[Any, type], None]:
    """`value(v, type(v))`: any value's text, as a closure over locals (it runs for each item)."""
    append, quote, root = writer.append, writer.quote, writer.root
    strings, ints, floats = writer.strings, writer.ints, writer.floats
    config_dict, path_ref, op_ref, float_text = ConfigDict, PathRef, OpRef, _float_text
    operation, marked_leaf = writer.operation, writer.marked_leaf

    def value(v: Any, t: type) -> None:
        if t is str:
            text = strings.get(v)
            if text is None:
                text = strings[v] = quote(v)
            append(text)
        elif t is int:
            text = ints.get(v)
            if text is None:
                text = ints[v] = int.__repr__(v)
            append(text)
        elif t is float:
            text = floats.get(v)
            append(text if text is not None else float_text(v, floats))
        elif v is None:
            append("null")
        elif t is bool:
            append("true" if v else "false")
        elif t is config_dict:
            node(v._fields)
        elif t is list:
            sequence(v)
        elif t is tuple:
            writer.marked = True
            append(f'{{"{TUPLE}": ')
            sequence(v)
            append("}")
        elif t is path_ref:
            if v._konfig_root is not root:
                raise _NotCommon  # Another root: written inside or, outside the config, as a value.
            writer.marked = True
            append(f'{{"{REF}": ')
            sequence(v._konfig_path)
            append("}")
        elif t is op_ref:
            writer.marked = True
            operation(v)
        else:
            writer.marked = True
            marked_leaf(v, t)

    return value


def _key_text(k: Any, keys: dict[str, str], quote: Callable[[str], str]) -> str:
    """A new key's text as a node's first key (`keys` is `_FIRST_KEY_TEXT`) or a later one; cached."""
    if not is_plain_key(k):
        raise _NotCommon
    first, later = "{" + quote(k) + ": ", ", " + quote(k) + ": "
    if len(_NEXT_KEY_TEXT) < 100_000:
        _FIRST_KEY_TEXT[k], _NEXT_KEY_TEXT[k] = first, later
    return first if keys is _FIRST_KEY_TEXT else later


def _float_text(v: float, floats: dict[float, str]) -> str:
    """A float's JSON text as `json.dumps` writes it; cached in `floats` (but zeros)."""
    if v != v:
        return "NaN"
    if v == _INF or v == -_INF:
        return "Infinity" if v > 0 else "-Infinity"
    text = float.__repr__(v)
    if v:  # 0.0 == -0.0: zeros are not cached.
        floats[v] = text
    return text


def _is_common_marked_leaf(v: Any, t: type) -> bool:
    """Whether a leaf's marker holds only scalars, so `encode` writes it as `write_default` would."""
    if t is slice:
        return type(v.start) in JSON_SCALARS and type(v.stop) in JSON_SCALARS and type(v.step) in JSON_SCALARS
    if t is Placeholder:
        return type(v.default) in JSON_SCALARS
    if t not in _MARKED_LEAVES:
        import os

        return isinstance(v, os.PathLike)
    return True
