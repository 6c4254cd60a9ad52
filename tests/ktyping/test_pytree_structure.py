# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""`PyTree[T, "$S"]`: trees with the same structure key in one scope have the same structure;
the builtin `isinstance` with `PyTree[cls]`; instances of a leaf class are leaves."""

import subprocess
import sys
from typing import NamedTuple

import ktyping
import pytest
from ktyping import Float, KTypeCheckError, PyTree
from ktyping.internal_typing import MISSING

from .arrays import f32


class Point(NamedTuple):
    x: int
    y: int


def test_structure_key_and_leaf_type_are_readable_and_shown() -> None:
    tree = PyTree[int, "  $S "]
    assert tree.leaf_type is int and tree.structure_spec == "$S"
    assert repr(tree) == "PyTree[int, '$S']"
    assert PyTree[int].structure_spec is MISSING  # Kauldron's sentinel, falsy
    assert not PyTree[int].structure_spec


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (42, "must be a string"),
        ("S", r"must start with '\$'"),
        ("", r"must start with '\$'"),
        ("$", "at least one"),
    ],
)
def test_a_bad_structure_key_is_refused(key: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        PyTree[int, key]


def test_trees_with_one_key_must_have_the_same_structure() -> None:
    with ktyping.typechecked():
        ktyping.check_type({"a": 1, "b": 2}, PyTree[int, "$S"])
        ktyping.check_type({"a": 3, "b": 4}, PyTree[int, "$S"])
        ktyping.check_type([1, 2, 3], PyTree[int, "$T"])
        with pytest.raises(KTypeCheckError):
            ktyping.check_type([1, 2], PyTree[int, "$S"])


def test_a_checked_function_returns_a_tree_of_its_arguments_structure() -> None:
    @ktyping.typechecked
    def f(x: PyTree[Float["n"], "$S"], same: bool) -> PyTree[Float["n"], "$S"]:
        return x if same else [x]

    assert f({"w": f32(2)}, True)
    with pytest.raises(KTypeCheckError, match="return value"):
        f({"w": f32(2)}, False)


def test_structures_are_listed_apart_from_the_dims_in_errors() -> None:
    with ktyping.typechecked():
        ktyping.check_type({"a": f32(2)}, PyTree[Float["n"], "$T"])
        with pytest.raises(KTypeCheckError) as info:
            ktyping.check_type(f32(5), Float["n"])
    assert "Tree Structures:\n  $T: " in str(info.value)
    assert "$T" not in info.value.candidates_block.splitlines()[1]


def test_builtin_isinstance_checks_leaves_with_the_builtin() -> None:
    assert isinstance({"a": [1], "b": {"c": (2, 3)}}, PyTree[int])
    assert not isinstance({"a": 1, "b": 2.3}, PyTree[float])  # 1 is not a float
    assert not isinstance((1, "2"), PyTree[int])


def test_instances_of_the_leaf_class_are_leaves() -> None:
    with ktyping.typechecked():
        ktyping.check_type({"a": Point(1, 2)}, PyTree[Point])
        with pytest.raises(KTypeCheckError, match="is not an instance of"):
            ktyping.check_type({"a": "p"}, PyTree[Point])
    assert isinstance([Point(1, 2)], PyTree[Point])


_SELF_CONTAINING = """
import ktyping
from ktyping import KTypeCheckError, PyTree

loop = []
loop.append(loop)
for check in (lambda: isinstance(loop, PyTree[int]), lambda: ktyping.check_type(loop, PyTree[int, "$S"])):
    try:
        with ktyping.typechecked():
            check()
    except KTypeCheckError as e:
        assert "contains itself" in str(e), e
    else:
        raise SystemExit("no KTypeCheckError")
print("ok")
"""


def test_a_tree_that_contains_itself_raises_a_type_check_error() -> None:
    # In a fresh interpreter: once jax has flattened a self-containing list (as other tests' imports may
    # make ktyping do), the interpreter's recursion counter stays spent and later tests would fail.
    proc = subprocess.run(
        [sys.executable, "-c", _SELF_CONTAINING], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
