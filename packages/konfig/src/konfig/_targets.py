"""Importing the object a `"module.path:Attr.sub"` qualname names."""

from __future__ import annotations

import importlib
import sys
import types

from ._errors import TargetNotFoundError, did_you_mean
from ._policy import current_policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_CACHE: dict[str, Any] = {}


def import_target(qualname: str) -> Any:
    """Returns the object named by `qualname` (cached).

    Usage: `import_target("optax:adam") is optax.adam`.
    """
    try:
        return _CACHE[qualname]
    except KeyError:
        pass
    module_name, sep, attrs = qualname.partition(":")
    if not sep:
        try:
            obj = import_module(module_name)
        except TargetNotFoundError:
            if "." not in module_name:
                raise
            module_name, _, attrs = module_name.rpartition(".")
            obj = walk_attrs(import_module(module_name), module_name, attrs)
    else:
        obj = walk_attrs(import_module(module_name), module_name, attrs)
    _CACHE[qualname] = obj
    return obj


def import_object(qualname: str) -> Any:
    """The object `"module.path:Attr.sub"` names, imported through the safe-mode policy in force.

    Outside safe mode it is `import_target`; inside a `konfig.resolve(..., allowed=[...])` (a target
    being built, kd building a model) it imports only what that policy allows, and raises
    `konfig.DisallowedTargetError` for the rest. Libraries that turn names into objects use it so that
    they never hand out an object the policy refuses.

    Usage: `adam = konfig.import_object("optax:adam")`.
    """
    guard = current_policy()
    if guard is not None:
        return guard.import_target(qualname)
    return import_target(qualname)


def import_module(name: str) -> types.ModuleType:
    """The module `name` (imported now if needed); `TargetNotFoundError` if there is none."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise TargetNotFoundError(f"Cannot import module {name!r}: {e}", name=name) from e


def walk_attrs(obj: Any, module_name: str, attrs: str, admit: Callable[[Any], Any] | None = None) -> Any:
    """`obj.a.b` for `attrs="a.b"` (importing submodules on the way); `admit` sees each object reached."""
    if not attrs:
        return obj
    path = module_name
    for attr in attrs.split("."):
        value = getattr(obj, attr, _MISSING)
        if value is _MISSING and isinstance(obj, types.ModuleType):
            try:
                value = importlib.import_module(f"{obj.__name__}.{attr}")
            except ModuleNotFoundError:
                value = _MISSING
        if value is _MISSING:
            public = [n for n in dir(obj) if not n.startswith("_")]
            raise TargetNotFoundError(
                f"{path} has no attribute {attr!r}{did_you_mean(attr, public)}", name=module_name
            )
        obj = value if admit is None else admit(value)
        path = f"{path}.{attr}"
    return obj


_MISSING = object()
