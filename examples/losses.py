"""A loss that names its inputs by kontext key paths instead of importing the model."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Float


@dataclasses.dataclass(frozen=True)
class MeanSquaredError:
    """`MeanSquaredError(preds="preds", targets="batch.y")` reads both from the step's context.

    Usage: `loss_fn.get_values(**kontext.resolve_from_keyed_obj(context, loss_fn))`.
    """

    preds: kontext.Key = "preds"
    targets: kontext.Key = "batch.y"

    @ktyping.typechecked
    def get_values(self, preds: Float["b 1"], targets: Float["b 1"]) -> Float[""]:
        return jnp.mean((preds - targets) ** 2)
