"""Kauldron's `ktyping.internal_typing`: the `MISSING` sentinel, and Kauldron's form of a candidate, `DimValues`.

    from ktyping.internal_typing import MISSING, DimValues, UNKNOWN_DIM
    PyTree[int].structure_spec is MISSING      # True: no structure key given
    DimValues({"b": (2,), "batch": (4, UNKNOWN_DIM)})   # hashable: candidates are a frozenset of these

`MISSING` is our config's; `DimValues` and `UNKNOWN_DIM` (ktyping's `UnknownDim`, which equals every size:
test it with `is`) come from `_dim_values`. `Shape` and `CandidateDims` name the types of a shape and of a
set of candidates, for annotations.
"""

from __future__ import annotations

from ._config import MISSING as MISSING
from ._dim_values import UNKNOWN_DIM as UNKNOWN_DIM
from ._dim_values import DimValues as DimValues

Shape = tuple[int, ...]
"""A shape: its axis sizes (ints, or symbolic sizes of `jax.export`)."""

CandidateDims = frozenset[DimValues]
"""The candidates a scope holds, in Kauldron's form."""

Missing = type(MISSING)
"""The type of `MISSING` (for annotations: `str | Missing`)."""

STRUCTURE_KEY_PREFIX = "$"
"""Candidates hold the structure bound by `PyTree[T, "$S"]` under keys with this prefix."""


def is_structure_key(key: str) -> bool:
    """Whether a candidate key names a PyTree structure (`"$S"`) rather than a dim."""
    return key.startswith(STRUCTURE_KEY_PREFIX)


__all__ = [
    "MISSING",
    "STRUCTURE_KEY_PREFIX",
    "UNKNOWN_DIM",
    "CandidateDims",
    "DimValues",
    "Missing",
    "Shape",
    "is_structure_key",
]
