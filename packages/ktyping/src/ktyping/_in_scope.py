"""What code inside a scope calls: `check_type`, `isinstance`, and reading dims with `dim` / `shape`.

    @typechecked
    def f(x: Float["b n"]):
        y = check_type(encode(x), Float["b n d"])
        return np.zeros(shape("b n+1")), dim["d"]

    >>> import ktyping
    >>> with ktyping.typechecked():
    ...     _ = check_type((2, 3), ktyping.Shape["b n"])
    ...     shape("n b+1"), dim["b"], isinstance((2, 4), ktyping.Shape["b n"])
    ((3, 3), 2, False)

The scope is the one `@typechecked` or `with typechecked():` made active (`_scope`).
`isinstance` is defined under its public name: this module calls the builtin as
`builtins.isinstance`.
"""

from __future__ import annotations

import builtins
import sys

from . import _scope
from ._compile import compile_annotation, uses_array_types
from ._config import enabled_for_caller
from ._dims import DimView, plain
from ._errors import AmbiguousDimensionError, KTypeCheckError, NoActiveScopeError
from ._scope import current_candidates, get_current_scope, scope_of_caller
from ._spec_cache import parse_spec
from ._spec_tree import UnknownDim, VariadicDim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["check_type", "dim", "isinstance", "shape"]

_getframe = sys._getframe


def check_type(value: T, annotation: Any, *, stacklevel: int = 0, nested_ok: bool = False) -> T:
    """Checks `value` against `annotation` in the active scope, binding its dims; returns `value`.

    Raises `NoActiveScopeError` outside a `@typechecked` function or `with typechecked():`, and (unless
    `nested_ok`) from a function nested in it without its own `@typechecked`, as `get_current_scope`.
    `stacklevel` counts frames above the caller, for wrappers that check on their caller's behalf.

        y = ktyping.check_type(encode(x), Float["b n d"])
    """
    if not enabled_for_caller(1 + stacklevel):
        return value
    # `scope_of_caller(1)`, its fast path inlined: the caller is the scope's own function or block.
    scope: Any = _scope.SCOPE.get()
    frame = _getframe(1 + stacklevel)
    try:
        plan = scope.plan
        own = plan.code is frame.f_code or plan.frame is frame
    except AttributeError:  # no scope, or a plan without a frame: the full check (or its error)
        own = False
    if not own:
        scope = get_current_scope(nested_ok=True) if nested_ok else scope_of_caller(1 + stacklevel)
    new = compile_annotation(annotation)(value, scope.cands, scope)
    if not new:
        raise _error(value, annotation, scope)
    scope.cands = new
    return value


def _error(value: Any, annotation: Any, scope: Any) -> KTypeCheckError:
    from ._describe import describe
    from ._explain import explain
    from ._format import candidates_block, compact

    frame = sys._getframe(2)
    lines = [
        f"value = {compact(value)} {explain(annotation, value, scope.cands, scope)}",
        f"  (required by {describe(annotation)})",
        "",
        f"Checked at: {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}",
    ]
    if scope.plan is not None and hasattr(scope.plan, "origin"):
        lines.append(f"Scope of: {scope.plan.origin()}")
    block = candidates_block(scope.cands)
    lines += ["", block]
    error = KTypeCheckError("\n".join(lines))
    error.candidates_block = block
    return error


def isinstance(value: Any, annotation: Any) -> bool:
    """Like `isinstance`, for any annotation (`Float["b n"]`, `list[int]`, `int | None`, a tuple of them).

    Uses the dims of the active scope, and never changes them. An annotation with array types
    needs that scope: outside one (or from a function nested in it) it raises `NoActiveScopeError`.
    """
    try:
        check, needs_scope = _ISINSTANCE[annotation]
    except (KeyError, TypeError):
        check, needs_scope = _isinstance_entry(annotation)
    if needs_scope:
        own: Any = _scope.SCOPE.get()  # `scope_of_caller(1)`, as in `check_type`
        frame = _getframe(1)
        try:
            plan = own.plan
            mine = plan.code is frame.f_code or plan.frame is frame
        except AttributeError:
            mine = False
        if not mine:
            try:
                own = scope_of_caller(1)
            except NoActiveScopeError as e:
                shown = describe_short(annotation)
                raise NoActiveScopeError(
                    f"{e}. ktyping.isinstance(value, {shown}) reads the dims of the active scope; "
                    f"the builtin isinstance(value, {shown}) works anywhere"
                ) from None
        return bool(check(value, own.cands, own))
    cands, scope = current_candidates()
    return bool(check(value, cands, scope))


# annotation -> (its check, whether it has array types): one lookup per `isinstance` call.
_ISINSTANCE: dict[Any, tuple[Any, bool]] = {}


def _isinstance_entry(annotation: Any) -> tuple[Any, bool]:
    entry = (compile_annotation(annotation), uses_array_types(annotation))
    try:
        if len(_ISINSTANCE) < 4096:  # bounded, like the compile cache
            _ISINSTANCE[annotation] = entry
    except TypeError:  # unhashable: compiled again next time
        pass
    return entry


def describe_short(annotation: Any) -> str:
    from ._describe import describe

    if type(annotation) is tuple:
        text = "(" + ", ".join(describe(a) for a in annotation) + ")"
    else:
        text = describe(annotation)
    return text if len(text) <= 80 else text[:77] + "..."


def _active_cands() -> list[dict[str, Any]]:
    # Frames: the caller of `dim[...]` -> DimView method -> here.
    return scope_of_caller(2).cands


def _set_active_cands(cands: list[dict[str, Any]]) -> None:
    get_current_scope(nested_ok=True).cands = cands


# `ktyping.dim["n"]`: the dims of the active scope, read, set (`dim["n"] = 3`, only while unbound)
# and tested (`"n" in dim`) from the scope's own function or block.
dim = DimView(_active_cands, _set_active_cands)
"""The dims of the active scope: `ktyping.dim["n"]` reads one axis, `dim["*b"]` a tuple; assigning sets one not yet bound."""


def shape(spec: str, *, stacklevel: int = 0) -> tuple[int, ...]:
    """The concrete shape a spec describes under the active scope: `np.zeros(shape("b n+1"))`.

    `stacklevel` counts frames above the caller, for wrappers that read their caller's dims.
    """
    scope = scope_of_caller(1 + stacklevel)
    parsed = parse_spec(spec)
    results = []
    for a in scope.cands:
        got = parsed.evaluate(a, scope)
        if got is None:
            missing = [
                str(d)
                for d in parsed.dims
                if (builtins.isinstance(d, VariadicDim) and (d.key is None or d.key not in a))
                or (not builtins.isinstance(d, VariadicDim) and parsed.evaluate_dim(d, a, scope) is None)
            ]
            raise KeyError(f"shape({spec!r}) needs dims that are not bound: {', '.join(missing) or spec}")
        if got not in results:
            results.append(got)
    if len(results) == 1 and any(type(d) is UnknownDim for d in results[0]):
        return tuple(plain(d) for d in results[0])  # an unknown axis as it was given (None, symbolic)
    if len(results) != 1:
        raise AmbiguousDimensionError(
            f"shape({spec!r}) is ambiguous: the candidate assignments give {', '.join(map(str, results))}"
        )
    return results[0]
