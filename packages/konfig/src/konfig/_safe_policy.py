"""What a safe resolve may use: `allowed=` as patterns, and every object judged by what it *is*.

`allowed=` becomes a tuple of patterns (`allowed_patterns`: bare names of packages that declare a surface
become that surface's entries), matched by `_admission`; `shown` gives them back as the caller wrote them,
for messages. `refused_object` judges an object by what it is, never by a name that reached it (a
function by its own module, a bound method by its function and its owner's type, a partial by what it
calls, a callable object by its type); `is_unsafe_attr` names the attributes no reference or target may
follow. The policy in force while a resolve runs is `_policy`'s; the guard that applies it, `_safe_guard`.

    >>> import json
    >>> refused_object(json.loads, ("optax",)), refused_object(json.loads, ("json",))
    ('json:loads', None)
"""

from __future__ import annotations

import functools
import inspect
import types

from ._admission import IdentityIndex, enclosing_function, module_admitted, name_admitted, target_admitted
from ._config_dict import UNION_QUALNAME
from ._surfaces import expand_patterns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# Always allowed: `A | B` of captured types is stored as a call of this.
BUILTIN_ALLOWED = frozenset({UNION_QUALNAME})

# Attribute names that lead from an allowed object to arbitrary code
# (`f.__globals__["os"]`, `gen.gi_frame.f_globals`, ...); refused in references.
_INTROSPECTION_ATTRS = frozenset(
    {
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "tb_frame",
        "tb_next",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "gi_code",
        "cr_code",
        "ag_code",
        "mro",
    }
)

# Value types whose objects, methods and constructors a safe config may use freely.
PLAIN_TYPES = frozenset(
    {bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset, slice, range, type(None)}
)

# Methods of plain values that read attributes and items of their arguments by a
# format string (`"{0.__class__.__init__.__globals__}".format(obj)`).
_FORMAT_METHODS = frozenset({"format", "format_map"})

# Interpreter internals: never used by a safe config, whatever reached them.
_INTERNAL_TYPES = (
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.CellType,
)

_METHOD_TYPES = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)
_DESCRIPTOR_TYPES = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)


def is_unsafe_attr(name: object) -> bool:
    """Dunder and frame/code attribute names, refused in references and targets."""
    return type(name) is str and (name.startswith("__") or name in _INTROSPECTION_ATTRS)


def unsafe_target_segment(qualname: str) -> str | None:
    """The first dunder / introspection segment of `"module:Attr.sub"`, or None."""
    module, _, attrs = qualname.partition(":")
    for segment in (*module.split("."), *(attrs.split(".") if attrs else ())):
        if is_unsafe_attr(segment):
            return segment
    return None


def is_allowed(qualname: str, patterns: Iterable[str]) -> bool:
    """Is the target `"module:Attr.sub"` (or a module name) admitted by `patterns`?

    Entries of declared surfaces (`"optax:*"`, `"kd.nn:Vit"`, `"!kd.xm:*"`) match names as a config
    imports them; older module patterns trust a whole module: `"mylib"` mylib and its submodules,
    `"mylib.*"` a glob on the dotted name; a pattern after `!` refuses what it matches even where
    another admits it (`["mylib", "!mylib.io"]`). Bare names of packages that declare a surface must
    have been expanded first (`_surfaces.expand_patterns`).
    """
    if qualname in BUILTIN_ALLOWED:
        return True
    return target_admitted(qualname, tuple(patterns))


def object_name(obj: Any) -> str:
    """`module:qualname` of a module, class or function (what the object says it is)."""
    if isinstance(obj, types.ModuleType):
        return str(getattr(obj, "__name__", "?"))
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if type(module) is not str or type(qualname) is not str:
        return f"{type(obj).__module__}:{type(obj).__qualname__}"
    return f"{module}:{qualname}"


def refused_object(obj: Any, patterns: tuple[str, ...]) -> str | None:
    """Why `obj` may not be used under `patterns` (its `module:qualname`), or None.

    Every object is judged by what it *is*, never by a name it carries on itself:

    * modules, classes and functions by their own `__module__` / `__qualname__`;
    * a bound method by its function (`Box().evil` is the function stored on `Box`) and by its
      owner's type, a C method by its owner (a module for `os.system`, else the owner's type);
    * a `functools.partial` by what it calls and every callable it holds, recursively;
    * any other callable object by its type (whose `__call__` runs), or, for a wrapper that is not
      allowed itself (`jax.jit(f)`), by the function it wraps (`__wrapped__`, read statically).

    Plain values and their methods pass, except the format-string methods; other data passes (it may
    be read, and what is read from it is checked).
    """
    pending = [obj]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if len(seen) > _MAX_CALLABLE_PARTS:
            return f"a callable built of more than {_MAX_CALLABLE_PARTS:,} nested parts"
        refused = _refused_one(item, patterns, pending)
        if refused is not None:
            return refused
    return None


_MAX_CALLABLE_PARTS = 10_000


def _refused_one(obj: Any, patterns: tuple[str, ...], pending: list[Any]) -> str | None:
    """`refused_object` for one object; the parts it holds that must be judged too go on `pending`."""
    t = type(obj)
    if t in PLAIN_TYPES:
        return None
    if isinstance(obj, types.ModuleType):
        names = module_names(obj)
        return None if any(module_admitted(n, patterns) for n in names) else names[0]
    if t is types.MethodType:  # only a method the policy names, or one a whole-module pattern trusts
        if IdentityIndex.of(patterns).admits(obj):
            return None
        owner = obj.__self__
        return _refused_named(owner if isinstance(owner, type) else type(owner), patterns) or _refused_named(
            obj.__func__, patterns
        )
    if isinstance(obj, _METHOD_TYPES):
        owner = getattr(obj, "__self__", None)
        if owner is None:
            return _refused_named(obj, patterns)
        if isinstance(owner, types.ModuleType):  # A C function (`os.system` is `posix:system`).
            name = f"{object_name(owner)}:{getattr(obj, '__qualname__', '?')}"
            if IdentityIndex.of(patterns).admits(obj) or is_allowed(name, patterns):
                return None
            return name
        owner_type = owner if isinstance(owner, type) else type(owner)
        if owner_type in PLAIN_TYPES:
            return _refused_format(obj, owner_type)
        module, _, qualname = object_name(owner_type).partition(":")
        name = f"{module}:{qualname}.{getattr(obj, '__name__', '?')}"
        return None if name_admitted(module, name.partition(":")[2], patterns) else name
    if isinstance(obj, _DESCRIPTOR_TYPES):
        owner_type = getattr(obj, "__objclass__", None)
        if owner_type in PLAIN_TYPES:
            return _refused_format(obj, owner_type)
        return _refused_named(obj, patterns)
    if isinstance(obj, type):
        return _refused_named(obj, patterns)
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return _refused_named(obj, patterns)
    if isinstance(obj, _INTERNAL_TYPES):
        return f"{t.__name__} object (interpreter internals)"
    if t is functools.partial:
        pending.append(obj.func)
        pending.extend(a for a in (*obj.args, *obj.keywords.values()) if callable(a))
        return None
    if not callable(obj):
        return None  # data: may be read; what is read from it is checked
    if IdentityIndex.of(patterns).admits(obj):
        return None  # named by the policy (`jax.nn:relu` is a custom_jvp object)
    refused = _refused_named(t, patterns)  # an instance of an admitted class: its `__call__`
    if refused is None:
        return None
    if str(getattr(t, "__module__", "")).partition(".")[0] in _WRAPPER_MODULES:
        wrapped = inspect.getattr_static(obj, "__wrapped__", None)
        if isinstance(wrapped, (types.FunctionType, types.BuiltinFunctionType)):
            pending.append(wrapped)  # jax.jit(f), functools.lru_cache(f): what runs is `f`
            return None
    return refused


# Modules whose callable wrapper types (`jax.jit`'s PjitFunction, `functools.lru_cache`'s) only call the
# function they wrap: such a wrapper is judged by that function.
_WRAPPER_MODULES = frozenset({"functools", "jax", "jaxlib"})


def module_names(module: types.ModuleType) -> tuple[str, ...]:
    """The names a module is judged by: its own, and the module it stands for where it is an alias's view
    (`__konfig_alias_of__` in its own dict: `kauldron.modules` is a view of `kd.nn`)."""
    own = vars(module)
    name = own.get("__name__")
    alias_of = own.get("__konfig_alias_of__")
    names = tuple(n for n in (name, alias_of) if type(n) is str)
    return names or ("?",)


def _by_name(obj: Any, patterns: tuple[str, ...]) -> bool:
    module, _, qualname = object_name(obj).partition(":")
    return name_admitted(module, qualname, patterns)


def _refused_named(obj: Any, patterns: tuple[str, ...]) -> str | None:
    """None where `obj` is named by the policy (by identity), admitted by where it is defined, or a closure
    made by such a function; else its `module:qualname`."""
    if IdentityIndex.of(patterns).admits(obj) or _by_name(obj, patterns):
        return None
    if isinstance(obj, types.FunctionType):
        outer = enclosing_function(obj)  # `optax.linear_schedule(...)` returns a function it made
        if outer is not None and outer is not obj and _refused_named(outer, patterns) is None:
            return None
    return object_name(obj)


def _refused_format(method: Any, owner_type: type) -> str | None:
    if getattr(method, "__name__", None) in _FORMAT_METHODS:
        return f"{owner_type.__name__}.{method.__name__} (format strings read attributes of their arguments)"
    return None


# The patterns as the caller gave them (`["kd", "optax"]`), by their expansion: what messages show.
_SHOWN: dict[tuple[str, ...], tuple[str, ...]] = {}


def allowed_patterns(allowed: Iterable[str]) -> tuple[str, ...]:
    """`allowed=` checked and expanded into the patterns a policy matches (`_surfaces.expand_patterns`),
    remembered as given for messages (`shown`).

    Usage: `allowed_patterns(["optax", "mylib.*"])`; a str, or an item that is not one, is a `TypeError`.
    """
    if isinstance(allowed, str):
        raise TypeError("allowed= expects a list of module patterns, not a str")
    given = tuple(allowed)
    for pattern in given:
        if type(pattern) is not str:
            raise TypeError(f"allowed= expects module pattern strings, found {pattern!r}")
    patterns = expand_patterns(given)
    if len(_SHOWN) > 64:
        _SHOWN.clear()
    _SHOWN[patterns] = given
    return patterns


def shown(patterns: tuple[str, ...]) -> list[str]:
    """`allowed=` as given (bare package names, not their surfaces' entries), for messages."""
    return list(_SHOWN.get(patterns, patterns))
