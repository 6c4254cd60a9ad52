"""Matching shapes against specs: bindings, candidates, expressions and backward solving."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ktyping._spec_cache import parse_spec
from ktyping._spec_tree import PENDING


def match(spec: str, shape: tuple, cands: list | None = None) -> list[dict]:
    return parse_spec(spec).match(shape, [{}] if cands is None else cands, None)


def test_named_dims_bind_axis_sizes() -> None:
    assert match("b n", (2, 3)) == [{"b": 2, "n": 3}]


def test_named_dim_must_agree_with_earlier_binding() -> None:
    assert match("b n", (2, 3), [{"b": 2}]) == [{"b": 2, "n": 3}]
    assert match("b n", (4, 3), [{"b": 2}]) == []


def test_repeated_name_in_one_spec_must_match_itself() -> None:
    assert match("n n", (3, 3)) == [{"n": 3}]
    assert match("n n", (3, 4)) == []


def test_fixed_dims_and_rank() -> None:
    assert match("b 3", (5, 3)) == [{"b": 5}]
    assert match("b 3", (5, 4)) == []
    assert match("b 3", (5, 3, 1)) == []


def test_anonymous_dims_match_anything_and_bind_nothing() -> None:
    assert match("_ _x n", (7, 8, 9)) == [{"n": 9}]


def test_variadic_binds_a_tuple() -> None:
    assert match("*b n", (4, 5, 6)) == [{"*b": (4, 5), "n": 6}]
    assert match("*b n", (6,)) == [{"*b": (), "n": 6}]


def test_plus_variadic_needs_at_least_one_axis() -> None:
    assert match("+b n", (6,)) == []
    assert match("+b n", (2, 6)) == [{"*b": (2,), "n": 6}]


def test_bound_variadic_must_match_exactly() -> None:
    assert match("*b", (4, 5), [{"*b": (4, 5)}]) == [{"*b": (4, 5)}]
    assert match("*b", (4,), [{"*b": (4, 5)}]) == []


def test_anonymous_variadics_match_any_axes() -> None:
    assert match("... n", (1, 2, 3)) == [{"n": 3}]
    assert match("*_ n", (3,)) == [{"n": 3}]


def test_several_variadics_keep_every_split_as_a_candidate() -> None:
    got = match("*a *b d", (32, 7, 3))
    assert [c["*a"] for c in got] == [(), (32,), (32, 7)]
    assert [c["*b"] for c in got] == [(32, 7), (7,), ()]


def test_candidates_are_narrowed_by_a_later_check() -> None:
    cands = match("*a *b d", (32, 7, 3))
    assert match("*a", (32,), cands) == [{"*a": (32,), "*b": (7,), "d": 3}]


def test_optional_dim_may_be_absent() -> None:
    assert match("b t? n", (2, 5)) == [{"b": 2, "n": 5}]
    assert match("b t? n", (2, 4, 5)) == [{"b": 2, "t": 4, "n": 5}]


def test_broadcastable_dim_accepts_one() -> None:
    assert match("#c", (1,), [{"c": 5}]) == [{"c": 5}]
    assert match("#c", (5,), [{"c": 5}]) == [{"c": 5}]
    assert match("#c", (4,), [{"c": 5}]) == []
    assert match("#c", (1,)) == [{}]


def test_broadcastable_variadic_accepts_ones() -> None:
    assert match("*#b", (1, 5), [{"*b": (4, 5)}]) == [{"*b": (4, 5)}]
    assert match("*#b", (4, 1), [{"*b": (1, 5)}]) == [{"*b": (4, 5)}]
    assert match("*#b", (3, 5), [{"*b": (4, 5)}]) == []


def test_choices_branch_into_candidates() -> None:
    assert match("3|4", (4,)) == [{}]
    assert match("3|4", (5,)) == []
    assert match("3|c", (3,)) == [{}, {"c": 3}]


@pytest.mark.parametrize(
    ("spec", "shape", "expected"),
    [
        ("h w h*w", (2, 3, 6), True),
        ("h w h*w", (2, 3, 5), False),
        ("c c+1", (4, 5), True),
        ("c (c+1)//2", (5, 3), True),
        ("c (c+1)//2", (5, 2), False),
        ("h w min(h,w)", (4, 7, 4), True),
        ("h w max(h,w)", (4, 7, 4), False),
        ("*b prod(*b)", (2, 3, 6), True),
        ("*b sum(*b)", (2, 3, 6), False),
        ("k 2**k", (3, 8), True),
        ("n n-1", (4, 3), True),
    ],
)
def test_expressions_evaluate_from_bound_dims(spec: str, shape: tuple, expected: bool) -> None:
    assert bool(match(spec, shape)) is expected


@pytest.mark.parametrize(
    ("spec", "size", "name", "value"),
    [("n+1", 5, "n", 4), ("n-1", 5, "n", 6), ("2*n", 6, "n", 3), ("n*3+1", 7, "n", 2), ("10-n", 7, "n", 3)],
)
def test_expressions_are_solved_backwards(spec: str, size: int, name: str, value: int) -> None:
    assert match(spec, (size,)) == [{name: value}]


@pytest.mark.parametrize(
    ("spec", "known", "size", "solved"),
    [
        ("a/b", {"b": 7}, 3, {"a": 21}),
        ("a/b", {"a": 21}, 3, {"b": 7}),
        ("a-b", {"a": 7}, 5, {"b": 2}),
        ("a*b", {"a": 7}, 21, {"b": 3}),
    ],
)
def test_expressions_are_solved_for_either_operand(spec: str, known: dict, size: int, solved: dict) -> None:
    assert match(spec, (size,), [known]) == [{**known, **solved}]


def test_exact_division_by_a_non_divisor_fails() -> None:
    assert match("a/b", (4,), [{"a": 21}]) == []
    assert match("a/b", (4,), [{"a": 21, "b": 5}]) == []
    assert match("a//b", (4,), [{"a": 21, "b": 5}]) == [{"a": 21, "b": 5}]


def test_broadcastable_dim_does_not_widen_a_dim_bound_to_one() -> None:
    # jaxtyping and Kauldron agree: `#c` is 1 or c; with c = 1 only 1 fits.
    assert match("c #c", (1, 4)) == []


def test_backward_solving_rejects_impossible_sizes() -> None:
    assert match("2*n", (7,)) == []
    assert match("n+3", (2,)) == []


def test_unsolvable_expression_is_deferred_until_its_dims_are_known() -> None:
    cands = match("(c+1)//2", (3,))
    assert PENDING in cands[0]
    assert match("c", (5,), cands) == [{"c": 5}]
    assert match("c", (9,), cands) == []


def test_deferred_constraint_is_checked_when_a_variadic_is_bound() -> None:
    cands = match("prod(*b)", (6,))
    assert match("*b", (2, 3), cands) == [{"*b": (2, 3)}]
    assert match("*b", (2, 2), cands) == []


def test_python_expression_reads_bound_arguments() -> None:
    class Scope:
        arguments = {"hidden": 16}

    assert parse_spec("n {hidden}").match((3, 16), [{}], Scope()) == [{"n": 3}]
    assert parse_spec("n {hidden}").match((3, 8), [{}], Scope()) == []


def test_evaluate_builds_the_shape_from_bindings() -> None:
    assert parse_spec("*b n+1 2*n").evaluate({"*b": (4,), "n": 3}, None) == (4, 4, 6)
    assert parse_spec("b n").evaluate({"b": 2}, None) is None


@given(st.lists(st.integers(0, 9), max_size=5), st.data())
def test_a_spec_written_from_a_shape_matches_it(shape: list[int], data: st.DataObject) -> None:
    tokens = []
    for i, size in enumerate(shape):
        tokens.append(data.draw(st.sampled_from([f"d{i}", str(size), "_", f"d{i}+1-1", f"{size}|d{i}"])))
    if data.draw(st.booleans()):
        tokens.insert(data.draw(st.integers(0, len(tokens))), "*extra")
    assert match(" ".join(tokens), tuple(shape))


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.integers(0, 3))
def test_split_between_two_variadics_yields_every_cut(shape: list[int], _: int) -> None:
    got = match("*a *b", tuple(shape))
    assert len(got) == len(shape) + 1
    assert all(c["*a"] + c["*b"] == tuple(shape) for c in got)


simple_tokens = st.sampled_from(["a", "b", "c", "_", "1", "2", "3"])
sizes = st.integers(1, 3)


@given(
    st.lists(simple_tokens, max_size=4),
    st.lists(sizes, max_size=4),
    st.lists(
        st.dictionaries(st.sampled_from(["a", "b", "c"]), sizes, max_size=3),
        min_size=1,
        max_size=3,
        unique_by=lambda a: frozenset(a.items()),
    ),
)
def test_generated_matcher_agrees_with_the_general_matcher(
    tokens: list[str], shape: list[int], cands: list
) -> None:
    spec = parse_spec(" ".join(tokens))
    assert spec.simple
    general: list[dict] = []
    for a in cands:
        spec.search.match_from(0, tuple(shape), 0, a, None, general)
    got = spec.matcher(tuple(shape), cands, None)
    assert {frozenset(a.items()) for a in got} == {frozenset(a.items()) for a in general}
    assert len(got) == len({frozenset(a.items()) for a in got})


def brute_force(tokens: list[str], shape: tuple[int, ...]) -> set[frozenset]:
    """The assignments a spec of names, numbers and at most one `*v` allows, by enumeration."""
    results = set()
    n_var = tokens.count("*v")
    singles = len(tokens) - n_var
    if n_var == 0:
        splits = [()] if singles == len(shape) else []
    else:
        free = len(shape) - singles
        splits = [(free,)] if free >= 0 else []  # one variadic takes all the free axes
    for split in splits:
        a: dict = {}
        i = 0
        ok = True
        for tok in tokens:
            if tok == "*v":
                k = split[0]
                value = shape[i : i + k]
                ok = ok and a.setdefault("*v", value) == value
                i += k
            elif tok.isdigit():
                ok = ok and shape[i] == int(tok)
                i += 1
            else:
                ok = ok and a.setdefault(tok, shape[i]) == shape[i]
                i += 1
        if ok:
            results.add(frozenset(a.items()))
    return results


@given(
    st.lists(st.sampled_from(["a", "b", "2", "*v"]), max_size=4).filter(lambda t: t.count("*v") <= 1),
    st.lists(sizes, max_size=5),
)
def test_matcher_agrees_with_brute_force(tokens: list[str], shape: list[int]) -> None:
    got = {frozenset(a.items()) for a in match(" ".join(tokens), tuple(shape))}
    assert got == brute_force(tokens, tuple(shape))


@given(sizes, sizes, st.sampled_from(["c #c", "#c c", "#c #c"]))
def test_broadcastable_dim_is_one_or_its_counterpart_in_either_order(x: int, y: int, spec: str) -> None:
    # `c` must be one size; each `#c` axis is 1 or that size (both `#c`: any sizes that broadcast).
    if spec == "#c #c":
        expected = x == y or 1 in (x, y)
    elif spec == "c #c":
        expected = y in (1, x)
    else:
        expected = x in (1, y)
    assert bool(match(spec, (x, y))) is expected
