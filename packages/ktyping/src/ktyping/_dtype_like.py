"""`DType` and `Axes`: annotations for a dtype argument and an axis argument (Kauldron's `kd.typing` names).

    @ktyping.typechecked
    def reduce(x: Float["*s"], axis: Axes = -1, dtype: DType = "float32") -> Float["..."]: ...

    >>> isinstance("bfloat16", DType), isinstance((0, -1), Axes), isinstance(1.5, Axes)
    (True, True, False)

`DType` is what `jax.typing.DTypeLike` accepts: a dtype name (`"float32"`), a scalar type (`float`,
`np.float32`), a dtype object (`np.dtype("int8")`, `torch.int8`, a jax key dtype) or anything with a
`.dtype` (an array). `Axes` is one axis index or a tuple of them (`int | tuple[int, ...]`). Both are
recognised without importing any array library; a type checker reads them as those unions.
"""

from __future__ import annotations

from . import _dtypes
from ._errors import NotInstantiableError

__all__ = ["Axes", "DType"]

# Every dtype name the families know, for dtype objects recognised by name (numpy, jax, torch).
_KNOWN_DTYPE_NAMES = _dtypes.NUM.names | _dtypes.BOOL.names  # type: ignore[operator]
_KEY_DTYPE_PREFIX = "key<"  # jax's typed PRNG key dtypes: key<fry>, key<rbg>, ...


def _is_dtype_object(value: object) -> bool:
    try:
        name = _dtypes.dtype_name(value)
    except Exception:  # a hostile __str__ or .name: not a dtype
        return False
    return name in _KNOWN_DTYPE_NAMES or name.startswith(_KEY_DTYPE_PREFIX)


def _is_axis(value: object) -> bool:
    """An int (not a bool), or a numpy integer scalar (`np.int64(1)`), recognised by its type's name."""
    kind = type(value)
    if kind is bool:
        return False
    return isinstance(value, int) or (
        kind.__name__.startswith(("int", "uint")) and hasattr(kind, "__index__")
    )


class _DTypeMeta(type):
    def __instancecheck__(cls, value: object) -> bool:
        if type(value) is str or isinstance(value, type):
            return True
        return _is_dtype_object(value) or getattr(value, "dtype", None) is not None

    def __repr__(cls) -> str:
        return "DType"


class _AxesMeta(type):
    def __instancecheck__(cls, value: object) -> bool:
        if type(value) is tuple:
            return all(_is_axis(axis) for axis in value)
        return _is_axis(value)

    def __repr__(cls) -> str:
        return "Axes"


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    DType: TypeAlias = Any  # str | type | a dtype object | anything with a `.dtype`
    Axes: TypeAlias = int | tuple[int, ...]
else:

    class DType(metaclass=_DTypeMeta):
        """A dtype argument: a name, a scalar type, a dtype object or a value with a `.dtype`.

        Attributes:
          (none): an annotation; `isinstance(value, DType)` tells whether `value` is dtype-like.
        """

        def __new__(cls, *args: object, **kwargs: object) -> DType:
            raise NotInstantiableError(
                "DType is an annotation for a dtype argument (`dtype: DType`), not a dtype constructor: "
                'pass the dtype itself ("float32", np.float32, x.dtype)'
            )

    class Axes(metaclass=_AxesMeta):
        """An axis argument: one axis index (`-1`) or a tuple of them (`(0, 2)`); bools are no axes.

        Attributes:
          (none): an annotation; `isinstance(value, Axes)` tells whether `value` names axes.
        """

        def __new__(cls, *args: object, **kwargs: object) -> Axes:
            raise NotInstantiableError(
                "Axes is an annotation for an axis argument (`axis: Axes`), not a constructor: "
                "pass the axes themselves (-1 or (0, 2))"
            )
