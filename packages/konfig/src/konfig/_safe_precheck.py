"""Safe mode's first layer: every target a config names, checked against `allowed=` before anything runs.

`check_allowed` walks the config once (through references, placeholders and plain dicts too) and matches
every `__qualname__` / `__const__` against the allow-list, and against the policy already in force; every
refused target is reported at once, with where it is, before anything is imported or called. What passes
is then checked again, object by object, by the guard (`_safe_guard`) while the config resolves.

Usage: `patterns = check_allowed(cfg, ["optax"])`, then `Guard(patterns)`.
"""

from __future__ import annotations

from ._config_dict import CONST, QUALNAME, ConfigDict, is_config_value
from ._errors import DisallowedTargetError, linked_path, shorten_path
from ._placeholder import Placeholder
from ._refs import OpRef, PathRef
from ._safe_policy import (
    allowed_patterns,
    is_allowed,
    is_unsafe_attr,
    refused_object,
    shown,
    unsafe_target_segment,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ._safe_guard import Guard


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
        patterns = allowed_patterns(allowed)
    policies = [patterns]
    guard = within
    while guard is not None:
        policies.append(guard.patterns)
        guard = guard.parent
    refusals = _Refusals(policies)
    _scan(cfg, refusals)
    if refusals.found:
        raise refusals.error()
    return patterns


class _Refusals:
    """The targets a scan refused under `policies` (the new one first), each with the first places it is at.

    A place is a link, `(parent link, key)` or None for the root: paths are spelled out only for the few
    places reported.
    """

    def __init__(self, policies: list[tuple[str, ...]]) -> None:
        self.policies = policies
        self.found: dict[str, list[Any]] = {}

    def add(self, name: str, link: Any, suffix: str = "") -> None:
        places = self.found.setdefault(name, [])
        if len(places) < 4:
            places.append((link, suffix))

    def outside(self, target: str) -> bool:
        return any(not is_allowed(target, p) for p in self.policies)

    def error(self) -> DisallowedTargetError:
        lines = []
        for name, places in sorted(self.found.items()):
            where = [shorten_path(linked_path(link)) + suffix for link, suffix in places[:3]]
            lines.append(f"  {name}  (at {', '.join(where)}{', ...' if len(places) > 3 else ''})")
        policies = self.policies
        outer = f" and the policy in force ({shown(policies[1])!r})" if len(policies) > 1 else ""
        return DisallowedTargetError(
            f"Safe mode refused {len(self.found)} target(s) outside allowed={shown(policies[0])!r}{outer};"
            " nothing was imported or called:\n" + "\n".join(lines)
        )


def _scan(cfg: Any, refusals: _Refusals) -> None:
    """Walks the config once, each container once, adding every refused target to `refusals`."""
    seen: set[int] = set()
    # Each entry: (value, link).
    stack: list[tuple[Any, Any]] = [(cfg, None)]
    while stack:
        value, link = stack.pop()
        t = type(value)
        if isinstance(value, ConfigDict) or t is dict:
            if id(value) in seen:
                continue
            seen.add(id(value))
            fields = value._fields if t is not dict else value
            _check_node_targets(fields, link, refusals)
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
                refusals.add(f"reference attribute {unsafe[0]!r}", link)
            stack.append((value._konfig_root, (link, "<ref root>")))
        elif isinstance(value, OpRef):
            if id(value) in seen:
                continue
            seen.add(id(value))
            stack.extend((a, link) for a in _checked_op_args(value, link, refusals))
            stack.extend((v, link) for v in value._konfig_kwargs.values())


def _check_node_targets(fields: Any, link: Any, refusals: _Refusals) -> None:
    """A node's `__qualname__` / `__const__`: a str, inside every policy, with no dunder or frame attribute."""
    for marker in (QUALNAME, CONST):
        target = fields.get(marker)
        if target is None and marker not in fields:
            continue
        if type(target) is not str:
            refusals.add(repr(target), link)
        elif refusals.outside(target):
            refusals.add(target, link)
        elif (segment := unsafe_target_segment(target)) is not None:
            refusals.add(f"{target} (attribute {segment!r})", link)


def _checked_op_args(value: OpRef, link: Any, refusals: _Refusals) -> tuple[Any, ...]:
    """An operation's attribute name and `ref_fn` function checked; the arguments left to walk."""
    args = value._konfig_args
    if value._konfig_op == "getattr" and len(args) > 1 and is_unsafe_attr(args[1]):
        refusals.add(f"reference attribute {args[1]!r}", link)
    if value._konfig_op == "call" and args and callable(args[0]) and not is_config_value(args[0]):
        for policy in refusals.policies:
            name = refused_object(args[0], policy)
            if name is not None:
                refusals.add(name, link, " (ref_fn)")
                break
        args = args[1:]
    return args
