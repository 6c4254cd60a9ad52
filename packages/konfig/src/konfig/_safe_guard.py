"""Safe mode's second layer: `Guard`, the one choke point every object passes while a safe resolve runs.

Every module imported, every object an import walks through, every callable called (call nodes, `ref_fn`,
methods called by references), every callable passed as an argument (`key=`, a partial's function), every
object a call node returns and every object a reference reads or computes is admitted by what it *is*
(`_safe_policy.refused_object`). Operations on plain values and their methods are bounded before they run
(`_safe_operations`), against a budget for the whole resolve (`_safe_budget`).

The guard of a resolve is the policy in force (`_policy`) while it runs (`enter` / `leave`): every nested
`konfig.resolve` (a target's own, kd's model building) checks against it too, and a sub-config handed
unresolved to an allowed callable keeps it (`Guard.hand_over`).

Usage: `guard = Guard(("optax",)); fn = guard.import_target("optax:adam"); args, kw = guard.admit_call(fn, (), {})`.
"""

from __future__ import annotations

import contextvars
import functools
import types
import weakref
from collections.abc import Mapping

from . import _policy
from ._admission import module_admitted, name_admitted
from ._config_dict import ConfigDict
from ._errors import DisallowedTargetError, TargetNotFoundError, safe_mode_refused
from ._placeholder import Placeholder
from ._refs import OpRef, PathRef
from ._safe_budget import Budget
from ._safe_operations import check_array_sizes, check_operation, plain_call
from ._safe_policy import (
    BUILTIN_ALLOWED,
    PLAIN_TYPES,
    is_allowed,
    is_unsafe_attr,
    module_names,
    refused_object,
    shown,
    unsafe_target_segment,
)
from ._targets import import_module, load_target, walk_attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CONTAINERS = (list, tuple, dict, set, frozenset)
_LEAVES = (bool, int, float, complex, str, bytes, type(None))


class Guard:
    """Safe mode's choke point: every object the resolver imports, calls or reads passes `admit`.

    A guard created while another is in force (`parent`) must be satisfied together with it: a
    nested resolve can narrow the policy, never widen it. All guards of one resolve share one budget
    of plain values created (`MAX_TOTAL_BYTES`) and one of the work done on them (`MAX_TOTAL_WORK`):
    a guard's `budget` is charged together with its parent's.

    Usage:
        guard = Guard(("optax",))
        adam = guard.import_target("optax:adam")  # refuses `json:codecs.builtins.eval` under ("json",)
        args, kwargs = guard.admit_call(adam, (1e-3,), {})
    """

    __slots__ = ("budget", "exact", "parent", "patterns")

    def __init__(self, patterns: tuple[str, ...], parent: Guard | None = None) -> None:
        self.patterns = patterns
        self.parent = parent
        # Objects imported by a target named exactly by an `"module:attr"` pattern: trusted as named.
        self.exact: dict[int, Any] = {}
        self.budget = Budget(parent.budget if parent is not None else None)

    def refuse(self, what: str) -> DisallowedTargetError:
        return DisallowedTargetError(f"safe mode refused {what} (outside allowed={shown(self.patterns)!r})")

    def admit(self, obj: Any) -> Any:
        """Returns `obj` if safe mode lets the resolver use, call or return it, else raises."""
        if id(obj) not in self.exact:
            name = refused_object(obj, self.patterns)
            if name is not None:
                # A `module:qualname` outside the list, or a reason (format methods, interpreter internals).
                raise safe_mode_refused(name) if " " in name else self.refuse(repr(name))
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
            raise safe_mode_refused(
                f"the target {qualname!r}: attribute {segment!r} is not reachable in safe mode"
            )
        if qualname in BUILTIN_ALLOWED or any(":" in p and p == qualname for p in self.patterns):
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
                        raise self.refuse(
                            f"{module_names(value)[0]!r}, which the target {qualname!r} leads to"
                        )
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
            raise safe_mode_refused(
                f"reference attribute {name!r} (dunder and frame attributes lead to arbitrary code)"
            )
        if type(name) is str and name.startswith("_") and not isinstance(obj, (Mapping, list, tuple)):
            raise safe_mode_refused(
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
            if callable(value) and type(value) not in PLAIN_TYPES:
                self.admit(value)
        check_array_sizes(fn, (*args, *kwargs.values()))
        owner = getattr(fn, "__self__", None)
        if (isinstance(fn, type) and fn in PLAIN_TYPES) or type(owner) in PLAIN_TYPES:
            return plain_call(fn, owner, list(args), dict(kwargs), self.budget)
        return list(args), dict(kwargs)

    def admit_op(self, op: str, args: list[Any]) -> None:
        """Before an operator on values: the work it reads charged, the result's size computed from the operands."""
        check_operation(op, args, self.budget)

    def admit_result(self, value: Any) -> Any:
        """After an operation or call on plain values: bounded size, counted in the budget, then `admit`."""
        self.budget.count_result(value)
        return self.admit(value)


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
