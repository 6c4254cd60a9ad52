# ruff: noqa: F821, UP037 - single-name shape specs like Float["b"] are strings, not forward references
"""`kd.typing`: Kauldron's legacy typing names, checking shapes as ktyping does."""

from __future__ import annotations

import subprocess
import sys

import jax
import kd
import ktyping
import numpy as np
import pytest

T = kd.typing

KAULDRON_NAMES = [
    "ArraySpec", "ElementSpec", "PyTree", "Array", "Bool", "Complex", "Complex64", "Float", "Float32", "Int",
    "Integer", "Num", "Scalar", "ScalarFloat", "ScalarInt", "TfArray", "TfFloat", "TfFloat32", "TfInt",
    "TfUInt8", "UInt32", "UInt8", "XArray", "Dim", "Memo", "Shape", "check_type", "enable_kd_type_checking",
    "set_shape", "typechecked", "TypeCheckError", "PRNGKey", "PRNGKeyLike", "DType", "Initializer", "Axes",
    "AxisName", "Schedule",
]  # fmt: skip


def test_every_name_of_kauldrons_kd_typing_is_there():
    assert [n for n in KAULDRON_NAMES if not hasattr(T, n)] == []
    assert set(KAULDRON_NAMES) <= set(T.__all__)


def test_the_annotations_are_ktypings_own():
    assert T.Float is ktyping.Float and T.Array is ktyping.Array and T.Integer is ktyping.Int
    assert T.check_type is ktyping.check_type and T.typechecked is ktyping.typechecked
    assert T.TypeCheckError is ktyping.KTypeCheckError and T.DType is ktyping.DType and T.Axes is ktyping.Axes


def test_kd_typing_loads_lazily():
    code = "import sys, kd; assert 'kd.typing' not in sys.modules; kd.typing.Float; assert 'kd.typing' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@T.typechecked
def _pool(x: T.Float["b h w"]) -> T.Float["b h//2 w//2"]:
    return x.reshape((*T.Shape("b h//2"), 2, T.Dim("w//2"), 2)).mean((2, 4))


def test_a_typechecked_function_checks_shapes_like_ktyping():
    out = _pool(np.arange(2 * 4 * 6, dtype=np.float32).reshape(2, 4, 6))
    assert out.shape == (2, 2, 3)
    with pytest.raises(T.TypeCheckError, match="Float"):
        _pool(np.zeros((2, 4, 6), np.int32))


def test_shape_and_dim_evaluate_expressions_with_the_calls_dims():
    @T.typechecked
    def f(x: T.Array["*b h w"]):
        return T.Shape("*b h+1 w//2"), T.Dim("h*w")

    assert f(np.zeros((2, 3, 4, 6))) == ((2, 3, 5, 3), 24)


def test_shape_subscripted_is_ktypings_shape_annotation():
    assert T.Shape["b n"] is ktyping.Shape["b n"]


def test_dim_of_several_axes_is_refused():
    @T.typechecked
    def f(x: T.Array["h w"]):
        return T.Dim("h w")

    with pytest.raises(ValueError, match=r"exactly one axis; 'h w' gives \(2, 3\)"):
        f(np.zeros((2, 3)))


def test_set_shape_binds_dims_for_the_rest_of_the_call():
    @T.typechecked
    def f(x: T.Array["b"]) -> T.Array["b t"]:
        T.set_shape("b t", (x.shape[0], 5))
        return np.zeros(T.Shape("b t"))

    assert f(np.zeros(2)).shape == (2, 5)

    @T.typechecked
    def g(x: T.Array["b"]):
        T.set_shape("b", 9)

    with pytest.raises(T.TypeCheckError):
        g(np.zeros(2))


def test_memo_lists_the_bound_dims_single_and_variadic():
    @T.typechecked
    def f(x: T.Array["*b h"]):
        return T.Memo.from_current_context()

    memo = f(np.zeros((2, 3, 4)))
    assert memo.single == {"h": 4} and memo.variadic == {"b": (2, 3)}


def test_prngkey_annotation_takes_raw_typed_and_kd_keys():
    @T.typechecked
    def f(key: T.PRNGKey) -> T.Float[""]:
        return jax.random.uniform(jax.numpy.asarray(key) if isinstance(key, kd.random.PRNGKey) else key)

    assert f(jax.random.PRNGKey(0)) == jax.random.uniform(jax.random.PRNGKey(0))
    f(jax.random.key(0))
    f(kd.random.PRNGKey(0))
    with pytest.raises(T.TypeCheckError):
        f(np.zeros(3, np.float32))


@pytest.mark.parametrize(
    ("name", "instead"), [("TfFloat", "Float"), ("TfUInt8", "UInt8"), ("TfArray", "Array")]
)
def test_tensorflow_names_raise_naming_the_ktyping_annotation(name, instead):
    tf_annotation = getattr(T, name)
    with pytest.raises(T.NoTensorFlowError, match=rf"kd.typing.{name} .* use ktyping.{instead}\[...\]"):
        tf_annotation["b n"]
    with pytest.raises(TypeError, match="no TensorFlow"):
        isinstance(np.zeros(2), tf_annotation)
