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
from ._config import MISSING, VERSION, enabled_for
from ._errors import KTypeCheckError, NotInstantiableError
from ._scope import Scope, current_candidates
from ._spec_tree import dedup

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._array_types import Check

__all__ = [
    "PyTree",
    "check_dataclass_fields",
    "compile_annotation",
    "is_trivial",
    "resolve_hints",
    "tree_leaves",
    "uses_array_types",
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


_USES_ARRAYS: dict[Any, bool] = {}


def uses_array_types(tp: Any) -> bool:
    """Whether annotation `tp` has an array type in it (`Float[...]`, `PyTree[Int]`, `list[Array]`);
    `Shape` does not count. `ktyping.isinstance` needs a scope for those."""
    try:
        return _USES_ARRAYS[tp]
    except (KeyError, TypeError):
        pass
    got = _uses_arrays(tp, 0)
    try:
        if len(_USES_ARRAYS) < 4096:
            _USES_ARRAYS[tp] = got
    except TypeError:
        pass
    return got


def _uses_arrays(tp: Any, depth: int) -> bool:
    if isinstance(tp, ArrayMeta):
        return tp._kt_kind != "shape"
    if depth > 50:  # a self-referencing annotation: assume it does
        return True
    if isinstance(tp, _PyTreeMeta):
        return tp._kt_leaf is not None and _uses_arrays(tp._kt_leaf, depth + 1)
    if type(tp) is tuple:
        return any(_uses_arrays(a, depth + 1) for a in tp)
    if (
        isinstance(tp, (str, int, float, bytes))
        or tp is None
        or (isinstance(tp, type) and not hasattr(tp, "__args__"))
    ):
        return False
    args = getattr(tp, "__args__", None)
    return type(args) is tuple and any(_uses_arrays(a, depth + 1) for a in args if a is not tp)


def _compile(tp: Any) -> Check:
    if isinstance(tp, ArrayMeta):
        return tp._kt_check
    if tp is None or tp is type(None):
        return lambda v, c, s: c if v is None else _NO
    if isinstance(tp, str):
        return _accept  # unresolved forward reference
    if type(tp) is tuple:  # `isinstance(x, (Float["b"], int))`: any of them
        return _union_check(tuple(compile_annotation(a) for a in tp if a is not type(None)), type(None) in tp)
    if isinstance(tp, type) and issubclass(tp, PyTree):
        leaf = getattr(tp, "_kt_leaf", None)
        return _pytree_check(
            _accept if leaf is None else compile_annotation(leaf), _leaf_class(leaf), tp._kt_structure
        )

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
            out = dedup(out)
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


def _pytree_check(leaf_check: Check, leaf_class: type | None, structure: str | None) -> Check:
    """Checks every leaf; with a structure key (`"$S"`) also binds the tree's structure or compares it."""

    def check_pytree(value: Any, cands: list, scope: Any) -> list:
        try:
            if structure is None:
                if leaf_check is _accept:
                    return cands
                leaves = tree_leaves(value, leaf_class)
            else:
                leaves, treedef = tree_flatten(value, leaf_class)
        except RecursionError:
            raise _too_deep(value) from None
        if leaf_check is not _accept:
            for leaf in leaves:
                cands = leaf_check(leaf, cands, scope)
                if not cands:
                    return _NO
        if structure is None:
            return cands
        out = []
        for a in cands:
            bound = a.get(structure)
            if bound is None:
                out.append({**a, structure: treedef})
            elif bound == treedef:
                out.append(a)
        return out

    return check_pytree


def _too_deep(value: Any) -> KTypeCheckError:
    return KTypeCheckError(
        f"PyTree: a {type(value).__qualname__} nested deeper than Python's stack allows "
        "(a list or dict that contains itself?) cannot be flattened"
    )


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
    _kt_structure: str | None
    _kt_check: Check
    _kt_subscripts: dict[Any, Any]

    @property
    def leaf_type(cls) -> Any:
        """`T` of `PyTree[T]` (`MISSING` for a bare `PyTree`)."""
        return MISSING if cls._kt_leaf is None else cls._kt_leaf

    @property
    def structure_spec(cls) -> str | Any:
        """`"$S"` of `PyTree[T, "$S"]`: trees with the same key in one scope have the same structure.
        `MISSING` (falsy) when no key is given."""
        return MISSING if cls._kt_structure is None else cls._kt_structure

    def __getitem__(cls, item: Any) -> Any:
        try:
            return cls._kt_subscripts[item]
        except (KeyError, TypeError):
            pass
        if cls._kt_leaf is not None:
            raise TypeError(f"{cls!r} already has a leaf type; write PyTree[...] once")
        structure = None
        leaf = item
        if type(item) is tuple:
            if len(item) != 2:
                raise TypeError(
                    f"PyTree[...] takes a leaf type and optionally a structure key, such as "
                    f"PyTree[Float['b']] or PyTree[int, '$S']; got {len(item)} arguments {item!r}"
                )
            leaf, structure = item[0], _structure_key(item[1])
        from ._describe import describe

        sub = _PyTreeMeta.__new__(
            _PyTreeMeta,
            _pytree_name(describe(leaf), structure),
            (cls,),
            {"__module__": "ktyping", "_kt_leaf": leaf, "_kt_structure": structure},
        )
        _remember(cls._kt_subscripts, item, sub)
        return sub

    def __instancecheck__(cls, value: Any) -> bool:
        leaf = cls._kt_leaf
        klass = _leaf_class(leaf)
        if klass is not None:  # like the builtin: each leaf an instance of the class
            try:
                return all(isinstance(x, klass) for x in tree_leaves(value, klass))
            except RecursionError:
                raise _too_deep(value) from None
        cands, scope = current_candidates()
        return bool(compile_annotation(cls)(value, cands, scope))

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        shown = ", ".join(map(repr, args))
        raise NotInstantiableError(
            f"{cls!r} cannot be instantiated: it is an annotation; did you mean PyTree[{shown}]?"
        )

    def __repr__(cls) -> str:
        return cls.__name__


def _pytree_name(leaf: str, structure: str | None) -> str:
    """`PyTree[int]`, `PyTree[int, '$S']`: the name and repr of a subscripted PyTree."""
    return f"PyTree[{leaf}]" if structure is None else f"PyTree[{leaf}, {structure!r}]"


def _structure_key(key: Any) -> str:
    """Validates the `"$S"` of `PyTree[T, "$S"]` (surrounding spaces are dropped)."""
    if not isinstance(key, str):
        raise TypeError(
            f"PyTree[T, key]: the structure key must be a string such as '$S', got {type(key).__name__} {key!r}"
        )
    key = key.strip()
    if not key.startswith("$"):
        raise TypeError(f"PyTree[T, key]: the structure key must start with '$' (such as '$S'), got {key!r}")
    if len(key) < 2:
        raise TypeError(
            f"PyTree[T, key]: the structure key needs at least one character after '$', got {key!r}"
        )
    return key


def _leaf_class(leaf: Any) -> type | None:
    """The leaf annotation when it is a plain class: its instances are leaves, not flattened further."""
    if (
        isinstance(leaf, type)
        and not isinstance(leaf, (ArrayMeta, _PyTreeMeta))
        and not hasattr(leaf, "__origin__")
    ):
        return leaf
    return None


class PyTree(metaclass=_PyTreeMeta):
    """`PyTree[T]`: a nested list/tuple/dict (or any jax pytree) whose every leaf is a `T`.

    Dims are shared across leaves: `PyTree[Float["b"]]` needs every leaf to have the same `b`.
    `PyTree[T, "$S"]` also binds the tree's structure to `$S` in the scope: another
    `PyTree[..., "$S"]` in the same call must have the same structure.
    """

    # Annotated with builtins only: `typing.get_type_hints(PyTree)` resolves without `typing` imported.
    _kt_leaf: object = None  # the leaf annotation T of `PyTree[T]` (None: unsubscripted)
    _kt_structure: str | None = None  # "$S": the name the tree's structure binds in the scope, or None
    _kt_subscripts: dict[object, type] = {}  # noqa: RUF012  # `PyTree[...]` classes made so far, by subscript


def tree_leaves(value: Any, leaf_class: type | None = None) -> list[Any]:
    """Leaves of a pytree: jax's flattening when jax is already imported, else builtins.

    Instances of `leaf_class` are leaves even where jax would flatten them (registered nodes).
    """
    if "jax" in sys.modules:
        import jax

        if leaf_class is None:
            return jax.tree_util.tree_leaves(value)
        return jax.tree_util.tree_leaves(value, is_leaf=lambda x: isinstance(x, leaf_class))
    out: list[Any] = []
    _flatten(value, out, leaf_class)
    return out


def tree_flatten(value: Any, leaf_class: type | None = None) -> tuple[list[Any], Any]:
    """(leaves, structure): jax's `PyTreeDef` when jax is imported, else a nested tuple."""
    if "jax" in sys.modules:
        import jax

        is_leaf = None if leaf_class is None else (lambda x: isinstance(x, leaf_class))
        return jax.tree_util.tree_flatten(value, is_leaf=is_leaf)
    out: list[Any] = []
    return out, _flatten(value, out, leaf_class)


def _flatten(value: Any, out: list[Any], leaf_class: type | None = None) -> Any:
    """Appends the leaves to `out`; returns the structure (`*` for a leaf)."""
    if leaf_class is not None and isinstance(value, leaf_class):
        out.append(value)
        return "*"
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_flatten(v, out, leaf_class) for v in value))
    if isinstance(value, dict):
        keys = sorted(value, key=repr)
        return ("dict", tuple(keys), tuple(_flatten(value[k], out, leaf_class) for k in keys))
    out.append(value)
    return "*"


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
        from ._format import candidates_block, compact

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
        block = candidates_block(cands)
        lines += ["", block]
        error = KTypeCheckError("\n".join(lines))
        error.candidates_block = block
        return error


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
