# ruff: noqa: F821, UP037 - single-name shape specs like Float["b"] are strings, not forward references
"""`ktyping.DType` and `ktyping.Axes`: what counts as a dtype argument and as an axis argument."""

from __future__ import annotations

import ktyping
import numpy as np
import pytest
from ktyping import Axes, DType


@pytest.mark.parametrize(
    "value", ["float32", "bfloat16", float, int, np.float32, np.dtype("int8"), np.dtype("bool"), np.zeros(2)]
)
def test_dtype_like_values_are_dtypes(value):
    assert isinstance(value, DType)


@pytest.mark.parametrize("value", [3, 1.5, None, [np.float32], b"float32"])
def test_values_that_name_no_dtype_are_not_dtypes(value):
    assert not isinstance(value, DType)


@pytest.mark.parametrize("value", [0, -1, (0, 2), (), np.int64(1), np.uint8(2), (np.int32(0), -1)])
def test_ints_and_tuples_of_ints_are_axes(value):
    assert isinstance(value, Axes)


@pytest.mark.parametrize("value", [True, (1, True), 1.5, [0, 1], (0, 1.0), "0", np.zeros(()), None])
def test_bools_floats_lists_and_arrays_are_not_axes(value):
    assert not isinstance(value, Axes)


def test_typechecked_checks_dtype_and_axes_arguments():
    @ktyping.typechecked
    def total(x: ktyping.Float["b n"], axis: Axes = -1, dtype: DType = "float32") -> ktyping.Float["b"]:
        return x.sum(axis).astype(dtype)

    np.testing.assert_array_equal(total(np.ones((2, 3), np.float32), axis=1), [3.0, 3.0])
    with pytest.raises(ktyping.KTypeCheckError, match=r"axis = 1\.5"):
        total(np.ones((2, 3), np.float32), axis=1.5)
    with pytest.raises(ktyping.KTypeCheckError, match="dtype = 3"):
        total(np.ones((2, 3), np.float32), dtype=3)


@pytest.mark.parametrize("annotation", [DType, Axes])
def test_the_annotations_are_not_constructors(annotation):
    with pytest.raises(ktyping.NotInstantiableError, match="annotation"):
        annotation("float32")


def test_both_are_exported():
    assert {"DType", "Axes"} <= set(ktyping.__all__)
    assert repr(DType) == "DType" and repr(Axes) == "Axes"
