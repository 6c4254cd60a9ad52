"""ktyping: runtime array shape and dtype checking with named axes.

    import ktyping
    from ktyping import Float, Int

    @ktyping.typechecked
    def gather(x: Float["b n d"], idx: Int["b k"]) -> Float["b k d"]: ...

Pure standard library at import time; numpy, jax and torch arrays are recognised by
duck typing (`.shape` and `.dtype`). See README.md for the spec language.
"""

from ._array_types import ArraySpec as ArraySpec
from ._array_types import Shape as Shape
from ._array_types import is_array_type as is_array_type
from ._compile import PyTree as PyTree
from ._config import CONFIG as CONFIG
from ._config import Config as Config
from ._config import add_config_override as add_config_override
from ._config import get_config as get_config
from ._config import remove_config_override as remove_config_override
from ._decorator import typechecked as typechecked
from ._dtype_like import Axes as Axes
from ._dtype_like import DType as DType
from ._errors import AmbiguousDimensionError as AmbiguousDimensionError
from ._errors import DimAssignmentError as DimAssignmentError
from ._errors import KTypeCheckError as KTypeCheckError
from ._errors import NoActiveScopeError as NoActiveScopeError
from ._errors import NotInstantiableError as NotInstantiableError
from ._errors import ShapeSpecSyntaxError as ShapeSpecSyntaxError
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
from ._families import PRNGKey as PRNGKey
from ._families import PRNGKeyArray as PRNGKeyArray
from ._families import Scalar as Scalar
from ._families import ScalarBool as ScalarBool
from ._families import ScalarComplex as ScalarComplex
from ._families import ScalarFloat as ScalarFloat
from ._families import ScalarInt as ScalarInt
from ._families import SInt as SInt
from ._families import UInt as UInt
from ._families import UInt8 as UInt8
from ._families import UInt16 as UInt16
from ._families import UInt32 as UInt32
from ._families import UInt64 as UInt64
from ._families import XArray as XArray
from ._families import XBool as XBool
from ._families import XComplex as XComplex
from ._families import XComplex64 as XComplex64
from ._families import XComplex128 as XComplex128
from ._families import XFloat as XFloat
from ._families import XFloat16 as XFloat16
from ._families import XFloat32 as XFloat32
from ._families import XFloat64 as XFloat64
from ._families import XInt as XInt
from ._families import XInt8 as XInt8
from ._families import XInt16 as XInt16
from ._families import XInt32 as XInt32
from ._families import XInt64 as XInt64
from ._families import XIntOrBool as XIntOrBool
from ._families import XNum as XNum
from ._families import XSInt as XSInt
from ._families import XUInt as XUInt
from ._families import XUInt8 as XUInt8
from ._families import XUInt16 as XUInt16
from ._families import XUInt32 as XUInt32
from ._families import XUInt64 as XUInt64
from ._in_scope import check_type as check_type
from ._in_scope import dim as dim
from ._in_scope import isinstance as isinstance
from ._in_scope import shape as shape
from ._scope import Scope as Scope
from ._scope import ShapeScope as ShapeScope
from ._scope import get_current_scope as get_current_scope

__version__ = "0.1.0"

__all__ = [
    "CONFIG",
    "AmbiguousDimensionError",
    "Array",
    "ArraySpec",
    "Axes",
    "BFloat16",
    "Bool",
    "Complex",
    "Complex128",
    "Complex64",
    "Config",
    "DType",
    "DimAssignmentError",
    "Float",
    "Float16",
    "Float32",
    "Float64",
    "Int",
    "Int16",
    "Int32",
    "Int64",
    "Int8",
    "IntOrBool",
    "KTypeCheckError",
    "NoActiveScopeError",
    "NotInstantiableError",
    "Num",
    "PRNGKey",
    "PRNGKeyArray",
    "PyTree",
    "SInt",
    "Scalar",
    "ScalarBool",
    "ScalarComplex",
    "ScalarFloat",
    "ScalarInt",
    "Scope",
    "Shape",
    "ShapeScope",
    "ShapeSpecSyntaxError",
    "UInt",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt8",
    "XArray",
    "XBool",
    "XComplex",
    "XComplex128",
    "XComplex64",
    "XFloat",
    "XFloat16",
    "XFloat32",
    "XFloat64",
    "XInt",
    "XInt16",
    "XInt32",
    "XInt64",
    "XInt8",
    "XIntOrBool",
    "XNum",
    "XSInt",
    "XUInt",
    "XUInt16",
    "XUInt32",
    "XUInt64",
    "XUInt8",
    "add_config_override",
    "check_type",
    "dim",
    "get_config",
    "get_current_scope",
    "is_array_type",
    "isinstance",
    "remove_config_override",
    "shape",
    "typechecked",
]
