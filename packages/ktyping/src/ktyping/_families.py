"""The concrete annotations: `Array`, `Float`, `Int32`, `Scalar`, `PRNGKey`, `XFloat`, ...

    >>> Float["b n"], (Float | UInt8)["h w 3|4"], ScalarInt, PRNGKey["b"]
    (Float['b n'], (Float | UInt8)['h w 3|4'], ScalarInt, PRNGKey['b'])

`Int` is signed or unsigned; bfloat16 and the float8 formats count as `Float`. Arrays are
recognised by duck typing (`.shape` and `.dtype`), so numpy, jax, torch and tensorflow arrays are
all accepted; the `X` names (`XArray`, `XFloat32`, ...) are Kauldron's spelling of the same annotations.
"""

from __future__ import annotations

from . import _dtypes as d
from ._array_types import array_type

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
    "PRNGKey",
    "PRNGKeyArray",
    "SInt",
    "Scalar",
    "ScalarBool",
    "ScalarComplex",
    "ScalarFloat",
    "ScalarInt",
    "UInt",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "XArray",
    "XBool",
    "XComplex",
    "XComplex64",
    "XComplex128",
    "XFloat",
    "XFloat16",
    "XFloat32",
    "XFloat64",
    "XInt",
    "XInt8",
    "XInt16",
    "XInt32",
    "XInt64",
    "XIntOrBool",
    "XNum",
    "XSInt",
    "XUInt",
    "XUInt8",
    "XUInt16",
    "XUInt32",
    "XUInt64",
]


def _sized(name: str) -> object:
    dtype = d.SIZED[name]
    return array_type(name, d.DtypeFamily(name, frozenset({dtype})))


Array = array_type("Array", d.ANY)
Num = array_type("Num", d.NUM)
Bool = array_type("Bool", d.BOOL)
Int = array_type("Int", d.INT)
SInt = array_type("SInt", d.SINT)
UInt = array_type("UInt", d.UINT)
Float = array_type("Float", d.FLOAT)
Complex = array_type("Complex", d.COMPLEX)
IntOrBool = array_type("IntOrBool", d.INT_OR_BOOL)

BFloat16 = _sized("BFloat16")
Float16 = _sized("Float16")
Float32 = _sized("Float32")
Float64 = _sized("Float64")
Int8 = _sized("Int8")
Int16 = _sized("Int16")
Int32 = _sized("Int32")
Int64 = _sized("Int64")
UInt8 = _sized("UInt8")
UInt16 = _sized("UInt16")
UInt32 = _sized("UInt32")
UInt64 = _sized("UInt64")
Complex64 = _sized("Complex64")
Complex128 = _sized("Complex128")

# A python scalar of the right kind, or a 0-d array of the family.
Scalar = array_type("Scalar", d.NUM | d.BOOL, "scalar", (bool, int, float, complex))
ScalarBool = array_type("ScalarBool", d.BOOL, "scalar", (bool,))
ScalarInt = array_type("ScalarInt", d.INT, "scalar", (int,))
ScalarFloat = array_type("ScalarFloat", d.FLOAT, "scalar", (float, int))
ScalarComplex = array_type("ScalarComplex", d.COMPLEX, "scalar", (complex, float, int))

# A jax PRNG key: a typed key array (dtype key<...>) or a raw uint32 array with a last axis of 2.
PRNGKey = array_type("PRNGKey", d.PRNG_KEY, "key")
# Any number of keys (`jax.random.split(key, 4)`), one key included.
PRNGKeyArray = array_type("PRNGKeyArray", d.PRNG_KEY, "keys")

# Kauldron's names for "any array library": ours accept every library already, so each is the
# same annotation (`XFloat32 is Float32`).
XArray, XNum, XBool, XInt, XSInt, XUInt = Array, Num, Bool, Int, SInt, UInt
XFloat, XComplex, XIntOrBool = Float, Complex, IntOrBool
XInt8, XInt16, XInt32, XInt64 = Int8, Int16, Int32, Int64
XUInt8, XUInt16, XUInt32, XUInt64 = UInt8, UInt16, UInt32, UInt64
XFloat16, XFloat32, XFloat64 = Float16, Float32, Float64
XComplex64, XComplex128 = Complex64, Complex128

# What each annotation takes, as its docstring (the API reference and `help()` show it).
Array.__doc__ = (
    "`Array['b n']`: an array of any dtype (numpy, jax, torch, ...: anything with `.shape` and `.dtype`)."
)
Num.__doc__ = "`Num['b n']`: an array of numbers: integers, floats or complex numbers (not bool)."
Bool.__doc__ = "`Bool['b n']`: an array of booleans."
Int.__doc__ = (
    "`Int['b n']`: an array of signed or unsigned integers (`int8` ... `int64`, `uint8` ... `uint64`)."
)
SInt.__doc__ = "`SInt['b n']`: an array of signed integers (`int8` ... `int64`)."
UInt.__doc__ = "`UInt['b n']`: an array of unsigned integers (`uint8` ... `uint64`)."
Float.__doc__ = (
    "`Float['b n']`: an array of floats (`bfloat16`, `float16`, `float32`, `float64`, the float8 formats)."
)
Complex.__doc__ = "`Complex['b n']`: an array of complex numbers (`complex64`, `complex128`)."
IntOrBool.__doc__ = "`IntOrBool['b n']`: an array of integers or booleans."
for _name in (
    "BFloat16", "Float16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64",
    "UInt8", "UInt16", "UInt32", "UInt64", "Complex64", "Complex128",
):  # fmt: skip
    globals()[_name].__doc__ = f"`{_name}['b n']`: an array of dtype {_name.lower()}."
del _name
Scalar.__doc__ = (
    "`Scalar`: a Python number (bool, int, float, complex) or a 0-d array of numbers or booleans."
)
ScalarBool.__doc__ = "`ScalarBool`: a Python bool or a 0-d boolean array."
ScalarInt.__doc__ = "`ScalarInt`: a Python int or a 0-d integer array."
ScalarFloat.__doc__ = "`ScalarFloat`: a Python float (or int) or a 0-d float array."
ScalarComplex.__doc__ = "`ScalarComplex`: a Python complex (or float, int) or a 0-d complex array."
PRNGKey.__doc__ = "`PRNGKey`: one JAX random key, typed (`key<fry>`, shape `()`) or raw (`uint32[2]`); `PRNGKey['n']`: a batch."
PRNGKeyArray.__doc__ = (
    "`PRNGKeyArray`: any number of JAX random keys (`jax.random.split(key, 4)`), one included."
)
