"""kd.typing: Kauldron's legacy typing names (`kd.typing.Float["b n"]`, `Shape("b h")`), as aliases onto ktyping.

    from kd.typing import Float, Shape, typechecked

    @typechecked
    def pool(x: Float["b h w c"]) -> Float["b h//2 w//2 c"]:
        return x.reshape(Shape("b h//2") + (2, -1, 2, Shape("c")[0])).mean((2, 4))

The array annotations, `check_type`, `typechecked`, `PRNGKey`, `DType`, `Axes` and `PyTree` are ktyping's
own objects (`Integer` is `ktyping.Int`, `TypeCheckError` is `ktyping.KTypeCheckError`); the `Tf*` names
raise `NoTensorFlowError`, naming the ktyping annotation to use instead.
"""

from ktyping import Array as Array
from ktyping import ArraySpec as ArraySpec
from ktyping import Axes as Axes
from ktyping import Bool as Bool
from ktyping import Complex as Complex
from ktyping import Complex64 as Complex64
from ktyping import DType as DType
from ktyping import Float as Float
from ktyping import Float32 as Float32
from ktyping import Int as Int
from ktyping import Int as Integer
from ktyping import KTypeCheckError as TypeCheckError
from ktyping import Num as Num
from ktyping import PRNGKey as PRNGKey
from ktyping import PyTree as PyTree
from ktyping import Scalar as Scalar
from ktyping import ScalarFloat as ScalarFloat
from ktyping import ScalarInt as ScalarInt
from ktyping import UInt8 as UInt8
from ktyping import UInt32 as UInt32
from ktyping import XArray as XArray
from ktyping import check_type as check_type
from ktyping import typechecked as typechecked

from kd.typing._aliases import AxisName as AxisName
from kd.typing._aliases import ElementSpec as ElementSpec
from kd.typing._aliases import Initializer as Initializer
from kd.typing._aliases import PRNGKeyLike as PRNGKeyLike
from kd.typing._aliases import Schedule as Schedule
from kd.typing._aliases import enable_kd_type_checking as enable_kd_type_checking
from kd.typing._shapes import Dim as Dim
from kd.typing._shapes import Memo as Memo
from kd.typing._shapes import Shape as Shape
from kd.typing._shapes import set_shape as set_shape
from kd.typing._tensorflow import NoTensorFlowError as NoTensorFlowError
from kd.typing._tensorflow import TfArray as TfArray
from kd.typing._tensorflow import TfFloat as TfFloat
from kd.typing._tensorflow import TfFloat32 as TfFloat32
from kd.typing._tensorflow import TfInt as TfInt
from kd.typing._tensorflow import TfUInt8 as TfUInt8

__all__ = [
    "Array",
    "ArraySpec",
    "AxisName",
    "Axes",
    "Bool",
    "Complex",
    "Complex64",
    "DType",
    "Dim",
    "ElementSpec",
    "Float",
    "Float32",
    "Initializer",
    "Int",
    "Integer",
    "Memo",
    "NoTensorFlowError",
    "Num",
    "PRNGKey",
    "PRNGKeyLike",
    "PyTree",
    "Scalar",
    "ScalarFloat",
    "ScalarInt",
    "Schedule",
    "Shape",
    "TfArray",
    "TfFloat",
    "TfFloat32",
    "TfInt",
    "TfUInt8",
    "TypeCheckError",
    "UInt8",
    "UInt32",
    "XArray",
    "check_type",
    "enable_kd_type_checking",
    "set_shape",
    "typechecked",
]
