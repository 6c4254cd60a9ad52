"""Hostile and careless specs and values end fast, in ktyping's own errors.

No test here measures time: each input would take hours (or all the memory) if its bug
came back, and matching work is counted in calls of the recursive matcher.
"""

import numpy as np
import pytest
from ktyping import Float, KTypeCheckError, Shape, ShapeSpecSyntaxError, check_type, typechecked
from ktyping import _dim_search as search_module
from ktyping import isinstance as kt_isinstance
from ktyping._dim_search import DimSearch
from ktyping._format import compact
from ktyping._spec_cache import parse_spec


@pytest.fixture
def match_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of `DimSearch.match_from`, the recursive step of matching."""
    calls = [0]
    original = DimSearch.match_from

    def counting(self: DimSearch, *args: object) -> None:
        calls[0] += 1
        original(self, *args)

    monkeypatch.setattr(DimSearch, "match_from", counting)
    return calls


def ones(n: int) -> tuple[int, ...]:
    return (1,) * n


# ----------------------------------------------------------------------------- backtracking


@pytest.mark.parametrize("variadic", ["...", "*_"])
def test_a_run_of_anonymous_variadics_is_tried_as_one(variadic: str, match_calls: list[int]) -> None:
    # 40 of them then `7`, against 60 axes of size 1: ~10**28 ways to split the axes.
    spec = parse_spec(" ".join([variadic] * 40 + ["7"]))
    assert spec.match(ones(60), [{}], None) == []
    assert match_calls[0] <= 2 * 61


def test_merged_anonymous_variadics_keep_their_minimum_length() -> None:
    spec = parse_spec("... +_ *_ +_ 7")
    assert spec.match((1, 1, 7), [{}], None) == [{}]
    assert spec.match((1, 7), [{}], None) == []


def test_anonymous_variadics_between_dims_are_memoised(match_calls: list[int]) -> None:
    spec = parse_spec(" ".join(["..."] + ["1", "..."] * 10 + ["7"]))
    assert spec.match(ones(60), [{}], None) == []
    assert match_calls[0] <= 22 * 61


def test_named_variadics_that_nothing_later_reads_are_memoised(match_calls: list[int]) -> None:
    spec = parse_spec("*a *b *c *d *e *f ... 7")
    assert spec.match(ones(60), [{}], None) == []
    assert match_calls[0] <= 8 * 61


def test_memoised_matching_finds_what_backtracking_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse_spec("*a t? *b 2|c *a")
    shape, cands = (1, 2, 1, 2, 3, 1, 2), [{}, {"t": 1}, {"c": 3}]
    plain = spec.match(shape, cands, None)
    monkeypatch.setattr(search_module, "_PLAIN_PATHS", -1)  # every match memoised
    memoised = spec.match(shape, cands, None)
    assert [list(a.items()) for a in memoised] == [list(a.items()) for a in plain]
    assert len(plain) > 3


def test_a_spec_with_too_many_ways_to_match_raises_naming_it(
    monkeypatch: pytest.MonkeyPatch, match_calls: list[int]
) -> None:
    # Every one of the 2**30 ways to choose x or y per axis is a different assignment.
    monkeypatch.setattr(search_module, "STEP_BUDGET", 2_000)
    text = " ".join(f"x{i}|y{i}" for i in range(30))
    with pytest.raises(KTypeCheckError, match=r"too ambiguous to match a shape of 30 axes") as info:
        isinstance(np.zeros(ones(30)), Float[text])
    assert f"shape spec {text[:100]!r}"[:-1] in str(info.value)
    assert match_calls[0] <= 2_000 + 4 * 31  # the budget: steps, plus a few passes over the 30 dims


def test_more_optional_dims_than_the_stack_holds_raise_the_same_error() -> None:
    with pytest.raises(KTypeCheckError, match="too ambiguous"):
        parse_spec("t? " * 3000).match((), [{}], None)


def test_plain_specs_of_thousands_of_dims_are_matched_without_generated_code() -> None:
    names = " ".join(f"a{i}" for i in range(5000))
    assert not parse_spec(names).straight_line
    assert kt_isinstance(tuple(range(5000)), Shape[names])


# ----------------------------------------------------------------------------- numbers


def test_a_power_tower_is_rejected_when_parsed() -> None:
    with pytest.raises(ShapeSpecSyntaxError, match=r"at most 2\*\*64") as info:
        Float["9**9**8"]
    assert (info.value.spec, info.value.column) == ("9**9**8", 2)


def test_a_power_of_a_huge_dim_is_an_error_naming_the_spec() -> None:
    with pytest.raises(KTypeCheckError, match=r"shape spec 'k 2\*\*k': 2\*\*1000000000000000000 is beyond"):
        kt_isinstance((10**18, 5), Shape["k 2**k"])


def test_a_product_beyond_2_64_is_an_error_naming_the_spec() -> None:
    with pytest.raises(KTypeCheckError, match=r"shape spec '\*b prod\(\*b\)'"):
        kt_isinstance((2**40, 2**40, 5), Shape["*b prod(*b)"])


@pytest.mark.parametrize("text", ["9" * 5000, "18446744073709551617", "#" + "9" * 30])
def test_numbers_beyond_2_64_are_a_syntax_error(text: str) -> None:
    with pytest.raises(ShapeSpecSyntaxError, match=r"a number of at most 2\*\*64"):
        Float[text]


@pytest.mark.parametrize("text", ["3//0", "n/0", "n%(2-2)", "0**-1"])
def test_a_constant_division_by_zero_is_a_syntax_error(text: str) -> None:
    with pytest.raises(ShapeSpecSyntaxError, match=r"divides by zero|not 0"):
        Float[text]


def test_dividing_by_an_axis_of_size_zero_matches_no_size() -> None:
    assert not kt_isinstance((4, 0, 7), Shape["n m n//m"])
    assert not kt_isinstance((4, 0, 7), Shape["n m n/m"])


def test_an_axis_of_size_zero_times_anything_is_zero() -> None:
    assert not kt_isinstance((0, 3), Shape["m n*m"])  # was kept as an unsolvable constraint
    assert kt_isinstance((0, 0), Shape["m n*m"])


def test_an_even_root_of_a_negative_dim_matches_no_size() -> None:
    assert not kt_isinstance((4, 2), Shape["n (0-n)**(1/2)//1"])


def test_superscript_digits_are_a_syntax_error() -> None:
    with pytest.raises(ShapeSpecSyntaxError, match="found '²'"):
        Float["²"]


def test_other_decimal_digits_still_read_as_numbers() -> None:
    assert isinstance(np.zeros((3, 3)), Float["\u0663 \uff13"])  # Arabic-Indic and fullwidth 3


def test_sizes_too_long_to_print_are_abbreviated_in_messages() -> None:
    assert compact(10**5000) == "<a 16610-bit number>"
    with pytest.raises(KTypeCheckError, match="axis 0 has size <a 16610-bit number>, expected 3"):
        with typechecked():
            check_type((10**5000,), Shape["3"])


# ----------------------------------------------------------------------------- nesting


def test_3000_nested_parentheses_are_a_syntax_error_at_the_65th() -> None:
    text = "(" * 3000 + "a" + ")" * 3000
    with pytest.raises(ShapeSpecSyntaxError, match="at most 64 levels") as info:
        Float[text]
    assert (info.value.spec, info.value.column) == (text, 65)


@pytest.mark.parametrize(
    "text",
    ["-" * 3000 + "a", "2**" * 3000 + "2", "a+" * 5000 + "a", "min(" * 3000 + "a" + ")" * 3000],
    ids=["unary minus", "power chain", "sum chain", "calls"],
)
def test_deeply_nested_expressions_are_a_syntax_error(text: str) -> None:
    with pytest.raises(ShapeSpecSyntaxError, match="at most 64"):
        Float[text]


@pytest.mark.parametrize(
    "text", ["{" + "a+" * 100_000 + "a}", "{" + "(" * 300 + "a" + ")" * 300 + "}", "{a\x00}"]
)
def test_python_values_that_do_not_compile_are_a_syntax_error(text: str) -> None:
    with pytest.raises(ShapeSpecSyntaxError, match="a valid Python expression"):
        Float[text]
