"""Safe mode: `konfig.resolve(cfg, allowed=[...])` for untrusted configs.

Two layers:

* `check_allowed`, before anything is imported or called: every `__qualname__` /
  `__const__` reachable from the config (through references, placeholders and
  plain dicts too) is matched against the allow-list and all refused targets are
  reported at once.
* `Guard`, while resolving: the one choke point every object passes through
  before the resolver uses it. Every module imported, every object an import
  walks through, every callable called (call nodes, `ref_fn`, methods called by
  references), every callable passed as an argument (`key=`, a partial's function),
  every object a call node returns and every object a reference reads or computes
  is checked by what it *is* (a function by its own module, a bound method by its
  function, a callable object by its type), not by a name that reached it. Plain
  values' methods that interpret format strings (`str.format`) are refused, codecs
  that would import a module are refused, and the size of what an operation or a
  plain value's method builds is computed from its operands *before* it runs
  (`"a" * 10**10`, `"x" * 30000 .join("y" * 30000)`, `"%s" * 1000 % ...`), against a
  per-result limit and a budget of bytes for the whole resolve; what each one reads (`read_size`:
  a thousand `big.count("ab")`, `==` of shared nests with 2**30 paths) against a budget of work.

The guard of a resolve is the policy in force (`_policy`) while it runs: every
nested `konfig.resolve` (a target's own, kd's model building) checks against it too.

Usage: `guard = Guard(("optax",)); fn = guard.import_target("optax:adam"); args, kw = guard.admit_call(fn, (), {})`.
"""

from __future__ import annotations

import contextvars
import encodings
import encodings.aliases
import functools
import inspect
import itertools
import re
import sys
import types
import weakref
from collections.abc import Mapping

from . import _policy
from ._admission import IdentityIndex, enclosing_function, module_admitted, name_admitted, target_admitted
from ._config_dict import CONST, QUALNAME, UNION_QUALNAME, ConfigDict, is_config_value
from ._errors import DisallowedTargetError, TargetNotFoundError, linked_path, shorten_path
from ._hash_spread import MAX_SAME_HASH, crowded_hash
from ._immutable_dict import ImmutableDict
from ._placeholder import Placeholder
from ._refs import BINARY_SYMBOLS, OpRef, PathRef
from ._surfaces import expand_patterns
from ._targets import import_module, load_target, walk_attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
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
    """Is the target `"module:Attr.sub"` (or a module name) admitted by `patterns`?

    Entries of declared surfaces (`"optax:*"`, `"kd.nn:Vit"`, `"!kd.xm:*"`) match names as a config
    imports them; older module patterns trust a whole module: `"mylib"` mylib and its submodules,
    `"mylib.*"` a glob on the dotted name; a pattern after `!` refuses what it matches even where
    another admits it (`["mylib", "!mylib.io"]`). Bare names of packages that declare a surface must
    have been expanded first (`_surfaces.expand_patterns`).
    """
    if qualname in _BUILTIN_ALLOWED:
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
    if t in _PLAIN_TYPES:
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
        if owner_type in _PLAIN_TYPES:
            return _refused_format(obj, owner_type)
        module, _, qualname = object_name(owner_type).partition(":")
        name = f"{module}:{qualname}.{getattr(obj, '__name__', '?')}"
        return None if name_admitted(module, name.partition(":")[2], patterns) else name
    if isinstance(obj, _DESCRIPTOR_TYPES):
        owner_type = getattr(obj, "__objclass__", None)
        if owner_type in _PLAIN_TYPES:
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


class Guard:
    """Safe mode's choke point: every object the resolver imports, calls or reads passes `admit`.

    A guard created while another is in force (`parent`) must be satisfied together with it: a
    nested resolve can narrow the policy, never widen it. All guards of one resolve share one budget
    of plain values created (`MAX_TOTAL_BYTES`) and one of the work done on them (`MAX_TOTAL_WORK`).

    Usage:
        guard = Guard(("optax",))
        adam = guard.import_target("optax:adam")  # refuses `json:codecs.builtins.eval` under ("json",)
        args, kwargs = guard.admit_call(adam, (1e-3,), {})
    """

    __slots__ = ("exact", "parent", "patterns", "spent", "worked")

    def __init__(self, patterns: tuple[str, ...], parent: Guard | None = None) -> None:
        self.patterns = patterns
        self.parent = parent
        # Objects imported by a target named exactly by an `"module:attr"` pattern: trusted as named.
        self.exact: dict[int, Any] = {}
        self.spent = 0  # estimated bytes of plain values created by operations and plain calls
        self.worked = 0  # bytes of plain values read by operations and plain calls (`read_size`)

    def refuse(self, what: str) -> DisallowedTargetError:
        return DisallowedTargetError(f"safe mode refused {what} (outside allowed={shown(self.patterns)!r})")

    @staticmethod
    def limit(what: str) -> DisallowedTargetError:
        return DisallowedTargetError(f"safe mode refused {what}")

    def admit(self, obj: Any) -> Any:
        """Returns `obj` if safe mode lets the resolver use, call or return it, else raises."""
        if id(obj) not in self.exact:
            name = refused_object(obj, self.patterns)
            if name is not None:
                # A `module:qualname` outside the list, or a reason (format methods, interpreter internals).
                raise self.limit(name) if " " in name else self.refuse(repr(name))
        if self.parent is not None:
            self.parent.admit(obj)
        return obj

    def admit_built(self, obj: Any) -> Any:
        """What a call node returns: the object and everything in the plain containers it is made of
        (a dict of functions from an allowed factory) are admitted, each container once."""
        self.admit(obj)
        if type(obj) not in _CONTAINERS:
            return obj
        seen: set[int] = set()
        stack = [obj]
        while stack:
            item = stack.pop()
            t = type(item)
            if t not in _CONTAINERS or id(item) in seen:
                if t not in _LEAVES:
                    self.admit(item)
                continue
            seen.add(id(item))
            stack.extend(item.items() if t is dict else item)
        return obj

    def hand_over(self, value: Any) -> Any:
        """Marks every config node of a field passed unresolved (`__konfig_resolve_exclude_fields__`)
        with this policy: the target that resolves it later, in any thread, resolves it under it.

        Returns the value to pass: plain dicts in it (which cannot carry a mark) become config nodes
        holding the same fields, as resolving them would make them.
        """
        value = _as_node(value)
        stack = [value]
        seen: set[int] = set()
        while stack:
            item = stack.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            t = type(item)
            if isinstance(item, ConfigDict):
                key = id(item)
                _policy.HANDED_OVER[key] = (weakref.ref(item, functools.partial(_forget, key)), self)
                fields = item._fields
                for k, child in fields.items():
                    if type(child) is dict:
                        fields[k] = _as_node(child)
                stack.extend(fields.values())
            elif t is list:
                item[:] = [_as_node(child) for child in item]
                stack.extend(item)
            elif t is tuple:
                stack.extend(item)
            elif t is Placeholder:
                stack.append(item.default)
            elif isinstance(item, PathRef):
                stack.append(item._konfig_root)
            elif isinstance(item, OpRef):
                stack.extend((*item._konfig_args, *item._konfig_kwargs.values()))
        return value

    def import_target(self, qualname: str) -> Any:
        """Imports `"module:attr.sub"`, admitting the module and every object on the way."""
        if self.parent is not None:
            self.parent.import_target(qualname)  # the outer policy must allow it too
        segment = unsafe_target_segment(qualname)
        if segment is not None:
            raise self.limit(f"the target {qualname!r}: attribute {segment!r} is not reachable in safe mode")
        if qualname in _BUILTIN_ALLOWED or any(":" in p and p == qualname for p in self.patterns):
            # Named exactly: the module and the target are trusted as named, the way to it unchecked.
            return self._trust(load_target(qualname, self._trust))
        if not is_allowed(qualname, self.patterns):
            raise self.refuse(repr(qualname))
        return self._walk(qualname)

    def _walk(self, qualname: str) -> Any:
        """Imports the longest admitted module of `qualname`, then walks its attributes: into a submodule
        only where the policy admits that module, to an object only where the policy names what is left
        (`kd:nn.Vit` walks into `kd.nn`, then takes `Vit`: named by `kd.nn:*`). Nothing outside the
        policy is imported or read."""
        module_name, _, attrs = qualname.partition(":")
        names = module_name.split(".")
        rest = attrs.split(".") if attrs else []
        module = None
        for cut in range(len(names), 0, -1):
            candidate = ".".join(names[:cut])
            if not module_admitted(candidate, self.patterns):
                continue
            try:
                module = import_module(candidate)
            except TargetNotFoundError as e:
                if getattr(e.__cause__, "name", None) == candidate and cut > 1:
                    continue  # no such module: the rest of the name is attributes
                raise
            rest = names[cut:] + rest
            break
        if module is None:
            raise self.refuse(f"the module {module_name!r} of the target {qualname!r}")
        entries = tuple(p for p in self.patterns if ":" in p)
        whole = tuple(p for p in self.patterns if ":" not in p or p.startswith("!"))
        current, current_names = module, module_names(module)
        for i, attr in enumerate(rest):
            remaining = ".".join(rest[i:])
            if any(name_admitted(n, remaining, entries) for n in current_names):
                return self._trust(walk_attrs(current, current_names[0], remaining))
            if any(module_admitted(f"{n}.{attr}", self.patterns) for n in current_names):
                value = walk_attrs(current, current_names[0], attr)
                if isinstance(value, types.ModuleType):
                    if not any(module_admitted(n, self.patterns) for n in module_names(value)):
                        raise self.refuse(f"{module_names(value)[0]!r}, which the target {qualname!r} leads to")
                    current, current_names = value, module_names(value)
                    continue
            if not any(module_admitted(n, whole) for n in current_names):
                raise self.refuse(f"{current_names[0]}:{remaining}, which the target {qualname!r} names")

            def admit_step(obj: Any) -> Any:  # a module trusted whole: every object on the way judged
                name = refused_object(obj, self.patterns)
                if name is not None:
                    raise self.refuse(f"{name!r}, which the target {qualname!r} leads to")
                return obj

            return self.admit(walk_attrs(current, current_names[0], remaining, admit_step))
        return self.admit(current)

    def _trust(self, obj: Any) -> Any:
        self.exact[id(obj)] = obj
        return obj

    def admit_getattr(self, obj: Any, name: Any) -> None:
        """Before `getattr(obj, name)` or `obj[name]` by a reference: the name must be safe."""
        if is_unsafe_attr(name):
            raise self.limit(
                f"reference attribute {name!r} (dunder and frame attributes lead to arbitrary code)"
            )
        if type(name) is str and name.startswith("_") and not isinstance(obj, (Mapping, list, tuple)):
            raise self.limit(
                f"reading {name!r} of a {type(obj).__name__} (a private attribute: its properties and methods are"
                " not what a config may use)"
            )

    def admit_call(
        self, fn: Any, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        """Before `fn(*args, **kwargs)`: returns the arguments to call it with.

        `fn` and every callable argument (a `key=`, a partial's function) are admitted by what they
        are; a plain value's method or constructor gets its result's size computed from its operands
        (and iterators it consumes read into a bounded list first) before it runs.
        """
        self.admit(fn)
        for value in (*args, *kwargs.values()):
            if callable(value) and type(value) not in _PLAIN_TYPES:
                self.admit(value)
        _check_array_sizes(fn, (*args, *kwargs.values()), self)
        owner = getattr(fn, "__self__", None)
        if (isinstance(fn, type) and fn in _PLAIN_TYPES) or type(owner) in _PLAIN_TYPES:
            return _plain_call(fn, owner, list(args), dict(kwargs), self)
        return list(args), dict(kwargs)

    def admit_op(self, op: str, args: list[Any]) -> None:
        """Before an operator on values: the work it reads charged, the result's size computed from the operands."""
        if len(args) != 2:
            return
        a, b = args
        ta, tb = type(a), type(b)
        # `==`, `<`, `%` read both operands whole; `x[key]` only hashes and compares the key.
        self.charge_read((b,) if op == "getitem" else args, lambda: _op_name(op, ta, tb))
        if op == "mul":
            if (tb is int and ta in _SEQUENCES) or (ta is int and tb in _SEQUENCES):
                seq, n = (a, b) if tb is int else (b, a)
                self.expect(type(seq), len(seq) * max(n, 0), f"{type(seq).__name__} * {n}", _char_width(seq))
            elif ta is int and tb is int:
                _check_bits(a.bit_length() + b.bit_length(), "int * int", self)
        elif op == "add" and ta is tb and ta in _SEQUENCES:
            self.expect(ta, len(a) + len(b), f"{ta.__name__} + {ta.__name__}", _char_width(a, b))
        elif op in ("or", "xor", "sub", "and") and ta in _SETS_AND_DICTS and tb in _SETS_AND_DICTS:
            self.expect(ta, len(a) + len(b), f"{ta.__name__} {op} {tb.__name__}")
        elif op == "pow":
            if ta is int and tb is int and b > 0 and abs(a) > 1:
                _check_bits(a.bit_length() * b, f"{a} ** {b}", self)
        elif op == "mod" and ta in (str, bytes):
            values = b.values() if tb is dict else b if tb is tuple else (b,)
            width = _char_width(a, *values)  # wider characters inside nested reprs: counted once built
            self.expect(ta, _percent_format_size(a, b, self), f"a %-format of a {ta.__name__}", width)

    def expect(self, kind: type, items: int, what: str, width: int = 1) -> None:
        """Refuses, before it is built, a result of `items` items, or one the resolve's budget cannot hold.

        A str's characters cost `width` bytes each (1, 2 or 4: its widest character's, as Python stores it).
        """
        if items > MAX_ITEMS:
            raise self.limit(f"{what}: it would hold {items:,} items (limit {MAX_ITEMS:,})")
        cost = items * _BYTES_PER_ITEM.get(kind, 8) * (width if kind is str else 1)
        guard: Guard | None = self
        while guard is not None:
            if guard.spent + cost > MAX_TOTAL_BYTES:
                raise self.limit(
                    f"{what}: the plain values this resolve creates would pass ~{MAX_TOTAL_BYTES >> 20} MB"
                    f" ({guard.spent >> 20} MB so far)"
                )
            guard = guard.parent

    def admit_result(self, value: Any) -> Any:
        """After an operation or call on plain values: bounded size, counted in the budget, then `admit`."""
        t = type(value)
        if t is int:
            if value.bit_length() > MAX_INT_BITS:
                raise self.limit(f"an int of {value.bit_length():,} bits (limit {MAX_INT_BITS:,})")
        elif t in _SIZED:
            size = len(value)
            width = _char_width(value) if t is str else 1
            self.expect(t, size, f"a {t.__name__} result", width)
            guard: Guard | None = self
            while guard is not None:
                guard.spent += size * _BYTES_PER_ITEM.get(t, 8) * width
                guard = guard.parent
        return self.admit(value)

    def charge_read(self, values: Any, what: Callable[[], str], times: int = 1) -> None:
        """Before an operation that reads `values` (`times` over: a sort's comparisons): their `read_size`
        counted in the resolve's work budget, refused past `MAX_TOTAL_WORK` (a thousand `big.count("ab")`).
        `what()` names the operation in the refusal."""
        guard: Guard | None = self
        done = 0
        while guard is not None:
            done = max(done, guard.worked)
            guard = guard.parent
        if set(map(type, values)) <= _READ_LEAVES:  # scalars and texts, the common case
            work = sum(map(sys.getsizeof, values)) * times
        else:
            work = read_size(values, (MAX_TOTAL_WORK - done) // times + 1) * times
        if done + work > MAX_TOTAL_WORK:
            raise self.limit(
                f"{what()}: the operations of this resolve would read more than {MAX_TOTAL_WORK >> 20:,} MB of"
                f" plain values in all ({done / 2**20:,.1f} MB so far; this one reads {work / 2**20:,.1f} MB"
                " or more)"
            )
        guard = self
        while guard is not None:
            guard.worked += work
            guard = guard.parent


_policy.install(contextvars.ContextVar("konfig_safe_mode_policy", default=None))


def enter(guard: Guard) -> contextvars.Token[Any]:
    """Puts `guard` in force for this context (`konfig.resolve` does, for its whole run)."""
    assert _policy.ACTIVE is not None
    return _policy.ACTIVE.set(guard)


def leave(token: contextvars.Token[Any]) -> None:
    assert _policy.ACTIVE is not None
    _policy.ACTIVE.reset(token)


def _as_node(value: Any) -> Any:
    return ConfigDict._raw(value, None) if type(value) is dict else value


def _forget(key: int, _: Any, handed_over: dict[int, Any] = _policy.HANDED_OVER) -> None:
    # `handed_over` is bound now: a node collected at interpreter exit finds this module's globals cleared.
    handed_over.pop(key, None)


_SEQUENCES = (str, bytes, list, tuple)
_CONTAINERS = (list, tuple, dict, set, frozenset)
_LEAVES = (bool, int, float, complex, str, bytes, type(None))
_SETS_AND_DICTS = (set, frozenset, dict)
_SIZED = (str, bytes, list, tuple, dict, set, frozenset, bytearray)
# What one item of a result costs (a character, a list slot and a new element, a hash table entry).
_BYTES_PER_ITEM: dict[type, int] = {
    str: 1,
    bytes: 1,
    bytearray: 1,
    list: 40,
    tuple: 40,
    set: 64,
    frozenset: 64,
    dict: 96,
}
# Estimated bytes of plain values one resolve may create by operations and plain calls.
MAX_TOTAL_BYTES = 256 * 1024 * 1024
# Bytes of plain values one resolve's operations and plain calls may read in all (`read_size`): about a
# a few seconds of scanning at worst (`str.count("ab")` reads ~2.5 ns a byte): ~100 reads of a 10 MB text.
MAX_TOTAL_WORK = 1024 * 1024 * 1024

# Values `read_size` takes at `sys.getsizeof` (the builtins' own, exact types only): a str at its width.
_READ_LEAVES = frozenset({bool, int, float, complex, str, bytes, bytearray, type(None)})
_READ_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, ImmutableDict})
_OTHER_READ = 64  # an object that is not a plain value: what it reads is its own methods' business
# Methods that read their arguments but not their owner (`d.get(key)` hashes the key only).
_OWNER_NOT_READ = frozenset(
    "append add get pop popitem setdefault discard keys values items insert clear".split()
)
# The header of a str that is not ASCII (its characters take 1, 2 or 4 bytes, and one more for the end).
_WIDE_STR_HEADER = sys.getsizeof("\xe9") - 2


def _op_name(op: str, ta: type, tb: type) -> str:
    if op == "mod" and ta in (str, bytes):
        return f"a %-format of a {ta.__name__}"
    return f"{ta.__name__} {BINARY_SYMBOLS.get(op, op)} {tb.__name__}"


def _char_width(*values: Any) -> int:
    """The bytes per character of a str holding the characters of the strs among `values`: 1, 2 or 4."""
    width = 1
    for value in values:
        if type(value) is str and not value.isascii():  # both O(1): the kind is read off its size
            kind = (sys.getsizeof(value) - _WIDE_STR_HEADER) // (len(value) + 1)
            width = max(width, kind if kind in (1, 2, 4) else 4)
    return width


def read_size(values: Any, limit: int) -> int:
    """Bytes a full read of `values` goes through, as `==`, `in`, `count`, hashing or sorting read them.

    Each plain value counts its own size (`sys.getsizeof`: a str's characters at their width), a container
    that and everything in it, a part shared by several places every time it is reached (a comparison of
    two copies reads it each time: `[x] * 1000 == [y] * 1000`); a `range` 8 bytes an item. Each distinct
    container is measured once (a chain of shared nodes with 2**30 paths takes 30 steps), and counting
    stops past `limit`.

    Usage: `read_size(("a" * 100, [1, 2]), 10**9)` is about 150 + 56 + 2 * 28.
    """
    total = 0
    memo: dict[int, int] = {}  # id of a container -> its size; -1 while its items are measured (a cycle)
    for value in values:
        t = type(value)
        if t in _READ_LEAVES:
            total += sys.getsizeof(value)
        elif t in _READ_CONTAINERS:
            size = _flat_read_size(value)
            total += size if size >= 0 else _container_read_size(value, memo, limit - total)
        elif t is range:  # `range(10**20).count(0.5)` iterates it
            n = _length(value)
            total += 8 * n if n <= MAX_ITEMS else limit + 1
        else:
            total += _OTHER_READ
        if total > limit:
            break
    return total


def _container_read_size(root: Any, memo: dict[int, int], limit: int) -> int:
    """`read_size` of one container: its containers measured first (a stack of its own), then added up."""
    stack = [root]
    while stack:
        item = stack[-1]
        key = id(item)
        if key not in memo:
            memo[key] = -1
            inner = [
                child
                for group in _read_groups(item)
                if not set(map(type, group)) <= _READ_LEAVES
                for child in group
                if type(child) in _READ_CONTAINERS and id(child) not in memo
            ]
            if inner:
                stack.extend(inner)
                continue
        stack.pop()
        if memo[key] == -1:
            memo[key] = _items_read_size(item, memo, limit)
    return max(memo[id(root)], 0)


def _flat_read_size(item: Any) -> int:
    """`read_size` of a container that holds only leaves (the common case, at C speed), else -1."""
    total = sys.getsizeof(item._data if type(item) is ImmutableDict else item)
    for group in _read_groups(item):
        if not set(map(type, group)) <= _READ_LEAVES:
            return -1
        total += sum(map(sys.getsizeof, group))
    return total


def _read_groups(item: Any) -> tuple[Any, ...]:
    """What a read of a container goes through: its items, a dict's keys and values."""
    t = type(item)
    if t is dict:
        return (item, item.values())
    if t is ImmutableDict:  # resolved config nodes (`freeze=True`), compared by their dicts
        return (item._data, item._data.values())
    return (item,)


def _items_read_size(item: Any, memo: dict[int, int], limit: int) -> int:
    """`read_size` of a container whose inner containers are measured already (`memo`)."""
    total = sys.getsizeof(item._data if type(item) is ImmutableDict else item)
    for group in _read_groups(item):
        if set(map(type, group)) <= _READ_LEAVES:  # the common case, at C speed
            total += sum(map(sys.getsizeof, group))
        else:
            for child in group:
                t = type(child)
                if t in _READ_LEAVES:
                    total += sys.getsizeof(child)
                elif t in _READ_CONTAINERS:
                    total += max(memo.get(id(child), 0), 0)  # 0: a cycle back (comparing it raises)
                else:
                    total += read_size((child,), limit)
                if total > limit:
                    return total
    return total


# Array libraries whose functions allocate what their arguments say (`jnp.ones((2**28,))`: 1 GB).
_ARRAY_MODULES = ("numpy", "jax.numpy", "jax._src.numpy", "jax.random", "jax._src.random", "jax._src.lax")
_COUNT_MODULES = ("numpy", "jax.numpy", "jax._src.numpy")  # where a lone int is a size (`jnp.arange(10**9)`)


def _check_array_sizes(fn: Any, values: tuple[Any, ...], guard: Guard) -> None:
    """Refuses, before the call, an array function given a shape (or, for numpy-like functions, a count) of
    more than MAX_ITEMS elements."""
    module = object_name(fn).partition(":")[0]
    if not module.startswith(_ARRAY_MODULES):
        return
    for value in values:
        t = type(value)
        if t is int and module.startswith(_COUNT_MODULES) and abs(value) > MAX_ITEMS:
            raise guard.limit(f"{object_name(fn)} with the size {value:,} (limit {MAX_ITEMS:,} elements)")
        if t in (tuple, list) and 0 < len(value) <= 64 and all(type(v) is int for v in value):
            elements = 1
            for v in value:
                elements *= max(v, 0)
                if elements > MAX_ITEMS:
                    raise guard.limit(
                        f"{object_name(fn)} with the shape {tuple(value)} (more than {MAX_ITEMS:,} elements)"
                    )


def _length(value: Any) -> int:
    """`len(value)` for a sized plain value; a `range` too long for `len` counts as unbounded."""
    try:
        return len(value)
    except OverflowError:
        return MAX_ITEMS + 1


def _check_bits(bits: int, what: str, guard: Guard) -> None:
    if bits > MAX_INT_BITS:
        raise guard.limit(f"{what}: the result would have ~{bits:,} bits (limit {MAX_INT_BITS:,})")


# Methods of plain values (and plain constructors) that consume an iterable argument: an iterator is read
# into a list first, at most MAX_ITEMS items, so its size is known before the method runs.
_CONSUMING = frozenset(
    {
        "join",
        "extend",
        "update",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "intersection_update",
        "difference_update",
        "symmetric_difference_update",
        "issubset",
        "issuperset",
        "isdisjoint",
        "fromkeys",
    }
)
_HASHING = frozenset({"update", "union", "symmetric_difference", "fromkeys", "intersection", "difference"})
_CASE_METHODS = frozenset({"upper", "lower", "casefold", "swapcase", "title", "capitalize"})
_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})
_SPLIT_METHODS = frozenset({"split", "rsplit", "splitlines", "partition", "rpartition"})


def _plain_call(
    fn: Any, owner: Any, args: list[Any], kwargs: dict[str, Any], guard: Guard
) -> tuple[list[Any], dict[str, Any]]:
    """Methods and constructors of plain values: arguments bounded, the result's size known before the call."""
    name = getattr(fn, "__name__", "?")
    constructor = isinstance(fn, type)
    for i, arg in enumerate(args):
        if _consumes(name, constructor, i, arg):
            args[i] = _bounded_list(arg, f"{name}() of a {type(arg).__name__}", guard)
    for arg in (*args, *kwargs.values()):
        if type(arg) is int and abs(arg) > MAX_ITEMS:
            raise guard.limit(f"{name}() with the size argument {arg:,} (limit {MAX_ITEMS:,})")
        if type(arg) in (range, *_SIZED):
            size = _length(arg)
            if size > MAX_ITEMS:
                raise guard.limit(
                    f"{name}() of a {type(arg).__name__}: it holds {size:,} items (limit {MAX_ITEMS:,})"
                )
    read = [*args, *kwargs.values()]
    if owner is not None and name not in _OWNER_NOT_READ:
        read.append(owner)
    # A sort compares each item ~log2(n) times; any other method reads its operands about once.
    times = max(_length(owner), 1).bit_length() if name == "sort" and type(owner) is list else 1
    guard.charge_read(
        read, lambda: f"{type(owner).__name__}.{name}()" if owner is not None else f"{name}()", times
    )
    if constructor:
        _expect_constructed(fn, args, kwargs, guard)
    elif type(owner) in (str, bytes):
        _expect_text_method(name, owner, args, kwargs, guard)
    elif type(owner) in (list, tuple, dict, set, frozenset):
        _expect_container_method(name, owner, args, guard)
    return args, kwargs


def _consumes(name: str, constructor: bool, index: int, arg: Any) -> bool:
    """Is `arg` an iterator (or other unsized iterable) that the call reads to its end?"""
    if type(arg) in (range, *_SIZED) or callable(arg) or not hasattr(type(arg), "__iter__"):
        return False
    if constructor:
        return index == 0 and not hasattr(type(arg), "keys")
    return name in _CONSUMING and not (name == "update" and hasattr(type(arg), "keys"))


def _bounded_list(iterable: Any, what: str, guard: Guard) -> list[Any]:
    items = list(itertools.islice(iter(iterable), MAX_ITEMS + 1))
    if len(items) > MAX_ITEMS:
        raise guard.limit(f"{what}: it yields more than {MAX_ITEMS:,} items")
    guard.expect(list, len(items), what)
    return items


def _check_hash_spread(values: Any, what: str, guard: Guard) -> None:
    crowded = crowded_hash(values)
    if crowded is not None:
        raise guard.limit(
            f"{what}: more than {MAX_SAME_HASH} distinct values share the hash of {_short_repr(crowded)}"
            " (a set or dict of them takes quadratic time)"
        )


def _short_repr(value: Any) -> str:
    text = repr(value) if type(value) in (int, float, bool, type(None)) else f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."


def _expect_constructed(fn: type, args: list[Any], kwargs: dict[str, Any], guard: Guard) -> None:
    """`str(x)`, `list(it)`, `set(it)`, `dict(pairs)`, `bytes(s, "idna")`: size, codec and hash spread checked."""
    first = args[0] if args else None
    if fn is str or fn is bytes:
        encoding = args[1] if len(args) > 1 else kwargs.get("encoding")
        if encoding is not None:
            _check_codec(encoding, guard)
            guard.expect(
                fn,
                10 * _length(first) + 4 if type(first) in _SIZED else 0,
                f"{fn.__name__}(..., {encoding!r})",
            )
        elif fn is str and args and type(first) is not str:
            guard.expect(str, _text_size(first, "r", guard), f"str() of a {type(first).__name__}")
        elif fn is bytes and type(first) in _SIZED:
            guard.expect(bytes, len(first), "bytes()")
    elif fn in (list, tuple, set, frozenset) and type(first) in (range, *_SIZED):
        guard.expect(fn, _length(first), f"{fn.__name__}() of a {type(first).__name__}")
        if fn in (set, frozenset):
            _check_hash_spread(first, f"{fn.__name__}()", guard)
    elif fn is dict and args and type(first) in _SIZED:
        guard.expect(dict, len(first) + len(kwargs), "dict()")
        if type(first) is not dict:
            _check_hash_spread(
                (pair[0] for pair in first if type(pair) in (tuple, list) and pair), "dict()", guard
            )


def _expect_text_method(
    name: str, owner: str | bytes, args: list[Any], kwargs: dict[str, Any], guard: Guard
) -> None:
    """The size of what a str / bytes method returns, computed before it runs."""
    kind, n = type(owner), len(owner)
    what = f"{kind.__name__}.{name}"
    if name == "join" and args and type(args[0]) in _SIZED:
        items = args[0]
        k = len(items)
        if type(items) in (str, bytes):  # the items are its characters (bytes.join of bytes raises itself)
            joined, width = k, _char_width(owner, items)
        else:
            texts = [x for x in (items.keys() if type(items) is dict else items) if type(x) in (str, bytes)]
            joined, width = sum(map(len, texts)), _char_width(owner, *texts)
        guard.expect(kind, n * max(k - 1, 0) + joined, what, width)
    elif name == "replace" and len(args) >= 2 and type(args[0]) is kind and type(args[1]) is kind:
        old, new = args[0], args[1]
        count = owner.count(old) if old else n + 1
        if len(args) > 2 and type(args[2]) is int and args[2] >= 0:
            count = min(count, args[2])
        guard.expect(kind, n + count * max(len(new) - len(old), 0), what, _char_width(owner, new))
    elif name == "translate" and args:
        width = 4 if kind is str and type(args[0]) is not str else _char_width(owner, args[0])
        guard.expect(kind, n * _largest_replacement(args[0], what, guard), what, width)
    elif name == "expandtabs":
        tab = args[0] if args and type(args[0]) is int else kwargs.get("tabsize", 8)
        tabs = owner.count("\t" if kind is str else b"\t")
        grown = n + tabs * max(tab if type(tab) is int else 8, 0)
        guard.expect(kind, grown, f"{what}({tab})", _char_width(owner))
    elif name in _WIDTH_METHODS and args and type(args[0]) is int:
        guard.expect(kind, max(n, args[0]), what, _char_width(owner, *args[1:2]))
    elif name in _CASE_METHODS:  # only Latin-1 characters change width, to 2 bytes (`"ÿ".upper()` is `"Ÿ"`)
        width = _char_width(owner)
        guard.expect(kind, 3 * n, what, width if width > 1 or kind is not str or owner.isascii() else 2)
    elif name in _SPLIT_METHODS:
        guard.expect(list, n + 1, what)
    elif name in ("encode", "decode"):
        encoding = args[0] if args else kwargs.get("encoding")
        if encoding is not None:
            _check_codec(encoding, guard)
        guard.expect(bytes if name == "encode" else str, 10 * n + 4, what)
    elif name == "hex":
        guard.expect(str, 3 * n, what)


def _expect_container_method(name: str, owner: Any, args: list[Any], guard: Guard) -> None:
    """The size of what a list / tuple / dict / set method builds, and the hash spread of what it hashes."""
    kind, n = type(owner), len(owner)
    what = f"{kind.__name__}.{name}"
    sized = [a for a in args if type(a) in (range, *_SIZED)]
    if name in (
        "extend",
        "update",
        "union",
        "symmetric_difference",
        "fromkeys",
        "copy",
        "intersection",
        "difference",
    ):
        added = sum(_length(a) for a in sized)
        guard.expect(kind, (0 if name == "fromkeys" else n) + added, what)
        if name in _HASHING and kind in _SETS_AND_DICTS:
            for arg in sized:
                _check_hash_spread(arg, what, guard)


def _largest_replacement(table: Any, what: str, guard: Guard) -> int:
    """The longest text one character can become under a translate table (at least 1)."""
    t = type(table)
    if t in (str, bytes, type(None)):
        return 1
    if t is dict:
        values: Any = table.values()
    elif t in (list, tuple):
        values = table
    else:
        raise guard.limit(
            f"{what} with a table of type {t.__name__} (safe mode takes a dict, str, list or tuple)"
        )
    return max([1, *(len(v) for v in values if type(v) in (str, bytes))])


# `%[(key)][flags][width][.precision][length]conversion`: a width or precision of `*` comes from the arguments.
_PERCENT_FIELD = re.compile(rb"%(?:\(([^)]*)\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.?)")


def _percent_format_size(template: str | bytes, values: Any, guard: Guard) -> int:
    """An upper bound on `len(template % values)`, computed without formatting anything."""
    text = template.encode("utf-8", "surrogatepass") if type(template) is str else template
    size = len(text)
    positional = iter(values if type(values) is tuple else (values,))
    mapping = values if type(values) is dict else None
    for match in _PERCENT_FIELD.finditer(text):
        key, width, precision, conversion = match.groups()
        for number in (width, precision):
            if number == b"*":
                raise guard.limit("a `%*` width taken from the arguments in a %-format")
            if number and (len(number) > 8 or int(number) > MAX_ITEMS):
                raise guard.limit(f"a %-format width of {number.decode()} (limit {MAX_ITEMS:,})")
        if conversion == b"%":
            continue
        if key is not None and mapping is not None:
            value = mapping.get(key.decode("utf-8", "replace"))
        else:
            value = next(positional, None)
        field = _text_size(value, conversion.decode("ascii", "replace"), guard)
        size += max(int(width or 0), field + int(precision or 0))
        if size > MAX_ITEMS:
            break
    return size


def _text_size(value: Any, conversion: str, guard: Guard) -> int:
    """An upper bound on the length of `str(value)` (`conversion` "s") or `repr(value)` ("r", "a"), or of a
    number's digits; stops counting past MAX_ITEMS. Objects that are not plain values count as 64."""
    total = 0
    stack = [(value, conversion)]
    while stack and total <= MAX_ITEMS:
        item, conv = stack.pop()
        t = type(item)
        if t is str:
            total += len(item) if conv == "s" else 10 * len(item) + 2
        elif t is bytes:
            total += 4 * len(item) + 3
        elif t is int:
            total += item.bit_length() // 3 + 2
        elif t in (float, complex):
            total += 330 if conv not in "sra" else 64
        elif t in (list, tuple, set, frozenset):
            total += 2 + 2 * len(item)
            stack.extend((x, "r") for x in item)
        elif t is dict:
            total += 2 + 4 * len(item)
            stack.extend((x, "r") for pair in item.items() for x in pair)
        else:
            total += 64
    return total


# Codecs the interpreter encodes and decodes without looking anything up (nothing is imported for them).
_BUILTIN_CODECS = frozenset(
    {"utf_8", "utf8", "ascii", "us_ascii", "latin_1", "latin1", "iso_8859_1", "iso8859_1", "utf_16", "utf_32"}
)


def _check_codec(encoding: Any, guard: Guard) -> None:
    """A codec whose module is not loaded yet would be imported (`"idna"` imports `stringprep`, `unicodedata`)."""
    if type(encoding) is not str:
        return  # the call raises TypeError itself
    normalized = encodings.normalize_encoding(encoding).lower()
    if normalized in _BUILTIN_CODECS:
        return
    module = encodings.aliases.aliases.get(normalized, normalized)
    if f"encodings.{module}" not in sys.modules:
        raise guard.limit(
            f"the codec {encoding!r}: its module encodings.{module} is not loaded, and safe mode imports"
            " nothing outside allowed="
        )


# The patterns as the caller gave them (`["kd", "optax"]`), by their expansion: what messages show.
_SHOWN: dict[tuple[str, ...], tuple[str, ...]] = {}


def shown(patterns: tuple[str, ...]) -> list[str]:
    """`allowed=` as given (bare package names, not their surfaces' entries), for messages."""
    return list(_SHOWN.get(patterns, patterns))


def check_allowed(cfg: Any, allowed: Iterable[str] | None, within: Guard | None = None) -> tuple[str, ...]:
    """Raises `DisallowedTargetError` listing every target outside `allowed` (and outside `within`'s
    patterns, the policy already in force), before anything is imported or called.

    Returns the patterns as a tuple (`within`'s when `allowed` is None). Walks the config once, each
    container once, in time and memory linear in its size whatever its depth.
    """
    if allowed is None:
        if within is None:
            raise TypeError("check_allowed needs allowed= or a policy in force")
        patterns = within.patterns
    else:
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
    policies = [patterns]
    guard = within
    while guard is not None:
        policies.append(guard.patterns)
        guard = guard.parent
    refused: dict[str, list[Any]] = {}

    def refuse(name: str, link: Any, suffix: str = "") -> None:
        places = refused.setdefault(name, [])
        if len(places) < 4:
            places.append((link, suffix))

    def outside(target: str) -> bool:
        return any(not is_allowed(target, p) for p in policies)

    seen: set[int] = set()
    # Each entry: (value, link), where a link is (parent link, key) or None for the root: paths are
    # spelled out only for the few refusals reported.
    stack: list[tuple[Any, Any]] = [(cfg, None)]
    while stack:
        value, link = stack.pop()
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
                    refuse(repr(target), link)
                elif outside(target):
                    refuse(target, link)
                elif (segment := unsafe_target_segment(target)) is not None:
                    refuse(f"{target} (attribute {segment!r})", link)
            for key, child in reversed(fields.items()):
                if key != QUALNAME and key != CONST:
                    stack.append((child, (link, key)))
        elif t in (list, tuple, set, frozenset):
            if id(value) in seen:
                continue
            seen.add(id(value))
            stack.extend((child, (link, i)) for i, child in enumerate(value))
        elif t is Placeholder:
            stack.append((value.default, link))
        elif isinstance(value, PathRef):
            unsafe = [k for k in value._konfig_path if is_unsafe_attr(k)]
            if unsafe:
                refuse(f"reference attribute {unsafe[0]!r}", link)
            stack.append((value._konfig_root, (link, "<ref root>")))
        elif isinstance(value, OpRef):
            if id(value) in seen:
                continue
            seen.add(id(value))
            args = value._konfig_args
            if value._konfig_op == "getattr" and len(args) > 1 and is_unsafe_attr(args[1]):
                refuse(f"reference attribute {args[1]!r}", link)
            if value._konfig_op == "call" and args and callable(args[0]) and not is_config_value(args[0]):
                for policy in policies:
                    name = refused_object(args[0], policy)
                    if name is not None:
                        refuse(name, link, " (ref_fn)")
                        break
                args = args[1:]
            stack.extend((a, link) for a in args)
            stack.extend((v, link) for v in value._konfig_kwargs.values())
    if refused:
        lines = []
        for name, places in sorted(refused.items()):
            where = [shorten_path(linked_path(link)) + suffix for link, suffix in places[:3]]
            lines.append(f"  {name}  (at {', '.join(where)}{', ...' if len(places) > 3 else ''})")
        outer = f" and the policy in force ({shown(policies[1])!r})" if len(policies) > 1 else ""
        raise DisallowedTargetError(
            f"Safe mode refused {len(refused)} target(s) outside allowed={shown(patterns)!r}{outer};"
            " nothing was imported or called:\n" + "\n".join(lines)
        )
    return patterns
