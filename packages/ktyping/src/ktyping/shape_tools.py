"""Kauldron's `ktyping.shape_tools`: `shape` is ktyping's own; `_eval_shape` evaluates a spec over Kauldron's candidates.

    @typechecked
    def f(x: Float["a b"]):
        return shape_tools.shape("b a")                                   # ktyping.shape
    shape_tools._eval_shape("a*b c", frozenset([DimValues({"a": (2,), "b": (3,), "c": (5,)})]))   # (6, 5)

`shape` keeps ktyping's signature and errors (`stacklevel`; `KeyError` for an unbound dim,
`AmbiguousDimensionError`), where Kauldron's takes `nested_ok` and raises `shape_spec.ShapeError`.
"""

from __future__ import annotations

from ._in_scope import shape as shape
from .shape_spec import ShapeError
from .shape_spec_parser import parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

__all__ = ["shape"]


def _eval_shape(spec: str, candidates: Iterable[Mapping[str, Any]]) -> tuple[Any, ...]:
    """The one shape `spec` describes under every candidate that can evaluate it (no candidates: `{}`).

    Raises `ShapeError` when no candidate can (the last one's reason is the cause), or when they give
    different shapes.
    """
    parsed = parse(spec)
    shapes: list[tuple[Any, ...]] = []
    last_error: ShapeError | None = None
    for values in list(candidates) or [{}]:
        try:
            got = parsed.evaluate(values)
        except ShapeError as e:
            last_error = e
            continue
        if got not in shapes:
            shapes.append(got)
    if not shapes:
        raise ShapeError(f"No possible shape found for {spec!r}: {last_error}") from last_error
    if len(shapes) > 1:
        shown = "\n - ".join(map(repr, shapes))
        raise ShapeError(
            f"{spec!r} is ambiguous under the candidate dim values; it could be any of:\n - {shown}"
        )
    return shapes[0]
