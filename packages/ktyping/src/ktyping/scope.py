"""Kauldron's `ktyping.scope`: ktyping's own scopes and `get_current_scope` under Kauldron's module path.

    from ktyping import scope
    with scope.ShapeScope() as s:
        scope.get_current_scope() is s            # True
        scope.is_scope_stack_empty()              # False

`ShapeScope` and `get_current_scope(nested_ok=..., stacklevel=...)` are the very objects `ktyping` exports
(`_scope`), with ktyping's semantics: the active scope is a context variable, and a function nested in the
scope's own function or block needs `nested_ok=True`. A scope's `candidates` are in Kauldron's form (every
dim a tuple under its bare name) and `DimValues` / `CandidateDims` name that form, as in Kauldron.

Not brought over: `TransparentScope` and `create_scope_for`. ktyping's checked functions, dataclasses and
TypedDicts open their scopes themselves, and `with typechecked(new_scope=False):` is its transparent block.
"""

from __future__ import annotations

from ._config import MISSING as MISSING
from ._scope import Scope as Scope
from ._scope import ShapeScope as ShapeScope
from ._scope import get_current_scope as get_current_scope
from ._scope import stack
from .internal_typing import CandidateDims as CandidateDims
from .internal_typing import DimValues as DimValues

__all__ = [
    "MISSING",
    "CandidateDims",
    "DimValues",
    "Scope",
    "ShapeScope",
    "get_current_scope",
    "is_scope_stack_empty",
]


def is_scope_stack_empty() -> bool:
    """Whether no scope is active in this thread or task (no `@typechecked` call or block is running)."""
    return not stack()
