"""Array annotations' parts (`shape_spec`, `dtype_matches`, ...), `is_array_type`, `XArray`,
`PRNGKeyArray`, `ArraySpec`, what counts as a `Shape`, and `isinstance` with a tuple."""

import ktyping
import numpy as np
import pytest
from ktyping import ArraySpec, Float, Float32, NotInstantiableError, PRNGKey, PRNGKeyArray, Shape

from .arrays import f32, i32


class Spec:
    """An array spec such as `jax.ShapeDtypeStruct`: shape and dtype, no data; None for an unknown axis."""

    def __init__(self, shape: tuple, dtype: str = "float32") -> None:
        self.shape = shape
        self.dtype = np.dtype(dtype)


def test_shape_spec_is_the_spec_as_written() -> None:
    assert Float32["1 2 3"].shape_spec == "1 2 3"
    assert Float32.shape_spec is None


def test_parts_of_the_check_can_be_asked_one_at_a_time() -> None:
    t = Float32["1 2 3"]
    assert t.array_types_match(i32(5)) and not t.array_types_match([1.0])
    assert t.dtype_matches(f32(5)) and not t.dtype_matches(i32(1, 2, 3))
    assert t.shape_matches(i32(1, 2, 3)) and not t.shape_matches(f32(2, 3))


def test_shape_matches_returns_the_candidates_in_kauldrons_form() -> None:
    assert Float["b n"].shape_matches(f32(2, 3)) == [{"b": (2,), "n": (3,)}]
    assert Float["b n"].shape_matches(f32(2, 3), [{"b": (4,)}]) == []


def test_is_array_type_is_true_for_array_annotations_only() -> None:
    assert (
        ktyping.is_array_type(Float)
        and ktyping.is_array_type(Float32["1 2"])
        and ktyping.is_array_type(ArraySpec)
    )
    assert not ktyping.is_array_type(int) and not ktyping.is_array_type(np.float32)
    assert not ktyping.is_array_type(Shape)


@pytest.mark.parametrize("annotation", [Float32, Shape, ktyping.PyTree])
def test_calling_an_annotation_raises_with_the_subscript_form(annotation: object) -> None:
    with pytest.raises(NotInstantiableError, match=r"cannot be instantiated.*\['a b'\]"):
        annotation("a b")  # type: ignore[operator]


def test_x_names_accept_arrays_of_their_dtype() -> None:
    assert isinstance(i32(2), ktyping.XArray) and isinstance(f32(2, 3), ktyping.XFloat32["a b"])
    assert not isinstance(i32(2), ktyping.XFloat)


def test_prng_key_array_holds_any_number_of_raw_keys() -> None:
    keys = np.zeros((4, 2), np.uint32)
    assert isinstance(keys, PRNGKeyArray) and isinstance(keys[0], PRNGKeyArray)
    assert not isinstance(keys, PRNGKey)
    assert isinstance(keys, PRNGKeyArray["n"]) and not isinstance(np.zeros((4, 3), np.uint32), PRNGKeyArray)


def test_array_spec_takes_shape_and_dtype_objects_but_not_arrays() -> None:
    assert isinstance(Spec((2, 3)), ArraySpec["b n"])
    assert not isinstance(f32(2, 3), ArraySpec["b n"])
    assert not isinstance(Spec((2, 3)), ArraySpec["b"])


def test_array_spec_axes_of_unknown_size_match_any_dim() -> None:
    with ktyping.typechecked():
        ktyping.check_type(Spec((None, 128)), ArraySpec["B T"])
        ktyping.check_type(Spec((None, 128)), ArraySpec["B 128"])
        ktyping.check_type(Spec((None, None, 128)), ArraySpec["*b T"])
        assert ktyping.shape("T") == (128,)
        with pytest.raises(ktyping.KTypeCheckError, match="not shape-compatible with 'B 64'"):
            ktyping.check_type(Spec((None, 128)), ArraySpec["B 64"])


def test_array_spec_error_for_an_array_says_it_takes_specs() -> None:
    with ktyping.typechecked():
        with pytest.raises(ktyping.KTypeCheckError, match="takes array specs"):
            ktyping.check_type(f32(2), ArraySpec["n"])


@pytest.mark.parametrize("value", [[0.2, None, 3], [None, 3], ("2", 3), [1.5]])
def test_a_shape_holds_only_ints(value: object) -> None:
    assert not isinstance(value, Shape)
    assert not isinstance(value, Shape["*b"])


def test_numpy_ints_are_axis_sizes() -> None:
    assert isinstance((np.int64(2), 3), Shape["b 3"])


def test_a_shape_with_a_bad_item_is_explained() -> None:
    with ktyping.typechecked():
        with pytest.raises(ktyping.KTypeCheckError, match="is not a valid shape: item 1 is None"):
            ktyping.check_type([2, None], Shape)


def test_isinstance_with_a_tuple_is_true_for_any_member() -> None:
    with ktyping.typechecked():
        assert ktyping.isinstance(f32(2, 3), (Float["2 3"], int))
        assert ktyping.isinstance(12, (Float["2 3"], int))
        assert not ktyping.isinstance("a", (Float["2 3"], int))
    assert ktyping.isinstance(None, (int, None))


def test_a_dim_bound_to_an_unknown_axis_reads_back_as_that_axis() -> None:
    with ktyping.typechecked():
        ktyping.check_type(Spec((None, 5)), ArraySpec["n m"])
        assert ktyping.dim["n"] is None
        assert ktyping.shape("n m") == (None, 5)
