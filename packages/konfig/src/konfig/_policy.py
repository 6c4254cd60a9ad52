"""The safe-mode policy in force: set by `konfig.resolve(..., allowed=...)` for its whole run.

Every `konfig.resolve` started while one is in force (by a target being built, by kd's model
building, by a user's library) inherits it and can only narrow it. A sub-config handed unresolved
to an allowed callable (`__konfig_resolve_exclude_fields__`) keeps the policy after the resolve
returns, in any thread, when that callable resolves it later.

    token = enter(guard); try: ... finally: leave(token)
    guard = current_policy() or handed_over_policy(node)
"""

from __future__ import annotations

import contextvars

TYPE_CHECKING = False
if TYPE_CHECKING:
    import weakref
    from typing import Any

_ACTIVE: contextvars.ContextVar[Any] = contextvars.ContextVar("konfig_safe_mode_policy", default=None)
# Config nodes passed unresolved to an allowed callable, with the policy of the resolve that passed them:
# id(node) -> (weak reference to the node, guard); an entry leaves when its node is collected. Written by
# safe mode (`_safe_mode.hand_over`), read by every resolve.
HANDED_OVER: dict[int, tuple[weakref.ref[Any], Any]] = {}


def current_policy() -> Any:
    """The guard of the safe resolve running in this context, or None."""
    return _ACTIVE.get()


def enter(guard: Any) -> contextvars.Token[Any]:
    return _ACTIVE.set(guard)


def leave(token: contextvars.Token[Any]) -> None:
    _ACTIVE.reset(token)


def handed_over_policy(node: Any) -> Any:
    """The guard a sub-config was handed over under, or None."""
    entry = HANDED_OVER.get(id(node))
    if entry is None or entry[0]() is not node:
        return None
    return entry[1]
