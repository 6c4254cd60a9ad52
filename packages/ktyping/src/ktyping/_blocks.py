"""`with typechecked():` blocks: a scope opened by hand, for the checks inside the block.

    >>> import ktyping
    >>> with ktyping.typechecked():
    ...     _ = ktyping.check_type((2, 3), ktyping.Shape["b n"])
    ...     ktyping.dim["b"]
    2

Each `with` keeps its token on the scope it opens (`_BlockScope`), so one block object can
be entered in several threads or tasks at once, and nested; blocks closed out of order (a
generator suspended inside its own block) are skipped when they would become active again.
`with typechecked(new_scope=False):` binds dims in the scope around it.
"""

from __future__ import annotations

import sys

from . import _scope
from ._errors import NoActiveScopeError
from ._scope import Scope, Source
from ._wrappers import decorate, enclosing_locals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["TransparentBlock", "TypecheckedBlock", "no_transparent_decorator"]


class _BlockPlan:
    """What a `with typechecked():` scope knows about its block: the enclosing frame, the `with` line."""

    __slots__ = ("frame", "lasti")
    code = None  # a function's plan owns its code instead

    def __init__(self, frame: Any) -> None:
        self.frame = frame
        self.lasti = frame.f_lasti  # the `with` line is looked up from it when needed (f_lineno is slower)

    @property
    def line(self) -> int:
        """The line of the `with` statement."""
        for start, end, line in self.frame.f_code.co_lines():
            if start <= self.lasti < end and line is not None:
                return line
        return self.frame.f_code.co_firstlineno

    def source(self) -> Source:
        frame = self.frame
        return Source(
            "typechecked context",
            frame.f_code.co_filename,
            self.line,
            frame.f_globals.get("__name__", "<unknown>"),
        )

    @property
    def globals(self) -> dict[str, Any]:
        return self.frame.f_globals

    def bind(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        return _LiveLocals(self.frame)

    def origin(self) -> str:
        code = self.frame.f_code
        return f"block in {code.co_name!r} at {code.co_filename}:{self.line}"


class _LiveLocals:
    """The block's local variables as they are when a `{...}` spec is evaluated."""

    __slots__ = ("frame",)

    def __init__(self, frame: Any) -> None:
        self.frame = frame

    def __getitem__(self, key: str) -> Any:
        return self.frame.f_locals[key]

    def __iter__(self) -> Any:
        return iter(self.frame.f_locals)


class _BlockScope(Scope):
    """The scope of a `with typechecked():` block, with what its `__exit__` needs."""

    __slots__ = ("closed", "opener", "token")
    closed: bool  # exited: skipped when it would become active again
    opener: TypecheckedBlock
    token: Any  # of the `SCOPE.set` that made it active


class _TransparentBlockScope(_BlockScope):
    """`with typechecked(new_scope=False):`: a block of its own whose dims are those of the scope
    around it (checks in the block bind dims there)."""

    __slots__ = ("parent",)

    def __init__(self, plan: _BlockPlan, parent: Scope) -> None:  # no `Scope.__init__`: no dims of its own
        self.parent = parent
        self.plan = plan
        self.args = ()
        self.kwargs = None
        self._arguments = None

    @property  # type: ignore[override]
    def cands(self) -> list[dict[str, Any]]:
        return self.parent.cands

    @cands.setter
    def cands(self, value: list[dict[str, Any]]) -> None:
        self.parent.cands = value


class TypecheckedBlock:
    """`with typechecked():` opens a scope; `@typechecked()` decorates like `@typechecked`.

    The object holds no state: each `with` keeps its token on the scope it opens, in the
    context of its thread or asyncio task. One object can be entered in several threads
    or tasks at once, and nested.
    """

    __slots__ = ()
    new_scope = True

    def _open(self, plan: _BlockPlan) -> _BlockScope:
        return _BlockScope(plan)

    def __enter__(self) -> Scope:
        _scope.BLOCKS_USED[0] = True
        plan = _BlockPlan(sys._getframe(1))
        scope = _BlockScope(plan) if type(self) is TypecheckedBlock else self._open(plan)
        scope.opener = self
        scope.closed = False
        scope.token = _scope.SCOPE.set(scope)
        return scope

    def __exit__(self, *exc: object) -> None:
        active = _scope.SCOPE
        scope = active.get()
        if (type(scope) is not _BlockScope and not isinstance(scope, _BlockScope)) or (
            scope.opener is not self or scope.closed
        ):
            # Not the active scope (a generator suspended in its own block leaves that one
            # active): find this object's block below it, and close it to be skipped later.
            while isinstance(scope, _BlockScope) and (scope.opener is not self or scope.closed):
                scope = _before(scope)
            if isinstance(scope, _BlockScope):
                scope.closed = True
            return
        scope.closed = True
        _restore(active, scope.token)
        scope = active.get()
        while isinstance(scope, _BlockScope) and scope.closed:  # blocks closed out of order
            _restore(active, scope.token)
            scope = active.get()

    def __call__(self, obj: T) -> T:
        if type(self) is TransparentBlock:
            raise no_transparent_decorator(obj)
        return decorate(obj, enclosing_locals(obj, 1))


def no_transparent_decorator(obj: Any) -> TypeError:
    return TypeError(
        "typechecked(new_scope=False) is a context manager only (`with typechecked(new_scope=False):`); "
        f"decorate {getattr(obj, '__qualname__', obj)!r} with @typechecked"
    )


class TransparentBlock(TypecheckedBlock):
    """`with typechecked(new_scope=False):`: a block whose checks bind dims in the scope around it."""

    __slots__ = ()
    new_scope = False

    def _open(self, plan: _BlockPlan) -> _BlockScope:
        parent = _scope.SCOPE.get()
        if parent is None:
            raise NoActiveScopeError(
                "No active scope found: `with typechecked(new_scope=False):` uses the dims of the "
                "scope around it, and there is none; use `with typechecked():`"
            )
        return _TransparentBlockScope(plan, parent)


def _before(scope: _BlockScope) -> Any:
    """The scope that was active when `scope`'s block was entered."""
    old = scope.token.old_value
    return None if old is scope.token.MISSING else old


def _restore(active: Any, token: Any) -> None:
    """Makes active what was active before `token`'s `set`."""
    try:
        active.reset(token)
    except (ValueError, RuntimeError):  # made in another context, or already used
        active.set(None if token.old_value is token.MISSING else token.old_value)
