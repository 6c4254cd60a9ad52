"""Kauldron's `ktyping.array_types`: ktyping's own array annotations (`Float`, `Int32`, `Scalar`, `XFloat`, ...).

    from ktyping.array_types import Float
    Float["b n"] is ktyping.Float["b n"]      # True

The TensorFlow annotations (`TfFloat`, ...), `PRNGKeyLike` and `Fry` are not brought over: ktyping checks
any array by duck typing, and has `PRNGKey` / `PRNGKeyArray` for keys.
"""

from __future__ import annotations

from ._array_types import ArraySpec as ArraySpec
from ._array_types import Shape as Shape
from ._config import MISSING as MISSING
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
