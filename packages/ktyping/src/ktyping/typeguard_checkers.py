"""Kauldron's `ktyping.typeguard_checkers`: ktyping's checks under Kauldron's names, and typeguard handing
ktyping the annotations that hold ktyping types.

    from ktyping import typeguard_checkers as tgc
    with ktyping.typechecked():
        tgc.check_type(x, Float["b n"])                  # ktyping.check_type: binds b and n
        tgc.isinstance_([x], list[Float["b n"]])         # ktyping.isinstance
        typeguard.check_type(y, Float["b m"] | None)     # typeguard asks ktyping: checked against b

ktyping does not depend on typeguard, and `import ktyping` never loads it: this module (Kauldron's typeguard
integration) is the only one that imports it, and says what to install when it is missing.

`check_type` and `isinstance_` are ktyping's own `check_type` (which takes Kauldron's `nested_ok`) and
`isinstance`: every annotation is checked by ktyping's compiled checks, not by typeguard, and a failure is
ktyping's `KTypeCheckError` (a `TypeError`; Kauldron's subclasses typeguard's `TypeCheckError`).
`TypeCheckError` is typeguard's; `assert_not_never` / `assert_not_noreturn` raise it for a function annotated
`Never` / `NoReturn` that was called / returned.

Importing this module registers a lookup in typeguard's `checker_lookup_functions` (typeguard's plugin hook,
once, however often the module is reloaded): while a ktyping scope is active, typeguard hands ktyping every
array type, `Shape[...]`, `PyTree[...]`, union holding one, TypedDict holding one and `@typechecked` dataclass,
and ktyping checks it in that scope, binding dims. A failure there is `TypeguardKTypeCheckError`, both
ktyping's `KTypeCheckError` and typeguard's `TypeCheckError`. With no scope active typeguard is unchanged.

Not brought over: Kauldron's `MatchResult`, `check_type_internal` and its per-kind checkers (ktyping's union,
PyTree, TypedDict and dataclass checks are `_compile`'s, its messages `_explain`'s), and
`add_custom_checker_lookup_fn`.
"""

from __future__ import annotations

import dataclasses
import types
import typing

try:
    import typeguard  # type: ignore[import-not-found, unused-ignore]
except ImportError as error:  # ktyping itself never needs typeguard
    raise ModuleNotFoundError(
        "ktyping.typeguard_checkers is Kauldron's typeguard integration and needs typeguard, which ktyping "
        "itself does not use: pip install 'typeguard>=4.4.1' (or use ktyping.check_type and "
        "ktyping.isinstance, which need nothing)",
        name="typeguard",
    ) from error

from . import _scope
from ._array_types import ArrayMeta, is_array_type
from ._compile import compile_annotation, resolve_hints
from ._config import MISSING
from ._errors import KTypeCheckError
from ._explain import explain
from ._in_scope import check_type as check_type
from ._in_scope import isinstance as isinstance_
from .pytree import is_pytree_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "TypeCheckError",
    "TypeguardKTypeCheckError",
    "assert_not_never",
    "assert_not_noreturn",
    "check_type",
    "isinstance_",
]

TypeCheckError = typeguard.TypeCheckError
"""typeguard's failed-check error (`typeguard.TypeCheckError`)."""

_UNIONS = (typing.Union, types.UnionType)
_HINT_DEPTH = 20  # a self-referencing TypedDict or dataclass is searched this deep


class TypeguardKTypeCheckError(KTypeCheckError, typeguard.TypeCheckError):
    """A ktyping annotation that typeguard handed to ktyping failed: catch it as either library's error."""

    def __init__(self, message: str) -> None:
        typeguard.TypeCheckError.__init__(self, message)

    __str__ = typeguard.TypeCheckError.__str__  # with the path typeguard adds ("item 0 of value ...")


def assert_not_never(fn: Callable[..., Any], annotation: Any) -> None:
    """Raises `TypeCheckError` if `annotation` (of one of `fn`'s arguments) is `Never`: `fn` was called."""
    if annotation is typing.Never:
        raise TypeCheckError(f"{fn.__name__} is annotated never to be called (an argument is Never), but was")


def assert_not_noreturn(fn: Callable[..., Any], annotation: Any) -> None:
    """Raises `TypeCheckError` if `annotation` (`fn`'s return annotation) is `NoReturn` or `Never`: `fn`
    returned."""
    if annotation is typing.NoReturn or annotation is typing.Never:
        raise TypeCheckError(f"{fn.__name__} is annotated never to return ({annotation!r}), but returned")


def _contains_any_array_type(hint: Any, depth: int = 0) -> bool:
    """Whether `hint` holds an annotation typeguard hands to ktyping: an array type, a `Shape[...]` with a
    spec, a `PyTree` of one, or a TypedDict or dataclass with one among its field annotations."""
    if isinstance(hint, ArrayMeta):
        return is_array_type(hint) or hint.shape_spec is not None
    if depth > _HINT_DEPTH:
        return False
    if is_pytree_type(hint):
        return hint.leaf_type is not MISSING and _contains_any_array_type(hint.leaf_type, depth + 1)
    if isinstance(hint, type) and (typing.is_typeddict(hint) or dataclasses.is_dataclass(hint)):
        return any(_contains_any_array_type(h, depth + 1) for h in resolve_hints(hint).values())
    return any(_contains_any_array_type(arg, depth + 1) for arg in typing.get_args(hint))


def _check_in_active_scope(value: Any, origin_type: Any, args: tuple[Any, ...], memo: Any) -> None:
    """typeguard's checker for an annotation holding ktyping types: ktyping's check in the active scope."""
    annotation = typing.Union[args] if origin_type in _UNIONS else origin_type  # noqa: UP007 - args is a tuple
    scope = _scope.get_current_scope(nested_ok=True)
    found = compile_annotation(annotation)(value, scope.cands, scope)
    if not found:
        raise TypeguardKTypeCheckError(explain(annotation, value, scope.cands, scope))
    scope.cands = found


def _ktyping_checker_lookup(origin_type: Any, args: tuple[Any, ...], extras: tuple[Any, ...]) -> Any:
    """typeguard's lookup hook: `_check_in_active_scope` for an annotation holding ktyping types, while a
    scope is active; None (typeguard's own checks) otherwise."""
    if _scope.SCOPE.get() is None:
        return None
    if isinstance(origin_type, ArrayMeta) or is_pytree_type(origin_type):
        return _check_in_active_scope
    if origin_type in _UNIONS:
        return _check_in_active_scope if any(_contains_any_array_type(a) for a in args) else None
    if typing.is_typeddict(origin_type) and _contains_any_array_type(origin_type):
        return _check_in_active_scope  # in a scope of its own, as ktyping checks TypedDicts
    if getattr(origin_type, "__ktyping_dataclass__", None) is origin_type:
        return _check_in_active_scope  # its fields in a scope of their own
    return None


def _register(lookup: Callable[..., Any]) -> None:
    """Puts `lookup` first in typeguard's lookups, replacing one of the same name (a reloaded module's)."""
    lookups = typeguard.checker_lookup_functions
    lookups[:] = [f for f in lookups if _qualified_name(f) != _qualified_name(lookup)]
    lookups.insert(0, lookup)


def _qualified_name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', id(fn))}"


_register(_ktyping_checker_lookup)
