"""Hypothesis strategies for kontext paths and trees (shared by the kontext tests)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import kontext._glob
import pytest
from hypothesis import strategies as st
from kontext import Wildcard
from kontext._parser import format_parts

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
ints = st.integers(min_value=-(10**6), max_value=10**6)
floats = st.floats(allow_nan=False, allow_infinity=False)
complexes = st.complex_numbers(allow_nan=False, allow_infinity=False)
texts = st.text(max_size=8)
constants = st.sampled_from([None, True, False])

# A key usable inside a tuple key (no slices: Python forbids `x[(1:2,)]`).
scalar_keys = st.one_of(texts, ints, floats, complexes, constants)
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
    complexes,
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

# Hostile path texts, for the grammar fuzz: grammar characters, digits of other scripts ("²", "٣"),
# escapes, NUL, long integers and runs of brackets, alone or spliced into valid paths.
_hostile_alphabet = "ab_x01-+.e[](),:'\"\\ \t*N²٣é\x00"
_hostile_chunks = st.sampled_from(
    [
        "(",
        ")",
        "[",
        "]",
        "**.",
        "*.",
        ".",
        "a",
        "'",
        '"',
        "\\",
        "\\d",
        "\\777",
        "1" * 30,
        "9" * 5000,
        ",",
        ":",
        "...",
    ]
)


@st.composite
def _spliced_paths(draw: st.DrawFn) -> str:
    text = format_parts(draw(glob_path_parts))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        cut = draw(st.integers(min_value=0, max_value=2))
        text = text[:at] + draw(_hostile_chunks | st.text(_hostile_alphabet, max_size=3)) + text[at + cut :]
    return text


path_texts = st.one_of(
    st.text(alphabet=_hostile_alphabet, max_size=30),
    st.lists(_hostile_chunks, max_size=30).map("".join),
    _spliced_paths(),
)

# Tiny trees and wildcard-heavy globs, to compare the matcher with a reference that tries every route.
small_trees = st.recursive(
    st.integers(min_value=0, max_value=3) | st.none(),
    lambda children: st.one_of(
        st.dictionaries(st.sampled_from(["a", "b", "x", 0, 1]), children, max_size=3),
        st.lists(children, max_size=3),
        st.lists(children, max_size=2).map(tuple),
    ),
    max_leaves=12,
)
wildcard_heavy_parts = st.lists(
    st.sampled_from([Wildcard.STAR, Wildcard.DOUBLE_STAR, Wildcard.DOUBLE_STAR, "a", "x", 0, -1]), max_size=10
).map(tuple)


def _chain(links: list[str], leaf: object) -> object:
    """``{"a": [{"x": ...}]}``-style nesting: a dict per name in ``links``, a one-item list per ``"[]"``."""
    node = leaf
    for link in reversed(links):
        node = [node] if link == "[]" else {link: node}
    return node


# Deep narrow trees: where trying every route of a wildcard-heavy glob costs exponentially many steps.
deep_chains = st.builds(
    _chain,
    st.lists(st.sampled_from(["a", "a", "x", "[]"]), min_size=5, max_size=16),
    st.sampled_from([1, None, {"x": 1}, {"a": 1, "x": {"a": 2}}]),
)


@contextlib.contextmanager
def counted_glob_work() -> Iterator[list[int]]:
    """Counts the work of the glob walk: each node it opens, plus each child it is given there."""
    work = [0]
    original = kontext._glob.children_of

    def counting(obj: object) -> object:
        found = original(obj)
        work[0] += 1 + (len(found) if found else 0)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kontext._glob, "children_of", counting)
        yield work
