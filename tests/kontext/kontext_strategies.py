"""Hypothesis strategies for kontext paths and trees (shared by the kontext tests)."""

from __future__ import annotations

from hypothesis import strategies as st
from kontext import Wildcard

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
ints = st.integers(min_value=-(10**6), max_value=10**6)
floats = st.floats(allow_nan=False, allow_infinity=False)
texts = st.text(max_size=8)
constants = st.sampled_from([None, True, False])

# A key usable inside a tuple key (no slices: Python forbids `x[(1:2,)]`).
scalar_keys = st.one_of(texts, ints, floats, constants)
tuple_items = st.recursive(
    scalar_keys | st.just(...),
    lambda inner: st.lists(inner, max_size=3).map(tuple),
    max_leaves=6,
)
bounds = st.none() | st.integers(min_value=-50, max_value=50)
slices = st.builds(slice, bounds, bounds, bounds)
top_level_tuples = st.lists(tuple_items | slices, max_size=4).map(tuple)

concrete_parts = st.one_of(
    identifiers,
    texts,
    ints,
    floats,
    constants,
    st.just(...),
    slices,
    top_level_tuples,
)
glob_parts = concrete_parts | st.sampled_from([Wildcard.STAR, Wildcard.DOUBLE_STAR])

path_parts = st.lists(concrete_parts, max_size=6).map(tuple)
glob_path_parts = st.lists(glob_parts, max_size=6).map(tuple)

# Nested containers with string / int keys and scalar leaves, for lookup and flatten properties.
leaves = st.one_of(st.integers(), st.text(max_size=3), st.booleans(), st.none())
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.one_of(identifiers, texts, ints), children, max_size=4),
    ),
    max_leaves=25,
)
