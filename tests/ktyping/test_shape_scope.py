# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""`ShapeScope`, candidates in Kauldron's form, `scope.dim`, and which frames may use the active scope."""

import threading

import ktyping
import pytest
from ktyping import AmbiguousDimensionError, DimAssignmentError, Float, NoActiveScopeError, ShapeScope

from .arrays import f32


def test_shape_scope_is_a_context_manager_that_becomes_the_active_scope() -> None:
    with ShapeScope() as scope:
        assert ktyping.get_current_scope() is scope
        ktyping.check_type(f32(2, 3), Float["b n"])
        assert scope.dim["n"] == 3
    with pytest.raises(NoActiveScopeError):
        ktyping.get_current_scope()


def test_candidates_are_given_and_read_as_tuples_under_bare_names() -> None:
    with ShapeScope(candidates=[{"b": (2,), "batch": (4, 5)}]) as scope:
        assert scope.dim["b"] == 2
        assert scope.dim["*batch"] == (4, 5)
        ktyping.check_type(f32(4, 5, 7), Float["*batch n"])
        assert scope.candidates == [{"b": (2,), "batch": (4, 5), "n": (7,)}]


def test_assigning_candidates_replaces_them() -> None:
    with ShapeScope() as scope:
        scope.candidates = [{"a": (1,)}, {"a": (3,)}]
        assert [c["a"] for c in scope.candidates] == [(1,), (3,)]
        with pytest.raises(AmbiguousDimensionError, match="'a' is ambiguous"):
            scope.dim["a"]


def test_candidates_with_a_non_string_dim_name_are_refused() -> None:
    with pytest.raises(TypeError, match="non-empty strings"):
        ShapeScope(candidates=[{3: (1,)}])


def test_a_dim_bound_in_only_some_candidates_is_ambiguous_and_not_contained() -> None:
    with ShapeScope(candidates=[{"a": (1,), "c": (8,)}, {"a": (1,)}]) as scope:
        assert scope.dim["a"] == 1
        assert "a" in scope.dim and "*a" in scope.dim
        assert "c" not in scope.dim
        with pytest.raises(AmbiguousDimensionError, match="<unbound>"):
            scope.dim["c"]


def test_a_new_dim_is_set_in_every_candidate_and_a_bound_one_is_refused() -> None:
    with ShapeScope(candidates=[{"a": (1,)}, {"a": (3,)}]) as scope:
        scope.dim["d"] = 13
        assert all(c["d"] == (13,) for c in scope.candidates)
        with pytest.raises(DimAssignmentError, match="'a' already exists in some candidates"):
            scope.dim["a"] = 4


def test_unknown_dim_names_the_dims_that_are_bound() -> None:
    with ShapeScope(candidates=[{"batch": (2,)}]) as scope:
        with pytest.raises(KeyError, match=r"Unknown dimension: bacth .*did you mean 'batch'"):
            scope.dim["bacth"]


def test_get_current_scope_from_a_nested_function_needs_nested_ok() -> None:
    def helper(nested_ok: bool) -> object:
        return ktyping.get_current_scope(nested_ok=nested_ok)

    with ShapeScope() as scope:
        assert helper(nested_ok=True) is scope
        with pytest.raises(NoActiveScopeError, match="'helper' is a function called from it"):
            helper(nested_ok=False)


def test_check_type_in_an_undecorated_helper_raises() -> None:
    def helper(x: object) -> None:
        ktyping.check_type(x, Float["n"])

    @ktyping.typechecked
    def f(x: Float["n"]) -> None:
        helper(x)

    with pytest.raises(NoActiveScopeError, match="Decorate 'helper' with @ktyping"):
        f(f32(3))


def test_lambdas_and_comprehensions_use_the_scope_of_their_function() -> None:
    @ktyping.typechecked
    def f(x: Float["n"]) -> list[int]:
        read = lambda: ktyping.dim["n"]  # noqa: E731 - the lambda is the point
        return [read() for _ in range(2)]

    assert f(f32(3)) == [3, 3]


def test_each_thread_sees_its_own_active_scope() -> None:
    seen: list[object] = []

    def worker() -> None:
        with pytest.raises(NoActiveScopeError):
            ktyping.get_current_scope(nested_ok=True)
        with ShapeScope(candidates=[{"a": (1,)}]) as own:
            seen.append(own.dim["a"])

    with ShapeScope(candidates=[{"b": (2,)}]) as scope:
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert ktyping.get_current_scope() is scope
    assert seen == [1]


def test_a_block_without_a_new_scope_binds_dims_in_the_scope_around_it() -> None:
    with ktyping.typechecked() as outer:
        with ktyping.typechecked(new_scope=False) as inner:
            assert ktyping.get_current_scope() is inner
            ktyping.check_type(f32(4), Float["n"])
        assert ktyping.get_current_scope() is outer
        assert ktyping.dim["n"] == 4


def test_a_block_without_a_new_scope_needs_a_scope_around_it() -> None:
    with pytest.raises(NoActiveScopeError, match="new_scope=False"):
        with ktyping.typechecked(new_scope=False):
            pass


def test_a_block_scope_says_where_it_was_opened() -> None:
    with ktyping.typechecked():
        line = __import__("sys")._getframe().f_lineno - 1
        source = ktyping.get_current_scope().source
    assert (source.description, source.file, source.line) == ("typechecked context", __file__, line)


def test_a_function_scope_says_which_function() -> None:
    @ktyping.typechecked
    def f(x: Float["n"]) -> str:
        return ktyping.get_current_scope().source.description

    assert f(f32(2)) == "function 'f'"


def test_candidates_with_a_value_that_is_not_a_size_are_refused() -> None:
    with pytest.raises(TypeError, match="'x' is a str"):
        ShapeScope(candidates=[{"a": "x"}])


@pytest.mark.parametrize("name", [3, "", "*"])
def test_a_dim_name_that_is_not_a_name_raises_key_error(name: object) -> None:
    with ShapeScope() as scope, pytest.raises(KeyError, match="non-empty string"):
        scope.dim[name]  # type: ignore[index]


def test_new_scope_false_is_refused_as_a_decorator() -> None:
    def f(x: Float["n"]) -> None: ...

    with pytest.raises(TypeError, match="context manager only"):
        ktyping.typechecked(new_scope=False)(f)
    with pytest.raises(TypeError, match="context manager only"):
        ktyping.typechecked(f, new_scope=False)


def test_a_shape_scope_says_where_it_was_entered() -> None:
    with ShapeScope() as scope:
        line = __import__("sys")._getframe().f_lineno - 1
        assert repr(scope).startswith("ShapeScope(")
    assert (scope.source.description, scope.source.file, scope.source.line) == ("ShapeScope", __file__, line)
