"""Kauldron's `ktyping.errors`: ktyping's exception types (`_errors`) under Kauldron's module path.

    from ktyping import errors
    try:
        scope.dim["a"]
    except errors.AmbiguousDimensionError: ...

`KTypeCheckError` subclasses the builtin `TypeError` (Kauldron's subclasses typeguard's
`TypeCheckError`; ktyping does not use typeguard). Kauldron's message-building helpers are internal.
"""

from __future__ import annotations

from ._errors import AmbiguousDimensionError as AmbiguousDimensionError
from ._errors import DimAssignmentError as DimAssignmentError
from ._errors import JaxtypingAnnotationError as JaxtypingAnnotationError
from ._errors import KTypeCheckError as KTypeCheckError
from ._errors import NoActiveScopeError as NoActiveScopeError
from ._errors import NotInstantiableError as NotInstantiableError
from ._errors import ShapeSpecSyntaxError as ShapeSpecSyntaxError

__all__ = [
    "AmbiguousDimensionError",
    "DimAssignmentError",
    "JaxtypingAnnotationError",
    "KTypeCheckError",
    "NoActiveScopeError",
    "NotInstantiableError",
    "ShapeSpecSyntaxError",
]
