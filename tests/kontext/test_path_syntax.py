"""The path grammar: what parses to which parts, the canonical form, and syntax errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kontext import GlobPath, Path, PathSyntaxError, Wildcard

from .strategies import glob_path_parts, path_parts


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("", ()),
        ("a", ("a",)),
        ("a.b.c", ("a", "b", "c")),
        ("a.0", ("a", 0)),
        ("a.0.b", ("a", 0, "b")),
        ("a.-1", ("a", -1)),
        ("a[0]", ("a", 0)),
        ("x[-1]", ("x", -1)),
        ("x['a.b']", ("x", "a.b")),
        ('x["a.b"]', ("x", "a.b")),
        ('x[("a", 1)]', ("x", ("a", 1))),
        ("x['a', 1]", ("x", ("a", 1))),
        ("x[2j]", ("x", 2j)),
        ("x[(1-2j)]", ("x", 1 - 2j)),
        ("x[1e+16+1j, -0j]", ("x", (1e16 + 1j, complex(0.0, -0.0)))),
        ("tensor[:,7,::-1,None]", ("tensor", (slice(None), 7, slice(None, None, -1), None))),
        ("x[0,]", ("x", (0,))),
        ("x[()]", ("x", ())),
        ("x[None]", ("x", None)),
        ("x[True]", ("x", True)),
        ("x[1.5]", ("x", 1.5)),
        ("x[...]", ("x", ...)),
        ("x[:3]", ("x", slice(None, 3))),
        ("x[1:]", ("x", slice(1, None))),
        ("x[::2]", ("x", slice(None, None, 2))),
        ("x[1:-1:2]", ("x", slice(1, -1, 2))),
        ("x[ 1 : 2 ]", ("x", slice(1, 2))),
        (
            "interms.encoder.__call__[0][..., :3]",
            ("interms", "encoder", "__call__", 0, (..., slice(None, 3))),
        ),
        ("[0].a", (0, "a")),
        ("['a b'].c", ("a b", "c")),
        ("x[(1, (2, 'z'))]", ("x", (1, (2, "z")))),
        ("x['it\\'s']", ("x", "it's")),
        ("x['tab\\tnew\\nline']", ("x", "tab\tnew\nline")),
    ],
)
def test_path_string_parses_to_parts(text: str, parts: tuple) -> None:
    assert Path.from_str(text).parts == parts


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("*", (Wildcard.STAR,)),
        ("**.kernel", (Wildcard.DOUBLE_STAR, "kernel")),
        ("params.*.bias", ("params", Wildcard.STAR, "bias")),
        ("a[0].**", ("a", 0, Wildcard.DOUBLE_STAR)),
    ],
)
def test_glob_path_parses_wildcards(text: str, parts: tuple) -> None:
    assert GlobPath.from_str(text).parts == parts


def test_wildcard_string_in_brackets_is_a_plain_key_not_a_wildcard() -> None:
    assert GlobPath.from_str("a['*']").parts == ("a", "*")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("a.0.b", "a[0].b"),
        ('x["a.b"]', "x['a.b']"),
        ('x[("a", 1)]', "x['a',1]"),
        ("x[(1,)]", "x[1,]"),
        ("x[ ... , : 3 ]", "x[...,:3]"),
        ("tensor[  :   ,    7  , ::-1 , None ]", "tensor[:,7,::-1,None]"),
        ("x[(1, (2, 'z'))]", "x[1,(2, 'z')]"),
        ("x[1-2j]", "x[(1-2j)]"),
        ("x[(-0.0-0j)]", "x[(-0-0j)]"),
        ("x[+3]", "x[3]"),
        ("x[(5)]", "x[5]"),
        ("['name']", "name"),
        ("a['b']", "a.b"),
        ("x[1:None]", "x[1:]"),
    ],
)
def test_equivalent_spellings_print_the_same_canonical_form(text: str, canonical: str) -> None:
    assert str(Path.from_str(text)) == canonical


@given(path_parts)
def test_canonical_string_parses_back_to_the_same_path(parts: tuple) -> None:
    path = Path(*parts)
    assert Path.from_str(str(path)) == path


@given(path_parts)
def test_canonical_string_is_a_fixed_point(parts: tuple) -> None:
    text = str(Path(*parts))
    assert str(Path.from_str(text)) == text


@given(glob_path_parts)
def test_glob_canonical_string_round_trips(parts: tuple) -> None:
    path = GlobPath(*parts)
    assert GlobPath.from_str(str(path)) == path
    assert str(GlobPath.from_str(str(path))) == str(path)


@given(st.text(alphabet="ab01._[]()'\",:*- .N", max_size=12))
def test_any_text_either_parses_or_raises_path_syntax_error(text: str) -> None:
    try:
        path = GlobPath.from_str(text)
    except PathSyntaxError:
        return
    assert str(GlobPath.from_str(str(path))) == str(path)


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("a..b", 2, "empty name"),
        ("a.", 2, "empty name"),
        (".a", 0, "empty name"),
        ("a[b]", 2, "did you mean ['b']"),
        ("a[0", 3, "expected ',' or ']'"),
        ("a b", 0, "'a b'"),
        ("a['x]", 2, "unterminated string"),
        ("a[1:2.5]", 2, "slice bounds must be integers"),
        ("a[]", 2, "expected a key"),
        ("a]", 1, "expected '.' or '['"),
        ("a.***", 2, "'***'"),
        ("x[(1, 2]", 7, "expected ',' or ')'"),
        ("x[nan]", 2, "'nan'"),
        ("x[j]", 2, "did you mean ['j']"),
        ("x[infj]", 2, "'infj'"),
        ("x[1+nanj]", 2, "'1+nanj'"),
    ],
)
def test_syntax_error_points_at_the_offending_position(text: str, position: int, fragment: str) -> None:
    with pytest.raises(PathSyntaxError) as info:
        Path.from_str(text)
    assert info.value.position == position
    assert info.value.path == text
    assert fragment in str(info.value)
    assert str(info.value).splitlines()[-1] == "  " + " " * position + "^"


def test_complex_parts_are_accepted_when_finite() -> None:
    assert Path("x", 1 + 2j).parts == ("x", 1 + 2j)
    assert str(Path(("a", complex(0.0, -0.0)))) == "['a',-0j]"
    with pytest.raises(TypeError, match="complex numbers must be finite"):
        Path(complex(float("inf"), 0))


def test_syntax_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Path.from_str("a..b")


def test_from_str_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="expects a str"):
        Path.from_str(["a", "b"])  # type: ignore[arg-type]


@given(path_parts, glob_path_parts)
def test_appending_a_part_to_a_formatted_path_equals_formatting_the_longer_path(
    head: tuple, tail: tuple
) -> None:
    from kontext._parser import append_part, format_parts

    text = format_parts(head)
    for part in tail:
        text = append_part(text, part)
    assert text == format_parts(head + tail)


def test_syntax_error_pickles_with_its_position() -> None:
    import pickle

    with pytest.raises(PathSyntaxError) as info:
        Path.from_str("a..b")
    restored = pickle.loads(pickle.dumps(info.value))
    assert (restored.path, restored.position, str(restored)) == ("a..b", 2, str(info.value))
