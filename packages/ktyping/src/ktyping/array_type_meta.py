"""Kauldron's `ktyping.array_type_meta` module path: the metaclass of the array annotations.

from ktyping import array_type_meta as atm
atm.is_array_type(Float["b n"])        # True
Float["b n"].shape_spec                # "b n"
isinstance(Float["b n"], atm.ArrayTypeMeta)
"""

from ktyping._array_types import ArrayMeta as ArrayTypeMeta
from ktyping._array_types import is_array_type as is_array_type

__all__ = ["ArrayTypeMeta", "is_array_type"]
