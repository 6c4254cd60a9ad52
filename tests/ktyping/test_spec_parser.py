"""The shape spec language: what parses, into what, and how syntax errors read."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from ktyping import ShapeSpecSyntaxError
from ktyping._spec_cache import parse_spec
from ktyping._spec_tree import BinOp, Call, Const, Name, PyExpr, SingleDim, VariadicDim, VarRef


def test_dims_are_separated_by_whitespace() -> None:
    assert [str(d) for d in parse_spec("  b   h w  ").dims] == ["b", "h", "w"]


def test_named_and_fixed_dims() -> None:
    n, three = parse_spec("n 3").dims
    assert isinstance(n, SingleDim) and isinstance(n.options[0], Name) and n.options[0].name == "n"
    assert (
        isinstance(three, SingleDim) and isinstance(three.options[0], Const) and three.options[0].value == 3
    )


@pytest.mark.parametrize(
    ("text", "name", "min_len"),
    [("*b", "b", 0), ("+b", "b", 1), ("*_", None, 0), ("...", None, 0), ("+_", None, 1)],
)
def test_variadic_dims(text: str, name: str | None, min_len: int) -> None:
    (dim,) = parse_spec(text).dims
    assert isinstance(dim, VariadicDim)
    assert (dim.name, dim.min_len, dim.broadcast) == (name, min_len, False)


def test_broadcastable_variadic_dim() -> None:
    (dim,) = parse_spec("*#b").dims
    assert isinstance(dim, VariadicDim) and dim.broadcast and dim.name == "b"


@pytest.mark.parametrize("text", ["_", "_batch"])
def test_anonymous_dims_have_no_options(text: str) -> None:
    (dim,) = parse_spec(text).dims
    assert isinstance(dim, SingleDim) and dim.options == () and dim.min_len == 1


def test_optional_dim_takes_zero_or_one_axis() -> None:
    (dim,) = parse_spec("t?").dims
    assert isinstance(dim, SingleDim) and (dim.min_len, dim.max_len) == (0, 1)


def test_broadcastable_dim() -> None:
    (dim,) = parse_spec("#c").dims
    assert isinstance(dim, SingleDim) and dim.broadcast


def test_choices_become_options() -> None:
    (dim,) = parse_spec("3|4|c").dims
    assert isinstance(dim, SingleDim)
    assert [str(o) for o in dim.options] == ["3", "4", "c"]


def test_expression_precedence() -> None:
    (dim,) = parse_spec("a+b*c**2").dims
    assert isinstance(dim, SingleDim)
    assert str(dim.options[0]) == "(a+(b*(c**2)))"


def test_parenthesised_floor_division() -> None:
    (dim,) = parse_spec("(c+1)//2").dims
    assert isinstance(dim, SingleDim)
    expr = dim.options[0]
    assert isinstance(expr, BinOp) and expr.op == "//"


def test_functions_and_variadic_arguments() -> None:
    mn, pr = parse_spec("min(h,w) prod(*b)").dims
    assert isinstance(mn, SingleDim) and isinstance(mn.options[0], Call) and mn.options[0].func == "min"
    assert isinstance(pr, SingleDim)
    call = pr.options[0]
    assert isinstance(call, Call) and isinstance(call.args[0], VarRef)


def test_spaces_inside_parentheses_do_not_split_dims() -> None:
    assert len(parse_spec("b min(h, w) ( c + 1 )").dims) == 3


def test_python_expression_in_braces() -> None:
    (dim,) = parse_spec("{self.hidden * 2}").dims
    assert isinstance(dim, SingleDim) and isinstance(dim.options[0], PyExpr)
    assert dim.options[0].source == "self.hidden * 2"


def test_several_variadic_dims_in_one_spec() -> None:
    assert sum(isinstance(d, VariadicDim) for d in parse_spec("*b *c n").dims) == 2


def test_parsing_is_cached_per_string() -> None:
    assert parse_spec("x y z") is parse_spec("x y z")


@pytest.mark.parametrize(
    ("text", "column", "expected"),
    [
        ("b n+", 5, "a dim name, a number"),
        ("b (n+1", 7, "')'"),
        ("b *3", 4, "a dim name after '*'"),
        ("b n$", 4, "whitespace between dims"),
        ("min(a b)", 7, "',' or ')'"),
        ("{x +}", 2, "a valid Python expression"),
        ("# n", 2, "a dim name or a number after '#'"),
        ("b foo(n)", 3, "one of the functions max, min, prod, sum"),
    ],
)
def test_syntax_errors_point_at_the_column(text: str, column: int, expected: str) -> None:
    with pytest.raises(ShapeSpecSyntaxError) as info:
        parse_spec(text)
    assert info.value.column == column
    assert expected in info.value.expected
    assert str(info.value).splitlines()[-1].index("^") - 4 == column - 1


def test_syntax_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="column 4"):
        parse_spec("a +")


names = st.from_regex(r"[a-z][a-z0-9_]{0,4}", fullmatch=True)
atoms = st.one_of(names, st.integers(0, 99).map(str))
exprs = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%"]), inner).map(
            lambda t: f"({t[0]}{t[1]}{t[2]})"
        ),
        st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(lambda t: f"{t[0]}({t[1]},{t[2]})"),
    ),
    max_leaves=5,
)
dims = st.one_of(
    exprs,
    names.map(lambda n: "*" + n),
    names.map(lambda n: "+" + n),
    names.map(lambda n: "*#" + n),
    names.map(lambda n: "#" + n),
    names.map(lambda n: n + "?"),
    names.map(lambda n: "_" + n),
    st.just("_"),
    st.just("..."),
    st.just("*_"),
    st.lists(atoms, min_size=2, max_size=3).map("|".join),
)


@given(st.lists(dims, max_size=6))
def test_every_grammatical_spec_parses_into_one_dim_per_token(tokens: list[str]) -> None:
    try:
        spec = parse_spec(" ".join(tokens))
    except ShapeSpecSyntaxError as e:
        # The grammar can write a constant divisor of 0 (`(3%(1-1))`): a syntax error by design.
        if "not 0" not in e.expected and "divides by zero" not in e.expected:
            raise
        assume(False)
    assert [str(d) for d in spec.dims] == tokens


@given(st.text(alphabet="ab1 *+#_?|()-/{}.,%", max_size=12))
def test_arbitrary_text_either_parses_or_raises_a_syntax_error(text: str) -> None:
    try:
        parse_spec(text)
    except ShapeSpecSyntaxError as e:
        assert 1 <= e.column <= len(text) + 1


def test_spec_cache_is_bounded() -> None:
    from ktyping import _spec_cache

    for i in range(_spec_cache._SPEC_CACHE_SIZE + 10):
        parse_spec(f"b {i}")
    assert len(_spec_cache._SPEC_CACHE) <= _spec_cache._SPEC_CACHE_SIZE
