"""Kauldron's `ktyping.internal_typing`: the `MISSING` sentinel, shared with our config and `PyTree`.

    from ktyping.internal_typing import MISSING
    PyTree[int].structure_spec is MISSING      # True: no structure key given

Kauldron's type aliases for dim values are not brought over: our dims are plain ints and tuples.
"""

from __future__ import annotations

from ._config import MISSING as MISSING

Missing = type(MISSING)
"""The type of `MISSING` (for annotations: `str | Missing`)."""

__all__ = ["MISSING", "Missing"]
