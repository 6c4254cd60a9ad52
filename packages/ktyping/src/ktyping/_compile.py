"""Compiling any annotation into a check `(value, candidates, scope) -> candidates`.

    >>> from ktyping import Shape
    >>> check = compile_annotation(Shape["b n"] | None)
    >>> check((2, 3), [{}], None)
    [{'b': 2, 'n': 3}]

An empty result means the value does not match. Array annotations bind dims; unions keep
the candidates of every member that matches; containers thread the candidates through
their elements; decorated dataclasses and TypedDicts are checked in a scope of their own.

Two kinds of annotation live here because their checks recurse into this compiler:
`PyTree[T]` (each leaf is checked against `T`) and decorated dataclasses (each field is
checked against its annotation, by the dataclass's plan; `@typechecked` wraps `__init__` in
`_dataclasses`). A failing dataclass field is explained by `_explain`, which sits above this
module and reruns its checks: that late import in `_DataclassPlan.fail` is the package's one
back-edge, taken on the error path only.
"""

from __future__ import annotations

import sys

from ._array_types import ArrayMeta, _remember
from ._config import VERSION, enabled_for
from ._errors import KTypeCheckError
from ._scope import Scope, current_candidates
from ._spec import _dedup

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    Check = Callable[[Any, list[dict[str, Any]], Any], list[dict[str, Any]]]

__all__ = [
    "PyTree",
    "check_dataclass_fields",
    "compile_annotation",
    "is_trivial",
    "resolve_hints",
    "tree_leaves",
]

_NO: list = []
_CACHE: dict[Any, Check] = {}


def _accept(value: Any, cands: list, scope: Any) -> list:
    return cands


def is_trivial(check: Check) -> bool:
    """Whether a compiled check accepts everything (so callers can skip it)."""
    return check is _accept


def compile_annotation(tp: Any) -> Check:
    """The (cached) check for annotation `tp`."""
    try:
        return _CACHE[tp]
    except (KeyError, TypeError):
        pass
    check = _compile(tp)
    if len(_CACHE) >= 4096:  # bounded: annotations may be built with f-string specs
        _CACHE.clear()
    try:
        _CACHE[tp] = check
    except TypeError:
        pass
    return check


def _compile(tp: Any) -> Check:
    if isinstance(tp, ArrayMeta):
        return tp._kt_check
    if tp is None or tp is type(None):
        return lambda v, c, s: c if v is None else _NO
    if isinstance(tp, str):
        return _accept  # unresolved forward reference
    if isinstance(tp, type) and issubclass(tp, PyTree):
        leaf = getattr(tp, "_kt_leaf", None)
        return _pytree_check(_accept if leaf is None else compile_annotation(leaf))

    import types
    import typing

    if tp is typing.Any or tp is object or isinstance(tp, typing.TypeVar):
        return _accept
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        accepts_none = type(None) in args
        return _union_check(tuple(compile_annotation(a) for a in args if a is not type(None)), accepts_none)
    if origin is typing.Annotated:
        checks = [compile_annotation(args[0])]
        checks += [compile_annotation(m) for m in args[1:] if isinstance(m, (ArrayMeta, type(PyTree)))]
        return _all_check(tuple(c for c in checks if c is not _accept))
    if origin is typing.Literal:
        return _literal_check(args)
    # Qualifiers around the annotation to check (typing.ReadOnly exists from Python 3.13).
    qualifiers = (typing.ClassVar, typing.Final, typing.Required, typing.NotRequired)
    if origin in qualifiers or origin is getattr(typing, "ReadOnly", typing.Final):
        return compile_annotation(args[0]) if args else _accept
    if typing.is_typeddict(tp):
        return _typeddict_check(tp)
    if isinstance(tp, type):
        return _class_check(tp)
    if origin is not None:
        return _generic_check(origin, args)
    if isinstance(tp, typing.NewType):
        return compile_annotation(tp.__supertype__)
    return _accept


def _union_check(checks: tuple[Check, ...], accepts_none: bool) -> Check:
    """Keeps the candidates of every member that matches (not just the first)."""
    if _accept in checks:
        return _accept

    def check_union(value: Any, cands: list, scope: Any) -> list:
        if value is None and accepts_none:
            return cands  # None binds no dims, whatever else the union allows
        out: list = []
        for check in checks:
            got = check(value, cands, scope)
            if got:
                if not out:
                    out = got
                elif got is not out:
                    out = out + got
        if len(out) > 1 and out is not cands:
            out = _dedup(out)
        return out

    return check_union


def _literal_check(values: tuple[Any, ...]) -> Check:
    def check_literal(value: Any, cands: list, scope: Any) -> list:
        try:
            return (
                cands if any(value is v or (type(value) is type(v) and value == v) for v in values) else _NO
            )
        except (TypeError, ValueError):  # e.g. an array compared elementwise
            return _NO

    return check_literal


def _all_check(checks: tuple[Check, ...]) -> Check:
    if not checks:
        return _accept
    if len(checks) == 1:
        return checks[0]

    def check_all(value: Any, cands: list, scope: Any) -> list:
        for check in checks:
            cands = check(value, cands, scope)
            if not cands:
                return _NO
        return cands

    return check_all


_NUMERIC_TOWER: dict[type, tuple[type, ...]] = {float: (float, int), complex: (complex, float, int)}


def _class_check(cls: type) -> Check:
    if getattr(cls, "_is_protocol", False) and not getattr(cls, "_is_runtime_protocol", False):
        return _accept  # isinstance() is not defined for a plain Protocol
    accepted = _NUMERIC_TOWER.get(cls, cls)
    if getattr(cls, "__ktyping_dataclass__", None) is cls:

        def check_dataclass(value: Any, cands: list, scope: Any) -> list:
            if not isinstance(value, cls):
                return _NO
            return cands if check_dataclass_fields(value, raise_error=False) else _NO

        return check_dataclass
    if cls is bool or cls is int:

        def check_exact_number(value: Any, cands: list, scope: Any) -> list:
            return cands if isinstance(value, cls) else _NO

        return check_exact_number

    def check_instance(value: Any, cands: list, scope: Any) -> list:
        return cands if isinstance(value, accepted) else _NO

    return check_instance


def _generic_check(origin: Any, args: tuple[Any, ...]) -> Check:
    import collections.abc as cabc

    if origin is type:
        return lambda v, c, s: c if isinstance(v, type) else _NO
    if origin is cabc.Callable:
        return lambda v, c, s: c if callable(v) else _NO
    if not isinstance(origin, type):
        return _accept
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        if args == ((),):
            args = ()
        item_checks = tuple(compile_annotation(a) for a in args)

        def check_fixed_tuple(value: Any, cands: list, scope: Any) -> list:
            if not isinstance(value, tuple) or len(value) != len(item_checks):
                return _NO
            for item, check in zip(value, item_checks):
                cands = check(item, cands, scope)
                if not cands:
                    return _NO
            return cands

        return check_fixed_tuple
    if issubclass(origin, cabc.Mapping) and len(args) == 2:
        key_check, value_check = compile_annotation(args[0]), compile_annotation(args[1])

        def check_mapping(value: Any, cands: list, scope: Any) -> list:
            if not isinstance(value, origin):
                return _NO
            for k, v in value.items():
                cands = key_check(k, cands, scope)
                if cands:
                    cands = value_check(v, cands, scope)
                if not cands:
                    return _NO
            return cands

        return check_mapping
    if issubclass(origin, (cabc.Collection)) and args and not issubclass(origin, (str, bytes)):
        item_check = compile_annotation(args[0])

        def check_collection(value: Any, cands: list, scope: Any) -> list:
            if not isinstance(value, origin):
                return _NO
            if item_check is _accept:
                return cands
            for item in value:
                cands = item_check(item, cands, scope)
                if not cands:
                    return _NO
            return cands

        return check_collection
    return lambda v, c, s: c if isinstance(v, origin) else _NO


def _pytree_check(leaf_check: Check) -> Check:
    def check_pytree(value: Any, cands: list, scope: Any) -> list:
        if leaf_check is _accept:
            return cands
        for leaf in tree_leaves(value):
            cands = leaf_check(leaf, cands, scope)
            if not cands:
                return _NO
        return cands

    return check_pytree


def _typeddict_check(tp: Any) -> Check:
    """Each TypedDict value gets its own scope: its dims are independent of the caller's."""
    import typing

    hints = typing.get_type_hints(tp, include_extras=True)
    required = getattr(tp, "__required_keys__", frozenset(hints))
    item_checks = {k: compile_annotation(h) for k, h in hints.items()}

    def check_typeddict(value: Any, cands: list, scope: Any) -> list:
        if not isinstance(value, dict):
            return _NO
        if not required <= value.keys():
            return _NO
        own = Scope()
        own.arguments = value
        inner: list = [{}]
        for key, check in item_checks.items():
            if key in value:
                inner = check(value[key], inner, own)
                if not inner:
                    return _NO
        return cands

    return check_typeddict


def resolve_hints(obj: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """Type hints of a function or class with `Annotated` kept and strings resolved.

    `localns` adds the names of the enclosing function. Names that cannot be resolved
    are left as strings (and not checked).
    """
    import typing

    try:
        return typing.get_type_hints(obj, localns=localns, include_extras=True)
    except Exception:  # resolve one by one below, keeping what cannot be resolved
        pass
    raw: dict[str, Any] = {}
    for klass in reversed(obj.__mro__) if isinstance(obj, type) else (obj,):
        raw.update(getattr(klass, "__annotations__", {}) or {})
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    globalns = dict(getattr(obj, "__globals__", None) or (vars(module) if module else {}))
    out = {}
    for name, hint in raw.items():
        if isinstance(hint, str):
            try:
                hint = eval(hint, globalns, localns)
            except Exception:  # an unresolvable name: left unchecked
                pass
        out[name] = hint
    return out


# ----------------------------------------------------------------------------- PyTree


class _PyTreeMeta(type):
    _kt_leaf: Any
    _kt_check: Check
    _kt_subscripts: dict[Any, Any]

    def __getitem__(cls, leaf: Any) -> Any:
        try:
            return cls._kt_subscripts[leaf]
        except (KeyError, TypeError):
            pass
        sub = _PyTreeMeta.__new__(
            _PyTreeMeta, f"PyTree[{leaf!r}]", (cls,), {"__module__": "ktyping", "_kt_leaf": leaf}
        )
        _remember(cls._kt_subscripts, leaf, sub)
        return sub

    def __instancecheck__(cls, value: Any) -> bool:
        cands, scope = current_candidates()
        return bool(compile_annotation(cls)(value, cands, scope))

    def __repr__(cls) -> str:
        from ._describe import describe

        leaf = getattr(cls, "_kt_leaf", None)
        return "PyTree" if leaf is None else f"PyTree[{describe(leaf)}]"


class PyTree(metaclass=_PyTreeMeta):
    """`PyTree[T]`: a nested list/tuple/dict (or any jax pytree) whose every leaf is a `T`.

    Dims are shared across leaves: `PyTree[Float["b"]]` needs every leaf to have the same `b`.
    """

    _kt_leaf: Any = None
    _kt_subscripts: ClassVar[dict[Any, Any]] = {}


def tree_leaves(value: Any) -> list[Any]:
    """Leaves of a pytree: jax's flattening when jax is already imported, else builtins."""
    if "jax" in sys.modules:
        import jax

        return jax.tree_util.tree_leaves(value)
    out: list[Any] = []
    _flatten(value, out)
    return out


def _flatten(value: Any, out: list[Any]) -> None:
    if value is None:
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, dict):
        for k in sorted(value, key=repr):
            _flatten(value[k], out)
    else:
        out.append(value)


# ----------------------------------------------------------------------------- decorated dataclasses
# `@typechecked` marks the class (`__ktyping_dataclass__`) and wraps its `__init__` (`_dataclasses`);
# its plan is built on the first check.

_EMPTY: Any = object()


class _DataclassPlan:
    __slots__ = ("cls", "enabled", "fields", "globals", "hints", "version")

    def __init__(self, cls: type) -> None:
        import dataclasses

        self.cls = cls
        self.globals = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
        self.hints = resolve_hints(cls, getattr(cls, "__ktyping_localns__", None))
        fields = []
        for f in dataclasses.fields(cls):
            hint = self.hints.get(f.name, _EMPTY)
            if hint is _EMPTY:
                continue
            check = compile_annotation(hint)
            if not is_trivial(check):
                fields.append((f.name, check, hint))
        self.fields = tuple(fields)
        self.version = -1
        self.enabled = True

    def origin(self) -> str:
        import inspect

        try:
            where = f"{inspect.getsourcefile(self.cls)}:{inspect.getsourcelines(self.cls)[1]}"
        except (OSError, TypeError):
            where = getattr(sys.modules.get(self.cls.__module__), "__file__", "<unknown>")
        return f"dataclass {self.cls.__qualname__!r} at {where}"

    def fail(
        self, obj: Any, failing: str, value: Any, annotation: Any, cands: list, scope: Scope
    ) -> KTypeCheckError:
        """The error for field `failing` of `obj`, to be raised."""
        from ._describe import describe
        from ._explain import explain  # late import: _explain reruns these checks, so it sits above them
        from ._format import compact, format_candidates

        lines = [
            f"field {failing} = {compact(value)} {explain(annotation, value, cands, scope)}",
            f"  (required by {describe(annotation)})",
            "",
            f"Origin: {self.origin()}",
            "",
            "Fields:",
        ]
        for name, _, hint in self.fields:
            marker = ">" if name == failing else " "
            lines.append(f"{marker} {name}: {describe(hint)} = {compact(getattr(obj, name, '<missing>'))}")
        lines += ["", "Dim assignments:", format_candidates(cands)]
        return KTypeCheckError("\n".join(lines))


_DATACLASS_PLANS: dict[type, _DataclassPlan] = {}


def check_dataclass_fields(obj: Any, raise_error: bool = True) -> bool:
    """Checks the fields of a decorated dataclass instance in a scope of its own."""
    cls = type(obj).__ktyping_dataclass__
    plan = _DATACLASS_PLANS.get(cls)
    if plan is None:
        plan = _DATACLASS_PLANS[cls] = _DataclassPlan(cls)
    version = VERSION[0]
    if plan.version != version:
        plan.enabled = enabled_for(cls.__module__)
        plan.version = version
    if not plan.enabled:
        return True
    scope = Scope(plan)
    scope.arguments = _FieldsView(obj)
    cands = scope.cands
    for name, check, hint in plan.fields:
        value = getattr(obj, name, _EMPTY)
        if value is _EMPTY:  # an `init=False` field not set yet
            continue
        new = check(value, cands, scope)
        if not new:
            if raise_error:
                raise plan.fail(obj, name, value, hint, cands, scope)
            return False
        cands = new
    scope.cands = cands
    return True


class _FieldsView(dict):
    """Arguments for `{...}` specs in dataclass fields: `self` and every field by name."""

    def __init__(self, obj: Any) -> None:
        super().__init__(self=obj)
        self._obj = obj

    def __missing__(self, key: str) -> Any:
        try:
            return getattr(self._obj, key)
        except AttributeError:
            raise KeyError(key) from None
