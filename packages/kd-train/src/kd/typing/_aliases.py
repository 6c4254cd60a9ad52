"""Kauldron's composite kd.typing aliases, over ktyping: `PRNGKeyLike`, `Initializer`, `Schedule`, ...

Usage:

    def make_init(scale: float) -> kd.typing.Initializer: ...
    lr: kd.typing.Schedule = optax.cosine_decay_schedule(1e-3, 1000)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Union

import ktyping
import numpy as np

from kd.typing._shapes import Shape

__all__ = [
    "AxisName",
    "ElementSpec",
    "Initializer",
    "PRNGKeyLike",
    "Schedule",
    "enable_kd_type_checking",
]

PRNGKeyLike = Union[int, Sequence[int], np.ndarray, ktyping.PRNGKey]  # noqa: UP007 (a runtime union of an annotation)
"""Anything `kd.random.PRNGKey(...)` / `jax.random.PRNGKey` turns into a key: a seed or key data."""
Initializer = Callable[[ktyping.PRNGKey, Shape, ktyping.DType], ktyping.Array]
"""A parameter initialiser: (key, shape, dtype) -> array."""
AxisName = Hashable
"""A mesh axis name (`jax.lax.psum(x, axis_name="batch")`)."""
Schedule = Callable[[int], Union[float, ktyping.Float[""]]]  # noqa: UP007
"""A learning-rate (or any) schedule: step -> value."""
ElementSpec = ktyping.PyTree[ktyping.ArraySpec]
"""The spec of a batch: a tree of `ArraySpec`s (anything with `.shape` and `.dtype`)."""


def enable_kd_type_checking() -> None:
    """Kauldron's switch for checking its own types inside `@typechecked`: ktyping always does, so a no-op."""
