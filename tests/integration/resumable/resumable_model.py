"""The model of `config.py`: dropout (random numbers every step) and batch norm (a mutable collection)."""

from __future__ import annotations

import jax
import kd
import kontext
from flax import linen as nn


class DropoutMlp(nn.Module):
    """x -> Dense(width) -> BatchNorm -> relu -> Dropout -> Dense(1)."""

    x: kontext.Key = "batch.x"
    width: int = 256

    @nn.compact
    def __call__(self, x: jax.Array, is_training: bool = False) -> jax.Array:
        h = nn.Dense(self.width)(x)
        h = nn.BatchNorm(use_running_average=not is_training, momentum=0.9)(h)
        h = nn.Dropout(0.2, deterministic=not is_training)(nn.relu(h))
        h = nn.relu(nn.Dense(self.width)(h))
        return nn.Dense(1)(h)


__all__ = ["DropoutMlp", "kd"]
