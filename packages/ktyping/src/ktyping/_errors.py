"""Exception types raised by ktyping: the bottom layer, imported by every module that raises.

>>> print(ShapeSpecSyntaxError("b n+", 4, "a dim name"))
invalid shape spec 'b n+' at column 4: expected a dim name
    b n+
       ^
"""

from __future__ import annotations

__all__ = [
    "AmbiguousDimensionError",
    "DimAssignmentError",
    "JaxtypingAnnotationError",
    "KTypeCheckError",
    "NotInstantiableError",
    "NoActiveScopeError",
    "ShapeSpecSyntaxError",
]


class KTypeCheckError(TypeError):
    """A value does not match its annotation (type, dtype or shape).

    Attributes:
      candidates_block: The message's `Dim assignments:` section (empty when it has none).
    """

    candidates_block: str = ""


class ShapeSpecSyntaxError(ValueError):
    """A shape spec string such as `"b n+"` cannot be parsed.

    Attributes:
      spec: The whole spec string.
      column: 1-based column of the problem.
      expected: What the parser expected there.
    """

    def __init__(self, spec: str, column: int, expected: str) -> None:
        self.spec = spec
        self.column = column
        self.expected = expected
        caret = " " * (column - 1) + "^"
        super().__init__(
            f"invalid shape spec {spec!r} at column {column}: expected {expected}\n    {spec}\n    {caret}"
        )


class NoActiveScopeError(RuntimeError):
    """`check_type`, `dim`, `shape` or `get_current_scope` was used with no scope active, or from
    a function nested in the scope's function or block (pass `nested_ok=True` to allow that)."""


class DimAssignmentError(ValueError):
    """`dim[name] = value` would change a dim that is bound, or gives the wrong kind of value
    (a tuple to a single dim, an int to a `*` dim); also reading a multi-axis dim as one axis."""


class NotInstantiableError(RuntimeError):
    """An annotation such as `Float32` or `Shape` was called: `Float32("a b")` for `Float32["a b"]`."""


class JaxtypingAnnotationError(RuntimeError):
    """A `@typechecked` function is annotated with jaxtyping types and `Config.jaxtyping_annotations`
    is "error" (the default): their dims would not be shared with ktyping's."""


class AmbiguousDimensionError(KeyError):
    """A dimension has different values in the remaining candidate assignments."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ValueTooLargeError(KTypeCheckError):
    """A product or power in a dim expression is beyond `MAX_VALUE` (raised as it is computed).

    Internal: spec matching turns it into a `KTypeCheckError` naming the spec, the parser into a
    `ShapeSpecSyntaxError`.
    """
