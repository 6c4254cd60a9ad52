"""The safe-mode policy in force: set by `konfig.resolve(..., allowed=...)` for its whole run.

Every `konfig.resolve` started while one is in force (by a target being built, by kd's model
building, by a user's library) inherits it and can only narrow it. A sub-config handed unresolved
to an allowed callable (`__konfig_resolve_exclude_fields__`) keeps the policy after the resolve
returns, in any thread, when that callable resolves it later.

The context variable holding it is made by safe mode when it first loads (`install`), so a
program that never resolves in safe mode pays nothing: `current_policy()` is then None.

    guard = current_policy() or handed_over_policy(node)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextvars
    import weakref
    from typing import Any

# The `contextvars.ContextVar` of the guard in force; None until safe mode (`_safe_guard`) is first imported.
ACTIVE: contextvars.ContextVar[Any] | None = None
# Config nodes passed unresolved to an allowed callable, with the policy of the resolve that passed them:
# id(node) -> (weak reference to the node, guard); an entry leaves when its node is collected. Written by
# safe mode (`Guard.hand_over`), read by every resolve.
HANDED_OVER: dict[int, tuple[weakref.ref[Any], Any]] = {}


def install(variable: contextvars.ContextVar[Any]) -> None:
    """Safe mode's context variable (called once, when `_safe_guard` loads)."""
    global ACTIVE
    if ACTIVE is None:
        ACTIVE = variable


def current_policy() -> Any:
    """The safe-mode policy in force in this context, or None outside safe mode.

    While a `konfig.resolve(cfg, allowed=[...])` runs (and in every resolve and target it starts), this is
    the guard that checks what it imports and calls; elsewhere it is None. Code that builds objects from a
    config asks it before doing what an untrusted config must not make it do (kd-train's
    `Trainer.eval_only` refuses to read another run's folder). The object itself is konfig's own: compare
    it with None; `konfig.import_object` imports through it.

    Usage: `if konfig.current_policy() is not None: raise konfig.DisallowedTargetError("...")`.
    """
    return None if ACTIVE is None else ACTIVE.get()


def handed_over_policy(node: Any) -> Any:
    """The guard a sub-config was handed over under, or None."""
    entry = HANDED_OVER.get(id(node))
    if entry is None or entry[0]() is not node:
        return None
    return entry[1]
