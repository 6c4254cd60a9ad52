"""Typed path builders: ``path_builder_from("batch", Batch).image`` is the path ``"batch.image"``."""

from __future__ import annotations

import typing
from typing import Any, TypeVar, overload

from ._parser import check_part, format_parts, parse_parts

_T = TypeVar("_T")
_NO_HINTS: dict[str, Any] = {}
_HINTS: dict[Any, dict[str, Any]] = {}


@overload
def path_builder_from(prefix: str, cls: type[_T]) -> _T: ...


@overload
def path_builder_from(prefix: str, cls: None = None) -> Any: ...


def path_builder_from(prefix: str, cls: Any = None) -> Any:
    """A path builder rooted at ``prefix`` that type checkers and IDEs see as an instance of ``cls``.

    Usage::

        batch = kontext.path_builder_from("batch", Batch)
        loss = L2(preds=preds.logits, targets=batch.label)   # keys "preds.logits", "batch.label"

    When ``cls`` has annotated fields (dataclass, flax struct, NamedTuple, TypedDict, annotated class),
    unknown attribute names raise ``AttributeError`` with the close matches, and the builder follows the
    field types (``Optional``, ``list[X]`` / ``dict[str, X]`` items). Otherwise any name is accepted.
    ``str(builder)`` is the path; the builder can be passed wherever kontext takes a path.
    """
    return PathBuilder(parse_parts(prefix) if prefix else (), cls)


class PathBuilder:
    """A path under construction; attribute and item access extend it."""

    __slots__ = ("_kontext_cls", "_kontext_parts")
    _kontext_cls: Any
    _kontext_parts: tuple[Any, ...]

    def __init__(self, parts: tuple[object, ...] = (), cls: Any = None) -> None:
        object.__setattr__(self, "_kontext_parts", parts)
        object.__setattr__(self, "_kontext_cls", cls)

    def __getattr__(self, name: str) -> PathBuilder:
        if name.startswith("__") and name.endswith("__") and name != "__call__":
            # Protocols (copy, pickle, IPython) must not become paths; `__call__` is flax's intermediates key.
            raise AttributeError(name)
        cls = self._kontext_cls
        hints = _hints(cls)
        if hints:
            if name not in hints:
                raise AttributeError(_unknown_field(self, cls, name, hints))
            child = _unwrap(hints[name])
        else:
            child = None
        return PathBuilder((*self._kontext_parts, name), child)

    def __getitem__(self, key: Any) -> PathBuilder:
        cls = self._kontext_cls
        hints = _hints(cls)
        if not hints:
            child = _item_type(cls, key)
        elif _is_typed_dict(cls):
            if key not in hints:
                raise KeyError(_unknown_field(self, cls, key, hints))
            child = _unwrap(hints[key])
        else:
            fields = getattr(cls, "_fields", ())  # A named tuple's items are its fields.
            child = (
                _unwrap(hints[fields[key]])
                if type(key) is int and -len(fields) <= key < len(fields)
                else None
            )
        return PathBuilder((*self._kontext_parts, check_part(key, False)), child)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Path builders are read-only: cannot set {name!r} on {self}.")

    def __kontext_path__(self) -> str:
        return format_parts(self._kontext_parts)

    def __as_konfig__(self) -> str:
        return format_parts(self._kontext_parts)

    def __str__(self) -> str:
        return format_parts(self._kontext_parts)

    def __repr__(self) -> str:
        return f"PathBuilder({format_parts(self._kontext_parts)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PathBuilder):
            return self._kontext_parts == other._kontext_parts
        if isinstance(other, str):
            return format_parts(self._kontext_parts) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(format_parts(self._kontext_parts))

    def __dir__(self) -> list[str]:
        return sorted(_hints(self._kontext_cls))

    def __reduce__(self) -> tuple[Any, ...]:
        return (PathBuilder, (self._kontext_parts, None))


def _hints(cls: Any) -> dict[str, Any]:
    """``{name: type}`` of the fields (and properties) of ``cls``; empty when it has none or is unknown."""
    if cls is None:
        return _NO_HINTS
    try:
        found = _HINTS.get(cls)
    except TypeError:  # An unhashable annotation.
        return _NO_HINTS
    if found is None:
        found = _HINTS[cls] = _read_hints(cls)
    return found


def _read_hints(cls: Any) -> dict[str, Any]:
    origin = typing.get_origin(cls)
    parameters = getattr(origin, "__parameters__", ())
    if isinstance(origin, type) and parameters:  # `Box[Meta]`: the fields of `Box`, with `T` -> `Meta`.
        mapping = dict(zip(parameters, typing.get_args(cls), strict=False))
        return {name: _substitute(hint, mapping) for name, hint in _hints(origin).items()}
    if not isinstance(cls, type):
        return _NO_HINTS
    try:
        found = dict(typing.get_type_hints(cls))
    except Exception:  # Unresolvable annotations: field names only, types unknown.
        import inspect

        found = {}
        for klass in reversed(cls.__mro__):
            for name in inspect.get_annotations(klass):
                found[name] = None
    found = {n: h for n, h in found.items() if typing.get_origin(h) is not typing.ClassVar}
    if found:  # Properties are steps too, typed by what they return.
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, property) and not name.startswith("_"):
                    found[name] = _return_hint(value.fget)
    return found


def _return_hint(func: Any) -> Any:
    try:
        return typing.get_type_hints(func).get("return")
    except Exception:  # An annotation that cannot be resolved: type unknown.
        return None


def _substitute(hint: Any, mapping: dict[Any, Any]) -> Any:
    """``hint`` with its type variables replaced: ``list[T]`` -> ``list[Meta]``."""
    if isinstance(hint, TypeVar):
        return mapping.get(hint, hint)
    parameters = getattr(hint, "__parameters__", ())
    if not parameters:
        return hint
    try:
        return hint[tuple(mapping.get(p, p) for p in parameters)]
    except TypeError:
        return hint


def _unwrap(hint: Any) -> Any:
    """``Optional[X]``/``Annotated[X, ...]`` -> ``X``; other unions -> unknown (``None``)."""
    while True:
        if isinstance(hint, TypeVar):
            return hint.__bound__  # What every value of it has; `None` (unknown) without a bound.
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
            continue
        if origin is typing.Union or type(hint).__name__ == "UnionType":
            options = [a for a in typing.get_args(hint) if a is not type(None)]
            if len(options) != 1:
                return None
            hint = options[0]
            continue
        return hint


def _item_type(cls: Any, key: Any) -> Any:
    origin = typing.get_origin(cls)
    args = typing.get_args(cls)
    if origin is None or not args:
        return None
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _unwrap(args[0])
        return _unwrap(args[key]) if type(key) is int and -len(args) <= key < len(args) else None
    if isinstance(origin, type) and hasattr(origin, "keys"):
        return _unwrap(args[-1])
    return _unwrap(args[0])


def _is_typed_dict(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, "__total__")


def _unknown_field(builder: PathBuilder, cls: type, name: Any, hints: dict[str, Any]) -> str:
    import difflib

    close = difflib.get_close_matches(str(name), list(hints), n=3)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"{cls.__qualname__} has no field {name!r} (building the path {str(builder)!r}). "
        f"Its fields: {', '.join(hints)}.{hint}"
    )
