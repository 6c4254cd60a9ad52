"""Scopes: the candidate dim assignments of one checked call, dataclass or block.

    >>> with ktyping.typechecked():
    ...     ktyping.check_type(x, Float["b n"])
    ...     ktyping.dim["n"]

A scope holds a list of candidate assignments (`{"b": 2, "*batch": (4, 5)}`); every
check keeps the candidates that stay consistent and fails when none is left.
"""

from __future__ import annotations

from _thread import _local

from ._errors import NoActiveScopeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Scope", "current_candidates", "current_scope", "stack"]


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


class _Stack(_local):
    def __init__(self) -> None:
        self.scopes: list[Scope] = []


_STACK = _Stack()


def stack() -> list[Scope]:
    """This thread's scope stack (innermost last)."""
    return _STACK.scopes


def current_scope() -> Scope:
    """The innermost active scope; raises `NoActiveScopeError` when there is none."""
    scopes = _STACK.scopes
    if not scopes:
        raise NoActiveScopeError(
            "no active ktyping scope: decorate the function with @ktyping.typechecked "
            "or open one with `with ktyping.typechecked():`"
        )
    return scopes[-1]


def current_candidates() -> tuple[list[dict[str, Any]], Scope | None]:
    """Candidates of the innermost scope, or one empty assignment when there is none."""
    scopes = _STACK.scopes
    if scopes:
        return scopes[-1].cands, scopes[-1]
    return [{}], None
