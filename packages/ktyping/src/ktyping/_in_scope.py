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

from ._compile import compile_annotation
from ._config import enabled_for_caller
from ._errors import AmbiguousDimensionError, KTypeCheckError
from ._scope import current_candidates, get_current_scope
from ._spec import PENDING, VariadicDim
from ._spec_cache import parse_spec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["check_type", "dim", "isinstance", "shape"]


def check_type(value: T, annotation: Any) -> T:
    """Checks `value` against `annotation` in the active scope, binding its dims; returns `value`.

    Raises `NoActiveScopeError` outside a `@typechecked` function or `with typechecked():`.

        y = ktyping.check_type(encode(x), Float["b n d"])
    """
    if not enabled_for_caller(1):
        return value
    scope = get_current_scope()
    new = compile_annotation(annotation)(value, scope.cands, scope)
    if not new:
        raise _error(value, annotation, scope)
    scope.cands = new
    return value


def _error(value: Any, annotation: Any, scope: Any) -> KTypeCheckError:
    from ._describe import describe
    from ._explain import explain
    from ._format import compact, format_candidates

    frame = sys._getframe(2)
    lines = [
        f"value = {compact(value)} {explain(annotation, value, scope.cands, scope)}",
        f"  (required by {describe(annotation)})",
        "",
        f"Checked at: {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}",
    ]
    if scope.plan is not None and hasattr(scope.plan, "origin"):
        lines.append(f"Scope of: {scope.plan.origin()}")
    lines += ["", "Dim assignments:", format_candidates(scope.cands)]
    return KTypeCheckError("\n".join(lines))


def isinstance(value: Any, annotation: Any) -> bool:
    """Like `isinstance`, for any annotation (`Float["b n"]`, `list[int]`, `int | None`).

    Uses the dims of the active scope if there is one, and never changes them.
    """
    cands, scope = current_candidates()
    return bool(compile_annotation(annotation)(value, cands, scope))


def _lookup(cands: list[dict[str, Any]], name: str) -> Any:
    if name.startswith("*"):
        keys = [name]
    else:
        keys = [name, "*" + name]
    for key in keys:
        values = [a[key] for a in cands if key in a]
        if not values:
            continue
        if len(values) < len(cands) or any(v != values[0] for v in values[1:]):
            shown = sorted({str(v) for v in values}) + (["<unbound>"] if len(values) < len(cands) else [])
            raise AmbiguousDimensionError(
                f"dim {key!r} is ambiguous: the {len(cands)} candidate assignments give {', '.join(shown)}"
            )
        return values[0]
    import difflib

    known = sorted({k for a in cands for k in a if k != PENDING})
    near = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise KeyError(
        f"dim {name!r} is not bound in the active scope (bound: {', '.join(known) or 'none'}){hint}"
    )


class _DimView:
    """`ktyping.dim["n"]`: read, set and delete dims of the active scope.

    `dim["b"]` or `dim["*b"]` returns a variadic dim's tuple. Raises
    `AmbiguousDimensionError` when the candidate assignments disagree.
    """

    def __getitem__(self, name: str) -> Any:
        return _lookup(get_current_scope().cands, name)

    def __setitem__(self, name: str, value: Any) -> None:
        scope = get_current_scope()
        if builtins.isinstance(value, (tuple, list)) and not name.startswith("*"):
            name = "*" + name
        elif name.startswith("*"):
            value = tuple(value)
        scope.cands = [{**a, name: value} for a in scope.cands]

    def __delitem__(self, name: str) -> None:
        scope = get_current_scope()
        keys = {name} if name.startswith("*") else {name, "*" + name}
        if not any(k in a for a in scope.cands for k in keys):
            _lookup(scope.cands, name)  # raises the KeyError with suggestions
        scope.cands = [{k: v for k, v in a.items() if k not in keys} for a in scope.cands]

    def __contains__(self, name: str) -> bool:
        cands = get_current_scope().cands
        return any(name in a or "*" + name in a for a in cands)

    def __iter__(self) -> Iterator[str]:
        seen: dict[str, None] = {}
        for a in get_current_scope().cands:
            for k in a:
                if k != PENDING:
                    seen[k] = None
        return iter(seen)

    def __repr__(self) -> str:
        from ._format import format_candidates

        try:
            cands = get_current_scope().cands
        except Exception:
            return "dims = <no active scope>"
        if len(cands) == 1:
            body = "".join(f"  {k}: {v}\n" for k, v in cands[0].items() if k != PENDING)
            return "dims = {\n" + body + "}"
        return "dims (candidates):\n" + format_candidates(cands)


dim = _DimView()


def shape(spec: str) -> tuple[int, ...]:
    """The concrete shape a spec describes under the active scope: `np.zeros(shape("b n+1"))`."""
    scope = get_current_scope()
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
    if len(results) != 1:
        raise AmbiguousDimensionError(
            f"shape({spec!r}) is ambiguous: the candidate assignments give {', '.join(map(str, results))}"
        )
    return results[0]
