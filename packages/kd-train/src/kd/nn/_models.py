"""Small ready-made models (Kauldron's `kd.nn.FlatAutoencoder`)."""

from __future__ import annotations

from typing import Any

import kontext
from flax import linen as nn


class FlatAutoencoder(nn.Module):
    """Flattens `inputs`, encodes, decodes, reshapes back: `{"image": reconstruction}` for `inputs="batch.image"`.

    Usage: `kd.nn.FlatAutoencoder(inputs="batch.image", encoder=nn.Dense(128), decoder=nn.Dense(784))`.
    """

    encoder: nn.Module
    decoder: nn.Module
    inputs: kontext.Key = kontext.REQUIRED

    @nn.compact
    def __call__(self, inputs: Any) -> dict[str, Any]:
        flat = inputs.reshape((inputs.shape[0], -1))
        reconstruction = self.decoder(self.encoder(flat)).reshape(inputs.shape)
        return {str(self.inputs).removeprefix("batch."): reconstruction}
