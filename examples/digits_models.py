"""Small digit classifiers: the same MLP in flax linen and in flax NNX. Their input is a kontext key."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import kd
import kontext
from flax import linen as nn
from flax import nnx


class MLP(nn.Module):
    """Flattens `image`, hidden ReLU layers with dropout, `num_classes` logits.

    Usage: `MLP(hidden=(128, 64), num_classes=10)`; the Trainer feeds it `batch.image`.
    """

    hidden: Sequence[int] = (128, 64)
    num_classes: int = 10
    dropout: float = 0.1
    image: kontext.Key = "batch.image"
    is_training = kd.nn.train_property()  # True in train steps, False in evaluators

    @nn.compact
    def __call__(self, image: jax.Array) -> jax.Array:
        h = image.reshape((image.shape[0], -1))
        for i, width in enumerate(self.hidden):
            h = nn.relu(nn.Dense(width, name=f"dense{i}")(h))
            h = nn.Dropout(self.dropout, deterministic=not self.is_training)(h)
        return nn.Dense(self.num_classes, name="logits")(h)


class NnxMLP(nnx.Module):
    """The NNX twin of `MLP`; configured as `NnxMLP(din=64, dout=10)`, the Trainer passes `rngs`."""

    image: kontext.Key = "batch.image"

    def __init__(
        self, din: int, dout: int, hidden: int = 128, dropout: float = 0.1, *, rngs: nnx.Rngs
    ) -> None:
        self.hidden = nnx.Linear(din, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(hidden, rngs=rngs)
        self.dropout = nnx.Dropout(dropout, rngs=rngs)
        self.logits = nnx.Linear(hidden, dout, rngs=rngs)

    def __call__(self, image: jax.Array) -> jax.Array:
        h = nnx.relu(self.norm(self.hidden(image.reshape((image.shape[0], -1)))))
        self.sow(nnx.Intermediate, "hidden", h)  # reachable as "interms.hidden[0]"
        return self.logits(self.dropout(h))
