"""`konfig.resolve`: build the objects a config describes, bottom-up."""

from __future__ import annotations

from collections.abc import Mapping

from ._config_dict import CONST, LEAF_TYPES, QUALNAME, ConfigDict, stored_item
from ._errors import (
    CycleError,
    DisallowedTargetError,
    MissingValueError,
    ResolveError,
    did_you_mean,
    linked_path,
    resolve_error,
    shorten_path,
)
from ._immutable_dict import ImmutableDict, register_pytree_if_jax_imported
from ._json_decode import decode
from ._keys import is_positional_key
from ._paths import format_path
from ._placeholder import Placeholder
from ._policy import current_policy, handed_over_policy
from ._refs import OPS, OpRef, PathRef, Ref, ref_repr
from ._signature import display_name
from ._targets import import_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from ._safe_mode import Guard


class _Failure(Exception):
    """Internal: unwinds to `resolve`, collecting the path on the way."""

    def __init__(self, message: str, cause: BaseException | None, origin: Any = None) -> None:
        self.message = message
        self.cause = cause
        self.origin = origin
        self.path: list[Any] = []  # reversed
        self.cycle_id: int | None = None
        self.cycle_len: int | None = None
        self.via: list[str] = []  # references followed, innermost first
        self.error_type: type[ResolveError] = ResolveError


class _MissingRequired(_Failure):
    pass


class _Resolver:
    __slots__ = ("active", "built", "freeze", "guard", "keepalive")

    def __init__(self, freeze: bool, guard: Guard | None = None) -> None:
        self.freeze = freeze
        self.guard = guard  # Safe mode: every object imported, called or read passes `guard`.
        self.built: dict[int, Any] = {}
        self.active: set[int] = set()
        self.keepalive: list[ConfigDict] = []

    def value(self, v: Any) -> Any:
        t = type(v)
        if t in LEAF_TYPES:
            return v
        if t is ConfigDict:
            try:
                return self.built[id(v)]
            except KeyError:
                return self.node(v)
        if t is list or t is tuple:
            vid = id(v)
            if t is list:  # Shared lists stay shared; a list containing itself is a cycle.
                done = self.built.get(vid)
                if done is not None:
                    return done
                if vid in self.active:
                    raise _cycle_failure(vid, None)
                self.active.add(vid)
            out: list[Any] = []
            append = out.append
            for i, item in enumerate(v):
                ti = type(item)
                if ti in LEAF_TYPES:
                    append(item)
                    continue
                try:
                    append(self.value(item))
                except _Failure as f:
                    self._unwind(f, i, vid)
                    raise
            if t is tuple:
                return tuple(out)
            self.active.discard(vid)
            result = tuple(out) if self.freeze else out
            self.built[vid] = result
            return result
        if isinstance(v, Ref):
            try:
                return self.built[id(v)]
            except KeyError:
                return self.ref(v)
        if t is Placeholder:
            if v.required:
                raise _MissingRequired("required value is unset", None)
            return self.value(v.default)
        if isinstance(v, ConfigDict):
            return self.node(v)
        # Values that bypassed `ConfigDict` validation (e.g. `cfg.items.append(x)`).
        if t is dict:
            node = ConfigDict._raw(v, None)
        else:
            as_const = getattr(t, "_konfig_as_const", None)
            if as_const is None:
                return v
            node = as_const(v)
        self.keepalive.append(node)  # Its id() keys `built` until resolve returns.
        return self.node(node)

    def node(self, v: ConfigDict) -> Any:
        """Builds a node once: a dict of its fields, its `__const__`'s object, or its target called.

        Both field loops stay here, not in helpers: a level of nesting then costs two frames (`value`
        and `node`), which sets how deep a config can nest within Python's recursion limit.
        """
        vid = id(v)
        if vid in self.active:
            raise _cycle_failure(vid, v._origin)  # A cycle back to this node.
        fields = v._fields
        qualname = fields.get(QUALNAME)
        if qualname is None:
            const = fields.get(CONST)
            if const is not None:
                obj = self.target(const, v)
                self.built[vid] = obj
                return obj
            out: dict[Any, Any] = {}
            self.active.add(vid)
            for key, item in fields.items():
                if type(item) in LEAF_TYPES:
                    out[key] = item
                    continue
                try:
                    out[key] = self.value(item)
                except _Failure as f:
                    self._unwind(f, key, vid)
                    raise
            self.active.discard(vid)
            result: Any = ImmutableDict._wrap(out) if self.freeze else out
            self.built[vid] = result
            return result

        target = self.target(qualname, v)
        exclude = getattr(target, "__konfig_resolve_exclude_fields__", ())
        if exclude and self.guard is not None:
            _hand_over(self.guard, fields, exclude)
        positional: dict[int, Any] = {}
        kwargs: dict[str, Any] = {}
        self.active.add(vid)
        for key, item in fields.items():
            if key == QUALNAME:
                continue
            if type(item) not in LEAF_TYPES and key not in exclude:
                try:
                    item = self.value(item)
                except _Failure as f:
                    self._unwind(f, _arg_key(key), vid)
                    raise
            if type(key) is str and key.isdigit():
                if not is_positional_key(key):
                    raise _positional_key_failure(key, v._origin)
                positional[int(key)] = item
            else:
                kwargs[key] = item
        self.active.discard(vid)
        obj = self.call(target, qualname, positional, kwargs, v)
        self.built[vid] = obj
        return obj

    def call(
        self, target: Any, qualname: str, positional: dict[int, Any], kwargs: dict[str, Any], v: ConfigDict
    ) -> Any:
        """`target(*args, **kwargs)` of a call node's built fields, checked by safe mode, then post-resolved."""
        try:
            args = [positional[i] for i in range(len(positional))]
        except KeyError:
            raise _Failure(
                f"positional arguments must be contiguous from [0], got {sorted(positional)}", None, v._origin
            ) from None
        guard = self.guard
        if guard is not None:
            args, kwargs = self.guarded(guard.admit_call, target, args, kwargs)
        try:
            obj = target(*args, **kwargs)
        except DisallowedTargetError as e:  # a nested resolve refused under the policy in force
            f = _Failure(f"building {display_name(qualname)}(...): {e}", None, v._origin)
            f.error_type = DisallowedTargetError
            raise f from None
        except Exception as e:
            raise _Failure(
                f"building {display_name(qualname)}(...) raised {type(e).__name__}: {e}", e, v._origin
            ) from None
        if guard is not None:  # what an allowed callable returns is judged like everything else
            self.admit_built(guard, obj, qualname, v)
        post = getattr(type(obj), "__post_konfig_resolve__", None)
        if post is not None:
            _post_resolve(obj, v)
        return obj

    def admit_built(self, guard: Guard, obj: Any, qualname: str, v: ConfigDict) -> None:
        """Safe mode: what a call returned, refused if the audit hook refused an event the call caught."""
        refused = _audit_refusal()
        if refused is not None:  # the audit hook refused an event the callable caught and went on
            f = _Failure(
                f"building {display_name(qualname)}(...): safe mode refused {refused}", None, v._origin
            )
            f.error_type = DisallowedTargetError
            raise f
        self.guarded(guard.admit_built, obj)

    @staticmethod
    def _unwind(f: _Failure, key: Any, vid: int) -> None:
        f.path.append(key)
        if f.cycle_id == vid and f.cycle_len is None:
            f.cycle_len = len(f.path)

    def target(self, qualname: Any, v: ConfigDict) -> Any:
        if type(qualname) is not str:
            raise _Failure(f"__qualname__/__const__ must be a str, got {qualname!r}", None, v._origin)
        try:
            if self.guard is not None:
                return self.guard.import_target(qualname)
            return import_target(qualname)
        except DisallowedTargetError as e:
            f = _Failure(str(e), None, v._origin)
            f.error_type = DisallowedTargetError
            raise f from None
        except Exception as e:
            raise _Failure(f"cannot import {qualname!r}: {e}", e, v._origin) from None

    def ref(self, r: Ref) -> Any:
        rid = id(r)
        if rid in self.active:
            f = _Failure("reference", None)  # A cycle back to this reference.
            f.cycle_id = rid
            f.via.append(ref_repr(r))
            raise f
        self.active.add(rid)
        try:
            if type(r) is PathRef:
                result = self.path_ref(r)
            else:
                result = self.op_ref(r)  # type: ignore[arg-type]
        except _Failure as f:
            f.via.append(ref_repr(r))
            if f.cycle_id == rid and f.cycle_len is None:
                f.cycle_len = len(f.path)
            raise
        self.active.discard(rid)
        self.built[rid] = result
        return result

    def path_ref(self, r: PathRef) -> Any:
        current: Any = r._konfig_root
        path = r._konfig_path
        built = False
        for i, key in enumerate(path):
            if not built:
                if isinstance(current, ConfigDict):
                    fields = current._fields
                    if key in fields:
                        current = fields[key]
                        continue
                    if QUALNAME in fields:
                        try:
                            current = current._stored_item(key)  # positional: by index or by name
                            continue
                        except (KeyError, IndexError):
                            pass
                    if QUALNAME not in fields and CONST not in fields:
                        names = [k for k in fields if type(k) is str]
                        raise _Failure(
                            f"reference `{ref_repr(r)}`: {format_path(path[:i])} has no field"
                            f" {key!r}{did_you_mean(str(key), names)}",
                            None,
                        )
                elif type(current) in (list, tuple) and type(key) is int:
                    try:
                        current = current[key]
                        continue
                    except IndexError as e:
                        raise _Failure(f"reference `{ref_repr(r)}`: {e}", e) from None
                # Continue on the built object (attribute of a built node, ...).
                current = self.value(current)
                built = True
            if self.guard is not None:
                self.guarded(self.guard.admit_getattr, current, key)
            try:
                if isinstance(current, Mapping) or type(key) is not str:
                    current = current[key]
                else:
                    current = getattr(current, key)
            except Exception as e:
                raise _Failure(
                    f"reference `{ref_repr(r)}`: cannot get {key!r} from {type(current).__name__}: {e}", e
                ) from None
            if self.guard is not None:
                self.guarded(self.guard.admit, current)
        return current if built else self.value(current)

    def op_ref(self, r: OpRef) -> Any:
        args = [self.value(a) for a in r._konfig_args]
        kwargs = {k: self.value(v) for k, v in r._konfig_kwargs.items()}
        guard = self.guard
        if guard is not None:
            op = r._konfig_op
            if op == "call" and args:
                call_args, kwargs = self.guarded(guard.admit_call, args[0], args[1:], kwargs)
                args = [args[0], *call_args]
            elif op == "getattr" and len(args) > 1:
                self.guarded(guard.admit_getattr, args[0], args[1])  # A name computed by a reference.
            else:
                self.guarded(guard.admit_op, op, args)
        try:
            result = OPS[r._konfig_op](*args, **kwargs)
        except Exception as e:
            raise _Failure(f"evaluating `{ref_repr(r)}` raised {type(e).__name__}: {e}", e) from None
        if guard is not None:
            self.guarded(guard.admit_result, result)
            if r._konfig_op == "call":  # what a call returns is judged as a call node's result is
                self.guarded(guard.admit_built, result)
        return result

    @staticmethod
    def guarded(check: Callable[..., Any], *args: Any) -> Any:
        """Runs a safe-mode check; a refusal becomes a `DisallowedTargetError` naming the path, and any
        other error of the check (an operand that cannot be measured) konfig's own `ResolveError`."""
        try:
            return check(*args)
        except DisallowedTargetError as e:
            f = _Failure(f"{e}; it was not used", None)
            f.error_type = DisallowedTargetError
            raise f from None
        except Exception as e:
            f = _Failure(
                f"safe mode could not check an operand ({type(e).__name__}: {e}); it was not used", None
            )
            f.error_type = DisallowedTargetError
            raise f from None


def _audit_refusal() -> str | None:
    from ._audit import take_refusal

    return take_refusal()


def _hand_over(guard: Guard, fields: dict[Any, Any], exclude: Iterable[Any]) -> None:
    """Safe mode: the fields a target resolves itself (`__konfig_resolve_exclude_fields__`) handed over."""
    for key in exclude:
        if key in fields:
            fields[key] = guard.hand_over(fields[key])


def _cycle_failure(vid: int, origin: Any) -> _Failure:
    """The failure of a node reached again while it is being built."""
    f = _Failure("node", None, origin)
    f.cycle_id = vid
    return f


def _positional_key_failure(key: str, origin: Any) -> _Failure:
    """The failure of a call node key of digits that is not an index (`"01"`, a non-ASCII digit)."""
    return _Failure(
        f"argument key {key!r} looks positional but is not an index like"
        f" {(key.lstrip('0') or '0') if key.isascii() else '0'!r}",
        None,
        origin,
    )


def _post_resolve(obj: Any, v: ConfigDict) -> None:
    """Calls `obj.__post_konfig_resolve__(v)`; its error becomes a failure at the node."""
    try:
        obj.__post_konfig_resolve__(v)
    except Exception as e:
        raise _Failure(
            f"{type(obj).__name__}.__post_konfig_resolve__ raised {type(e).__name__}: {e}",
            e,
            v._origin,
        ) from None


def _arg_key(key: Any) -> Any:
    return int(key) if is_positional_key(key) else key


def resolve(cfg: Any, *, freeze: bool = True, allowed: Iterable[str] | None = None) -> Any:
    """Builds the objects described by `cfg`, bottom-up.

    A node reachable from several places is built once and shared. With
    `freeze`, lists become tuples and dicts `ImmutableDict`s.

    Usage:
        model = konfig.resolve(cfg.model)
        obj = konfig.resolve(untrusted_cfg, allowed=["optax", "mylib.*"])

    Args:
        cfg: a `ConfigDict` (or plain dict/list of them).
        freeze: return immutable containers.
        allowed: safe mode: refuse (before importing or calling anything) every
            target outside these module patterns.

    Raises:
        ResolveError: naming the failing path, chained to the original error.
    """
    in_force = current_policy() or handed_over_policy(cfg)
    if type(cfg) is dict or type(cfg) is list:  # JSON data (`konfig.export` of a list, parsed JSON)
        cfg = _from_plain(cfg)
    if freeze:
        register_pytree_if_jax_imported()
    if allowed is None and in_force is None:
        return _resolve(cfg, freeze, None)
    from . import _audit
    from ._safe_mode import Guard, check_allowed, enter, leave

    patterns = check_allowed(cfg, allowed, within=in_force)
    guard = Guard(patterns, parent=in_force) if allowed is not None else in_force
    token = enter(guard)  # nested resolves (targets', kd's model building) inherit it
    audit = _audit.enter()  # and the audit hook refuses processes, writes, sockets, code from data
    try:
        return _resolve(cfg, freeze, guard)
    finally:
        _audit.leave(audit)
        leave(token)


def _resolve(cfg: Any, freeze: bool, guard: Guard | None) -> Any:
    try:
        return _Resolver(freeze, guard).value(cfg)
    except _MissingRequired:
        raise _missing_error(cfg) from None
    except _Failure as f:
        raise _error(f) from f.cause
    except RecursionError:
        raise _depth_error(cfg) from None


def _from_plain(data: dict[Any, Any]) -> Any:
    """A plain (JSON-level) dict as a config: `__id__` sharing, refs, `__raw__=` keys."""
    return decode(data)


def _error(f: _Failure) -> ResolveError:
    path = tuple(reversed(f.path))
    where = format_path(path)
    via = f" (through {' -> '.join(reversed(f.via))})" if f.via else ""
    if f.cycle_id is not None:
        n = f.cycle_len if f.cycle_len is not None else 0
        start = format_path(path[: len(path) - n])
        if f.via:
            chain = " -> ".join(reversed(f.via))
            if f.message == "node":
                return CycleError(
                    f"In {where}: the reference {chain} leads back to {start}, which is being built"
                    " from it. A config node cannot depend on itself through a reference."
                )
            return CycleError(f"In {where}: reference cycle {chain}. A reference cannot depend on itself.")
        return CycleError(
            f"In {where}: cycle: {start} contains itself at {where}. A config node"
            " cannot contain itself when resolved (share it from two places instead)."
        )
    created = ""
    if f.origin is not None:
        created = f"\n  node created at {f.origin[0]}:{f.origin[1]}"
    if f.error_type is ResolveError:
        return resolve_error(f"In {where}{via}: {f.message}{created}", f.cause)
    return f.error_type(f"In {where}{via}: {f.message}{created}")


def _missing_error(cfg: Any) -> MissingValueError:
    """Names every unset required value of `cfg` and of what its refs reach.

    Each node is visited once, so a config of shared nodes (a DAG with
    exponentially many paths) costs time linear in its size.
    """
    missing: dict[str, None] = {}
    # Paths are kept as (parent link, key) pairs and spelled out only for the values reported.
    roots: list[tuple[Any, Any]] = [(cfg, None)]
    followed: set[tuple[int, tuple[Any, ...]]] = set()
    visited: set[int] = set()
    while roots:
        root, prefix = roots.pop(0)
        stack = [(root, prefix)]
        while stack:
            value, link = stack.pop()
            t = type(value)
            if isinstance(value, ConfigDict) or t is list or t is tuple:
                if id(value) in visited:
                    continue
                visited.add(id(value))
                if t is list or t is tuple:
                    stack.extend((child, (link, i)) for i, child in reversed(list(enumerate(value))))
                    continue
                fields = value._fields
                if CONST in fields:
                    continue
                is_call = QUALNAME in fields
                stack.extend(
                    (child, (link, int(key) if is_call and is_positional_key(key) else key))
                    for key, child in reversed(fields.items())
                    if key != QUALNAME
                )
            elif t is Placeholder:
                if value.required:
                    name = getattr(value.type, "__qualname__", repr(value.type))
                    keys = linked_path(link)
                    where = format_path(keys) if len(keys) <= 100 else shorten_path(keys)
                    missing[f"{where} ({name})"] = None
                else:
                    stack.append((value.default, link))
            elif isinstance(value, Ref):
                for ref in _path_refs(value):
                    key = (id(ref._konfig_root), ref._konfig_path)
                    if key not in followed:
                        followed.add(key)
                        target = _config_at(ref._konfig_root, ref._konfig_path)
                        if target is not _NOT_FOUND:
                            link = None
                            for part in ref._konfig_path:
                                link = (link, part)
                            roots.append((target, link))
    listing = ", ".join(missing) or "(reached through a reference outside the config)"
    return MissingValueError(
        f"Required value(s) not set: {listing}. Set each one before resolving,"
        " e.g. `cfg.<path> = ...` or `--cfg.<path>=...`."
    )


def _depth_error(cfg: Any) -> ResolveError:
    """The error for a config nested deeper than Python's recursion limit lets `resolve` go.

    Depth counts fields, items, placeholder defaults and the operations of reference expressions. The
    walk keeps each path as a link to its parent, so it is linear in the config's size at any depth.
    """
    import sys

    deepest: tuple[int, Any] = (0, None)
    stack: list[tuple[Any, Any, int]] = [(cfg, None, 0)]  # (value, (parent link, key) or None, depth)
    visited: set[int] = set()
    while stack:
        value, link, depth = stack.pop()
        if depth > deepest[0]:
            deepest = (depth, link)
        if id(value) in visited:
            continue
        t = type(value)
        if isinstance(value, ConfigDict):
            visited.add(id(value))
            stack.extend((child, (link, key), depth + 1) for key, child in value._fields.items())
        elif t is list or t is tuple or t is dict:
            visited.add(id(value))
            items = value.items() if t is dict else enumerate(value)
            stack.extend((child, (link, key), depth + 1) for key, child in items)
        elif t is Placeholder:
            stack.append((value.default, link, depth + 1))
        elif t is OpRef:
            visited.add(id(value))
            operands = (*value._konfig_args, *value._konfig_kwargs.values())
            stack.extend((operand, link, depth + 1) for operand in operands)
    depth, link = deepest
    path = linked_path(link)
    where = (
        format_path(path) if len(path) <= 8 else f"{format_path(path[:4])}…{format_path(path[-2:], root='')}"
    )
    return ResolveError(
        f"In {where}: the config nests {depth} levels deep (fields, items and"
        f" reference operations), too deep to resolve within Python's recursion limit"
        f" ({sys.getrecursionlimit()}). Flatten the config, or raise the limit with sys.setrecursionlimit(...)"
        " if the nesting is intended."
    )


_NOT_FOUND = object()


def _path_refs(ref: Any) -> Iterable[PathRef]:
    """The `PathRef`s inside a reference expression."""
    stack = [ref]
    while stack:
        r = stack.pop()
        if type(r) is PathRef:
            yield r
        elif type(r) is OpRef:
            stack.extend(a for a in (*r._konfig_args, *r._konfig_kwargs.values()) if isinstance(a, Ref))


def _config_at(root: Any, path: tuple[Any, ...]) -> Any:
    """The config value at `path` without building anything, or `_NOT_FOUND`."""
    current = root
    for key in path:
        if not isinstance(current, (ConfigDict, list, tuple)):
            return _NOT_FOUND
        try:
            current = stored_item(current, key)
        except (KeyError, IndexError, TypeError):
            return _NOT_FOUND
    return current
