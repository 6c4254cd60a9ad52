"""Annotations that static type checkers accept: `Float[np.ndarray, "b n"]`.

    from ktyping.static import Float

    @ktyping.typechecked
    def f(x: Float[np.ndarray, "b n"]) -> Float[np.ndarray, "b"]: ...

For mypy and pyright every name here is `typing.Annotated`, so `Float[np.ndarray, "b n"]`
means `np.ndarray` to them (no per-line ignores needed). At runtime the names are
ktyping's own annotations: the first argument restricts the array class and the second
is the shape spec, checked by `@typechecked` like `Float["b n"]`.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Annotated as Array
    from typing import Annotated as BFloat16
    from typing import Annotated as Bool
    from typing import Annotated as Complex
    from typing import Annotated as Complex64
    from typing import Annotated as Complex128
    from typing import Annotated as Float
    from typing import Annotated as Float16
    from typing import Annotated as Float32
    from typing import Annotated as Float64
    from typing import Annotated as Int
    from typing import Annotated as Int8
    from typing import Annotated as Int16
    from typing import Annotated as Int32
    from typing import Annotated as Int64
    from typing import Annotated as IntOrBool
    from typing import Annotated as Num
    from typing import Annotated as SInt
    from typing import Annotated as UInt
    from typing import Annotated as UInt8
    from typing import Annotated as UInt16
    from typing import Annotated as UInt32
    from typing import Annotated as UInt64
else:
    from ._families import Array as Array
    from ._families import BFloat16 as BFloat16
    from ._families import Bool as Bool
    from ._families import Complex as Complex
    from ._families import Complex64 as Complex64
    from ._families import Complex128 as Complex128
    from ._families import Float as Float
    from ._families import Float16 as Float16
    from ._families import Float32 as Float32
    from ._families import Float64 as Float64
    from ._families import Int as Int
    from ._families import Int8 as Int8
    from ._families import Int16 as Int16
    from ._families import Int32 as Int32
    from ._families import Int64 as Int64
    from ._families import IntOrBool as IntOrBool
    from ._families import Num as Num
    from ._families import SInt as SInt
    from ._families import UInt as UInt
    from ._families import UInt8 as UInt8
    from ._families import UInt16 as UInt16
    from ._families import UInt32 as UInt32
    from ._families import UInt64 as UInt64

__all__ = [
    "Array",
    "BFloat16",
    "Bool",
    "Complex",
    "Complex64",
    "Complex128",
    "Float",
    "Float16",
    "Float32",
    "Float64",
    "Int",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "IntOrBool",
    "Num",
    "SInt",
    "UInt",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
]
