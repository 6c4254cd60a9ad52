"""Compiling any annotation into a check `(value, candidates, scope) -> candidates`.

    >>> check = compile_annotation(Float["b n"] | None)
    >>> check(np.zeros((2, 3)), [{}], None)
    [{'b': 2, 'n': 3}]

An empty result means the value does not match. Array annotations bind dims; unions keep
the candidates of every member that matches; containers thread the candidates through
their elements; decorated dataclasses and TypedDicts are checked in a scope of their own.
"""

from __future__ import annotations

import sys

from ._array_types import ArrayMeta, PyTree, tree_leaves

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[Any, list[dict[str, Any]], Any], list[dict[str, Any]]]

__all__ = ["compile_annotation", "is_trivial"]

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
            from ._spec import _dedup

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
            from ._decorator import check_dataclass_fields

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
        from ._scope import Scope

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
