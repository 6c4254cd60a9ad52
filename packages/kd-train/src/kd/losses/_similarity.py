"""`NegativeCosineSimilarity`: minus the cosine of the angle between predictions and targets, along the last axis.

kd.losses.NegativeCosineSimilarity(preds="preds.embedding", targets="batch.embedding")
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Float

from . import _base


@dataclasses.dataclass(frozen=True, kw_only=True)
class NegativeCosineSimilarity(_base.Loss):
    """`-<p, t> / ((|p| + eps) (|t| + eps))` over the last axis, one value per vector (shape `(*a, 1)`).

    Usage: `kd.losses.NegativeCosineSimilarity(preds="preds.z", targets="batch.z")` (-1 when aligned).

    Attributes:
      preds: key of the predicted vectors, `(*a, c)`.
      targets: key of the target vectors, the same shape.
      eps: added to each norm, so a zero vector gives 0 instead of NaN (its gradient is finite too).
    """

    preds: kontext.Key = kontext.REQUIRED
    targets: kontext.Key = kontext.REQUIRED
    eps: float = 1e-8

    @ktyping.typechecked
    def get_values(self, preds: Float["*a c"], targets: Float["*a c"]) -> Float["*a 1"]:
        return -jnp.sum(self._unit(preds) * self._unit(targets), axis=-1, keepdims=True)

    def _unit(self, x: jax.Array) -> jax.Array:
        squares = jnp.sum(jnp.square(x), axis=-1, keepdims=True)
        # The norm's value, with a gradient of 0 rather than NaN where the vector is 0 (sqrt'(0) is inf).
        positive = squares > 0
        norm = jnp.where(positive, jnp.sqrt(jnp.where(positive, squares, 1.0)), 0.0)
        return x / (norm + self.eps)
