"""`describe`: an annotation as written in source, for error messages and reprs.

    >>> from ktyping import Float
    >>> describe(Float["b n"] | None)
    "Float['b n'] | None"
    >>> describe(dict[str, list[int]])
    'dict[str, list[int]]'

Array annotations print themselves (`ArrayMeta.__repr__`); typing constructs are rebuilt
from their origin and arguments. Loaded with the first error message or repr.
"""

from __future__ import annotations

from ._array_types import ArrayMeta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["describe"]


def describe(tp: Any) -> str:
    """Annotation as written in source: `Float['b n'] | None`, `list[int]`, `MyClass`."""
    if isinstance(tp, ArrayMeta):
        return repr(tp)
    if tp is None or tp is type(None):
        return "None"
    if isinstance(tp, str):
        return tp
    import types
    import typing

    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(describe(a) for a in typing.get_args(tp))
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        return f"Annotated[{', '.join(describe(a) for a in args)}]"
    args = typing.get_args(tp)
    if isinstance(tp, type) and not args:
        return tp.__qualname__
    if origin is not None and args:
        name = getattr(origin, "__qualname__", None) or repr(origin)
        if origin is typing.Literal:
            return f"Literal[{', '.join(map(repr, args))}]"
        return f"{name}[{', '.join('...' if a is Ellipsis else describe(a) for a in args)}]"
    text = repr(tp)
    return text[7:] if text.startswith("typing.") else text
