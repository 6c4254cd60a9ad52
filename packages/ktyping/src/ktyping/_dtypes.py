"""Dtype families recognised by name, without importing any array library.

A family is a set of dtype names (`"float32"`, `"bfloat16"`, ...). An array's dtype
name is read by duck typing: `dtype.name` when present (numpy, jax), else `str(dtype)`
with a `torch.` prefix removed (`torch.float32` -> `float32`).

    FLOAT.accepts(np.dtype("float32"))  # True

    >>> FLOAT.accepts_name("bfloat16"), INT.accepts_name("float32")
    (True, False)
"""

from __future__ import annotations

__all__ = ["DtypeFamily", "dtype_name", "short_dtype_name"]

_SINT = ("int4", "int8", "int16", "int32", "int64")
_UINT = ("uint4", "uint8", "uint16", "uint32", "uint64")
_FLOAT = (
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e8m0fnu",
    "float4_e2m1fn",
)
_COMPLEX = ("complex64", "complex128")
_BOOL = ("bool",)

_SHORT = {
    "bool": "bool",
    "bfloat16": "bf16",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "complex64": "c64",
    "complex128": "c128",
}

_TORCH_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64"}


def dtype_name(dtype: object) -> str:
    """Returns the canonical name of a numpy, jax or torch dtype (`"float32"`)."""
    name = getattr(dtype, "name", None)
    if type(name) is str and name:
        return name
    text = str(dtype)
    if text.startswith("torch."):
        text = text[6:]
        return _TORCH_ALIASES.get(text, text)
    if text.startswith("<class '"):  # a scalar type such as np.float32 or jnp.bfloat16
        text = text[8:-2].rsplit(".", 1)[-1]
        return {"bool_": "bool"}.get(text, text)
    return text


def short_dtype_name(name: str) -> str:
    """`"float32"` -> `"f32"`, used for compact value printing."""
    return _SHORT.get(name, name)


class DtypeFamily:
    """A named set of dtype names; families combine with `|`.

    Args:
      name: How the family is printed (`"Float"`).
      names: The dtype names it accepts; `None` accepts every dtype.
      prefixes: Name prefixes it also accepts (`"key<"` for jax PRNG keys).
    """

    __slots__ = ("_cache", "name", "names", "prefixes")

    def __init__(
        self,
        name: str,
        names: frozenset[str] | None,
        prefixes: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.names = names
        self.prefixes = prefixes
        # Keyed by the dtype object itself (hashable in numpy, jax and torch).
        self._cache: dict[object, bool] = {}

    def accepts(self, dtype: object) -> bool:
        """Whether an array with this dtype belongs to the family."""
        try:
            return self._cache[dtype]
        except KeyError:
            pass
        except TypeError:  # unhashable dtype
            return self.accepts_name(dtype_name(dtype))
        ok = self.accepts_name(dtype_name(dtype))
        if len(self._cache) < 256:
            self._cache[dtype] = ok
        return ok

    def accepts_name(self, name: str) -> bool:
        if self.names is None:
            return True
        if name in self.names:
            return True
        return bool(self.prefixes) and name.startswith(self.prefixes)

    def __or__(self, other: DtypeFamily) -> DtypeFamily:
        if self.names is None or other.names is None:
            names = None
        else:
            names = self.names | other.names
        return DtypeFamily(f"{self.name} | {other.name}", names, self.prefixes + other.prefixes)

    def describe(self) -> str:
        if self.names is None:
            return "any dtype"
        listed = sorted(self.names, key=_dtype_order)
        if self.prefixes:
            listed += [p + "..." for p in self.prefixes]
        return ", ".join(listed)

    def __repr__(self) -> str:
        return f"DtypeFamily({self.name})"


def _dtype_order(name: str) -> tuple[int, int, str]:
    digits = "".join(ch for ch in name if ch.isdigit())
    return (0 if name == "bool" else 1, int(digits) if digits else 0, name)


def _family(name: str, *groups: tuple[str, ...]) -> DtypeFamily:
    return DtypeFamily(name, frozenset(n for group in groups for n in group))


ANY = DtypeFamily("Array", None)
BOOL = _family("Bool", _BOOL)
SINT = _family("SInt", _SINT)
UINT = _family("UInt", _UINT)
INT = _family("Int", _SINT, _UINT)
FLOAT = _family("Float", _FLOAT)
COMPLEX = _family("Complex", _COMPLEX)
NUM = _family("Num", _SINT, _UINT, _FLOAT, _COMPLEX)
INT_OR_BOOL = _family("IntOrBool", _SINT, _UINT, _BOOL)
PRNG_KEY = DtypeFamily("PRNGKey", frozenset({"uint32"}), ("key<",))

SIZED = {
    "BFloat16": "bfloat16",
    "Float16": "float16",
    "Float32": "float32",
    "Float64": "float64",
    "Int8": "int8",
    "Int16": "int16",
    "Int32": "int32",
    "Int64": "int64",
    "UInt8": "uint8",
    "UInt16": "uint16",
    "UInt32": "uint32",
    "UInt64": "uint64",
    "Complex64": "complex64",
    "Complex128": "complex128",
}
