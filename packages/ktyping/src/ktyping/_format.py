"""Printing values, annotations and dim assignments for error messages.

>>> compact(np.zeros((2, 3), np.float32))
'np.f32[2 3]'
>>> describe(Float["b n"] | None)
"Float['b n'] | None"
"""

from __future__ import annotations

from . import _dtypes
from ._array_types import ArrayMeta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["compact", "describe", "explain", "format_candidates"]

_LIBS = {"numpy": "np", "jax": "jax", "jaxlib": "jax", "torch": "torch", "tensorflow": "tf"}


def compact(value: Any, depth: int = 0) -> str:
    """A short rendering of a value: `np.f32[2 3]`, `jax.i32[4](traced)`, `3`, `'abc'`,
    `(np.f32[2], 3)`; containers show their first few items."""
    try:
        shape = value.shape
        dtype = value.dtype
    except AttributeError:
        if type(value) in (tuple, list, dict) and depth < 2:
            return _compact_container(value, depth)
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    cls = type(value)
    lib = _LIBS.get(cls.__module__.split(".")[0], cls.__name__)
    dims = " ".join(str(d) for d in shape) if isinstance(shape, (tuple, list)) else str(shape)
    text = f"{lib}.{_dtypes.short_dtype_name(_dtypes.dtype_name(dtype))}[{dims}]"
    if "Tracer" in cls.__name__:
        text += "(traced)"
    return text


def _compact_container(value: Any, depth: int) -> str:
    items = list(value.items()) if isinstance(value, dict) else list(value)
    shown = items[:4]
    if isinstance(value, dict):
        parts = [f"{k!r}: {compact(v, depth + 1)}" for k, v in shown]
    else:
        parts = [compact(v, depth + 1) for v in shown]
    if len(items) > len(shown):
        parts.append(f"... {len(items) - len(shown)} more")
    body = ", ".join(parts)
    if isinstance(value, dict):
        return "{" + body + "}"
    if isinstance(value, list):
        return "[" + body + "]"
    return "(" + body + ("," if len(items) == 1 else "") + ")"


def describe(tp: Any) -> str:
    """Annotation as written in source: `Float['b n'] | None`, `list[int]`, `MyClass`."""
    if isinstance(tp, ArrayMeta):
        return repr(tp)
    if tp is None or tp is type(None):
        return "None"
    if isinstance(tp, str):
        return tp
    import types
    import typing

    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(describe(a) for a in typing.get_args(tp))
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        return f"Annotated[{', '.join(describe(a) for a in args)}]"
    args = typing.get_args(tp)
    if isinstance(tp, type) and not args:
        return tp.__qualname__
    if origin is not None and args:
        name = getattr(origin, "__qualname__", None) or repr(origin)
        if origin is typing.Literal:
            return f"Literal[{', '.join(map(repr, args))}]"
        return f"{name}[{', '.join('...' if a is Ellipsis else describe(a) for a in args)}]"
    text = repr(tp)
    return text[7:] if text.startswith("typing.") else text


def format_candidates(cands: list[dict[str, Any]]) -> str:
    """`{b: 2, *batch: (4, 5)}` per candidate, one per line when there are several."""
    from ._spec import PENDING

    def one(a: dict[str, Any]) -> str:
        items = [f"{k}: {v}" for k, v in a.items() if k != PENDING]
        for expr, v, _ in a.get(PENDING, ()):
            items.append(f"{expr} = {v} (unresolved)")
        return "{" + ", ".join(items) + "}"

    return "\n".join(" - " + one(a) for a in cands)


def explain(tp: Any, value: Any, cands: list[dict[str, Any]], scope: Any) -> str:
    """Why `value` fails `tp`, as the tail of a sentence starting with the value."""
    if isinstance(tp, ArrayMeta):
        return _explain_array(tp, value, cands, scope)
    import types
    import typing

    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(tp) if value is None or a not in (None, type(None))]
        if len(members) == 1:  # `X | None` with a value that is not None: explain X
            return explain(members[0], value, cands, scope)
        reasons = [f"\n    {describe(a)}: {explain(a, value, cands, scope)}" for a in members]
        return "matches no member of the union:" + "".join(reasons)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        for m in meta:
            if isinstance(m, ArrayMeta):
                return explain(m, value, cands, scope)
        return explain(base, value, cands, scope)
    if tp is None or tp is type(None):
        return "is not None"
    args = typing.get_args(tp)
    if origin in (tuple, list, dict) and args and isinstance(value, origin):
        reason = _explain_items(origin, args, value, cands, scope)
        if reason:
            return reason
    if typing.is_typeddict(tp):
        return _explain_typeddict(tp, value)
    if isinstance(tp, type) and getattr(tp, "__ktyping_dataclass__", None) and isinstance(value, tp):
        from ._decorator import check_dataclass_fields
        from ._errors import KTypeCheckError

        try:
            check_dataclass_fields(value)
        except KTypeCheckError as e:
            return "has " + str(e).splitlines()[0] + " (checked in a scope of its own)"
    if isinstance(tp, type):
        return f"is a {type(value).__qualname__}, not a {describe(tp)}"
    return f"does not match {describe(tp)}"


def _explain_items(origin: Any, args: tuple, value: Any, cands: list[dict[str, Any]], scope: Any) -> str:
    """The first item of a tuple / list / dict that fails, with the dims threaded so far."""
    from ._checkers import compile_annotation

    if origin is dict:
        pairs = [(f"value at key {k!r}", v, args[1]) for k, v in value.items()]
    elif origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        if len(value) != len(args):
            return f"has {len(value)} items, {len(args)} expected"
        pairs = [(f"item {i}", v, a) for i, (v, a) in enumerate(zip(value, args))]
    else:
        pairs = [(f"item {i}", v, args[0]) for i, v in enumerate(value)]
    for label, item, hint in pairs:
        new = compile_annotation(hint)(item, cands, scope)
        if not new:
            return f"has {label} = {compact(item)} that {explain(hint, item, cands, scope)}"
        cands = new
    return ""


def _explain_typeddict(tp: Any, value: Any) -> str:
    import typing

    from ._checkers import compile_annotation

    if not isinstance(value, dict):
        return f"is a {type(value).__qualname__}, not a dict ({describe(tp)})"
    missing = sorted(set(getattr(tp, "__required_keys__", ())) - value.keys())
    if missing:
        return f"is missing the key(s) {', '.join(map(repr, missing))} of {describe(tp)}"
    cands: list[dict[str, Any]] = [{}]
    for key, hint in typing.get_type_hints(tp, include_extras=True).items():
        if key not in value:
            continue
        new = compile_annotation(hint)(value[key], cands, None)
        if not new:
            reason = explain(hint, value[key], cands, None)
            return (
                f"has key {key!r} = {compact(value[key])} that {reason} (required by {describe(hint)}; "
                f"checked in a scope of its own: {format_candidates(cands).strip(' -')})"
            )
        cands = new
    return f"does not match {describe(tp)}"


def _explain_array(tp: ArrayMeta, value: Any, cands: list[dict[str, Any]], scope: Any) -> str:
    kind = tp._kt_kind
    spec = tp._kt_spec
    if kind == "shape":
        if not isinstance(value, (tuple, list)):
            return f"is a {type(value).__qualname__}, not a shape tuple"
        return _explain_shape(tuple(value), spec, cands, scope, "is the shape")
    if kind == "scalar" and type(value) in tp._kt_scalar_types:
        return "should match"  # unreachable in practice
    if tp._kt_array_type is not None and not isinstance(value, tp._kt_array_type):
        return f"is a {type(value).__qualname__}, not a {describe(tp._kt_array_type)}"
    try:
        shape = value.shape
        dtype = value.dtype
    except AttributeError:
        return f"is a {type(value).__qualname__}, not an array (no .shape and .dtype)"
    name = _dtypes.dtype_name(dtype)
    if not tp._kt_family.accepts(dtype):
        return f"has dtype {name}, but {tp._kt_base_name} needs one of: {tp._kt_family.describe()}"
    if kind == "scalar":
        return f"has shape {tuple(shape)}, but a scalar needs shape ()"
    return _explain_shape(tuple(shape), spec, cands, scope, "has shape")


def _explain_shape(
    shape: tuple[Any, ...], spec: Any, cands: list[dict[str, Any]], scope: Any, verb: str
) -> str:
    if spec is None:
        return f"{verb} {shape}"
    text = f"{verb} {shape}, which does not match {spec.source!r}"
    if spec.simple:
        if len(shape) != spec.ndim:
            return f"{text}: {len(shape)} axes given, {spec.ndim} expected"
        for i, c in spec.fixed:
            if shape[i] != c:
                return f"{text}: axis {i} has size {shape[i]}, expected {c}"
        if len(cands) == 1:
            a = cands[0]
            for i, name in spec.named:
                if name in a and a[name] != shape[i]:
                    return f"{text}: axis {i} has size {shape[i]}, but {name} = {a[name]}"
    if len(cands) > 1:
        return f"{text} under any of the {len(cands)} candidate assignments"
    if not spec.simple and cands:
        try:
            expected = spec.evaluate(cands[0], scope)
        except Exception:  # a {...} value that cannot be evaluated: no detail
            expected = None
        if expected is not None:
            return f"{text}: the dims in force give {expected}"
    return text
