"""Safe mode: `konfig.resolve(cfg, allowed=[...])` for untrusted configs.

Two layers:

* `check_allowed`, before anything is imported or called: every `__qualname__` /
  `__const__` reachable from the config (through references, placeholders and
  plain dicts too) is matched against the allow-list and all refused targets are
  reported at once.
* `Guard`, while resolving: the one choke point every object passes through
  before the resolver uses it. Every module imported, every object an import
  walks through, every callable called (call nodes, `ref_fn`, methods called by
  references) and every object a reference reads or computes is checked by what
  it *is* (`obj.__module__` / `obj.__qualname__`, a method by its owner's type),
  not by the name that reached it; plain values' methods that interpret format
  strings (`str.format`) are refused, and operations on plain values are bounded
  in size (`"a" * 10**10`, `10 ** 10**8`).

Usage: `guard = Guard(("optax",)); fn = guard.import_target("optax:adam"); guard.admit_call(fn, (), {})`.
"""

from __future__ import annotations

import fnmatch
import re
import types

from ._config_dict import CONST, QUALNAME, UNION_QUALNAME, ConfigDict
from ._errors import DisallowedTargetError, TargetNotFoundError
from ._paths import format_path
from ._placeholder import Placeholder
from ._refs import OpRef, PathRef
from ._targets import import_module, walk_attrs

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
_PLAIN_TYPES = frozenset(
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

# Bounds on what operations on plain values may produce in safe mode.
MAX_ITEMS = 10_000_000  # characters of a str/bytes, items of a container
MAX_INT_BITS = 10_000  # ~3,000 decimal digits


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

    Modules, classes and functions are checked by their own name; methods by
    their owner (a module for C functions like `os.system`, else the owner's
    type); any other callable by the name it carries (a jitted function's
    `__module__`/`__qualname__`), else by its type (`functools.partial`).
    Plain values and their methods pass, except the format-string methods;
    other data passes (it may be read, and what is read from it is checked).
    """
    if isinstance(obj, types.ModuleType):
        name = object_name(obj)
        return None if is_allowed(name, patterns) else name
    if isinstance(obj, _METHOD_TYPES):
        owner = getattr(obj, "__self__", None)
        if owner is None:
            return _refused_named(obj, patterns)
        if isinstance(owner, types.ModuleType):  # A C function (`os.system` is `posix:system`).
            name = f"{object_name(owner)}:{getattr(obj, '__qualname__', '?')}"
            return None if is_allowed(name, patterns) else name
        owner_type = owner if isinstance(owner, type) else type(owner)
        if owner_type in _PLAIN_TYPES:
            return _refused_format(obj, owner_type)
        return _refused_named(owner_type, patterns)
    if isinstance(obj, _DESCRIPTOR_TYPES):
        owner_type = getattr(obj, "__objclass__", None)
        if owner_type in _PLAIN_TYPES:
            return _refused_format(obj, owner_type)
        return _refused_named(owner_type if owner_type is not None else obj, patterns)
    if isinstance(obj, type):
        return None if obj in _PLAIN_TYPES else _refused_named(obj, patterns)
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return _refused_named(obj, patterns)
    if isinstance(obj, _INTERNAL_TYPES):
        return f"{type(obj).__name__} object (interpreter internals)"
    if callable(obj) and type(obj) not in _PLAIN_TYPES:
        return _refused_named(obj, patterns)  # functools.partial(os.system, ...), a callable object
    return None


def _refused_named(obj: Any, patterns: tuple[str, ...]) -> str | None:
    name = object_name(obj)
    return None if is_allowed(name, patterns) else name


def _refused_format(method: Any, owner_type: type) -> str | None:
    if getattr(method, "__name__", None) in _FORMAT_METHODS:
        return f"{owner_type.__name__}.{method.__name__} (format strings read attributes of their arguments)"
    return None


class Guard:
    """Safe mode's choke point: every object the resolver imports, calls or reads passes `admit`.

    Usage:
        guard = Guard(("optax",))
        adam = guard.import_target("optax:adam")  # refuses `json:codecs.builtins.eval` under ("json",)
        guard.admit_call(adam, (1e-3,), {})
    """

    __slots__ = ("exact", "patterns")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        # Objects imported by a target named exactly by an `"module:attr"` pattern: trusted as named.
        self.exact: dict[int, Any] = {}

    def refuse(self, what: str) -> DisallowedTargetError:
        return DisallowedTargetError(f"safe mode refused {what} (outside allowed={list(self.patterns)!r})")

    @staticmethod
    def limit(what: str) -> DisallowedTargetError:
        return DisallowedTargetError(f"safe mode refused {what}")

    def admit(self, obj: Any) -> Any:
        """Returns `obj` if safe mode lets the resolver use, call or return it, else raises."""
        if id(obj) in self.exact:
            return obj
        name = refused_object(obj, self.patterns)
        if name is not None:
            # A `module:qualname` outside the list, or a reason (format methods, interpreter internals).
            raise self.limit(name) if " " in name else self.refuse(repr(name))
        return obj

    def import_target(self, qualname: str) -> Any:
        """Imports `"module:attr.sub"`, admitting the module and every object on the way."""
        segment = unsafe_target_segment(qualname)
        if segment is not None:
            raise self.limit(f"the target {qualname!r}: attribute {segment!r} is not reachable in safe mode")
        exact = qualname in _BUILTIN_ALLOWED or any(":" in p and p == qualname for p in self.patterns)
        module_name, sep, attrs = qualname.partition(":")
        if not exact and not is_allowed(module_name, self.patterns):
            raise self.refuse(f"the module {module_name!r} of the target {qualname!r}")
        if not sep:  # `"optax.adam"`: the module `optax.adam`, else attribute `adam` of `optax`.
            try:
                return self._trust(import_module(module_name), exact)
            except TargetNotFoundError:
                if "." not in module_name:
                    raise
            module_name, _, attrs = module_name.rpartition(".")
        module = self._trust(import_module(module_name), exact)
        if exact:
            return self._trust(walk_attrs(module, module_name, attrs), exact)

        def admit_step(obj: Any) -> Any:
            name = refused_object(obj, self.patterns)
            if name is not None:
                raise self.refuse(f"{name!r}, which the target {qualname!r} leads to")
            return obj

        return walk_attrs(module, module_name, attrs, admit_step)

    def _trust(self, obj: Any, exact: bool) -> Any:
        if exact:
            self.exact[id(obj)] = obj
            return obj
        return self.admit(obj)

    def admit_getattr(self, obj: Any, name: Any) -> None:
        """Before `getattr(obj, name)` or `obj[name]` by a reference: the name must be safe."""
        if is_unsafe_attr(name):
            raise self.limit(
                f"reference attribute {name!r} (dunder and frame attributes lead to arbitrary code)"
            )

    def admit_call(self, fn: Any, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> None:
        """Before `fn(*args, **kwargs)`: `fn` is allowed, and plain callables get bounded arguments."""
        self.admit(fn)
        owner = getattr(fn, "__self__", None)
        if (isinstance(fn, type) and fn in _PLAIN_TYPES) or type(owner) in _PLAIN_TYPES:
            _check_plain_call(fn, owner, (*args, *kwargs.values()), self)

    def admit_op(self, op: str, args: list[Any]) -> None:
        """Before an operator on values: bounded results (`"a" * 10**10`, `10 ** 10**8`, `"%*d"`)."""
        if op == "mul" and len(args) == 2:
            a, b = args
            if (type(b) is int and _is_sequence(a)) or (type(a) is int and _is_sequence(b)):
                seq, n = (a, b) if type(b) is int else (b, a)
                _check_count(len(seq) * max(n, 0), f"{type(seq).__name__} * {n}", self)
            elif type(a) is int and type(b) is int:
                _check_bits(a.bit_length() + b.bit_length(), "int * int", self)
        elif op == "pow" and len(args) == 2:
            base, exponent = args
            if type(base) is int and type(exponent) is int and exponent > 0 and abs(base) > 1:
                _check_bits(base.bit_length() * exponent, f"{base} ** {exponent}", self)
        elif op == "mod" and len(args) == 2 and type(args[0]) in (str, bytes):
            _check_format(args[0], self)

    def admit_result(self, value: Any) -> Any:
        """After an operation or call on plain values: bounded size, then `admit`."""
        t = type(value)
        if t is int:
            if value.bit_length() > MAX_INT_BITS:
                raise self.limit(f"an int of {value.bit_length():,} bits (limit {MAX_INT_BITS:,})")
        elif t in (str, bytes, list, tuple, dict, set, frozenset, bytearray):
            _check_count(len(value), f"a {t.__name__} result", self)
        return self.admit(value)


def _is_sequence(value: Any) -> bool:
    return type(value) in (str, bytes, list, tuple)


def _check_count(count: int, what: str, guard: Guard) -> None:
    if count > MAX_ITEMS:
        raise guard.limit(f"{what}: it would hold {count:,} items (limit {MAX_ITEMS:,})")


def _check_bits(bits: int, what: str, guard: Guard) -> None:
    if bits > MAX_INT_BITS:
        raise guard.limit(f"{what}: the result would have ~{bits:,} bits (limit {MAX_INT_BITS:,})")


def _check_plain_call(fn: Any, owner: Any, args: tuple[Any, ...], guard: Guard) -> None:
    """Methods and constructors of plain values: no argument may ask for more than `MAX_ITEMS`."""
    name = getattr(fn, "__name__", "?")
    for arg in args:
        if type(arg) is int and abs(arg) > MAX_ITEMS:
            raise guard.limit(f"{name}() with the size argument {arg:,} (limit {MAX_ITEMS:,})")
        if type(arg) in (range, str, bytes, list, tuple, dict, set, frozenset):
            _check_count(len(arg), f"{name}() of a {type(arg).__name__}", guard)
    if owner is None or not _is_sequence(owner):
        return
    size = len(owner)
    if name == "expandtabs":
        tab = args[0] if args and type(args[0]) is int else 8
        _check_count(size * max(tab, 1), f"{type(owner).__name__}.expandtabs({tab})", guard)
    elif name == "replace" and len(args) >= 2 and _is_sequence(args[1]):
        _check_count(size + (size + 1) * len(args[1]), f"{type(owner).__name__}.replace", guard)
    elif name == "join" and args and type(args[0]) in (list, tuple):
        items = args[0]
        total = size * len(items) + sum(len(x) for x in items if _is_sequence(x))
        _check_count(total, f"{type(owner).__name__}.join", guard)


# `%[(key)][flags][width][.precision]`: a width or precision of `*` comes from the arguments.
_PERCENT_FIELD = re.compile(rb"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_format(template: str | bytes, guard: Guard) -> None:
    text = template.encode("utf-8", "surrogatepass") if type(template) is str else template
    for match in _PERCENT_FIELD.finditer(text):
        for number in match.groups():
            if number is None:
                continue
            if number == b"*":
                raise guard.limit("a `%*` width taken from the arguments in a %-format")
            if len(number) > 8 or int(number) > MAX_ITEMS:
                raise guard.limit(f"a %-format width of {number.decode()} (limit {MAX_ITEMS:,})")


def check_allowed(cfg: Any, allowed: Iterable[str]) -> tuple[str, ...]:
    """Raises `DisallowedTargetError` listing every target outside `allowed`.

    Returns the patterns as a tuple.
    """
    if isinstance(allowed, str):
        raise TypeError("allowed= expects a list of module patterns, not a str")
    patterns = tuple(allowed)
    for pattern in patterns:
        if type(pattern) is not str:
            raise TypeError(f"allowed= expects module pattern strings, found {pattern!r}")
    refused: dict[str, list[str]] = {}
    seen: set[int] = set()
    stack: list[tuple[Any, tuple[Any, ...]]] = [(cfg, ())]
    while stack:
        value, path = stack.pop()
        t = type(value)
        if isinstance(value, ConfigDict) or t is dict:
            if id(value) in seen:
                continue
            seen.add(id(value))
            fields = value._fields if t is not dict else value
            for marker in (QUALNAME, CONST):
                target = fields.get(marker)
                if target is None and marker not in fields:
                    continue
                if type(target) is not str:
                    refused.setdefault(repr(target), []).append(format_path(path))
                elif not is_allowed(target, patterns):
                    refused.setdefault(target, []).append(format_path(path))
                elif (segment := unsafe_target_segment(target)) is not None:
                    refused.setdefault(f"{target} (attribute {segment!r})", []).append(format_path(path))
            for key, child in reversed(fields.items()):
                if key != QUALNAME and key != CONST:
                    stack.append((child, (*path, key)))
        elif t in (list, tuple, set, frozenset):
            if id(value) in seen:
                continue
            seen.add(id(value))
            stack.extend((child, (*path, i)) for i, child in enumerate(value))
        elif t is Placeholder:
            stack.append((value.default, path))
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
            if value._konfig_op == "getattr" and len(args) > 1 and is_unsafe_attr(args[1]):
                refused.setdefault(f"reference attribute {args[1]!r}", []).append(format_path(path))
            if (
                value._konfig_op == "call"
                and args
                and callable(args[0])
                and not isinstance(args[0], (ConfigDict, PathRef, OpRef))
            ):
                name = refused_object(args[0], patterns)
                if name is not None:
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
