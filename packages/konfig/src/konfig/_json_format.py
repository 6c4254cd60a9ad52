"""konfig JSON, version 1: the markers and constants that `_json_encode`, `_json_writer` and `_json_decode` share.

    text = cfg.to_json()                 # or cfg.to_json(indent=2)
    assert konfig.from_json(text) == cfg

Format (version 1). A config of plain values is written as Kauldron writes it; where konfig
writes more (the markers below), the root object starts with `"__konfig_version__": 1`.
Nodes use Kauldron's keys, so Kauldron's JSON loads too:

* call / constant nodes: `{"__qualname__": "mod:Attr", "0": arg0, "kw": v}`,
  `{"__const__": "mod:Attr"}`; other `ConfigDict`s are JSON objects.
* a node present several times is written in full each time, with `"__id__": n` last
  (n from 0, in the order of the first repeats), as Kauldron does. Inside itself (a cycle),
  and once repeats would add more than `_json_encode.EXPANSION_LIMIT` objects, a repeat is written
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

Only this format's words live here; writing it is `_json_encode` / `_json_writer`, reading it `_json_decode`.

    >>> is_plain_key("lr"), is_plain_key("__tuple__"), is_plain_key(1)
    (True, False, False)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT_VERSION = 1
VERSION_KEY = "__konfig_version__"
ID_KEY = "__id__"
JSON_RAW_KEY_PREFIX = "__raw__="
"""How konfig JSON writes a key that is not a `str` (or a `str` a marker could be taken for): this prefix, then
the key's Python literal (`{1: "a"}` is written `{"__raw__=1": "a"}`; `ast.literal_eval` reads it back)."""
MAX_RAW_KEY = 1000  # characters of a `__raw__=` key's literal; keys are short

TUPLE, SET, FROZENSET = "__tuple__", "__set__", "__frozenset__"
BYTES, SLICE, RANGE, ELLIPSIS = "__bytes__", "__slice__", "__range__", "__ellipsis__"
COMPLEX, PATH, PLACEHOLDER = "__complex__", "__path__", "__placeholder__"
REF, ROOT, OP = "__ref__", "__root__", "__op__"
JSON_MARKERS = frozenset(
    {TUPLE, SET, FROZENSET, BYTES, SLICE, RANGE, ELLIPSIS, COMPLEX, PATH, PLACEHOLDER, REF, OP}
)
"""The keys of konfig JSON's marker objects (`{"__tuple__": [...]}`, `{"__ref__": ["a", 0]}`, ...): a JSON object
whose first key is one of them is a value konfig wrote (a tuple, a reference, bytes, ...), not a config node."""
# `str` keys of a ConfigDict that must be escaped with `__raw__=` to be read back as keys.
RESERVED_KEYS = JSON_MARKERS | {ID_KEY, VERSION_KEY, ROOT}

JSON_SCALARS = frozenset({str, int, float, bool, type(None)})

# `str` keys known to need no escaping; a set lookup is the cheapest per-field check.
PLAIN_KEYS: set[Any] = set()


def is_plain_key(key: Any) -> bool:
    """Whether `key` is written as it is: a `str` that no marker or `__raw__=` key could be taken for."""
    if type(key) is not str or key in RESERVED_KEYS or key[:8] == JSON_RAW_KEY_PREFIX:
        return False
    if len(PLAIN_KEYS) < 100_000:
        PLAIN_KEYS.add(key)
    return True
