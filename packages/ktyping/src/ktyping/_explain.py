"""`explain`: why a value fails its annotation, as the tail of a sentence about the value.

    >>> from ktyping import Float
    >>> explain(Float["b n"], (2, 3), [{}], None)
    'is a tuple, which is not an instance of an array type (no .shape and .dtype)'
    >>> explain(int | None, "3", [{}], None)
    'is a str, which is not an instance of int'

For an array it names the axis that contradicts the dims in force (`axis 1 has size 5,
but n+1 = 4`); for containers, pytrees, TypedDicts and dataclasses the first item that
fails. It re-runs the compiled checks to find it: the error path only, loaded with the first
error message, not by `import ktyping`.
"""

from __future__ import annotations

from . import _dtypes
from ._array_types import ArrayMeta, _is_array, _with_unknowns, is_size
from ._compile import PyTree, check_dataclass_fields, compile_annotation, tree_leaves
from ._describe import describe
from ._errors import KTypeCheckError
from ._format import _text, compact, expr_text, format_candidates
from ._spec_tree import PENDING, Const, SingleDim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["explain"]


def explain(tp: Any, value: Any, cands: list[dict[str, Any]], scope: Any) -> str:
    """Why `value` fails `tp`, as the tail of a sentence starting with the value."""
    if isinstance(tp, ArrayMeta):
        return _explain_array(tp, value, cands, scope)
    if isinstance(tp, type) and issubclass(tp, PyTree) and getattr(tp, "_kt_leaf", None) is not None:
        return _explain_pytree(tp._kt_leaf, value, cands, scope)
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
        try:
            check_dataclass_fields(value)
        except KTypeCheckError as e:
            return "has " + str(e).splitlines()[0] + " (checked in a scope of its own)"
    if isinstance(tp, type):
        return f"is a {type(value).__qualname__}, which is not an instance of {describe(tp)}"
    return f"does not match {describe(tp)}"


def _explain_items(origin: Any, args: tuple, value: Any, cands: list[dict[str, Any]], scope: Any) -> str:
    """The first item of a tuple / list / dict that fails, with the dims threaded so far."""
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


def _explain_pytree(leaf_tp: Any, value: Any, cands: list[dict[str, Any]], scope: Any) -> str:
    """The first leaf that fails, with the dims threaded through the leaves before it."""
    check = compile_annotation(leaf_tp)
    for i, leaf in enumerate(tree_leaves(value)):
        new = check(leaf, cands, scope)
        if not new:
            return f"has leaf {i} = {compact(leaf)} that {explain(leaf_tp, leaf, cands, scope)}"
        cands = new
    return f"does not match PyTree[{describe(leaf_tp)}]"


def _explain_typeddict(tp: Any, value: Any) -> str:
    import typing

    if not isinstance(value, dict):
        return f"is a {type(value).__qualname__}, which is not an instance of dict ({describe(tp)})"
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
            return f"is a {type(value).__qualname__}, which is not a valid shape (a tuple or list of ints)"
        for i, d in enumerate(value):
            if not is_size(d):
                return f"is not a valid shape: item {i} is {compact(d)} (a shape holds ints)"
        return _explain_shape(tuple(value), spec, cands, scope, "is the shape")
    if kind == "scalar" and type(value) in tp._kt_scalar_types:
        return "should match"  # unreachable in practice
    if kind == "scalar" and isinstance(value, (bool, int, float, complex)):
        accepted = ", ".join(t.__name__ for t in tp._kt_scalar_types)
        return (
            f"is a {type(value).__qualname__}, which is not dtype-compatible with {tp._kt_base_name} "
            f"({accepted}, or a 0-d array of: {tp._kt_family.describe()})"
        )
    if tp._kt_array_type is not None and not isinstance(value, tp._kt_array_type):
        return f"is a {type(value).__qualname__}, which is not an instance of {describe(tp._kt_array_type)}"
    try:
        shape = value.shape
        dtype = value.dtype
    except AttributeError:
        return f"is a {type(value).__qualname__}, which is not an instance of an array type (no .shape and .dtype)"
    name = _dtypes.dtype_name(dtype)
    if not tp._kt_family.accepts(dtype):
        return (
            f"has dtype {name}, which is not dtype-compatible with {tp._kt_base_name} "
            f"(one of: {tp._kt_family.describe()})"
        )
    if kind == "spec" and _is_array(value):
        return f"is an array ({compact(value)}), but {tp._kt_base_name} takes array specs such as jax.ShapeDtypeStruct"
    if kind == "scalar":
        return f"has shape {_text(tuple(shape))}, but a scalar needs shape ()"
    if kind in ("key", "keys"):
        keys = tuple(shape)
        if name == "uint32":  # a raw key: the last axis holds the 2 words of one key
            if not keys or keys[-1] != 2:
                return f"has shape {_text(keys)}, but raw uint32 keys need a last axis of size 2"
            keys = keys[:-1]
        if spec is None and kind == "key":
            return f"holds keys of shape {_text(keys)}, but {tp._kt_base_name} is one key (shape ())"
        return _explain_shape(keys, spec, cands, scope, "holds keys of shape")
    return _explain_shape(_with_unknowns(tuple(shape)), spec, cands, scope, "has shape")


def _explain_shape(
    shape: tuple[Any, ...], spec: Any, cands: list[dict[str, Any]], scope: Any, verb: str
) -> str:
    if spec is None:
        return f"{verb} {_text(shape)}"
    text = f"{verb} {_text(shape)}, which is not shape-compatible with {spec.source!r}"
    lo, hi = spec.search.min_after[0], spec.search.max_after[0]
    if not lo <= len(shape) <= hi:
        needed = str(lo) if lo == hi else f"at least {lo}" if hi >= len(shape) else f"{lo} to {hi}"
        return f"{text}: {_axes(len(shape))} given, {needed} expected"
    if len(cands) > 1:
        return f"{text} under any of the {len(cands)} candidate assignments"
    a = cands[0] if cands else {}
    reason = _axis_mismatch(shape, spec, a, scope)
    if reason:
        expected: Any = None
        if not spec.simple:
            try:
                expected = spec.evaluate(a, scope)
            except Exception:  # a {...} value that cannot be evaluated
                expected = None
        return f"{text}: {reason}" + (
            "" if expected is None else f" (the dims in force give {_text(expected)})"
        )
    pending = a.get(PENDING, ())
    if pending:
        shown = ", ".join(f"{expr_text(e)} = {_text(v)}" for e, v in pending)
        return f"{text}: with its dims bound, the deferred constraint {shown} (from an earlier value) fails"
    return text


def _axis_mismatch(shape: tuple[Any, ...], spec: Any, a: dict[str, Any], scope: Any) -> str:
    """`axis 1 has size 5, but n+1 = 4` for the first axis that contradicts the assignment `a`.

    Empty when no axis can be blamed: an unbound variadic or an optional dim makes the
    positions of later axes uncertain.
    """
    if all(d.min_len == 1 for d in spec.dims if isinstance(d, SingleDim)):
        variadics: list[Any] = [a.get(d.key) for d in spec.dims if not isinstance(d, SingleDim)]
        if None not in variadics:
            rank = len(spec.dims) - len(variadics) + sum(len(v) for v in variadics)
            if rank != len(shape):
                return f"{_axes(len(shape))} given, {rank} expected"
    j = 0
    for d in spec.dims:
        if not isinstance(d, SingleDim):
            bound = a.get(d.key) if d.key is not None else None
            if bound is None:
                return ""
            got = tuple(shape[j : j + len(bound)])
            if not d.broadcast and got != tuple(bound):
                where = f"axis {j} is" if len(bound) == 1 else f"axes {j} to {j + len(bound) - 1} are"
                return f"{where} {_text(got)}, but {d} = {_text(tuple(bound))}"
            j += len(bound)
            continue
        if d.min_len == 0:
            return ""
        size = shape[j]
        if len(d.options) == 1:
            try:
                want = spec.evaluate_dim(d, a, scope)
            except Exception:  # a {...} value that cannot be evaluated
                want = None
            if want is not None and want != size and not (d.broadcast and size == 1):
                if isinstance(d.options[0], Const):
                    return f"axis {j} has size {_text(size)}, expected {_text(want)}"
                return f"axis {j} has size {_text(size)}, but {expr_text(d.options[0])} = {_text(want)}"
        elif d.options and not d.broadcast:
            wants = []
            for expr in d.options:
                try:
                    wants.append(expr.evaluate(a, scope))
                except Exception:
                    wants = []
                    break
            if wants and all(type(w) is int for w in wants) and size not in wants:
                return f"axis {j} has size {_text(size)}, expected one of {d}"
        j += 1
    return ""


def _axes(n: int) -> str:
    return f"{n} axis" if n == 1 else f"{n} axes"
