# ruff: noqa: F821 - single-name shape specs like Shape["n"] are not forward references
"""Kauldron's module paths (`ktyping.frame_utils`, `config`, `utils`, `internal_typing`, `pytree`,
`errors`, `shape_spec`, ..., `scope`, `dim_view`, `typeguard_checkers`): each exposes ktyping's own objects
under Kauldron's names, and what they add works (with jax's symbolic dims too)."""

import json
import logging
import subprocess
import sys
import types

import ktyping
import numpy as np
import pytest
from ktyping import Shape, config, errors, frame_utils, internal_typing, pytree, utils
from ktyping._config import REPORTING_POLICIES

KAULDRON_PATHS = ("frame_utils", "config", "utils", "internal_typing", "pytree", "errors")


def test_the_module_paths_import_only_the_standard_library() -> None:
    code = (
        "import json, sys; before = set(sys.modules); "
        + "; ".join(f"import ktyping.{name}" for name in KAULDRON_PATHS)
        + "; print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert not loaded & {"numpy", "jax", "torch", "typeguard", "jaxtyping", "etils", "immutabledict"}
    assert all(
        name == "ktyping" or name in sys.stdlib_module_names or name.startswith("_") for name in loaded
    )


def test_the_modules_hand_out_ktypings_own_objects() -> None:
    assert config.Config is ktyping.Config and config.CONFIG is ktyping.CONFIG
    assert config.get_config is ktyping.get_config
    assert config.add_config_override is ktyping.add_config_override
    assert errors.AmbiguousDimensionError is ktyping.AmbiguousDimensionError
    assert errors.KTypeCheckError is ktyping.KTypeCheckError
    assert frame_utils.NoActiveScopeError is errors.NoActiveScopeError is ktyping.NoActiveScopeError
    assert pytree.PyTree is ktyping.PyTree
    assert utils.CodeLocation is type(ktyping.ShapeScope().source)


# ----------------------------------------------------------------------------- frame_utils


def test_get_caller_frame_skips_lambdas_and_comprehensions() -> None:
    here = sys._getframe()
    assert frame_utils.get_caller_frame() is here
    assert (lambda: frame_utils.get_caller_frame())() is here
    assert [frame_utils.get_caller_frame() for _ in range(1)] == [here]
    assert next(frame_utils.get_caller_frame() for _ in range(1)) is here


def test_get_caller_frame_stacklevel_counts_functions_not_lambdas() -> None:
    def inner(stacklevel: int) -> str:
        return frame_utils.get_caller_frame(stacklevel).f_code.co_name

    def outer(stacklevel: int) -> str:
        return (lambda: inner(stacklevel))()

    assert [outer(level) for level in range(3)] == [
        "inner",
        "outer",
        "test_get_caller_frame_stacklevel_counts_functions_not_lambdas",
    ]


def test_get_caller_frame_beyond_the_outermost_frame_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="stacklevel=100000"):
        frame_utils.get_caller_frame(100000)


def test_a_checked_function_has_an_active_scope_and_a_helper_it_calls_has_not() -> None:
    def helper() -> bool:
        return frame_utils.has_active_scope(frame_utils.get_caller_frame())

    @ktyping.typechecked
    def checked(x: Shape["n"]) -> tuple[bool, bool]:
        return frame_utils.has_active_scope(frame_utils.get_caller_frame()), helper()

    assert checked((3,)) == (True, False)
    assert not frame_utils.has_active_scope(sys._getframe())


def test_a_shape_scope_block_gives_its_frame_an_active_scope() -> None:
    with ktyping.ShapeScope():
        assert frame_utils.has_active_scope(sys._getframe())
        frame_utils.assert_caller_has_active_scope()


def test_assert_caller_has_active_scope_names_the_caller_in_a_stack_summary() -> None:
    def unchecked_helper() -> None:
        frame_utils.assert_caller_has_active_scope()

    with ktyping.ShapeScope(), pytest.raises(ktyping.NoActiveScopeError) as raised:
        unchecked_helper()
    message = str(raised.value)
    assert "No active scope for 'unchecked_helper'" in message
    assert ">> unchecked_helper: ---" in message
    assert (
        "   test_assert_caller_has_active_scope_names_the_caller_in_a_stack_summary: active scope" in message
    )


def test_kauldrons_marker_local_lets_a_nested_function_use_the_scope() -> None:
    def marked_helper() -> object:
        __ktyping_scope_counter__ = 1  # noqa: F841 - read from the frame
        frame_utils.assert_caller_has_active_scope()
        return ktyping.get_current_scope()

    with ktyping.ShapeScope() as scope:
        assert marked_helper() is scope


# ----------------------------------------------------------------------------- config


def test_reporting_policy_members_are_the_strings_config_accepts() -> None:
    assert tuple(config.ReportingPolicy) == REPORTING_POLICIES
    assert config.ReportingPolicy.WARN == "warn"
    assert config.Config(jaxtyping_annotations="warn") == config.Config(
        jaxtyping_annotations=config.ReportingPolicy.WARN
    )


def test_an_unknown_reporting_policy_is_refused() -> None:
    with pytest.raises(ValueError, match=r"one of \['ignore', 'log_info', 'warn', 'error'\], got 'loud'"):
        config.Config(jaxtyping_annotations="loud")
    cfg = config.Config()
    with pytest.raises(ValueError, match="got 'loud'"):
        cfg.jaxtyping_annotations = "loud"


def test_update_keeps_the_fields_the_other_config_leaves_missing() -> None:
    base = config.Config(typechecking_enabled=True, jaxtyping_annotations=config.ReportingPolicy.ERROR)
    merged = base.update(config.Config(typechecking_enabled=False))
    assert merged == config.Config(typechecking_enabled=False, jaxtyping_annotations="error")
    assert merged != base
    assert config.CONFIG.jaxtyping_annotations == config.ReportingPolicy.ERROR


def test_get_config_takes_a_code_location_and_matches_its_module_name() -> None:
    override = config.add_config_override(r"mylib\.", config.Config(typechecking_enabled=False))
    try:
        inside = utils.CodeLocation(description="f", file="f.py", line=1, module_name="mylib.layers")
        outside = utils.CodeLocation(description="g", file="g.py", line=1, module_name="other")
        assert config.get_config(inside).typechecking_enabled is False
        assert config.get_config(outside) == config.CONFIG
        assert config.get_config() == config.CONFIG
    finally:
        config.remove_config_override(override)


# ----------------------------------------------------------------------------- jaxtyping annotations


class _JaxtypingArray:
    """Stands in for a jaxtyping annotation (jaxtyping is not a test dependency of ktyping)."""


@pytest.fixture
def jaxtyping_imported(monkeypatch: pytest.MonkeyPatch) -> type:
    stand_in = types.ModuleType("jaxtyping")
    stand_in.AbstractArray = _JaxtypingArray  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jaxtyping", stand_in)
    return _JaxtypingArray


def test_a_jaxtyping_annotation_is_an_error_on_every_call_by_default(jaxtyping_imported: type) -> None:
    @ktyping.typechecked
    def mixed(x: Shape["n"], y: list[jaxtyping_imported]) -> int:  # type: ignore[valid-type]
        return 0

    for _ in range(2):
        with pytest.raises(errors.JaxtypingAnnotationError, match=r"mixes jaxtyping annotations \(y\)"):
            mixed((2,), [])


def test_the_jaxtyping_policy_can_warn_log_or_ignore(
    jaxtyping_imported: type, caplog: pytest.LogCaptureFixture
) -> None:
    @ktyping.typechecked
    def mixed(x: jaxtyping_imported) -> None:  # type: ignore[valid-type]
        return None

    x = jaxtyping_imported()
    with config.Config(jaxtyping_annotations=config.ReportingPolicy.WARN):
        with pytest.warns(UserWarning, match=r"mixes jaxtyping annotations \(x\)"):
            mixed(x)
    with config.Config(jaxtyping_annotations="log_info"), caplog.at_level(logging.INFO, logger="ktyping"):
        mixed(x)
    assert "mixes jaxtyping annotations (x)" in caplog.text
    with config.Config(jaxtyping_annotations="ignore"):
        assert mixed(x) is None
    with config.Config(typechecking_enabled=False):
        assert mixed(x) is None


def test_other_annotations_are_not_reported(jaxtyping_imported: type) -> None:
    @ktyping.typechecked
    def plain(x: Shape["n"], y: list[int]) -> int:
        return len(y)

    assert plain((2,), [1]) == 1


def test_without_jaxtyping_imported_annotations_are_not_inspected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "jaxtyping", raising=False)

    @ktyping.typechecked
    def unseen(x: _JaxtypingArray) -> None:
        return None

    assert unseen(_JaxtypingArray()) is None


# ----------------------------------------------------------------------------- utils, internal_typing


def test_a_scopes_source_is_a_code_location_with_the_module_name() -> None:
    @ktyping.typechecked
    def checked(x: Shape["n"]) -> utils.CodeLocation:
        return ktyping.get_current_scope().source

    source = checked((3,))
    assert isinstance(source, utils.CodeLocation)
    assert source.module_name == __name__ and source.description == "function 'checked'"
    with ktyping.ShapeScope() as scope:
        assert scope.source.module_name == __name__
    assert utils.CodeLocation.unknown().module_name == "<unknown>"
    location = utils.CodeLocation(description="f", file="f.py", line=3, module_name="m")
    assert location.to_str() == "f at f.py:3"
    assert location == utils.CodeLocation("f", "f.py", 3, "m") and hash(location) == hash(
        utils.CodeLocation("f", "f.py", 3, "m")
    )


def test_missing_is_one_falsy_sentinel_for_config_and_pytree() -> None:
    assert internal_typing.MISSING is config.MISSING is pytree.MISSING
    assert not internal_typing.MISSING and repr(internal_typing.MISSING) == "MISSING"
    assert isinstance(internal_typing.MISSING, internal_typing.Missing)
    assert config.Config().typechecking_enabled is internal_typing.MISSING


# ----------------------------------------------------------------------------- pytree


def test_a_pytree_types_name_is_its_repr() -> None:
    tree = pytree.PyTree[int]
    assert tree.__name__ == repr(tree) == "PyTree[int]"
    assert pytree.PyTree[int, "$S"].__name__ == "PyTree[int, '$S']"
    assert pytree.PyTree.leaf_type is internal_typing.MISSING
    assert pytree.PyTree.structure_spec is internal_typing.MISSING


def test_is_pytree_type_recognises_pytree_annotations_only() -> None:
    assert pytree.is_pytree_type(pytree.PyTree)
    assert pytree.is_pytree_type(pytree.PyTree[int, "$S"])
    assert not pytree.is_pytree_type(int)
    assert not pytree.is_pytree_type(Shape["n"])
    assert not pytree.is_pytree_type(list[int])


# ----------------------------------------------------------------------------- shape_spec, shape_spec_parser

SPEC_PATHS = ("shape_spec", "shape_spec_parser", "shape_tools", "array_types", "decorator")


def test_the_spec_module_paths_import_only_the_standard_library() -> None:
    code = (
        "import json, sys; before = set(sys.modules); "
        + "; ".join(f"import ktyping.{name}" for name in SPEC_PATHS)
        + "; print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert all(
        name == "ktyping" or name in sys.stdlib_module_names or name.startswith("_") for name in loaded
    )


def test_a_parsed_spec_is_ktypings_spec_with_the_text_as_repr() -> None:
    from ktyping import shape_spec_parser
    from ktyping._spec import Spec

    spec = shape_spec_parser.parse("  *b   h//2 c+1 ")
    assert isinstance(spec, Spec) and repr(spec) == "*b h//2 c+1"
    assert shape_spec_parser.parse("*b h//2 c+1") is shape_spec_parser.parse("*b h//2 c+1")  # cached


def test_kauldrons_dim_classes_build_ktypings_dims() -> None:
    from ktyping._spec_tree import SingleDim, VariadicDim
    from ktyping.shape_spec import AnonDims, IntDim, NamedDims

    assert isinstance(NamedDims("b", length=None), VariadicDim)
    assert isinstance(NamedDims("b"), SingleDim) and isinstance(IntDim(3, broadcastable=True), SingleDim)
    assert [
        d.text for d in (NamedDims("a", length=(1, None), broadcastable=True), AnonDims(), AnonDims("x"))
    ] == [
        "+#a",
        "_",
        "_x",
    ]
    assert AnonDims(length=None).text == "..." and AnonDims("f", length=(1, None)).text == "+_f"
    with pytest.raises(ValueError, match="any number"):
        NamedDims("b", length=2)


def test_built_specs_equal_parsed_ones_and_write_the_fewest_parentheses() -> None:
    from ktyping.shape_spec import (
        NAME_2_FUNC,
        SYMBOL_2_OPERATOR,
        BinaryOpDim,
        ChoiceDim,
        FunctionDim,
        IntDim,
        NamedDims,
        NegatedDim,
        OptionalDim,
        ShapeSpec,
    )
    from ktyping.shape_spec_parser import parse

    def op(symbol: str, left: object, right: object) -> object:
        return BinaryOpDim(SYMBOL_2_OPERATOR[symbol], left, right)

    a, b, c = NamedDims("a"), NamedDims("b"), NamedDims("c")
    built = ShapeSpec(
        op("+", op("*", IntDim(2), a), op("**", b, NegatedDim(c))),
        op("*", op("+", a, b), c),
        FunctionDim("min", NAME_2_FUNC["min"], [NamedDims("s", length=None), IntDim(4)]),
        ChoiceDim(ChoiceDim(IntDim(3), IntDim(4)), c),
        OptionalDim(op("-", a, IntDim(1))),
    )
    assert repr(built) == "2*a+b**-c (a+b)*c min(*s,4) 3|4|c (a-1)?"
    assert built == parse("2*a+b**-c (a+b)*c min(*s,4) 3|4|c a-1?")
    assert hash(built) == hash(parse(repr(built)))
    assert parse("a b") != parse("a c") and parse("*b") != parse("+b") and parse("#n") != parse("n")


def test_a_function_dim_takes_only_ktypings_own_functions() -> None:
    from ktyping.shape_spec import FunctionDim, NamedDims

    assert FunctionDim("sum", None, [NamedDims("b", length=None)]).text == "sum(*b)"
    with pytest.raises(ValueError, match="NAME_2_FUNC"):
        FunctionDim("max", sum, [NamedDims("a")])


@pytest.mark.parametrize(
    ("text", "error", "column"),
    [
        ("a + 1", "WhiteSpaceError", 3),
        ("a sum(b, c)", "WhiteSpaceError", 9),
        ("a b, c", "InvalidCommaError", 4),
        ("a b* c", "PostModifierError", 4),
        ("x _4", "AnonymousFixedDimError", 3),
        ("#_a", "AnonymousBroadcastableDimError", 1),
        ("$a", "ShapeSpecSyntaxError", 1),
    ],
)
def test_kauldrons_named_syntax_errors_are_ktypings_syntax_error(text: str, error: str, column: int) -> None:
    from ktyping import shape_spec_parser

    with pytest.raises(ktyping.ShapeSpecSyntaxError) as caught:
        shape_spec_parser.parse(text)
    assert type(caught.value) is getattr(shape_spec_parser, error)
    assert caught.value.column == column and caught.value.spec == text
    if error != "ShapeSpecSyntaxError":
        assert f"at position {column}" in str(caught.value)


def test_only_the_kauldron_path_refuses_whitespace_inside_parentheses() -> None:
    from ktyping import shape_spec_parser

    with ktyping.typechecked():
        assert ktyping.check_type((3, 3), Shape["max(a, 2) a"]) == (3, 3)
    with pytest.raises(shape_spec_parser.WhiteSpaceError):
        shape_spec_parser.parse("max(a, 2)")
    assert repr(shape_spec_parser.parse("{len(xs)} n")) == "{len(xs)} n"  # ktyping's `{...}` values stay


# ----------------------------------------------------------------------------- evaluate, match


def test_evaluate_reads_kauldrons_candidate_form() -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec_parser import parse

    values = DimValues({"b": (8, 16), "h": (32,), "w": (64,), "c": (5,)})
    assert parse("sum(*b,h) min(w,4) c//2 *b 10/(3+2)").evaluate(values) == (56, 4, 2, 8, 16, 2)
    assert parse("").evaluate(DimValues()) == ()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a", "No value known for 'a'"),
        ("*b #3", "broadcastable"),
        ("*#b", "broadcastable"),
        ("b c", "length spec is 1"),
        ("h _c", "anonymous"),
        ("...", "anonymous"),
        ("h?", "optional"),
        ("h|c", "choice"),
    ],
)
def test_evaluate_says_why_a_dim_has_no_single_value(text: str, reason: str) -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec import ShapeError
    from ktyping.shape_spec_parser import parse

    with pytest.raises(ShapeError, match=reason):
        parse(text).evaluate(DimValues({"b": (8, 16), "h": (32,), "c": (5,)}))


def test_match_returns_every_extension_of_each_candidate() -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec_parser import parse

    found = parse("a *b c *d a").match((1, 2, 3, 3, 4, 1), frozenset([DimValues()]))
    assert {(v["b"], v["d"]) for v in found} == {
        ((), (3, 3, 4)),
        ((2,), (3, 4)),
        ((2, 3), (4,)),
        ((2, 3, 3), ()),
    }
    solved = parse("a*b c").match((21, 3), frozenset([DimValues({"a": (7,)}), DimValues({"a": (4,)})]))
    assert solved == {DimValues({"a": (7,), "b": (3,), "c": (3,)})}


def test_match_treats_a_name_as_one_dim_whether_read_as_n_or_as_star_n() -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec_parser import parse

    known = frozenset([DimValues({"b": (2,), "a": (1,)})])
    assert parse("*b a").match((2, 1), known) == known
    assert parse("*b a").match((3, 1), known) == frozenset()
    assert (
        parse("b c").match((2, 3), frozenset([DimValues({"b": (2, 5)})])) == frozenset()
    )  # two axes, read as one
    assert parse("*b b").match((4, 5), frozenset([DimValues()])) == frozenset()  # (4,) and 5 disagree


def test_match_leaves_no_constraint_for_later() -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec_parser import parse

    # ktyping's own checks keep `a//b = 1` until a or b is bound; a Kauldron match decides now.
    assert parse("a//b").match((1,), frozenset([DimValues({"a": (7,)})])) == frozenset()
    assert parse("a//b").match((1,), frozenset([DimValues({"a": (7,), "b": (5,)})])) != frozenset()


def test_a_broadcastable_axis_of_size_one_is_an_unknown_dim_refined_later() -> None:
    from ktyping.internal_typing import UNKNOWN_DIM, DimValues
    from ktyping.shape_spec_parser import parse

    spec = parse("*#b #c")
    (seen,) = spec.match((7, 1, 1), frozenset([DimValues()]))
    assert seen["b"][0] == 7 and seen["b"][1] is UNKNOWN_DIM and seen["c"][0] is UNKNOWN_DIM
    assert spec.match((7, 1, 1), frozenset([seen])) == {seen}
    assert spec.match((7, 11, 3), frozenset([seen])) == {DimValues({"b": (7, 11), "c": (3,)})}
    assert spec.match((1, 11, 3), frozenset([DimValues({"b": (7, 11), "c": (3,)})])) == {
        DimValues({"b": (7, 11), "c": (3,)})
    }


def test_dim_values_are_an_immutable_hashable_mapping() -> None:
    from ktyping.internal_typing import DimValues

    values = DimValues({"b": (2,)}, n=(3,))
    assert values == {"b": (2,), "n": (3,)} and hash(values) == hash(DimValues(n=(3,), b=(2,)))
    assert values | {"m": (1,)} == DimValues(b=(2,), n=(3,), m=(1,))
    with pytest.raises(TypeError):
        values["b"] = (4,)  # type: ignore[index]


# ----------------------------------------------------------------------------- shape_tools, array_types, decorator


def test_shape_tools_hands_out_ktypings_shape_and_array_types_its_annotations() -> None:
    from ktyping import array_types, decorator, shape_tools

    assert shape_tools.shape is ktyping.shape and decorator.typechecked is ktyping.typechecked
    assert array_types.Float is ktyping.Float and array_types.XInt32 is ktyping.Int32
    assert array_types.Shape is ktyping.Shape and array_types.ArraySpec is ktyping.ArraySpec


def test_eval_shape_gives_the_one_shape_of_all_candidates_that_evaluate() -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec import ShapeError
    from ktyping.shape_tools import _eval_shape

    two = frozenset([DimValues({"a": (2,), "b": (3,)}), DimValues({"a": (3,), "b": (2,)})])
    assert _eval_shape("a*b 4", two) == (6, 4)
    assert _eval_shape("1 2", frozenset()) == (1, 2)
    with pytest.raises(ShapeError, match="ambiguous") as ambiguous:
        _eval_shape("a", two)
    assert "(2,)" in str(ambiguous.value) and "(3,)" in str(ambiguous.value)
    with pytest.raises(ShapeError, match="No possible shape found for 'n': No value known for 'n'") as caught:
        _eval_shape("n", two)
    assert isinstance(caught.value.__cause__, ShapeError)


# ----------------------------------------------------------------------------- scope, dim_view


class SpecLike:
    """An array spec such as `jax.ShapeDtypeStruct`: a shape (None for an unknown axis) and a dtype."""

    def __init__(self, shape: tuple) -> None:
        self.shape = shape
        self.dtype = np.dtype("float32")


def test_scope_and_dim_view_import_only_the_standard_library() -> None:
    code = (
        "import json, sys; before = set(sys.modules); import ktyping.scope, ktyping.dim_view; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert all(
        name == "ktyping" or name in sys.stdlib_module_names or name.startswith("_") for name in loaded
    )


def test_the_scope_module_hands_out_ktypings_scopes() -> None:
    from ktyping import scope

    assert scope.ShapeScope is ktyping.ShapeScope and scope.get_current_scope is ktyping.get_current_scope
    assert scope.DimValues is internal_typing.DimValues


def test_the_scope_stack_is_empty_only_outside_every_scope() -> None:
    from ktyping import scope

    @ktyping.typechecked
    def checked(x: Shape["n"]) -> bool:
        return scope.is_scope_stack_empty()

    assert scope.is_scope_stack_empty()
    with ktyping.ShapeScope():
        assert not scope.is_scope_stack_empty()
    assert checked((3,)) is False and scope.is_scope_stack_empty()


def test_a_dim_view_reads_and_sets_the_dims_of_its_scope() -> None:
    from ktyping import dim_view

    with ktyping.ShapeScope(candidates=[{"b": (2,), "batch": (4, 5)}]) as shape_scope:
        dims = dim_view.DimView(shape_scope)
        assert (dims["b"], dims["*batch"], "batch" in dims, "n" in dims) == (2, (4, 5), True, False)
        dims["n"] = 3
        assert shape_scope.candidates == [{"b": (2,), "batch": (4, 5), "n": (3,)}]
        with pytest.raises(ValueError, match="already exists"):  # DimAssignmentError, as Kauldron's
            dims["n"] = 4
        with pytest.raises(TypeError, match="Deleting"):
            del dims["b"]
    assert dim_view.dim is ktyping.dim


def test_a_dim_views_str_lists_agreed_dims_then_ambiguous_ones_without_tree_structures() -> None:
    from ktyping.dim_view import DimView

    candidates = [{"b": (2,), "n": (3,), "$S": "tree"}, {"b": (2,), "n": (4,), "batch": (5, 6)}]
    with ktyping.ShapeScope(candidates=candidates) as shape_scope:
        text = str(DimView(shape_scope))
    assert text == (
        "dims = {\n       b: 2\n}\nambiguous_dims = {\n       n: 3 | 4\n  *batch: - | (5, 6)\n}\n"
    )
    assert "$S" not in text


def test_a_dim_view_writes_an_unknown_size_as_hash() -> None:
    from ktyping.dim_view import DimView, _format_dim_value
    from ktyping.internal_typing import UNKNOWN_DIM

    assert [_format_dim_value(v) for v in [(128,), (UNKNOWN_DIM,), (UNKNOWN_DIM, np.int64(3))]] == [
        "128",
        "#",
        "(#, 3)",
    ]
    with ktyping.typechecked():
        ktyping.check_type(SpecLike((None, 128)), ktyping.ArraySpec["b t"])
        assert str(DimView(ktyping.get_current_scope())) == "dims = {\n   b: #\n   t: 128\n}\n"


# ----------------------------------------------------------------------------- check_type(nested_ok=...)


def test_check_type_with_nested_ok_checks_a_helpers_value_in_the_callers_scope() -> None:
    def helper(x: object, nested_ok: bool) -> None:
        ktyping.check_type(x, Shape["n"], nested_ok=nested_ok)

    @ktyping.typechecked
    def checked(x: Shape["n"], y: object, nested_ok: bool) -> None:
        helper(y, nested_ok)

    checked((3,), (3,), True)
    with pytest.raises(ktyping.KTypeCheckError, match="not shape-compatible"):
        checked((3,), (4,), True)
    with pytest.raises(ktyping.NoActiveScopeError, match="'helper'"):
        checked((3,), (3,), False)
    with pytest.raises(ktyping.NoActiveScopeError):
        ktyping.check_type((3,), Shape["n"], nested_ok=True)  # there is no scope at all


# ----------------------------------------------------------------------------- unknown and symbolic sizes


def test_min_and_max_of_an_unknown_size_match_any_axis() -> None:
    assert isinstance(SpecLike((None, 3)), ktyping.ArraySpec["a min(a,4)"])
    assert isinstance(SpecLike((None, 9)), ktyping.ArraySpec["a max(a,4)"])
    with pytest.raises(TypeError):  # a size that is not unknown is not excused
        ktyping._spec_tree._FUNCS["min"]([3, "4"])


def test_numpy_int_axes_of_an_array_spec_are_sizes_not_unknowns() -> None:
    assert isinstance(SpecLike((np.int64(3), 3)), ktyping.ArraySpec["3 3"])
    assert not isinstance(SpecLike((np.int64(2), 3)), ktyping.ArraySpec["3 3"])


def test_shape_spec_match_takes_none_axes_as_unknown_sizes() -> None:
    from ktyping.internal_typing import UNKNOWN_DIM, DimValues
    from ktyping.shape_spec_parser import parse

    (found,) = parse("b b t").match((None, 5, 7), frozenset([DimValues()]))
    assert found["t"] == (7,) and found["b"][0] is not UNKNOWN_DIM and found["b"][0].value is None
    assert parse("b 7").match((None, 8), frozenset([DimValues()])) == frozenset()


@pytest.fixture
def symbolic() -> types.SimpleNamespace:
    export = pytest.importorskip("jax.export", reason="jax's symbolic dims come from jax.export")
    b, h = export.symbolic_shape("B, H")
    return types.SimpleNamespace(b=b, h=h, jax=pytest.importorskip("jax"))


def test_symbolic_axes_bind_dims_that_read_back_as_the_symbolic_dim(symbolic: types.SimpleNamespace) -> None:
    from ktyping.dim_view import DimView, _format_dim_value

    spec = symbolic.jax.ShapeDtypeStruct((symbolic.b, 128), np.float32)
    with ktyping.typechecked():
        ktyping.check_type(spec, ktyping.ArraySpec["B T"])
        ktyping.check_type(spec, ktyping.ArraySpec["5 T"])  # B may be 5: a symbolic axis matches any size
        assert ktyping.dim["B"] is symbolic.b and ktyping.shape("T B") == (128, symbolic.b)
        assert "B: &B" in str(DimView(ktyping.get_current_scope()))
    assert _format_dim_value((symbolic.b + 1, 4)) == "(&B + 1, 4)"


def test_min_of_a_symbolic_size_is_jaxs_symbolic_min(symbolic: types.SimpleNamespace) -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec_parser import parse

    values = DimValues({"H": (symbolic.h,), "N": (128,)})
    assert parse("min(H,N) max(H,N) -H H+1").evaluate(values) == (
        symbolic.jax.core.min_dim(symbolic.h, 128),
        symbolic.jax.core.max_dim(symbolic.h, 128),
        -symbolic.h,
        symbolic.h + 1,
    )
    assert parse("min(H,N)").match((64,), frozenset([values]))  # min(H, 128) may be 64


def test_shape_spec_match_takes_different_symbolic_axes_as_possibly_equal(
    symbolic: types.SimpleNamespace,
) -> None:
    from ktyping.internal_typing import DimValues
    from ktyping.shape_spec_parser import parse

    (found,) = parse("D D").match((symbolic.b, symbolic.h), frozenset([DimValues()]))
    assert found["D"][0].value is symbolic.b


# ----------------------------------------------------------------------------- typeguard_checkers


def test_typeguard_checkers_says_what_to_install_when_typeguard_is_missing() -> None:
    code = "import sys; sys.modules['typeguard'] = None; import ktyping.typeguard_checkers"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "ModuleNotFoundError" in out.stderr and "pip install 'typeguard>=4.4.1'" in out.stderr
    assert "ktyping itself does not use" in out.stderr


def test_import_ktyping_never_loads_typeguard() -> None:
    code = "import sys, ktyping, ktyping.scope, ktyping.dim_view; print('typeguard' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture
def tgc() -> types.ModuleType:
    pytest.importorskip("typeguard", reason="ktyping.typeguard_checkers is Kauldron's typeguard integration")
    from ktyping import typeguard_checkers

    return typeguard_checkers


def test_typeguard_checkers_hands_out_ktypings_check_type_and_isinstance(tgc: types.ModuleType) -> None:
    import typeguard

    assert tgc.check_type is ktyping.check_type and tgc.isinstance_ is ktyping.isinstance
    assert tgc.TypeCheckError is typeguard.TypeCheckError
    with ktyping.typechecked():
        tgc.check_type(np.zeros((2, 3)), ktyping.Float["b n"])
        assert tgc.isinstance_([np.zeros(3)], list[ktyping.Float["n"]])
        assert not tgc.isinstance_(np.zeros(2), (ktyping.Float["n"], int))


def test_never_and_noreturn_annotations_raise_typeguards_error(tgc: types.ModuleType) -> None:
    import typing

    def f() -> None: ...

    tgc.assert_not_never(f, int)
    tgc.assert_not_noreturn(f, None)
    with pytest.raises(tgc.TypeCheckError, match="never to be called"):
        tgc.assert_not_never(f, typing.Never)
    for annotation in (typing.NoReturn, typing.Never):
        with pytest.raises(tgc.TypeCheckError, match="never to return"):
            tgc.assert_not_noreturn(f, annotation)


def test_typeguard_hands_ktyping_types_to_ktyping_in_an_active_scope(tgc: types.ModuleType) -> None:
    import typeguard

    with ktyping.typechecked():
        typeguard.check_type(np.zeros((2, 3)), ktyping.Float["b n"] | None)
        typeguard.check_type([(3, 2)], list[Shape["n b"]])
        assert (ktyping.dim["b"], ktyping.dim["n"]) == (2, 3)
        with pytest.raises(ktyping.KTypeCheckError, match="not shape-compatible") as caught:
            typeguard.check_type({"x": np.zeros((2, 4))}, dict[str, ktyping.Float["b n"]])
    assert isinstance(caught.value, typeguard.TypeCheckError)
    assert "value of key 'x' of dict" in str(caught.value)  # typeguard's path to the failing value


def test_typeguard_is_unchanged_outside_a_scope(tgc: types.ModuleType) -> None:
    import typeguard

    assert tgc._ktyping_checker_lookup(ktyping.Float["b"], (), ()) is None
    typeguard.check_type(np.zeros((2, 3)), ktyping.Float["b n"])
    with pytest.raises(typeguard.TypeCheckError):
        typeguard.check_type(np.zeros(3), ktyping.Float["b n"])


def test_the_typeguard_lookup_is_registered_once_however_often_the_module_is_reloaded(
    tgc: types.ModuleType,
) -> None:
    import importlib

    import typeguard

    importlib.reload(tgc)
    names = [getattr(f, "__qualname__", "") for f in typeguard.checker_lookup_functions]
    assert names.count("_ktyping_checker_lookup") == 1 and names[0] == "_ktyping_checker_lookup"


def test_contains_any_array_type_looks_into_unions_containers_typeddicts_and_dataclasses(
    tgc: types.ModuleType,
) -> None:
    import dataclasses
    import typing

    class Batch(typing.TypedDict):
        x: ktyping.Float["*b"]

    @dataclasses.dataclass
    class Plain:
        y: list[int] | None

    assert tgc._contains_any_array_type(typing.Annotated[list[ktyping.Float], "meta"])
    assert tgc._contains_any_array_type(int | Shape["n"]) and not tgc._contains_any_array_type(Shape)
    assert tgc._contains_any_array_type(Batch) and not tgc._contains_any_array_type(Plain)
    assert tgc._contains_any_array_type(pytree.PyTree[ktyping.Int["n"]])
    assert not tgc._contains_any_array_type(pytree.PyTree[int])
