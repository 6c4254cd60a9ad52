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
`with typechecked():` / `with ShapeScope():` blocks set it, and reset it with the token when they end.

A scope belongs to the function or block that opened it: `get_current_scope()` (and so
`check_type`, `dim`, `shape`) called from another function, one nested inside without its own
`@typechecked`, raises `NoActiveScopeError`; `get_current_scope(nested_ok=True)` does not, nor does a
frame that sets Kauldron's `__ktyping_scope_counter__` local (`frame_may_use_scope`).
"""

from __future__ import annotations

import sys

from ._dims import DimView, from_public, to_public
from ._errors import NoActiveScopeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextvars import ContextVar
    from typing import Any

    SCOPE: ContextVar[Scope | None]

__all__ = [
    "BLOCKS_USED",
    "SCOPE",
    "SCOPE_MARKER",
    "TRANSPARENT_FRAME_NAMES",
    "Scope",
    "ShapeScope",
    "Source",
    "current_candidates",
    "frame_may_use_scope",
    "get_current_scope",
    "scope_of_caller",
    "stack",
]


class Source:
    """Where a scope was opened: `description` ("typechecked context", "function 'f'"), `file`, `line`
    and the `module_name` of the code (what `add_config_override` regexes match; Kauldron's
    `CodeLocation`)."""

    __slots__ = ("description", "file", "line", "module_name")

    def __init__(self, description: str, file: str, line: int | None, module_name: str = "<unknown>") -> None:
        self.description = description
        self.file = file
        self.line = line
        self.module_name = module_name

    @classmethod
    def unknown(cls) -> Source:
        """The source of a scope opened by no known code."""
        return _UNKNOWN_SOURCE

    def to_str(self) -> str:
        return f"{self.description} at {self.file}:{self.line}"

    def _fields(self) -> tuple[str, str, int | None, str]:
        return (self.description, self.file, self.line, self.module_name)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Source:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Source({self.description!r}, {self.file!r}, {self.line}, {self.module_name!r})"


_UNKNOWN_SOURCE = Source("unknown", "<unknown>", 0)


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

    @property
    def candidates(self) -> list[dict[str, Any]]:
        """The candidate assignments as Kauldron writes them: every dim a tuple under its bare name,
        `{"b": (2,), "batch": (4, 5)}`. Assigning a list of such dicts replaces them."""
        return [to_public(a) for a in self.cands]

    @candidates.setter
    def candidates(self, value: Any) -> None:
        self.cands = [from_public(a) for a in value] or [{}]

    @property
    def dim(self) -> DimView:
        """`scope.dim["b"]`: this scope's dims (see `ktyping.dim` for the active scope's)."""
        return DimView(lambda: self.cands, lambda cands: setattr(self, "cands", cands))

    @property
    def source(self) -> Source:
        """Where the scope was opened (the checked function, or the `with` line of a block)."""
        source = getattr(self.plan, "source", None)
        return source() if callable(source) else _UNKNOWN_SOURCE

    def owns(self, frame: Any) -> bool:
        """Whether code running in `frame` is the scope's own: its function's or its block's."""
        plan = self.plan
        code = getattr(plan, "code", None)
        if code is not None:
            return frame.f_code is code
        opener = getattr(plan, "frame", None)
        return opener is None or frame is opener

    def __repr__(self) -> str:
        from ._format import format_candidates

        name = "ShapeScope" if isinstance(self, ShapeScope) else "Scope"
        return f"{name}({format_candidates(self.cands)})"


class ShapeScope(Scope):
    """A scope opened by hand: `with ShapeScope() as scope:` (like `with typechecked():`).

        with ktyping.ShapeScope(candidates=[{"b": (2,)}]) as scope:
            scope.dim["n"] = 3

    `candidates` are given as Kauldron writes them (`{"b": (2,), "batch": (4, 5)}`).
    `arguments` are the names `{...}` specs can read.
    """

    __slots__ = ("_frame", "_line", "_source", "_tokens")

    def __init__(
        self,
        source: Source | None = None,
        candidates: Any = None,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._source = source
        self._frame: Any = None
        self._line = 0
        self._tokens: list[Any] = []
        if candidates is not None:
            self.candidates = candidates
        self._arguments = dict(arguments) if arguments is not None else None

    @property
    def source(self) -> Source:
        if self._source is not None:
            return self._source
        if self._frame is not None:
            return Source(
                "ShapeScope",
                self._frame.f_code.co_filename,
                self._line,
                self._frame.f_globals.get("__name__", "<unknown>"),
            )
        return _UNKNOWN_SOURCE

    @property
    def globals(self) -> dict[str, Any]:
        return self._frame.f_globals if self._frame is not None else {}

    def owns(self, frame: Any) -> bool:
        return self._frame is None or frame is self._frame

    def __enter__(self) -> ShapeScope:
        self._frame = sys._getframe(1)
        self._line = self._frame.f_lineno  # the `with` line
        self._tokens.append(_module.SCOPE.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        token = self._tokens.pop()
        try:
            _module.SCOPE.reset(token)
        except (ValueError, RuntimeError):  # entered in another context
            _module.SCOPE.set(None if token.old_value is token.MISSING else token.old_value)


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


# Frames that count as the frame they run in: a lambda or comprehension inside a checked function
# may use its scope.
TRANSPARENT_FRAME_NAMES = frozenset(("<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"))

# A local variable that, set to a nonzero count, marks a frame as having a scope of its own (Kauldron's
# marker; ktyping's own scopes are found by `Scope.owns` and never set it).
SCOPE_MARKER = "__ktyping_scope_counter__"


def frame_may_use_scope(scope: Scope | None, frame: Any) -> bool:
    """Whether code running in `frame` may use `scope` (the active one) without `nested_ok`:
    the frame is the scope's own function or block, or it carries `SCOPE_MARKER`."""
    if scope is not None and scope.owns(frame):
        return True
    return bool(frame.f_locals.get(SCOPE_MARKER, 0))


def get_current_scope(nested_ok: bool = False, stacklevel: int = 0) -> Scope:
    """The innermost active scope.

    Raises `NoActiveScopeError` when there is none, or (unless `nested_ok`) when the caller is
    not the scope's own function or block: a helper called from a `@typechecked` function needs
    its own `@typechecked` to check or read dims. `stacklevel` counts frames above the caller
    (for wrappers); lambdas and comprehensions count as the frame they run in.

        scope = ktyping.get_current_scope()
    """
    scope = _module.SCOPE.get()
    if scope is None:
        raise NoActiveScopeError(
            "No active scope found: decorate the function with @ktyping.typechecked "
            "or open one with `with ktyping.typechecked():`"
        )
    if not nested_ok:
        frame = sys._getframe(1 + stacklevel)
        while frame.f_code.co_name in TRANSPARENT_FRAME_NAMES and frame.f_back is not None:
            frame = frame.f_back
        if not frame_may_use_scope(scope, frame):
            raise _nested_error(scope, frame, direct=stacklevel == 0)
    return scope


def scope_of_caller(depth: int) -> Scope:
    """`get_current_scope()` as seen from the frame `depth` levels above the caller.

    The fast path for `check_type`, `isinstance` and `dim`: a frame that is the scope's
    function's (same code) or block's (same frame) is accepted at once; anything else (a
    lambda, a `ShapeScope`, a nested function) takes `get_current_scope`'s full check.
    """
    scope = _module.SCOPE.get()
    if scope is not None:
        frame = sys._getframe(depth + 1)
        plan = scope.plan
        try:
            if plan.code is frame.f_code or plan.frame is frame:
                return scope
        except AttributeError:  # no plan (a ShapeScope), or one that owns no frame
            pass
    return get_current_scope(stacklevel=depth + 1)


def _nested_error(scope: Scope, frame: Any, direct: bool) -> NoActiveScopeError:
    code = frame.f_code
    return NoActiveScopeError(
        f"No active scope found for {code.co_name!r} ({code.co_filename}:{frame.f_lineno}): the active "
        f"scope is that of {scope.source.to_str()}, and {code.co_name!r} is a function called from it. "
        f"Decorate {code.co_name!r} with @ktyping.typechecked (or open a scope in it with "
        "`with ktyping.typechecked():`)" + (", or use get_current_scope(nested_ok=True)" if direct else "")
    )


def current_candidates() -> tuple[list[dict[str, Any]], Scope | None]:
    """Candidates of the innermost scope, or one empty assignment when there is none."""
    scope = _module.SCOPE.get()
    if scope is not None:
        return scope.cands, scope
    return [{}], None
