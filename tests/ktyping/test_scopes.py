"""Manual scopes, check_type, isinstance, and reading dims with dim / shape."""

import ktyping
import numpy as np
import pytest
from ktyping import AmbiguousDimensionError, Float, Int, KTypeCheckError, NoActiveScopeError

from .arrays import f32


def test_manual_scope_binds_dims_across_checks() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(2, 3), Float["b n"])
        with pytest.raises(KTypeCheckError):
            ktyping.check_type(f32(4), Float["b"])


def test_check_type_returns_its_value() -> None:
    x = f32(2)
    with ktyping.typechecked():
        assert ktyping.check_type(x, Float["n"]) is x


def test_check_type_needs_an_active_scope() -> None:
    with pytest.raises(NoActiveScopeError, match="typechecked"):
        ktyping.check_type(f32(2), Float["n"])


def test_check_type_inside_a_function_uses_the_call_scope() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"]) -> None:
        ktyping.check_type(x.sum(-1), Float["b"])
        ktyping.check_type(x.T, Float["b n"])

    with pytest.raises(KTypeCheckError, match="axis 0 has size 3, but b = 2"):
        f(f32(2, 3))


def test_isinstance_uses_the_scope_without_changing_it() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(2), Float["b"])
        assert ktyping.isinstance(f32(2, 5), Float["b c"])
        assert not ktyping.isinstance(f32(3, 5), Float["b c"])
        assert "c" not in ktyping.dim


def test_isinstance_of_plain_types_needs_no_scope() -> None:
    assert ktyping.isinstance([1, 2], list[int])
    assert ktyping.isinstance(None, int | None)
    assert not ktyping.isinstance(["a"], list[int])


def test_isinstance_of_array_annotations_needs_a_scope() -> None:
    with pytest.raises(ktyping.NoActiveScopeError, match="No active scope"):
        ktyping.isinstance(f32(2, 2), Float["n n"])
    with pytest.raises(ktyping.NoActiveScopeError):
        ktyping.isinstance(3, Float["n"] | int)  # even when the plain member would match
    with ktyping.typechecked():
        assert ktyping.isinstance(f32(2, 2), Float["n n"])
        assert not ktyping.isinstance(f32(2, 3), Float["n n"])


def test_builtin_isinstance_with_annotations() -> None:
    assert isinstance(f32(2), Float["n"])
    assert not isinstance(f32(2), Int["n"])
    assert isinstance(None, Float["n"] | None)


def test_dim_reads_single_and_variadic_dims() -> None:
    @ktyping.typechecked
    def f(x: Float["*b h w c"]) -> tuple:
        return ktyping.dim["*b"], ktyping.dim["c"], ktyping.dim["*c"]

    assert f(f32(4, 5, 2, 2, 3)) == ((4, 5), 3, (3,))


def test_dim_refuses_to_read_a_multi_axis_dim_as_one_axis() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(4, 5, 3), Float["*b c"])
        with pytest.raises(ktyping.DimAssignmentError, match=r"dim\['\*b'\]"):
            ktyping.dim["b"]


def test_dim_can_be_set_while_unbound_and_then_binds_checks() -> None:
    with ktyping.typechecked():
        ktyping.dim["n"] = 4
        ktyping.dim["*batch"] = (2, 3)
        with pytest.raises(KTypeCheckError):
            ktyping.check_type(f32(5), Float["n"])
        ktyping.check_type(f32(2, 3, 4), Float["*batch n"])


def test_dim_refuses_to_change_a_bound_dim() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(5), Float["n"])
        with pytest.raises(ktyping.DimAssignmentError, match=r"'n' already exists .* 5"):
            ktyping.dim["n"] = 4
        assert ktyping.dim["n"] == 5


def test_dim_refuses_the_wrong_kind_of_value() -> None:
    with ktyping.typechecked():
        with pytest.raises(ktyping.DimAssignmentError, match=r"dim\['\*b'\]"):
            ktyping.dim["b"] = (8, 9)
        with pytest.raises(ktyping.DimAssignmentError, match="tuple"):
            ktyping.dim["*a"] = 5
        with pytest.raises(ktyping.DimAssignmentError, match="non-empty"):
            ktyping.dim["+a"] = ()


def test_dims_cannot_be_deleted() -> None:
    with ktyping.typechecked():
        ktyping.dim["n"] = 4
        with pytest.raises(TypeError, match="Deleting dimensions is not supported"):
            del ktyping.dim["n"]
        assert ktyping.dim["n"] == 4


def test_unknown_dim_suggests_the_near_miss() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(2), Float["batch"])
        with pytest.raises(KeyError, match="did you mean 'batch'"):
            ktyping.dim["bacth"]


def test_ambiguous_dim_raises() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(3, 7), Float["*a *b"])
        with pytest.raises(AmbiguousDimensionError, match="ambiguous"):
            ktyping.dim["*a"]
        ktyping.check_type(f32(3), Float["*a"])
        assert ktyping.dim["*b"] == (7,)


def test_dim_needs_an_active_scope() -> None:
    with pytest.raises(NoActiveScopeError):
        ktyping.dim["n"]


def test_dim_repr_lists_bindings() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(4, 5, 3), Float["*b c"])
        assert repr(ktyping.dim) == "dims = {\n  *b: (4, 5)\n  c: 3\n}"


def test_shape_evaluates_a_spec() -> None:
    @ktyping.typechecked
    def f(x: Float["b n d"]) -> tuple:
        return ktyping.shape("b n n+1 d*2")

    assert f(f32(4, 8, 16)) == (4, 8, 9, 32)


def test_shape_expands_variadics() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(2, 3, 5), Float["*b n"])
        assert ktyping.shape("*b 7 n") == (2, 3, 7, 5)


def test_shape_with_unbound_dim_raises_key_error() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(2), Float["b"])
        with pytest.raises(KeyError, match="m"):
            ktyping.shape("b m")


def test_shape_with_ambiguous_candidates_raises() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(3, 7), Float["*a *b"])
        with pytest.raises(AmbiguousDimensionError):
            ktyping.shape("*a")


def test_manual_scopes_nest_and_restore() -> None:
    with ktyping.typechecked():
        ktyping.check_type(f32(2), Float["n"])
        with ktyping.typechecked():
            ktyping.check_type(f32(5), Float["n"])
        assert ktyping.dim["n"] == 2


def test_get_current_scope_returns_the_innermost_scope() -> None:
    with ktyping.typechecked() as scope:
        assert ktyping.get_current_scope() is scope


HIDDEN = 4


def test_spec_values_see_module_globals() -> None:
    @ktyping.typechecked
    def f(x: Float["n {HIDDEN}"]) -> None:
        pass

    f(f32(2, 4))
    with pytest.raises(KTypeCheckError, match="argument x"):
        f(f32(2, 5))


def test_spec_values_in_a_block_see_its_current_locals() -> None:
    with ktyping.typechecked():
        width = 3
        ktyping.check_type(f32(2, 3), Float["n {width}"])
        width = 5  # noqa: F841 - read by the spec below
        with pytest.raises(KTypeCheckError):
            ktyping.check_type(f32(2, 3), Float["n {width}"])


def test_checking_annotations_built_from_f_strings_keeps_caches_bounded() -> None:
    from ktyping import _compile

    with ktyping.typechecked():
        for i in range(5000):
            ktyping.check_type(np.zeros((1, i % 3 + 1)), Float[f"b {i % 3 + 1}|{i}"])
    assert len(_compile._CACHE) <= 4096
    assert len(Float._kt_subscripts) <= 1024


def test_isinstance_without_a_scope_points_to_the_builtin() -> None:
    with pytest.raises(
        NoActiveScopeError, match=r"the builtin isinstance\(value, Float\['n'\]\) works anywhere"
    ):
        ktyping.isinstance(f32(2), Float["n"])
