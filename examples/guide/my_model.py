"""The model of `my_config.py`: a module beside the config, imported by it (kd-train puts the config's folder
on `sys.path`)."""

import jax
import kontext
from flax import linen as nn


class MLP(nn.Module):
    """One hidden ReLU layer; reads `batch.x` (a kontext key field), returns one value per example."""

    hidden: int = 8
    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.relu(nn.Dense(self.hidden, name="hidden")(x))
        return nn.Dense(1, name="out")(h)
