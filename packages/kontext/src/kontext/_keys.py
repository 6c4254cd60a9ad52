"""Keys: fields annotated ``kontext.Key`` hold paths; ``resolve_from_keyed_obj`` turns them into values."""

from __future__ import annotations

import sys
import typing
from typing import Annotated, Any, TypeVar

from ._errors import (
    KeySignatureError,
    PathNotFoundError,
    PathSyntaxError,
    RequiredKeyError,
    UnresolvedKeysError,
)
from ._lookup import lookup, not_found
from ._parser import format_parts, parse_parts
from ._paths import AbstractPath, to_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

Context = Any  # A nested structure: dicts, lists, dataclasses, pytrees, plain objects...


class _KeyMarker:
    """The metadata that makes ``Annotated[X, marker]`` a key annotation."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "kontext.Key"


_KEY = _KeyMarker()
_T = TypeVar("_T")

Key = Annotated[Any, _KEY]
"""A field holding one path (``"batch.image"``), ``None`` (optional input) or ``REQUIRED``."""

KeyTree = Annotated[_T, _KEY]
"""A field holding a tree of paths, e.g. ``KeyTree[dict[str, str]]``; resolved leaf by leaf."""

REQUIRED = "__KEY_REQUIRED__"
"""Default of a key that must be set before resolving: ``image: kontext.Key = kontext.REQUIRED``."""

_PROTOCOL = "__kontext_keys__"
_KEY_FIELDS: dict[type, tuple[str, ...]] = {}
_OWNER_NAMES: dict[type, str] = {}
_Signature = tuple[tuple[str, ...], frozenset[str], frozenset[str], bool, str]
_SIGNATURES: dict[Any, _Signature | None] = {}
_UNKNOWN = object()


def get_keypaths(keyed_obj: Any) -> dict[str, Any]:
    """``{field name: path}`` of the Key-annotated fields of ``keyed_obj`` (or its ``__kontext_keys__()``).

    Usage: ``get_keypaths(L2(preds="preds.logits", targets="batch.label")) == {"preds": ..., "targets": ...}``.

    Annotations are read through ``Optional``, ``Union`` and containers (``dict[str, Key]``), from
    dataclasses, flax modules or any annotated class; wrappers return their inner object's keys with the
    ``__kontext_keys__`` protocol.
    """
    kind = type(keyed_obj)
    if hasattr(kind, _PROTOCOL):
        return dict(getattr(keyed_obj, _PROTOCOL)())
    names = _KEY_FIELDS.get(kind)
    if names is None:
        names = _key_fields(kind)
    return {name: getattr(keyed_obj, name, REQUIRED) for name in names}  # Annotated, never set: required.


def is_key_annotated(cls_or_obj: Any) -> bool:
    """Whether a class (or an instance's class) has Key-annotated fields or ``__kontext_keys__``."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    return hasattr(cls, _PROTOCOL) or bool(_KEY_FIELDS.get(cls) or _key_fields(cls))


def _key_fields(cls: type) -> tuple[str, ...]:
    names = tuple(name for name, hint in _hints_with_extras(cls).items() if _is_key_hint(hint))
    _KEY_FIELDS[cls] = names
    return names


def _hints_with_extras(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # Unresolvable string annotations: resolved field by field below.
        pass
    import inspect

    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        module = sys.modules.get(klass.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        namespace.update(vars(klass))
        for name, annotation in inspect.get_annotations(klass).items():
            if isinstance(annotation, typing.ForwardRef):  # NamedTuple wraps string annotations.
                annotation = annotation.__forward_arg__
            if isinstance(annotation, str):
                try:
                    annotation = eval(annotation, namespace)
                except Exception:  # A name only known where the class was defined.
                    annotation = Key if _mentions_key(annotation) else None
            hints[name] = annotation
    return hints


def _mentions_key(annotation: str) -> bool:
    """For an annotation string that cannot be evaluated: does it use ``Key`` / ``KeyTree``?"""
    word = []
    for ch in annotation + " ":
        if ch.isalnum() or ch == "_":
            word.append(ch)
            continue
        if "".join(word) in ("Key", "KeyTree"):
            return True
        word = []
    return False


def _is_key_hint(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is None:
        return False
    if origin is Annotated and any(meta is _KEY for meta in hint.__metadata__):
        return True
    return any(_is_key_hint(arg) for arg in typing.get_args(hint))


def resolve_from_keyed_obj(
    context: Context,
    keyed_obj: Any,
    func: Callable[..., Any] | None = None,
) -> dict[str, Any]:
    """The keyword arguments for ``func``: each key of ``keyed_obj`` looked up in ``context``.

    Usage: ``loss(**resolve_from_keyed_obj({"preds": p, "batch": b}, loss, func=loss.get_values))``.

    Keys set to ``None`` are skipped, so ``func``'s default applies. A key may hold a tree (dict / list /
    tuple) of paths, resolved into the same tree. Every error names the class of ``keyed_obj``.

    Raises:
      RequiredKeyError: a key is still ``kontext.REQUIRED``.
      KeySignatureError: ``func`` lacks an argument for a key, or needs one that no key provides.
      UnresolvedKeysError: paths missing from ``context``; all of them, each with suggestions.
    """
    kind = type(keyed_obj)
    owner = _OWNER_NAMES.get(kind)
    if owner is None:
        owner = _OWNER_NAMES[kind] = _readable_name(kind)
    keypaths = {name: path for name, path in get_keypaths(keyed_obj).items() if path is not None}
    unset = [where for name, path in keypaths.items() for where in _required_positions(path, (name,))]
    if unset:
        listed = ", ".join(repr(format_parts(where)) for where in unset)
        raise RequiredKeyError(
            f"{owner}: cannot resolve required keys {listed}: they are still kontext.REQUIRED. Set them "
            f"when building the object, e.g. {owner}({unset[0][0]}='<path in the context>'), or set them to "
            "None if the input is optional."
        )
    if func is not None:
        _check_signature(owner, keypaths, func)
    return _resolve(context, keypaths, owner)


def resolve_from_keypaths(context: Context, key_paths: dict[str, Any]) -> dict[str, Any]:
    """``{name: value}`` for ``{name: path or tree of paths}``; every missing path reported at once.

    Usage:
      >>> resolve_from_keypaths({"batch": {"x": 1}}, {"x": "batch.x"})
      {'x': 1}
    """
    return _resolve(context, key_paths, "")


def _readable_name(obj: Any) -> str:
    """``__qualname__`` without the ``outer.<locals>.`` of classes and functions defined in functions."""
    return str(getattr(obj, "__qualname__", obj)).rsplit("<locals>.", 1)[-1]


def _required_positions(path: Any, where: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...]:
    """Where a key (or a tree of paths) is still ``REQUIRED``: ``(("inputs", "b", 1),)``."""
    kind = type(path)
    if kind is str:
        return (where,) if path == REQUIRED else ()
    if kind is dict:
        items: Any = path.items()
    elif kind is list or kind is tuple:
        items = enumerate(path)
    else:
        return ()
    return tuple(found for key, sub in items for found in _required_positions(sub, (*where, key)))


def _resolve(context: Context, key_paths: dict[str, Any], owner: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    errors: dict[str, PathNotFoundError] = {}
    for name, path in key_paths.items():
        if type(path) is str:
            try:
                parts = parse_parts(path)
            except PathSyntaxError as e:
                raise _with_owner(e, owner, (name,)) from None
            value, failed = lookup(context, parts)
            if failed >= 0:
                errors[name] = not_found(context, parts, value, failed)
            values[name] = value
        else:
            values[name] = _resolve_tree(context, path, (name,), errors, owner)
    if errors:
        raise _unresolved(owner, key_paths, errors)
    return values


def _resolve_tree(
    context: Context, path: Any, where: tuple[object, ...], errors: dict[str, PathNotFoundError], owner: str
) -> Any:
    kind = type(path)
    if kind is dict:
        return {k: _resolve_tree(context, p, (*where, k), errors, owner) for k, p in path.items()}
    if kind is list or kind is tuple:
        resolved = [_resolve_tree(context, p, (*where, i), errors, owner) for i, p in enumerate(path)]
        return resolved if kind is list else tuple(resolved)
    if path is None:
        return None
    if kind is str or isinstance(path, AbstractPath) or hasattr(kind, "__kontext_path__"):
        try:
            parts = to_parts(path)
        except PathSyntaxError as e:
            raise _with_owner(e, owner, where) from None
        value, failed = lookup(context, parts)
        if failed >= 0:
            errors[format_parts(where)] = not_found(context, parts, value, failed)
        return value
    prefix = f"{owner}: key" if owner else "Key"
    raise TypeError(
        f"{prefix} {format_parts(where)!r} must be a path string (or a dict / list / tuple of them), got "
        f"{type(path).__name__}: {path!r}."
    )


def _with_owner(error: PathSyntaxError, owner: str, where: tuple[object, ...]) -> PathSyntaxError:
    head = f"{owner}: key" if owner else "Key"
    return PathSyntaxError(error.path, error.position, error.expected, f"{head} {format_parts(where)!r}: ")


def _unresolved(
    owner: str, key_paths: dict[str, Any], errors: dict[str, PathNotFoundError]
) -> UnresolvedKeysError:
    head = f"{owner}: " if owner else ""
    count = len(errors)
    lines = [
        f"{head}Invalid keys: {count} key{'s' if count > 1 else ''} could not be resolved from the context:"
    ]
    for name, error in errors.items():
        detail = error.message.replace("\n", "\n      ")
        lines.append(f"  - {name} = {error.path!r}:\n      {detail}")
    return UnresolvedKeysError("\n".join(lines), errors)


def _check_signature(owner: str, keypaths: dict[str, Any], func: Callable[..., Any]) -> None:
    signature = _signature(func)
    if signature is None:
        return  # No signature to check against (some builtins).
    names, required, positional_only, var_keyword, text = signature
    given = set(keypaths)
    missing = [name for name in names if name in required and name not in given]
    # A positional-only name given by keyword fails, or lands in `**kwargs`: a mistake either way.
    extra = [key for key in keypaths if key in positional_only or (not var_keyword and key not in names)]
    if not missing and not extra:
        return
    import difflib

    func_name = _readable_name(func if hasattr(func, "__qualname__") else type(func))
    lines = [f"{owner}: the signature does not match its keys: {func_name}{text}"]
    if missing:
        lines.append(
            "  missing argument(s) with no default, which no key provides: "
            + ", ".join(repr(m) for m in missing)
        )
    for key in extra:
        if key in positional_only:
            lines.append(f"  key {key!r} names a positional-only argument, which cannot be passed by keyword")
            continue
        close = difflib.get_close_matches(key, [n for n in names if n not in given], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        lines.append(f"  key {key!r} is not an argument of {func_name}{hint}")
    lines.append("  keys given (not None): " + (", ".join(keypaths) or "none"))
    raise KeySignatureError("\n".join(lines))


def _signature(func: Callable[..., Any]) -> _Signature | None:
    """Argument names, required ones, positional-only ones, ``**kwargs``, text; ``None`` if unknown."""
    underlying = getattr(func, "__func__", func)
    cache_key: Any = (underlying, hasattr(func, "__self__"))
    try:
        cached = _SIGNATURES.get(cache_key, _UNKNOWN)
    except TypeError:  # An unhashable callable.
        cached, cache_key = _UNKNOWN, None
    if cached is not _UNKNOWN:
        return cached
    import inspect

    try:
        sig = inspect.signature(func)
    except (ValueError, TypeError):
        info = None
    else:
        info = _read_signature(sig)
    if cache_key is not None:
        if len(_SIGNATURES) >= 4096:  # Functions made on the fly (lambdas, partials) must not pile up.
            _SIGNATURES.clear()
        _SIGNATURES[cache_key] = info
    return info


def _read_signature(sig: Any) -> _Signature:
    names: list[str] = []
    required: set[str] = set()
    positional_only: set[str] = set()
    var_keyword = False
    for param in sig.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            var_keyword = True
        elif param.kind is param.VAR_POSITIONAL:
            continue
        else:
            names.append(param.name)
            if param.default is param.empty:
                required.add(param.name)
            if param.kind is param.POSITIONAL_ONLY:
                positional_only.add(param.name)
    return (tuple(names), frozenset(required), frozenset(positional_only), var_keyword, str(sig))
