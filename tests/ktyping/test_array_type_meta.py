"""`ktyping.array_type_meta`: Kauldron's module path for the annotations' metaclass (gemma imports it)."""

from ktyping import Float, Int, array_type_meta


def test_is_array_type_and_the_metaclass() -> None:
    annotation = Float["*b n"]
    assert array_type_meta.is_array_type(annotation)
    assert isinstance(annotation, array_type_meta.ArrayTypeMeta)
    assert annotation.shape_spec == "*b n"
    assert not array_type_meta.is_array_type(int)
    assert Int.shape_spec is None
