"""`typechecked`, the public decorator and context manager: a function wrapper
(`_wrappers`) for what it decorates, a block (`_blocks`) when called without an argument.

    >>> from ktyping import Shape
    >>> @typechecked
    ... def first_row(shape: Shape["b n"]) -> Shape["n"]:
    ...     return shape[1:]
    >>> first_row((2, 3))
    (3,)
    >>> with typechecked():
    ...     first_row((2, 3))
    (3,)
"""

from __future__ import annotations

from ._blocks import TransparentBlock, TypecheckedBlock, no_transparent_decorator
from ._wrappers import decorate, enclosing_locals

TYPE_CHECKING = False
if not TYPE_CHECKING:

    def overload(fn):  # typing.overload, without importing typing at runtime
        return fn


if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    T = TypeVar("T")

__all__ = ["typechecked"]


@overload
def typechecked(obj: None = None, *, new_scope: bool = True) -> TypecheckedBlock: ...


@overload
def typechecked(obj: T) -> T: ...


def typechecked(obj: Any = None, *, new_scope: bool = True) -> Any:
    """Checks annotated arguments, return values and dataclass fields at runtime.

    Works on functions, methods, classmethods, staticmethods, properties, generators,
    coroutines, dataclasses (fields checked after `__init__`, each instance in its own
    scope) and classes (every method). Without an argument it is a context manager that
    opens a manual scope; `with typechecked(new_scope=False):` a block that binds dims in the
    scope around it:

        @ktyping.typechecked
        def f(x: Float["b n"]) -> Float["b"]: ...

        with ktyping.typechecked():
            ktyping.check_type(x, Float["b n"])
    """
    if obj is None:
        return TypecheckedBlock() if new_scope else TransparentBlock()
    if not new_scope:
        raise no_transparent_decorator(obj)
    return decorate(obj, enclosing_locals(obj, 1))
