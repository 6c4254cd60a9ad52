"""Scopes: the candidate dim assignments of one checked call, dataclass or block.

    >>> import ktyping
    >>> with ktyping.typechecked():
    ...     _ = ktyping.check_type((2, 3), ktyping.Shape["b n"])
    ...     ktyping.dim["n"]
    3

A scope holds a list of candidate assignments (`{"b": 2, "*batch": (4, 5)}`); every
check keeps the candidates that stay consistent and fails when none is left.

The active scope is a context variable (`SCOPE`): each thread and each asyncio task sees
its own, and a scope opened around an `await` stays with its task. Checked calls and
`with typechecked():` blocks set it, and reset it with the token when they end.
"""

from __future__ import annotations

import sys

from ._errors import NoActiveScopeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextvars import ContextVar
    from typing import Any

    SCOPE: ContextVar[Scope | None]

__all__ = ["BLOCKS_USED", "SCOPE", "Scope", "current_candidates", "get_current_scope", "stack"]


class Scope:
    """Dim assignments in force for one call / dataclass instance / `with` block.

    Attributes:
      cands: The candidate assignments (dicts from dim name to size; `*name` to tuples).
      plan: The function plan (or dataclass plan) this scope belongs to, if any.
    """

    __slots__ = ("_arguments", "args", "cands", "kwargs", "plan")

    def __init__(self, plan: Any = None, args: tuple = (), kwargs: dict | None = None) -> None:
        self.cands: list[dict[str, Any]] = [{}]
        self.plan = plan
        self.args = args
        self.kwargs = kwargs
        self._arguments: dict[str, Any] | None = None

    @property
    def arguments(self) -> dict[str, Any] | None:
        """The bound arguments by name (for `{self.hidden}` specs), built on first use."""
        if self._arguments is None and self.plan is not None:
            self._arguments = self.plan.bind(self.args, self.kwargs or {})
        return self._arguments

    @arguments.setter
    def arguments(self, value: dict[str, Any] | None) -> None:
        self._arguments = value

    @property
    def globals(self) -> dict[str, Any]:
        """Module globals visible to `{...}` specs: those of the checked function or block."""
        return getattr(self.plan, "globals", None) or {}

    def __repr__(self) -> str:
        from ._format import format_candidates

        return f"Scope({format_candidates(self.cands)})"


_module = sys.modules[__name__]

# Set by the first `with typechecked():`. Until then a generator or coroutine step cannot
# leave a scope of its own active, and the driver need not read `SCOPE` back after it.
BLOCKS_USED = [False]


def __getattr__(name: str) -> Any:
    """Makes `SCOPE` (the innermost active scope, or None) on first use, so that
    `import ktyping` loads no `_contextvars`: the first decorated function or block does."""
    if name != "SCOPE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from _contextvars import ContextVar

    # A thread that loses the race to make it uses the winner's.
    return globals().setdefault("SCOPE", ContextVar("ktyping.scope", default=None))


def stack() -> list[Scope]:
    """The active scope of this thread or task in a list (empty when there is none).

    The scopes around it are not listed: each is restored when the inner one closes.
    """
    scope = _module.SCOPE.get()
    return [] if scope is None else [scope]


def get_current_scope() -> Scope:
    """The innermost active scope; raises `NoActiveScopeError` when there is none."""
    scope = _module.SCOPE.get()
    if scope is None:
        raise NoActiveScopeError(
            "no active ktyping scope: decorate the function with @ktyping.typechecked "
            "or open one with `with ktyping.typechecked():`"
        )
    return scope


def current_candidates() -> tuple[list[dict[str, Any]], Scope | None]:
    """Candidates of the innermost scope, or one empty assignment when there is none."""
    scope = _module.SCOPE.get()
    if scope is not None:
        return scope.cands, scope
    return [{}], None
