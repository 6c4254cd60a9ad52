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
from ._dims import from_public, to_public
from ._errors import NotInstantiableError
from ._scope import current_candidates
from ._spec_cache import parse_spec
from ._spec_tree import UnknownDim, is_symbolic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._spec import Spec

    # A compiled check: (value, candidate assignments, scope) -> the candidates it leaves.
    Check = Callable[[Any, list[dict[str, Any]], Any], list[dict[str, Any]]]

__all__ = [
    "ArrayMeta",
    "ArraySpec",
    "Shape",
    "UnknownDim",
    "array_type",
    "is_array_type",
    "is_ktyping_annotation",
]

_NO: list = []

# Kinds of annotation.
_ARRAY = "array"
_SCALAR = "scalar"
_KEY = "key"  # one PRNG key (or, with a spec, keys of that batch shape)
_KEYS = "keys"  # PRNG keys of any batch shape
_SHAPE = "shape"
_SPECLIKE = "spec"  # has .shape and .dtype but is not an array: jax.ShapeDtypeStruct, tf.TensorSpec


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
            raise TypeError(
                f"cannot redefine shape spec of {cls!r} with {item!r}: write {cls._kt_base_name}[...] once"
            )
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
                f"{cls._kt_base_name}[...] expects a string shape spec such as "
                f"{cls._kt_base_name}['b n'], got {type(spec_text).__name__} {spec_text!r}"
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

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        shown = ", ".join(map(repr, args))
        also = " (or ktyping.shape(...) for the shape a spec describes)" if cls._kt_kind == _SHAPE else ""
        raise NotInstantiableError(
            f"{cls!r} cannot be instantiated: it is an annotation; did you mean {cls._kt_base_name}[{shown}]{also}?"
        )

    # -- parts of the check, one at a time (Kauldron's API; not used by the checks themselves) --

    @property
    def shape_spec(cls) -> str | None:
        """The spec as written (`"b n"`), or None when there is none."""
        return None if cls._kt_spec is None else cls._kt_spec.source

    def array_types_match(cls, value: Any) -> bool:
        """Whether `value` is the kind of object this annotation takes, whatever its dtype and shape."""
        kind = cls._kt_kind
        if kind == _SHAPE:
            return isinstance(value, (tuple, list))
        if kind == _SCALAR and type(value) in cls._kt_scalar_types:
            return True
        if cls._kt_array_type is not None and not isinstance(value, cls._kt_array_type):
            return False
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            return False
        return not _is_array(value) if kind == _SPECLIKE else True

    def dtype_matches(cls, value: Any) -> bool:
        """Whether `value`'s dtype is one this annotation accepts (`Float.dtype_matches(x)`)."""
        try:
            dtype = value.dtype
        except AttributeError:  # a Python number has the dtype of its type; a shape has none to check
            if cls._kt_kind == _SHAPE:
                return True
            return cls._kt_kind == _SCALAR and type(value) in cls._kt_scalar_types
        return bool(cls._kt_family.accepts(dtype))

    def shape_matches(cls, value: Any, candidates: Any = None) -> list[dict[str, Any]]:
        """The candidates (Kauldron's form, `{"b": (2,)}`) under which `value`'s shape matches the spec;
        empty when none does. `candidates` defaults to one empty assignment."""
        cands = [{}] if candidates is None else [from_public(a) for a in candidates]
        if cls._kt_spec is None:
            return [to_public(a) for a in cands]
        if cls._kt_kind == _SHAPE:
            shape = value
        else:
            try:
                shape = value.shape
            except AttributeError:
                scalar = cls._kt_kind == _SCALAR and type(value) in cls._kt_scalar_types
                return [to_public(a) for a in cands] if scalar and cls._kt_spec.ndim == 0 else []
        return [to_public(a) for a in cls._kt_spec.match(_with_unknowns(tuple(shape)), cands, None)]

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
    if kind == _ARRAY and array_type is None:
        return _array_check(family, spec)
    return _general_check(family, spec, kind, array_type, scalar_types)


def _array_check(family: _dtypes.DtypeFamily, spec: Spec | None) -> Check:
    """The check of a duck-typed array annotation (`Float["b n"]`): a dtype of the family, then the shape."""
    cache = family._cache
    accepts = family.accepts
    match = spec.matcher if spec is not None else None
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
        return spec.generate(
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


def _general_check(
    family: _dtypes.DtypeFamily,
    spec: Spec | None,
    kind: str,
    array_type: Any,
    scalar_types: tuple[type, ...],
) -> Check:
    """The check of any other annotation: a `Shape`, a spec-like, a scalar, a key, an array of a set type."""
    accepts = family.accepts
    match = spec.matcher if spec is not None else None

    def check_general(value: Any, cands: list, scope: Any) -> list:
        if kind == _SHAPE:
            if not isinstance(value, (tuple, list)):
                return _NO
            for d in value:
                if type(d) is not int and not is_size(d):
                    return _NO
            return cands if match is None else match(tuple(value), cands, scope)
        if kind == _SPECLIKE:
            try:
                dtype = value.dtype
                shape = value.shape
            except AttributeError:
                return _NO
            if _is_array(value) or not accepts(dtype):
                return _NO
            return cands if match is None else match(_with_unknowns(tuple(shape)), cands, scope)
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
        if kind == _KEY or kind == _KEYS:
            if _dtypes.dtype_name(dtype) == "uint32":  # a raw key: uint32 with a last axis of 2
                if not shape or shape[-1] != 2:
                    return _NO
                shape = tuple(shape)[:-1]
            if match is None:  # `PRNGKey` alone is one key, `PRNGKeyArray` any number
                return cands if kind == _KEYS or len(shape) == 0 else _NO
        if match is None:
            return cands
        return match(shape, cands, scope)

    return check_general


def is_ktyping_annotation(tp: Any) -> bool:
    return isinstance(tp, ArrayMeta)


def is_array_type(tp: Any) -> bool:
    """Whether `tp` is an array annotation (`Float`, `Int32["b n"]`, `ArraySpec`); `Shape` is not one.

    ktyping.is_array_type(ktyping.Float["b"])  # True
    """
    return isinstance(tp, ArrayMeta) and tp._kt_kind != _SHAPE


def is_size(d: Any) -> bool:
    """Whether `d` can be an axis size in a `Shape`: an int (numpy ints too) or a jax symbolic dim."""
    t = type(d)
    if t is int:
        return True
    if t is float or t is str or d is None:
        return False
    return hasattr(t, "__index__") or is_symbolic(d)


def _is_array(value: Any) -> bool:
    """Whether `value` is a numpy, jax, torch or tensorflow array (each checked only if already imported)."""
    modules = sys.modules
    for module, names in (("numpy", ("ndarray", "generic")), ("jax", ("Array",)), ("torch", ("Tensor",))):
        lib = modules.get(module)
        if lib is not None:
            classes = tuple(c for c in (getattr(lib, n, None) for n in names) if isinstance(c, type))
            if classes and isinstance(value, classes):
                return True
    tf = modules.get("tensorflow")
    tensor = getattr(tf, "Tensor", None) if tf is not None else None
    return isinstance(tensor, type) and isinstance(value, tensor)


def _with_unknowns(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """`shape` with each axis of unknown size (None) or symbolic size (`jax.export`) made an `UnknownDim`;
    ints (numpy's too) and `UnknownDim`s are kept."""
    for d in shape:
        if type(d) is not int:
            return tuple(d if _is_size_or_unknown(d) else UnknownDim(d) for d in shape)
    return shape


def _is_size_or_unknown(d: Any) -> bool:
    t = type(d)
    return t is int or t is UnknownDim or hasattr(t, "__index__")


def array_type(
    name: str, family: _dtypes.DtypeFamily, kind: str = _ARRAY, scalar_types: tuple[type, ...] = ()
) -> Any:
    """Creates a new unsubscripted annotation such as `Float`."""
    return _make(name, family, None, kind, None, scalar_types, None)


# ----------------------------------------------------------------------------- Shape

Shape = _make("Shape", _dtypes.ANY, None, _SHAPE, None, (), None)
Shape.__doc__ = (
    "`Shape['*b n']`: a tuple or list of ints (or jax symbolic dims) matching the spec, e.g. `x.shape`."
)

ArraySpec = _make("ArraySpec", _dtypes.ANY, None, _SPECLIKE, None, (), None)
ArraySpec.__doc__ = (
    "`ArraySpec['b n']`: an object with `.shape` and `.dtype` that is not an array (jax.ShapeDtypeStruct, "
    "tf.TensorSpec); axes of unknown (None) or symbolic size match any dim."
)


_MAX_SUBSCRIPTS = 1024


def _remember(cache: dict[Any, Any], key: Any, annotation: Any) -> None:
    """Caches a subscripted annotation; bounded, since specs may be built with f-strings."""
    if len(cache) < _MAX_SUBSCRIPTS:
        try:
            cache[key] = annotation
        except TypeError:  # An unhashable subscript is rebuilt on each use.
            pass
