"""Array annotations: `Float["b n"]`, `(Float | UInt8)["h w 3|4"]`, `Scalar`, `Shape[...]`.

    >>> from ktyping import Float
    >>> Float["b n"], Float["b n"] is Float["b n"]
    (Float['b n'], True)

Each annotation is a class whose metaclass implements `[...]`, `|` and `isinstance`.
It carries a compiled `_kt_check(value, candidates, scope) -> candidates` (an empty list
means the value does not match) used by the `@typechecked` hot path. The concrete ones
(`Float`, `Int`, ...) are made in `_families`; `PyTree[T]`, whose check compiles `T`, lives
in `_compile`.
"""

from __future__ import annotations

import sys

from . import _dtypes
from ._scope import current_candidates
from ._spec import Spec, generate_function
from ._spec_cache import parse_spec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[Any, list[dict[str, Any]], Any], list[dict[str, Any]]]

__all__ = ["ArrayMeta", "Shape", "array_type", "is_ktyping_annotation"]

_NO: list = []

# Kinds of annotation.
_ARRAY = "array"
_SCALAR = "scalar"
_KEY = "key"
_SHAPE = "shape"


class ArrayMeta(type):
    """Metaclass of the array annotations; `Float["b n"]` is a (cached) subclass of `Float`."""

    _kt_family: _dtypes.DtypeFamily
    _kt_spec: Spec | None
    _kt_kind: str
    _kt_array_type: Any
    _kt_scalar_types: tuple[type, ...]
    _kt_check: Check
    _kt_base_name: str
    _kt_subscripts: dict[Any, ArrayMeta]

    def __getitem__(cls, item: Any) -> Any:
        if cls._kt_spec is not None:
            raise TypeError(f"{cls!r} already has a shape spec; write {cls._kt_base_name}[...] once")
        try:
            return cls._kt_subscripts[item]
        except (KeyError, TypeError):
            pass
        array_type = None
        spec_text = item
        if type(item) is tuple:
            if len(item) != 2 or not isinstance(item[1], str):
                raise TypeError(
                    f"{cls._kt_base_name}[...] takes a shape spec string such as "
                    f"{cls._kt_base_name}['b n'] or (array type, spec) such as "
                    f"{cls._kt_base_name}[np.ndarray, 'b n'], got {item!r}"
                )
            array_type, spec_text = item
            if array_type is object or _is_typing_any(array_type):
                array_type = None
        if not isinstance(spec_text, str):
            raise TypeError(
                f"{cls._kt_base_name}[...] takes a shape spec string such as "
                f"{cls._kt_base_name}['b n'], got {spec_text!r}"
            )
        spec = parse_spec(spec_text)
        sub = _make(
            cls._kt_base_name, cls._kt_family, spec, cls._kt_kind, array_type, cls._kt_scalar_types, cls
        )
        _remember(cls._kt_subscripts, item, sub)
        return sub

    def __or__(cls, other: Any) -> Any:
        if (
            isinstance(other, ArrayMeta)
            and cls._kt_spec is None
            and other._kt_spec is None
            and cls._kt_kind == other._kt_kind == _ARRAY
            and cls._kt_array_type is None
            and other._kt_array_type is None
        ):
            return _union_family(cls, other)
        return type.__or__(cls, other)

    def __instancecheck__(cls, value: Any) -> bool:
        cands, scope = current_candidates()
        return bool(cls._kt_check(value, cands, scope))

    def __repr__(cls) -> str:
        if cls._kt_spec is None:
            return cls._kt_base_name
        if cls._kt_array_type is not None:
            return f"{cls._kt_base_name}[{_type_name(cls._kt_array_type)}, {cls._kt_spec.source!r}]"
        return f"{cls._kt_base_name}[{cls._kt_spec.source!r}]"


def _is_typing_any(tp: Any) -> bool:
    typing = sys.modules.get("typing")
    return typing is not None and tp is typing.Any


def _type_name(tp: Any) -> str:
    module = getattr(tp, "__module__", "")
    name = getattr(tp, "__qualname__", None) or repr(tp)
    if module == "numpy":
        return "np." + name
    if module in ("builtins", ""):
        return name
    return f"{module.split('.')[0]}.{name}"


_UNION_CACHE: dict[tuple[str, str], ArrayMeta] = {}


def _union_family(a: ArrayMeta, b: ArrayMeta) -> ArrayMeta:
    key = (a._kt_base_name, b._kt_base_name)
    try:
        return _UNION_CACHE[key]
    except KeyError:
        pass
    family = a._kt_family | b._kt_family
    out = _make(f"({a._kt_base_name} | {b._kt_base_name})", family, None, _ARRAY, None, (), None)
    _UNION_CACHE[key] = out
    return out


def _make(
    name: str,
    family: _dtypes.DtypeFamily,
    spec: Spec | None,
    kind: str,
    array_type: Any,
    scalar_types: tuple[type, ...],
    parent: ArrayMeta | None,
) -> ArrayMeta:
    bases = (parent,) if parent is not None else ()
    cls = ArrayMeta.__new__(
        ArrayMeta,
        name if spec is None else f"{name}[{spec.source!r}]",
        bases,
        {
            "__module__": "ktyping",
            "__slots__": (),
            "_kt_family": family,
            "_kt_spec": spec,
            "_kt_kind": kind,
            "_kt_array_type": array_type,
            "_kt_scalar_types": scalar_types,
            "_kt_base_name": name,
            "_kt_subscripts": {},
        },
    )
    cls._kt_check = staticmethod(_compile_check(family, spec, kind, array_type, scalar_types))  # type: ignore[assignment]
    return cls


def _compile_check(
    family: _dtypes.DtypeFamily,
    spec: Spec | None,
    kind: str,
    array_type: Any,
    scalar_types: tuple[type, ...],
) -> Check:
    """Builds the per-annotation check closure; the common case is kept branch-free."""
    cache = family._cache
    accepts = family.accepts
    match = spec.matcher if spec is not None else None

    if kind == _ARRAY and array_type is None:
        if match is None:

            def check_any_shape(value: Any, cands: list, scope: Any) -> list:
                try:
                    dtype = value.dtype
                    value.shape  # noqa: B018 - duck-typing probe
                except AttributeError:
                    return _NO
                try:
                    ok = cache[dtype]
                except (KeyError, TypeError):
                    ok = accepts(dtype)
                return cands if ok else _NO

            return check_any_shape

        if spec is not None and spec.straight_line:
            return generate_function(
                spec,
                "check_array(value, cands, scope)",
                (
                    "    try:",
                    "        dtype = value.dtype",
                    "        shape = value.shape",
                    "    except AttributeError:",
                    "        return _NO",
                    "    try:",
                    "        ok = cache[dtype]",
                    "    except (KeyError, TypeError):",
                    "        ok = accepts(dtype)",
                    "    if not ok:",
                    "        return _NO",
                ),
                {"cache": cache, "accepts": accepts},
            )

        def check_array(value: Any, cands: list, scope: Any) -> list:
            try:
                dtype = value.dtype
                shape = value.shape
            except AttributeError:
                return _NO
            try:
                ok = cache[dtype]
            except (KeyError, TypeError):
                ok = accepts(dtype)
            if not ok:
                return _NO
            return match(shape, cands, scope)

        return check_array

    def check_general(value: Any, cands: list, scope: Any) -> list:
        if kind == _SHAPE:
            if not isinstance(value, (tuple, list)):
                return _NO
            return cands if match is None else match(tuple(value), cands, scope)
        if kind == _SCALAR and type(value) in scalar_types:
            return cands
        if array_type is not None and not isinstance(value, array_type):
            return _NO
        try:
            dtype = value.dtype
            shape = value.shape
        except AttributeError:
            return _NO
        if not accepts(dtype):
            return _NO
        if kind == _SCALAR:
            return cands if len(shape) == 0 else _NO
        if kind == _KEY:
            if _dtypes.dtype_name(dtype) == "uint32":  # a raw key: uint32 with a last axis of 2
                if not shape or shape[-1] != 2:
                    return _NO
                shape = tuple(shape)[:-1]
            if match is None:  # `PRNGKey` alone is one key
                return cands if len(shape) == 0 else _NO
        if match is None:
            return cands
        return match(shape, cands, scope)

    return check_general


def is_ktyping_annotation(tp: Any) -> bool:
    return isinstance(tp, ArrayMeta)


def array_type(
    name: str, family: _dtypes.DtypeFamily, kind: str = _ARRAY, scalar_types: tuple[type, ...] = ()
) -> Any:
    """Creates a new unsubscripted annotation such as `Float`."""
    return _make(name, family, None, kind, None, scalar_types, None)


# ----------------------------------------------------------------------------- Shape

Shape = _make("Shape", _dtypes.ANY, None, _SHAPE, None, (), None)
Shape.__doc__ = "`Shape['*b n']`: a tuple of ints matching the spec, e.g. `x.shape`."


_MAX_SUBSCRIPTS = 1024


def _remember(cache: dict[Any, Any], key: Any, annotation: Any) -> None:
    """Caches a subscripted annotation; bounded, since specs may be built with f-strings."""
    if len(cache) < _MAX_SUBSCRIPTS:
        try:
            cache[key] = annotation
        except TypeError:  # An unhashable subscript is rebuilt on each use.
            pass
