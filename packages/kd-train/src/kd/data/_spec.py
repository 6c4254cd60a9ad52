"""The shapes and dtypes of a batch, as a tree of `jax.ShapeDtypeStruct` (what `element_spec` holds).

Usage:

    spec_of({"x": np.zeros((4, 2))})  # {"x": ShapeDtypeStruct(shape=(4, 2), dtype=float64)}
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def spec_of(batch: Any) -> Any:
    """The `jax.ShapeDtypeStruct` tree of a batch (numpy arrays, JAX arrays or scalars)."""
    return jax.tree.map(_leaf_spec, batch)


def _leaf_spec(x: Any) -> jax.ShapeDtypeStruct:
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # read in place: no copy of a device array
        return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype)
    return jax.ShapeDtypeStruct(np.shape(x), np.result_type(x))
