"""Hypothesis strategies for konfig config trees (used by test_properties.py).

`configs()` draws a root `ConfigDict` mixing plain nodes, call nodes of
stdlib targets that accept any keyword (`types:SimpleNamespace`), constant
nodes, every leaf kind konfig stores (tuples, sets, bytes, slices, ranges,
Ellipsis, complex numbers, paths), non-str keys, keys that look like JSON
markers, shared nodes and references (plain and with operators) to an int
field (plain, with operators, through `konfig.ref_fn`), placeholders.
Everything resolves without third-party libraries.
"""

from __future__ import annotations

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
