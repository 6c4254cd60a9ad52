"""Property tests of the spec language: any text parses or fails in ktyping's own error,
and matching agrees with an enumeration of every way to split the axes, in bounded work."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from ktyping import Float, KTypeCheckError, Shape, ShapeSpecSyntaxError
from ktyping import _dim_search as search_module
from ktyping import isinstance as kt_isinstance
from ktyping._dim_search import DimSearch
from ktyping._spec_cache import parse_spec

# ----------------------------------------------------------------------------- any text

SPEC_PIECES = [
    *"abnx_019*+#?|.()-/%{} ,\t",
    "...",
    "**",
    "//",
    "min(",
    "prod(*",
    "\u0663",  # an Arabic-Indic digit
    "\u00b2",  # a superscript two (a digit, not a decimal)
    "9**9**9",
    "(" * 70,
]
texts = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(SPEC_PIECES), max_size=30).map("".join),
)


@settings(max_examples=400)
@given(texts, st.lists(st.integers(0, 4), max_size=6))
def test_any_text_is_a_spec_or_a_spec_syntax_error(text: str, shape: list[int]) -> None:
    try:
        Float[text]
        annotation = Shape[text]
    except ShapeSpecSyntaxError as e:
        assert e.spec == text and 1 <= e.column <= len(text) + 1
        return
    try:
        assert kt_isinstance(tuple(shape), annotation) in (True, False)
    except KTypeCheckError:  # `{...}` values outside a scope; too many ways to match
        pass


# ----------------------------------------------------------------------------- matching

TOKENS = [
    *["a", "b", "c", "1", "2", "3", "_"],  # one axis
    *["...", "*_", "+_"],  # anonymous variadics
    *["*x", "+x", "*y", "*#x"],  # named variadics
    *["#a", "#1", "t?", "a?", "a|b", "1|a", "2|3"],  # broadcastable, optional, choices
]
sizes = st.integers(0, 3)
candidates = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "a": sizes,
            "b": sizes,
            "t": sizes,
            "*x": st.lists(sizes, max_size=2).map(tuple),
        },
    ),
    min_size=1,
    max_size=3,
)


def reference_matches(tokens: list[str], shape: tuple[int, ...], start: dict[str, Any]) -> set[frozenset]:
    """Every assignment under which `shape` matches `tokens`, by trying every split.

    As in ktyping, the dims from each position on need their minimum number of axes
    (one for `+x`, even when `*x` is bound to `()`).
    """
    found: set[frozenset] = set()
    least = [
        sum(t[0] == "+" or not (t[0] in "*." or t.endswith("?")) for t in tokens[i:])
        for i in range(len(tokens))
    ]

    def go(i: int, j: int, a: dict[str, Any]) -> None:
        if i == len(tokens):
            if j == len(shape):
                found.add(frozenset(a.items()))
            return
        if len(shape) - j < least[i]:
            return
        token = tokens[i]
        if token in ("...", "*_", "+_"):
            for k in range(1 if token == "+_" else 0, len(shape) - j + 1):
                go(i + 1, j + k, a)
        elif token[0] in "*+":
            key = "*" + token.lstrip("*+#")
            if key not in a:
                for k in range(1 if token[0] == "+" else 0, len(shape) - j + 1):
                    go(i + 1, j + k, {**a, key: shape[j : j + k]})
                return
            bound, axes = a[key], shape[j : j + len(a[key])]
            if len(axes) < len(bound):
                return
            if "#" not in token:
                if axes == bound:
                    go(i + 1, j + len(bound), a)
                return
            merged = []
            for x, y in zip(bound, axes):
                if x != y and 1 not in (x, y):
                    return
                merged.append(y if x == 1 else x)
            go(i + 1, j + len(bound), {**a, key: tuple(merged)})
        else:
            body = token.rstrip("?")
            if token.endswith("?"):
                go(i + 1, j, a)  # absent
            if j == len(shape):
                return
            size = shape[j]
            if body == "_" or (body.startswith("#") and size == 1):
                go(i + 1, j + 1, a)
                return
            for option in body.lstrip("#").split("|"):
                if option.isdigit():
                    if int(option) == size:
                        go(i + 1, j + 1, a)
                elif option not in a:
                    go(i + 1, j + 1, {**a, option: size})
                elif a[option] == size:
                    go(i + 1, j + 1, a)

    go(0, 0, start)
    return found


@contextlib.contextmanager
def counted_matching(memoise_all: bool) -> Iterator[list[int]]:
    """Counts the calls of `DimSearch.match_from`; with `memoise_all`, every match is memoised."""
    calls = [0]
    original, plain_paths = DimSearch.match_from, search_module._PLAIN_PATHS

    def counting(self: DimSearch, *args: Any) -> None:
        calls[0] += 1
        original(self, *args)

    DimSearch.match_from = counting  # type: ignore[method-assign]
    if memoise_all:
        search_module._PLAIN_PATHS = -1
    try:
        yield calls
    finally:
        DimSearch.match_from = original  # type: ignore[method-assign]
        search_module._PLAIN_PATHS = plain_paths


def check_against_reference(tokens: list[str], shape: tuple[int, ...], cands: list, memoise_all: bool) -> int:
    """Asserts the matcher finds exactly the reference's assignments; returns its calls."""
    spec = parse_spec(" ".join(tokens))
    with counted_matching(memoise_all) as calls:
        got = spec.match(shape, cands, None)
    expected = set().union(*(reference_matches(tokens, shape, a) for a in cands))
    assert {frozenset(a.items()) for a in got} == expected
    assert len(got) == len(expected)  # no assignment twice
    return calls[0]


match_cases = given(
    st.lists(st.sampled_from(TOKENS), max_size=7),
    st.lists(sizes, max_size=8).map(tuple),
    candidates,
)


@settings(max_examples=300)
@match_cases
def test_matching_agrees_with_the_reference(tokens: list[str], shape: tuple[int, ...], cands: list) -> None:
    calls = check_against_reference(tokens, shape, cands, memoise_all=False)
    # Plain backtracking only runs while it has at most `_PLAIN_PATHS` paths.
    assert calls <= (len(tokens) + 1) * search_module._PLAIN_PATHS


@settings(max_examples=300)
@match_cases
def test_memoised_matching_agrees_with_the_reference_in_polynomial_work(
    tokens: list[str], shape: tuple[int, ...], cands: list
) -> None:
    calls = check_against_reference(tokens, shape, cands, memoise_all=True)
    found = len(parse_spec(" ".join(tokens)).match(shape, cands, None))
    assert calls <= 2 * ((len(tokens) + 1) * (len(shape) + 1) ** 2 * len(cands) + found)
