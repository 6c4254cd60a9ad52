"""Kauldron's `ktyping.decorator`: its `typechecked` is ktyping's own (a function or class decorator, or a block).

from ktyping.decorator import typechecked
typechecked is ktyping.typechecked        # True
"""

from __future__ import annotations

from ._decorator import typechecked as typechecked

__all__ = ["typechecked"]
