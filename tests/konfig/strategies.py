"""Hypothesis strategies for konfig config trees (used by test_properties.py).

`configs()` draws a root `ConfigDict` mixing plain nodes, call nodes of
stdlib targets that accept any keyword (`types:SimpleNamespace`), constant
nodes, every leaf kind konfig stores (tuples, sets, bytes, slices, ranges,
Ellipsis, complex numbers, paths), non-str keys, keys that look like JSON
markers, shared nodes and references (plain and with operators) to an int
field (plain, with operators, through `konfig.ref_fn`), placeholders.
Everything resolves without third-party libraries.

`json_data()`, `override_paths()` and `override_values` draw hostile input for the
loaders (test_fuzz_loaders.py): JSON objects led by konfig's marker keys with payloads of
any type, and CLI override paths and values (`py::` expressions included).
"""

from __future__ import annotations

import json
import operator
import pathlib

import konfig
from hypothesis import strategies as st

CALL_TARGET = "types:SimpleNamespace"
CONSTANTS = ("math:pi", "builtins:int", "operator:add", "string:ascii_letters")

hashable_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.text(max_size=8),
    st.binary(max_size=4),
)

leaves = st.one_of(
    hashable_leaves,
    st.floats(allow_nan=False),
    st.complex_numbers(allow_nan=False, max_magnitude=1e6),
    st.just(...),
    st.builds(
        slice, st.integers(-5, 5) | st.none(), st.integers(-5, 5) | st.none(), st.sampled_from([None, 1, 2])
    ),
    st.builds(range, st.integers(0, 5), st.integers(5, 10), st.integers(1, 3)),
    st.sets(hashable_leaves, max_size=3),
    st.frozensets(st.integers(0, 9), max_size=3),
    st.builds(pathlib.PurePosixPath, st.sampled_from(["a", "/data/b", "c/d.txt"])),
    st.builds(konfig.placeholder, st.sampled_from([int, str, float, object]), default=hashable_leaves),
)

identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)

plain_keys = st.one_of(
    identifiers,
    st.text(max_size=6),
    st.sampled_from(["__tuple__", "__id__", "__raw__=1", "__ref__", "__root__", "__konfig_version__", "0"]),
    st.integers(-3, 3),
    st.none(),
    st.tuples(st.integers(0, 3), st.text(max_size=2)),
)


def _plain_node(children: st.SearchStrategy) -> st.SearchStrategy:
    # `__qualname__` / `__const__` keys would turn a plain node into a call or constant node.
    keys = plain_keys.filter(lambda k: k not in ("__qualname__", "__const__"))
    return st.dictionaries(keys, children, max_size=4).map(konfig.ConfigDict)


def _call_node(children: st.SearchStrategy) -> st.SearchStrategy:
    kwargs = st.dictionaries(identifiers, children, max_size=4)
    return kwargs.map(lambda kw: konfig.ConfigDict({"__qualname__": CALL_TARGET, **kw}))


const_nodes = st.sampled_from(CONSTANTS).map(lambda q: konfig.ConfigDict({"__const__": q}))


def values(max_leaves: int = 20) -> st.SearchStrategy:
    """Any config value: leaves, lists, tuples and nodes, nested."""
    return st.recursive(
        leaves | const_nodes,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.lists(children, max_size=3).map(tuple),
            _plain_node(children),
            _call_node(children),
        ),
        max_leaves=max_leaves,
    )


@st.composite
def configs(draw: st.DrawFn) -> konfig.ConfigDict:
    """A root config with a shared node and references to `cfg.n` (direct, through another
    reference, through a list item)."""
    cfg = konfig.ConfigDict()
    cfg.n = draw(st.integers(-100, 100))
    body = draw(st.dictionaries(identifiers.filter(lambda k: k != "n"), values(), max_size=4))
    for key, value in body.items():
        cfg[key] = value
    shared = draw(_call_node(leaves))
    cfg.shared_a = shared
    cfg.holder = konfig.ConfigDict(shared_b=shared, items=[shared])
    ref = cfg.ref.n
    cfg.ref_plain = ref
    cfg.ref_expr = draw(
        st.sampled_from([ref + 1, ref * 3 - 2, -ref, abs(ref), ref // 7, ref % 5, ref > 0, ref == 3])
    )
    cfg.holder.ref_to_shared = cfg.ref.shared_a
    cfg.ref_to_ref = cfg.ref.ref_plain
    cfg.listed = [draw(leaves), cfg.ref.n]
    cfg.ref_to_item = cfg.ref.listed[-1]
    cfg.ref_fn_value = konfig.ref_fn(operator.add, cfg.ref.n, draw(st.integers(-5, 5)))
    return cfg


# --- Hostile input for the loaders (test_fuzz_loaders.py) -----------------------------------

MARKER_KEYS = (
    "__qualname__",
    "__const__",
    "__ref__",
    "__root__",
    "__op__",
    "__id__",
    "__tuple__",
    "__set__",
    "__frozenset__",
    "__bytes__",
    "__slice__",
    "__range__",
    "__ellipsis__",
    "__complex__",
    "__path__",
    "__placeholder__",
    "__konfig_version__",
    "args",
    "kwargs",
    "default",
    "required",
    "type",
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(
        ["add", "call", "neg", "getattr", "builtins:int", "os:getcwd", "collections:OrderedDict", "AQI="]
    ),
)

json_keys = st.one_of(
    st.sampled_from(MARKER_KEYS),
    identifiers,
    st.sampled_from(["0", "1", "2", "00", "01", "\u00b2", "\u0663", "9" * 30, "", "_x", "\u00e9t\u00e9"]),
    st.sampled_from(
        ["__raw__=1", "__raw__=(1, 'a')", "__raw__=None", "__raw__=[1]", "__raw__=(", "__raw__='0'"]
    ),
    st.builds(lambda t: "__raw__=" + t, st.text(max_size=8)),
)


def _well_formed_markers(children: st.SearchStrategy) -> st.SearchStrategy:
    """Marker objects as konfig writes them (their payloads drawn from `children`)."""
    small_ints = st.integers(-3, 3)
    keys = st.lists(st.one_of(identifiers, st.integers(0, 3)), max_size=3)
    return st.one_of(
        st.lists(children, max_size=3).map(lambda items: {"__tuple__": items}),
        st.lists(small_ints, max_size=3).map(lambda items: {"__set__": items}),
        st.lists(st.text(max_size=2), max_size=3).map(lambda items: {"__frozenset__": items}),
        st.sampled_from(["", "AQI=", "/w=="]).map(lambda b64: {"__bytes__": b64}),
        st.tuples(small_ints, small_ints, st.sampled_from([1, 2, -1])).map(lambda r: {"__range__": list(r)}),
        st.tuples(small_ints | st.none(), small_ints | st.none()).map(lambda s: {"__slice__": [*s, None]}),
        st.tuples(st.floats(-9, 9), st.floats(-9, 9)).map(lambda c: {"__complex__": list(c)}),
        st.just({"__ellipsis__": None}),
        st.sampled_from(["a/b", "/x"]).map(lambda p: {"__path__": p, "type": "pathlib:PurePosixPath"}),
        st.tuples(st.sampled_from(["builtins:int", "nowhere:Type"]), children, st.booleans()).map(
            lambda p: {"__placeholder__": p[0], "default": p[1], "required": p[2]}
        ),
        keys.map(lambda path: {"__ref__": path}),
        st.tuples(st.sampled_from(["add", "mul", "eq"]), children, children).map(
            lambda op: {"__op__": op[0], "args": [op[1], op[2]]}
        ),
        st.tuples(keys, st.dictionaries(identifiers, children, max_size=2)).map(
            lambda call: {
                "__op__": "call",
                "args": [{"__const__": "builtins:max"}, {"__ref__": call[0]}],
                "kwargs": {},
            }
        ),
        st.dictionaries(identifiers, children, max_size=3).map(
            lambda kw: {"__qualname__": "types:SimpleNamespace", **kw}
        ),
        st.lists(children, max_size=3).map(
            lambda args: {"__qualname__": "builtins:print", **{str(i): a for i, a in enumerate(args)}}
        ),
        st.sampled_from(["os:getcwd", "builtins:int", "math:pi"]).map(lambda q: {"__const__": q}),
        st.tuples(st.integers(1, 3), st.dictionaries(identifiers, children, max_size=2)).map(
            lambda node: {"__id__": node[0], **node[1]}
        ),
    )


def json_data(max_leaves: int = 30) -> st.SearchStrategy:
    """JSON values whose objects often start with konfig's marker keys (as parsed JSON):
    well-formed markers and nodes, and markers with payloads of any type."""
    return st.recursive(
        json_scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(json_keys, children, max_size=4),
            _well_formed_markers(children),
            # Any marker first, with any payload and other keys.
            st.tuples(
                st.sampled_from(MARKER_KEYS), children, st.dictionaries(json_keys, children, max_size=2)
            ).map(lambda t: {t[0]: t[1], **t[2]}),
        ),
        max_leaves=max_leaves,
    )


def common_json_data(max_leaves: int = 30) -> st.SearchStrategy:
    """JSON values of the shapes configs are mostly made of (the one-pass reader's), with odd ones mixed in:
    nodes of names, calls with positional arguments, constants, tuples, references, version keys."""
    keys = st.one_of(
        identifiers,
        st.sampled_from(
            ["__qualname__", "__const__", "__konfig_version__", "0", "1", "2", "01", "_x", "__x__"]
        ),
        st.sampled_from(["", "\u00e9", "\u0663", "__root__", "__id__", "__raw__=1", "__tuple__", "__ref__"]),
    )
    values = st.one_of(json_scalars, st.sampled_from(["m:Dense", 1, 2, None]))
    return st.recursive(
        values,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(identifiers, children, max_size=4),
            st.dictionaries(keys, children, max_size=4),
            st.tuples(st.sampled_from(["m:Dense", "m:f", 1]), st.lists(children, max_size=3)).map(
                lambda call: {"__qualname__": call[0], **{str(i): a for i, a in enumerate(call[1])}}
            ),
            st.lists(children, max_size=3).map(lambda items: {"__tuple__": items}),
            st.lists(st.one_of(identifiers, st.integers(0, 3), children), max_size=3).map(
                lambda path: {"__ref__": path}
            ),
            st.tuples(st.sampled_from([1, 2, "1"]), st.dictionaries(identifiers, children, max_size=3)).map(
                lambda doc: {"__konfig_version__": doc[0], **doc[1]}
            ),
            st.tuples(
                st.sampled_from(["add", "neg", "getitem", "call", "nope"]),
                st.lists(st.one_of(children, st.just({"__const__": "builtins:max"})), max_size=3),
                st.none() | st.dictionaries(st.one_of(identifiers, st.just("0")), children, max_size=2),
            ).map(
                lambda op: {"__op__": op[0], "args": op[1], **({} if op[2] is None else {"kwargs": op[2]})}
            ),
        ),
        max_leaves=max_leaves,
    )


path_segments = st.one_of(
    identifiers,
    st.sampled_from(["lst", "node", "a", "plain", "*", "**", "__qualname__", "__const__", "+"]),
    st.sampled_from(["0", "1", "2", "3", "-1", "00", "\u00b2", "\u0663", "9" * 25]),
    st.sampled_from(
        ["[0]", "[-1]", "[3]", "['a']", "[None]", "[(1, 2)]", "[[1]]", "[{}]", "[1e999]", "[", "]", "[']"]
    ),
    st.text(max_size=4),
)


@st.composite
def override_paths(draw: st.DrawFn) -> str:
    """`a.b[0]`-like paths: names, indices, quoted keys, globs and odd text, `.`-joined."""
    segments = draw(st.lists(path_segments, min_size=1, max_size=5))
    text = ""
    for segment in segments:
        text += segment if (segment.startswith("[") or not text) else "." + segment
    return ("+" if draw(st.booleans()) else "") + text


py_expressions = st.recursive(
    st.one_of(
        st.sampled_from(["1", "-2.5", "inf", "nan", "None", "'s'", "b'x'", "...", "1j", "True"]),
        st.sampled_from(
            ["types.SimpleNamespace", "os.getcwd", "builtins:int", "collections:OrderedDict", "nn.Dense"]
        ),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(children, max_size=3).map(lambda items: "(" + ", ".join(items) + ",)"),
        st.lists(children, max_size=3).map(lambda items: "{" + ", ".join(items) + "}"),
        st.tuples(children, children).map(lambda kv: "{" + kv[0] + ": " + kv[1] + "}"),
        st.lists(children, max_size=3).map(lambda args: "types.SimpleNamespace(" + ", ".join(args) + ")"),
        st.dictionaries(identifiers, children, max_size=2).map(
            lambda kw: "dict(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")"
        ),
        st.tuples(children, st.sampled_from(["+", "-", "*", ".x", "[0]", "(", ")", ":", "**"])).map("".join),
    ),
    max_leaves=8,
)

override_values = st.one_of(
    st.text(max_size=8),
    json_scalars.map(json.dumps),
    json_data(max_leaves=6).map(json.dumps),
    py_expressions.map(lambda e: "py::" + e),
    st.sampled_from(
        ["[" * 50 + "]" * 50, "-" * 50 + "1", "9" * 30, "1e999", "nan", "{'a': [1, {2}]}", "py::"]
    ),
)
