"""Dtype families: which dtype names each annotation accepts."""

import ktyping
import numpy as np
import pytest
from ktyping import _dtypes


class NamedDtype:
    """A dtype known only by its name, like ml_dtypes' bfloat16 or jax's key<fry>."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedDtype) and other.name == self.name


class DuckArray:
    def __init__(self, shape: tuple[int, ...], dtype: object) -> None:
        self.shape = shape
        self.dtype = dtype


@pytest.mark.parametrize(
    ("annotation", "dtype"),
    [
        (ktyping.Float, "float16"),
        (ktyping.Float, "float32"),
        (ktyping.Float, "float64"),
        (ktyping.Int, "int8"),
        (ktyping.Int, "uint8"),
        (ktyping.SInt, "int64"),
        (ktyping.UInt, "uint32"),
        (ktyping.Bool, "bool"),
        (ktyping.Complex, "complex64"),
        (ktyping.Num, "int32"),
        (ktyping.Num, "float32"),
        (ktyping.Num, "complex128"),
        (ktyping.Array, "bool"),
        (ktyping.IntOrBool, "bool"),
        (ktyping.Float32, "float32"),
        (ktyping.UInt8, "uint8"),
        (ktyping.Int64, "int64"),
    ],
)
def test_family_accepts_its_numpy_dtypes(annotation: object, dtype: str) -> None:
    assert isinstance(np.zeros((2,), dtype), annotation)


@pytest.mark.parametrize(
    ("annotation", "dtype"),
    [
        (ktyping.Float, "int32"),
        (ktyping.Int, "float32"),
        (ktyping.Int, "bool"),
        (ktyping.SInt, "uint8"),
        (ktyping.UInt, "int8"),
        (ktyping.Bool, "uint8"),
        (ktyping.Num, "bool"),
        (ktyping.Complex, "float64"),
        (ktyping.Float32, "float64"),
        (ktyping.UInt8, "int8"),
    ],
)
def test_family_rejects_other_dtypes(annotation: object, dtype: str) -> None:
    assert not isinstance(np.zeros((2,), dtype), annotation)


def test_bfloat16_counts_as_floating() -> None:
    x = DuckArray((2,), NamedDtype("bfloat16"))
    assert isinstance(x, ktyping.Float)
    assert isinstance(x, ktyping.BFloat16)
    assert not isinstance(x, ktyping.Float32)


def test_union_of_families_accepts_either_dtype() -> None:
    image = ktyping.Float | ktyping.UInt8
    assert isinstance(np.zeros((2, 2, 3), np.uint8), image["h w 3|4"])
    assert isinstance(np.zeros((2, 2, 4), np.float32), image["h w 3|4"])
    assert not isinstance(np.zeros((2, 2, 3), np.int8), image["h w 3|4"])


def test_union_of_families_is_printed_with_both_names() -> None:
    assert repr((ktyping.Float | ktyping.UInt8)["h w"]) == "(Float | UInt8)['h w']"


def test_dtype_name_reads_numpy_scalar_types_and_torch_dtypes() -> None:
    class TorchDtype:
        def __str__(self) -> str:
            return "torch.float32"

    assert _dtypes.dtype_name(np.float32) == "float32"
    assert _dtypes.dtype_name(np.bool_) == "bool"
    assert _dtypes.dtype_name(TorchDtype()) == "float32"


def test_unhashable_dtype_is_still_checked() -> None:
    class UnhashableDtype:
        name = "int16"
        __hash__ = None  # type: ignore[assignment]

    assert isinstance(DuckArray((3,), UnhashableDtype()), ktyping.Int16)
    assert not isinstance(DuckArray((3,), UnhashableDtype()), ktyping.Float)


def test_scalar_accepts_python_numbers_and_zero_dim_arrays() -> None:
    assert isinstance(3, ktyping.Scalar)
    assert isinstance(2.5, ktyping.ScalarFloat)
    assert isinstance(np.float32(1.0), ktyping.ScalarFloat)
    assert isinstance(np.array(3), ktyping.ScalarInt)
    assert isinstance(True, ktyping.ScalarBool)


def test_scalar_rejects_arrays_with_axes_and_wrong_kinds() -> None:
    assert not isinstance(np.zeros(3), ktyping.Scalar)
    assert not isinstance(2.5, ktyping.ScalarInt)
    assert not isinstance(np.array(1.0), ktyping.ScalarInt)
    assert not isinstance("3", ktyping.Scalar)


def test_prng_key_accepts_typed_keys_and_raw_uint32_pairs() -> None:
    assert isinstance(DuckArray((), NamedDtype("key<fry>")), ktyping.PRNGKey)
    assert isinstance(np.zeros((2,), np.uint32), ktyping.PRNGKey)
    assert isinstance(np.zeros((5, 2), np.uint32), ktyping.PRNGKey["b"])
    assert isinstance(DuckArray((5,), NamedDtype("key<fry>")), ktyping.PRNGKey["b"])


def test_prng_key_rejects_other_arrays() -> None:
    assert not isinstance(np.zeros((3,), np.uint32), ktyping.PRNGKey)
    assert not isinstance(np.zeros((2,), np.float32), ktyping.PRNGKey)


def test_unsubscripted_prng_key_is_a_single_key_typed_or_raw() -> None:
    assert not isinstance(DuckArray((5,), NamedDtype("key<fry>")), ktyping.PRNGKey)
    assert not isinstance(np.zeros((5, 2), np.uint32), ktyping.PRNGKey)
    assert isinstance(np.zeros((5, 2), np.uint32), ktyping.PRNGKey["5"])


def test_non_arrays_are_not_instances_of_array_annotations() -> None:
    assert not isinstance([1.0, 2.0], ktyping.Float)
    assert not isinstance(None, ktyping.Array)


@pytest.mark.parametrize("family", sorted(_dtypes.SIZED))
def test_every_sized_family_accepts_exactly_its_dtype(family: str) -> None:
    annotation = getattr(ktyping, family)
    own = _dtypes.SIZED[family]
    for name in sorted(set(_dtypes.SIZED.values()) | {"bool"}):
        x = DuckArray((2,), NamedDtype(name))
        assert isinstance(x, annotation) is (name == own), name
