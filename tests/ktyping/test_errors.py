# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""Error messages read like a compiler's: what failed, where, with what, under which dims."""

import dataclasses

import ktyping
import numpy as np
import pytest
from ktyping import Bool, Float, Int, KTypeCheckError
from ktyping._format import compact


@ktyping.typechecked
def cross_entropy(preds: Float["*b d"], targets: Int["*b 1"], mask: Bool["*b 1"] | None = None) -> Float[""]:
    return np.float32(0.0)


def message_of(call) -> str:
    with pytest.raises(KTypeCheckError) as info:
        call()
    return str(info.value)


def bad_mask_message() -> str:
    return message_of(
        lambda: cross_entropy(
            np.zeros((4, 7, 10), np.float32), np.zeros((4, 7, 1), np.int64), np.zeros((4, 1), bool)
        )
    )


def test_headline_names_the_argument_its_value_and_the_spec() -> None:
    first = bad_mask_message().splitlines()[0]
    assert first.startswith("argument mask = np.bool[4 1] ")
    assert "'*b 1'" in bad_mask_message()


def test_message_gives_function_and_file_line() -> None:
    line = cross_entropy.__wrapped__.__code__.co_firstlineno
    assert f"Origin: function 'cross_entropy' at {__file__}:{line}" in bad_mask_message()


def test_message_lists_every_argument_with_annotation_and_marks_the_failing_one() -> None:
    msg = bad_mask_message()
    assert "  preds: Float['*b d'] = np.f32[4 7 10]" in msg
    assert "  targets: Int['*b 1'] = np.i64[4 7 1]" in msg
    assert "> mask: Bool['*b 1'] | None = np.bool[4 1]" in msg
    assert "Return: Float['']" in msg


def test_message_shows_dim_assignments() -> None:
    assert "Dim assignments:\n - {*b: (4, 7), d: 10}" in bad_mask_message()


def test_message_shows_every_candidate_assignment() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"] | Float["b m"], y: Float["b"]) -> None:
        pass

    msg = message_of(lambda: f(np.zeros((2, 3)), np.zeros(5)))
    assert "Dim assignments (2 candidates):\n - {b: 2, n: 3}\n - {b: 2, m: 3}" in msg


def test_message_explains_which_axis_disagrees() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"], y: Float["n"]) -> None:
        pass

    msg = message_of(lambda: f(np.zeros((2, 3)), np.zeros(4)))
    assert "axis 0 has size 4, but n = 3" in msg


def test_message_explains_rank_mismatch() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"]) -> None:
        pass

    assert "1 axis given, 2 expected" in message_of(lambda: f(np.zeros(3)))


def test_message_explains_dtype_mismatch_with_accepted_dtypes() -> None:
    @ktyping.typechecked
    def f(x: Int["n"]) -> None:
        pass

    msg = message_of(lambda: f(np.zeros(3)))
    assert "has dtype float64, which is not dtype-compatible with Int (one of: " in msg
    assert "int32" in msg and "uint8" in msg


def test_message_for_non_array_value() -> None:
    @ktyping.typechecked
    def f(x: Float["n"]) -> None:
        pass

    assert "argument x = [1.0, 2.0] is a list, which is not an instance of an array type" in message_of(
        lambda: f([1.0, 2.0])
    )


def test_message_for_union_lists_each_member() -> None:
    @ktyping.typechecked
    def f(x: Float["n"] | str) -> None:
        pass

    msg = message_of(lambda: f(3))
    assert "matches no member of the union" in msg
    assert "str: is a int, which is not an instance of str" in msg


def test_return_value_failure_is_marked() -> None:
    @ktyping.typechecked
    def f(x: Float["n"]) -> Float["n"]:
        return x[1:]

    msg = message_of(lambda: f(np.zeros(3)))
    assert msg.startswith("return value = np.f64[2] ")
    assert "> Return: Float['n']" in msg


def test_dataclass_failure_names_field_and_class() -> None:
    @ktyping.typechecked
    @dataclasses.dataclass
    class Pair:
        a: Float["n"]
        b: Float["n"]

    msg = message_of(lambda: Pair(np.zeros(2), np.zeros(3)))
    assert msg.startswith("field b = np.f64[3] ")
    assert "Origin: dataclass" in msg and "Pair" in msg
    assert "> b: Float['n'] = np.f64[3]" in msg


def test_check_type_failure_says_where_it_was_called() -> None:
    with ktyping.typechecked():
        ktyping.check_type(np.zeros(2), Float["n"])
        with pytest.raises(KTypeCheckError) as info:  # in the block's own frame: a helper has no scope
            ktyping.check_type(np.zeros(3), Float["n"])
    msg = str(info.value)
    assert f"Checked at: {__file__}:" in msg
    assert "- {n: 2}" in msg


def test_errors_are_type_errors() -> None:
    assert issubclass(KTypeCheckError, TypeError)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.zeros((2, 3), np.float32), "np.f32[2 3]"),
        (np.zeros((), np.int64), "np.i64[]"),
        (np.zeros((1,), np.uint8), "np.u8[1]"),
        (3, "3"),
        ("x" * 100, "'" + "x" * 56 + "..."),
    ],
)
def test_values_are_printed_compactly(value: object, text: str) -> None:
    assert compact(value) == text


def test_bad_spec_in_annotation_raises_at_decoration_time() -> None:
    with pytest.raises(ktyping.ShapeSpecSyntaxError, match="column 4"):
        Float["b +"]


def test_typeddict_failure_names_the_key() -> None:
    from typing import TypedDict

    class Out(TypedDict):
        logits: Float["b n"]
        labels: Int["b"]

    @ktyping.typechecked
    def f(out: Out) -> None:
        pass

    msg = message_of(lambda: f({"logits": np.zeros((2, 3)), "labels": np.zeros(3, int)}))
    assert "has key 'labels' = np.i64[3] that has shape (3,)" in msg
    assert "{b: 2, n: 3}" in msg
    assert "is missing the key(s) 'labels'" in message_of(lambda: f({"logits": np.zeros((2, 3))}))


def test_generic_annotations_are_described_as_written() -> None:
    from ktyping._describe import describe

    assert describe(tuple[Float["b"], Int["n"]]) == "tuple[Float['b'], Int['n']]"
    assert describe(dict[str, list[Float["n"]]]) == "dict[str, list[Float['n']]]"
    assert describe(tuple[int, ...]) == "tuple[int, ...]"


def test_containers_are_printed_compactly() -> None:
    assert compact((np.zeros(2), 3)) == "(np.f64[2], 3)"
    assert compact({"w": np.zeros((2, 2), np.float32)}) == "{'w': np.f32[2 2]}"
    assert compact(list(range(6))) == "[0, 1, 2, 3, ... 2 more]"


def test_message_names_the_failing_item_of_a_returned_tuple() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"]) -> tuple[Float["b"], Int["n"]]:
        return x[:, 0], np.zeros(3, int)

    msg = message_of(lambda: f(np.zeros((2, 4))))
    assert msg.startswith("return value = (np.f64[2], np.i64[3]) has item 1 = np.i64[3] that has shape (3,)")
    assert "but n = 4" in msg


def test_message_gives_the_expected_shape_for_expressions_and_variadics() -> None:
    @ktyping.typechecked
    def f(x: Float["*b d"], y: Int["*b d+1"]) -> None:
        pass

    assert "the dims in force give (7, 3)" in message_of(lambda: f(np.zeros((7, 2)), np.zeros((7, 2), int)))


def test_deeply_nested_values_are_printed_compactly() -> None:
    assert compact({"a": [(np.zeros(3),)]}) == "{'a': [(...1 item)]}"
    assert compact([[[np.zeros(3), np.zeros(2)]]]) == "[[[...2 items]]]"


def test_pytree_failure_names_the_failing_leaf() -> None:
    from ktyping import PyTree

    @ktyping.typechecked
    def f(params: PyTree[Float["d"]]) -> None:
        pass

    msg = message_of(lambda: f({"w": [np.zeros(3), (np.zeros(4),)]}))
    assert msg.startswith("argument params = {'w': [np.f64[3], (...1 item)]} has leaf 1 = np.f64[4] that")
    assert "but d = 3" in msg


def test_message_explains_axis_against_a_python_expression_value() -> None:
    class Model:
        hidden = 4

        @ktyping.typechecked
        def __call__(self, x: Float["b {self.hidden}"]) -> None:
            pass

    msg = message_of(lambda: Model()(np.zeros((2, 5))))
    assert "axis 1 has size 5, but {self.hidden} = 4" in msg


def test_message_explains_axis_after_a_bound_variadic() -> None:
    @ktyping.typechecked
    def f(x: Float["*b n"], y: Float["*b n+1"]) -> None:
        pass

    msg = message_of(lambda: f(np.zeros((7, 2)), np.zeros((7, 4))))
    assert "axis 1 has size 4, but n+1 = 3" in msg


def test_message_names_the_failing_extra_argument() -> None:
    @ktyping.typechecked
    def f(*xs: Float["n"], **named: Float["n"]) -> None:
        pass

    assert message_of(lambda: f(np.zeros(2), np.zeros(3))).startswith("argument xs[1] = np.f64[3] ")
    assert message_of(lambda: f(np.zeros(2), w=np.zeros(3))).startswith("argument named['w'] = np.f64[3] ")


def test_message_names_a_deferred_constraint_that_fails() -> None:
    @ktyping.typechecked
    def f(x: Float["h*w"], y: Float["h w"]) -> None:
        pass

    msg = message_of(lambda: f(np.zeros(6), np.zeros((2, 4))))
    assert "is not shape-compatible with 'h w': with its dims bound, the deferred constraint h*w = 6" in msg
    assert "- {h*w = 6 (unresolved)}" in msg


def test_failing_spec_value_names_the_function_and_the_near_miss() -> None:
    class Model:
        hidden = 4

        @ktyping.typechecked
        def __call__(self, x: Float["b {self.hiden}"]) -> None:
            pass

    msg = message_of(lambda: Model()(np.zeros((2, 4))))
    assert "shape spec value {self.hiden} could not be evaluated: AttributeError" in msg
    assert "did you mean 'hidden'?" in msg
    assert "Origin: function 'test_failing_spec_value_names_the_function_and_the_near_miss" in msg


def test_unknown_name_in_a_spec_value_suggests_an_argument() -> None:
    @ktyping.typechecked
    def f(x: Float["b {hiden}"], hidden: int) -> None:
        pass

    assert "NameError: name 'hiden' is not defined; did you mean 'hidden'?" in message_of(
        lambda: f(np.zeros((2, 4)), 4)
    )


def test_prng_key_failures_are_explained() -> None:
    from ktyping import PRNGKey
    from ktyping._explain import explain

    assert explain(PRNGKey, np.zeros((5, 2), np.uint32), [{}], None) == (
        "holds keys of shape (5,), but PRNGKey is one key (shape ())"
    )
    assert "need a last axis of size 2" in explain(PRNGKey, np.zeros(3, np.uint32), [{}], None)
    assert (
        "holds keys of shape (5,), which is not shape-compatible with 'b': axis 0 has size 5, but b = 4"
        in explain(PRNGKey["b"], np.zeros((5, 2), np.uint32), [{"b": 4}], None)
    )


def test_message_shows_the_passed_arguments_when_others_are_missing() -> None:
    @ktyping.typechecked
    def f(x: Float["n"], y: Float["n"]) -> None:
        pass

    msg = message_of(lambda: f(np.zeros((2, 2))))  # type: ignore[call-arg]
    assert "> x: Float['n'] = np.f64[2 2]" in msg
    assert "  y: Float['n'] = <missing>" in msg
