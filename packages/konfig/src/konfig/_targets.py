"""Turning a `"module.path:Attr.sub"` qualname into the object it names: the one walk that does it.

Two ways to walk, one loop (`walk_attrs`):

* importing (`import_target`, cached; `load_target`, which safe mode wraps with its guard through
  `admit_module` / `admit`): the module is imported, attributes are read with `getattr`, and a missing
  attribute of a module may be its submodule;
* finding without running code (`find_imported`): only a module already imported is looked in, and
  attributes are read statically, by `static_attribute` (anything stored; the command line's `py::`
  reader checks names with it) or `plain_attribute` (only what can be used without running code;
  `konfig.from_json` restores functions and types with it); `find_imported_callable` finds what argument
  checks inspect.

    >>> import_target("os.path:join") is find_imported("os.path:join") is __import__("os").path.join
    True
"""

from __future__ import annotations

import importlib
import sys
import types

from ._errors import TargetNotFoundError, did_you_mean, module_getattr
from ._policy import current_policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_CACHE: dict[str, Any] = {}
MISSING: Any = object()  # what an attribute reader returns where there is no such attribute
NOT_IMPORTED: Any = object()  # what `find_imported` returns where finding would import or run code


def import_target(qualname: str) -> Any:
    """Returns the object named by `qualname` (cached).

    Usage: `import_target("optax:adam") is optax.adam`.
    """
    try:
        return _CACHE[qualname]
    except KeyError:
        pass
    obj = _CACHE[qualname] = load_target(qualname)
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


def load_target(
    qualname: str,
    admit_module: Callable[[Any], Any] | None = None,
    admit: Callable[[Any], Any] | None = None,
) -> Any:
    """Imports the object `qualname` names (uncached); `admit_module` sees the module, `admit` each
    object the walk reaches after it, and each returns what the walk goes on with (or raises).

    Without a colon, `"optax.adam"` is the module `optax.adam` if there is one, else attribute `adam`
    of `optax`. Usage: `fn = load_target("optax:adam", admit=guard.admit)`.
    """
    module_name, sep, attrs = qualname.partition(":")
    if not sep:
        try:
            module = import_module(module_name)
        except TargetNotFoundError:
            if "." not in module_name:
                raise
            module_name, _, attrs = module_name.rpartition(".")
        else:
            return module if admit_module is None else admit_module(module)
    module, module_name, attrs = _import_longest(module_name, attrs)
    if admit_module is not None:
        module = admit_module(module)
    return walk_attrs(module, module_name, attrs, admit)


def _import_longest(module_name: str, attrs: str) -> tuple[types.ModuleType, str, str]:
    """`(module, module name, attrs)`: `module_name` imported; when no such module exists but a shorter
    prefix is one, the rest of the name becomes attributes (`"kd.nn.VitEncoder:from_variant_str"`, as the
    command line's `py::kd.nn.VitEncoder.from_variant_str(...)` writes it, is `kd.nn:VitEncoder.from_variant_str`).
    """
    try:
        return import_module(module_name), module_name, attrs
    except TargetNotFoundError as e:
        missing = getattr(e.__cause__, "name", None)
        parent, _, leaf = module_name.rpartition(".")
        if not parent or missing != module_name:  # not this module missing (an import inside it failed)
            raise
        try:
            return _import_longest(parent, f"{leaf}.{attrs}" if attrs else leaf)
        except TargetNotFoundError:
            raise e from e.__cause__


def find_imported(qualname: str, read: Callable[[Any, str], Any] | None = None) -> Any:
    """The object `"module:Attr.sub"` names, found without importing or running code.

    Only a module already imported is looked in, and each attribute is read by `read`
    (`static_attribute` by default, or `plain_attribute`). Returns `NOT_IMPORTED` where the module is
    not imported or only a module's `__getattr__` (a lazy attribute) could answer; raises `NoAttribute`
    where an attribute is missing, for the caller to word.

    Usage: `fn = find_imported("optax:adam")  # NOT_IMPORTED until optax is imported`.
    """
    module_name, _, attrs = qualname.partition(":")
    module = sys.modules.get(module_name)
    if module is None:
        return NOT_IMPORTED
    try:
        return walk_attrs(module, module_name, attrs, read=read or static_attribute)
    except NoAttribute as e:
        if isinstance(e.owner, types.ModuleType) and "__getattr__" in vars(e.owner):
            return NOT_IMPORTED  # A lazy module attribute: asking for it could import.
        raise


def find_imported_callable(qualname: str) -> Any:
    """The callable `"module:Attr.sub"` names, found by `find_imported` (nothing imported, nothing run), with
    class and static methods bound as a call sees them; None where the module is not imported, a name is
    missing or what it names is not callable. Argument checks (`_signature`) inspect what it finds.

    Usage: `find_imported_callable("os.path:join") is os.path.join`.
    """
    if ":" not in qualname:
        return None
    try:
        found = find_imported(qualname, _called_attribute)
    except NoAttribute:
        return None
    return found if found is not NOT_IMPORTED and callable(found) else None


def _called_attribute(obj: Any, name: str) -> Any:
    """`static_attribute`, with a class or static method bound (`getattr`): `cls` is not a parameter."""
    value = static_attribute(obj, name)
    if isinstance(value, (classmethod, staticmethod)):
        return getattr(obj, name)
    return value


class NoAttribute(Exception):
    """`find_imported` met an object without the attribute it looks for (`owner`, `name`)."""

    def __init__(self, owner: Any, name: str) -> None:
        super().__init__(name)
        self.owner = owner
        self.name = name


def import_module(name: str) -> types.ModuleType:
    """The module `name` (imported now if needed); `TargetNotFoundError` if there is none."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise TargetNotFoundError(f"Cannot import module {name!r}: {e}", name=name) from e


def walk_attrs(
    obj: Any,
    module_name: str,
    attrs: str,
    admit: Callable[[Any], Any] | None = None,
    read: Callable[[Any, str], Any] | None = None,
) -> Any:
    """`obj.a.b` for `attrs="a.b"`; `admit` sees each object reached.

    By default attributes are read with `getattr`, importing submodules on the way, and a miss is a
    `TargetNotFoundError`; with `read` (`static_attribute`, `plain_attribute`) they are read without
    running code, and a miss is `NoAttribute`.
    """
    if not attrs:
        return obj
    path = module_name
    for attr in attrs.split("."):
        if read is not None:
            value = read(obj, attr)
            if value is MISSING:
                raise NoAttribute(obj, attr)
        else:
            value, refusal = module_getattr(obj, attr, MISSING)
            if value is MISSING and isinstance(obj, types.ModuleType):
                try:
                    value = importlib.import_module(f"{obj.__name__}.{attr}")
                except ModuleNotFoundError:
                    value = MISSING
            if value is MISSING:
                if refusal:  # The module's own explanation (e.g. "not ported; use ...").
                    raise TargetNotFoundError(f"{path}.{attr}: {refusal}", name=module_name)
                public = [n for n in dir(obj) if not n.startswith("_") and n != attr]
                raise TargetNotFoundError(
                    f"{path} has no attribute {attr!r}{did_you_mean(attr, public)}", name=module_name
                )
        obj = value if admit is None else admit(value)
        path = f"{path}.{attr}"
    return obj


def static_attribute(obj: Any, name: str) -> Any:
    """`obj.name` as stored, found without running code: a module's own attribute, else what
    `inspect.getattr_static` finds (descriptors unread); `MISSING` where there is none."""
    if isinstance(obj, types.ModuleType):
        return vars(obj).get(name, MISSING)  # No module `__getattr__`.
    import inspect

    try:
        return inspect.getattr_static(obj, name)
    except AttributeError:
        return MISSING


def plain_attribute(obj: Any, name: str) -> Any:
    """`obj.name` where reading it runs no code and the name is public: a module's own attribute, or a
    class's function, class, static method or class method (bound); else `MISSING` (a property or
    another descriptor, whose reading could run code; a private or dunder name)."""
    if not name or name[0] == "_":
        return MISSING
    if isinstance(obj, types.ModuleType):
        return vars(obj).get(name, MISSING)
    if not isinstance(obj, type):
        return MISSING
    for klass in type.__dict__["__mro__"].__get__(obj):
        found = vars(klass).get(name, MISSING)
        if found is MISSING:
            continue
        if isinstance(found, staticmethod):
            return found.__func__
        if isinstance(found, classmethod):
            return types.MethodType(found.__func__, obj)
        if isinstance(found, (type, types.FunctionType, types.BuiltinFunctionType)):
            return found
        return MISSING
    return MISSING
