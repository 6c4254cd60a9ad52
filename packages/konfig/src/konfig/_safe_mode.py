"""Safe mode: `konfig.resolve(cfg, allowed=[...])` for untrusted configs.

Before anything is imported or called, every `__qualname__` / `__const__`
reachable from the config (through references too) is checked against the
allow-list; all refused targets are reported at once. References can also
reach objects by attribute, item or call on built objects
(`cfg.ref.m.submodule.func()`); while resolving, every module, class or
function a reference reaches is checked too, before it is used
(`refused_object`).
"""

from __future__ import annotations

import fnmatch

from ._config_dict import CONST, QUALNAME, UNION_QUALNAME, ConfigDict
from ._errors import DisallowedTargetError
from ._paths import format_path
from ._refs import OpRef, PathRef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# Always allowed: `A | B` of captured types is stored as a call of this.
_BUILTIN_ALLOWED = frozenset({UNION_QUALNAME})

# Attribute names that lead from an allowed object to arbitrary code
# (`f.__globals__["os"]`, `gen.gi_frame.f_globals`, ...); refused in references.
_INTROSPECTION_ATTRS = frozenset(
    {
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "tb_frame",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "gi_code",
        "cr_code",
        "mro",
    }
)


def is_unsafe_attr(name: object) -> bool:
    """Dunder and frame/code attribute names, refused in references."""
    return type(name) is str and (name.startswith("__") or name in _INTROSPECTION_ATTRS)


def is_allowed(qualname: str, patterns: Iterable[str]) -> bool:
    """`"optax"` allows `optax` and its submodules; `"mylib.*"` is a glob on
    the dotted name; `"optax:adam"` allows exactly that target."""
    if qualname in _BUILTIN_ALLOWED:
        return True
    module = qualname.partition(":")[0]
    dotted = qualname.replace(":", ".")
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            if fnmatch.fnmatchcase(dotted, pattern) or fnmatch.fnmatchcase(module, pattern):
                return True
        elif ":" in pattern:
            if qualname == pattern:
                return True
        elif module == pattern or module.startswith(pattern + "."):
            return True
    return False


def refused_object(obj: Any, patterns: tuple[str, ...]) -> str | None:
    """The `module:qualname` of `obj` if it is a module, class or function
    outside `patterns` (methods count as their owner's), else None."""
    import types

    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        return None if is_allowed(name, patterns) else name
    if isinstance(obj, (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)):
        owner = getattr(obj, "__self__", None)
        if owner is None or isinstance(owner, types.ModuleType):
            return refused_object(owner, patterns) if owner is not None else _refused_named(obj, patterns)
        owner_type = owner if isinstance(owner, type) else type(owner)
        if owner_type.__module__ == "builtins":
            return None  # `"abc".upper`, `[1].index`: methods of plain values.
        return _refused_named(owner_type, patterns)
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        if isinstance(obj, type) and obj.__module__ == "builtins" and obj in _PLAIN_TYPES:
            return None
        return _refused_named(obj, patterns)
    return None


# Value types a reference may reach (`cfg.ref.x.__class__` is refused anyway).
_PLAIN_TYPES = frozenset(
    {bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset, slice, range}
)


def _refused_named(obj: Any, patterns: tuple[str, ...]) -> str | None:
    name = f"{getattr(obj, '__module__', None)}:{getattr(obj, '__qualname__', repr(obj))}"
    return None if is_allowed(name, patterns) else name


def check_allowed(cfg: Any, allowed: Iterable[str]) -> tuple[str, ...]:
    """Raises `DisallowedTargetError` listing every target outside `allowed`.

    Returns the patterns as a tuple.
    """
    if isinstance(allowed, str):
        raise TypeError("allowed= expects a list of module patterns, not a str")
    patterns = tuple(allowed)
    refused: dict[str, list[str]] = {}
    seen: set[int] = set()
    stack: list[tuple[Any, tuple[Any, ...]]] = [(cfg, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, ConfigDict):
            if id(value) in seen:
                continue
            seen.add(id(value))
            fields = value._fields
            for marker in (QUALNAME, CONST):
                target = fields.get(marker)
                if target is not None and not (type(target) is str and is_allowed(target, patterns)):
                    refused.setdefault(str(target), []).append(format_path(path))
            for key, child in reversed(fields.items()):
                if key != QUALNAME and key != CONST:
                    stack.append((child, (*path, key)))
        elif type(value) in (list, tuple, set, frozenset):
            if id(value) in seen:
                continue
            seen.add(id(value))
            stack.extend((child, (*path, i)) for i, child in enumerate(value))
        elif isinstance(value, PathRef):
            unsafe = [k for k in value._konfig_path if is_unsafe_attr(k)]
            if unsafe:
                refused.setdefault(f"reference attribute {unsafe[0]!r}", []).append(format_path(path))
            stack.append((value._konfig_root, (*path, "<ref root>")))
        elif isinstance(value, OpRef):
            if id(value) in seen:
                continue
            seen.add(id(value))
            args = value._konfig_args
            if value._konfig_op == "getattr" and is_unsafe_attr(args[1]):
                refused.setdefault(f"reference attribute {args[1]!r}", []).append(format_path(path))
            if (
                value._konfig_op == "call"
                and callable(args[0])
                and not isinstance(args[0], (ConfigDict, PathRef, OpRef))
            ):
                fn = args[0]
                name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
                if not is_allowed(name, patterns):
                    refused.setdefault(name, []).append(format_path(path) + " (ref_fn)")
                args = args[1:]
            stack.extend((a, path) for a in args)
            stack.extend((v, path) for v in value._konfig_kwargs.values())
    if refused:
        lines = [
            f"  {name}  (at {', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})"
            for name, paths in sorted(refused.items())
        ]
        raise DisallowedTargetError(
            f"Safe mode refused {len(refused)} target(s) outside allowed={list(patterns)!r};"
            " nothing was imported or called:\n" + "\n".join(lines)
        )
    return patterns
