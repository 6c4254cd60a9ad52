"""Small layers for `kd.nn.Sequential` and configs: `Identity`, `Dropout`, `Rearrange`, `Reduce`, `DummyModel`.

cfg.model = kd.nn.Sequential(inputs="batch.image", layers=[
    nn.Conv(features=64, kernel_size=(8, 8), strides=(8, 8)),
    kd.nn.Rearrange(pattern="... h w d -> ... (h w) d"),   # image to tokens
    kd.nn.Dropout(rate=0.1),                               # on while training only
    kd.nn.Reduce(pattern="... n d -> ... d", reduction="mean"),
])
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

import einops
import flax.core
import jax
import jax.numpy as jnp
import kontext
from flax import linen as nn

from kd.nn._train_property import accept_training_property, train_property

_REDUCTIONS = ("min", "max", "sum", "mean", "prod")


@accept_training_property
class Identity(nn.Module):
    """Returns its first input unchanged (further arguments are ignored): a named place in a model.

    Usage: `kd.nn.Identity(name="features")(x)`; its output is `interms.features.__call__[0]`.
    """

    @nn.compact
    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        del args, kwargs
        return inputs


class Dropout(nn.Dropout):
    """flax's `nn.Dropout`, on while training and off in evaluation (`kd.nn.train_property`).

    Attributes:
      rate: the probability of dropping each element (as flax's); `deterministic` must stay unset.
    Usage: `kd.nn.Dropout(rate=0.1)(x)`; `x` is kept as it is outside training.
    """

    is_training = train_property()

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.deterministic is not None:
            raise ValueError(
                f"kd.nn.Dropout(deterministic={self.deterministic!r}): leave `deterministic` unset, the mode "
                "comes from training (the Trainer, `is_training_property=` or `kd.nn.set_train_property`); "
                "use flax's `nn.Dropout` to fix it yourself"
            )

    @nn.compact
    def __call__(self, inputs: jax.Array, *, rng: jax.Array | None = None) -> jax.Array:  # type: ignore[override]
        return super().__call__(inputs, deterministic=not self.is_training, rng=rng)


@accept_training_property
class Rearrange(nn.Module):
    """`einops.rearrange(tensor, pattern, **axes_lengths)` as a layer.

    Attributes:
      pattern: the einops pattern, e.g. `"b h w c -> b (h w) c"`.
      axes_lengths: sizes of axes the pattern and the tensor do not fix, e.g. `{"p": 4}`.
    Usage: `kd.nn.Rearrange(pattern="... h w d -> ... (h w) d")(image_features)`.
    """

    pattern: str
    axes_lengths: Mapping[str, int] = dataclasses.field(default_factory=flax.core.FrozenDict)

    def __call__(self, tensor: jax.Array) -> jax.Array:
        return einops.rearrange(tensor, self.pattern, **self.axes_lengths)


@accept_training_property
class Reduce(nn.Module):
    """`einops.reduce(tensor, pattern, reduction, **axes_lengths)` as a layer (global pooling, ...).

    Attributes:
      pattern: the einops pattern, e.g. `"b n d -> b d"`.
      reduction: one of "min", "max", "sum", "mean", "prod".
      axes_lengths: sizes of axes the pattern and the tensor do not fix.
    Usage: `kd.nn.Reduce(pattern="... n d -> ... d", reduction="mean")(tokens)`.
    """

    pattern: str
    reduction: str
    axes_lengths: Mapping[str, int] = dataclasses.field(default_factory=flax.core.FrozenDict)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.reduction not in _REDUCTIONS:
            near = difflib.get_close_matches(str(self.reduction), _REDUCTIONS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ValueError(
                f"kd.nn.Reduce(reduction={self.reduction!r}): expected one of {', '.join(_REDUCTIONS)}{hint}"
            )

    def __call__(self, tensor: jax.Array) -> jax.Array:
        return einops.reduce(tensor, self.pattern, self.reduction, **self.axes_lengths)


@accept_training_property
class DummyModel(nn.Module):
    """A placeholder model: whatever it is given, `{"logits": [42.0]}` (to work on the data or the config first).

    Attributes:
      inputs: an optional key, e.g. "batch.image"; the value is not used.
    Usage: `cfg.model = kd.nn.DummyModel()`.
    """

    inputs: kontext.Key | None = None

    def __call__(self, inputs: Any = None) -> dict[str, jax.Array]:
        del inputs
        return {"logits": jnp.full((1,), 42.0, jnp.float32)}
