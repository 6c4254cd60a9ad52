"""Small ready-made models: `Sequential` with keys, and `FlatAutoencoder` (Kauldron's `kd.nn` models).

cfg.model = kd.nn.Sequential(inputs="batch.image", outputs="logits", layers=[nn.Dense(128), nn.relu, nn.Dense(10)])
cfg.model = kd.nn.FlatAutoencoder(inputs="batch.image", encoder=nn.Dense(128), decoder=nn.Dense(784))
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import kontext
from flax import linen as nn

from kd.nn._train_property import accept_training_property


@accept_training_property
class Sequential(nn.Module):
    """Calls `layers` in turn, each on what the one before returned: a tuple is spread as positional
    arguments, a mapping as keyword arguments, anything else passed as the one argument.

    Attributes:
      layers: the callables (usually modules; their params are `layers_0`, `layers_1`, ...).
      inputs: the key of the input, e.g. "batch.image" (needed when it is the Trainer's model).
      outputs: when set, the result is `{outputs: value}` instead of the value.
    Usage: `kd.nn.Sequential(inputs="batch.x", layers=[nn.Dense(8), nn.relu, nn.Dense(1)])`.
    """

    layers: Sequence[Callable[..., Any]] = ()
    inputs: kontext.Key = kontext.REQUIRED
    outputs: str | None = None

    @nn.compact
    def __call__(self, inputs: Any) -> Any:
        value = inputs
        for layer in self.layers:
            if isinstance(value, tuple):
                value = layer(*value)
            elif isinstance(value, Mapping):
                value = layer(**value)
            else:
                value = layer(value)
        return value if self.outputs is None else {self.outputs: value}

    @classmethod
    def from_repeated(
        cls,
        layer: nn.Module,
        repeats: int,
        *,
        shared_weights: bool = False,
        inputs: kontext.Key = kontext.REQUIRED,
        outputs: str | None = None,
        prefix: Sequence[nn.Module] = (),
        suffix: Sequence[nn.Module] = (),
    ) -> Sequential:
        """`prefix`, then `layer` `repeats` times, then `suffix`: copies of `layer` with their own
        weights, or with `shared_weights=True` the one layer (one set of weights) called each time.

        Usage: `kd.nn.Sequential.from_repeated(kd.nn.PreNormBlock.from_spec(num_heads=4), 6, inputs="batch.x")`.
        """
        if not isinstance(repeats, int) or repeats < 0:
            raise ValueError(f"Sequential.from_repeated(repeats={repeats!r}): expected an int >= 0")
        repeated = [layer if shared_weights else copy.deepcopy(layer) for _ in range(repeats)]
        return cls(inputs=inputs, outputs=outputs, layers=(*prefix, *repeated, *suffix))


@accept_training_property
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
